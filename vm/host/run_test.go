package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
)

const topologySrc = `
topic Ping { n: int }
topic Line { text: string }
locus A { on start { } on Ping(p) { } }
locus B { on start { } on Line(l) { } }
main {
    spawn A as a1;
    spawn A as a2 on pool("zeta");
    spawn B as b1 on pinned;
    spawn A as a3 on pool("alpha");
    spawn B as b2 on async_io;
    spawn A as a4 on pool("zeta");
    spawn B as b3 on main;
    bind stdin to Line;
}
`

// TestConsumerTable checks placement: consumer ids are 0 main, then pools
// by first appearance, then pinned, then async_io, then ingress; and
// every delivery runs on its target's consumer, numbered from 0 there,
// start deliveries in main order first.
func TestConsumerTable(t *testing.T) {
	prog := compileSIR(t, topologySrc)
	type row struct {
		kind      uint8
		name      string
		instances []string
	}
	want := []row{
		{image.ConsumerMain, "main", []string{"a1", "b3"}},
		{image.ConsumerPool, "zeta", []string{"a2", "a4"}},
		{image.ConsumerPool, "alpha", []string{"a3"}},
		{image.ConsumerPinned, "b1", []string{"b1"}},
		{image.ConsumerAsyncIO, "b2", []string{"b2"}},
		{image.ConsumerIngress, "stdin:Line", nil},
	}
	var got []row
	for _, c := range prog.Consumers {
		r := row{kind: c.Kind, name: c.Name}
		for _, i := range c.Instances {
			r.instances = append(r.instances, prog.Instances[i].Name)
		}
		got = append(got, r)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("consumer table\n%v\nwant\n%v", got, want)
	}

	j := newLogJournal(prog)
	o := runFake(t, prog, behaviour{}, Options{Stdin: strings.NewReader("x\ny\n"), Journal: j})
	if o.err != nil || o.res.Verdict != VerdictQuiescent {
		t.Fatalf("run: %v %+v", o.err, o.res)
	}
	j.check(t)
	wantDeliveries := map[int][]string{
		0: {"deliver 0 a1 start", "deliver 1 b3 start", "deliver 2 b3 5:0", "deliver 3 b3 5:1"},
		1: {"deliver 0 a2 start", "deliver 1 a4 start"},
		2: {"deliver 0 a3 start"},
		3: {"deliver 0 b1 start", "deliver 1 b1 5:0", "deliver 2 b1 5:1"},
		4: {"deliver 0 b2 start", "deliver 1 b2 5:0", "deliver 2 b2 5:1"},
	}
	for c, want := range wantDeliveries {
		if got := j.kinds(c, "deliver"); !reflect.DeepEqual(got, want) {
			t.Errorf("consumer %d deliveries\n%q\nwant\n%q", c, got, want)
		}
	}
	if got, want := j.events(5), []string{"publish 5:0 Line", "publish 5:1 Line"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ingress events %q, want %q", got, want)
	}
	if want := []int{4, 2, 1, 3, 3, 0}; !reflect.DeepEqual(o.res.Handled, want) {
		t.Errorf("handled %v, want %v", o.res.Handled, want)
	}
}

