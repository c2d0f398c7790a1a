package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/guest/abi"
	"github.com/hale-lang/hale/vm/internal/tier"
	"github.com/hale-lang/hale/vm/value"
)

// TestFastHandlerConstants keeps the tier's copies of the guest's batch
// threshold and of the canonical NaN equal to theirs.
func TestFastHandlerConstants(t *testing.T) {
	if tier.BatchFlush != abi.BatchFlush || tier.CanonicalNaN != value.CanonicalNaN {
		t.Fatalf("tier.BatchFlush %d, abi %d; tier.CanonicalNaN %#x, value %#x", tier.BatchFlush, abi.BatchFlush,
			uint64(tier.CanonicalNaN), uint64(value.CanonicalNaN))
	}
}

// fastJournal is a logJournal that also logs each publish's payload
// and, before each delivery, the target's state: two runs with the same
// events published the same bytes and left the same state.
type fastJournal struct{ *logJournal }

func (j fastJournal) Publish(c int, msg MessageID, topic int, payload []byte, targets []int) {
	j.logJournal.Publish(c, msg, topic, payload, targets)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.add(c, fmt.Sprintf("payload %x", payload))
}

func (j fastJournal) Deliver(c, n int, d *Delivery, st StateReader) error {
	s, err := st.State(d.Target)
	j.mu.Lock()
	j.add(c, fmt.Sprintf("state %x %v", s, err))
	j.mu.Unlock()
	return j.logJournal.Deliver(c, n, d, st)
}

// fastRun is one run of a program for the fast-path tests: its outcome
// and its journal's events per consumer.
type fastRun struct {
	out    outcome
	events [][]string
}

// runFast runs img on engine kind (on wasm with compiled handlers unless
// slow) with a fastJournal.
func runFast(t *testing.T, img *image.Image, kind EngineKind, slow bool) fastRun {
	t.Helper()
	j := fastJournal{newLogJournal(img)}
	disableFast = slow
	defer func() { disableFast = false }()
	out := runWith(t, img, Options{Engine: kind, Journal: j})
	if out.err != nil {
		t.Fatalf("%v: %v", kind, out.err)
	}
	j.check(t)
	r := fastRun{out: out}
	for c := range consumerCount(img) {
		r.events = append(r.events, j.events(c))
	}
	return r
}

func consumerCount(img *image.Image) int {
	n := 0
	for _, in := range img.Instances {
		n = max(n, in.Consumer+1)
	}
	return n
}

// sameRuns fails unless a and b printed, trapped, exited and journaled
// the same.
func sameRuns(t *testing.T, what, src string, a, b fastRun) {
	t.Helper()
	if a.out.stdout != b.out.stdout || a.out.stderr != b.out.stderr || a.out.res.Code != b.out.res.Code {
		t.Fatalf("%s disagree:\n%s\nexit %d:\n%s%s\nexit %d:\n%s%s", what, src, a.out.res.Code, a.out.stdout, a.out.stderr,
			b.out.res.Code, b.out.stdout, b.out.stderr)
	}
	for c := range a.events {
		if !slices.Equal(a.events[c], b.events[c]) {
			t.Fatalf("%s: consumer %d journaled differently:\n%s\n%s\n---\n%s", what, c, src,
				strings.Join(a.events[c], "\n"), strings.Join(b.events[c], "\n"))
		}
	}
}

