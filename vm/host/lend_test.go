package host

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// pingPongSrc passes a message back and forth n times between two pinned
// instances (or, with ring > 2, around a ring of pinned instances).
func ringSrc(ring, hops int, extra string) string {
	return fmt.Sprintf(`
const RING: int = %d;
const HOPS: int = %d;
topic Token { to: int, left: int }
locus Node(id: int) {
    var seen: int = 0;
    on start { if id == 0 { publish Token { to: 1 %% RING, left: HOPS }; } }
    on Token(t) if t.to == id {
        seen += 1;
        %s
        if t.left == 0 { print("done at " + str(id) + " after " + str(seen)); return; }
        publish Token { to: (id + 1) %% RING, left: t.left - 1 };
    }
}
main { for i in 0..RING { spawn Node(i) as nodes[i] on pinned; } }
`, ring, hops, extra)
}

// runLending runs img with lending on and off, on both engines, checks
// that every run agrees with the others, and returns how many deliveries
// borrowers ran with lending on.
func runLending(t *testing.T, src string, opts Options) (outcome, int64) {
	t.Helper()
	img := compileAll(t, src)
	t.Cleanup(func() { noLend = false })
	noLend = true
	off := runBoth(t, img, opts)
	noLend = false
	before := lent.Load()
	on := runBoth(t, img, opts)
	if on.stdout != off.stdout || on.stderr != off.stderr || on.res.Code != off.res.Code || !slices.Equal(on.res.Handled, off.res.Handled) {
		t.Fatalf("lending changed the run:\non: exit %d handled %v\n%s%s\noff: exit %d handled %v\n%s%s",
			on.res.Code, on.res.Handled, on.stdout, on.stderr, off.res.Code, off.res.Handled, off.stdout, off.stderr)
	}
	return on, lent.Load() - before
}

// A ping-pong and a ring of pinned instances run on one goroutine:
// borrowers run most deliveries, and the runs are those without lending.
func TestLendPingPongAndRing(t *testing.T) {
	for _, ring := range []int{2, 5} {
		out, n := runLending(t, ringSrc(ring, 2000, ""), Options{})
		if out.res.Code != 0 || !strings.Contains(out.stdout, "done at") {
			t.Fatalf("ring %d: exit %d\n%s%s", ring, out.res.Code, out.stdout, out.stderr)
		}
		// Two engines, 2001 deliveries of Token each, of which the
		// goroutine of the node that sent the first token runs its own
		// share and, lent, most of the others'.
		if want := int64(2 * 2000 * (ring - 1) / ring / 2); n < want {
			t.Errorf("ring %d: %d deliveries lent, want at least %d", ring, n, want)
		}
	}
}

// A consumer whose handlers may block (a sleep) is never lent, and its
// publishes wake their targets at once.
func TestLendNotWhatMayBlock(t *testing.T) {
	_, n := runLending(t, ringSrc(2, 50, `if t.left == 1000000 { std::time::sleep_ms(1); }`), Options{})
	if n != 0 {
		t.Errorf("%d deliveries lent in a ring that may sleep", n)
	}
}

// Lending under a Journal keeps every promise of the Journal (each
// consumer's deliveries numbered in order, on its own consumer, after
// their publishes), and runs nothing lent under one that may wait.
func TestLendUnderJournal(t *testing.T) {
	img := compileAll(t, ringSrc(3, 300, ""))
	for _, kind := range realEngines {
		j := newLogJournal(img)
		before := lent.Load()
		out := runWith(t, img, Options{Engine: kind, Journal: independentJournal{j}})
		if out.err != nil || out.res.Code != 0 {
			t.Fatalf("%v: exit %d, %v\n%s", kind, out.res.Code, out.err, out.stderr)
		}
		j.check(t)
		if lent.Load() == before {
			t.Errorf("%v: nothing lent under an independent journal", kind)
		}
		before = lent.Load()
		j = newLogJournal(img)
		runWith(t, img, Options{Engine: kind, Journal: j})
		j.check(t)
		if lent.Load() != before {
			t.Errorf("%v: deliveries lent under a journal that may wait", kind)
		}
	}
}

// A handler that computes for a long time after a publish does not hold
// the publish's target back: the deferred wake comes after lendDelay, so
// the worker answers while the producer still computes. (The native
// engine: on wasm the tier runs the loop too fast to be sure of it.)
func TestLendDoesNotHoldWorkBack(t *testing.T) {
	src := `
topic Job { n: int }
locus Producer {
    on start {
        publish Job { n: 1 };
        var x = 0;
        var i = 0;
        while i < 1000000 { x = (x + i) % 1000; i += 1; }
        print("producer done " + str(x));
    }
}
locus Worker {
    on Job(j) { print("worker got " + str(j.n)); }
}
main { spawn Producer on pinned; spawn Worker on pinned; }
`
	img := compileAll(t, src)
	out := runWith(t, img, Options{Engine: EngineNative})
	if out.err != nil || out.res.Code != 0 {
		t.Fatalf("exit %d, %v\n%s", out.res.Code, out.err, out.stderr)
	}
	if !strings.HasPrefix(out.stdout, "worker got 1\n") {
		t.Errorf("the worker waited for the producer's handler:\n%s", out.stdout)
	}
}

// The mechanism alone: a publish to a waiting lendable consumer defers
// its wake; the end of the handler hands it to the publisher's goroutine
// (next), or, when the handler runs on, the timer wakes it.
func TestLendDeferredWake(t *testing.T) {
	defer func(d time.Duration) { lendDelay = d }(lendDelay)
	r := &runner{}
	newConsumer := func(id int) *consumer {
		return &consumer{r: r, id: id, inOrder: true, lendable: true, waiting: true, wake: make(chan struct{}, 1)}
	}
	home, target := newConsumer(0), newConsumer(1)
	home.waiting = false
	h := home.hold()

	lendDelay = time.Hour
	target.enqueueFrom(home, Delivery{Target: 1})
	if len(target.wake) != 0 || !target.waiting {
		t.Fatal("the wake was not deferred")
	}
	if c := h.next(); c != target {
		t.Fatalf("next = %v, want the target", c)
	}
	if !target.borrow() {
		t.Fatal("the waiting target could not be borrowed")
	}
	target.enqueue(Delivery{Target: 1}) // not a publish: the borrower has it
	if len(target.wake) != 0 {
		t.Fatal("a borrowed consumer's own goroutine was woken")
	}
	target.giveBack() // two pending: its own goroutine takes over
	select {
	case <-target.wake:
	default:
		t.Fatal("giveBack left pending deliveries to nobody")
	}
	target.fifo.clear()
	target.waiting = true

	lendDelay = time.Millisecond
	target.enqueueFrom(home, Delivery{Target: 1})
	select {
	case <-target.wake:
	case <-time.After(10 * time.Second):
		t.Fatal("the timer did not wake the deferred consumer")
	}
	if h.next() != nil {
		t.Error("the woken consumer is still deferred")
	}
}
