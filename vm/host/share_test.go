package host

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hale-lang/hale/codegen/image"
)

// manyPinnedSrc has more pinned cells than sharedGuests(), so that on the
// wasm engine they share guests. Each cell keeps state across three
// rounds and grows a list of `grow` ints per round; {{extra}} goes at the
// end of its handler. Only the boss prints, so the output is in one
// order.
func manyPinnedSrc(cells, grow int, extra string) string {
	return fmt.Sprintf(`
const N: int = %d;
topic Go { round: int }
topic Ack { id: int, total: int, size: int }
locus Boss {
    var acks: int = 0;
    var sum: int = 0;
    var round: int = 1;
    on start { publish Go { round: 1 }; }
    on Ack(a) {
        acks += 1;
        sum += a.total * 1000 + a.size;
        if acks == N * round {
            print("round " + str(round) + " sum " + str(sum));
            round += 1;
            if round <= 3 { publish Go { round: round }; }
        }
    }
}
locus Cell(id: int) {
    var total: int = 0;
    var xs: [int] = [];
    on Go(g) {
        total += (id + 1) * g.round;
        var i: int = 0;
        while i < %d { push(xs, i); i += 1; }
        %s
        publish Ack { id: id, total: total, size: len(xs) };
    }
}
main {
    spawn Boss;
    for i in 0..N { spawn Cell(i) as cells[i] on pinned; }
}
`, cells, grow, extra)
}

// sharedCells is a cell count that makes every shared guest host two or
// three cells.
func sharedCells() int { return 2*sharedGuests() + 3 }

// startedRunner makes the runner of a run of img (engines started, nothing
// run yet) and closes it when the test ends.
func startedRunner(t *testing.T, img *image.Image, opts Options) *runner {
	t.Helper()
	r, err := newRunner(context.Background(), img, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.closeEngines)
	return r
}

// guestsOf returns the number of distinct guests the runner's wasm
// engines use, and how many engines share a guest with another.
func guestsOf(t *testing.T, r *runner) (guests, sharing int) {
	t.Helper()
	users := map[*wasmGuest]int{}
	for _, c := range r.consumers {
		if c.engine == nil {
			continue
		}
		e, ok := c.engine.(*wasmEngine)
		if !ok {
			t.Fatalf("consumer %d: engine %T", c.id, c.engine)
		}
		users[e.g]++
	}
	for _, n := range users {
		if n > 1 {
			sharing += n
		}
	}
	return len(users), sharing
}

// Pinned consumers beyond sharedGuests() share that many guests on the
// wasm engine, and the run is the native engine's (a machine per
// consumer): the same output, the same deliveries per consumer.
func TestPinnedConsumersShareGuests(t *testing.T) {
	n := sharedCells()
	img := compileAll(t, manyPinnedSrc(n, 10, ""))
	guests, sharing := guestsOf(t, startedRunner(t, img, Options{}))
	if guests != sharedGuests()+1 || sharing != n {
		t.Errorf("%d guests, %d engines sharing one; want %d guests (the main bus's and %d shared), %d sharing",
			guests, sharing, sharedGuests()+1, sharedGuests(), n)
	}
	out := runBoth(t, img, Options{})
	want := ""
	sum := 0
	for round := 1; round <= 3; round++ {
		for id := range n {
			total := 0
			for r := 1; r <= round; r++ {
				total += (id + 1) * r
			}
			sum += total*1000 + 10*round
		}
		want += fmt.Sprintf("round %d sum %d\n", round, sum)
	}
	if out.stdout != want || out.res.Code != 0 {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", out.res.Code, out.stdout, want)
	}
}

// runBoth runs img on both engines, checks that they agree on stdout,
// stderr, exit code and deliveries per consumer, and returns the wasm
// run's outcome.
func runBoth(t *testing.T, img *image.Image, opts Options) outcome {
	t.Helper()
	return runBothHandled(t, img, opts, true)
}

// runBothHandled is runBoth, comparing deliveries per consumer only when
// handled is set (a run that traps stops the other consumers wherever
// they are).
func runBothHandled(t *testing.T, img *image.Image, opts Options, handled bool) outcome {
	t.Helper()
	var outs []outcome
	for _, kind := range realEngines {
		opts.Engine = kind
		o := runWith(t, img, opts)
		if o.err != nil {
			t.Fatalf("%v: %v", kind, o.err)
		}
		outs = append(outs, o)
	}
	a, b := outs[0], outs[1]
	if a.stdout != b.stdout || a.stderr != b.stderr || a.res.Code != b.res.Code || handled && !slices.Equal(a.res.Handled, b.res.Handled) {
		t.Fatalf("engines disagree:\n%v: exit %d handled %v\n%s%s\n%v: exit %d handled %v\n%s%s",
			realEngines[0], a.res.Code, a.res.Handled, a.stdout, a.stderr, realEngines[1], b.res.Code, b.res.Handled, b.stdout, b.stderr)
	}
	return b
}

