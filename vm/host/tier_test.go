package host

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/internal/tier"
)

// treeFuncs make and walk perfect binary trees (as binary-trees does),
// for programs that declare enum Tree { Empty, Node(Tree, Tree) }.
const treeFuncs = `fn make(d: int) -> Tree {
    if d == 0 { return Tree::Node(Tree::Empty, Tree::Empty); }
    return Tree::Node(make(d - 1), make(d - 1));
}
fn check(t: Tree) -> int {
    match t {
        Tree::Empty => { return 0; },
        Tree::Node(l, r) => { return 1 + check(l) + check(r); },
    }
}`

// tierPrograms exercise every compiled operation, and every way compiled
// code hands a call back to the interpreter (overflow, division by zero,
// a shift count outside 0..63, a stack too deep, a budget used up). Each prints enough for a wrong
// result to show.
var tierPrograms = map[string]string{
	"fib_and_loops": `
fn fib(n: int) -> int {
    if n < 2 { return n; }
    return fib(n - 1) + fib(n - 2);
}
fn sum(n: int) -> int {
    var s = 0;
    for i in 0..n { s += i * 3 - i / 2 + i % 7; }
    var j = n;
    while j > 0 { s -= 1; j -= 1; }
    return s;
}
fn even(n: int) -> bool { if n == 0 { return true; } return odd(n - 1); }
fn odd(n: int) -> bool { if n == 0 { return false; } return even(n - 1); }
fn pick(a: int, b: int, c: bool) -> int {
    var r = min(a, b) + max(a, b) * 2 + abs(a - b);
    while c && r > 1000 { r = r / 2; }
    if !c || a >= b || a != -b { r = -r; }
    return r;
}
locus Main {
    fn twice(n: int) -> int { var t = 0; for i in 0..n { t += 2; } return t; }
    on start {
        print(fib(25));
        print(sum(100000));
        print(even(1001));
        print(odd(1001));
        print(pick(-7, 30000, true));
        print(pick(9, 3, false));
        print(twice(12));
    }
}
main { spawn Main; }
`,
	"floats": `
fn norm(n: int) -> float {
    var s = 0.0;
    var i = 0;
    while i < n {
        let x = float(i) / 3.0 - 7.25;
        s = s + x * x - abs(x) / 2.0;
        i += 1;
    }
    if s < 0.0 || s != s { return -s; }
    return std::math::floor(std::math::sqrt(s)) + std::math::ceil(s / 1000.0) - (-s) * 0.0;
}
fn ratio(n: int) -> bool {
    var f = 1.0;
    for i in 0..n { f = f * 1.5; }
    return f > 1000.0 && f <= 1.0e300 && f == f;
}
locus Main { on start { print(norm(1000)); print(ratio(20)); print(ratio(3)); print(norm(0) == 0.0); } }
main { spawn Main; }
`,
	"overflow": `
fn fact(n: int) -> int { if n <= 1 { return 1; } return n * fact(n - 1); }
locus Main { on start { print(fact(20)); print(fact(21)); } }
main { spawn Main; }
`,
	"mul_bounds": `
fn mul(a: int, b: int) -> int { return a * b; }
fn sweep(lo: int, n: int, b: int) -> int {
    var s = 0;
    for i in 0..n { s ^= mul(lo + i, b) + i * 7; }
    return s;
}
locus Main {
    on start {
        let m = -9223372036854775807 - 1;
        print(mul(2147483647, 2147483647));
        print(mul(-2147483648, -2147483648));
        print(mul(2147483648, 2147483648));
        print(mul(-2147483649, 2147483647));
        print(mul(3037000499, 3037000499));
        print(mul(4294967296, 2147483647));
        print(mul(m, 1));
        print(mul(1, m));
        print(mul(0, m));
        print(sweep(2147483640, 20, 3));
        print(sweep(-2147483660, 30, -2147483648));
        print(sweep(4294967280, 10, 2147483647));
        print(mul(-1, m));
    }
}
main { spawn Main; }
`,
	"mul_overflow_wide": `
fn mul(a: int, b: int) -> int { return a * b; }
locus Main { on start { print(mul(4294967296, 2147483647)); print(mul(4294967296, 2147483648)); } }
main { spawn Main; }
`,
	"mul_overflow_square": `
fn mul(a: int, b: int) -> int { return a * b; }
locus Main { on start { print(mul(3037000499, 3037000499)); print(mul(-3037000500, 3037000500)); } }
main { spawn Main; }
`,
	"add_overflow": `
fn grow(n: int) -> int { var x = 1; while true { x += x; } return x; }
locus Main { on start { print(grow(1)); } }
main { spawn Main; }
`,
	"div_zero": `
fn f(n: int) -> int { var s = 0; for i in 0..n { s += 100 / (5 - i); } return s; }
locus Main { on start { print(f(5)); print(f(6)); } }
main { spawn Main; }
`,
	"rem_minus_one": `
fn f(n: int, d: int) -> int { var s = 0; for i in 0..n { s += (i * 7) % d; } return s; }
fn g(a: int) -> int { var x = a; for i in 0..1 { x = x % -1; } return x; }
locus Main { on start { print(f(10, -1)); print(f(10, 3)); print(g(-9223372036854775807 - 1)); } }
main { spawn Main; }
`,
	"neg_overflow": `
fn f(a: int) -> int { var x = a; for i in 0..1 { x = -x; } return x; }
locus Main { on start { print(f(5)); print(f(-9223372036854775807 - 1)); } }
main { spawn Main; }
`,
	"format": `
fn square(n: int) -> int { var s = 0; for i in 0..n { s += n; } return s; }
fn width(n: int) -> int {
    var w = 0;
    for k in 0..2 { w += len(format("{:x}|{:>6.2}", square(n + k), float(n) / 3.0)); }
    return w;
}
locus Main {
    on start {
        var s = 0;
        for i in 0..3000 { s += width(i); }
        print(s);
        print(format("{:08b} {}", square(7), width(7)));
    }
}
main { spawn Main; }
`,
	"bits": `
fn mix(n: int) -> int {
    var h = 1469598103934665603;
    for i in 0..n {
        h = ((h ^ i) >> 1) + (h >> 7);
        h = h & !(1 << (i % 64)) | (i << 3);
        h ^= h >> 13;
        h <<= 1;
        h |= 1;
        h &= 9223372036854775807;
    }
    return h;
}
fn shift(n: int) -> int { var x = 1; for i in 0..n { x = (x << 1) >> 1; x = x << i; } return x; }
fn back(n: int) -> int { var x = 1; for i in 0..1 { x = x >> n; } return x; }
locus Main { on start { print(mix(1000)); print(shift(63)); print(back(63)); print(back(-1)); } }
main { spawn Main; }
`,
	"deep": `
fn down(n: int) -> int { if n > 1000000 { return 0; } return down(n + 1) + 1; }
locus Main { on start { print(down(0)); } }
main { spawn Main; }
`,
	"void_and_assert": `
fn check(n: int) {
    var s = 0;
    for i in 0..n { s += i; }
    assert(s < 100, "sum too large");
}
fn count(n: int) -> int { var c = 0; for i in 0..n { check(i); c += 1; } return c; }
locus Main { on start { check(5); print("ok"); print(count(14)); print(count(20)); } }
main { spawn Main; }
`,
	// try around calls of compiled functions that trap: the tier hands
	// the trapping call back and the interpreter catches it at the try's
	// frame, also from deep inside a recursion.
	"try": `
fn hot(a: int, b: int) -> int { var s = 0; for i in 0..50 { s += a / (b - i); } return s; }
fn down(n: int, z: int) -> int { if n == 0 { return 1 / z; } return down(n - 1, z) + 1; }
locus Main {
    on start {
        for b in 40..60 { print(try hot(1000, b)); }
        print(try down(300, 0));
        print(try down(300, 1));
        var caught = 0;
        for k in 0..200 {
            match try hot(7, k) { Ok(v) => {}, Err(e) => { caught += 1; } }
        }
        print(caught);
    }
}
main { spawn Main; }
`,
	"budget": `
fn fib(n: int) -> int { if n < 2 { return n; } return fib(n - 1) + fib(n - 2); }
topic Work { n: int }
@budget(steps: 200000)
locus Worker {
    on Work(w) { print(fib(w.n)); }
}
locus Boss { on start { publish Work { n: 15 }; publish Work { n: 25 }; } }
main { spawn Boss; spawn Worker; }
`,
	// guards calling compiled functions: the guard runs nested in the
	// publisher's handler and the tier's steps count toward its budget.
	"guard": `
fn fib(n: int) -> int { if n < 2 { return n; } return fib(n - 1) + fib(n - 2); }
topic Work { n: int }
locus Worker(parity: int) {
    on Work(w) if fib(w.n) % 2 == parity { print(format("{} takes {}", parity, w.n)); }
}
@budget(steps: 400000)
locus Boss { on start { for n in [10, 12, 15, 17, 25] { publish Work { n: n }; } } }
main { spawn Boss; spawn Worker(0) as even; spawn Worker(1) as odd; }
`,
	// lists and structs: compiled code reads and writes them in the
	// guest's memory; every trap after a write (an index out of range, a
	// list changed while a for loop iterates over it, an overflow, the
	// budget) undoes the writes and the interpreter runs the call again,
	// so what the program prints after a caught trap shows the
	// interpreter's partial writes, not the tier's.
	"lists_structs": `
type Body { x: float, v: float, n: int, on: bool, hist: [int] }
fn step(bs: [Body], dt: float) {
    for b in bs {
        b.x += b.v * dt;
        b.n += 1;
        b.on = !b.on;
        b.hist[b.n % len(b.hist)] = b.n;
    }
}
fn total(bs: [Body]) -> float {
    var s = 0.0;
    for i in 0..len(bs) { let b = bs[i]; if b.on { s += b.x; } else { s -= b.v; } }
    return s;
}
fn scale(xs: [float], k: float, upto: int) {
    for i in 0..upto { xs[i] = xs[i] * k; }
}
fn bump(xs: [int], i: int) -> int {
    for j in 0..3 { xs[j] = xs[j] + 1; }
    xs[i] = xs[i] * 1000000000000;
    return xs[i];
}
fn iterset(xs: [int]) -> int { var s = 0; for x in xs { s += x; xs[0] = s; } return s; }
fn early(xs: [int]) -> int { for x in xs { for y in xs { if x * y > 12 { return x * y; } } } return -1; }
fn many(xs: [int], n: int) -> int { var s = 0; for k in 0..n { for i in 0..len(xs) { xs[i] = xs[i] + 1; } s += xs[0]; } return s; }
fn body(x: float) -> Body { return Body { x: x, v: 1.0, n: 0, on: true, hist: [0, 0, 0] }; }
locus Main {
    on start {
        let bs = [body(1.0), body(2.5), body(-4.0)];
        for _ in 0..50 { step(bs, 0.5); }
        print(format("{:.6} {} {} {}", total(bs), bs[0].n, bs[1].on, bs[2].hist));
        let xs = [1.0, 2.0, 3.0];
        scale(xs, 2.0, 3);
        match try scale(xs, 10.0, 4) { None => { print("no trap"); }, Some(e) => { print(e.message); } }
        print(xs);
        let ys = [1, 2, 3, 4];
        print(bump(ys, 3));
        match try bump(ys, 3) { Ok(v) => { print(v); }, Err(e) => { print(e.message); } }
        match try bump(ys, 9) { Ok(v) => { print(v); }, Err(e) => { print(e.message); } }
        print(ys);
        match try iterset(ys) { Ok(v) => { print(v); }, Err(e) => { print(e.message); } }
        print(ys);
        print(early([1, 2, 3, 4, 5]));
        print(early([1, 2]));
        let big: [int] = [];
        for i in 0..3000 { push(big, i); }
        print(many(big, 20));
        print(many(big, 3));
        print(big[2999]);
    }
}
main { spawn Main; }
`,
	// enums read in compiled code: variants tested, values taken out of
	// them (scalars, lists, structs, enums), in recursion and in lists and
	// fields; a unit variant's values and a payload whose value differs in
	// type between variants stay with the interpreter.
	"enums": `
enum Tree { Empty, Node(Tree, Tree) }
enum Shape { Dot, Circle(float), Poly([int]), Tagged(Tree, int) }
type Box { s: Shape, w: int }
` + treeFuncs + `
fn depth(t: Tree, budget: int) -> int {
    match t {
        Tree::Empty => { return 0; },
        Tree::Node(l, r) => { return 1 / budget + max(depth(l, budget - 1), depth(r, budget - 1)); },
    }
}
fn area(shapes: [Shape]) -> float {
    var a = 0.0;
    for s in shapes {
        match s {
            Shape::Dot => { a += 0.5; },
            Shape::Circle(r) => { a += 3.0 * r * r; },
            Shape::Poly(xs) => { for x in xs { a += float(x); } xs[0] = xs[0] + 1; },
            Shape::Tagged(t, n) => { a += float(check(t) * n); },
        }
    }
    return a;
}
fn weigh(bs: [Box]) -> int {
    var w = 0;
    for b in bs {
        match b.s {
            Shape::Poly(xs) => { w += len(xs) * b.w; },
            Shape::Dot => { w += 1; },
            _ => { w += 100; },
        }
    }
    return w;
}
locus Main {
    on start {
        var total = 0;
        for d in 0..10 { total += check(make(d)); }
        print(total);
        print(depth(make(6), 20));
        match try depth(make(6), 4) { Ok(v) => { print(v); }, Err(e) => { print(e.message); } }
        let shapes = [Shape::Dot, Shape::Circle(1.5), Shape::Poly([1, 2, 3]), Shape::Tagged(make(3), 2), Shape::Poly([])];
        match try area(shapes) { Ok(v) => { print(v); }, Err(e) => { print(e.message); } }
        print(shapes);
        let shapes2 = [Shape::Poly([4]), Shape::Circle(0.5)];
        print(area(shapes2));
        print(area(shapes2));
        print(shapes2);
        print(weigh([Box { s: Shape::Poly([1, 2]), w: 3 }, Box { s: Shape::Dot, w: 9 }, Box { s: Shape::Circle(2.0), w: 1 }]));
    }
}
main { spawn Main; }
`,
	"lists_budget": `
fn fill(xs: [int], n: int) { for k in 0..n { for i in 0..len(xs) { xs[i] = xs[i] + k; } } }
@budget(steps: 20000)
locus Main {
    on start {
        let xs = [0, 0, 0, 0, 0, 0, 0, 0];
        fill(xs, 100);
        print(xs);
        fill(xs, 1000);
        print(xs);
    }
}
main { spawn Main; }
`,
	// a compiled call that writes more than the largest undo log holds:
	// after it fills each size once, the interpreter runs it, its loops
	// compiled as regions (TestTierLogTooSmall).
	"log_too_small": `
fn fill(xs: [int], n: int) {
    for r in 0..n { for i in 0..len(xs) { xs[i] = xs[i] + r; } }
}
locus Main {
    on start {
        var xs: [int] = [];
        for i in 0..1000 { push(xs, i); }
        fill(xs, 300);
        var s = 0;
        for i in 0..len(xs) { s += xs[i]; }
        print(s);
    }
}
main { spawn Main; }
`,
	// for loops over lists in a handler, whose list codegen keeps in a
	// temporary (the region learns its type from the whole handler,
	// tier's tempTypes): state, a local, a call's result, a field; a
	// temporary reused for another type between loops, a break, a try
	// around a trap inside one.
	"for_in_handler": `
type Box { fs: [float], n: int }
fn evens(n: int) -> [int] { var xs: [int] = []; for i in 0..n { push(xs, 2 * i); } return xs; }
fn boom(x: int) -> int { return 100 / (x - 6); }
locus Main {
    var items: [int] = [];
    on start {
        for i in 0..50 { push(items, i * 3 % 11); }
        var s = 0;
        for x in items { s += x; }
        let b = Box { fs: [0.5, 1.5, 2.25], n: 3 };
        var f = 0.0;
        for r in 0..4 { for v in b.fs { f = f * 0.5 + v * float(r); } }
        for x in evens(20) { if x > 30 { break; } s += x; }
        let names = ["a", "bb", "ccc"];
        for nm in names { s += len(nm); }
        for x in evens(5) {
            match try boom(x) { Ok(v) => { s += v; }, Err(e) => { print(e.message); } }
        }
        for x in items { if x == 7 { s += 1000; } s -= x; }
        print(format("{} {:.6}", s, f));
    }
}
main { spawn Main; }
`,
	"guard_ok": `
fn fib(n: int) -> int { if n < 2 { return n; } return fib(n - 1) + fib(n - 2); }
topic Work { n: int }
locus Worker(parity: int) {
    on Work(w) if fib(w.n) % 2 == parity { print(format("{} takes {}", parity, w.n)); }
}
locus Boss { on start { for n in [10, 12, 15, 17, 20] { publish Work { n: n }; } } }
main { spawn Boss; spawn Worker(0) as even; spawn Worker(1) as odd; }
`,
}