// randomHandlerProgram writes a program whose locus L handles a chain
// of messages with a random handler of scalars (the kind the tier
// compiles whole): it reads the payload's fields, reads and writes int,
// float and bool state, loops, branches, calls compiled functions, now
// and then overflows, divides by zero, shifts by a count out of range or
// runs out of its @budget, and publishes the next message of the chain,
// an Out now and then and a Done at the end, which a printing locus
// prints; now and then it prints itself, under a condition.
func randomHandlerProgram(seed uint64) string {
	g := &progGen{r: rand.New(rand.NewPCG(seed, 3))}
	n := g.r.IntN(3)
	for i := range n {
		g.fn(fmt.Sprintf("h%d", i))
	}
	g.b.WriteString("topic T { a: int, b: int, x: float, p: bool }\n")
	g.b.WriteString("topic Out { v: int, f: float, q: bool }\n")
	g.b.WriteString("topic Done { s: int, f: float, b: bool }\n")
	if g.r.IntN(4) == 0 {
		fmt.Fprintf(&g.b, "@budget(steps: %d)\n", 30+g.r.IntN(400))
	}
	g.scalarHandlerHead("var count: int = 0;")
	g.block(2, 2+g.r.IntN(4))
	// A print (which the compiled handler hands back to the guest at),
	// now and then, before or after a publish.
	printAt := g.r.IntN(4)
	if printAt == 0 {
		g.line(2, "if "+g.boolExpr(1)+" { print(format(\"mid {} {}\", x, s1)); }")
	}
	if g.r.IntN(2) == 0 {
		g.line(2, "publish Out { v: "+g.intExpr(1)+", f: "+g.floatExpr(1)+", q: "+g.boolExpr(1)+" };")
	}
	if printAt == 1 {
		g.line(2, "if "+g.boolExpr(1)+" { print(\"late \" + str(y)); }")
	}
	g.line(2, "count += 1;")
	g.line(2, fmt.Sprintf("if count < %d {", 5+g.r.IntN(40)))
	g.line(3, "publish T { a: "+g.intExpr(1)+", b: "+g.intExpr(1)+", x: "+g.floatExpr(1)+", p: "+g.boolExpr(1)+" };")
	g.line(2, "} else {")
	g.line(3, "publish Done { s: s1, f: fs, b: bs };")
	g.line(2, "}")
	g.line(1, "}")
	g.line(0, "}")
	g.b.WriteString(`locus P {
    on Out(o) { print(format("out {} {} {}", o.v, o.f, o.q)); }
    on Done(d) { print(format("done {} {} {}", d.s, d.f, d.b)); }
}
`)
	fmt.Fprintf(&g.b, "locus M { on start { publish T { a: %s, b: %s, x: %d.5, p: true }; } }\n", g.intLit(), g.intLit(), g.r.IntN(9))
	g.b.WriteString("main { spawn L; spawn P; spawn M; }\n")
	return g.b.String()
}

// TestFastHandlerRandomPrograms runs random handler programs on the
// native engine, on the wasm engine with compiled handlers and on the
// wasm engine without them: output, traps, exit codes, every published
// payload and the state before every delivery must be identical.
func TestFastHandlerRandomPrograms(t *testing.T) {
	n := randomPrograms(60, 15)
	planned, trapped := 0, 0
	answered := fastAnswered.Load()
	for seed := range uint64(n) {
		src := randomHandlerProgram(seed)
		img, ok := tryCompile(src)
		if !ok {
			t.Fatalf("seed %d: the generated program does not compile:\n%s", seed, src)
		}
		p := tier.NewPlan(img)
		tier.PlanHandlers(img, p)
		if len(p.Handlers) > 0 {
			planned++
		}
		native := runFast(t, img, EngineNative, false)
		fast := runFast(t, img, EngineWasm, false)
		slow := runFast(t, img, EngineWasm, true)
		sameRuns(t, fmt.Sprintf("seed %d: native and wasm", seed), src, native, fast)
		sameRuns(t, fmt.Sprintf("seed %d: wasm with and without compiled handlers", seed), src, fast, slow)
		if native.out.res.Code == ExitTrap {
			trapped++
		}
	}
	answered = fastAnswered.Load() - answered
	if planned < n*3/4 || trapped == 0 || trapped > n*2/3 || answered < int64(2*n) {
		t.Fatalf("%d of %d programs had a compiled handler, %d trapped, %d deliveries ran compiled", planned, n, trapped, answered)
	}
	t.Logf("%d programs, %d with a compiled handler, %d trapped, %d deliveries ran compiled", n, planned, trapped, answered)
}

