package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hale-lang/hale/vm/internal/tier"
)

// fastPushSrc pushes strings, structs and lists read out of a struct and
// its lists, as fasta's letter does (push(line, table.chars[i])): the
// field, the element and the push are instructions run in place that a
// region's compiled code runs itself while it can (tier's regionFast),
// and through the guest's step otherwise (a list with no spare capacity,
// one a for loop iterates over, an index out of range, a charge that
// calls for a memory measure, the guest's collector marking). The first
// %s is a budget, the second the start handler's body after b is made.
const fastPushSrc = `
type Pt { a: int, b: float }
type Bag { words: [string], pts: [Pt], lists: [[string]] }
// fill pushes onto a list that starts empty (no spare capacity until it
// grows), one that starts full (a literal) and one of lists.
fn fill(b: Bag, n: int, k: int) -> string {
    var out: [string] = [];
    var ps: [Pt] = [Pt { a: 0, b: 0.0 }];
    var ls: [[string]] = [b.words, b.words];
    var junk = "";
    for j in 0..n {
        let i = (j * 7 + k) %% 5;
        push(out, b.words[i]);
        push(ps, b.pts[i %% 3]);
        push(ls, b.lists[i %% 2]);
        junk = junk + b.words[i];
        if len(junk) > 64 { junk = ""; }
    }
    return join(out, "") + "/" + str(len(ps)) + "/" + str(len(ls)) + "/" + str(ps[n].a) + "/" + join(ls[n], ",");
}
// iter pushes onto the list a for loop iterates over: the push traps.
fn iter(b: Bag) -> int {
    for w in b.words {
        var j = 0;
        while j < 3 { push(b.words, b.words[j]); j += 1; }
    }
    return len(b.words);
}
// many pushes k strings out of b: past a small memory limit, a push
// runs out of memory.
fn many(b: Bag, k: int) -> int {
    var all: [string] = [];
    for j in 0..k { push(all, b.words[j %% 5]); }
    return len(all);
}
// rounds makes fresh strings in each round, pushes them (compiled)
// onto a list the round keeps, drops every other reference to them and
// allocates: the strings must survive the collections between.
fn rounds(n: int) -> [[string]] {
    var keep: [[string]] = [];
    for r in 0..n {
        var fresh: [string] = [];
        for i in 0..20 { push(fresh, "r" + str(r) + "i" + str(i)); }
        var got: [string] = [];
        for j in 0..300 { push(got, fresh[(j * 7) %% 20]); }
        fresh = [];
        var junk = "";
        for j in 0..300 { junk = junk + str(j); if len(junk) > 100 { junk = ""; } }
        push(keep, got);
    }
    return keep;
}
// long's pushes are one batch of 17 in-place instructions: the first 8
// compiled (tier's maxFastRun), the guest's step for the rest.
fn long(b: Bag, n: int) -> string {
    var out: [string] = [];
    for j in 0..n {
        let i = j %% 5;
        let k = 4 - i;
        let h = j %% 2;
        let m = (i + 2) %% 5;
        let one = 1;
        let zero = 0;
        push(out, b.words[i]);
        push(out, b.words[k]);
        push(out, b.lists[one][h]);
        push(out, b.words[m]);
        push(out, b.lists[zero][i]);
    }
    return join(out, "");
}
%s
locus Main {
    on start {
        var words: [string] = [];
        for i in 0..5 { push(words, "w" + str(i * 37)); }
        let b = Bag { words: words, pts: [Pt { a: 1, b: 0.5 }, Pt { a: 2, b: 1.5 }, Pt { a: 3, b: 2.5 }], lists: [words, ["x", "y"]] };
        %s
    }
}
main { spawn Main; }
`

