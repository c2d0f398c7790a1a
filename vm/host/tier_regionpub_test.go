package host

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm/internal/tier"
)

// runJournaled runs img on the native engine, on the wasm engine and on
// the wasm engine without the tier, each with a batchJournal, and
// requires the same output (each consumer's lines, in any interleaving
// of consumers), trap report, exit code and journal: every consumer's
// deliveries, publishes (payload bytes and targets), primitive calls and
// traps in the same order (polls aside: engines poll at other steps). It
// returns the wasm run's outcome.
func runJournaled(t *testing.T, img *image.Image, opts Options) outcome {
	t.Helper()
	type run struct {
		name string
		o    outcome
		j    *batchJournal
	}
	var runs []run
	for _, v := range []struct {
		name   string
		kind   EngineKind
		noTier bool
	}{{"native", EngineNative, false}, {"wasm", EngineWasm, false}, {"wasm without the tier", EngineWasm, true}} {
		j := &batchJournal{newLogJournal(img)}
		opts.Engine, opts.Journal = v.kind, j
		disableTier = v.noTier
		o := runWith(t, img, opts)
		disableTier = false
		if o.err != nil {
			t.Fatalf("%s: %v", v.name, o.err)
		}
		j.check(t)
		runs = append(runs, run{v.name, o, j})
	}
	ref := runs[0]
	for _, r := range runs[1:] {
		if !reflect.DeepEqual(sortedLines(r.o.stdout), sortedLines(ref.o.stdout)) || r.o.stderr != ref.o.stderr || r.o.res.Code != ref.o.res.Code {
			t.Fatalf("%s and %s disagree:\n%s%s(exit %d)\nagainst\n%s%s(exit %d)", r.name, ref.name,
				r.o.stdout, r.o.stderr, r.o.res.Code, ref.o.stdout, ref.o.stderr, ref.o.res.Code)
		}
		for cid := range img.Consumers {
			if a, b := noPolls(r.j.events(cid)), noPolls(ref.j.events(cid)); !reflect.DeepEqual(a, b) {
				t.Fatalf("consumer %d: %s's journal differs from %s's:\n%q\nagainst\n%q", cid, r.name, ref.name, a, b)
			}
		}
	}
	return runs[1].o
}

// regionPubSrc publishes from loops that run as regions: P's payload is
// an int, a float (NaN included) and a bool, so the region appends its
// records itself; G is guarded (its guards run in the guest, so that
// publish leaves the region). %[1]s is a budget, %[2]s the number of
// publishes of the first loop (about 28 bytes each: 3,000 pass
// BatchFlush several times), %[3]s statements after the loops, %[4]s
// the Sink's placement.
const regionPubSrc = `
topic P { n: int, x: float, odd: bool }
topic G { k: int }
topic Done { n: int }
fn half(a: int, b: int) -> int { return a / b; }
%[1]s
locus Src {
    on start {
        var s = 0;
        var x = 0.5;
        for i in 0..%[2]s {
            x = x * 1.5;
            if x > 1000.0 { x = 0.0 / 0.0; }
            if x != x { x = 0.25; }
            publish P { n: i * 7 - 100, x: x, odd: i %% 2 == 1 };
            s += i %% 7;
        }
        var k = 0;
        while k < 400 {
            publish P { n: k, x: 0.0 / 0.0, odd: false };
            if k %% 50 == 0 { publish G { k: k }; }
            k += 1;
        }
        %[3]s
        publish Done { n: s + k };
    }
}
locus Sink {
    var n: int = 0;
    var sum: int = 0;
    var nans: int = 0;
    on P(p) {
        n += 1;
        sum = (sum * 31 + p.n) %% 1000000007;
        if p.x != p.x { nans += 1; }
        if p.odd { sum += 1; }
    }
    on G(g) if g.k %% 100 == 0 { print("g " + str(g.k)); }
    on Done(d) { print(format("{} {} {} {}", d.n, n, sum, nans)); }
}
main { spawn Src; spawn Sink%[4]s; }
`

