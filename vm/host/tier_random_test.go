package host

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// progGen writes random programs of int, bool and float functions that
// loop, branch, call each other and, now and then, overflow, divide by
// zero or shift by a count outside 0 to 63: the kind of code the second tier compiles, and every way it hands
// a call back to the interpreter.
type progGen struct {
	r     *rand.Rand
	b     strings.Builder
	ints  []string
	bools []string
	flts  []string
	fns   int // helpers h0…h(fns-1) declared so far, each (int, int) -> int
	depth int
}

func (g *progGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *progGen) intLit() string {
	switch g.r.IntN(40) {
	case 0:
		return "9223372036854775000"
	case 1:
		return "-9223372036854775807"
	case 2, 3:
		return "0"
	case 4, 5:
		return "-1"
	}
	return fmt.Sprint(g.r.IntN(200) - 50)
}

func (g *progGen) intExpr(d int) string {
	if d <= 0 {
		if g.r.IntN(3) == 0 {
			return g.intLit()
		}
		return g.pick(g.ints)
	}
	a, b := g.intExpr(d-1), g.intExpr(d-1)
	switch g.r.IntN(19) {
	case 0:
		return "(" + a + " + " + b + ")"
	case 1:
		return "(" + a + " - " + b + ")"
	case 2:
		return "(" + a + " * " + b + ")"
	case 3:
		if g.r.IntN(4) == 0 {
			return "(" + a + " / " + b + ")"
		}
	case 4:
		if g.r.IntN(4) == 0 {
			return "(" + a + " % " + b + ")"
		}
	case 5:
		return "(-" + a + ")"
	case 6:
		return "abs(" + a + ")"
	case 7:
		return "min(" + a + ", " + b + ")"
	case 8:
		return "max(" + a + ", " + b + ")"
	case 9:
		if g.fns > 0 {
			return fmt.Sprintf("h%d(%s, %s)", g.r.IntN(g.fns), a, b)
		}
	case 10:
		return "(" + a + " / " + fmt.Sprint(g.r.IntN(9)+1) + ")"
	case 11:
		return "(" + a + " & " + b + ")"
	case 12:
		return "(" + a + " | " + b + ")"
	case 13:
		return "(" + a + " ^ " + b + ")"
	case 14:
		return "(" + a + " << " + g.shiftCount(b) + ")"
	case 15:
		return "(" + a + " >> " + g.shiftCount(b) + ")"
	case 16:
		return "!" + a
	}
	return g.intExpr(0)
}

// shiftCount returns a shift count: mostly in range, now and then the
// expression b as it is, which may trap.
func (g *progGen) shiftCount(b string) string {
	switch g.r.IntN(8) {
	case 0:
		return b
	case 1, 2, 3:
		return fmt.Sprint(g.r.IntN(64))
	}
	return "(" + b + " & 63)"
}

func (g *progGen) boolExpr(d int) string {
	if d <= 0 {
		switch g.r.IntN(3) {
		case 0:
			return g.pick(g.bools)
		case 1:
			return "true"
		}
		return "(" + g.pick(g.ints) + " < " + g.intLit() + ")"
	}
	switch g.r.IntN(8) {
	case 0:
		return "(" + g.boolExpr(d-1) + " && " + g.boolExpr(d-1) + ")"
	case 1:
		return "(" + g.boolExpr(d-1) + " || " + g.boolExpr(d-1) + ")"
	case 2:
		return "!" + g.boolExpr(d-1)
	case 3:
		return "(" + g.floatExpr(d-1) + " <= " + g.floatExpr(d-1) + ")"
	case 4:
		return "(" + g.intExpr(d-1) + " == " + g.intExpr(d-1) + ")"
	case 5:
		return "(" + g.intExpr(d-1) + " != " + g.intExpr(d-1) + ")"
	}
	return "(" + g.intExpr(d-1) + " >= " + g.intExpr(d-1) + ")"
}