// TestJournalEvents checks the exact event stream of a single-consumer
// run: invocations (print included), publishes with their identities P:S,
// deliveries with their numbers C:N (starts included), and the end.
func TestJournalEvents(t *testing.T) {
	prog := compileSIR(t, `
topic T { n: int }
locus P {
    on start { print("p"); publish T { n: 1 }; publish T { n: 2 }; }
    on T(t) { }
}
locus Q { on T(t) { print("q"); } }
locus R { on start { std::time::sleep_ms(0); } }
main { spawn P; spawn Q; spawn R; }
`)
	b := behaviour{
		"P.on start": func(x *call) error {
			x.print("p")
			x.publish("T", v(1))
			return x.publish("T", v(2))
		},
		"Q.on T":     func(x *call) error { return x.print("q") },
		"R.on start": func(x *call) error { _, err := x.prim("std::time::sleep_ms", v(0)); return err },
	}
	check := func(t *testing.T, o outcome, j *logJournal) {
		t.Helper()
		if o.err != nil || o.res.Verdict != VerdictQuiescent || o.stdout != "p\nq\nq\n" {
			t.Fatalf("run: %v %+v %q", o.err, o.res, o.stdout)
		}
		j.check(t)
		want := []string{
			"deliver 0 P start",
			`invoke print("p")`,
			"publish 0:0 T",
			"publish 0:1 T",
			"deliver 1 R start",
			"invoke std::time::sleep_ms(010100)",
			"deliver 2 P 0:0",
			"deliver 3 Q 0:0",
			`invoke print("q")`,
			"deliver 4 P 0:1",
			"deliver 5 Q 0:1",
			`invoke print("q")`,
		}
		if got := j.events(0); !reflect.DeepEqual(got, want) {
			t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if j.verdict != VerdictQuiescent || j.code != 0 {
			t.Errorf("End(%s, %d)", j.verdict, j.code)
		}
	}
	t.Run("fake", func(t *testing.T) {
		j := newLogJournal(prog)
		check(t, runFake(t, prog, b, Options{Journal: j}), j)
	})
	img := compileAll(t, `
topic T { n: int }
locus P {
    on start { print("p"); publish T { n: 1 }; publish T { n: 2 }; }
    on T(t) { }
}
locus Q { on T(t) { print("q"); } }
locus R { on start { std::time::sleep_ms(0); } }
main { spawn P; spawn Q; spawn R; }
`)
	for _, kind := range realEngines {
		t.Run(kind.String(), func(t *testing.T) {
			j := newLogJournal(img)
			check(t, runWith(t, img, Options{Engine: kind, Journal: j}), j)
		})
	}
}

// TestJournalTrapAndExit checks that a trap reaches the journal with its
// coordinate and that End gets the verdict and code.
func TestJournalTrapAndExit(t *testing.T) {
	for _, sc := range scenarios {
		if sc.verdict == "" {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			prog := compileSIR(t, sc.src)
			j := newLogJournal(prog)
			opts := sc.options()
			opts.Journal = j
			o := runFake(t, prog, sc.fake, opts)
			sc.check(t, o)
			j.check(t)
			if j.verdict != sc.verdict || j.code != sc.code {
				t.Errorf("End(%s, %d), want End(%s, %d)", j.verdict, j.code, sc.verdict, sc.code)
			}
			evs := j.events(0)
			last := evs[len(evs)-1]
			switch sc.verdict {
			case VerdictTrap:
				want := fmt.Sprintf("trap %d %s", o.res.Trap.N, o.res.Trap.Trap.Message)
				if last != want {
					t.Errorf("last event %q, want %q", last, want)
				}
			case VerdictExit:
				found := false
				for _, ev := range evs {
					found = found || strings.HasPrefix(ev, "invoke std::process::exit(")
				}
				if !found {
					t.Errorf("no exit invocation in %q", evs)
				}
			}
		})
	}
}

// orderFunc adapts a function to Order.
type orderFunc func(c int, pending []Delivery) (int, time.Duration)

func (f orderFunc) Next(c int, pending []Delivery) (int, time.Duration) { return f(c, pending) }

const orderSrc = `
topic T { n: int }
locus P {
    on start { for i in 0..5 { publish T { n: i }; } }
    on T(t) { print(str(t.n)); }
}
main { spawn P; }
`

var orderFake = behaviour{
	"P.on start": func(x *call) error {
		for i := range 5 {
			x.publish("T", v(int64(i)))
		}
		return nil
	},
	"P.on T": func(x *call) error { return x.print(fmt.Sprint(x.int(0))) },
}

// TestOrderReorders checks that an Order decides a consumer's order.
func TestOrderReorders(t *testing.T) {
	prog := compileSIR(t, orderSrc)
	last := orderFunc(func(c int, pending []Delivery) (int, time.Duration) { return len(pending) - 1, 0 })
	j := newLogJournal(prog)
	o := runFake(t, prog, orderFake, Options{Order: last, Journal: j})
	if o.err != nil || o.stdout != "4\n3\n2\n1\n0\n" {
		t.Fatalf("run: %v, stdout %q", o.err, o.stdout)
	}
	j.check(t)
	want := []string{"deliver 0 P start", "deliver 1 P 0:4", "deliver 2 P 0:3", "deliver 3 P 0:2", "deliver 4 P 0:1", "deliver 5 P 0:0"}
	if got := j.kinds(0, "deliver"); !reflect.DeepEqual(got, want) {
		t.Errorf("deliveries %q, want %q", got, want)
	}
}

