package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/guest/abi"
	"github.com/hale-lang/hale/vm/internal/tier"
)

// batchJournal is a logJournal that also logs every payload's bytes and
// every poll, in the consumer's order.
type batchJournal struct {
	*logJournal
}

func (j *batchJournal) Publish(c int, msg MessageID, topic int, payload []byte, targets []int) {
	j.logJournal.Publish(c, msg, topic, payload, targets)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.add(c, fmt.Sprintf("payload %x targets %v", payload, targets))
}

func (j *batchJournal) Poll(c int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.add(c, "poll")
	return nil
}

// batchCases publish in every way a handler can around the other
// crossings of the gateway: between prints and primitive calls, past
// abi.BatchFlush bytes in one handler, then trapping or running out of
// budget, with guards, with a timer, around loops that run as the second
// tier's regions (which poll the host), across pinned consumers and at
// start-up. Each consumer's journal is fixed by the program: no consumer
// gets messages from two others, and where a run stops at a trap, every
// instance is on the main bus, so what ran before the stop does not
// depend on timing.
var batchCases = []struct{ name, src string }{
	{"mixed", `
topic A { n: int, s: string }
topic B { x: float, ok: bool }
locus Src {
    on start {
        publish A { n: 1, s: "one" };
        print("after one");
        publish A { n: 2, s: "two" };
        publish B { x: 2.5, ok: true };
        let e = std::os::env("HALE_NOPE", "dflt");
        publish A { n: 3, s: e };
        print("end " + e);
    }
}
locus Sink {
    var total: int = 0;
    on A(a) { total += a.n; print(a.s + " " + str(total)); if a.n == 2 { publish B { x: 0.5, ok: false }; } }
    on B(b) { print("b " + str(b.x)); }
}
locus Mirror { on A(a) { print("mirror " + a.s); } on B(b) { print("mirror b " + str(b.x)); } }
main { spawn Sink; spawn Src; spawn Mirror on pinned; }
`},
	{"large", `
topic A { n: int, s: string }
locus Src {
    on start {
        for i in 0..3000 { publish A { n: i, s: "item of the batch" }; }
        print("sent");
        for i in 3000..3010 { publish A { n: i, s: "tail" }; }
    }
}
locus Sink { var total: int = 0; var c: int = 0; on A(a) { total += a.n; c += 1; if c == 3010 { print(str(total)); } } }
main { spawn Src; spawn Sink as m; spawn Sink as p on pinned; }
`},
	{"trap", `
topic A { n: int }
locus Src {
    on start { publish A { n: 1 }; publish A { n: 2 }; var z = 0; publish A { n: 3 }; print(str(5 / z)); }
}
locus Sink { on A(a) { print("got " + str(a.n)); } }
main { spawn Sink; spawn Src; }
`},
	{"trap-handler", `
topic A { n: int }
locus Src { on start { publish A { n: 4 }; } on A(a) { if a.n > 0 { publish A { n: a.n - 1 }; publish A { n: a.n - 1 }; let q = 10 / (a.n - 1); } } }
main { spawn Src; }
`},
	{"budget", `
topic A { n: int }
@budget(steps: 200)
locus Src { on start { var i = 0; while true { publish A { n: i }; i += 1; } } }
locus Sink { var c: int = 0; on A(a) { c += 1; } }
main { spawn Src; spawn Sink; }
`},
	{"guards", `
topic Token { to: int, hops: int }
locus Node(id: int) {
    on start { if id == 0 { publish Token { to: 1, hops: 0 }; } }
    on Token(t) if t.to == id {
        if t.hops < 50 { publish Token { to: (id + 1) % 5, hops: t.hops + 1 }; } else { print("done at " + str(id)); }
    }
}
main { spawn Node(0) as n0; spawn Node(1) as n1; spawn Node(2) as n2; spawn Node(3) as n3 on pinned; spawn Node(4) as n4; }
`},
	{"timer", `
topic A { n: int }
topic T { n: int }
locus Src {
    on start { publish A { n: 1 }; publish T { n: 7 } after 1; publish A { n: 2 }; }
    on T(t) { publish A { n: t.n }; print("timer"); }
}
locus Sink { on A(a) { print("a " + str(a.n)); } }
main { spawn Src; spawn Sink on pinned; }
`},
	{"regions", `
topic A { n: int }
locus Src {
    on start {
        publish A { n: 1 };
        var s = 0;
        for i in 0..600000 { s += i % 7; }
        publish A { n: s };
        var k = 0;
        while k < 300000 { if k % 100000 == 0 { publish A { n: k }; } k += 1; }
        print(str(s + k));
    }
}
locus Sink { on A(a) { print("a " + str(a.n)); } }
main { spawn Src; spawn Sink on pinned; }
`},
}