const fastSmokeSrc = `
topic Tick { n: int, x: float, ok: bool }
topic Done { total: int }
fn sq(a: int) -> int { var s = 0; for i in 0..a { s += a; } return s; }
locus Counter {
    var total: int = 0;
    var f: float = 0.5;
    var seen: bool = false;
    on Tick(t) {
        total += t.n + sq(t.n & 7);
        f = f * 0.5 + t.x;
        seen = t.ok;
        if t.n < 300 {
            publish Tick { n: t.n + 1, x: f, ok: !t.ok };
        } else {
            publish Done { total: total };
        }
    }
}
locus Main {
    on start { publish Tick { n: -5, x: 1.5, ok: true }; }
    on Done(d) { print(d.total); }
}
main { spawn Counter; spawn Main; }
`

// TestFastHandlerRuns checks that compiled handlers run (a fast path
// that always fell back would pass every agreement test) and agree.
func TestFastHandlerRuns(t *testing.T) {
	img := compileAll(t, fastSmokeSrc)
	before := fastAnswered.Load()
	native := runFast(t, img, EngineNative, false)
	fast := runFast(t, img, EngineWasm, false)
	sameRuns(t, "native and wasm", fastSmokeSrc, native, fast)
	if ran := fastAnswered.Load() - before; ran < 300 {
		t.Fatalf("compiled handlers ran %d deliveries, want 300 or more", ran)
	}
	if fast.out.stdout != "50480\n" {
		t.Fatalf("printed %q", fast.out.stdout)
	}
}

// TestFastHandlerFallsBack runs handlers that the tier compiles whole
// but that fall back where they cannot go on: after a publish and a
// state write, at a division by zero; at a publish that would take the
// batch past its threshold; at a budget running out. The attempt must
// leave no trace: the same publishes, state, output and trap as the
// interpreter alone, on both engines.
func TestFastHandlerFallsBack(t *testing.T) {
	for _, src := range []string{`
topic Go { d: int }
topic Out { v: int }
locus L {
    var s: int = 10;
    on Go(g) {
        publish Out { v: s };
        s += 1;
        s = s / g.d;
        publish Out { v: s };
    }
}
locus P {
    on start { publish Go { d: 2 }; publish Go { d: 3 }; publish Go { d: 0 }; publish Go { d: 1 }; }
    on Out(o) { print(o.v); }
}
main { spawn L; spawn P; }
`, `
topic Go { n: int }
topic Out { v: int }
locus L {
    var s: int = 0;
    on Go(g) {
        for i in 0..g.n { publish Out { v: i * 1000 }; s += i; }
        publish Out { v: s };
    }
}
locus P {
    var sum: int = 0;
    var got: int = 0;
    on start { publish Go { n: 3 }; publish Go { n: 3000 }; publish Go { n: 2 }; }
    on Out(o) { sum += o.v; got += 1; if got % 1000 == 0 || got > 3000 { print(format("{} {}", got, sum)); } }
}
main { spawn L; spawn P; }
`, `
topic Go { n: int }
topic Out { v: int }
@budget(steps: 200)
locus L {
    var s: int = 0;
    on Go(g) {
        publish Out { v: g.n };
        for i in 0..g.n { s += i; }
        publish Out { v: s };
    }
}
locus P {
    on start { publish Go { n: 5 }; publish Go { n: 10 }; publish Go { n: 100 }; }
    on Out(o) { print(o.v); }
}
main { spawn L; spawn P; }
`} {
		img := compileAll(t, src)
		ran, fell := fastAnswered.Load(), fastFellBack.Load()
		native := runFast(t, img, EngineNative, false)
		fast := runFast(t, img, EngineWasm, false)
		slow := runFast(t, img, EngineWasm, true)
		sameRuns(t, "native and wasm", src, native, fast)
		sameRuns(t, "wasm with and without compiled handlers", src, fast, slow)
		if fastAnswered.Load() == ran || fastFellBack.Load() == fell {
			t.Fatalf("%s\ncompiled handlers ran %d deliveries and fell back on %d; want both", src,
				fastAnswered.Load()-ran, fastFellBack.Load()-fell)
		}
		t.Logf("exit %d, %d ran compiled, %d fell back:\n%s", fast.out.res.Code, fastAnswered.Load()-ran, fastFellBack.Load()-fell, fast.out.stdout+fast.out.stderr)
	}
}