// TestOrderHold checks that Hold waits for the timeout (or an arrival)
// and asks again, without deadlocking the run.
func TestOrderHold(t *testing.T) {
	prog := compileSIR(t, orderSrc)
	var calls, holds atomic.Int32
	held := false
	hold := orderFunc(func(c int, pending []Delivery) (int, time.Duration) {
		calls.Add(1)
		// Hold the first message once: nothing else arrives, so only the
		// timeout can wake the consumer.
		if len(pending) == 5 && !held {
			held = true
			holds.Add(1)
			return Hold, 20 * time.Millisecond
		}
		return 0, 0
	})
	start := time.Now()
	o := runFake(t, prog, orderFake, Options{Order: hold})
	if o.err != nil || o.stdout != "0\n1\n2\n3\n4\n" || o.res.Verdict != VerdictQuiescent {
		t.Fatalf("run: %v %+v stdout %q", o.err, o.res, o.stdout)
	}
	if holds.Load() != 1 || time.Since(start) < 20*time.Millisecond {
		t.Errorf("holds %d after %v", holds.Load(), time.Since(start))
	}
	if calls.Load() != 7 { // start, held, then 5 picks
		t.Errorf("Next called %d times, want 7", calls.Load())
	}
}

// TestOrderRetire checks that a retired consumer drops its deliveries and
// the run still ends quiescent.
func TestOrderRetire(t *testing.T) {
	prog := compileSIR(t, orderSrc)
	n := 0
	retire := orderFunc(func(c int, pending []Delivery) (int, time.Duration) {
		n++
		if n > 3 {
			return Retire, 0
		}
		return 0, 0
	})
	o := runFake(t, prog, orderFake, Options{Order: retire})
	if o.err != nil || o.stdout != "0\n1\n" || o.res.Verdict != VerdictQuiescent || o.res.Handled[0] != 3 {
		t.Fatalf("run: %v %+v stdout %q", o.err, o.res, o.stdout)
	}
}

// TestOrderBadPick checks that an out-of-range pick fails the run.
func TestOrderBadPick(t *testing.T) {
	prog := compileSIR(t, orderSrc)
	bad := orderFunc(func(c int, pending []Delivery) (int, time.Duration) { return len(pending), 0 })
	o := runFake(t, prog, orderFake, Options{Order: bad})
	if o.err == nil || o.res.Verdict != VerdictError {
		t.Fatalf("run: %v %+v", o.err, o.res)
	}
}

// TestJournalHalts checks that an error from Journal.Deliver halts the
// run before that handler runs, and that the journal can read state.
func TestJournalHalts(t *testing.T) {
	prog := compileSIR(t, orderSrc)
	j := newLogJournal(prog)
	stop := errors.New("stop at 0:3")
	var state []byte
	j.deliverHook = func(c, n int, d *Delivery, st StateReader) error {
		if n == 3 {
			state, _ = st.State(d.Target)
			return stop
		}
		return nil
	}
	o := runFake(t, prog, orderFake, Options{Journal: j})
	if o.err != nil || o.res.Verdict != VerdictHalted || o.res.Halt != stop || o.res.Code != 0 {
		t.Fatalf("run: %v %+v", o.err, o.res)
	}
	if o.stdout != "0\n1\n" || o.res.Handled[0] != 3 {
		t.Errorf("stdout %q handled %v", o.stdout, o.res.Handled)
	}
	// The fake engine's state is its run count: 3 runs before 0:3.
	if want := []byte{1, 1, 6}; !reflect.DeepEqual(state, want) {
		t.Errorf("state %x, want %x", state, want)
	}
	j.check(t)
}

// TestInitTrap checks a trap while initialising an instance: nothing
// runs, the report names the instance.
func TestInitTrap(t *testing.T) {
	prog := compileSIR(t, `
locus L(n: int) { on start { print("never"); } }
main { spawn L(1) as ok; spawn L(2) as bad; }
`)
	b := behaviour{
		"L.init": func(x *call) error {
			if x.name() == "bad" {
				return &vm.Trap{Message: "integer overflow", Stack: []vm.Frame{{Func: "main", Pos: "app.hl:3:25"}}}
			}
			return nil
		},
	}
	j := newLogJournal(prog)
	o := runFake(t, prog, b, Options{Journal: j})
	want := "trap: integer overflow\n  at app.hl:3:25 in main\n  at start-up (initialising bad)\n"
	if o.err != nil || o.res.Code != ExitTrap || o.stderr != want || o.stdout != "" {
		t.Fatalf("run: %v %+v\nstderr %q\nwant   %q", o.err, o.res, o.stderr, want)
	}
	if got := j.events(0); !reflect.DeepEqual(got, []string{"trap -1 integer overflow"}) {
		t.Errorf("events %q", got)
	}
	j.check(t)
}