// TestTierFastPush runs fastPushSrc's pushes on the native engine, on
// the wasm engine with the tier and without it: output, trap reports
// and exit codes must be identical, for pushes of strings, structs and
// lists with and without spare capacity, a push onto a list being
// iterated (uncaught and caught), a memory limit that falls due at a
// push, budgets that stop the loop at each of its instructions, and
// guests whose collector runs all the time (GOGC=1), so that cycles
// start, mark and end between and around compiled pushes.
func TestTierFastPush(t *testing.T) {
	three := func(t *testing.T, body, budget string, opts Options) outcome {
		t.Helper()
		img := compileAll(t, fmt.Sprintf(fastPushSrc, budget, body))
		if budget == "" {
			p := tier.NewPlan(img)
			if n := tier.FastInPlaceCount(img, p); n < 9 {
				t.Fatalf("%d in-place instructions compiled", n)
			}
		}
		_, wasm := agreeWithoutTier(t, img, opts, "pushes", "")
		return wasm
	}
	for _, c := range []struct {
		name, body string
		limit      int64
		trap       string // in the report, when the run traps
	}{
		{"kinds", `for k in 0..3 { print(fill(b, 200, k)); }`, 0, ""},
		{"long", `print(long(b, 100));`, 0, ""},
		{"iterating", `print(fill(b, 10, 0)); print(iter(b));`, 0, "list changed during iteration"},
		{"iteratingcaught", `match try iter(b) { Ok(v) => { print(v); }, Err(e) => { print(e.message); } }
        print(len(b.words)); print(fill(b, 50, 1));`, 0, ""},
		{"memory", `print(many(b, 1000)); print(many(b, 200000));`, 1 << 20, "out of memory"},
		// Running out of memory is no error a try catches.
		{"memorytry", `match try many(b, 200000) { Ok(v) => { print(v); }, Err(e) => { print(e.message); } }
        print(many(b, 1000));`, 1 << 20, "out of memory"},
		{"index", `print(fill(b, 20, 0)); var xs: [string] = []; for j in 0..10 { push(xs, words[j]); } print(xs);`, 0, "index 5 out of range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "long" {
				img := compileAll(t, fmt.Sprintf(fastPushSrc, "", c.body))
				if _, longest := tier.InPlaceBatches(img, tier.NewPlan(img)); longest <= 8 {
					t.Fatalf("the longest batch has %d instructions", longest)
				}
			}
			wasm := three(t, c.body, "", Options{MemoryLimit: c.limit})
			if (c.trap != "") != (wasm.res.Code == ExitTrap) || !strings.Contains(wasm.stderr, c.trap) {
				t.Fatalf("exit %d:\n%s%s", wasm.res.Code, wasm.stdout, wasm.stderr)
			}
		})
	}
	// A guest whose collector runs all the time: the pushed strings,
	// kept only by the lists they were pushed onto, survive every
	// collection and print as natively (and as with the default GOGC).
	t.Run("collector", func(t *testing.T) {
		const body = `let keep = rounds(40);
        var total = 0;
        for g in keep { total += len(join(g, "")); }
        print(total);
        print(join(keep[0], ","));
        print(join(keep[39], ","));
        print(fill(b, 300, 2));`
		dflt := three(t, body, "", Options{})
		old := guestGOGC
		guestGOGC = "1"
		defer func() { guestGOGC = old }()
		gc1 := three(t, body, "", Options{})
		if gc1.stdout != dflt.stdout || !strings.Contains(gc1.stdout, "r39i0,r39i7,r39i14") {
			t.Fatalf("GOGC=1:\n%s\ndefault:\n%s", gc1.stdout, dflt.stdout)
		}
	})
	// Budgets that stop fill's loop at each of its instructions, the
	// compiled pushes' included.
	t.Run("budgets", func(t *testing.T) {
		step := 1
		if testing.Short() {
			step = 9
		}
		for b := 150; b < 650; b += step {
			wasm := three(t, `print(fill(b, 40, 1));`, fmt.Sprintf("@budget(steps: %d)", b), Options{})
			if wasm.res.Code != ExitTrap {
				t.Fatalf("budget %d: exit %d", b, wasm.res.Code)
			}
		}
	})
}