// TestTierCountsActiveFrames: a compiled recursion entered from an
// interpreted one tens of thousands of frames deep stops where the
// interpreter's frames would pass vm.MaxDepth, so both engines trap with
// a stack overflow (the tier used to count from 0 and returned).
func TestTierCountsActiveFrames(t *testing.T) {
	img := compileAll(t, `
fn rec(n: int) -> int { if n == 0 { return 0; } return rec(n - 1) + 1; }
fn deep(n: int) -> int {
    if n == 0 { return rec(30); }
    let s = str(n);
    return deep(n - 1) + len(s) * 0;
}
locus Main { on start { print(deep(99985)); print(deep(10)); } }
main { spawn Main; }
`)
	out := runBoth(t, img, Options{})
	if out.res.Code != ExitTrap || !strings.Contains(out.stderr, "stack overflow") {
		t.Fatalf("exit %d:\n%s%s\nwant a stack overflow", out.res.Code, out.stdout, out.stderr)
	}
}

// TestFastHandlerPayloads hands a compiled handler canonical payloads
// and malformed ones (truncated, a varint not minimal or too long, a
// bool of 2, a NaN not canonical, a wrong tag or count, bytes left
// over): each must be accepted or refused with the same error and leave
// the same state on the native engine and on the wasm engine, which
// decodes the canonical ones itself and hands the others to the guest.
func TestFastHandlerPayloads(t *testing.T) {
	img := compileAll(t, `
topic T { a: int, x: float, p: bool }
locus L {
    var total: int = 0;
    var f: float = 0.0;
    var b: bool = false;
    on T(t) { total += t.a; f = t.x; b = t.p; }
}
main { spawn L; }
`)
	host := hostFunc(func(id uint16, args []byte) ([]byte, error) { return nil, nil })
	engines := map[EngineKind]Engine{}
	for _, kind := range realEngines {
		e, err := NewEngine(context.Background(), kind, img, host)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if err := e.Init(0); err != nil {
			t.Fatal(err)
		}
		engines[kind] = e
	}
	valid := func(a int64, x float64, p bool) []byte {
		return structPayload(value.Int(a), value.Float(x), value.Bool(p))
	}
	nan := valid(1, 0, true)
	binary.LittleEndian.PutUint64(nan[6:], 0x7ff8000000000001) // a NaN, not the canonical one
	cnan := valid(1, math.NaN(), false)
	payloads := [][]byte{
		valid(2, 1.5, true), valid(-1, -0.0, false), valid(math.MaxInt64, math.Inf(1), true),
		valid(math.MinInt64, 1e300, false), valid(63, 2, true), valid(64, 3, true), valid(-65, 4, false),
		cnan, nan,
		{8, 3, 1, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 3},             // truncated
		{8, 3, 1, 0x84, 0x00, 2, 0, 0, 0, 0, 0, 0, 0, 0, 3, 1}, // varint not minimal
		{8, 3, 1, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 3, 2},          // bool 2
		{8, 3, 1, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 3, 1, 0},       // a byte left over
		{8, 2, 1, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0},                // count 2
		{8, 3, 2, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 3, 1},          // an int's tag wrong
		{7, 3, 1, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 3, 1},          // not a struct
		{8}, // no count
		{},  // nothing
		append([]byte{8, 3, 1}, append(bytes.Repeat([]byte{0xff}, 9), 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 3, 1)...), // ten bytes, too big
		append([]byte{8, 3, 1}, append(bytes.Repeat([]byte{0x80}, 10), 2, 0, 0, 0, 0, 0, 0, 0, 0, 3, 1)...),   // eleven bytes
		append([]byte{8, 3, 1}, append(bytes.Repeat([]byte{0xff}, 9), 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 3, 1)...), // ten, last 0
		valid(5, 0.25, true),
	}
	ran := fastAnswered.Load()
	for i, p := range payloads {
		var res []string
		for _, kind := range realEngines {
			e := engines[kind]
			err := e.Deliver(0, 0, p)
			st, serr := e.State(0)
			res = append(res, fmt.Sprintf("%v / %x %v", err, st, serr))
		}
		if res[0] != res[1] {
			t.Fatalf("payload %d %x:\n%v: %s\n%v: %s", i, p, realEngines[0], res[0], realEngines[1], res[1])
		}
	}
	if n := fastAnswered.Load() - ran; n < 6 {
		t.Fatalf("compiled handlers ran %d of the deliveries, want 6 or more", n)
	}
}

