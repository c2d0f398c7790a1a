package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/host"
	"github.com/hale-lang/hale/vm/value"
)

// rjProgram is a hand-built topology: consumer 0 (main) runs Main,
// consumers 1 and 2 (pinned) run W and L, both subscribed to Job { n };
// consumer 3 is a stdin binding of Line { text }.
func rjProgram() *image.Image {
	types := []image.Type{{Kind: image.KindVoid}, {Kind: image.KindInt}, {Kind: image.KindFloat}, {Kind: image.KindBool}, {Kind: image.KindString}, {Kind: image.KindBytes},
		{Kind: image.KindStruct, Name: "Job", Topic: true, Fields: []image.Field{{Name: "n", Type: image.TInt}}},
		{Kind: image.KindStruct, Name: "Line", Topic: true, Fields: []image.Field{{Name: "text", Type: image.TString}}},
		{Kind: image.KindList, Elem: image.TString},
	}
	return &image.Image{
		Entry: "app.hl",
		Files: []string{"app.hl"},
		Types: types,
		Loci: []image.Locus{
			{Name: "Main", Start: 0, State: []image.Var{{Name: "count", Type: image.TInt}, {Name: "names", Type: 8}}},
			{Name: "Worker", Start: -1, State: []image.Var{{Name: "done", Type: image.TInt}}},
		},
		Instances: []image.Instance{
			{Name: "Main", Locus: 0, Consumer: 0},
			{Name: "W", Locus: 1, Consumer: 1},
			{Name: "L", Locus: 1, Consumer: 2},
		},
		Topics: []image.Topic{
			{Name: "Job", Type: 6, Subscribers: []int{1, 2}},
			{Name: "Line", Type: 7, Subscribers: []int{0}},
		},
		Ingress: []image.Ingress{{Topic: 1, Consumer: 3}},
		Prims: []image.Prim{
			{Name: "std::os::env", Params: []image.TypeRef{image.TString, image.TString}, Result: image.TString},
			{Name: "std::rand::next_int", Params: []image.TypeRef{image.TInt}, Result: image.TInt},
			{Name: "std::time::now_ms", Result: image.TInt},
		},
		Consumers: []image.Consumer{
			{Kind: image.ConsumerMain, Name: "main", Instances: []int{0}},
			{Kind: image.ConsumerPinned, Name: "W", Instances: []int{1}},
			{Kind: image.ConsumerPinned, Name: "L", Instances: []int{2}},
			{Kind: image.ConsumerIngress, Name: "stdin:Line"},
		},
	}
}

func rjPrim(t testing.TB, name string) stdlib.Primitive {
	t.Helper()
	p, ok := stdlib.Lookup(name)
	if !ok {
		t.Fatalf("no primitive %s", name)
	}
	return p
}

func rjArgs(vs ...value.Value) []byte {
	b, err := value.EncodeTuple(nil, vs)
	if err != nil {
		panic(err)
	}
	return b
}

func rjEnc(v value.Value) []byte {
	b, err := value.Encode(nil, v)
	if err != nil {
		panic(err)
	}
	return b
}

func rjJob(n int64) []byte {
	return []byte{byte(value.KindStruct), 1, byte(value.KindInt), byte(n << 1)}
}

// rjArtifact numbers the entries of each consumer and closes the run
// with verdict.
func rjArtifact(verdict string, code int64, entries ...artifact.Entry) *artifact.Artifact {
	h, _ := NewHeader(rjProgram(), HeaderInfo{HaleVersion: "test", Files: []string{"app.hl"}})
	a := &artifact.Artifact{Version: artifact.FormatVersion, Header: *h, Trailer: artifact.Trailer{Verdict: verdict, ExitCode: code}, Complete: true}
	seq := map[uint32]uint64{}
	for _, e := range entries {
		e.Seq = seq[e.Consumer]
		seq[e.Consumer]++
		a.Entries = append(a.Entries, e)
	}
	return a
}

func rjE(c uint32, b artifact.Body) artifact.Entry { return artifact.Entry{Consumer: c, Body: b} }

func rjStart(target string) artifact.Delivery { return artifact.Delivery{Target: target, Start: true} }

func rjDeliver(target string, p uint32, s uint64) artifact.Delivery {
	return artifact.Delivery{Target: target, Message: artifact.MessageID{Producer: p, Seq: s}, Topic: "Job"}
}

func rjCall(prim string, args, result []byte) artifact.Invocation {
	return artifact.Invocation{Primitive: prim, Args: args, Outcome: artifact.OK, Result: result}
}

// noLive fails the test when a call goes live that should have been served.
func noLive(t *testing.T) func() ([]byte, error) {
	return func() ([]byte, error) {
		t.Helper()
		t.Error("the live call was made")
		return nil, nil
	}
}