// TestPublishBatchesKeepTheJournal runs each batch case on the native
// engine, on the wasm engine with publish batches (the default) and on
// the wasm engine without them, and requires the same output, result and
// journal: every consumer's publishes (payloads and targets), primitive
// calls, deliveries, polls and traps in the same order.
func TestPublishBatchesKeepTheJournal(t *testing.T) {
	for _, c := range batchCases {
		t.Run(c.name, func(t *testing.T) {
			img := compileAll(t, c.src)
			type run struct {
				name string
				o    outcome
				j    *batchJournal
			}
			var runs []run
			for _, v := range []struct {
				name string
				kind EngineKind
				off  bool
			}{{"native", EngineNative, false}, {"wasm", EngineWasm, false}, {"wasm-unbatched", EngineWasm, true}} {
				noBatches = v.off
				j := &batchJournal{newLogJournal(img)}
				o := runWith(t, img, Options{Engine: v.kind, Journal: j})
				noBatches = false
				if o.err != nil {
					t.Fatalf("%s: %v", v.name, o.err)
				}
				j.check(t)
				runs = append(runs, run{v.name, o, j})
			}
			ref := runs[0]
			for _, r := range runs[1:] {
				// Consumers print in an order that depends on timing;
				// each consumer's own order is in its journal.
				if !reflect.DeepEqual(sortedLines(r.o.stdout), sortedLines(ref.o.stdout)) || r.o.stderr != ref.o.stderr || r.o.res.Code != ref.o.res.Code || r.o.res.Verdict != ref.o.res.Verdict {
					t.Errorf("%s and %s disagree:\n%s%s(%d %s)\nagainst\n%s%s(%d %s)", r.name, ref.name,
						r.o.stdout, r.o.stderr, r.o.res.Code, r.o.res.Verdict, ref.o.stdout, ref.o.stderr, ref.o.res.Code, ref.o.res.Verdict)
				}
				for cid := range img.Consumers {
					a, b := noPolls(r.j.events(cid)), noPolls(ref.j.events(cid))
					if !reflect.DeepEqual(a, b) {
						t.Errorf("consumer %d: %s's journal differs from %s's:\n%q\nagainst\n%q", cid, r.name, ref.name, a, b)
					}
				}
			}
			// The wasm engine polls where it does with or without
			// batches (the native engine polls at other steps), unless
			// a loop region publishes: it appends to the batch from
			// compiled code, which polls where its fuel runs out, and
			// leaves the region at each publish without batches, so
			// the interpreter polls at other steps (polls are not
			// journaled).
			regionPubs := tier.RegionPublishes(img, tier.NewPlan(img)) > 0
			for cid := range img.Consumers {
				a, b := runs[1].j.events(cid), runs[2].j.events(cid)
				if regionPubs {
					a, b = noPolls(a), noPolls(b)
				}
				if !reflect.DeepEqual(a, b) {
					t.Errorf("consumer %d: the wasm engine's journal with batches differs from the one without:\n%q\nagainst\n%q", cid, a, b)
				}
			}
		})
	}
}

func noPolls(evs []string) []string {
	var out []string
	for _, e := range evs {
		if e != "poll" {
			out = append(out, e)
		}
	}
	return out
}

// batchHost is a host that takes batches and logs every call it gets:
// Prim calls as "prim ID", each record of a batch as "batch RECORD".
type batchHost struct {
	log  []string
	fail error // publishBatch's answer
}

func (h *batchHost) Prim(id uint16, args []byte) ([]byte, error) {
	h.log = append(h.log, fmt.Sprintf("prim %d %x", id, args))
	return nil, nil
}

func (h *batchHost) batchPublishes() bool { return true }