// TestTierAgreesWithInterpreter runs each tier program on the native
// engine (no tier) and on the wasm engine (with the tier): output, trap
// reports and exit codes must be identical.
func TestTierAgreesWithInterpreter(t *testing.T) {
	for name, src := range tierPrograms {
		t.Run(name, func(t *testing.T) {
			img := compileAll(t, src)
			native := runWith(t, img, Options{Engine: EngineNative})
			wasm := runWith(t, img, Options{Engine: EngineWasm})
			if native.err != nil || wasm.err != nil {
				t.Fatalf("errors: native %v, wasm %v", native.err, wasm.err)
			}
			if native.stdout != wasm.stdout || native.stderr != wasm.stderr || native.res.Code != wasm.res.Code {
				t.Fatalf("engines disagree:\nnative (exit %d):\n%s%s\nwasm (exit %d):\n%s%s",
					native.res.Code, native.stdout, native.stderr, wasm.res.Code, wasm.stdout, wasm.stderr)
			}
			t.Logf("exit %d\n%s%.300s", native.res.Code, native.stdout, native.stderr)
		})
	}
}

// TestTierPlanned checks which functions a program's tier calls through
// the host, and that the module compiles.
func TestTierPlanned(t *testing.T) {
	_, p, img := prepareTier(t, tierPrograms["fib_and_loops"])
	var entries []string
	for f, e := range p.plan.Entry {
		if e {
			entries = append(entries, img.Funcs[f].Name)
		}
	}
	if got, want := strings.Join(entries, " "), "fib sum even odd pick Main.twice"; got != want {
		t.Fatalf("entries %q, want %q", got, want)
	}
}