// startMain delivers Main's start on consumer 0.
func startMain(t *testing.T, r *Replayer) {
	t.Helper()
	if pick, _ := r.Next(0, pending(host.Delivery{Target: 0, Topic: host.StartTopic})); pick != 0 {
		t.Fatalf("Main's start: pick %d", pick)
	}
	if err := r.Deliver(0, 0, &host.Delivery{Target: 0, Topic: host.StartTopic}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestReplayerServesInputs(t *testing.T) {
	a := rjArtifact(artifact.VerdictQuiescent, 0,
		rjE(0, rjStart("Main")),
		rjE(0, rjCall("std::time::now_ms", rjArgs(), rjEnc(value.Int(17)))),
		rjE(0, artifact.Invocation{Primitive: "std::rand::next_int", Args: rjArgs(value.Int(0)), Outcome: artifact.Trapped, Message: "std::rand::next_int: n must be positive, got 0"}),
		rjE(0, rjCall("std::time::sleep_ms", rjArgs(value.Int(5000)), nil)),
	)
	r := NewReplayer(a, rjProgram(), Options{})
	startMain(t, r)
	res, err := r.Invoke(0, rjPrim(t, "std::time::now_ms"), rjArgs(), noLive(t))
	if err != nil || !bytes.Equal(res, rjEnc(value.Int(17))) {
		t.Fatalf("now_ms: %x, %v", res, err)
	}
	_, err = r.Invoke(0, rjPrim(t, "std::rand::next_int"), rjArgs(value.Int(0)), noLive(t))
	if err == nil || err.Error() != "std::rand::next_int: n must be positive, got 0" {
		t.Fatalf("recorded trap: %v", err)
	}
	start := time.Now()
	if _, err := r.Invoke(0, rjPrim(t, "std::time::sleep_ms"), rjArgs(value.Int(5000)), noLive(t)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("sleep took %v", d)
	}
	r.End(artifact.VerdictQuiescent, 0)
	s := r.Stats()
	if !s.Clean() || s.JournalCalls != 3 || s.Deliveries != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestReplayerJournalMiss(t *testing.T) {
	a := rjArtifact(artifact.VerdictQuiescent, 0,
		rjE(0, rjStart("Main")),
		rjE(0, rjCall("std::time::now_ms", rjArgs(), rjEnc(value.Int(1)))),
		rjE(0, rjCall("std::time::now_ms", rjArgs(), rjEnc(value.Int(2)))),
		rjE(0, rjCall("std::time::now_ms", rjArgs(), rjEnc(value.Int(3)))),
		rjE(0, rjCall("std::time::now_ms", rjArgs(), rjEnc(value.Int(4)))),
	)
	r := NewReplayer(a, rjProgram(), Options{})
	startMain(t, r)
	for range 3 {
		if _, err := r.Invoke(0, rjPrim(t, "std::time::now_ms"), rjArgs(), noLive(t)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := r.Invoke(0, rjPrim(t, "std::rand::next_int"), rjArgs(value.Int(10)), noLive(t))
	want := "replay: journal miss: consumer 0 call #3 expected std::time::now_ms(), got std::rand::next_int(10)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	// Same primitive, other arguments: a miss too.
	a = rjArtifact(artifact.VerdictQuiescent, 0,
		rjE(0, rjStart("Main")),
		rjE(0, rjCall("std::os::env", rjArgs(value.Str("HOME"), value.Str("")), rjEnc(value.Str("/root")))),
	)
	r = NewReplayer(a, rjProgram(), Options{})
	startMain(t, r)
	_, err = r.Invoke(0, rjPrim(t, "std::os::env"), rjArgs(value.Str("USER"), value.Str("")), noLive(t))
	want = `replay: journal miss: consumer 0 call #0 expected std::os::env("HOME", ""), got std::os::env("USER", "")`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	r.Trap(0, 0, &vm.Trap{Message: err.Error()}, nil)
	r.End(artifact.VerdictTrap, 3)
	s := r.Stats()
	if s.JournalMisses != 1 || s.Unconsumed != 1 || s.Clean() {
		t.Errorf("stats %+v", s)
	}
	if s.Findings[0].Kind != artifact.JournalMiss || s.Findings[0].At != (artifact.Coordinate{Consumer: 0, N: 0}) {
		t.Errorf("first finding %+v", s.Findings[0])
	}
}

func TestReplayerPastTheJournal(t *testing.T) {
	a := rjArtifact(artifact.VerdictQuiescent, 0,
		rjE(0, rjStart("Main")),
		rjE(0, rjCall("std::time::now_ms", rjArgs(), rjEnc(value.Int(1)))),
	)
	r := NewReplayer(a, rjProgram(), Options{})
	startMain(t, r)
	if _, err := r.Invoke(0, rjPrim(t, "std::time::now_ms"), rjArgs(), noLive(t)); err != nil {
		t.Fatal(err)
	}
	_, err := r.Invoke(0, rjPrim(t, "std::time::now_ms"), rjArgs(), noLive(t))
	if err == nil || !strings.HasPrefix(err.Error(), "replay: input past the journal: consumer 0 call #1 std::time::now_ms()") {
		t.Fatalf("got %v", err)
	}
	if s := r.Stats(); s.JournalMisses != 1 || s.Findings[0].Kind != artifact.InputPastJournal {
		t.Errorf("stats %+v", s)
	}
}

func TestReplayerWithheldEnv(t *testing.T) {
	a := rjArtifact(artifact.VerdictQuiescent, 0,
		rjE(0, rjStart("Main")),
		rjE(0, artifact.Invocation{Primitive: "std::os::env", Args: rjArgs(value.Str("HIDDEN_SECRET"), value.Str("")), Outcome: artifact.Withheld, Length: 7}),
	)
	env := rjPrim(t, "std::os::env")
	args := rjArgs(value.Str("HIDDEN_SECRET"), value.Str(""))
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // error; "" serves the value
	}{
		{"missing", nil, "replay: missing input HIDDEN_SECRET"},
		{"supplied", map[string]string{"HIDDEN_SECRET": "hunter2"}, ""},
		{"wrong length", map[string]string{"HIDDEN_SECRET": "hunter22"}, "replay: missing input HIDDEN_SECRET: the value supplied has 8 bytes, the recorded one had 7 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReplayer(a, rjProgram(), Options{Env: tc.env})
			startMain(t, r)
			res, err := r.Invoke(0, env, args, noLive(t))
			switch {
			case tc.want == "" && (err != nil || !bytes.Equal(res, rjEnc(value.Str("hunter2")))):
				t.Fatalf("got %x, %v", res, err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("got %v, want %s", err, tc.want)
			}
			r.End(artifact.VerdictQuiescent, 0)
			s := r.Stats()
			if got := s.MissingInputs > 0; got != (tc.want != "") || s.Clean() == got {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

// liveRecorder counts live calls.
type liveRecorder struct {
	calls int
}

func (l *liveRecorder) live() ([]byte, error) { l.calls++; return nil, nil }

func TestReplayerOutput(t *testing.T) {
	println := rjPrim(t, "std::io::println")
	a := rjArtifact(artifact.VerdictQuiescent, 0,
		rjE(0, rjStart("Main")),
		rjE(0, artifact.Output{Channel: artifact.ChannelStdout, Primitive: "std::io::println", Args: rjArgs(value.Str("hello")), Outcome: artifact.OK, Result: []byte("hello\n")}),
		rjE(0, artifact.Output{Channel: artifact.ChannelStdout, Primitive: "std::io::println", Args: rjArgs(value.Str("world")), Outcome: artifact.OK, Result: []byte("world\n")}),
		rjE(0, rjCall("std::time::now_ms", rjArgs(), rjEnc(value.Int(5)))),
	)
	for _, quiet := range []bool{false, true} {
		r := NewReplayer(a, rjProgram(), Options{Quiet: quiet})
		startMain(t, r)
		var l liveRecorder
		if _, err := r.Invoke(0, println, rjArgs(value.Str("hello")), l.live); err != nil {
			t.Fatal(err)
		}
		// A changed line: compared, printed, consumed, no trap.
		if _, err := r.Invoke(0, println, rjArgs(value.Str("World")), l.live); err != nil {
			t.Fatal(err)
		}
		// An extra line: the next recorded entry is a call, left for it.
		if _, err := r.Invoke(0, println, rjArgs(value.Str("extra")), l.live); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Invoke(0, rjPrim(t, "std::time::now_ms"), rjArgs(), noLive(t)); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 3, true: 0}[quiet]; l.calls != want {
			t.Errorf("quiet %v: %d live prints, want %d", quiet, l.calls, want)
		}
		r.End(artifact.VerdictQuiescent, 0)
		s := r.Stats()
		if s.OutputMismatches != 2 || s.JournalMisses != 0 || len(s.Findings) != 2 || s.Findings[0].Kind != artifact.ChangedOutput {
			t.Errorf("stats %+v", s)
		}
	}
}

func TestReplayerVirtualEffects(t *testing.T) {
	write := rjPrim(t, "std::fs::write_text")
	args := rjArgs(value.Str("out.txt"), value.Str("data"))
	a := rjArtifact(artifact.VerdictQuiescent, 0,
		rjE(0, rjStart("Main")),
		rjE(0, artifact.Output{Channel: artifact.ChannelFSWrite, Primitive: "std::fs::write_text", Args: args, Outcome: artifact.Trapped, Message: `cannot write "out.txt": permission denied`}),
	)
	r := NewReplayer(a, rjProgram(), Options{})
	startMain(t, r)
	_, err := r.Invoke(0, write, args, noLive(t))
	if err == nil || err.Error() != `cannot write "out.txt": permission denied` {
		t.Fatalf("virtual write: %v", err)
	}
	// With live effects the call is made, and compared.
	r = NewReplayer(a, rjProgram(), Options{AllowLiveEffects: true})
	startMain(t, r)
	var l liveRecorder
	if _, err := r.Invoke(0, write, args, l.live); err != nil || l.calls != 1 {
		t.Fatalf("live write: %v, %d calls", err, l.calls)
	}
	r.End(artifact.VerdictQuiescent, 0)
	if s := r.Stats(); s.OutputMismatches != 1 || s.Findings[0].Kind != artifact.ChangedResult {
		t.Errorf("stats %+v", s)
	}
}

// pending builds the pending list of a consumer.
func pending(ds ...host.Delivery) []host.Delivery { return ds }

func job(target, p int, s uint64) host.Delivery {
	return host.Delivery{Target: target, Topic: 0, Message: host.MessageID{Producer: p, Seq: s}, Payload: rjJob(int64(s))}
}

func TestReplayerOrderHoldsAndReleases(t *testing.T) {
	// W handled 0:1 before 0:0 in the recording.
	a := rjArtifact(artifact.VerdictQuiescent, 0,
		rjE(0, rjStart("Main")),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 0}, Payload: rjJob(0)}),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 1}, Payload: rjJob(1)}),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 2}, Payload: rjJob(2)}),
		rjE(1, rjDeliver("W", 0, 1)),
		rjE(1, rjDeliver("W", 0, 0)),
		rjE(1, rjDeliver("W", 0, 2)),
	)
	const hold = 50 * time.Millisecond
	r := NewReplayer(a, rjProgram(), Options{HoldTimeout: hold})
	// 0:0 arrives first: held, with a wait of at most the hold timeout.
	pick, wait := r.Next(1, pending(job(1, 0, 0)))
	if pick != host.Hold || wait <= 0 || wait > hold {
		t.Fatalf("first Next: %d, %v", pick, wait)
	}
	// 0:1 arrives: it is the recorded first.
	if pick, _ := r.Next(1, pending(job(1, 0, 0), job(1, 0, 1))); pick != 1 {
		t.Fatalf("second Next: %d", pick)
	}
	if pick, _ := r.Next(1, pending(job(1, 0, 0))); pick != 0 {
		t.Fatalf("third Next: %d", pick)
	}
	// The recorded third never comes; 0:3 does. Held, then released
	// after the timeout, then arrival order.
	if pick, _ := r.Next(1, pending(job(1, 0, 3))); pick != host.Hold {
		t.Fatalf("fourth Next: %d", pick)
	}
	time.Sleep(hold + 10*time.Millisecond)
	if pick, _ := r.Next(1, pending(job(1, 0, 3), job(1, 0, 4))); pick != 0 {
		t.Fatalf("after the timeout: %d", pick)
	}
	// The consumer has had its three: it retires.
	if pick, _ := r.Next(1, pending(job(1, 0, 4))); pick != host.Retire {
		t.Fatalf("after the recorded end: %d", pick)
	}
	r.End(artifact.VerdictQuiescent, 0)
	s := r.Stats()
	if s.OrderTimeouts != 1 || s.Unexpected != 1 {
		t.Errorf("stats %+v", s)
	}
	if f := s.Findings[0]; f.Kind != OrderTimeout || f.At != (artifact.Coordinate{Consumer: 1, N: 2}) ||
		!strings.Contains(f.Sentence, "delivery #2 (target W, message 0:2) did not arrive within 50ms") {
		t.Errorf("finding %+v", f)
	}
}