// TestConcurrentTraps checks that when several consumers trap, exactly
// one trap is reported and every consumer stops.
func TestConcurrentTraps(t *testing.T) {
	prog := compileSIR(t, `
topic Go { n: int }
locus Boss { on start { publish Go { n: 1 }; } }
locus W { on Go(g) { panic("boom"); } }
main { spawn Boss; spawn W as w1 on pinned; spawn W as w2 on pinned; spawn W as w3 on pool("p"); }
`)
	b := behaviour{
		"Boss.on start": func(x *call) error { return x.publish("Go", v(1)) },
		"W.on Go": func(x *call) error {
			return &vm.Trap{Message: "boom " + x.name(), Stack: []vm.Frame{{Func: "W.on Go", Pos: "app.hl:4:20"}}}
		},
	}
	for range 20 {
		j := newLogJournal(prog)
		o := runFake(t, prog, b, Options{Journal: j})
		if o.err != nil || o.res.Code != ExitTrap || strings.Count(o.stderr, "trap: ") != 1 {
			t.Fatalf("run: %v %+v stderr %q", o.err, o.res, o.stderr)
		}
		rep := o.res.Trap
		if want := fmt.Sprintf("delivery %d:0 (target %s, message 0:0, topic Go)", rep.Consumer, rep.Instance); !strings.Contains(o.stderr, want) {
			t.Errorf("stderr %q lacks %q", o.stderr, want)
		}
		j.check(t)
	}
}

// TestCancel checks that canceling the context stops the run after the
// current handlers.
func TestCancel(t *testing.T) {
	prog := compileSIR(t, `
topic T { n: int }
locus L { on start { publish T { n: 0 }; } on T(t) { publish T { n: t.n + 1 }; } }
main { spawn L; }
`)
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	b := behaviour{
		"L.on start": func(x *call) error { return x.publish("T", v(0)) },
		"L.on T": func(x *call) error {
			if x.int(0) == 100 {
				once.Do(cancel)
			}
			return x.publish("T", v(x.int(0)+1))
		},
	}
	res, err := Run(ctx, prog, Options{engine: fakeEngines(prog, b)})
	if !errors.Is(err, context.Canceled) || res.Verdict != VerdictCanceled {
		t.Fatalf("run: %v %+v", err, res)
	}
}

// failingEngine fails with a non-trap error, as a crashed guest does.
type failingEngine struct{}

func (failingEngine) Init(inst int) error { return nil }

func (failingEngine) Deliver(inst, handler int, payload []byte) error {
	return errors.New("the guest crashed")
}

func (failingEngine) State(inst int) ([]byte, error) { return nil, nil }

func (failingEngine) Close() error { return nil }

func (failingEngine) Params(inst int) ([]byte, error) { return []byte{0}, nil }

func (failingEngine) SetGuardParams(table [][]byte) error { return nil }

func (failingEngine) Guards(topic int, payload []byte) ([]byte, error) { return nil, nil }

// TestEngineFailure checks that an engine's own failure ends the run with
// an error rather than a trap report.
func TestEngineFailure(t *testing.T) {
	prog := compileSIR(t, `locus L { on start { } } main { spawn L; }`)
	res, err := Run(context.Background(), prog, Options{
		engine: func(h vm.Host) (Engine, error) { return failingEngine{}, nil },
	})
	if err == nil || !strings.Contains(err.Error(), "the guest crashed") || res.Verdict != VerdictError {
		t.Fatalf("run: %v %+v", err, res)
	}
}

// TestNothingToDo checks programs that are quiescent at once.
func TestNothingToDo(t *testing.T) {
	for _, src := range []string{
		`main { }`,
		`locus L { on start { } } main { spawn L; }`,
		`topic Line { text: string } main { bind stdin to Line; }`,
	} {
		prog := compileSIR(t, src)
		o := runFake(t, prog, behaviour{}, Options{Stdin: strings.NewReader("a\nb\n")})
		if o.err != nil || o.res.Verdict != VerdictQuiescent || o.res.Code != 0 {
			t.Errorf("%s: %v %+v", src, o.err, o.res)
		}
	}
}

// TestRunRejectsBadInput checks the errors of a run that cannot start.
func TestRunRejectsBadInput(t *testing.T) {
	prog := compileSIR(t, `locus L { on start { } } main { spawn L; }`)
	if _, err := Run(context.Background(), nil, Options{}); err == nil {
		t.Error("no program: no error")
	}
	bad := *prog // instances that no consumer runs
	bad.Instances = append(bad.Instances, bad.Instances...)
	if _, err := Run(context.Background(), &bad, Options{}); err == nil || !strings.Contains(err.Error(), "does not list instance") {
		t.Errorf("inconsistent image: %v", err)
	}
	_, err := Run(context.Background(), prog, Options{
		engine: func(vm.Host) (Engine, error) { return nil, errors.New("no engine today") },
	})
	if err == nil || !strings.Contains(err.Error(), "no engine today") {
		t.Errorf("engine failure: %v", err)
	}
}

