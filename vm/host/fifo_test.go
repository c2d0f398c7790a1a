package host

import (
	"math/rand/v2"
	"testing"
)

// A fifo gives back what was pushed, in order, whatever the mix of pushes
// and pops across block boundaries, and holds no payload it gave back.
func TestFifoOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q fifo
	var want []Delivery
	next := 0
	for step := range 20000 {
		// Phases of growth and of draining, so that the queue both spans
		// many blocks and empties now and then.
		grow := (step/3000)%2 == 0
		if len(want) == 0 || rng.IntN(10) < 4 || grow && rng.IntN(10) < 8 {
			d := Delivery{Target: next, Payload: []byte{byte(next)}}
			next++
			q.push(d)
			want = append(want, d)
		} else {
			got := q.pop()
			if got.Target != want[0].Target {
				t.Fatalf("step %d: popped %d, want %d", step, got.Target, want[0].Target)
			}
			want = want[1:]
		}
		if q.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, q.len(), len(want))
		}
	}
	for len(want) > 0 {
		if got := q.pop(); got.Target != want[0].Target {
			t.Fatalf("drain: popped %d, want %d", got.Target, want[0].Target)
		}
		want = want[1:]
	}
	for _, b := range append(q.blocks, q.spare...) {
		if b == nil {
			continue
		}
		for i := range b {
			if b[i].Payload != nil {
				t.Fatalf("an emptied queue still holds a payload at %d", i)
			}
		}
	}
	if len(q.spare) == 0 || len(q.spare) > fifoSpares {
		t.Errorf("a drained queue that spanned many blocks keeps %d spare blocks, want 1 to %d", len(q.spare), fifoSpares)
	}
	q.push(Delivery{Target: 7})
	if n := q.clear(); n != 1 || q.len() != 0 {
		t.Errorf("clear: %d, len %d", n, q.len())
	}
}

// A queue that swings between empty and several blocks long, as a
// consumer's does when its producer's batches arrive while it waits for a
// core, reuses its emptied blocks instead of allocating new ones.
func TestFifoReusesBlocks(t *testing.T) {
	var q fifo
	swing := func() {
		for i := range 6 * fifoBlockLen {
			q.push(Delivery{Target: i})
		}
		for i := range 6 * fifoBlockLen {
			if d := q.pop(); d.Target != i {
				t.Fatalf("popped %d, want %d", d.Target, i)
			}
		}
	}
	swing()
	if allocs := testing.AllocsPerRun(20, swing); allocs > 0 {
		t.Errorf("a swing of 6 blocks allocated %.1f times, want none", allocs)
	}
}