func TestReplayerRetiresAfterRecordedEnd(t *testing.T) {
	// The run stopped (trap on L) with W having handled one message and
	// two more queued: W retires after one, the queued ones are not
	// unexpected (the recording had them queued too).
	a := rjArtifact(artifact.VerdictTrap, 3,
		rjE(0, rjStart("Main")),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 0}, Payload: rjJob(0)}),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 1}, Payload: rjJob(1)}),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 2}, Payload: rjJob(2)}),
		rjE(2, rjDeliver("L", 0, 0)),
		rjE(1, rjDeliver("W", 0, 0)),
		rjE(2, artifact.Trap{Message: "division by zero", Position: "app.hl:9:5", At: &artifact.Coordinate{Consumer: 2, N: 0}}),
	)
	r := NewReplayer(a, rjProgram(), Options{HoldTimeout: time.Second})
	if pick, _ := r.Next(1, pending(job(1, 0, 0), job(1, 0, 1))); pick != 0 {
		t.Fatalf("W first: %d", pick)
	}
	if pick, _ := r.Next(1, pending(job(1, 0, 1), job(1, 0, 2))); pick != host.Retire {
		t.Fatalf("W second: %d", pick)
	}
	if s := r.Stats(); s.Unexpected != 0 {
		t.Errorf("unexpected %d", s.Unexpected)
	}
	// In a quiescent recording the same queued deliveries are unexpected.
	a.Trailer = artifact.Trailer{Verdict: artifact.VerdictQuiescent}
	a.Entries = a.Entries[:6]
	r = NewReplayer(a, rjProgram(), Options{HoldTimeout: time.Second})
	r.Next(1, pending(job(1, 0, 0)))
	if pick, _ := r.Next(1, pending(job(1, 0, 1), job(1, 0, 2))); pick != host.Retire {
		t.Fatalf("W second: %d", pick)
	}
	if s := r.Stats(); s.Unexpected != 2 || s.Findings[0].Kind != artifact.UnexpectedDelivery {
		t.Errorf("stats %+v", s)
	}
}