// TestTierRegionPublishes runs loops whose regions append publishes to
// the guest's batch from compiled code, past BatchFlush (the region then
// leaves at the publish and the guest hands the batch over), with
// guarded publishes that leave the region, traps after a publish
// (uncaught and caught by a caller's try), and budgets that run out at
// every step of a loop, around a flush included: the native engine, the
// wasm engine and the wasm engine without the tier agree on output,
// traps and every consumer's journal.
func TestTierRegionPublishes(t *testing.T) {
	for _, c := range []struct{ name, budget, n, tail, place string }{
		{"done", "", "3000", "", ""},
		{"pinned", "", "3000", "", " on pinned"},
		{"trap", "", "3000", "for j in 0..100 { publish P { n: j, x: 1.0, odd: true }; s += half(s, 40 - j); }", ""},
		{"caught", "", "3000", `for j in 0..100 {
            publish P { n: j, x: 1.0, odd: true };
            match try half(s, 40 - j) { Ok(v) => { s += v & 3; }, Err(e) => { print(e.message); } }
        }`, ""},
		{"overflow", "", "3000", "var m = 1; for j in 0..100 { publish P { n: m, x: 1.0, odd: true }; m = m * 3; }", ""},
		{"budget", "@budget(steps: 40000)", "100000", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			img := compileAll(t, fmt.Sprintf(regionPubSrc, c.budget, c.n, c.tail, c.place))
			if n := tier.RegionPublishes(img, tier.NewPlan(img)); n < 2 {
				t.Fatalf("%d publishes compiled in regions; want the loops' publishes of P", n)
			}
			before := tierAnswered.Load()
			wasm := runJournaled(t, img, Options{})
			if tierAnswered.Load() == before {
				t.Fatal("no tier call answered")
			}
			if want := c.name == "trap" || c.name == "overflow" || c.name == "budget"; want != (wasm.res.Code == ExitTrap) {
				t.Fatalf("exit %d\n%s", wasm.res.Code, wasm.stderr)
			}
			t.Logf("exit %d\n%s%s", wasm.res.Code, wasm.stdout, wasm.stderr)
		})
	}
	// Budgets that stop the first loop at each of its steps: at its
	// start, and around the publish where its batch would pass
	// BatchFlush (records of 22 bytes: the 745th), found on the native
	// engine by bisection over the budget.
	t.Run("budgets", func(t *testing.T) {
		at := func(b int) *image.Image {
			return compileAll(t, fmt.Sprintf(regionPubSrc, fmt.Sprintf("@budget(steps: %d)", b), "3000", "", ""))
		}
		published := func(b int) int {
			j := &batchJournal{newLogJournal(at(b))}
			runWith(t, j.prog, Options{Engine: EngineNative, Journal: j})
			n := 0
			for _, e := range j.events(0) {
				if strings.HasPrefix(e, "publish ") {
					n++
				}
			}
			return n
		}
		lo, hi := 100, 100000 // published(lo) < 745 <= published(hi)
		for hi-lo > 1 {
			if mid := (lo + hi) / 2; published(mid) < 745 {
				lo = mid
			} else {
				hi = mid
			}
		}
		step := 1
		if testing.Short() {
			step = 5
		}
		for _, r := range [][2]int{{40, 120}, {hi - 60, hi + 60}} {
			for b := r[0]; b < r[1]; b += step {
				if o := runJournaled(t, at(b), Options{}); o.res.Code != ExitTrap || !strings.Contains(o.stderr, "budget") {
					t.Fatalf("budget %d: exit %d\n%s", b, o.res.Code, o.stderr)
				}
			}
		}
		t.Logf("the 745th publish at budget %d", hi)
	})
}

// TestTierRegionPublishPlanned checks which publishes regions compile:
// Savina Counting's producer loop's (its Retrieve after the loop is in
// no loop), no publish of a guarded topic, and none whose payload holds
// a string.
func TestTierRegionPublishPlanned(t *testing.T) {
	b, err := os.ReadFile("../../cmd/hale/cli/testdata/bench/counting.hl")
	if err != nil {
		t.Fatal(err)
	}
	img := compileAll(t, string(b))
	if n := tier.RegionPublishes(img, tier.NewPlan(img)); n != 1 {
		t.Fatalf("counting: %d publishes compiled in regions, want 1", n)
	}
	for _, src := range []string{`
topic G { k: int }
locus Src { on start { for i in 0..10 { publish G { k: i }; } } }
locus Sink { on G(g) if g.k > 3 { print(g.k); } }
main { spawn Src; spawn Sink; }
`, `
topic S { k: int, s: string }
locus Src { on start { for i in 0..10 { publish S { k: i, s: "x" }; } } }
locus Sink { on S(m) { print(m.s); } }
main { spawn Src; spawn Sink; }
`} {
		img := compileAll(t, src)
		p := tier.NewPlan(img)
		if n := tier.RegionPublishes(img, p); n != 0 || len(p.Regions) == 0 {
			t.Fatalf("%d publishes compiled in %d regions, want none in the loop's:\n%s", n, len(p.Regions), src)
		}
	}
}
