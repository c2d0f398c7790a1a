package host

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm"
)

// quietJournal is a Journal that records nothing and never waits.
type quietJournal struct{}

func (quietJournal) Invoke(c int, p stdlib.Primitive, args []byte, live func() ([]byte, error)) ([]byte, error) {
	return live()
}
func (quietJournal) Publish(int, MessageID, int, []byte, []int)     {}
func (quietJournal) Deliver(int, int, *Delivery, StateReader) error { return nil }
func (quietJournal) Trap(int, int, *vm.Trap, *Delivery)             {}
func (quietJournal) End(string, int)                                {}
func (quietJournal) Independent() bool                              { return true }

// A journaled run allocates nothing per delivery beyond what the same run
// without a Journal allocates: stamping a delivery hands the Journal a
// pointer to the consumer's own field, not a copy on the heap.
func TestJournalStampAllocatesNothing(t *testing.T) {
	chain := func(n int) string {
		return fmt.Sprintf(`
const N: int = %d;
topic Step { n: int }
locus Chain {
    on start { publish Step { n: 0 }; }
    on Step(s) { if s.n < N { publish Step { n: s.n + 1 }; } }
}
main { spawn Chain; }
`, n)
	}
	const small, large = 1000, 21000
	mallocs := func(n int, j Journal) uint64 {
		img := compileAll(t, chain(n))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out := runWith(t, img, Options{Engine: EngineNative, Journal: j})
		runtime.ReadMemStats(&after)
		if out.err != nil || out.res.Code != 0 {
			t.Fatalf("exit %d, %v\n%s", out.res.Code, out.err, out.stderr)
		}
		return after.Mallocs - before.Mallocs
	}
	perDelivery := func(j Journal) float64 {
		best := 1e9
		for range 3 {
			d := float64(int64(mallocs(large, j))-int64(mallocs(small, j))) / (large - small)
			best = min(best, d)
		}
		return best
	}
	plain, journaled := perDelivery(nil), perDelivery(quietJournal{})
	if journaled > plain+0.5 {
		t.Errorf("a journaled run allocates %.2f times per delivery, an unjournaled one %.2f", journaled, plain)
	}
}
