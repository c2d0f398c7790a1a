package artifact

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// step is one entry of a run being built; build numbers the seqs.
type step struct {
	c uint32
	b Body
}

// testConsumers is the consumer table of the runs built here.
func testConsumers() []Consumer {
	return []Consumer{
		{ID: 0, Kind: ConsumerMain, Name: "main", Instances: []string{"Main"}},
		{ID: 1, Kind: ConsumerPool, Name: "workers", Instances: []string{"Worker#0", "Worker#1"}},
		{ID: 2, Kind: ConsumerPinned, Name: "Ledger", Instances: []string{"Ledger"}},
		{ID: 3, Kind: ConsumerIngress, Name: "stdin", Instances: []string{"Stdin"}},
	}
}

// build makes an artifact of steps, numbering each consumer's entries.
func build(steps []step) *Artifact {
	a := &Artifact{
		Version: FormatVersion,
		Header: Header{HaleVersion: "0.1.0", Created: 1, EnvPolicy: EnvWithheld,
			Files: []string{"app.hl"}, Consumers: testConsumers()},
		Trailer:  Trailer{Verdict: VerdictQuiescent},
		Complete: true,
	}
	seq := map[uint32]uint64{}
	for _, s := range steps {
		a.Entries = append(a.Entries, Entry{Consumer: s.c, Seq: seq[s.c], Body: s.b})
		seq[s.c]++
	}
	return a
}

// Bodies. Canonical bytes in these tests are JSON text, which jsonValues
// decodes.
func start(target string) Delivery { return Delivery{Target: target, Start: true} }
func deliver(target string, p uint32, s uint64, topic string) Delivery {
	return Delivery{Target: target, Message: MessageID{p, s}, Topic: topic}
}
func call(prim, args, result string) Invocation {
	return Invocation{Primitive: prim, Args: []byte(args), Outcome: OK, Result: []byte(result)}
}
func withheld(prim, args string, n uint64) Invocation {
	return Invocation{Primitive: prim, Args: []byte(args), Outcome: Withheld, Length: n}
}
func failed(prim, args, msg string) Invocation {
	return Invocation{Primitive: prim, Args: []byte(args), Outcome: Trapped, Message: msg}
}
func pub(topic string, p uint32, s uint64, payload string) Publish {
	return Publish{Topic: topic, Message: MessageID{p, s}, Payload: []byte(payload)}
}
func delayed(x Publish, ms uint64) Publish { x.DelayMS = ms; return x }
func printed(text string) Output {
	args, _ := json.Marshal([]string{text})
	return Output{Channel: ChannelStdout, Primitive: "std::io::println", Args: args, Outcome: OK, Result: []byte(text + "\n")}
}
func trapAt(msg, pos, in string) Trap {
	return Trap{Message: msg, Position: pos, Stack: []string{"at " + pos + " in " + in}}
}

func jsonValues(field, hint string, data []byte) (any, bool) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, false
	}
	return v, true
}

// base is a small recorded run: Main starts, reads the clock and a
// withheld variable and publishes two jobs; the workers handle them;
// the Ledger handles an ingress line and publishes a total, which Main
// prints.
func base() []step {
	return []step{
		/* 0 */ {0, start("Main")},
		/* 1 */ {0, call("std::time::now_ms", "", "17")},
		/* 2 */ {0, withheld("std::env::get", `["HIDDEN_SECRET"]`, 11)},
		/* 3 */ {0, pub("Job", 0, 0, `{"n":1}`)},
		/* 4 */ {0, pub("Job", 0, 1, `{"n":2}`)},
		/* 5 */ {3, pub("Line", 3, 0, `"hello"`)},
		/* 6 */ {1, deliver("Worker#0", 0, 0, "Job")},
		/* 7 */ {1, call("std::rand::next_int", "[10]", "3")},
		/* 8 */ {1, printed("working")},
		/* 9 */ {2, deliver("Ledger", 3, 0, "Line")},
		/* 10 */ {1, deliver("Worker#1", 0, 1, "Job")},
		/* 11 */ {1, call("std::rand::next_int", "[10]", "7")},
		/* 12 */ {2, pub("Total", 2, 0, `{"sum":3}`)},
		/* 13 */ {0, deliver("Main", 2, 0, "Total")},
		/* 14 */ {0, printed("total 3")},
	}
}

// Edits of a run.
func replace(i int, s step) func([]step) []step {
	return func(ss []step) []step { ss[i] = s; return ss }
}
func remove(i, j int) func([]step) []step {
	return func(ss []step) []step { return slices.Delete(ss, i, j) }
}
func insert(i int, s ...step) func([]step) []step {
	return func(ss []step) []step { return slices.Insert(ss, i, s...) }
}
func edits(fs ...func([]step) []step) func([]step) []step {
	return func(ss []step) []step {
		for _, f := range fs {
			ss = f(ss)
		}
		return ss
	}
}