func (g *progGen) floatExpr(d int) string {
	if d <= 0 {
		if g.r.IntN(3) == 0 {
			return fmt.Sprintf("%d.5", g.r.IntN(20)-10)
		}
		return g.pick(g.flts)
	}
	a, b := g.floatExpr(d-1), g.floatExpr(d-1)
	switch g.r.IntN(11) {
	case 8:
		// The functions compiled code asks the guest for (tier.GuestMath).
		return "std::math::" + g.pick([]string{"sin", "cos", "tan", "asin", "acos", "atan", "log", "exp"}) + "(" + a + ")"
	case 9:
		return "std::math::" + g.pick([]string{"pow", "atan2", "hypot"}) + "(" + a + ", " + b + ")"
	case 0:
		return "(" + a + " + " + b + ")"
	case 1:
		return "(" + a + " - " + b + ")"
	case 2:
		return "(" + a + " * " + b + ")"
	case 3:
		return "(" + a + " / " + b + ")"
	case 4:
		return "(-" + a + ")"
	case 5:
		return "float(" + g.intExpr(d-1) + ")"
	case 6:
		return "std::math::sqrt(abs(" + a + "))"
	case 7:
		return "std::math::floor(" + a + ")"
	}
	return "std::math::ceil(" + a + ")"
}

func (g *progGen) line(indent int, s string) {
	g.b.WriteString(strings.Repeat("    ", indent) + s + "\n")
}

// block writes n random statements.
func (g *progGen) block(indent, n int) {
	for range n {
		switch k := g.r.IntN(9); {
		case k < 3:
			g.line(indent, g.pick(g.ints[2:])+" = "+g.intExpr(2)+";")
		case k == 3:
			g.line(indent, g.pick(g.bools)+" = "+g.boolExpr(2)+";")
		case k == 4:
			g.line(indent, g.pick(g.flts)+" = "+g.floatExpr(2)+";")
		case k == 5 && g.depth < 2:
			g.depth++
			g.line(indent, "if "+g.boolExpr(2)+" {")
			g.block(indent+1, 2)
			g.line(indent, "} else {")
			g.block(indent+1, 1)
			g.line(indent, "}")
			g.depth--
		case k == 6 && g.depth < 2:
			g.depth++
			g.line(indent, fmt.Sprintf("for i%d in 0..%d {", g.depth, g.r.IntN(20)))
			g.block(indent+1, 2)
			g.line(indent, "}")
			g.depth--
		case k == 7 && g.depth < 2:
			// A while loop with its own counter, so that it ends.
			g.depth++
			w := fmt.Sprintf("w%d", g.depth)
			g.line(indent, fmt.Sprintf("%s = 0;", w))
			g.line(indent, fmt.Sprintf("while %s < %d {", w, g.r.IntN(15)))
			g.block(indent+1, 2)
			g.line(indent+1, w+" += 1;")
			g.line(indent, "}")
			g.depth--
		default:
			switch op := []string{"+=", "+=", "&=", "|=", "^=", "<<=", ">>="}[g.r.IntN(7)]; op {
			case "<<=", ">>=":
				g.line(indent, g.pick(g.ints[2:])+" "+op+" "+g.shiftCount(g.intExpr(1))+";")
			default:
				g.line(indent, g.pick(g.ints[2:])+" "+op+" "+g.intExpr(1)+";")
			}
		}
	}
}

// fn writes one function of (a: int, b: int) -> int.
func (g *progGen) fn(name string) {
	g.line(0, "fn "+name+"(a: int, b: int) -> int {")
	g.line(1, "var x = a;")
	g.line(1, "var y = b + 1;")
	g.line(1, "var p = a < b;")
	g.line(1, "var q = false;")
	g.line(1, "var u = float(a);")
	g.line(1, "var v = 0.25;")
	g.line(1, "var w1 = 0;")
	g.line(1, "var w2 = 0;")
	g.ints = []string{"a", "b", "x", "y"}
	g.bools = []string{"p", "q"}
	g.flts = []string{"u", "v"}
	g.block(1, 3+g.r.IntN(4))
	g.line(1, "if p || q { x += 1; }")
	g.line(1, "if u < v { y -= 1; }")
	g.line(1, "return "+g.intExpr(2)+";")
	g.line(0, "}")
	g.fns++
}

func randomProgram(seed uint64) string {
	g := &progGen{r: rand.New(rand.NewPCG(seed, 1))}
	n := 1 + g.r.IntN(3)
	for i := range n {
		g.fn(fmt.Sprintf("h%d", i))
	}
	if g.r.IntN(3) == 0 {
		// A budget, so that some run out inside compiled code: the
		// interpreter must trap at the same step.
		fmt.Fprintf(&g.b, "@budget(steps: %d)\n", 20+g.r.IntN(3000))
	}
	g.b.WriteString("locus Main {\n    on start {\n")
	for range 4 {
		fmt.Fprintf(&g.b, "        print(h%d(%s, %s));\n", g.r.IntN(n), g.intLit(), g.intLit())
	}
	g.b.WriteString("    }\n}\nmain { spawn Main; }\n")
	return g.b.String()
}