// TestTierPlansListsStructs: functions that read lists and structs and
// write their scalar elements and fields are compiled, and their calls
// are answered by the tier, not only handed back; a function that builds
// a struct is not compiled.
func TestTierPlansListsStructs(t *testing.T) {
	_, p, img := prepareTier(t, tierPrograms["lists_structs"])
	var entries []string
	for f, e := range p.plan.Entry {
		if e {
			entries = append(entries, img.Funcs[f].Name)
		}
	}
	if got, want := strings.Join(entries, " "), "step total scale bump iterset early many"; got != want {
		t.Fatalf("entries %q, want %q", got, want)
	}
	e, _, err := startOnWasm(t, tierPrograms["lists_structs"])
	if err != nil {
		t.Fatal(err)
	}
	// Answered: the loop calling step (a region: moving bs into the
	// call's window runs in place, and step's 50 calls are compiled
	// calls inside it), total, scale, bump, 2 earlies and both calls of
	// many. Handed back: a scale, 2 bumps and iterset, which trap, 7
	// tries of many's first call, which filled the undo log (60,000
	// writes): the log doubles from 512 entries at each try, and the
	// call runs compiled again, until it holds 65,536; and the loop of
	// pushes (a region running each push in place), given up at its
	// 64th push (vm's regionMinCompiled).
	if ti := e.g.tier; ti == nil || ti.done != 8 || ti.fellBack != 12 {
		t.Fatalf("tier calls: %d answered, %d handed back; want 8 and 12", ti.done, ti.fellBack)
	}
}

