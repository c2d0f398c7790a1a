package host

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/internal/tier"
)

// regionGen writes random programs whose loops are regions (package
// vm/internal/tier, Region): loops in a handler and in functions that
// are not compiled whole, mixing what compiles (int, float and bool
// arithmetic, list and struct reads and writes) with what leaves the
// region (strings, push, print, struct literals, calls of interpreted
// functions), nested, with indexes out of range, overflows and budgets
// that run out inside them.
type regionGen struct {
	progGen
	fns         int // interpreted functions h0… already written
	impureKinds int // how many of impure's statements it picks from
	fresh       int // names e1… of lists declared so far
}

// stmt writes one statement that a region leaves at, or that reads and
// writes lists and structs.
func (g *regionGen) impure(indent int) {
	idx := func() string { return "((" + g.pick(g.ints) + ") & 3)" }
	k := g.r.IntN(g.impureKinds)
	if g.impureKinds > 20 && g.r.IntN(3) == 0 {
		k = g.impureKinds - 1 // the newest kind, often: publishes (21), maps (22)
	}
	switch k {
	case 0:
		c := string(rune('a' + g.r.IntN(26)))
		if g.impureKinds > 21 {
			// Bounded: these programs' loops may run long over lists
			// they push to, and an unbounded string copied at every
			// step is quadratic.
			g.line(indent, `if len(s) < 64 { s = s + "`+c+`"; }`)
			return
		}
		g.line(indent, `s = s + "`+c+`";`)
	case 1:
		g.line(indent, "push(l, "+g.intExpr(1)+");")
	case 2:
		g.line(indent, "print("+g.intExpr(1)+");")
	case 3:
		g.line(indent, "pt = Pt { a: "+g.pick(g.ints)+", b: "+g.pick(g.flts)+" };")
	case 4:
		g.line(indent, "l["+idx()+"] = "+g.intExpr(1)+";")
	case 5:
		g.line(indent, g.pick(g.ints[2:])+" += l["+idx()+"];")
	case 6:
		g.line(indent, "pt.a = pt.a + "+g.pick(g.ints)+";")
	case 7:
		g.line(indent, g.pick(g.flts)+" = "+g.pick(g.flts)+" + pt.b + fl[1];")
	case 8:
		g.line(indent, "fl[0] = fl[0] * 0.5 + "+g.pick(g.flts)+";")
	case 9:
		if g.fns > 0 {
			g.line(indent, g.pick(g.ints[2:])+" = "+fmt.Sprintf("h%d", g.r.IntN(g.fns))+"("+g.pick(g.ints)+", "+g.pick(g.ints)+");")
			return
		}
		g.line(indent, "x += len(l);")
	case 11:
		// In place: a string element (out of range when sl has 3),
		// concatenation.
		g.line(indent, "s = s + sl["+idx()+"];")
	case 12:
		// Pushes of strings, structs and lists onto lists with and
		// without spare capacity, which compiled code stores itself
		// while it can (tier's regionFast); a string pushed from an
		// element out of range; one onto a list a for loop iterates
		// over (a trap, rarely).
		switch g.r.IntN(5) {
		case 0:
			g.line(indent, "if len(sl) < 6 { push(sl, slice(s, 0, len(s) / 2)); }")
		case 1:
			g.line(indent, "if len(sl) < 12 { push(sl, sl["+idx()+"]); }")
		case 2:
			g.line(indent, "if len(pl) < 12 { push(pl, pl[len(pl) - 1]); }")
		case 3:
			g.line(indent, "if len(ll) < 9 { push(ll, sl); } else { ll = [sl]; }")
		default:
			g.line(indent, "if "+g.pick(g.ints)+" % 23 == 5 { for e in sl { push(sl, e); } }")
		}
	case 13:
		g.line(indent, g.pick(g.ints[2:])+" += len(s) + len(sl);")
	case 14:
		// A struct element into a register, then a field write.
		g.line(indent, "pt = pl[len(pl) - 1];")
		g.line(indent, "pt.a = pt.a + 1;")
	case 15:
		g.line(indent, "if len(pl) > 8 { pl = [pt]; }")
		g.line(indent, "push(pl, Pt { a: "+g.pick(g.ints)+" & 7, b: "+g.pick(g.flts)+" });")
	case 16:
		// Push onto a list the loop reads.
		g.line(indent, "if len(l) < 40 { push(l, l["+idx()+"] & 255); }")
	case 17:
		if g.fns > 0 {
			g.line(indent, fmt.Sprintf("match try h%d(%s, %s) { Ok(r) => { %s = r & 255; }, Err(e) => { s = s + e.kind; } }",
				g.r.IntN(g.fns), g.pick(g.ints), g.pick(g.ints), g.pick(g.ints[2:])))
			return
		}
		g.line(indent, "sl["+idx()+"] = s;")
	case 18:
		g.line(indent, `s = join(sl, "");`)
		g.line(indent, "if len(s) > 8 { s = slice(s, len(s) - 3, len(s)); }")
	case 19:
		// Memory: out of memory when the run has a small limit.
		g.line(indent, `if len(s) < 4000 { s = s + s + "z"; push(sl, s); }`)
	case 20:
		// A publish the region compiles (randomRegionProgram with 21
		// kinds declares P and its subscriber).
		g.line(indent, "publish P { n: "+g.intExpr(1)+", x: "+g.floatExpr(1)+", odd: "+g.boolExpr(1)+" };")
	case 21:
		// Maps (randomRegionProgram with 22 kinds declares mp): reads,
		// writes, deletes, lookups with and without has, a missing
		// key (a trap), iteration, and now and then a write into the
		// map a for loop iterates over (a trap too).
		key := `"k" + str(` + g.pick(g.ints) + ` & 3)`
		switch g.r.IntN(8) {
		case 0:
			g.line(indent, "mp["+key+"] = "+g.intExpr(1)+";")
		case 1:
			g.line(indent, "if has(mp, "+key+") { "+g.pick(g.ints[2:])+" += mp["+key+"] & 1023; }")
		case 2:
			g.line(indent, "delete(mp, "+key+");")
		case 3:
			g.line(indent, g.pick(g.ints[2:])+" += len(mp) + len(keys(mp));")
		case 4:
			g.line(indent, "for mk, mv in mp { if len(s) < 40 { s = s + slice(mk, 1, 2); } "+g.pick(g.ints[2:])+" ^= mv; }")
		case 5:
			g.line(indent, "if len(mp) > 3 { mp = {\"k0\": "+g.pick(g.ints)+"}; }")
		case 6:
			if g.r.IntN(4) == 0 {
				g.line(indent, g.pick(g.ints[2:])+" += mp["+key+"] & 7;")
				return
			}
			g.line(indent, "match get(mp, "+key+") { Some(v) => { "+g.pick(g.ints[2:])+" += v & 7; }, None => { q = !q; } }")
		default:
			if g.r.IntN(6) == 0 {
				g.line(indent, "for mk in mp { mp[mk + \"x\"] = 1; }")
				return
			}
			g.line(indent, "mp[sl[len(sl) - 1]] = len(s);")
		}
	case 22:
		// Empty lists made in the loop (compiled code takes them from
		// the guest's pool), pushed to past their first room, joined,
		// read, and iterated.
		g.fresh++
		e := fmt.Sprintf("e%d", g.fresh)
		switch g.r.IntN(5) {
		case 0:
			g.line(indent, "var "+e+": [string] = [];")
			g.line(indent, "for k in 0..("+g.pick(g.ints)+" & 15) { push("+e+", sl[k % len(sl)]); }")
			g.line(indent, "s = slice(join("+e+", \"\") + s, 0, min(len(s), 12));")
		case 1:
			g.line(indent, "ll = [];")
			g.line(indent, "push(ll, sl);")
		case 2:
			g.line(indent, "var "+e+": [int] = [];")
			g.line(indent, "push("+e+", "+g.intExpr(1)+");")
			g.line(indent, "push("+e+", "+g.pick(g.ints)+");")
			g.line(indent, g.pick(g.ints[2:])+" += len("+e+") + ("+e+"[0] & 1023);")
		case 3:
			g.line(indent, "pl = [];")
			g.line(indent, "push(pl, pt);")
		default:
			g.line(indent, "var "+e+": [Pt] = [];")
			g.line(indent, "for k in 0..6 { push("+e+", Pt { a: k, b: "+g.pick(g.flts)+" }); }")
			g.line(indent, "for q in "+e+" { "+g.pick(g.ints[2:])+" ^= q.a; }")
		}
	case 23:
		// A loop that runs an instruction in place every few steps and
		// long enough to pass the bound on batches (vm's
		// regionMinCompiled): its region is given up in the middle of
		// a call, after a batch, and the interpreter goes on there.
		// Chains of appends (value.Tail), with a prefix taken and
		// extended again; map writes and reads (a missing key traps);
		// pushes onto a list other loops iterate over (a trap inside
		// them).
		g.fresh++
		c := fmt.Sprintf("c%d", g.fresh)
		n := 60 + g.r.IntN(70)
		g.line(indent, "// "+boundMarker)
		switch g.r.IntN(3) {
		case 0:
			g.line(indent, "var "+c+` = "";`)
			g.line(indent, fmt.Sprintf(`for k in 0..%d { %s = %s + sl[k %% len(sl)]; if k %% 17 == %d { s = slice(%s, 0, min(len(%s), 6)) + "!"; } }`,
				n, c, c, g.r.IntN(17), c, c))
			g.line(indent, g.pick(g.ints[2:])+" += len("+c+");")
		case 1:
			g.line(indent, fmt.Sprintf(`for k in 0..%d { mp["k" + str(k & 7)] = k; %s += mp["k" + str(%s & 7)] & 15; }`,
				n, g.pick(g.ints[2:]), g.pick(g.ints)))
		default:
			g.line(indent, fmt.Sprintf("for k in 0..%d { push(l, k & 255); if len(l) > 50 { l = [k, 1, 2, 3]; } }", n))
		}
	default:
		g.line(indent, "if len(s) > 3 { s = \"\"; }")
	}
}

