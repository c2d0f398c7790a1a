package host

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/hale-lang/hale/vm"
	"github.com/tetratelabs/wazero/experimental"
)

// Both kinds of guest memory grow in place where they can, keep their
// contents, hand out zeroed new bytes and refuse to pass their maximum.
func TestGuestMemory(t *testing.T) {
	const max = 1 << 20
	kinds := map[string]experimental.LinearMemory{
		"allocator": guestMemory.Allocate(0, max),
		"slice":     &sliceMemory{max: max},
	}
	if m := reserveMemory(max); m != nil {
		kinds["mapped"] = m
	}
	for name, m := range kinds {
		t.Run(name, func(t *testing.T) {
			defer m.Free()
			a := m.Reallocate(1 << 16)
			if len(a) != 1<<16 {
				t.Fatalf("len %d, want %d", len(a), 1<<16)
			}
			a[0], a[len(a)-1] = 7, 9
			b := m.Reallocate(3 << 16)
			if len(b) != 3<<16 || b[0] != 7 || b[1<<16-1] != 9 {
				t.Fatalf("growing lost the contents: len %d, %d %d", len(b), b[0], b[1<<16-1])
			}
			for i, c := range b[1<<16:] {
				if c != 0 {
					t.Fatalf("grown byte %d is %d, want 0", 1<<16+i, c)
				}
			}
			if _, mapped := m.(*mappedMemory); mapped && unsafe.SliceData(a) != unsafe.SliceData(b) {
				t.Error("a mapped memory moved when it grew")
			}
			if c := m.Reallocate(max + 1); c != nil {
				t.Errorf("grew past the maximum to %d bytes", len(c))
			}
		})
	}
}

// A guest that runs out of memory is a trap of the program, not a crash
// of the engine.
func TestOutOfMemoryIsATrap(t *testing.T) {
	e := &wasmGuest{stderr: &cappedBuffer{max: 1 << 10}}
	e.stderr.Write([]byte("runtime: out of memory: cannot allocate 3825205248-byte block\nfatal error: out of memory\n"))
	var tr *vm.Trap
	if err := e.crashed(errors.New("wasm error: unreachable")); !errors.As(err, &tr) || tr.Message != msgOutOfMemory {
		t.Errorf("got %v, want the trap %q", err, msgOutOfMemory)
	}
	other := &wasmGuest{stderr: &cappedBuffer{max: 1 << 10}}
	other.stderr.Write([]byte("fatal error: all goroutines are asleep\n"))
	if err := other.crashed(errors.New("wasm error: unreachable")); errors.As(err, &tr) {
		t.Errorf("another crash became a trap: %v", err)
	}
}

// TestGuestSoftLimit: the guest's GOMEMLIMIT is three times the memory
// limit, from 1 GiB to 3 GiB: at the default limit it stays 1 GiB, and
// under HALE_MEMORY_LIMIT=1GiB the collector does not run without end
// once the data passes a third of the limit.
func TestGuestSoftLimit(t *testing.T) {
	for _, c := range []struct{ limit, want int64 }{
		{0, 1 << 30},
		{1 << 20, 1 << 30},
		{vm.DefaultMemoryLimit, 1 << 30},
		{512 << 20, 1536 << 20},
		{MaxMemoryLimit, 3 << 30},
		{2 << 30, 3 << 30},
	} {
		if got := guestSoftLimit(c.limit); got != c.want {
			t.Errorf("memory limit %d: soft limit %d, want %d", c.limit, got, c.want)
		}
	}
}