// TestTierPlansEnums: functions that test variants and take values out
// of enums are compiled, and so is make, which makes a tree in the
// arena; the recursive check is answered by the tier.
func TestTierPlansEnums(t *testing.T) {
	_, p, img := prepareTier(t, tierPrograms["enums"])
	var entries []string
	for f, e := range p.plan.Entry {
		if e {
			entries = append(entries, img.Funcs[f].Name)
		}
	}
	if got, want := strings.Join(entries, " "), "make check depth area weigh"; got != want {
		t.Fatalf("entries %q, want %q", got, want)
	}
	e, _, err := startOnWasm(t, tierPrograms["enums"])
	if err != nil {
		t.Fatal(err)
	}
	// The loop of checks of new trees is one region call (make and
	// check compiled calls inside it); make's trees for depth and area
	// are copied out of the arena.
	if ti := e.g.tier; ti == nil || ti.done < 6 || ti.fellBack == 0 {
		t.Fatalf("tier calls: %d answered, %d handed back; want at least 6 and 1", ti.done, ti.fellBack)
	}
}

// TestTierPlansBitOps: functions using the bit operators and shifts are
// compiled (so the "bits" program above runs them in the tier).
func TestTierPlansBitOps(t *testing.T) {
	_, p, img := prepareTier(t, tierPrograms["bits"])
	var entries []string
	for f, e := range p.plan.Entry {
		if e {
			entries = append(entries, img.Funcs[f].Name)
		}
	}
	if got, want := strings.Join(entries, " "), "mix shift back"; got != want {
		t.Fatalf("entries %q, want %q", got, want)
	}
}