// boundMarker marks, in a comment, a loop of impure's kind 23.
const boundMarker = "a loop past the bound on batches"

// block writes n statements, loops among them.
func (g *regionGen) block(indent, n int) {
	for range n {
		switch k := g.r.IntN(8); {
		case k < 3:
			g.impure(indent)
		case k == 3 && g.depth < 3:
			g.depth++
			g.line(indent, fmt.Sprintf("for i%d in 0..%d {", g.depth, g.r.IntN(30)))
			g.block(indent+1, 2+g.r.IntN(2))
			g.line(indent, "}")
			g.depth--
		case k == 4 && g.depth < 3:
			g.depth++
			w := fmt.Sprintf("w%d", g.depth)
			g.line(indent, fmt.Sprintf("%s = 0;", w))
			g.line(indent, fmt.Sprintf("while %s < %d {", w, g.r.IntN(25)))
			g.block(indent+1, 2+g.r.IntN(2))
			g.line(indent+1, w+" += 1;")
			g.line(indent, "}")
			g.depth--
		case k == 5 && g.depth < 3:
			// A loop over a list: its element, then a region exit at
			// its end (iter.end).
			g.depth++
			g.line(indent, fmt.Sprintf("for e%d in l {", g.depth))
			g.line(indent+1, fmt.Sprintf("x += e%d;", g.depth))
			g.block(indent+1, 1)
			g.line(indent, "}")
			g.depth--
		default:
			g.progGen.block(indent, 1)
		}
	}
}