// randomPrograms is how many random programs a test runs: n, or short
// under -short, or $HALE_TIER_RANDOM when set (a longer search).
func randomPrograms(n, short int) int {
	if s := os.Getenv("HALE_TIER_RANDOM"); s != "" {
		n, _ = strconv.Atoi(s)
	} else if testing.Short() {
		n = short
	}
	return n
}

// TestTierRandomPrograms runs random programs on the native engine and on
// the wasm engine with its second tier: output, traps and exit codes must
// be identical.
func TestTierRandomPrograms(t *testing.T) {
	n := randomPrograms(60, 15)
	compiled, trapped := 0, 0
	answered := tierAnswered.Load()
	for seed := range uint64(n) {
		src := randomProgram(seed)
		img, ok := tryCompile(src)
		if !ok {
			t.Fatalf("seed %d: the generated program does not compile:\n%s", seed, src)
		}
		native := runWith(t, img, Options{Engine: EngineNative})
		wasm := runWith(t, img, Options{Engine: EngineWasm})
		if native.err != nil || wasm.err != nil {
			t.Fatalf("seed %d: errors: native %v, wasm %v", seed, native.err, wasm.err)
		}
		if native.stdout != wasm.stdout || native.stderr != wasm.stderr || native.res.Code != wasm.res.Code {
			t.Fatalf("seed %d: engines disagree:\n%s\nnative (exit %d):\n%s%s\nwasm (exit %d):\n%s%s", seed, src,
				native.res.Code, native.stdout, native.stderr, wasm.res.Code, wasm.stdout, wasm.stderr)
		}
		if native.res.Code == ExitTrap {
			trapped++
		}
		if tierPlanHasEntries(img) {
			compiled++
		}
	}
	// The generator must exercise both paths: compiled calls that
	// finish, and calls handed back to trap.
	answered = tierAnswered.Load() - answered
	if compiled < n*3/4 || trapped == 0 || trapped > n*2/3 || answered < int64(n) {
		t.Fatalf("%d of %d programs had a tier, %d trapped, %d tier calls answered", compiled, n, trapped, answered)
	}
	t.Logf("%d programs, %d with a tier, %d trapped, %d tier calls answered", n, compiled, trapped, answered)
}

// memGen writes random programs of functions over lists of ints and
// floats, a struct, a list of structs and a list of enums: they read and write elements
// and fields, loop over the lists (and now and then change a list a for
// loop iterates over), call each other, index out of range, overflow and
// return from inside for loops. The second tier compiles them with
// access to the guest's memory; every trap after a write must leave
// exactly the interpreter's partial writes, which the program prints.
type memGen struct {
	r     *rand.Rand
	b     strings.Builder
	fns   int
	depth int
	lets  int
}

func (g *memGen) line(indent int, s string) {
	g.b.WriteString(strings.Repeat("    ", indent) + s + "\n")
}

// idx returns an index of xs or fs (length 4): now and then one that may
// be out of range.
func (g *memGen) idx() string {
	if g.r.IntN(12) == 0 {
		return []string{"4", "(s % 7)", "(k - 1)"}[g.r.IntN(3)]
	}
	return []string{"k", "(s & 3)", "(len(xs) - 1)", "0", "1", "2", "3", "(k & 1)"}[g.r.IntN(8)]
}

// idx3 is idx for c.xs (length 3).
func (g *memGen) idx3() string {
	if g.r.IntN(12) == 0 {
		return "k"
	}
	return []string{"(s & 1)", "(len(c.xs) - 1)", "0", "1", "2", "(k % 3)"}[g.r.IntN(6)]
}

func (g *memGen) intExpr() string {
	switch g.r.IntN(8) {
	case 0:
		return "s + 1"
	case 1:
		return "xs[" + g.idx() + "]"
	case 2:
		return "c.i * 3"
	case 3:
		if g.r.IntN(4) == 0 {
			return "s * 1000000007"
		}
		return "s * 3"
	case 4:
		return "c.xs[" + g.idx3() + "] - s"
	case 5:
		return "len(cs) + k"
	}
	return fmt.Sprint(g.r.IntN(100) - 20)
}