// TestTierPlansFormat: a scalar function that calls format is left to the
// interpreter, the scalar function it calls is compiled (the "format"
// program above checks that they agree).
func TestTierPlansFormat(t *testing.T) {
	_, p, img := prepareTier(t, tierPrograms["format"])
	var entries []string
	for f, e := range p.plan.Entry {
		if e {
			entries = append(entries, img.Funcs[f].Name)
		}
	}
	if got, want := strings.Join(entries, " "), "square"; got != want {
		t.Fatalf("entries %q, want %q", got, want)
	}
}

// TestTierPlannedTry checks that the functions the "try" program calls
// inside try run in the tier (so that TestTierAgreesWithInterpreter tests
// catching their traps), and the function holding the tries does not.
func TestTierPlannedTry(t *testing.T) {
	_, p, img := prepareTier(t, tierPrograms["try"])
	var entries []string
	for f, e := range p.plan.Entry {
		if e {
			entries = append(entries, img.Funcs[f].Name)
		}
	}
	if got, want := strings.Join(entries, " "), "hot down"; got != want {
		t.Fatalf("entries %q, want %q", got, want)
	}
}

// TestTierBudgetExact finds the smallest budget with which a handler
// calling a compiled function succeeds on the native engine, and checks
// that the wasm engine succeeds with it and traps, at the same place,
// with one step less: the tier counts every step as the interpreter does.
func TestTierBudgetExact(t *testing.T) {
	const src = `
fn fib(n: int) -> int { if n < 2 { return n; } return fib(n - 1) + fib(n - 2); }
fn loop(n: int) -> int { var s = 0; for i in 0..n { s += i; } return s; }
@budget(steps: %d)
locus Main { on start { print(fib(12) + loop(50) + fib(3)); } }
main { spawn Main; }
`
	run := func(budget int, kind EngineKind) outcome {
		img := compileAll(t, fmt.Sprintf(src, budget))
		return runWith(t, img, Options{Engine: kind})
	}
	lo, hi := 1, 100000
	for lo < hi {
		mid := (lo + hi) / 2
		if run(mid, EngineNative).res.Code == 0 {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	need := lo
	if need < 1000 || need >= 100000 {
		t.Fatalf("implausible step count %d", need)
	}
	for _, b := range []int{need - 1, need} {
		native, wasm := run(b, EngineNative), run(b, EngineWasm)
		if native.stdout != wasm.stdout || native.stderr != wasm.stderr || native.res.Code != wasm.res.Code {
			t.Fatalf("budget %d: engines disagree:\nnative (exit %d):\n%s%s\nwasm (exit %d):\n%s%s",
				b, native.res.Code, native.stdout, native.stderr, wasm.res.Code, wasm.stdout, wasm.stderr)
		}
	}
	if got := run(need-1, EngineWasm); got.res.Code != ExitTrap || !strings.Contains(got.stderr, "budget exhausted") {
		t.Fatalf("budget %d: exit %d, %s; want the budget trap", need-1, got.res.Code, got.stderr)
	}
}

// TestTierInterrupt cancels a run whose handler is in an endless compiled
// loop: the tier polls as the interpreter does, so the run stops.
func TestTierInterrupt(t *testing.T) {
	img := compileAll(t, `
fn spin(n: int) -> int { var i = 0; while i >= 0 { i = (i + n) % 1000; } return i; }
locus Main { on start { print(spin(1)); } }
main { spawn Main; }
`)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, img, Options{Engine: EngineWasm, Stdout: &strings.Builder{}, Stderr: &strings.Builder{}})
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the run took %v to stop", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) || res.Code != ExitCanceled {
		t.Fatalf("res %+v, err %v; want exit %d", res, err, ExitCanceled)
	}
}