func (g *regionGen) locals(indent int, a, b string) {
	for _, l := range []string{"var x = " + a + ";", "var y = " + b + " + 1;", "var p = " + a + " < " + b + ";", "var q = false;",
		"var u = float(" + a + ");", "var v = 0.25;", "var w1 = 0;", "var w2 = 0;", "var w3 = 0;", `var s = "";`,
		"var l: [int] = [" + a + ", " + b + ", 3, 4];", "var fl: [float] = [0.5, 1.5];", "var pt = Pt { a: 1, b: 2.0 };",
		`var sl: [string] = ["ab", "c", "def"];`, "var pl: [Pt] = [pt];", "var ll: [[string]] = [];"} {
		g.line(indent, l)
	}
	if g.impureKinds > 21 {
		g.line(indent, `var mp: {string: int} = {"k1": `+a+`};`)
	}
}

// randomRegionProgram writes program seed; its statements are those of
// impure up to kinds (11: the first generator's; 20: with instructions
// that regions run in place; 21: with publishes, and a subscriber; 22:
// with a map; 23: with empty lists made in loops; 24: with loops past
// the bound on batches).
func randomRegionProgram(seed uint64, kinds int) string {
	g := &regionGen{progGen: progGen{r: rand.New(rand.NewPCG(seed, 7))}, impureKinds: kinds}
	g.line(0, "type Pt { a: int, b: float }")
	if kinds > 20 {
		g.line(0, "topic P { n: int, x: float, odd: bool }")
		g.line(0, "locus Sink {")
		g.line(1, "var n: int = 0;")
		g.line(1, "var h: int = 0;")
		g.line(1, "on P(p) {")
		g.line(2, "n += 1;")
		g.line(2, "h = (h ^ p.n) & 1048575;")
		g.line(2, "if p.odd { h += 1; }")
		g.line(2, "if p.x != p.x { h += 2; }")
		g.line(2, `if n % 500 == 0 { print(format("sink {} {}", n, h)); }`)
		g.line(1, "}")
		g.line(0, "}")
	}
	g.ints = []string{"a", "b", "x", "y"}
	g.bools = []string{"p", "q"}
	g.flts = []string{"u", "v"}
	for i := range g.r.IntN(3) {
		g.line(0, fmt.Sprintf("fn h%d(a: int, b: int) -> int {", i))
		g.locals(1, "a", "b")
		g.block(1, 2+g.r.IntN(3))
		g.line(1, "return x + y + len(l) + pt.a;")
		g.line(0, "}")
		g.fns++
	}
	if g.r.IntN(3) == 0 {
		fmt.Fprintf(&g.b, "@budget(steps: %d)\n", 50+g.r.IntN(20000))
	}
	g.line(0, "locus Main {")
	g.line(1, "on start {")
	g.line(2, fmt.Sprintf("let a = %s;", g.intLit()))
	g.line(2, fmt.Sprintf("let b = %s;", g.intLit()))
	g.locals(2, "a", "b")
	g.block(2, 3+g.r.IntN(4))
	g.line(2, `print(format("{} {} {} {} {} {} {} {}", x, y, p, u, v, s, l, fl));`)
	g.line(2, "print(pt.a);")
	g.line(2, "print(format(\"{} {} {}\", sl, len(pl), ll));")
	if kinds > 21 {
		g.line(2, "print(mp);")
	}
	g.line(1, "}")
	g.line(0, "}")
	if kinds > 20 {
		g.line(0, "main { spawn Main; spawn Sink; }")
	} else {
		g.line(0, "main { spawn Main; }")
	}
	return g.b.String()
}

