package host

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/internal/tier"
	"github.com/hale-lang/hale/vm/value"
)

// treeGen writes random programs whose functions make and walk enum
// trees: compiled functions allocate them in the tier's arena
// (vm/internal/tier, alloc.go), loops in the handler call them (regions),
// some trees are shared (a node whose two children are one value), some
// reach the interpreter (printed whole, kept in a list, compared), and a
// small memory limit makes measures fall due inside compiled allocation,
// some of them over the limit.
type treeGen struct {
	r *rand.Rand
	b strings.Builder
}

func (g *treeGen) line(s string) { g.b.WriteString(s + "\n") }

// leaf is an expression of type T that makes a small tree from x (an
// int), never failing.
func (g *treeGen) leaf() string {
	return g.pickOf(
		"T::Leaf",
		"T::Tip(x % 7)",
		"T::Wt(float(x) * 0.5, x % 2 == 0, T::Leaf)",
		"T::Node(T::Leaf, T::Tip(x))",
	)
}

func (g *treeGen) pickOf(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// builder writes fn b<i>(d: int, x: int) -> T: a tree of depth d, in one
// of several shapes.
func (g *treeGen) builder(i int) {
	g.line(fmt.Sprintf("fn b%d(d: int, x: int) -> T {", i))
	g.line("    if d <= 0 { return " + g.leaf() + "; }")
	switch g.r.IntN(4) {
	case 0: // a perfect tree
		g.line(fmt.Sprintf("    return T::Node(b%d(d - 1, x + 1), b%d(d - 1, x * 3 + %d));", i, i, g.r.IntN(9)))
	case 1: // shared children: 2^d paths, d+1 objects
		g.line(fmt.Sprintf("    let s = b%d(d - 1, x + %d);", i, 1+g.r.IntN(5)))
		g.line("    return T::Node(s, s);")
	case 2: // a spine with weights, built in a loop
		g.line("    var t = " + g.leaf() + ";")
		g.line("    var k = 0;")
		g.line("    while k < d * 3 { t = T::Wt(float(k) + 0.25, k % 3 == 0, T::Node(t, T::Tip(k + x))); k += 1; }")
		g.line("    return t;")
	default: // a mix, via another shape of itself
		g.line(fmt.Sprintf("    if d %% 2 == 0 { return T::Wt(-1.5, true, b%d(d - 1, x)); }", i))
		g.line(fmt.Sprintf("    return T::Node(b%d(d - 1, x - 1), T::Tip(x));", i))
	}
	g.line("}")
}

// folds: sum (nodes, tips and weights), depth, and an overflow-prone
// product that may trap inside compiled code.
func (g *treeGen) folds() {
	g.line(`fn sum(t: T) -> int {
    match t {
        T::Leaf => { return 1; },
        T::Tip(n) => { return n; },
        T::Wt(w, b, c) => { if b { return int(w) + sum(c); } return sum(c) - 1; },
        T::Node(l, r) => { return 1 + sum(l) + sum(r); },
    }
}
fn prod(t: T) -> int {
    match t {
        T::Tip(n) => { return n + 2; },
        T::Node(l, r) => { return prod(l) * prod(r); },
        T::Wt(w, b, c) => { return prod(c) + 1; },
        T::Leaf => { return 3; },
    }
}`)
}

func randomTreeProgram(seed uint64) string {
	g := &treeGen{r: rand.New(rand.NewPCG(seed, 3))}
	g.line("enum T { Leaf, Tip(int), Wt(float, bool, T), Node(T, T) }")
	nb := 1 + g.r.IntN(3)
	for i := range nb {
		g.builder(i)
	}
	g.folds()
	// A compiled function that makes and drops trees in a loop: its
	// arena fills with garbage (and it may be handed back for room).
	g.line(fmt.Sprintf(`fn churn(n: int, d: int) -> int {
    var s = 0;
    var i = 0;
    while i < n { s += sum(b%d(d, i)); i += 1; }
    return s;
}`, g.r.IntN(nb)))
	if g.r.IntN(4) == 0 {
		fmt.Fprintf(&g.b, "@budget(steps: %d)\n", 2000+g.r.IntN(400000))
	}
	g.b.WriteString("locus Main {\n    on start {\n")
	g.line("        var kept: [T] = [];")
	for k := range 2 + g.r.IntN(3) {
		// Depths up to 16 for the trees kept (past a small limit),
		// up to 10 for those made in loops.
		b, d, dl := g.r.IntN(nb), g.r.IntN(17), g.r.IntN(11)
		switch g.r.IntN(5) {
		case 0: // a loop region: trees made and walked per iteration
			fmt.Fprintf(&g.b, "        var s%d = 0;\n        for i in 0..%d { s%d += sum(b%d(%d, i)); }\n        print(s%d);\n", k, 1+g.r.IntN(300), k, b, dl, k)
		case 1: // a tree reaching the interpreter, printed when small
			fmt.Fprintf(&g.b, "        let t%d = b%d(%d, %d);\n        push(kept, t%d);\n", k, b, d, g.r.IntN(50), k)
			if d <= 3 {
				fmt.Fprintf(&g.b, "        print(format(\"{}\", t%d));\n", k)
			}
			fmt.Fprintf(&g.b, "        print(sum(t%d));\n", k)
		case 2: // a product that may overflow inside compiled code
			fmt.Fprintf(&g.b, "        match try prod(b%d(%d, %d)) { Ok(v) => { print(v); }, Err(e) => { print(e.message); } }\n", b, d, g.r.IntN(9))
		case 3:
			fmt.Fprintf(&g.b, "        print(churn(%d, %d));\n", 1+g.r.IntN(200), dl)
		default: // equality of a kept tree with a fresh one
			fmt.Fprintf(&g.b, "        push(kept, b%d(%d, 1));\n        print(kept[len(kept) - 1] == b%d(%d, 1));\n", b, d, b, d)
		}
	}
	g.line("        print(len(kept));")
	g.b.WriteString("    }\n}\nmain { spawn Main; }\n")
	return g.b.String()
}

// TestTierRandomTreePrograms runs random programs of randomTreeProgram on
// the native engine and on the wasm engine with its second tier, under
// memory limits from 1 MiB to the default: output, traps (out of memory,
// overflow, budget) with their positions and stacks, and exit codes must
// be identical.
func TestTierRandomTreePrograms(t *testing.T) {
	n := randomPrograms(48, 12)
	limits := []int64{MinMemoryLimit, 2 << 20, 8 << 20, 0}
	oom, trapped, arena := 0, 0, 0
	answered := tierAnswered.Load()
	for seed := range uint64(n) {
		src := randomTreeProgram(seed)
		img, ok := tryCompile(src)
		if !ok {
			t.Fatalf("seed %d: the generated program does not compile:\n%s", seed, src)
		}
		limit := limits[seed%uint64(len(limits))]
		native := runWith(t, img, Options{Engine: EngineNative, MemoryLimit: limit})
		wasm := runWith(t, img, Options{Engine: EngineWasm, MemoryLimit: limit})
		if native.err != nil || wasm.err != nil {
			t.Fatalf("seed %d: errors: native %v, wasm %v", seed, native.err, wasm.err)
		}
		if native.stdout != wasm.stdout || native.stderr != wasm.stderr || native.res.Code != wasm.res.Code {
			t.Fatalf("seed %d (limit %d): engines disagree:\n%s\nnative (exit %d):\n%s%s\nwasm (exit %d):\n%s%s", seed, limit, src,
				native.res.Code, native.stdout, native.stderr, wasm.res.Code, wasm.stdout, wasm.stderr)
		}
		if strings.Contains(native.stderr, "out of memory") {
			oom++
		}
		if native.res.Code == ExitTrap {
			trapped++
		}
		if slices.Contains(tier.NewPlan(img).Allocs, true) {
			arena++
		}
	}
	// The generator must exercise the arena, traps out of memory, and
	// runs that finish.
	answered = tierAnswered.Load() - answered
	if arena < n || oom == 0 || trapped == n || answered < int64(n) {
		t.Fatalf("%d of %d programs allocate compiled, %d ran out of memory, %d trapped, %d tier calls answered", arena, n, oom, trapped, answered)
	}
	t.Logf("%d programs, %d allocate compiled, %d ran out of memory, %d trapped, %d tier calls answered", n, arena, oom, trapped, answered)
}

// TestArenaMeasures delivers messages one by one to a handler whose loop
// (a region) calls compiled functions that make trees in the arena, and
// which keeps some trees in its state (made by a compiled function
// called from the interpreter, so copied out of the arena), on a machine
// with the smallest memory limit: after every delivery the error, the
// charges since the last measure, the allowance and the state must be
// the same on the native engine, on the wasm engine with the tier and
// without it. A measure falls due inside compiled allocation every few
// deliveries; compiled code then hands the call back with the charges
// as they were before it, and the interpreter measures where it always
// does.
func TestArenaMeasures(t *testing.T) {
	img := compileAll(t, `
topic T { n: int, m: int }
enum Tr { E, N(Tr, Tr), W(int, Tr) }
fn make(d: int, x: int) -> Tr {
    if d <= 0 { return Tr::W(x, Tr::E); }
    if d % 3 == 0 { let s = make(d - 1, x + 1); return Tr::N(s, s); }
    return Tr::N(make(d - 1, x * 2 + 1), make(d - 1, x - 3));
}
fn sum(t: Tr) -> int {
    match t {
        Tr::E => { return 1; },
        Tr::W(v, c) => { return v % 1000 + sum(c); },
        Tr::N(l, r) => { return 1 + sum(l) + sum(r); },
    }
}
locus L {
    var acc: int = 0;
    var keep: [Tr] = [];
    on T(t) {
        var s = 0;
        for i in 0..t.n { s += sum(make(t.m, i)); }
        acc = (acc + s) % 1000003;
        if t.n % 4 == 0 { push(keep, make(t.m + 2, acc)); }
        if len(keep) > 5 { keep = []; }
    }
}
main { spawn L; }
`)
	var pubs [4][]string
	names, engines := chargeEngines(t, img, MinMemoryLimit, &pubs)
	engines = slices.Delete(engines, 2, 3) // no handler here is compiled whole
	names = slices.Delete(names, 2, 3)
	measured, failed, last := 0, 0, int64(0)
	r := rand.New(rand.NewPCG(11, 3))
	for k := range 400 {
		got := deliverAlike(t, k, names, engines, structPayload(value.Int(int64(1+r.IntN(30))), value.Int(int64(r.IntN(11)))))
		if strings.HasPrefix(got, "<nil>") {
			failed++
		}
		if c, _ := engines[0].(*nativeEngine).m.MemoryCounters(); c < last {
			measured++
		}
		last, _ = engines[0].(*nativeEngine).m.MemoryCounters()
	}
	if measured < 20 {
		t.Fatalf("%d measures in 400 deliveries, want 20 or more", measured)
	}
	t.Logf("%d measures, %d deliveries without error", measured, failed)
}

// deliverAlike delivers payload (delivery k) to instance 0 of each
// engine and fails unless every engine answers as the first: the error,
// the memory counters and the state (by its length and hash). It returns
// the first's answer.
func deliverAlike(t *testing.T, k int, names []string, engines []Engine, payload []byte) string {
	t.Helper()
	got := make([]string, len(engines))
	for i, e := range engines {
		err := e.Deliver(0, 0, payload)
		st, serr := e.State(0)
		h := fnv.New64a()
		h.Write(st)
		got[i] = fmt.Sprintf("%v, %s, state of %d bytes (fnv %x) %v", err, memCounters(t, e, 0), len(st), h.Sum64(), serr)
		if got[i] != got[0] {
			t.Fatalf("delivery %d: %s: %s\n%s: %s", k, names[0], got[0], names[i], got[i])
		}
	}
	return got[0]
}

// TestArenaSiblings runs tree-making workers on several consumers, whose
// machines share a wasm guest (siblings of its first machine), and a
// collector: the sum and the last kept tree are the native engine's.
func TestArenaSiblings(t *testing.T) {
	var src strings.Builder
	src.WriteString(`
topic R { v: int }
enum Tr { E, N(Tr, Tr), W(int, Tr) }
fn make(d: int, x: int) -> Tr {
    if d <= 0 { return Tr::W(x, Tr::E); }
    return Tr::N(make(d - 1, x + 1), make(d - 1, x * 3));
}
fn sum(t: Tr) -> int {
    match t {
        Tr::E => { return 0; },
        Tr::W(v, c) => { return v + sum(c); },
        Tr::N(l, r) => { return 1 + sum(l) + sum(r); },
    }
}
locus Collect {
    var n: int = 0;
    var total: int = 0;
    on R(r) {
        n += 1;
        total = (total + r.v) % 1000000007;
        if n == 12 { print(total); }
    }
}
`)
	spawns := "main {"
	for w := 1; w <= 12; w++ {
		spawns += fmt.Sprintf(" spawn Worker%d on pinned;", w)
		fmt.Fprintf(&src, `locus Worker%d {
    on start {
        var s = 0;
        for i in 0..200 { s += sum(make(6 + i %% 4, i + %d)); }
        let kept = make(9, s %% 97);
        publish R { v: s * 1000 + sum(kept) %% 1000 };
    }
}
`, w, w)
	}
	// Pinned, more of them than shared guests (8 on 2 cores): they
	// share guests.
	src.WriteString(spawns + " spawn Collect; }\n")
	img := compileAll(t, src.String())
	native := runWith(t, img, Options{Engine: EngineNative})
	wasm := runWith(t, img, Options{Engine: EngineWasm})
	if native.err != nil || wasm.err != nil || native.res.Code != 0 {
		t.Fatalf("errors: native %v (exit %d), wasm %v", native.err, native.res.Code, wasm.err)
	}
	if native.stdout == "" || native.stdout != wasm.stdout || native.stderr != wasm.stderr || wasm.res.Code != 0 {
		t.Fatalf("engines disagree: native %q %q, wasm %q %q (exit %d)", native.stdout, native.stderr, wasm.stdout, wasm.stderr, wasm.res.Code)
	}
}

// TestArenaDeepRecursion builds lists by recursion, whose allocations
// come on the way back up, under a limit that has measures fall due in
// the middle of a list: compiled calls handed back for a measure are
// tried compiled again from inner frames only while that costs little
// (vm's tierWastedMax), then interpreted; after every delivery the
// charges, the allowance and the state must be the native engine's.
func TestArenaDeepRecursion(t *testing.T) {
	img := compileAll(t, `
topic T { n: int }
enum L { Nil, Cons(int, L) }
fn build(n: int) -> L {
    if n == 0 { return L::Nil; }
    return L::Cons(n, build(n - 1));
}
fn count(l: L) -> int {
    match l {
        L::Nil => { return 0; },
        L::Cons(v, rest) => { return 1 + count(rest); },
    }
}
locus D {
    var total: int = 0;
    on T(t) {
        for i in 0..4 { total += count(build(t.n + i)); }
        let l = build(t.n / 4);
        total += count(l);
    }
}
main { spawn D; }
`)
	var pubs [4][]string
	names, engines := chargeEngines(t, img, 8<<20, &pubs)
	engines = slices.Delete(engines, 2, 3)
	names = slices.Delete(names, 2, 3)
	r := rand.New(rand.NewPCG(5, 8))
	for k := range 24 {
		deliverAlike(t, k, names, engines, structPayload(value.Int(int64(5000+r.IntN(20000)))))
	}
}

// TestTierHoldEnds: calls handed back for room in the arena (a tree too
// big for it) cost more than tierWastedMax steps, so every call is
// interpreted for a while; the tier is tried again once 8 MiB more has
// been charged, without waiting for a measure, which far from the memory
// limit may never come. (It waited for one: binary-trees 16 then ran
// interpreted to the end, 2.6 s against 0.9.)
func TestTierHoldEnds(t *testing.T) {
	img := compileAll(t, `
topic Go { n: int }
enum Tree { Empty, Node(Tree, Tree) }
fn make_big(d: int) -> Tree {
    if d == 0 { return Tree::Node(Tree::Empty, Tree::Empty); }
    return Tree::Node(make_big(d - 1), make_big(d - 1));
}
`+treeFuncs+`
locus Main {
    var total: int = 0;
    on start { total = check(make_big(19)); }
    on Go(g) { for i in 0..g.n { total += check(make(8)); } }
}
main { spawn Main; }
`)
	e := initedEngine(t, EngineWasm, img)
	if err := e.Deliver(0, vm.HandlerStart, nil); err != nil {
		t.Fatal(err)
	}
	before := tierAnswered.Load()
	if err := e.Deliver(0, 0, structPayload(value.Int(300))); err != nil {
		t.Fatal(err)
	}
	if tierAnswered.Load() == before {
		t.Fatal("after the big tree's calls were handed back, no call of the tier was answered in 300 rounds of small trees")
	}
	st, err := e.State(0)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := value.DecodeTuple(st, []*value.Type{{Kind: value.KindInt}})
	if err != nil || vs[0].AsInt() != (1<<20-1)+300*(1<<9-1) {
		t.Fatalf("total %v (%v), want %d", vs, err, (1<<20-1)+300*(1<<9-1))
	}
}
