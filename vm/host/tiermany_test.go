package host

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm/guest/abi"
	"github.com/hale-lang/hale/vm/value"
)

// chargeEngines makes, for img, the engines the memory tests compare,
// each with memory limit limit and every instance initialised: the
// native engine, the wasm engine with compiled handlers (as a run's
// consumer: batches and the tier), the same without compiled handlers
// and the wasm engine without the tier. pubs[i] collects engine i's
// publishes.
func chargeEngines(t *testing.T, img *image.Image, limit int64, pubs *[4][]string) (names []string, engines []Engine) {
	t.Helper()
	ctx := context.Background()
	names = []string{"native", "wasm", "wasm without compiled handlers", "wasm without the tier"}
	w, err := defaultWasm()
	if err != nil {
		t.Fatal(err)
	}
	for i := range names {
		host := &countingBatchHost{hostFunc: func(id uint16, args []byte) ([]byte, error) {
			pubs[i] = append(pubs[i], fmt.Sprintf("%d %x", id, args))
			return nil, nil
		}}
		var e Engine
		switch i {
		case 0:
			e, err = newNative(img, host, limit)
		default:
			disableTier = i == 3
			prog, perr := w.prepare(ctx, img)
			disableTier = false
			if perr != nil {
				t.Fatal(perr)
			}
			t.Cleanup(func() { prog.close(ctx) })
			e, err = w.newEngine(ctx, prog, host, limit)
			if err == nil && i == 2 {
				e.(*wasmEngine).fastMode = 2 // no compiled handlers
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		for inst := range img.Instances {
			if err := e.Init(inst); err != nil {
				t.Fatal(err)
			}
		}
		engines = append(engines, e)
	}
	return names, engines
}

// memCounters returns e's machine's charges since its last measure and
// its allowance (of the machine of instance inst, on the wasm engine
// read through fastinfo).
func memCounters(t *testing.T, e Engine, inst int) string {
	t.Helper()
	if n, ok := e.(*nativeEngine); ok {
		c, a := n.m.MemoryCounters()
		return fmt.Sprintf("charged %d, allowance %d", c, a)
	}
	w := e.(*wasmEngine)
	if err := w.begin(); err != nil {
		t.Fatal(err)
	}
	defer w.end()
	if w.g.fastInfo == nil {
		// No compiled handlers (no tier): the guest answers anyway.
		w.g.fastInfo = w.g.mod.ExportedFunction(abi.ExportFastInfo)
	}
	var fi fastInst
	w.askFast(inst, 0, &fi)
	if !fi.known || fi.guards == 0 {
		t.Fatal("fastinfo gave no addresses")
	}
	read := func(at uint64) uint64 {
		b, ok := w.g.mem.Read(uint32(at), 8)
		if !ok {
			t.Fatalf("no memory at %#x", at)
		}
		return binary.LittleEndian.Uint64(b)
	}
	return fmt.Sprintf("charged %d, allowance %d", read(fi.charged), read(read(fi.guards+8)))
}

// TestFastHandlerMeasures delivers messages one by one to a handler
// compiled whole that runs instructions after which the interpreter
// measures memory (a product, a remainder, a call), on a machine with a
// small memory limit: after every delivery, the charges since the last
// measure, the allowance, the state and the publishes must be the same
// on the native engine, on the wasm engine with and without compiled
// handlers and without the tier. The charges of the payloads pass the
// allowance every few tens of thousands of deliveries; the interpreter
// measures at the first such instruction after that, and so must the
// compiled handler (by handing the delivery back). Before it did, the
// compiled handler added its charges past the allowance and the measure
// came later or never.
func TestFastHandlerMeasures(t *testing.T) {
	img := compileAll(t, `
topic T { n: int, m: int }
topic U { v: int }
fn mix(a: int, b: int) -> int {
    var x = a;
    for i in 0..40 { x = (x * 31 + b + i) % 1000003; }
    return x;
}
locus L {
    var acc: int = 1;
    var count: int = 0;
    on T(t) {
        count += 1;
        if t.m == 0 {
            acc = acc + t.n;
        } else if t.m == 1 {
            acc = (acc * 7 + t.n) % 1000003;
        } else {
            acc = mix(acc, t.n);
            publish U { v: acc };
        }
    }
}
locus S { on U(u) { } }
main { spawn L; spawn S; }
`)
	var pubs [4][]string
	names, engines := chargeEngines(t, img, MinMemoryLimit, &pubs)
	ran := fastAnswered.Load()
	measured, last := 0, int64(0)
	r := rand.New(rand.NewPCG(7, 18))
	for k := range 90000 {
		// Mostly deliveries that never measure, so that the charges
		// pass the allowance before one that does.
		m := int64(0)
		if r.IntN(50) == 0 {
			m = 1 + int64(r.IntN(2))
		}
		payload := structPayload(value.Int(int64(r.IntN(100000))), value.Int(m))
		var got [4]string
		for i, e := range engines {
			err := e.Deliver(0, 0, payload)
			st, serr := e.State(0)
			got[i] = fmt.Sprintf("%v, %s, state %x %v, %d publishes", err, memCounters(t, e, 0), st, serr, len(pubs[i]))
		}
		for i := 1; i < len(engines); i++ {
			if got[i] != got[0] {
				t.Fatalf("delivery %d: %s: %s\n%s: %s", k, names[0], got[0], names[i], got[i])
			}
		}
		if c, _ := engines[0].(*nativeEngine).m.MemoryCounters(); c < last {
			measured++
			last = c
		} else {
			last = c
		}
	}
	for i := 1; i < len(pubs); i++ {
		if fmt.Sprint(pubs[i]) != fmt.Sprint(pubs[0]) {
			t.Fatalf("%s and %s published differently", names[0], names[i])
		}
	}
	if ran = fastAnswered.Load() - ran; ran < 80000 {
		t.Fatalf("%d deliveries ran compiled, want 80,000 or more", ran)
	}
	if measured < 2 {
		t.Fatalf("the machines measured %d times, want 2 or more", measured)
	}
	t.Logf("%d deliveries ran compiled, %d measures", ran, measured)
}

// runsProgram is the program of TestFastHandlerManyRuns: a handler compiled
// whole whose deliveries, by their payload, run a product (a measure
// point), loop long enough to run out of the locus's budget, divide by
// zero, print (a hand-back), publish none to three messages or sixty
// (runs of which fill the guest's batch), and call a compiled function.
const runsProgram = `
topic T { n: int, k: int, d: int }
topic U { v: int, w: float }
fn f(a: int, b: int) -> int {
    var s = a;
    for i in 0..b { s = (s * 3 + i) % 1009; }
    return s;
}
@budget(steps: 2000)
locus L {
    var acc: int = 1;
    var fl: float = 0.5;
    var count: int = 0;
    on T(t) {
        count += 1;
        acc = (acc + t.n * 7) % 1000003;
        for i in 0..t.k { acc = acc + i; }
        acc = acc / t.d;
        if t.n % 13 == 0 { print(str(acc)); }
        for i in 0..(t.n % 4) { publish U { v: acc + i, w: fl }; }
        if t.n % 97 == 5 {
            for i in 0..60 { publish U { v: i, w: fl }; }
        }
        if t.n % 89 == 3 { acc = f(acc, t.n % 20); }
        fl = fl * 1.25;
        if fl > 1000.0 { fl = 0.5; }
    }
}
locus S { on U(u) { } }
main { spawn L; spawn S; }
`

// TestFastHandlerManyRuns hands the wasm engine with compiled handlers runs
// of deliveries to one handler (DeliverMany, as a consumer with nothing
// to see each delivery does), of random lengths, and brings the native
// engine, the wasm engine without compiled handlers and the wasm engine
// without the tier to the same point one delivery at a time after each:
// every delivery must end (or trap, with the same trap) alike, and the
// state, the memory charges and allowance, and every publish and print
// so far must be the same. Traps (the budget, a division by zero) and
// hand-backs (a print) fall in the middle of runs; runs of deliveries
// that publish sixty messages each fill the batch.
func TestFastHandlerManyRuns(t *testing.T) {
	img := compileAll(t, runsProgram)
	var pubs [4][]string
	names, engines := chargeEngines(t, img, MinMemoryLimit, &pubs)
	r := rand.New(rand.NewPCG(11, 4))
	n := 40000
	if testing.Short() {
		n = 8000
	}
	ds := make([]Delivery, n)
	for i := range ds {
		k, d := int64(r.IntN(6)), int64(1+r.IntN(3))
		if r.IntN(400) == 0 {
			k = 3000 // out of budget
		}
		if r.IntN(400) == 0 {
			d = 0
		}
		ds[i] = Delivery{Target: 0, Topic: 0, Payload: structPayload(value.Int(int64(r.IntN(1000))), value.Int(k), value.Int(d))}
	}
	ranRuns, answered, traps := inRuns.Load(), fastAnswered.Load(), 0
	fast := engines[1].(*wasmEngine)
	state := func(i int) string {
		st, err := engines[i].State(0)
		return fmt.Sprintf("state %x %v, %s, %d publishes and prints", st, err, memCounters(t, engines[i], 0), len(pubs[i]))
	}
	for at := 0; at < n; {
		m := min(n-at, 1+r.IntN(manyDeliveries))
		ran, err := fast.DeliverMany(ds[at : at+m])
		if ran < 0 || ran > m || err == nil && ran == 0 || err != nil && ran == m {
			t.Fatalf("at %d: DeliverMany of %d ran %d (%v)", at, m, ran, err)
		}
		for i, e := range engines {
			if i == 1 {
				continue
			}
			for k := at; k < at+ran; k++ {
				if err := e.Deliver(0, 0, ds[k].Payload); err != nil {
					t.Fatalf("delivery %d: %s trapped (%v), the run of compiled handlers did not", k, names[i], err)
				}
			}
			if err != nil {
				if err2 := e.Deliver(0, 0, ds[at+ran].Payload); fmt.Sprint(err2) != err.Error() {
					t.Fatalf("delivery %d: %s: %v; in a run of compiled handlers: %v", at+ran, names[i], err2, err)
				}
			}
		}
		if err != nil {
			ran++
			traps++
		}
		at += ran
		want := state(1)
		for i := range engines {
			if i != 1 {
				if got := state(i); got != want {
					t.Fatalf("after delivery %d: %s: %s\n%s: %s", at-1, names[i], got, names[1], want)
				}
			}
		}
		for i := range engines {
			if i != 1 && !slices.Equal(pubs[i], pubs[1]) {
				t.Fatalf("after delivery %d: %s and %s published or printed differently", at-1, names[i], names[1])
			}
		}
	}
	ranRuns, answered = inRuns.Load()-ranRuns, fastAnswered.Load()-answered
	if ranRuns < int64(n)/2 || traps < 20 {
		t.Fatalf("%d of %d deliveries ran in runs of compiled handlers (%d compiled), %d traps; want half of them and 20 traps",
			ranRuns, n, answered, traps)
	}
	t.Logf("%d of %d deliveries ran in runs, %d compiled, %d traps", ranRuns, n, answered, traps)
}

// randomBurstProgram writes a program whose locus M publishes a burst of
// messages T on start, which L's random handler of scalars (as
// randomHandlerProgram's, without the chain) takes in runs on the main
// bus: it publishes an Out now and then, which P prints, prints itself
// under a condition now and then, and traps (overflow, division by
// zero, its @budget) now and then.
func randomBurstProgram(seed uint64) string {
	g := &progGen{r: rand.New(rand.NewPCG(seed, 5))}
	for i := range g.r.IntN(3) {
		g.fn(fmt.Sprintf("h%d", i))
	}
	g.b.WriteString("topic T { a: int, b: int, x: float, p: bool }\n")
	g.b.WriteString("topic Out { v: int, f: float, q: bool }\n")
	if g.r.IntN(3) == 0 {
		fmt.Fprintf(&g.b, "@budget(steps: %d)\n", 30+g.r.IntN(400))
	}
	g.scalarHandlerHead()
	g.block(2, 2+g.r.IntN(4))
	if g.r.IntN(3) == 0 {
		g.line(2, "if "+g.boolExpr(1)+" { print(format(\"mid {} {}\", x, s1)); }")
	}
	if g.r.IntN(3) > 0 {
		g.line(2, "if "+g.boolExpr(1)+" { publish Out { v: "+g.intExpr(1)+", f: "+g.floatExpr(1)+", q: "+g.boolExpr(1)+" }; }")
	}
	g.line(1, "}")
	g.line(0, "}")
	g.b.WriteString(`locus P { on Out(o) { print(format("out {} {} {}", o.v, o.f, o.q)); } }
`)
	fmt.Fprintf(&g.b, "locus M { on start { for i in 0..%d { publish T { a: i * %d - %d, b: %s, x: %d.5 * float(i), p: i %% 3 == 0 }; } } }\n",
		50+g.r.IntN(400), 1+g.r.IntN(9), g.r.IntN(200), g.intLit(), g.r.IntN(9))
	g.b.WriteString("main { spawn L; spawn P; spawn M; }\n")
	return g.b.String()
}

// TestFastHandlerRunsRandomPrograms runs random burst programs without
// a journal (so the consumer hands its engine runs of deliveries) on the
// native engine, on the wasm engine with compiled handlers, without them,
// and with them but one delivery a call: output, traps (with the
// delivery they name) and exit codes must be identical.
func TestFastHandlerRunsRandomPrograms(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 10
	}
	inRun, trapped := inRuns.Load(), 0
	for seed := range uint64(n) {
		src := randomBurstProgram(seed)
		img, ok := tryCompile(src)
		if !ok {
			t.Fatalf("seed %d: the generated program does not compile:\n%s", seed, src)
		}
		run := func(kind EngineKind, slow, one bool) outcome {
			disableFast, noMany = slow, one
			defer func() { disableFast, noMany = false, false }()
			out := runWith(t, img, Options{Engine: kind})
			if out.err != nil {
				t.Fatalf("seed %d: %v: %v", seed, kind, out.err)
			}
			return out
		}
		outs := []outcome{run(EngineNative, false, false), run(EngineWasm, false, false), run(EngineWasm, true, false), run(EngineWasm, false, true)}
		names := []string{"native", "wasm", "wasm without compiled handlers", "wasm one delivery a call"}
		for i := 1; i < len(outs); i++ {
			a, b := outs[0], outs[i]
			if a.stdout != b.stdout || a.stderr != b.stderr || a.res.Code != b.res.Code {
				t.Fatalf("seed %d: %s and %s disagree:\n%s\nexit %d:\n%s%s\nexit %d:\n%s%s", seed, names[0], names[i], src,
					a.res.Code, a.stdout, a.stderr, b.res.Code, b.stdout, b.stderr)
			}
		}
		if outs[0].res.Code == ExitTrap {
			trapped++
		}
	}
	inRun = inRuns.Load() - inRun
	if inRun < int64(50*n) || trapped == 0 || trapped == n {
		t.Fatalf("%d deliveries ran in runs of compiled handlers, %d of %d programs trapped", inRun, trapped, n)
	}
	t.Logf("%d programs, %d trapped, %d deliveries in runs", n, trapped, inRun)
}