// TestTierCompilesCorpus compiles the tier of every example and every
// program in the conformance scripts that compiles: wazero must accept
// each module, since prepare quietly runs without a tier it cannot
// compile.
func TestTierCompilesCorpus(t *testing.T) {
	srcs := map[string][]byte{}
	examples, _ := filepath.Glob("../../examples/*.hl")
	for _, f := range examples {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs[f] = b
	}
	scripts, _ := filepath.Glob("../../conformance/testdata/*/*.txtar")
	for _, f := range scripts {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range a.Files {
			if strings.HasSuffix(file.Name, ".hl") {
				srcs[f+":"+file.Name] = file.Data
			}
		}
	}
	for name, src := range tierPrograms {
		srcs[name] = []byte(src)
	}
	if len(srcs) < 50 {
		t.Fatalf("only %d programs found", len(srcs))
	}
	w, err := defaultWasm()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	compiled := 0
	for name, src := range srcs {
		img, ok := tryCompile(string(src))
		if !ok {
			continue
		}
		bin, err := tier.Compile(img, tier.NewPlan(img))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if bin == nil {
			continue
		}
		mod, err := w.rt.CompileModule(ctx, bin)
		if err != nil {
			t.Errorf("%s: the tier does not compile: %v", name, err)
			continue
		}
		mod.Close(ctx)
		compiled++
	}
	if compiled < 10 {
		t.Fatalf("only %d programs have a tier", compiled)
	}
	t.Logf("%d of %d programs have a tier", compiled, len(srcs))
}

// tryCompile compiles a program that may not compile (conformance
// scripts hold bad programs on purpose).
func tryCompile(src string) (*image.Image, bool) {
	img, err := lowerSrc(src)
	return img, err == nil
}

func tierPlanHasEntries(img *image.Image) bool { return tier.NewPlan(img).HasEntries() }

// TestTierRuns drives a wasm engine directly and counts the tier calls it
// answered: a tier that always handed calls back would pass every
// agreement test.
func TestTierRuns(t *testing.T) {
	e, printed, err := startOnWasm(t, `
fn fib(n: int) -> int { if n < 2 { return n; } return fib(n - 1) + fib(n - 2); }
fn quot(a: int, b: int) -> int { var q = 0; for i in 0..1 { q = a / b; } return q; }
locus Main { on start { print(fib(20) + quot(7, 2)); print(quot(1, 0)); } }
main { spawn Main; }
`)
	var trap *vm.Trap
	if !errors.As(err, &trap) || trap.Message != "division by zero" {
		t.Fatalf("Deliver: %v, want the division by zero trap", err)
	}
	if ti := e.g.tier; ti == nil || ti.done != 2 || ti.fellBack != 1 {
		t.Fatalf("tier calls: %+v; want 2 answered (fib, quot(7, 2)) and 1 handed back (quot(1, 0))", ti)
	}
	if len(printed) != 1 || !strings.HasSuffix(printed[0], "6768") {
		t.Fatalf("printed %q, want one line ending 6768", printed)
	}
}