// The memory limit stays per consumer when consumers share a guest: each
// cell holds more than half the limit, so two cells of one guest counted
// together would trap, and with half the limit each cell does.
func TestSharedGuestsKeepMemoryLimitPerConsumer(t *testing.T) {
	img := compileAll(t, manyPinnedSrc(sharedCells(), 50000, ""))
	const limit = 4 << 20
	if out := runBoth(t, img, Options{MemoryLimit: limit}); out.res.Code != 0 {
		t.Fatalf("exit %d under a limit of %d:\n%s", out.res.Code, limit, out.stderr)
	}
	for _, kind := range realEngines {
		out := runWith(t, img, Options{Engine: kind, MemoryLimit: limit / 2})
		if out.res.Code != ExitTrap || !strings.Contains(out.stderr, "out of memory: the consumer's data outgrew its limit of 2 MiB") {
			t.Errorf("%v, half the limit: exit %d:\n%s", kind, out.res.Code, out.stderr)
		}
	}
}

// A trap in one cell of a shared guest is reported as its own, at its
// delivery, exactly as natively; the other cells' machines are untouched
// (the run ends with the trap either way).
func TestTrapInSharedGuest(t *testing.T) {
	img := compileAll(t, manyPinnedSrc(sharedCells(), 1, `if id == 5 && g.round == 2 { let ys: [int] = []; print(str(ys[total])); }`))
	out := runBothHandled(t, img, Options{}, false)
	if out.res.Code != ExitTrap || !strings.Contains(out.stderr, "(target cells[5], message ") {
		t.Errorf("exit %d:\n%s", out.res.Code, out.stderr)
	}
}

// Consumers that may block, async_io consumers, and runs under an Order
// or a Journal that may wait for other consumers keep a guest each; an
// independent Journal shares guests like no Journal.
func TestGuestSharingPolicy(t *testing.T) {
	n := sharedCells()
	shared := compileAll(t, manyPinnedSrc(n, 1, ""))
	sleepy := compileAll(t, manyPinnedSrc(n, 1, `if g.round == 9 { std::time::sleep_ms(1); }`))
	asyncIO := compileAll(t, strings.Replace(manyPinnedSrc(n, 1, ""), "on pinned", "on async_io", 1))
	for _, tc := range []struct {
		name  string
		img   *image.Image
		opts  Options
		share bool
	}{
		{"pinned", shared, Options{}, true},
		{"independent journal", shared, Options{Journal: independentJournal{newLogJournal(shared)}}, true},
		{"journal", shared, Options{Journal: newLogJournal(shared)}, false},
		{"order", shared, Options{Order: arrivalOrder{}}, false},
		{"debugger", shared, Options{Debug: func(int, []byte) ([]byte, error) { return nil, nil }}, false},
		{"native", shared, Options{Engine: EngineNative}, false},
		{"sleeps", sleepy, Options{}, false},
		{"async_io", asyncIO, Options{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startedRunner(t, tc.img, tc.opts)
			engines := r.execs
			group, k := r.guestGroups(engines)
			sharing := 0
			for _, g := range group {
				if g >= 0 {
					sharing++
				}
			}
			if tc.share && (k != sharedGuests() || sharing != n) || !tc.share && (k != 0 || sharing != 0) {
				t.Errorf("%d shared guests for %d consumers (share: %v)", k, sharing, tc.share)
			}
		})
	}
}

type independentJournal struct{ *logJournal }

func (independentJournal) Independent() bool { return true }

// arrivalOrder is an Order that takes deliveries in arrival order.
type arrivalOrder struct{}

func (arrivalOrder) Next(c int, pending []Delivery) (int, time.Duration) { return 0, 0 }

// blockingLoci follows calls, recursion included, to the primitives that
// block.
func TestBlockingLoci(t *testing.T) {
	img := compileAll(t, `
topic T { n: int }
fn nap(ms: int) { std::time::sleep_ms(ms); }
fn even(n: int) -> bool { if n == 0 { return true; } return odd(n - 1); }
fn odd(n: int) -> bool { if n == 0 { nap(1); return false; } return even(n - 1); }
fn pure(n: int) -> int { if n == 0 { return 0; } return pure(n - 1); }
locus Direct { on T(t) { std::time::sleep_ms(t.n); } }
locus Deep { on T(t) { if even(t.n) { print("even"); } } }
locus Start { on start { let b: bool = odd(3); } }
locus Net { on T(t) { let r = std::http::get("http://localhost:1/"); } }
locus Calm { on T(t) { print(str(pure(t.n))); std::time::now_ms(); } }
main { spawn Direct; spawn Deep; spawn Start; spawn Net; spawn Calm; }
`)
	got := blockingLoci(img)
	want := map[string]bool{"Direct": true, "Deep": true, "Start": true, "Net": true, "Calm": false}
	for l, lc := range img.Loci {
		if got[l] != want[lc.Name] {
			t.Errorf("%s: blocking %v, want %v", lc.Name, got[l], want[lc.Name])
		}
	}
}

// The second tier serves every machine of a shared guest: compiled
// functions over lists (which read and write the guest's memory) give
// each consumer its own results, as natively.
func TestSharedGuestsWithTheTier(t *testing.T) {
	src := strings.Replace(manyPinnedSrc(sharedCells(), 30, `total += bump(xs, id);`), "locus Boss {", `fn bump(xs: [int], by: int) -> int {
    var s: int = 0;
    var i: int = 0;
    while i < len(xs) { xs[i] = xs[i] + by; s += xs[i]; i += 1; }
    return s % 1000;
}
locus Boss {`, 1)
	img := compileAll(t, src)
	out := runBoth(t, img, Options{})
	if out.res.Code != 0 || !strings.Contains(out.stdout, "round 3 sum ") {
		t.Errorf("exit %d:\n%s%s", out.res.Code, out.stdout, out.stderr)
	}
}