// TestTierRandomRegions runs random programs of loops in a handler and
// in interpreted functions on the native engine, on the wasm engine with
// the tier off and with it on (the loops then run as regions): output,
// trap reports (message, position, Hale stack) and exit codes must be
// identical, and budgets must run out at the same step.
func TestTierRandomRegions(t *testing.T) {
	n := randomPrograms(60, 15)
	withRegions, inPlace, batched, fast, trapped, limited := 0, 0, 0, 0, 0, 0
	answered := tierAnswered.Load()
	for seed := range uint64(n) {
		src := randomRegionProgram(seed, 20)
		img, ok := tryCompile(src)
		if !ok {
			t.Fatalf("seed %d: the generated program does not compile:\n%s", seed, src)
		}
		// A quarter of the runs have a small memory limit: strings
		// that double in a loop run out of it (an instruction run in
		// place measures, and traps).
		opts := Options{}
		if seed%4 == 3 {
			opts.MemoryLimit = 8<<10 + int64(seed%7)<<10
			limited++
		}
		native, _ := agreeWithoutTier(t, img, opts, fmt.Sprintf("seed %d (memory limit %d)", seed, opts.MemoryLimit), src)
		if native.res.Code == ExitTrap {
			trapped++
		}
		p := tier.NewPlan(img)
		if len(p.Regions) > 0 {
			withRegions++
		}
		if tier.InPlaceCount(img, p) > 0 {
			inPlace++
		}
		if b, _ := tier.InPlaceBatches(img, p); b > 0 {
			batched++
		}
		if tier.FastInPlaceCount(img, p) > 0 {
			fast++
		}
	}
	// Programs that publish from their loops: the regions append to
	// the guest's batch; journals compared too.
	publishing := 0
	for seed := range uint64(n / 2) {
		src := randomRegionProgram(1000+seed, 21)
		img, ok := tryCompile(src)
		if !ok {
			t.Fatalf("seed %d: the generated program does not compile:\n%s", 1000+seed, src)
		}
		if tier.RegionPublishes(img, tier.NewPlan(img)) > 0 {
			publishing++
		}
		runJournaled(t, img, Options{})
	}
	if publishing < n/8 {
		t.Fatalf("%d of %d programs publish from a region", publishing, n/2)
	}
	// Programs with a map: its instructions run in place in regions
	// (no compiled form), with a missing key or a write during a for
	// over it now and then, under a small memory limit for some.
	withMaps, mapsTrapped := agreeOnRandomRegions(t, 2000, n/2, 22, true, regionRunsMapOps)
	if withMaps < n/8 || mapsTrapped == 0 {
		t.Fatalf("%d of %d programs run map instructions in a region, %d trapped", withMaps, n/2, mapsTrapped)
	}
	// Programs that make empty lists in loops: compiled code takes
	// them from the guest's list pool while it can.
	pooled, _ := agreeOnRandomRegions(t, 3000, n/2, 23, false, regionTakesEmptyLists)
	if pooled < n/8 {
		t.Fatalf("%d of %d programs make empty lists in a region", pooled, n/2)
	}
	// Programs with loops that pass the bound on batches: their
	// regions are given up in the middle of a call.
	bounded, _ := agreeOnRandomRegions(t, 4000, n/2, 24, false, nil)
	if bounded < n/8 {
		t.Fatalf("%d of %d programs have a loop past the bound on batches", bounded, n/2)
	}
	answered = tierAnswered.Load() - answered
	if withRegions < n*3/4 || inPlace < n/2 || batched < n/4 || fast < n/4 || trapped == 0 || trapped > n*2/3 || answered < int64(n) {
		t.Fatalf("%d of %d programs had regions, %d ran instructions in place (%d in batches, %d compiled when they can), %d trapped, %d tier calls answered", withRegions, n, inPlace, batched, fast, trapped, answered)
	}
	t.Logf("%d programs (%d with a small memory limit), %d with regions, %d running instructions in place, %d in batches of two or more, %d with in-place instructions compiled, %d trapped, %d tier calls answered; %d of %d more publishing from a region; %d of %d more running map instructions in a region (%d trapped); %d of %d more making empty lists in a region; %d of %d more with a loop past the bound on batches",
		n, limited, withRegions, inPlace, batched, fast, trapped, answered, publishing, n/2, withMaps, n/2, mapsTrapped, pooled, n/2, bounded, n/2)
}