func (h *batchHost) publishBatch(batch []byte) error {
	n := 0
	for len(batch) > 0 {
		rec, rest, ok := abi.SplitBatch(batch)
		if !ok {
			return errBadBatch
		}
		h.log = append(h.log, fmt.Sprintf("batch %x", rec))
		batch, n = rest, n+1
	}
	h.log = append(h.log, fmt.Sprintf("end of batch of %d", n))
	return h.fail
}

// TestPublishBatchProtocol drives a guest that batches through
// NewEngine with a host that logs what it gets: publishes arrive as
// batches, before the print that follows them, when the handler ends,
// when it traps (before the trap is returned), and in pieces when a
// handler publishes more than abi.BatchFlush bytes; an error of a batch
// (an interrupt) is returned in place of the handler's own result.
func TestPublishBatchProtocol(t *testing.T) {
	img := compileAll(t, `
topic T { n: int }
topic U { n: int }
locus L {
    on T(t) {
        if t.n == 1 { publish U { n: 1 }; publish U { n: 2 }; print("x"); publish U { n: 3 }; }
        if t.n == 2 { publish U { n: 4 }; var z = 0; let q = 1 / z; }
        if t.n == 3 { for i in 0..5000 { publish U { n: i }; } }
        if t.n == 4 { publish U { n: 5 }; }
    }
}
locus S { on U(u) { } }
main { spawn L; spawn S; }
`)
	h := &batchHost{}
	e, err := NewEngine(context.Background(), EngineWasm, img, h)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// NewEngine does not batch for an arbitrary host: turn it on as a
	// run does.
	w, err := defaultWasm()
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	e, err = w.newEngine(context.Background(), &wasmProgram{image: mustMarshal(t, img)}, h, vm.DefaultMemoryLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.(*wasmEngine).g.box == 0 {
		t.Fatal("the guest does not batch")
	}
	if err := e.Init(0); err != nil {
		t.Fatal(err)
	}
	u := func(n int64) string {
		var b []byte
		b = append(b, 1) // uvarint(topic U)
		b = append(b, structPayload(v(n))...)
		return fmt.Sprintf("batch %x", b)
	}
	deliver := func(n int64) error {
		h.log = nil
		return e.Deliver(0, 0, structPayload(v(n)))
	}
	if err := deliver(1); err != nil {
		t.Fatal(err)
	}
	want := []string{u(1), u(2), "end of batch of 2", fmt.Sprintf("prim %d %x", vm.PrimPrint, []byte{4, 1, 'x'}), u(3), "end of batch of 1"}
	if !reflect.DeepEqual(h.log, want) {
		t.Errorf("handler 1: got %q, want %q", h.log, want)
	}
	var tr *vm.Trap
	if err := deliver(2); !errors.As(err, &tr) || tr.Message != "division by zero" {
		t.Errorf("handler 2: got %v, want the trap", err)
	}
	if want := []string{u(4), "end of batch of 1"}; !reflect.DeepEqual(h.log, want) {
		t.Errorf("handler 2: got %q, want %q", h.log, want)
	}
	if err := deliver(3); err != nil {
		t.Fatal(err)
	}
	var recs, batches int
	for _, l := range h.log {
		switch {
		case bytes.HasPrefix([]byte(l), []byte("batch ")):
			if want := u(int64(recs)); l != want {
				t.Fatalf("handler 3: record %d is %s, want %s", recs, l, want)
			}
			recs++
		case bytes.HasPrefix([]byte(l), []byte("end of batch")):
			batches++
		default:
			t.Errorf("handler 3: %s", l)
		}
	}
	if recs != 5000 || batches < 2 {
		t.Errorf("handler 3: %d records in %d batches, want 5000 in more than one", recs, batches)
	}
	// A failed batch (an interrupt) is the delivery's error, also over a
	// trap; the next delivery starts with an empty batch.
	h.fail = fmt.Errorf("%w: stop", vm.ErrInterrupted)
	if err := deliver(2); !errors.Is(err, vm.ErrInterrupted) {
		t.Errorf("handler 2, interrupted: got %v", err)
	}
	h.fail = nil
	if err := deliver(4); err != nil {
		t.Fatal(err)
	}
	if want := []string{u(5), "end of batch of 1"}; !reflect.DeepEqual(h.log, want) {
		t.Errorf("handler 4: got %q, want %q", h.log, want)
	}

	// Several deliveries in one call: it stops after a handler that
	// printed, and at a trap, which is the failing delivery's; the
	// publishes of all that ran come in one batch, in order.
	m := e.(manyDeliverer)
	d := func(ns ...int64) []Delivery {
		var ds []Delivery
		for _, n := range ns {
			ds = append(ds, Delivery{Target: 0, Topic: 0, Payload: structPayload(v(n))})
		}
		return ds
	}
	h.log = nil
	ran, err := m.DeliverMany(d(4, 4, 1, 4))
	if err != nil || ran != 3 {
		t.Errorf("4 4 1 4: ran %d, %v; want 3", ran, err)
	}
	want = []string{u(5), u(5), u(1), u(2), "end of batch of 4", fmt.Sprintf("prim %d %x", vm.PrimPrint, []byte{4, 1, 'x'}), u(3), "end of batch of 1"}
	if !reflect.DeepEqual(h.log, want) {
		t.Errorf("4 4 1 4: got %q, want %q", h.log, want)
	}
	h.log = nil
	if ran, err := m.DeliverMany(d(4, 4, 2, 4)); !errors.As(err, &tr) || ran != 2 {
		t.Errorf("4 4 2 4: ran %d, %v; want 2 and the trap", ran, err)
	}
	if want := []string{u(5), u(5), u(4), "end of batch of 3"}; !reflect.DeepEqual(h.log, want) {
		t.Errorf("4 4 2 4: got %q, want %q", h.log, want)
	}
	h.log = nil
	if ran, err := m.DeliverMany(d(4, 4)); err != nil || ran != 2 {
		t.Errorf("4 4: ran %d, %v; want 2", ran, err)
	}
}

// FuzzDeliveryList splits arbitrary bytes as a list of deliveries
// (abi.SplitDelivery): it never reads past the end, and what it accepts
// encodes back to the same bytes.
func FuzzDeliveryList(f *testing.F) {
	f.Add([]byte{})
	f.Add(abi.AppendDelivery(abi.AppendDelivery(nil, 3, -1, nil), 1, 2, []byte{8, 1, 1, 4}))
	f.Add([]byte{1, 0, 0, 0, 2, 0, 0, 0, 9, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		var again []byte
		rest := b
		for len(rest) > 0 {
			inst, handler, payload, r, ok := abi.SplitDelivery(rest)
			if !ok {
				break
			}
			if cap(payload) != len(payload) {
				t.Fatalf("payload of length %d has capacity %d", len(payload), cap(payload))
			}
			again = abi.AppendDelivery(again, int(inst), int(handler), payload)
			rest = r
		}
		if !bytes.Equal(again, b[:len(b)-len(rest)]) {
			t.Fatalf("deliveries %x encode to %x", b[:len(b)-len(rest)], again)
		}
	})
}

func mustMarshal(t *testing.T, img interface{ MarshalBinary() ([]byte, error) }) []byte {
	t.Helper()
	b, err := img.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzPublishBatch splits arbitrary bytes as a batch: SplitBatch never
// reads past the end, every record it returns is capped at its own end,
// and the records it accepts encode back to the same bytes; the generic
// publishBatch hands exactly those records to Prim, in order.
func FuzzPublishBatch(f *testing.F) {
	f.Add([]byte{})
	f.Add(abi.AppendBatchRecord(abi.AppendBatchRecord(nil, []byte{1, 8, 1, 1, 2}), nil))
	f.Add([]byte{5, 0, 0, 0, 1, 2})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		var recs [][]byte
		var again []byte
		rest := b
		for len(rest) > 0 {
			rec, r, ok := abi.SplitBatch(rest)
			if !ok {
				break
			}
			if cap(rec) != len(rec) {
				t.Fatalf("record of length %d has capacity %d", len(rec), cap(rec))
			}
			recs = append(recs, rec)
			again = abi.AppendBatchRecord(again, rec)
			rest = r
		}
		if !bytes.Equal(again, b[:len(b)-len(rest)]) {
			t.Fatalf("records %x encode to %x", b[:len(b)-len(rest)], again)
		}
		var got [][]byte
		err := publishBatch(hostFunc(func(id uint16, args []byte) ([]byte, error) {
			if id != vm.PrimPublish {
				t.Fatalf("prim %d", id)
			}
			got = append(got, append([]byte(nil), args...))
			return nil, nil
		}), b)
		if (err != nil) != (len(rest) > 0) {
			t.Fatalf("publishBatch: %v with %d bytes left", err, len(rest))
		}
		if len(got) != len(recs) {
			t.Fatalf("publishBatch gave %d records, want %d", len(got), len(recs))
		}
		for i := range got {
			if !bytes.Equal(got[i], recs[i]) {
				t.Fatalf("record %d: %x, want %x", i, got[i], recs[i])
			}
		}
	})
}