// TestLineReader checks the splitting of stdin into lines.
func TestLineReader(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n", []string{""}},
		{"a", []string{"a"}},
		{"a\nb\n", []string{"a", "b"}},
		{"a\r\nb\r\n\r\n", []string{"a", "b", ""}},
		{"a\rb\n", []string{"a\rb"}},
		{"x\n\ny", []string{"x", "", "y"}},
		{"last\r", []string{"last"}},
	} {
		in := LineReader(strings.NewReader(tc.in))
		var got []string
		for {
			line, err := in.Line()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, line)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
	in := RecordedLines([]string{"r1", "r2"})
	a, _ := in.Line()
	b, _ := in.Line()
	_, err := in.Line()
	if a != "r1" || b != "r2" || err != io.EOF {
		t.Errorf("recorded: %q %q %v", a, b, err)
	}
}

// TestInputReplacesStdin checks that Options.Input feeds the ingress.
func TestInputReplacesStdin(t *testing.T) {
	sc := scenarios[5]
	if sc.name != "stdin ingress" {
		t.Fatal("scenario table changed")
	}
	prog := compileSIR(t, sc.src)
	o := runFake(t, prog, sc.fake, Options{Stdin: strings.NewReader("ignored\n"), Input: RecordedLines([]string{"r1", "", "r3"})})
	if o.err != nil || o.stdout != "[r1]\n[]\n[r3]\n" {
		t.Fatalf("run: %v stdout %q", o.err, o.stdout)
	}
}

// TestIngressFlowControl checks that a live stdin reader does not run
// far ahead of the program: the outstanding deliveries stay bounded.
func TestIngressFlowControl(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 200,000 lines")
	}
	prog := compileSIR(t, `
topic Line { text: string }
locus Echo { on Line(l) { } }
main { spawn Echo; bind stdin to Line; }
`)
	var most int64
	b := behaviour{
		"Echo.on Line": func(x *call) error {
			if n := x.e.host.(*consumer).r.outstanding.Load(); n > most {
				most = n
			}
			return nil
		},
	}
	const lines = 200_000
	o := runFake(t, prog, b, Options{Stdin: strings.NewReader(strings.Repeat("line\n", lines))})
	if o.err != nil || o.res.Handled[0] != lines {
		t.Fatalf("run: %v %+v", o.err, o.res)
	}
	if most > inputHigh+2 {
		t.Errorf("%d deliveries outstanding, want at most %d", most, inputHigh+2)
	}
}

// TestCancelEndlessHandler cancels a run whose handler never returns: the
// interpreter polls the host between slices of steps, so the run ends,
// canceled, on both engines. The cancel comes once the handler is
// spinning (after its eprintln, which is written at once): a call after
// the cancel would not run.
func TestCancelEndlessHandler(t *testing.T) {
	img := compileAll(t, `
locus M { on start { std::io::eprintln("spinning"); var i = 0; while true { i += 1; } } }
main { spawn M; }
`)
	for _, kind := range []EngineKind{EngineNative, EngineWasm} {
		t.Run(kind.String(), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			var mu sync.Mutex
			var out strings.Builder
			stderr := writerFunc(func(b []byte) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				time.AfterFunc(100*time.Millisecond, cancel)
				return out.Write(b)
			})
			res, err := Run(ctx, img, Options{Engine: kind, Stderr: stderr})
			if !errors.Is(err, context.Canceled) || res.Verdict != VerdictCanceled || res.Code != ExitCanceled {
				t.Fatalf("run: %v %+v", err, res)
			}
			mu.Lock()
			defer mu.Unlock()
			if out.String() != "spinning\n" {
				t.Errorf("stderr %q", out.String())
			}
		})
	}
}

// writerFunc is an io.Writer made of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestCancelDuringStartUp cancels a run while a state initialiser sleeps:
// the run ends canceled without initialising the rest or running any
// handler.
func TestCancelDuringStartUp(t *testing.T) {
	img := compileAll(t, `
fn nap() -> int { std::time::sleep_ms(5000); return 1; }
locus L { var x: int = nap(); on start { print("started"); } }
main { spawn L as first; spawn L as other; }
`)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	var out strings.Builder
	start := time.Now()
	res, err := Run(ctx, img, Options{Engine: EngineNative, Stdout: &out})
	if !errors.Is(err, context.Canceled) || res.Verdict != VerdictCanceled || res.Code != ExitCanceled {
		t.Fatalf("run: %v %+v", err, res)
	}
	if out.String() != "" || time.Since(start) > 3*time.Second {
		t.Errorf("stdout %q after %v", out.String(), time.Since(start))
	}
}