// agreeOnRandomRegions runs n programs of randomRegionProgram from seed
// base with kinds statements on the native engine and on the wasm engine
// without and with the tier (a quarter of them under a small memory
// limit), and journaled when journal is set. It returns how many of them
// has picks (nil: those with a loop of impure's kind 23) and how many
// trapped.
func agreeOnRandomRegions(t *testing.T, base uint64, n, kinds int, journal bool, has func(*image.Image, *tier.Plan) bool) (picked, trapped int) {
	t.Helper()
	for i := range uint64(n) {
		seed := base + i
		src := randomRegionProgram(seed, kinds)
		img, ok := tryCompile(src)
		if !ok {
			t.Fatalf("seed %d: the generated program does not compile:\n%s", seed, src)
		}
		opts := Options{}
		if i%4 == 3 {
			opts.MemoryLimit = 8<<10 + int64(i%7)<<10
		}
		native, _ := agreeWithoutTier(t, img, opts, fmt.Sprintf("seed %d (memory limit %d)", seed, opts.MemoryLimit), src)
		if native.res.Code == ExitTrap {
			trapped++
		}
		if has == nil && strings.Contains(src, boundMarker) || has != nil && has(img, tier.NewPlan(img)) {
			picked++
		}
		if journal {
			runJournaled(t, img, Options{})
		}
	}
	return picked, trapped
}

// regionTakesEmptyLists reports whether a function with a region makes
// an empty list (new.list of no elements), which its region compiles.
func regionTakesEmptyLists(img *image.Image, p *tier.Plan) bool {
	for _, r := range p.Regions {
		for _, in := range img.Funcs[r.Func].Code {
			if in.Op == image.OpNewList && in.C == 0 {
				return true
			}
		}
	}
	return false
}

// regionRunsMapOps reports whether a function with a region holds a
// map instruction (which a region runs in place: maps have no compiled
// form). The generator puts every map statement inside or beside loops,
// so this is the count the test needs without the regions' extents.
func regionRunsMapOps(img *image.Image, p *tier.Plan) bool {
	for _, r := range p.Regions {
		for _, in := range img.Funcs[r.Func].Code {
			switch in.Op {
			case image.OpIndexMap, image.OpSetIndexMap, image.OpLenMap:
				return true
			}
		}
	}
	return false
}