// manyCases stop a run in the middle of a queue of deliveries that one
// call of delivermany could take: an exit, a trap, a budget, on the
// main bus and on a pinned consumer, and a main bus that publishes into
// its own queue. No consumer gets messages from two others, and one
// consumer traps, so that each run's output is fixed by the program.
var manyCases = []struct{ name, src string }{
	{"exit", `
topic A { n: int }
locus Src { on start { for i in 0..200 { publish A { n: i }; } } }
locus Sink {
    var c: int = 0;
    on A(a) { c += 1; if c == 50 { std::process::exit(3); } if c == 60 { print("after the exit"); } }
}
main { spawn Src; spawn Sink; }
`},
	{"exit-pinned", `
topic A { n: int }
locus Src { on start { for i in 0..200 { publish A { n: i }; } } }
locus Sink {
    var c: int = 0;
    on A(a) { c += 1; if c == 50 { std::process::exit(4); } if c == 60 { print("after the exit"); } }
}
main { spawn Src; spawn Sink on pinned; }
`},
	{"trap", `
topic A { n: int }
locus Src { on start { for i in 0..200 { publish A { n: i }; } } }
locus Sink { var s: int = 0; on A(a) { s += 10 / (77 - a.n); } }
main { spawn Src; spawn Sink; }
`},
	{"trap-pinned", `
topic A { n: int }
locus Src { on start { for i in 0..200 { publish A { n: i }; } } }
locus Sink { var s: int = 0; on A(a) { s += 10 / (77 - a.n); } }
main { spawn Src; spawn Sink on pinned; }
`},
	{"budget", `
topic A { n: int }
locus Src { on start { for i in 0..200 { publish A { n: i }; } } }
@budget(steps: 300)
locus Sink { var s: int = 0; on A(a) { var i = 0; while i < a.n { s += i; i += 1; } } }
main { spawn Src; spawn Sink; }
`},
	{"self", `
topic A { n: int }
topic B { n: int }
locus Src { on start { for i in 0..300 { publish A { n: i }; } } }
locus Sink {
    var s: int = 0;
    var b: int = 0;
    on A(a) { s += a.n; if a.n % 3 == 0 { publish B { n: a.n }; } }
    on B(x) { b += 1; if b == 100 { print(str(s) + " " + str(x.n)); } }
}
main { spawn Src; spawn Sink as m; spawn Sink as q; }
`},
}