func TestReplayerTrapWaitsForTheRecordedEnd(t *testing.T) {
	// L traps on its first delivery; by then W had handled three.
	a := rjArtifact(artifact.VerdictTrap, 3,
		rjE(0, rjStart("Main")),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 0}, Payload: rjJob(0)}),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 1}, Payload: rjJob(1)}),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 2}, Payload: rjJob(2)}),
		rjE(1, rjDeliver("W", 0, 0)),
		rjE(1, rjDeliver("W", 0, 1)),
		rjE(2, rjDeliver("L", 0, 0)),
		rjE(1, rjDeliver("W", 0, 2)),
		rjE(2, artifact.Trap{Message: "division by zero", Position: "app.hl:9:5", At: &artifact.Coordinate{Consumer: 2, N: 0}}),
	)
	r := NewReplayer(a, rjProgram(), Options{HoldTimeout: 5 * time.Second})
	startMain(t, r)
	all := pending(job(1, 0, 0), job(1, 0, 1), job(1, 0, 2))
	if pick, _ := r.Next(1, all); pick != 0 {
		t.Fatal(pick)
	}
	if pick, _ := r.Next(2, pending(job(2, 0, 0))); pick != 0 {
		t.Fatal(pick)
	}
	trapped := make(chan time.Time)
	go func() {
		r.Trap(2, 0, &vm.Trap{Message: "division by zero"}, nil)
		trapped <- time.Now()
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case <-trapped:
		t.Fatal("the trap did not wait for W")
	default:
	}
	if pick, _ := r.Next(1, all[1:]); pick != 0 {
		t.Fatal(pick)
	}
	time.Sleep(20 * time.Millisecond)
	select {
	case <-trapped:
		t.Fatal("the trap did not wait for W's third delivery")
	default:
	}
	given := time.Now()
	if pick, _ := r.Next(1, all[2:]); pick != 0 {
		t.Fatal(pick)
	}
	select {
	case at := <-trapped:
		if at.Before(given) {
			t.Error("the trap returned before W's last delivery was given")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the trap still waits")
	}
}