// journalMissRun is consumer 0 handling three deliveries, the third
// making four calls; the replay's fourth call is another primitive,
// which the replayer refused with a trap.
func journalMissRun(replay bool) []step {
	ss := []step{
		{3, pub("Line", 3, 0, `"a"`)},
		{3, pub("Line", 3, 1, `"b"`)},
		{0, start("Main")},
		{0, deliver("Main", 3, 0, "Line")},
		{0, deliver("Main", 3, 1, "Line")},
		{0, call("std::time::now_ms", "", "1")},
		{0, call("std::time::now_ms", "", "2")},
		{0, call("std::time::now_ms", "", "3")},
	}
	if !replay {
		return append(ss, step{0, call("std::time::now_ms", "", "4")})
	}
	return append(ss,
		step{0, failed("std::rand::next_int", "[10]", "replay: journal miss: std::rand::next_int(10) where the recording has std::time::now_ms()")},
		step{0, trapAt("replay: journal miss: std::rand::next_int(10) where the recording has std::time::now_ms()", "app.hl:9:13", "Main.on Line")})
}

// ledgerRun is the example of the spec: consumer 2's delivery #41 is
// message 3:20 in the recording and 1:21, which came second, in the
// replay.
func ledgerRun(replay bool) []step {
	var ss []step
	for k := range 41 {
		p := uint32(1)
		if k%2 == 1 {
			p = 3
		}
		ss = append(ss, step{2, deliver("Ledger", p, uint64(k/2), "OrderPlaced")})
	}
	a, b := step{2, deliver("Ledger", 3, 20, "OrderPlaced")}, step{2, deliver("Ledger", 1, 21, "OrderPlaced")}
	if replay {
		a, b = b, a
	}
	return append(ss, a, b)
}