// TestTierRegionCommits runs loops that write far more list elements
// than the undo log holds (2^18 entries): the region commits at its
// header whenever the log is half full, so it stays compiled; then a
// trap after many commits (an index out of range, a budget) must be the
// interpreter's, with the writes before it in place.
func TestTierRegionCommits(t *testing.T) {
	const src = `
fn fill(xs: [int], k: int) -> int { var s = 0; for i in 0..len(xs) { s += xs[i]; } return s + k; }
fn walk(xs: [int]) -> int { print("walk"); var j = 0; while true { xs[j] = xs[j] + 1; j += 1; } return j; }
%s
locus Main {
    on start {
        var xs: [int] = [];
        for i in 0..1000 { push(xs, 0); }
        var total = 0;
        for k in 0..%s {
            for i in 0..1000 { xs[i] = xs[i] + k; }
            total += xs[k %% 1000];
        }
        print(total);
        print(fill(xs, 1));
        match try walk(xs) { Ok(j) => { print(j); }, Err(e) => { print(e.message); } }
        print(xs[0] + xs[999]);
        %s
    }
}
main { spawn Main; }
`
	for _, c := range []struct{ name, budget, rounds, tail string }{
		{"caught", "", "600", ""},
		{"trap", "", "600", "xs[5000] = 1;"},
		{"budget", "@budget(steps: 4000000)", "2000", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			img := compileAll(t, fmt.Sprintf(src, c.budget, c.rounds, c.tail))
			if len(tier.NewPlan(img).Regions) == 0 {
				t.Fatal("no region")
			}
			before := tierAnswered.Load() // only the wasm run calls the tier
			wasm := runBothHandled(t, img, Options{}, false)
			calls := tierAnswered.Load() - before
			// 600 rounds of 1,000 writes: the log grows to 2^18 entries
			// (a commit at half full each time), then the loop commits
			// every 2^17 writes.
			if calls < 10 {
				t.Fatalf("%d region calls answered; want the loop to commit several times", calls)
			}
			if c.name != "caught" && wasm.res.Code != ExitTrap {
				t.Fatalf("exit %d, want a trap", wasm.res.Code)
			}
			t.Logf("%d tier calls; exit %d\n%s%s", calls, wasm.res.Code, wasm.stdout, wasm.stderr)
		})
	}
}

// TestTierRegionPlanned checks that fannkuch-redux's loops are regions:
// its one function builds lists with push and returns a struct, so it is
// not compiled whole.
func TestTierRegionPlanned(t *testing.T) {
	b, err := os.ReadFile("../../cmd/hale/cli/testdata/bench/fannkuchredux.hl")
	if err != nil {
		t.Fatal(err)
	}
	img := compileAll(t, string(b))
	p := tier.NewPlan(img)
	var names []string
	for _, r := range p.Regions {
		names = append(names, img.Funcs[r.Func].Name)
	}
	if len(p.Regions) == 0 || !strings.Contains(strings.Join(names, " "), "fannkuch") {
		t.Fatalf("regions in %v; want fannkuch's loops", names)
	}
}

// TestTierPausesRegion: a debugger pausing a run (its poll answers breaks
// to arm) stops a region running a long loop, a compiled function
// called from it, and a region running instructions in place: the call
// is undone (back to its last commit), the guest arms the breaks and the
// interpreter stops at the next statement, as on the native engine.
func TestTierPausesRegion(t *testing.T) {
	for _, src := range []string{`
locus Main { on start { var s = 0; for i in 0..3000000 { s += i & 3; } print(s); } }
main { spawn Main; }
`, `
fn spin(n: int) -> int { var s = 0; for i in 0..n { s += i & 3; } return s; }
locus Main { on start { print("go"); print(spin(3000000)); } }
main { spawn Main; }
`, `
locus Main {
    on start {
        var s = 0;
        var l: [string] = [];
        let xs = ["a", "b"];
        for i in 0..1000000 {
            s += i & 3;
            push(l, xs[i & 1]);
            if len(l) > 100 { l = []; }
        }
        print(s);
    }
}
main { spawn Main; }
`, `
topic P { n: int, odd: bool }
locus Main {
    on start {
        var s = 0;
        for i in 0..1000000 { s += i & 3; publish P { n: s, odd: i % 2 == 1 }; }
        print(s);
    }
}
locus Sink { var n: int = 0; on P(p) { n += 1; if n % 250000 == 0 { print(n); } } }
main { spawn Main; spawn Sink; }
`} {
		img := compileAll(t, src)
		for _, engine := range []EngineKind{EngineNative, EngineWasm} {
			polls, breaks := 0, 0
			var line int
			out := runWith(t, img, Options{Engine: engine,
				DebugPoll: func(int) []byte {
					if polls++; polls == 2 {
						return vm.EncodeBreakSpec(vm.BreakSpec{Step: true})
					}
					return nil
				},
				Debug: func(_ int, info []byte) ([]byte, error) {
					breaks++
					if bi, err := vm.DecodeBreakInfo(info); err == nil && len(bi.Frames) > 0 {
						line = bi.Frames[0].PC
					}
					return vm.EncodeBreakSpec(vm.BreakSpec{}), nil // disarm: run on
				}})
			if out.err != nil || out.res.Code != 0 {
				t.Fatalf("%v: exit %d, %v\n%s", engine, out.res.Code, out.err, out.stderr)
			}
			if breaks != 1 {
				t.Fatalf("%v: %d breaks after %d polls; want the pause to stop the run once", engine, breaks, polls)
			}
			t.Logf("%v: paused at pc %d after %d polls; %q", engine, line, polls, out.stdout)
		}
	}
}