func TestReplayerTrapWaitGivesUp(t *testing.T) {
	// W never gets its recorded delivery: the trap stops waiting once
	// nothing has happened for twice the hold timeout.
	a := rjArtifact(artifact.VerdictTrap, 3,
		rjE(0, rjStart("Main")),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 0}, Payload: rjJob(0)}),
		rjE(1, rjDeliver("W", 0, 0)),
		rjE(2, rjDeliver("L", 0, 0)),
		rjE(2, artifact.Trap{Message: "boom", At: &artifact.Coordinate{Consumer: 2, N: 0}}),
	)
	const hold = 30 * time.Millisecond
	r := NewReplayer(a, rjProgram(), Options{HoldTimeout: hold})
	r.Next(2, pending(job(2, 0, 0)))
	start := time.Now()
	r.Trap(2, 0, &vm.Trap{Message: "boom"}, nil)
	if d := time.Since(start); d < 2*hold || d > 2*time.Second {
		t.Errorf("gave up after %v", d)
	}
	r.End(artifact.VerdictTrap, 3)
	if s := r.Stats(); s.MissingDeliveries != 2 { // Main's start and W's message
		t.Errorf("stats %+v", s)
	}
}

func TestReplayerPublishAndIngress(t *testing.T) {
	line := []byte{byte(value.KindStruct), 1, byte(value.KindString), 2, 'h', 'i'}
	a := rjArtifact(artifact.VerdictQuiescent, 0,
		rjE(3, artifact.Publish{Topic: "Line", Message: artifact.MessageID{Producer: 3, Seq: 0}, Payload: line}),
		rjE(3, artifact.Publish{Topic: "Line", Message: artifact.MessageID{Producer: 3, Seq: 1}, Payload: []byte{byte(value.KindStruct), 1, byte(value.KindString), 0}}),
		rjE(0, rjStart("Main")),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 0}, Payload: rjJob(0)}),
	)
	r := NewReplayer(a, rjProgram(), Options{})
	in := r.Input()
	var lines []string
	for {
		l, err := in.Line()
		if err != nil {
			break
		}
		lines = append(lines, l)
	}
	if strings.Join(lines, "|") != "hi|" {
		t.Errorf("lines %q", lines)
	}
	startMain(t, r)
	r.Publish(0, host.MessageID{Producer: 0, Seq: 0}, 0, rjJob(1), r.img.Topics[0].Subscribers)
	r.Publish(0, host.MessageID{Producer: 0, Seq: 1}, 0, rjJob(1), r.img.Topics[0].Subscribers)
	s := r.Stats()
	if s.PublishMismatches != 2 || s.Findings[0].Kind != artifact.ChangedPayload || s.Findings[3].Kind != artifact.ExtraPublish {
		t.Errorf("stats %+v", s)
	}
	// Both subscribers have had all their (zero) recorded deliveries.
	if s.Unexpected != 4 {
		t.Errorf("unexpected %d", s.Unexpected)
	}
}

// rjState is a StateReader of fixed tuples.
type rjState map[int][]byte

func (s rjState) State(inst int) ([]byte, error) {
	if b, ok := s[inst]; ok {
		return b, nil
	}
	return nil, errors.New("no state")
}