func TestDiffKinds(t *testing.T) {
	tests := []struct {
		name     string
		rec, rep []step
		recEdit  func([]step) []step
		repEdit  func([]step) []step
		repEnd   *Trailer // the replay's trailer, when not the recording's
		hex      bool     // no value decoder
		kind     DivergenceKind
		at       string
		sentence string
		position string
		counts   [3]int // journal misses, unconsumed, unexpected
	}{
		{name: "journal miss, the example of the brief", rec: journalMissRun(false), rep: journalMissRun(true),
			repEnd: &Trailer{Verdict: VerdictTrap, ExitCode: 1},
			kind:   JournalMiss, at: "0:2",
			sentence: "consumer 0: call #3 in delivery #2 was std::time::now_ms() in the recording, but std::rand::next_int(10) in the replay",
			position: "app.hl:9:13 in Main.on Line", counts: [3]int{1, 0, 0}},
		{name: "journal miss on arguments", repEdit: replace(11, step{1, call("std::rand::next_int", "[20]", "7")}),
			kind: JournalMiss, at: "1:1",
			sentence: "consumer 1: call #0 in delivery #1 was std::rand::next_int(10) in the recording, but std::rand::next_int(20) in the replay",
			counts:   [3]int{1, 0, 0}},
		{name: "changed result", repEdit: replace(1, step{0, call("std::time::now_ms", "", "18")}),
			kind: ChangedResult, at: "0:0",
			sentence: "consumer 0: call #0 in delivery #0, std::time::now_ms(), returned 17 in the recording, but 18 in the replay"},
		{name: "changed result in hex", hex: true, repEdit: replace(1, step{0, call("std::time::now_ms", "", "18")}),
			kind: ChangedResult, at: "0:0",
			sentence: "consumer 0: call #0 in delivery #0, std::time::now_ms(), returned 0x3137 in the recording, but 0x3138 in the replay"},
		{name: "changed redaction", repEdit: replace(2, step{0, call("std::env::get", `["HIDDEN_SECRET"]`, `"s3cr3t-v4lue"`)}),
			kind: ChangedResult, at: "0:0",
			sentence: `consumer 0: call #1 in delivery #0, std::env::get("HIDDEN_SECRET"), returned a withheld value (11 bytes) in the recording, but returned "s3cr3t-v4lue" in the replay`},
		{name: "changed withheld length", repEdit: replace(2, step{0, withheld("std::env::get", `["HIDDEN_SECRET"]`, 1)}),
			kind: ChangedResult, at: "0:0",
			sentence: `consumer 0: call #1 in delivery #0, std::env::get("HIDDEN_SECRET"), returned a withheld value (11 bytes) in the recording, but a withheld value (1 byte) in the replay`},
		{name: "missing input", repEdit: edits(
			replace(2, step{0, failed("std::env::get", `["HIDDEN_SECRET"]`, "replay: missing input HIDDEN_SECRET")}),
			insert(3, step{0, trapAt("replay: missing input HIDDEN_SECRET", "app.hl:4:9", "Main.on start")})),
			kind: MissingInput, at: "0:0",
			sentence: `consumer 0: call #1 in delivery #0, std::env::get("HIDDEN_SECRET"), returned a withheld value (11 bytes) in the recording, but trapped with "replay: missing input HIDDEN_SECRET" in the replay`,
			position: "app.hl:4:9 in Main.on start"},
		{name: "unused input", repEdit: remove(7, 8),
			kind: UnusedInput, at: "1:0",
			sentence: `consumer 1: in delivery #0, the recording had call #0 std::rand::next_int(10) -> 3, but the replay had output #0 std::io::println("working") on stdout -> "working\n"`,
			counts:   [3]int{0, 1, 0}},
		{name: "unused input at the end", repEdit: remove(11, 12),
			kind: UnusedInput, at: "1:1",
			sentence: "consumer 1: in delivery #1, the recording had call #0 std::rand::next_int(10) -> 7, but the replay had nothing more",
			counts:   [3]int{0, 1, 0}},
		{name: "input past the journal", repEdit: insert(9, step{1, call("std::time::now_ms", "", "5")}),
			kind: InputPastJournal, at: "1:0",
			sentence: "consumer 1: in delivery #0, the recording had delivery #1 (target Worker#1, message 0:1), but the replay had call #1 std::time::now_ms() -> 5",
			// The replayer's journal is per consumer: it would have compared
			// the call with the next recorded one, of delivery #1.
			counts: [3]int{1, 0, 0}},
		{name: "input past the end", repEdit: insert(15, step{0, call("std::time::now_ms", "", "5")}),
			kind: InputPastJournal, at: "0:1",
			sentence: "consumer 0: in delivery #1, the recording had nothing more, but the replay had call #0 std::time::now_ms() -> 5"},
		{name: "extra publish", repEdit: insert(13, step{2, pub("Total", 2, 1, `{"sum":4}`)}),
			kind: ExtraPublish, at: "2:0",
			sentence: `consumer 2: in delivery #0, the recording had nothing more, but the replay had publish #1 (topic Total, message 2:1, payload {"sum":4})`},
		{name: "publish on another topic", repEdit: replace(12, step{2, pub("Sum", 2, 0, `{"sum":3}`)}),
			kind: ExtraPublish, at: "2:0",
			sentence: "consumer 2: publish #0 in delivery #0 was (topic Total, message 2:0) in the recording, but (topic Sum, message 2:0) in the replay"},
		{name: "missing publish", repEdit: remove(4, 5),
			kind: MissingPublish, at: "0:0",
			sentence: `consumer 0: in delivery #0, the recording had publish #1 (topic Job, message 0:1, payload {"n":2}), but the replay had delivery #1 (target Main, message 2:0)`},
		{name: "changed payload", repEdit: replace(3, step{0, pub("Job", 0, 0, `{"n":9}`)}),
			kind: ChangedPayload, at: "0:0",
			sentence: `consumer 0: publish #0 in delivery #0 (topic Job, message 0:0) had payload {"n":1} in the recording, but {"n":9} in the replay`},
		{name: "changed delay", recEdit: replace(3, step{0, delayed(pub("Job", 0, 0, `{"n":1}`), 20)}),
			repEdit: replace(3, step{0, delayed(pub("Job", 0, 0, `{"n":1}`), 30)}),
			kind:    ChangedPayload, at: "0:0",
			sentence: `consumer 0: publish #0 in delivery #0 (topic Job, message 0:0) had delay_ms 20 in the recording, but 30 in the replay`},
		{name: "missing delivery", repEdit: remove(13, 15),
			kind: MissingDelivery, at: "0:1",
			sentence: "consumer 0: the recording had delivery #1 (target Main, message 2:0), but the replay had nothing more"},
		{name: "missing delivery, another delivered instead", repEdit: replace(13, step{0, deliver("Main", 3, 5, "Line")}),
			kind: MissingDelivery, at: "0:1",
			sentence: "consumer 0: delivery #1 was (target Main, message 2:0) in the recording, but (target Main, message 3:5) in the replay",
			counts:   [3]int{0, 0, 1}},
		{name: "unexpected delivery", repEdit: insert(13, step{0, deliver("Main", 3, 5, "Line")}),
			kind: UnexpectedDelivery, at: "0:1",
			sentence: "consumer 0: delivery #1 was (target Main, message 2:0) in the recording, but (target Main, message 3:5) in the replay",
			counts:   [3]int{0, 0, 1}},
		{name: "unexpected delivery at the end", repEdit: insert(15, step{0, deliver("Main", 3, 5, "Line")}),
			kind: UnexpectedDelivery, at: "0:2",
			sentence: "consumer 0: the recording had nothing more, but the replay had delivery #2 (target Main, message 3:5)",
			counts:   [3]int{0, 0, 1}},
		{name: "unexpected start", repEdit: insert(9, step{2, start("Ledger")}),
			kind: UnexpectedDelivery, at: "2:0",
			sentence: "consumer 2: delivery #0 was (target Ledger, message 3:0) in the recording, but (target Ledger, message start) in the replay",
			counts:   [3]int{0, 0, 1}},
		{name: "delivery on another topic", repEdit: replace(9, step{2, deliver("Ledger", 3, 0, "Word")}),
			kind: MissingDelivery, at: "2:0",
			sentence: "consumer 2: delivery #0 was (target Ledger, message 3:0, topic Line) in the recording, but (target Ledger, message 3:0, topic Word) in the replay",
			counts:   [3]int{0, 0, 1}},
		{name: "reordered delivery, the example of the spec", rec: ledgerRun(false), rep: ledgerRun(true),
			kind: ReorderedDelivery, at: "2:41",
			sentence: "consumer 2: delivery #41 was (target Ledger, message 3:20) in the recording, but (target Ledger, message 1:21) in the replay"},
		{name: "reordered worker deliveries", repEdit: func(ss []step) []step {
			w0, w1 := slices.Clone(ss[6:9]), []step{ss[10], ss[11]}
			ss = slices.Delete(ss, 10, 12)
			ss = slices.Delete(ss, 6, 9)
			ss = slices.Insert(ss, 6, w1...)
			return slices.Insert(ss, 8, w0...)
		}, kind: ReorderedDelivery, at: "1:0",
			sentence: "consumer 1: delivery #0 was (target Worker#0, message 0:0) in the recording, but (target Worker#1, message 0:1) in the replay"},
		{name: "changed output", repEdit: replace(14, step{0, printed("total 4")}),
			kind: ChangedOutput, at: "0:1",
			sentence: `consumer 0: output #0 in delivery #1 was std::io::println("total 3") on stdout -> "total 3\n" in the recording, but std::io::println("total 4") on stdout -> "total 4\n" in the replay`},
		{name: "missing output", repEdit: remove(14, 15),
			kind: ChangedOutput, at: "0:1",
			sentence: `consumer 0: in delivery #1, the recording had output #0 std::io::println("total 3") on stdout -> "total 3\n", but the replay had nothing more`},
		{name: "changed fs.write", recEdit: insert(15, step{0, Output{Channel: ChannelFSWrite, Primitive: "std::fs::write", Args: []byte(`["out.txt","3"]`), Outcome: OK, Result: []byte("null")}}),
			repEdit: insert(15, step{0, Output{Channel: ChannelFSWrite, Primitive: "std::fs::write", Args: []byte(`["out.txt","4"]`), Outcome: Trapped, Message: "disk full"}}),
			kind:    ChangedOutput, at: "0:1",
			sentence: `consumer 0: output #1 in delivery #1 was std::fs::write("out.txt", "3") on fs.write -> null in the recording, but std::fs::write("out.txt", "4") on fs.write -> trap "disk full" in the replay`},
		{name: "changed trap", recEdit: insert(13, step{2, trapAt("division by zero", "app.hl:17:16", "Ledger.on Line")}),
			repEdit: insert(13, step{2, trapAt("index out of range", "app.hl:18:3", "Ledger.on Line")}),
			kind:    ChangedTrap, at: "2:0",
			sentence: `consumer 2: the trap in delivery #0 was "division by zero" at app.hl:17:16 in the recording, but "index out of range" at app.hl:18:3 in the replay`,
			position: "app.hl:18:3 in Ledger.on Line"},
		{name: "missing trap", recEdit: insert(13, step{2, trapAt("division by zero", "app.hl:17:16", "Ledger.on Line")}),
			kind: ChangedTrap, at: "2:0",
			sentence: `consumer 2: in delivery #0, the recording had trap "division by zero" at app.hl:17:16, but the replay had nothing more`},
		{name: "trap instead of a publish", repEdit: replace(12, step{2, trapAt("division by zero", "app.hl:17:16", "Ledger.on Line")}),
			kind: ChangedTrap, at: "2:0",
			sentence: `consumer 2: in delivery #0, the recording had publish #0 (topic Total, message 2:0, payload {"sum":3}), but the replay had trap "division by zero" at app.hl:17:16`,
			position: "app.hl:17:16 in Ledger.on Line"},
		{name: "changed exit", recEdit: insert(15, step{0, Exit{Code: 3, Position: "app.hl:20:5"}}),
			repEdit: insert(15, step{0, Exit{Code: 4, Position: "app.hl:20:5"}}),
			kind:    ChangedExit, at: "0:1",
			sentence: "consumer 0: the exit in delivery #1 had code 3 in the recording, but code 4 in the replay"},
		{name: "exit instead of an output", repEdit: replace(14, step{0, Exit{Code: 0}}),
			kind: ChangedExit, at: "0:1",
			sentence: `consumer 0: in delivery #1, the recording had output #0 std::io::println("total 3") on stdout -> "total 3\n", but the replay had exit with code 0`},
		{name: "divergence in start-up",
			recEdit: insert(0, step{0, call("std::time::now_ms", "", "1")}),
			repEdit: insert(0, step{0, call("std::time::now_ms", "", "2")}),
			kind:    ChangedResult, at: "0:0",
			sentence: "consumer 0: call #0 before delivery #0, std::time::now_ms(), returned 1 in the recording, but 2 in the replay"},
		{name: "long values shown whole where they differ",
			recEdit: replace(3, step{0, pub("Job", 0, 0, `"`+strings.Repeat("a", 80)+`b"`)}),
			repEdit: replace(3, step{0, pub("Job", 0, 0, `"`+strings.Repeat("a", 80)+`c"`)}),
			kind:    ChangedPayload, at: "0:0",
			sentence: `consumer 0: publish #0 in delivery #0 (topic Job, message 0:0) had payload "` + strings.Repeat("a", 80) +
				`b" in the recording, but "` + strings.Repeat("a", 80) + `c" in the replay`},
		{name: "long values cut where they differ early",
			recEdit: replace(3, step{0, pub("Job", 0, 0, `"b`+strings.Repeat("a", 80)+`"`)}),
			repEdit: replace(3, step{0, pub("Job", 0, 0, `"c`+strings.Repeat("a", 80)+`"`)}),
			kind:    ChangedPayload, at: "0:0",
			sentence: `consumer 0: publish #0 in delivery #0 (topic Job, message 0:0) had payload "b` + strings.Repeat("a", 62) +
				`… in the recording, but "c` + strings.Repeat("a", 62) + `… in the replay`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, rep := tt.rec, tt.rep
			if rec == nil {
				rec, rep = base(), base()
			}
			if tt.recEdit != nil {
				rec = tt.recEdit(rec)
			}
			if tt.repEdit != nil {
				rep = tt.repEdit(rep)
			}
			ra, pa := build(rec), build(rep)
			if tt.repEnd != nil {
				pa.Trailer = *tt.repEnd
			}
			df := Differ{Decode: jsonValues}
			if tt.hex {
				df.Decode = nil
			}
			r := df.Diff(ra, pa)
			d := r.First()
			if d == nil || !r.Diverged() || r.Verdict != ReportDiverged {
				t.Fatalf("no divergence: %+v", r)
			}
			// Indexed artifacts, as hale replay --diff compares them, give
			// the same report.
			if ix := df.Diff(indexed(t, ra), indexed(t, pa)); !reflect.DeepEqual(ix, r) {
				t.Errorf("indexed artifacts: %+v\ndecoded ones: %+v", ix, r)
			}
			if d.Kind != tt.kind || d.At.String() != tt.at {
				t.Errorf("got %s at %s, want %s at %s", d.Kind, d.At, tt.kind, tt.at)
			}
			if d.Sentence != tt.sentence {
				t.Errorf("sentence:\n got %s\nwant %s", d.Sentence, tt.sentence)
			}
			if d.Position != tt.position {
				t.Errorf("position %q, want %q", d.Position, tt.position)
			}
			if got := [3]int{r.JournalMisses, r.Unconsumed, r.Unexpected}; got != tt.counts {
				t.Errorf("journal misses, unconsumed, unexpected: got %v, want %v", got, tt.counts)
			}
			var text bytes.Buffer
			if err := r.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			want := "replay DIVERGED at " + tt.at + ":\n" + tt.sentence + "\n"
			if tt.position != "" {
				want += "  at " + tt.position + "\n"
			}
			if text.String() != want {
				t.Errorf("text:\n got %q\nwant %q", text.String(), want)
			}

			// The JSON view carries the same divergence.
			var j struct {
				Verdict string
				First   *struct {
					Coordinate         string
					Consumer           uint32
					Index              uint64
					Kind               DivergenceKind
					Recorded, Replayed *string
				} `json:"first_divergence"`
			}
			var buf bytes.Buffer
			if err := r.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(buf.Bytes(), &j); err != nil {
				t.Fatal(err)
			}
			if j.Verdict != "diverged" || j.First == nil {
				t.Fatalf("json: %s", &buf)
			}
			if at := (Coordinate{j.First.Consumer, j.First.Index}); j.First.Coordinate != tt.at || at.String() != tt.at || j.First.Kind != tt.kind {
				t.Errorf("json: %s", &buf)
			}
			if (j.First.Recorded == nil) != (d.RecordedEntry < 0) || (j.First.Replayed == nil) != (d.ReplayedEntry < 0) {
				t.Errorf("json recorded/replayed presence: %s", &buf)
			}

			// Swapping the artifacts still diverges at the same coordinate:
			// the comparison runs in both directions.
			back := df.Diff(pa, ra)
			if b := back.First(); b == nil || (b.At != d.At && !b.End) {
				t.Errorf("reverse diff: %+v", b)
			}
		})
	}
}