// TestDeliverManyKeepsTheRun runs each many case without a journal
// (where the wasm engine takes several deliveries in one call) on the
// native engine, on the wasm engine and on the wasm engine one delivery
// at a time, and requires the same output, trap report, exit code and
// verdict.
func TestDeliverManyKeepsTheRun(t *testing.T) {
	for _, c := range manyCases {
		t.Run(c.name, func(t *testing.T) {
			img := compileAll(t, c.src)
			var outs []outcome
			for _, off := range []bool{false, false, true} {
				kind := EngineWasm
				if len(outs) == 0 {
					kind = EngineNative
				}
				noMany = off
				o := runWith(t, img, Options{Engine: kind})
				noMany = false
				if o.err != nil {
					t.Fatal(o.err)
				}
				outs = append(outs, o)
			}
			for i, name := range []string{"wasm", "wasm, one at a time"} {
				a, b := outs[i+1], outs[0]
				if a.stdout != b.stdout || a.stderr != b.stderr || a.res.Code != b.res.Code || a.res.Verdict != b.res.Verdict {
					t.Errorf("%s and native disagree:\n%s%s(%d %s)\nagainst\n%s%s(%d %s)", name,
						a.stdout, a.stderr, a.res.Code, a.res.Verdict, b.stdout, b.stderr, b.res.Code, b.res.Verdict)
				}
			}
		})
	}
}