func (g *memGen) floatExpr() string {
	switch g.r.IntN(5) {
	case 0:
		return "t * 1.5"
	case 1:
		return "fs[" + g.idx() + "] + c.f"
	case 2:
		return "float(s)"
	case 3:
		return "std::math::sqrt(abs(t))"
	}
	return fmt.Sprintf("%d.25", g.r.IntN(10))
}

func (g *memGen) block(indent, n int) {
	for range n {
		switch k := g.r.IntN(19); {
		case k == 0:
			g.line(indent, "s += xs["+g.idx()+"];")
		case k == 1:
			g.line(indent, "xs["+g.idx()+"] = "+g.intExpr()+";")
		case k == 2:
			g.line(indent, "fs["+g.idx()+"] = "+g.floatExpr()+";")
		case k == 3:
			g.line(indent, "t = t + fs["+g.idx()+"];")
		case k == 4:
			g.line(indent, "c.i = "+g.intExpr()+";")
		case k == 5:
			g.line(indent, "c.f = "+g.floatExpr()+";")
		case k == 6:
			g.line(indent, "c.b = !c.b || s > 10;")
		case k == 7:
			g.line(indent, "c.xs["+g.idx3()+"] = "+g.intExpr()+";")
		case k == 8:
			g.lets++
			d := fmt.Sprintf("d%d", g.lets)
			g.line(indent, "let "+d+" = cs["+[]string{"0", "1", "k", "(s & 1)"}[g.r.IntN(4)]+"];")
			g.line(indent, d+".i += 1;")
			g.line(indent, d+".f = "+d+".f * 1.5 + t;")
		case k == 9 && g.depth < 2:
			g.depth++
			g.line(indent, "for x in xs {")
			g.line(indent+1, "s += x;")
			if g.r.IntN(5) == 0 {
				g.line(indent+1, fmt.Sprintf("if x > %d { xs[0] = x; }", g.r.IntN(8)))
			}
			if g.r.IntN(3) == 0 {
				g.line(indent+1, fmt.Sprintf("if x == %d { return s; }", g.r.IntN(8)))
			}
			g.block(indent+1, 1)
			g.line(indent, "}")
			g.depth--
		case k == 10 && g.depth < 2:
			g.depth++
			g.line(indent, "for d in cs {")
			g.line(indent+1, "d.f = d.f * 1.5;")
			g.line(indent+1, "s += d.i;")
			g.block(indent+1, 1)
			g.line(indent, "}")
			g.depth--
		case k == 11 && g.depth < 2:
			g.depth++
			g.line(indent, "for i in 0..len(xs) {")
			g.line(indent+1, "xs[i] = xs[i] + s;")
			g.block(indent+1, 1)
			g.line(indent, "}")
			g.depth--
		case k == 12 && g.depth < 2:
			g.depth++
			g.line(indent, "if c.b {")
			g.block(indent+1, 2)
			g.line(indent, "} else {")
			g.block(indent+1, 1)
			g.line(indent, "}")
			g.depth--
		case k == 13 && g.fns > 0:
			g.line(indent, fmt.Sprintf("s += m%d(xs, fs, c, cs, es, s & 3);", g.r.IntN(g.fns)))
		case k == 14:
			g.line(indent, "s = s * "+g.intExpr()+" % 1000;")
		case k == 15:
			g.line(indent, "s += c.i + len(c.xs);")
		case k == 16 && g.depth < 2:
			// Enums: variants tested, values taken out, a list inside
			// one written.
			g.depth++
			g.line(indent, "for e in es {")
			g.line(indent+1, "match e {")
			g.line(indent+2, "Sh::Dot => { s += 1; },")
			g.line(indent+2, "Sh::Num(v) => { s += v; },")
			g.line(indent+2, "Sh::Fl(f) => { t = t + f; },")
			g.line(indent+2, "Sh::Ls(ys) => { s += ys["+g.idx3()+"]; ys[0] = "+g.intExpr()+"; },")
			g.line(indent+2, "Sh::Cl(d) => { d.i += 1; s += d.i; },")
			g.line(indent+1, "}")
			g.line(indent, "}")
			g.depth--
		default:
			g.line(indent, "s += "+g.intExpr()+";")
		}
	}
}