// TestTierRejectsBadCalls feeds the host's side of the tier malformed
// calls: each is refused, none panics.
func TestTierRejectsBadCalls(t *testing.T) {
	w, p, img := prepareTier(t, tierPrograms["fib_and_loops"])
	ctx := context.Background()
	ti, err := w.newTierInstance(ctx, p, nil, func() ([]byte, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer ti.close(ctx)
	fib := -1
	for f := range img.Funcs {
		if img.Funcs[f].Name == "fib" {
			fib = f
		}
	}
	call := func(budget uint64) []byte {
		b := binary.AppendUvarint(nil, uint64(fib))
		b = binary.AppendUvarint(b, budget)
		b = append(b, 1, 0, 0, 0, 0) // depth 1, height 0, no undo log, no allocation block
		return binary.LittleEndian.AppendUint64(b, 10)
	}
	good := call(1 << 20)
	if res, err := ti.call(good); err != nil || len(res) < 10 || res[0] != vm.TierDone || res[1] != 55 {
		t.Fatalf("fib(10): %v, %v", res, err)
	}
	for _, bad := range [][]byte{
		nil,
		{0xFF},
		good[:len(good)-1],
		append(append([]byte(nil), good...), 0),
		{byte(len(img.Funcs)), 100, 1, 0},
		{byte(fib), 100, 1, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 10, 0, 0, 0, 0, 0, 0, 0}, // an allocation block past 4 GiB
		{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
	} {
		if res, err := ti.call(bad); err == nil {
			t.Errorf("call(%v) = %v, want an error", bad, res)
		}
	}
	// A budget too small: handed back to the interpreter.
	if res, err := ti.call(call(5)); err != nil || len(res) != 1 || res[0] != vm.TierFallback {
		t.Fatalf("fib(10) with 5 steps: %v, %v; want a fallback", res, err)
	}
}

// FuzzTierCall feeds the host's side of the tier arbitrary call bytes,
// as a broken or hostile guest could: it must answer or refuse, never
// panic. The program's entries end whatever their arguments.
func FuzzTierCall(f *testing.F) {
	w, p, _ := prepareTier(f, `
fn sum(n: int, f: float, b: bool) -> int { var s = 0; for i in 0..min(n, 1000) { if b { s += i; } } return s; }
fn down(n: int) -> int { if n <= 0 || n > 5000 { return 0; } return down(n - 1) + 1; }
locus Main { on start { print(sum(10, 1.5, true) + down(3)); } }
main { spawn Main; }
`)
	ctx := context.Background()
	ti, err := w.newTierInstance(ctx, p, nil, func() ([]byte, error) { return nil, nil })
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ti.close(ctx) })
	for fn, params := range map[int]int{0: 3, 1: 1} {
		b := binary.AppendUvarint(nil, uint64(fn))
		b = append(b, 0xFF, 0xFF, 0x03, 1, 0, 0, 0)
		for range params {
			b = binary.LittleEndian.AppendUint64(b, 7)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		res, err := ti.call(args)
		if err != nil {
			return
		}
		if len(res) == 0 || (res[0] != vm.TierDone && res[0] != vm.TierFallback) {
			t.Fatalf("call(%x) = %x", args, res)
		}
	})
}

// TestTierDropsShortCalls checks that a compiled entry whose calls are
// short is interpreted after its first 32 calls (a trip through the host
// would cost more), while one whose calls are long stays compiled.
func TestTierDropsShortCalls(t *testing.T) {
	const src = `
fn tiny(n: int) -> int { var s = 0; for i in 0..n { s += i; } return s; }
locus Main { var k: int = 0; on start { var t = 0; %s print(t); } }
main { spawn Main; }
`
	// Each loop starts by reading instance state, so it is no region
	// (a region's header must compile or run in place): tiny is called
	// through the host.
	e, printed, err := startOnWasm(t, fmt.Sprintf(src, `for i in 0..100 { k += 1; t += tiny(3); } for i in 0..100 { k += 2; t += tiny(100); }`))
	if err != nil {
		t.Fatal(err)
	}
	// tiny(3) takes 12 steps: after 32 calls it is interpreted, for good.
	if ti := e.g.tier; ti == nil || ti.done != 32 || ti.fellBack != 0 {
		t.Fatalf("tier calls: %+v; want 32 answered", ti)
	}
	if len(printed) != 1 || !strings.HasSuffix(printed[0], "495300") {
		t.Fatalf("printed %q, want one line ending 495300", printed)
	}
	if e, _, err = startOnWasm(t, fmt.Sprintf(src, `for i in 0..100 { k += 1; t += tiny(40); }`)); err != nil {
		t.Fatal(err)
	}
	if ti := e.g.tier; ti == nil || ti.done != 100 {
		t.Fatalf("tier calls: %+v; want all 100 answered", ti)
	}
}

// TestTierLogTooSmall: a compiled call that writes more than the
// largest undo log holds (vm's tierLogMax, 262,144 writes) is taken off
// the tier after it fills each size of log once, and the interpreter runs
// it with its loops compiled as regions, which keep their writes at each
// header; the result is the interpreter's. Before, the call ran
// interpreted to its end, its loops included, ten times slower.
func TestTierLogTooSmall(t *testing.T) {
	src := tierPrograms["log_too_small"]
	_, p, img := prepareTier(t, src)
	var funcs []string
	for _, r := range p.plan.Regions {
		funcs = append(funcs, img.Funcs[r.Func].Name)
	}
	if got, want := strings.Join(funcs, " "), "fill fill Main.on start Main.on start"; got != want {
		t.Fatalf("regions in %q, want %q", got, want)
	}
	e, printed, err := startOnWasm(t, src)
	if err != nil {
		t.Fatal(err)
	}
	// Handed back: fill's call, once with each log of 512 to 262,144
	// entries (10 sizes), and the loop of pushes, which runs each push
	// in place and is given up at its 64th (vm's regionMinCompiled).
	// Answered: the loop summing, and fill's loops: its outer loop
	// returns each time it commits with its log past half full (5 times
	// in 300,000 writes), and its inner loop's region finishes the
	// inner loop under way.
	if ti := e.g.tier; ti == nil || ti.fellBack != 11 || ti.done != 10 {
		t.Fatalf("tier calls: %d answered, %d handed back; want 10 and 11", ti.done, ti.fellBack)
	}
	// The host calls before the print are the polls of a long call.
	if len(printed) == 0 || !strings.HasSuffix(printed[len(printed)-1], "45349500") {
		t.Fatalf("host calls %q, want the last to print 45349500", printed)
	}
}

// TestTierImports keeps the tier's module inside the sandbox: it imports
// one function, hale_tier.refill, and, only when its code reads lists or
// structs, the interpreter guest's memory, and, only when a loop region
// runs an instruction in place, the guest's export hale_step, which an
// engine resolves to its own guest's; it exports no memory. So compiled
// code can reach nothing but its arguments, the host's fuel, and the
// memory and the interpreter of the guest that called it.
func TestTierImports(t *testing.T) {
	refill, step := tier.ImportModule+"."+tier.ImportRefill, tier.GuestModule+"."+tier.GuestStep
	for _, c := range []struct{ program, funcs, memory string }{
		{"fib_and_loops", refill, ""},
		{"lists_structs", refill + " " + step, tier.GuestModule + "." + tier.GuestMemory},
	} {
		_, p, _ := prepareTier(t, tierPrograms[c.program])
		var imports []string
		for _, f := range p.tier.ImportedFunctions() {
			mod, name, _ := f.Import()
			imports = append(imports, mod+"."+name)
		}
		if got := strings.Join(imports, " "); got != c.funcs {
			t.Fatalf("%s: the tier imports %q, want only %q", c.program, got, c.funcs)
		}
		var memories []string
		for _, m := range p.tier.ImportedMemories() {
			mod, name, _ := m.Import()
			memories = append(memories, mod+"."+name)
		}
		if got := strings.Join(memories, " "); got != c.memory || len(p.tier.ExportedMemories()) != 0 {
			t.Fatalf("%s: the tier imports memories %q and exports %d, want %q and none", c.program, got, len(p.tier.ExportedMemories()), c.memory)
		}
	}
	e, _, err := startOnWasm(t, tierPrograms["lists_structs"])
	if err != nil {
		t.Fatal(err)
	}
	// A byte written in the guest's memory is seen in the tier's.
	gm, tm := e.g.mod.Memory(), e.g.tier.mod.Memory()
	if tm == nil || e.g.tier.guest == nil {
		t.Fatal("the tier has no memory")
	}
	last := gm.Size() - 1
	old, _ := gm.ReadByte(last)
	for _, b := range []byte{0xA5, 0x5A} {
		gm.WriteByte(last, b)
		if got, ok := tm.ReadByte(last); !ok || got != b {
			t.Fatal("the tier's memory is not its guest's")
		}
	}
	gm.WriteByte(last, old)
}

// startOnWasm runs src's only instance's on start on a wasm engine of its
// own and returns the engine (closed with the test), what it printed and
// Deliver's error.
func startOnWasm(t *testing.T, src string) (*wasmEngine, []string, error) {
	t.Helper()
	img := compileAll(t, src)
	var printed []string
	e, err := NewEngine(context.Background(), EngineWasm, img, hostFunc(func(id uint16, args []byte) ([]byte, error) {
		printed = append(printed, string(args))
		return nil, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.Init(0); err != nil {
		t.Fatal(err)
	}
	err = e.Deliver(0, vm.HandlerStart, nil)
	return e.(*wasmEngine), printed, err
}

// prepareTier prepares src for the wasm engine; the program is released
// with the test.
func prepareTier(t testing.TB, src string) (*wasmRuntime, *wasmProgram, *image.Image) {
	t.Helper()
	img := compileAll(t, src)
	w, err := defaultWasm()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := w.prepare(ctx, img)
	if err != nil || p.tier == nil {
		t.Fatalf("no tier: %v", err)
	}
	t.Cleanup(func() { p.close(ctx) })
	return w, p, img
}

// TestTierRegionBatchBound checks that a loop region whose compiled code
// runs only a few steps between the instructions it runs in place (a
// map's lookup each iteration) is given up after its 64th batch, the
// call stopping there and the interpreter finishing the loop, and that a
// loop with enough compiled work between its batches stays compiled.
func TestTierRegionBatchBound(t *testing.T) {
	for _, c := range []struct {
		name, body     string
		done, fellBack int
	}{
		// Three calls of work, each with two loops of a lookup every 5
		// steps: each loop's first call stops at its 64th batch (2
		// handed back), and nothing is compiled after.
		{"few steps a batch", `s += m[i % 100];`, 0, 2},
		// 20 compiled steps a batch: the second loop's three calls
		// finish compiled; the first loop's (3 steps a batch) does not.
		{"many steps a batch", `s += m[i % 100]; var x = i;
            x = x * 3 + 1; x = x * 3 + 1; x = x * 3 + 1; x = x * 3 + 1; x = x * 3 + 1; s += x % 2;`, 3, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := `
fn work() -> int {
    var m: {int: int} = {};
    for i in 0..100 { m[i] = i * 2; }
    var s = 0;
    for i in 0..10000 { ` + c.body + ` }
    return s;
}
locus Main { on start { var t = 0; for r in 0..3 { t += work(); } print(str(t)); } }
main { spawn Main; }
`
			e, printed, err := startOnWasm(t, src)
			if err != nil {
				t.Fatal(err)
			}
			if ti := e.g.tier; ti == nil || ti.done != c.done || ti.fellBack != c.fellBack {
				t.Errorf("tier calls: %d answered, %d handed back; want %d and %d", ti.done, ti.fellBack, c.done, c.fellBack)
			}
			native := runWith(t, compileAll(t, src), Options{Engine: EngineNative})
			if len(printed) == 0 || !strings.HasSuffix(printed[len(printed)-1], strings.TrimSpace(native.stdout)) {
				t.Errorf("printed %q, the native engine %q", printed, native.stdout)
			}
		})
	}
}