func TestReplayerAt(t *testing.T) {
	a := rjArtifact(artifact.VerdictQuiescent, 0,
		rjE(0, rjStart("Main")),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 0}, Payload: rjJob(0)}),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 1}, Payload: rjJob(1)}),
		rjE(1, rjDeliver("W", 0, 0)),
		rjE(1, rjDeliver("W", 0, 1)),
	)
	state := rjState{1: rjArgs(value.Int(1))}
	r := NewReplayer(a, rjProgram(), Options{At: &artifact.Coordinate{Consumer: 1, N: 1}})
	if err := r.Deliver(1, 0, &host.Delivery{Target: 1, Topic: 0, Message: host.MessageID{Producer: 0, Seq: 0}, Payload: rjJob(0)}, state); err != nil {
		t.Fatal(err)
	}
	err := r.Deliver(1, 1, &host.Delivery{Target: 1, Topic: 0, Message: host.MessageID{Producer: 0, Seq: 1}, Payload: rjJob(1)}, state)
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("Deliver at 1:1: %v", err)
	}
	v := r.At()
	if v == nil {
		t.Fatal("no view")
	}
	got := rjJSON(t, v)
	want := `{"coordinate":"1:1","pending":{"target":"W","message":"0:1","topic":"Job","payload":{"n":1}},"state":{"done":1},"recent":[{"coordinate":"1:0","target":"W","message":"0:0","topic":"Job","payload":{"n":0}}]}`
	if got != want {
		t.Errorf("view\n got %s\nwant %s", got, want)
	}
}

func TestReplayerExitWaits(t *testing.T) {
	exit := rjPrim(t, "std::process::exit")
	a := rjArtifact(artifact.VerdictExit, 7,
		rjE(0, rjStart("Main")),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 0}, Payload: rjJob(0)}),
		rjE(1, rjDeliver("W", 0, 0)),
		rjE(0, artifact.Exit{Code: 7, At: &artifact.Coordinate{Consumer: 0, N: 0}}),
	)
	r := NewReplayer(a, rjProgram(), Options{HoldTimeout: 5 * time.Second})
	startMain(t, r)
	var mu sync.Mutex
	exited := false
	done := make(chan struct{})
	go func() {
		r.Invoke(0, exit, rjArgs(value.Int(7), value.Str("app.hl:9:5")), func() ([]byte, error) {
			mu.Lock()
			exited = true
			mu.Unlock()
			return nil, nil
		})
		close(done)
	}()
	time.Sleep(30 * time.Millisecond)
	mu.Lock()
	early := exited
	mu.Unlock()
	if early {
		t.Fatal("exited before W had its delivery")
	}
	r.Next(1, pending(job(1, 0, 0)))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("exit still waits")
	}
}