// TestTierInPlace runs loops whose regions run instructions in place
// (string elements, concatenation, push onto a list the loop reads,
// struct literals, join, slice) on the native engine and on the wasm
// engine with the tier: output, trap reports and exit codes must be
// identical, for traps of an instruction run in place (uncaught, caught
// by a try in the same frame, caught by a caller's try), out of memory
// and every budget over a range that stops the run at each instruction
// of the loop, in place or compiled.
func TestTierInPlace(t *testing.T) {
	const src = `
type Pt { a: int, b: float }
type Table { chars: [string], probs: [float] }
fn pick(t: Table, r: float) -> int {
    var i = 0;
    while i < len(t.probs) - 1 && r >= t.probs[i] { i += 1; }
    return i;
}
fn line(t: Table, n: int, k: int) -> string {
    var out: [string] = [];
    var ps: [Pt] = [];
    var r = 0.0;
    for j in 0..n {
        r = r + 0.37;
        if r >= 1.0 { r = r - 1.0; }
        let i = pick(t, r);
        push(out, t.chars[i + k]);
        ps = [Pt { a: j, b: r }];
        push(ps, Pt { a: ps[0].a + len(out), b: 0.5 });
        if len(out) %% 7 == 0 { push(out, slice(join(out, ""), 0, 2)); }
    }
    return join(out, "") + str(len(ps));
}
// line2's push(out, t.chars[i]) is one batch of three in-place
// instructions (the field, the element, the push): with k = 1 its
// element traps, the second of the batch; big's pushes run out of
// memory at the third.
fn line2(t: Table, n: int, k: int) -> string {
    var out: [string] = [];
    for j in 0..n {
        let i = (j * 7) %% 4 + k;
        push(out, t.chars[i]);
    }
    return join(out, "");
}
fn big(t: Table, n: int) -> int {
    var xs: [string] = [];
    for j in 0..n { push(xs, t.chars[j %% 4]); }
    return len(xs);
}
%s
locus Main {
    on start {
        let t = Table { chars: ["a", "c", "g", "t"], probs: [0.3, 0.5, 0.8, 1.0] };
        var s = "";
        for k in 0..4 {
            s = s + line(t, 40, 0);
            print(len(s));
        }
        print(s);
        %s
    }
}
main { spawn Main; }
`
	for _, c := range []struct{ name, budget, tail string }{
		{"done", "", ""},
		{"index", "", `print(line(t, 40, 1));`},
		{"caught", "", `match try line(t, 40, 1) { Ok(v) => { print(v); }, Err(e) => { print(e.message); } }
        var xs: [string] = ["x"];
        var j = 0;
        while j < 10 {
            match try xs[j] { Ok(v) => { xs[0] = v + "y"; }, Err(e) => { print(e.message); } }
            push(xs, xs[0]);
            j += 2;
        }
        print(xs);`},
		{"memory", "", `var u = "u"; for i in 0..40 { u = u + u; } print(len(u));`},
		{"batch", "", `print(line2(t, 40, 0)); print(big(t, 1000));`},
		{"batchindex", "", `print(line2(t, 40, 0)); print(line2(t, 40, 1));`},
		{"batchcaught", "", `match try line2(t, 40, 1) { Ok(v) => { print(v); }, Err(e) => { print(e.message); } }
        print(line2(t, 3, 0));`},
		{"batchmemory", "", `print(big(t, 100000000));`},
		// Publishes compiled between batches run in place, past
		// BatchFlush, then a trap in place after them.
		{"publish", "topic Q { n: int, ok: bool }", `var ws: [string] = [];
        for i in 0..3000 {
            push(ws, t.chars[i % 4]);
            publish Q { n: len(ws) * i, ok: i % 3 == 0 };
            if len(ws) > 50 { ws = []; }
        }
        print(len(ws));
        for i in 0..10 { publish Q { n: i, ok: true }; push(ws, t.chars[i]); }`},
	} {
		t.Run(c.name, func(t *testing.T) {
			img := compileAll(t, fmt.Sprintf(src, c.budget, c.tail))
			p := tier.NewPlan(img)
			if tier.InPlaceCount(img, p) == 0 {
				t.Fatal("no instruction runs in place")
			}
			if n, longest := tier.InPlaceBatches(img, p); n == 0 || longest < 3 {
				t.Fatalf("batches: %d, the longest %d", n, longest)
			}
			// line2's and big's field, element and push are compiled
			// (run through the step when they cannot be), line's too.
			if n := tier.FastInPlaceCount(img, p); n < 6 {
				t.Fatalf("%d in-place instructions compiled", n)
			}
			if c.name == "publish" {
				if n := tier.RegionPublishes(img, p); n < 2 {
					t.Fatalf("%d publishes compiled in regions", n)
				}
				runJournaled(t, img, Options{MemoryLimit: 1 << 20})
			}
			before := tierAnswered.Load() // only the wasm run calls the tier
			wasm := runBothHandled(t, img, Options{MemoryLimit: 1 << 20}, false)
			calls := tierAnswered.Load() - before
			if calls == 0 {
				t.Fatal("no tier call answered")
			}
			if want := c.name == "index" || c.name == "memory" || c.name == "batchindex" || c.name == "batchmemory" || c.name == "publish"; want != (wasm.res.Code == ExitTrap) {
				t.Fatalf("exit %d", wasm.res.Code)
			}
			t.Logf("%d tier calls; exit %d\n%s", calls, wasm.res.Code, wasm.stderr)
		})
	}
	// Budgets: each from 1,000 to 1,400 steps stops the first line's
	// loop at another instruction.
	t.Run("budgets", func(t *testing.T) {
		n := 400
		if testing.Short() {
			n = 60
		}
		for b := 1000; b < 1000+n; b++ {
			img := compileAll(t, fmt.Sprintf(src, fmt.Sprintf("@budget(steps: %d)", b), ""))
			native := runWith(t, img, Options{Engine: EngineNative})
			wasm := runWith(t, img, Options{Engine: EngineWasm})
			if native.stdout != wasm.stdout || native.stderr != wasm.stderr || native.res.Code != wasm.res.Code || native.res.Code != ExitTrap {
				t.Fatalf("budget %d: engines disagree:\nnative (exit %d):\n%s%s\nwasm (exit %d):\n%s%s", b,
					native.res.Code, native.stdout, native.stderr, wasm.res.Code, wasm.stdout, wasm.stderr)
			}
		}
	})
	// Budgets that stop line2's loop at each of its steps, those of
	// its batch of three included.
	t.Run("batchbudgets", func(t *testing.T) {
		const main = `
locus Main {
    on start {
        let t = Table { chars: ["a", "c", "g", "t"], probs: [0.3, 0.5, 0.8, 1.0] };
        for k in 0..3 { print(line2(t, 30, 0)); }
    }
}
main { spawn Main; }
`
		body, _, _ := strings.Cut(src, "%s\nlocus Main")
		body = strings.ReplaceAll(body, "%%", "%")
		step := 1
		if testing.Short() {
			step = 7
		}
		for b := 20; b < 500; b += step {
			img := compileAll(t, body+fmt.Sprintf("@budget(steps: %d)", b)+main)
			native := runWith(t, img, Options{Engine: EngineNative})
			wasm := runWith(t, img, Options{Engine: EngineWasm})
			if native.stdout != wasm.stdout || native.stderr != wasm.stderr || native.res.Code != wasm.res.Code || native.res.Code != ExitTrap {
				t.Fatalf("budget %d: engines disagree:\nnative (exit %d):\n%s%s\nwasm (exit %d):\n%s%s", b,
					native.res.Code, native.stdout, native.stderr, wasm.res.Code, wasm.stdout, wasm.stderr)
			}
		}
	})
}