// A break in a handler compiled whole stops at every delivery: under a
// debugger the host leaves every delivery to the interpreter. (The
// handler does not publish: a Stepper's guests do not batch, so a
// publishing handler would go to the guest anyway.)
func TestBreakInFastHandler(t *testing.T) {
	img := compileAll(t, `
topic Tick { n: int }
topic Show { n: int }
locus Counter {
    var total: int = 0;
    on Tick(t) {
        total += t.n;
        total = total * 3 % 1000003;
    }
    on Show(s) { print(total + s.n); }
}
locus Main {
    on start { for i in 0..40 { publish Tick { n: i }; } publish Show { n: 1 }; }
}
main { spawn Counter; spawn Main; }
`)
	fn := -1
	for i, f := range img.Funcs {
		if f.Name == "Counter.on Tick" {
			fn = i
		}
	}
	p := tier.NewPlan(img)
	tier.PlanHandlers(img, p)
	if fn < 0 || len(p.Handlers) == 0 || p.Handlers[0].Func != fn {
		t.Fatal("Counter.on Tick is not compiled whole: the test proves nothing")
	}
	pc := -1
	for _, s := range img.Funcs[fn].Stmts {
		if s.Line == 8 { // total = total * 3 % 1000003;
			pc = int(s.PC)
		}
	}
	spec := vm.EncodeBreakSpec(vm.BreakSpec{At: []vm.BreakPC{{Fn: fn, PC: pc}}})
	var outs []string
	for _, kind := range realEngines {
		breaks, res, out := debugRun(t, img, kind, spec)
		if len(breaks) != 40 || res.Code != 0 {
			t.Fatalf("%s: %d breaks, exit %d, output %q; want 40 breaks", kind, len(breaks), res.Code, out)
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Fatalf("outputs %q", outs)
	}
}

// An engine's table of instances covers only the span of those it has
// run, whatever their order, and keeps what it knew of each as it grows.
func TestFastForSpan(t *testing.T) {
	var e wasmEngine
	e.fastFor(700).slots = 700
	if len(e.fast) != 1 {
		t.Fatalf("one instance: a table of %d", len(e.fast))
	}
	e.fastFor(703).slots = 703
	e.fastFor(698).slots = 698
	if lo, hi := e.fastLo, e.fastLo+len(e.fast); lo > 698 || hi <= 703 || hi-lo > 12 {
		t.Fatalf("instances 698-703: a table of [%d, %d)", lo, hi)
	}
	for _, inst := range []int{698, 700, 703} {
		if got := e.fastFor(inst).slots; got != uint64(inst) {
			t.Errorf("instance %d: slots %d", inst, got)
		}
	}
	e.forgetFast(700)
	if e.fastFor(700).slots != 0 || e.fastFor(703).slots != 703 {
		t.Error("forgetFast(700) did not forget 700 alone")
	}
}

// TestHandlerGlobalsKept checks what callHandler relies on when it sets
// only the fuel, depth and height globals: after a compiled handler ran
// to its end, and after any other tier call, which clears handlerSet,
// the stop and undo-log globals hold what setHandlerGlobals sets. The
// programs mix compiled handlers with handlers that fall back to the
// interpreter, whose loops and hot functions run as tier calls with an
// undo log, in one guest; random programs add the rest.
func TestHandlerGlobalsKept(t *testing.T) {
	checkHandlerGlobals = true
	defer func() { checkHandlerGlobals = false }()
	wrong, ran := handlerGlobalsWrong.Load(), fastAnswered.Load()
	srcs := []string{fastSmokeSrc, `
topic Go { n: int }
topic Out { v: int }
fn fill(n: int) -> int {
    var xs: [int] = [];
    for i in 0..n { push(xs, i); }
    var s = 0;
    for i in 0..n { xs[i] = xs[i] * 2; s += xs[i]; }
    return s;
}
fn bump(xs: [int], n: int) -> int {
    for i in 0..len(xs) { xs[i] = xs[i] + n * i; }
    return xs[len(xs) - 1];
}
locus L {
    var s: int = 0;
    var xs: [int] = [1, 2, 3, 4];
    on Go(g) {
        for i in 0..g.n { publish Out { v: i }; s += i; }
        xs[g.n % 4] = s;
        publish Out { v: s + xs[0] };
    }
}
locus P {
    var sum: int = 0;
    on start {
        for k in 0..40 {
            publish Go { n: 2 + k % 3 };
            if k % 10 == 0 { publish Go { n: 3000 }; sum += fill(500 + k); }
        }
    }
    on Out(o) { sum += o.v; }
}
locus Q {
    var xs: [int] = [0, 0, 0, 0, 0, 0, 0, 0];
    var s: string = "";
    on Out(o) {
        let v = bump(xs, o.v);
        s = str(v);
    }
}
main { spawn L; spawn P; spawn Q; }
`}
	for seed := range uint64(10) {
		srcs = append(srcs, randomHandlerProgram(seed))
	}
	for i, src := range srcs {
		img := compileAll(t, src)
		a, f, c := fastAnswered.Load(), fastFellBack.Load(), tierAnswered.Load()
		native := runFast(t, img, EngineNative, false)
		fast := runFast(t, img, EngineWasm, false)
		sameRuns(t, "native and wasm", src, native, fast)
		t.Logf("program %d: %d compiled handler calls, %d fell back, %d other tier calls", i, fastAnswered.Load()-a, fastFellBack.Load()-f, tierAnswered.Load()-c)
	}
	if n := handlerGlobalsWrong.Load() - wrong; n != 0 {
		t.Fatalf("%d compiled handler calls found the stop or undo-log globals changed since the last one", n)
	}
	if fastAnswered.Load()-ran < 300 {
		t.Fatalf("compiled handlers ran %d deliveries, want 300 or more", fastAnswered.Load()-ran)
	}
}

// A run over many instances in order (the main bus's) grows the table
// geometrically: a handful of copies, not one per instance.
func TestFastForGrowsGeometrically(t *testing.T) {
	for _, order := range []string{"up", "down"} {
		var e wasmEngine
		const n = 10000
		grows := 0
		for k := range n {
			inst := k
			if order == "down" {
				inst = n - 1 - k
			}
			before := len(e.fast)
			e.fastFor(inst).slots = uint64(inst) + 1
			if len(e.fast) != before {
				grows++
			}
		}
		if grows > 32 || len(e.fast) > 2*n {
			t.Errorf("%s: %d instances grew the table %d times to %d entries", order, n, grows, len(e.fast))
		}
		for inst := range n {
			if got := e.fastFor(inst).slots; got != uint64(inst)+1 {
				t.Fatalf("%s: instance %d: slots %d", order, inst, got)
			}
		}
		if e.fastLo < 0 {
			t.Errorf("%s: table from %d", order, e.fastLo)
		}
	}
}

// scalarHandlerHead writes the opening of the random handler programs'
// locus L: its scalar state (s1 random, then extra lines), the head of
// its handler of T and the handler's locals, and names those variables
// for the expressions that follow.
func (g *progGen) scalarHandlerHead(extraState ...string) {
	g.line(0, "locus L {")
	g.line(1, fmt.Sprintf("var s1: int = %s;", g.intLit()))
	g.line(1, "var s2: int = 3;")
	g.line(1, "var fs: float = 0.5;")
	g.line(1, "var bs: bool = false;")
	for _, l := range extraState {
		g.line(1, l)
	}
	g.line(1, "on T(t) {")
	g.line(2, "var x = t.a;")
	g.line(2, "var y = t.b;")
	g.line(2, "var u = t.x;")
	g.line(2, "var v = fs;")
	g.line(2, "var p = t.p;")
	g.line(2, "var q = bs;")
	g.line(2, "var w1 = 0;")
	g.line(2, "var w2 = 0;")
	g.ints = []string{"t.a", "t.b", "x", "y", "s1", "s2"}
	g.bools = []string{"p", "q", "bs"}
	g.flts = []string{"u", "v", "fs"}
}