func TestDiffIdentical(t *testing.T) {
	rec := build(base())

	// The replay's entries interleave differently across consumers,
	// its header differs in what Diff does not compare, and it went
	// through the bytes.
	steps := base()
	slices.SortStableFunc(steps, func(a, b step) int { return int(b.c) - int(a.c) })
	rep := build(steps)
	rep.Header.Created = 99
	rep.Header.EnvPolicy = EnvFull
	rep.Header.BuildDigest[0] = 1
	rep.Entries = append(rep.Entries, Entry{Consumer: 2, Seq: 2, Body: Unknown{Code: 42, Data: []byte{1}}})
	dec, err := Decode(mustEncode(t, rep))
	if err != nil {
		t.Fatal(err)
	}
	if slices.EqualFunc(rec.Entries, dec.Entries[:len(rec.Entries)], func(a, b Entry) bool { return a.Consumer == b.Consumer }) {
		t.Fatal("the test needs a different interleaving")
	}

	r := Differ{Decode: jsonValues}.Diff(rec, dec)
	if r.Diverged() || r.Verdict != ReportIdentical || r.First() != nil {
		t.Fatalf("diverged: %+v", r.First())
	}
	var text, js bytes.Buffer
	r.OrderTimeouts = 0
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if want := "replay OK: 3 consumers, 5 deliveries, 4 journal calls, 0 divergences\n"; text.String() != want {
		t.Errorf("text %q, want %q", text.String(), want)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	want := `{"verdict":"identical","consumers":3,"deliveries":5,"journal_calls":4,"journal_misses":0,"order_timeouts":0,` +
		`"unconsumed":0,"unexpected":0,"first_divergence":null}` + "\n"
	if js.String() != want {
		t.Errorf("json:\n got %s\nwant %s", js.String(), want)
	}

	// A recorded trap reproduced at the same point is identical too.
	trapped := append(base(), step{2, trapAt("division by zero", "app.hl:17:16", "Ledger.on Line")})
	a, b := build(trapped), build(trapped)
	a.Trailer = Trailer{Verdict: VerdictTrap, ExitCode: 1}
	b.Trailer = a.Trailer
	if r := diff(a, b); r.Diverged() {
		t.Errorf("reproduced trap diverged: %s", r.First().Sentence)
	}

	// Singular counts.
	one := build([]step{{0, start("Main")}, {0, call("std::time::now_ms", "", "1")}})
	one.Header.Consumers = testConsumers()[:1]
	text.Reset()
	if err := diff(one, one).WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if want := "replay OK: 1 consumers, 1 deliveries, 1 journal calls, 0 divergences\n"; text.String() != want {
		t.Errorf("text %q, want %q", text.String(), want)
	}
}

// TestDiffSpecExample checks the complete text and JSON of the example
// in the replay contract, with the position and the order timeout that
// the CLI and the replayer supply.
func TestDiffSpecExample(t *testing.T) {
	rec, rep := build(ledgerRun(false)), build(ledgerRun(true))
	r := diff(rec, rep)
	d := r.First()
	if d == nil {
		t.Fatal("no divergence")
	}
	if d.Handler == nil || d.Handler.Target != "Ledger" || d.Handler.Topic != "OrderPlaced" || d.Handler.Message != (MessageID{1, 21}) {
		t.Errorf("handler %+v", d.Handler)
	}
	if d.RecordedEntry != 41 || d.ReplayedEntry != 41 {
		t.Errorf("entries %d, %d", d.RecordedEntry, d.ReplayedEntry)
	}
	d.Position = "app.hl:31:9 in Ledger.on OrderPlaced"
	r.OrderTimeouts = 1
	var text, js bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := "replay DIVERGED at 2:41:\n" +
		"consumer 2: delivery #41 was (target Ledger, message 3:20) in the recording, but (target Ledger, message 1:21) in the replay\n" +
		"  at app.hl:31:9 in Ledger.on OrderPlaced\n"
	if text.String() != want {
		t.Errorf("text:\n got %s\nwant %s", text.String(), want)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"verdict":"diverged","consumers":3,"deliveries":43,"journal_calls":0,"journal_misses":0,"order_timeouts":1,` +
		`"unconsumed":0,"unexpected":0,"first_divergence":{"coordinate":"2:41","consumer":2,"index":41,` +
		`"kind":"reordered_delivery","recorded":"delivery #41 (target Ledger, message 3:20)",` +
		`"replayed":"delivery #41 (target Ledger, message 1:21)","position":"app.hl:31:9 in Ledger.on OrderPlaced"}}` + "\n"
	if js.String() != wantJSON {
		t.Errorf("json:\n got %s\nwant %s", js.String(), wantJSON)
	}
}

func TestDiffJSONOneSideAbsent(t *testing.T) {
	rep := base()
	rep = remove(13, 15)(rep)
	r := Differ{Decode: jsonValues}.Diff(build(base()), build(rep))
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	want := `{"verdict":"diverged","consumers":3,"deliveries":4,"journal_calls":4,"journal_misses":0,"order_timeouts":0,` +
		`"unconsumed":0,"unexpected":0,"first_divergence":{"coordinate":"0:1","consumer":0,"index":1,` +
		`"kind":"missing_delivery","recorded":"delivery #1 (target Main, message 2:0)","replayed":null,"position":null}}` + "\n"
	if js.String() != want {
		t.Errorf("json:\n got %s\nwant %s", js.String(), want)
	}
}

func TestDiffVerdict(t *testing.T) {
	rec, rep := build(base()), build(base())
	rep.Trailer = Trailer{Verdict: "canceled", ExitCode: 130}
	r := diff(rec, rep)
	d := r.First()
	if d == nil || d.Kind != ChangedVerdict || !d.End || len(r.Divergences) != 1 {
		t.Fatalf("got %+v", r.Divergences)
	}
	var text, js bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := "replay DIVERGED at the end of the run:\n" +
		"the run ended with verdict quiescent (exit code 0) in the recording, but verdict canceled (exit code 130) in the replay\n"
	if text.String() != want {
		t.Errorf("text:\n got %s\nwant %s", text.String(), want)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"verdict":"diverged","consumers":3,"deliveries":5,"journal_calls":4,"journal_misses":0,"order_timeouts":0,` +
		`"unconsumed":0,"unexpected":0,"first_divergence":{"coordinate":null,"consumer":null,"index":null,"kind":"verdict",` +
		`"recorded":"verdict quiescent (exit code 0)","replayed":"verdict canceled (exit code 130)","position":null}}` + "\n"
	if js.String() != wantJSON {
		t.Errorf("json:\n got %s\nwant %s", js.String(), wantJSON)
	}

	// The exit code alone counts too; an entry divergence comes first.
	rep = build(replace(1, step{0, call("std::time::now_ms", "", "18")})(base()))
	rep.Trailer.ExitCode = 1
	r = diff(rec, rep)
	if len(r.Divergences) != 2 || r.First().Kind != ChangedResult || r.Divergences[1].Kind != ChangedVerdict {
		t.Errorf("got %+v", r.Divergences)
	}
}

// TestDiffFirstRule checks which consumer's divergence comes first.
func TestDiffFirstRule(t *testing.T) {
	kinds := func(r *Report) []string {
		var out []string
		for _, d := range r.Divergences {
			out = append(out, d.At.String()+" "+string(d.Kind))
		}
		return out
	}
	tests := []struct {
		name     string
		rec, rep []step
		want     []string
	}{
		{"earliest in the replay's file order",
			base(),
			edits(replace(14, step{0, printed("total 4")}), replace(7, step{1, call("std::rand::next_int", "[10]", "4")}))(base()),
			[]string{"1:0 changed_result", "0:1 changed_output"}},
		{"missing entries are placed by the recording's order",
			base(),
			edits(replace(14, step{0, printed("total 4")}), remove(11, 12))(base()),
			// consumer 1's missing call is recorded entry 11, before the
			// replay's entry 13, the changed output.
			[]string{"1:1 unused_input", "0:1 changed_output"}},
		{"an earlier replayed entry wins over a later missing one",
			base(),
			edits(replace(1, step{0, call("std::time::now_ms", "", "18")}), remove(11, 12))(base()),
			[]string{"0:0 changed_result", "1:1 unused_input"}},
		{"at the same index, the entry the replay has wins",
			[]step{{0, start("Main")}, {1, start("Worker#0")}, {0, call("std::time::now_ms", "", "1")}},
			[]step{{0, start("Main")}, {1, start("Worker#0")}, {1, call("std::time::now_ms", "", "1")}},
			[]string{"1:0 input_past_journal", "0:0 unused_input"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := diff(build(tt.rec), build(tt.rep))
			if got := kinds(r); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDiffNeverPanics(t *testing.T) {
	odd := &Artifact{Entries: []Entry{
		{Consumer: 0, Seq: 0, Body: nil},
		{Consumer: 0, Seq: 1, Body: Unknown{Code: 9}},
		{Consumer: 0, Seq: 1, Body: Exit{Code: 1}},
		{Consumer: 5, Seq: 0, Body: Delivery{Target: "X", Start: true}},
	}}
	for _, pair := range [][2]*Artifact{{nil, nil}, {odd, nil}, {nil, odd}, {odd, odd}, {odd, build(base())}} {
		r := Differ{Decode: func(string, string, []byte) (any, bool) { panic("decoder") }}.Diff(pair[0], pair[1])
		if err := r.WriteText(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
	}
	// A panicking decoder falls back to hex.
	r := Differ{Decode: func(string, string, []byte) (any, bool) { panic("decoder") }}.
		Diff(build(base()), build(replace(1, step{0, call("std::time::now_ms", "", "18")})(base())))
	if !strings.Contains(r.First().Sentence, "returned 0x3137 in the recording") {
		t.Error(r.First().Sentence)
	}
	// Reports built by hand.
	for _, r := range []*Report{{}, {Verdict: ReportDiverged}, {Divergences: []*Divergence{{Kind: JournalMiss}}}} {
		if err := r.WriteText(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzDiff diffs arbitrary artifacts: nothing may panic, an artifact is
// identical to itself, and a divergence always has a sentence.
func FuzzDiff(f *testing.F) {
	a, b := mustEncode(f, build(base())), mustEncode(f, build(replace(3, step{0, pub("Job", 0, 0, "{}")})(base())))
	f.Add(a, b)
	f.Add(a, a[:len(a)/2])
	f.Add(mustEncode(f, sample()), a)
	f.Fuzz(func(t *testing.T, x, y []byte) {
		if a, ad, err := admit(x, Identity{}, true); (a == nil) != (err != nil) || (ad == nil) != (err != nil) {
			t.Fatalf("Admit returned artifact %v, admission %v and error %v", a != nil, ad != nil, err)
		}
		ra, _ := Salvage(x)
		pa, _ := Salvage(y)
		r := Differ{Decode: jsonValues}.Diff(ra, pa)
		for _, d := range r.Divergences {
			if d.Sentence == "" {
				t.Fatalf("divergence %s without a sentence", d.Kind)
			}
		}
		if err := r.WriteText(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if ra != nil {
			if s := diff(ra, ra); s.Diverged() {
				t.Fatalf("an artifact diverged from itself: %s", s.First().Sentence)
			}
		}
		// Indexed artifacts compare as decoded ones do.
		ix, errX := Index(x)
		iy, errY := Index(y)
		if errX == nil && errY == nil {
			if got := (Differ{Decode: jsonValues}).Diff(ix, iy); !reflect.DeepEqual(got, r) {
				t.Fatalf("indexed artifacts: %+v\ndecoded ones: %+v", got, r)
			}
			if s := diff(ix, ix); s.Diverged() {
				t.Fatalf("an indexed artifact diverged from itself: %s", s.First().Sentence)
			}
		}
	})
}

// indexed is a through its encoding, indexed as hale replay reads it.
func indexed(t testing.TB, a *Artifact) *Artifact {
	t.Helper()
	ix, err := Index(mustEncode(t, a))
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// When the replay stopped at a trap the recording did not have, what the
// recording has after the stop (here consumer 0's start, which the stopped
// replay never ran) comes after the divergence that stopped it, even
// though its recorded entry is earlier.
func TestDiffStopBeforeConsequences(t *testing.T) {
	rec := build([]step{
		{0, start("Main")},
		{1, start("Worker#0")},
		{1, call("std::rand::next_int", "[100]", "5")},
	})
	rep := build([]step{
		{1, start("Worker#0")},
		{1, failed("std::rand::next_int", "[50]", "replay: journal miss: consumer 1 call #0")},
		{1, trapAt("replay: journal miss: consumer 1 call #0", "app.hl:3:4", "Worker.on start")},
	})
	rep.Trailer = Trailer{Verdict: VerdictTrap, ExitCode: 3}
	r := diff(rec, rep)
	var got []string
	for _, d := range r.Divergences {
		if !d.End {
			got = append(got, d.At.String())
		}
	}
	if want := []string{"1:0", "0:0"}; !slices.Equal(got, want) {
		t.Errorf("divergences at %q, want %q", got, want)
	}
}

func TestReportPrefer(t *testing.T) {
	a := &Divergence{Kind: JournalMiss, At: Coordinate{2, 0}}
	b := &Divergence{Kind: JournalMiss, At: Coordinate{1, 0}}
	c := &Divergence{Kind: ChangedVerdict, End: true}
	r := &Report{Divergences: []*Divergence{a, b, c}}
	r.Prefer(JournalMiss, Coordinate{1, 0})
	if r.Divergences[0] != b || r.Divergences[1] != a || r.Divergences[2] != c {
		t.Errorf("order %v", r.Divergences)
	}
	r.Prefer(UnusedInput, Coordinate{2, 0}) // no such divergence: nothing moves
	if r.Divergences[0] != b || r.Divergences[1] != a {
		t.Errorf("order %v", r.Divergences)
	}
}

// TestDiffTrapKinds checks that the diff compares a trap's kind: a failed
// call or a trap entry that differs only by kind diverges, and a format 1
// side (no kind) matches any kind.
func TestDiffTrapKinds(t *testing.T) {
	failedAs := func(kind string) step {
		x := failed("std::fs::read_text", `["a.txt"]`, "cannot read")
		x.TrapKind = kind
		return step{1, x}
	}
	trapAs := func(kind string) step {
		x := trapAt("boom", "app.hl:3:4", "Worker.on Job")
		x.TrapKind = kind
		x.At = &Coordinate{1, 1}
		return step{1, x}
	}
	tests := []struct {
		name         string
		rec, rep     step
		kind         DivergenceKind // "" when identical
		sentenceHave string
	}{
		{"call kind changed", failedAs("io"), failedAs("timeout"), ChangedResult, `trapped with io trap "cannot read" in the recording, but with timeout trap "cannot read" in the replay`},
		{"call kind same", failedAs("io"), failedAs("io"), "", ""},
		{"call kind from format 1", failedAs(""), failedAs("io"), "", ""},
		{"trap kind changed", trapAs("arith"), trapAs("panic"), ChangedTrap, `"boom" at app.hl:3:4 of kind arith in the recording, but "boom" at app.hl:3:4 of kind panic`},
		{"trap kind from format 1", trapAs(""), trapAs("panic"), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, rep := replace(11, tt.rec)(base()), replace(11, tt.rep)(base())
			r := Differ{Decode: jsonValues}.Diff(build(rec), build(rep))
			d := r.First()
			if tt.kind == "" {
				if d != nil {
					t.Fatalf("diverged: %+v", d)
				}
				return
			}
			if d == nil || d.Kind != tt.kind {
				t.Fatalf("got %+v, want %s", d, tt.kind)
			}
			if !strings.Contains(d.Sentence, tt.sentenceHave) {
				t.Errorf("sentence %q lacks %q", d.Sentence, tt.sentenceHave)
			}
		})
	}
}