// agreeWithoutTier runs img with opts on the native engine, the wasm
// engine and the wasm engine without the second tier, and fails (naming
// what and showing src, when given) unless the three print the same and
// exit alike; it returns the native and wasm outcomes.
func agreeWithoutTier(t *testing.T, img *image.Image, opts Options, what, src string) (native, wasm outcome) {
	t.Helper()
	opts.Engine = EngineNative
	native = runWith(t, img, opts)
	opts.Engine = EngineWasm
	wasm = runWith(t, img, opts)
	disableTier = true
	plain := runWith(t, img, opts)
	disableTier = false
	for _, o := range []struct {
		name string
		out  outcome
	}{{"wasm", wasm}, {"wasm without the tier", plain}} {
		if native.err != nil || o.out.err != nil {
			t.Fatalf("%s: errors: native %v, %s %v", what, native.err, o.name, o.out.err)
		}
		if native.stdout != o.out.stdout || native.stderr != o.out.stderr || native.res.Code != o.out.res.Code {
			t.Fatalf("%s: engines disagree:\n%s\nnative (exit %d):\n%s%s\n%s (exit %d):\n%s%s", what, src,
				native.res.Code, native.stdout, native.stderr, o.name, o.out.res.Code, o.out.stdout, o.out.stderr)
		}
	}
	return native, wasm
}