// TestRecordingJournalEntries drives a RecordingJournal by hand and checks
// the entries it wrote.
func TestRecordingJournalEntries(t *testing.T) {
	prog := rjProgram()
	for _, policy := range []string{artifact.EnvWithheld, artifact.EnvFull} {
		h, err := NewHeader(prog, HeaderInfo{HaleVersion: "test", Files: []string{"app.hl"}, EnvPolicy: policy})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		rec, err := artifact.New(&buf, h, artifact.Options{})
		if err != nil {
			t.Fatal(err)
		}
		j := NewRecordingJournal(rec, prog, policy)
		secret := rjEnc(value.Str("s3cr3t-value"))
		j.Deliver(0, 0, &host.Delivery{Target: 0, Topic: host.StartTopic}, nil)
		j.Invoke(0, rjPrim(t, "std::os::env"), rjArgs(value.Str("TOKEN"), value.Str("")), func() ([]byte, error) { return secret, nil })
		j.Invoke(0, rjPrim(t, "print"), rjEnc(value.Str("hi")), func() ([]byte, error) { return nil, nil })
		j.Invoke(0, rjPrim(t, "std::io::eprintln"), rjArgs(value.Str("oops")), func() ([]byte, error) { return nil, nil })
		j.Invoke(0, rjPrim(t, "std::http::get"), rjArgs(value.Str("http://x")), func() ([]byte, error) { return nil, &vm.TrapError{Kind: vm.KindIO, Message: "connection refused"} })
		j.Invoke(0, rjPrim(t, "std::http::get"), rjArgs(value.Str("http://y")), func() ([]byte, error) { return nil, errors.New("no kind") })
		j.Publish(0, host.MessageID{Producer: 0, Seq: 0}, 0, rjJob(3), nil)
		j.Invoke(0, rjPrim(t, "std::process::exit"), rjArgs(value.Int(2), value.Str("app.hl:4:9")), func() ([]byte, error) { return nil, nil })
		j.Trap(0, 0, &vm.Trap{Kind: vm.KindPanic, Message: "boom", Stack: []vm.Frame{{Func: "Main.on start", Pos: "app.hl:3:4"}, {Func: "helper"}}}, nil)
		j.End(artifact.VerdictExit, 2)
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		a, err := artifact.Decode(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Contains(buf.Bytes(), []byte("s3cr3t-value")); got != (policy == artifact.EnvFull) {
			t.Errorf("policy %s: secret in the artifact: %v", policy, got)
		}
		got := rjJSON(t, a.Entries)
		want := `[{"Consumer":0,"Seq":0,"Body":{"Target":"Main","Start":true,"Message":{"Producer":0,"Seq":0},"Topic":""}},` +
			`{"Consumer":0,"Seq":1,"Body":` + map[string]string{
			artifact.EnvWithheld: `{"Primitive":"std::os::env","Args":"AgQFVE9LRU4EAA==","Outcome":1,"Result":null,"Length":12,"Message":"","TrapKind":""}},`,
			artifact.EnvFull:     `{"Primitive":"std::os::env","Args":"AgQFVE9LRU4EAA==","Outcome":0,"Result":"BAxzM2NyM3QtdmFsdWU=","Length":0,"Message":"","TrapKind":""}},`,
		}[policy] +
			`{"Consumer":0,"Seq":2,"Body":{"Channel":"stdout","Primitive":"print","Args":"BAJoaQ==","Outcome":0,"Result":"aGkK","Length":0,"Message":"","TrapKind":""}},` +
			`{"Consumer":0,"Seq":3,"Body":{"Channel":"stderr","Primitive":"std::io::eprintln","Args":"AQQEb29wcw==","Outcome":0,"Result":"b29wcwo=","Length":0,"Message":"","TrapKind":""}},` +
			`{"Consumer":0,"Seq":4,"Body":{"Channel":"net","Primitive":"std::http::get","Args":"AQQIaHR0cDovL3g=","Outcome":2,"Result":null,"Length":0,"Message":"connection refused","TrapKind":"io"}},` +
			`{"Consumer":0,"Seq":5,"Body":{"Channel":"net","Primitive":"std::http::get","Args":"AQQIaHR0cDovL3k=","Outcome":2,"Result":null,"Length":0,"Message":"no kind","TrapKind":"host"}},` +
			`{"Consumer":0,"Seq":6,"Body":{"Topic":"Job","Message":{"Producer":0,"Seq":0},"Payload":"CAEBBg==","DelayMS":0}},` +
			`{"Consumer":0,"Seq":7,"Body":{"Code":2,"Position":"app.hl:4:9","At":{"Consumer":0,"N":0}}},` +
			`{"Consumer":0,"Seq":8,"Body":{"TrapKind":"panic","Message":"boom","Position":"app.hl:3:4","Stack":["at app.hl:3:4 in Main.on start","at helper"],"At":{"Consumer":0,"N":0}}}]`
		if got != want {
			t.Errorf("policy %s: entries\n got %s\nwant %s", policy, got, want)
		}
		if a.Trailer.Verdict != artifact.VerdictExit || a.Trailer.ExitCode != 2 {
			t.Errorf("trailer %+v", a.Trailer)
		}
	}
}

// failAfter fails every write after the first n bytes.
type failAfter struct {
	n int
}

func (w *failAfter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errors.New("no space left on device")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestRecordingJournalFailureHalts(t *testing.T) {
	prog := rjProgram()
	h, _ := NewHeader(prog, HeaderInfo{HaleVersion: "test", Files: []string{"app.hl"}})
	rec, err := artifact.New(&failAfter{n: 2000}, h, artifact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	j := NewRecordingJournal(rec, prog, artifact.EnvWithheld)
	var derr error
	for n := 0; n < 1000 && derr == nil; n++ {
		derr = j.Deliver(0, n, &host.Delivery{Target: 0, Topic: host.StartTopic}, nil)
		time.Sleep(time.Millisecond)
	}
	if derr == nil || !strings.Contains(derr.Error(), "recording failed") || !strings.Contains(derr.Error(), "no space left on device") {
		t.Fatalf("Deliver: %v", derr)
	}
	if j.Err() == nil {
		t.Error("Err is nil")
	}
	j.End(host.VerdictHalted, 0)
	if err := j.Close(); err == nil {
		t.Error("Close succeeded")
	}
}

func TestProgramTypesRoundTrip(t *testing.T) {
	prog := rjProgram()
	blob, err := programTypesOf(prog)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := NewValueDecoder(&artifact.Header{Types: blob})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field, hint string
		data        []byte
		want        string // "" cannot decode
	}{
		{"payload", "Job", rjJob(3), `{"n":3}`},
		{"payload", "Nope", rjJob(3), ""},
		{"payload", "Job", []byte{1, 2}, ""},
		{"args", "std::os::env", rjArgs(value.Str("A"), value.Str("b")), `["A","b"]`},
		{"args", "print", rjEnc(value.Str("hi")), `["hi"]`},
		{"args", "std::time::now_ms", rjArgs(), `[]`},
		{"result", "std::rand::next_int", rjEnc(value.Int(4)), `4`},
		{"result", "std::time::now_ms", nil, ""},
	} {
		v, ok := dec(tc.field, tc.hint, tc.data)
		got := ""
		if ok {
			got = rjJSON(t, v)
		}
		if got != tc.want {
			t.Errorf("%s %s %x: got %s, want %s", tc.field, tc.hint, tc.data, got, tc.want)
		}
	}
	pt, err := decodeProgramTypes(blob)
	if err != nil {
		t.Fatal(err)
	}
	names := rjArgs(value.Int(2), value.NewList([]value.Value{value.Str("a")}))
	if st, err := pt.stateJSON(0, names); err != nil || string(st) != `{"count":2,"names":["a"]}` {
		t.Errorf("state: %s, %v", st, err)
	}
	// Damaged tables are refused, never a panic.
	for i := range len(blob) {
		decodeProgramTypes(blob[:i])
	}
	if _, err := NewValueDecoder(&artifact.Header{}); err == nil {
		t.Error("an empty type table was accepted")
	}
}

// rjJSON renders v as compact JSON.
func rjJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzReplayer feeds the replayer artifacts that decode but need not make
// sense, and drives a few calls through it: it must never panic.
func FuzzReplayer(f *testing.F) {
	seeds := []*artifact.Artifact{
		rjArtifact(artifact.VerdictTrap, 3,
			rjE(3, artifact.Publish{Topic: "Line", Message: artifact.MessageID{Producer: 3, Seq: 0}, Payload: []byte{8, 1, 4, 1, 'x'}}),
			rjE(0, rjStart("Main")),
			rjE(0, rjCall("std::time::now_ms", rjArgs(), rjEnc(value.Int(17)))),
			rjE(0, artifact.Invocation{Primitive: "std::os::env", Args: rjArgs(value.Str("A"), value.Str("")), Outcome: artifact.Withheld, Length: 3}),
			rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 0}, Payload: rjJob(0)}),
			rjE(1, rjDeliver("W", 0, 0)),
			rjE(1, artifact.Output{Channel: artifact.ChannelStdout, Primitive: "print", Args: rjEnc(value.Str("hi")), Result: []byte("hi\n")}),
			rjE(2, rjDeliver("L", 0, 0)),
			rjE(2, artifact.Trap{Message: "boom", At: &artifact.Coordinate{Consumer: 2, N: 0}}),
			rjE(0, artifact.Exit{Code: 1, At: &artifact.Coordinate{Consumer: 0, N: 0}}),
		),
	}
	for _, a := range seeds {
		b, err := artifact.Encode(a)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	prog := rjProgram()
	now, env, print := stdlib.Primitive{}, stdlib.Primitive{}, stdlib.Primitive{}
	now, _ = stdlib.Lookup("std::time::now_ms")
	env, _ = stdlib.Lookup("std::os::env")
	print, _ = stdlib.Lookup("print")
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := artifact.Decode(data)
		if err != nil {
			return
		}
		r := NewReplayer(a, prog, Options{HoldTimeout: time.Millisecond, Quiet: true, At: &artifact.Coordinate{Consumer: 1, N: 1}})
		live := func() ([]byte, error) { return nil, nil }
		for c := range 4 {
			start := host.Delivery{Target: min(c, 2), Topic: host.StartTopic}
			msg := job(min(c, 2), 0, 0)
			r.Next(c, []host.Delivery{start, msg})
			r.Deliver(c, 0, &start, rjState{})
			r.Invoke(c, now, rjArgs(), live)
			r.Invoke(c, env, rjArgs(value.Str("A"), value.Str("")), live)
			r.Invoke(c, print, rjEnc(value.Str("hi")), live)
			r.Publish(c, host.MessageID{Producer: c, Seq: 0}, 0, rjJob(0), r.img.Topics[0].Subscribers)
			r.Deliver(c, 1, &msg, rjState{})
		}
		r.Trap(2, 0, &vm.Trap{Message: "boom"}, nil)
		r.End(artifact.VerdictTrap, 3)
		r.Stats()
		r.Input().Line()
		NewValueDecoder(&a.Header)
	})
}

