package vm

import (
	"testing"
	"unsafe"

	"github.com/hale-lang/hale/vm/internal/tier"
)

// TestListPoolLayout keeps the list pool's layout the one compiled code
// reads (tier.RegionOutPool: a count, then the pointers), and fill gives
// fresh empty lists, never one it gave before.
func TestListPoolLayout(t *testing.T) {
	var lp listPool
	if off := unsafe.Offsetof(lp.p); off != 8 || unsafe.Offsetof(lp.n) != 0 || len(lp.p) != tier.ListPoolSize {
		t.Fatalf("pool layout: count at %d, pointers at %d, %d of them", unsafe.Offsetof(lp.n), off, len(lp.p))
	}
	if addr := lp.fill(); addr != uint64(uintptr(unsafe.Pointer(&lp))) || lp.n != tier.ListPoolSize {
		t.Fatalf("fill: address %x, count %d", addr, lp.n)
	}
	seen := map[unsafe.Pointer]bool{}
	for _, l := range lp.p {
		if l.Len() != 0 {
			t.Fatalf("a pool list holds %d elements", l.Len())
		}
		seen[unsafe.Pointer(l)] = true
	}
	lp.n -= 3 // compiled code took three
	lp.fill()
	fresh := 0
	for _, l := range lp.p {
		if !seen[unsafe.Pointer(l)] {
			fresh++
		}
	}
	if fresh != 3 || len(seen) != tier.ListPoolSize {
		t.Fatalf("after three were taken, fill made %d new lists (of %d distinct before), want 3", fresh, len(seen))
	}
}