func randomMemProgram(seed uint64) string {
	g := &memGen{r: rand.New(rand.NewPCG(seed, 2))}
	g.line(0, "type Cell { i: int, f: float, b: bool, xs: [int] }")
	g.line(0, "enum Sh { Dot, Num(int), Fl(float), Ls([int]), Cl(Cell) }")
	n := 1 + g.r.IntN(3)
	for i := range n {
		g.line(0, fmt.Sprintf("fn m%d(xs: [int], fs: [float], c: Cell, cs: [Cell], es: [Sh], k: int) -> int {", i))
		g.line(1, "var s = k;")
		g.line(1, "var t = 0.5;")
		g.block(1, 3+g.r.IntN(5))
		g.line(1, "if t > 1.0e300 { s += 1; }")
		g.line(1, "return s;")
		g.line(0, "}")
		g.fns++
	}
	if g.r.IntN(4) == 0 {
		fmt.Fprintf(&g.b, "@budget(steps: %d)\n", 50+g.r.IntN(2000))
	}
	g.b.WriteString(`locus Main {
    on start {
        let xs = [1, 2, 3, 4];
        let fs = [0.5, 1.5, 2.5, 3.5];
        let c = Cell { i: 1, f: 2.0, b: true, xs: [5, 6, 7] };
        let cs = [Cell { i: 2, f: 0.5, b: false, xs: [1] }, Cell { i: 3, f: -1.5, b: true, xs: [] }];
        let es = [Sh::Num(4), Sh::Dot, Sh::Ls([1, 2, 3]), Sh::Fl(0.25), Sh::Cl(cs[0]), Sh::Ls([9, 8, 7])];
`)
	for r := range 4 {
		fmt.Fprintf(&g.b, "        match try m%d(xs, fs, c, cs, es, %d) { Ok(v) => { print(v); }, Err(e) => { print(e.message); } }\n", g.r.IntN(n), r)
		g.b.WriteString(`        print(format("{} {} {} {} {} {} {} {} {} {} {}", xs, fs, c.i, c.f, c.b, c.xs, cs[0].i, cs[0].f, cs[1].i, cs[1].f, es));` + "\n")
	}
	g.b.WriteString("    }\n}\nmain { spawn Main; }\n")
	return g.b.String()
}

// TestTierRandomListPrograms runs random programs of randomMemProgram on
// the native engine and on the wasm engine with its second tier: output,
// traps and exit codes must be identical.
func TestTierRandomListPrograms(t *testing.T) {
	n := randomPrograms(60, 15)
	compiled, caught := 0, 0
	answered := tierAnswered.Load()
	for seed := range uint64(n) {
		src := randomMemProgram(seed)
		img, ok := tryCompile(src)
		if !ok {
			t.Fatalf("seed %d: the generated program does not compile:\n%s", seed, src)
		}
		native := runWith(t, img, Options{Engine: EngineNative})
		wasm := runWith(t, img, Options{Engine: EngineWasm})
		if native.err != nil || wasm.err != nil {
			t.Fatalf("seed %d: errors: native %v, wasm %v", seed, native.err, wasm.err)
		}
		if native.stdout != wasm.stdout || native.stderr != wasm.stderr || native.res.Code != wasm.res.Code {
			t.Fatalf("seed %d: engines disagree:\n%s\nnative (exit %d):\n%s%s\nwasm (exit %d):\n%s%s", seed, src,
				native.res.Code, native.stdout, native.stderr, wasm.res.Code, wasm.stdout, wasm.stderr)
		}
		if strings.Contains(native.stdout, "out of range") || strings.Contains(native.stdout, "overflow") ||
			strings.Contains(native.stdout, "during iteration") {
			caught++
		}
		if tierPlanHasEntries(img) {
			compiled++
		}
	}
	// The generator must exercise both paths: compiled calls that
	// finish, and calls handed back after writes to trap.
	answered = tierAnswered.Load() - answered
	if compiled < n*3/4 || caught < n/4 || answered < int64(n) {
		t.Fatalf("%d of %d programs had a tier, %d caught a trap, %d tier calls answered", compiled, n, caught, answered)
	}
	t.Logf("%d programs, %d with a tier, %d caught a trap, %d tier calls answered", n, compiled, caught, answered)
}