// FuzzProgramTypes: a header's type table never makes the decoder panic.
func FuzzProgramTypes(f *testing.F) {
	blob, err := programTypesOf(rjProgram())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(blob)
	f.Fuzz(func(t *testing.T, data []byte) {
		pt, err := decodeProgramTypes(data)
		if err != nil {
			return
		}
		for name := range pt.byTopic {
			pt.decode("payload", name, rjJob(1))
		}
		for name := range pt.prims {
			pt.decode("args", name, rjArgs(value.Int(1)))
			pt.decode("result", name, rjEnc(value.Int(1)))
		}
		for i := range pt.states {
			pt.stateJSON(i, rjArgs(value.Int(1)))
		}
	})
}

func TestReplayerSkipsUnprintedOutput(t *testing.T) {
	a := rjArtifact(artifact.VerdictQuiescent, 0,
		rjE(0, rjStart("Main")),
		rjE(0, artifact.Output{Channel: artifact.ChannelStdout, Primitive: "print", Args: rjEnc(value.Str("log")), Outcome: artifact.OK, Result: []byte("log\n")}),
		rjE(0, rjCall("std::time::now_ms", rjArgs(), rjEnc(value.Int(5)))),
	)
	r := NewReplayer(a, rjProgram(), Options{})
	startMain(t, r)
	res, err := r.Invoke(0, rjPrim(t, "std::time::now_ms"), rjArgs(), noLive(t))
	if err != nil || !bytes.Equal(res, rjEnc(value.Int(5))) {
		t.Fatalf("now_ms after a print the replay left out: %x, %v", res, err)
	}
	r.End(artifact.VerdictQuiescent, 0)
	if s := r.Stats(); s.OutputMismatches != 1 || s.JournalMisses != 0 || s.Findings[0].Kind != artifact.ChangedOutput ||
		s.Findings[0].Sentence != `consumer 0: in delivery #0, the recording printed print("log") here, the replay did not` {
		t.Errorf("stats %+v", s)
	}
}
