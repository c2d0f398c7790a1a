package vm

import (
	"unsafe"

	"github.com/hale-lang/hale/vm/internal/tier"
	"github.com/hale-lang/hale/vm/value"
)

// The guest's side of allocation in compiled code (vm/internal/tier,
// alloc.go): the arena compiled functions make enum values in, and the
// block of addresses they read it and the memory account through.
//
// The arena is a []byte, so Go's collector never scans it. What its
// objects point to (enum types, and values compiled code was handed) is
// held elsewhere for as long as the arena is read: by the frames of the
// interpreter, which do not change while compiled code runs, and by the
// values those hold, which compiled code never overwrites with
// pointers. A value that leaves compiled code for the interpreter is
// copied into Go's heap (value.CopyOut), and each call starts with an
// empty arena.
var tierArena struct {
	block [tier.AllocSize / 8]uint64
	mem   []byte
}

// The arena's first size (room for a tree of 200,000 nodes of two
// values, 80 bytes each; its pages are touched only as they are used),
// and the size past which it grows to its largest at once: compiled code
// that fills it hands its call back and the guest makes it four times
// larger, up to arenaMax, then as large as the machine's memory limit
// allows (arenaLargest); a function whose values do not fit even then is
// interpreted from then on.
const (
	arenaFirst = 16 << 20
	arenaMax   = 64 << 20
)

// allocBlock readies the allocation block for a tier call of m and
// returns its address, or 0 when no compiled function allocates. The
// guest runs one call at a time, so one block and one arena serve all
// its machines.
func (m *Machine) allocBlock() uint64 {
	if !m.tierAllocs {
		return 0
	}
	a := &tierArena
	if a.mem == nil {
		a.mem = make([]byte, arenaFirst)
	}
	base := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(a.mem))))
	b := &a.block
	b[tier.AllocPtr/8] = base
	b[tier.AllocEnd/8] = base + uint64(len(a.mem))
	b[tier.AllocBase/8] = base
	b[tier.AllocCharged/8] = uint64(uintptr(unsafe.Pointer(&m.mem.charged)))
	b[tier.AllocAllowance/8] = uint64(uintptr(unsafe.Pointer(&m.mem.allowance)))
	b[tier.AllocConsts/8] = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(m.consts))))
	b[tier.AllocFull/8] = 0
	return uint64(uintptr(unsafe.Pointer(b)))
}

// arenaAfterCall grows the arena when the call that just returned found
// it full, and reports false when it was full at its largest already.
func (m *Machine) arenaAfterCall() bool {
	a := &tierArena
	if a.block[tier.AllocFull/8] == 0 {
		return true
	}
	a.block[tier.AllocFull/8] = 0
	largest := m.arenaLargest()
	if len(a.mem) >= largest {
		return false
	}
	next := 4 * len(a.mem)
	if next > arenaMax {
		// Past arenaMax straight to the largest: each size the arena
		// outgrows stays in the guest's memory, whose 4 GiB a large
		// limit's arenas must share with the data.
		next = largest
	}
	a.mem = make([]byte, min(next, largest))
	return true
}

// arenaLargest is the largest the arena grows to for m: arenaMax, or a
// sixteenth more than m's memory limit when that is more. An enum value
// takes as many bytes in the arena as the limit counts for it (value's
// layout), so a call whose values fit the limit fits the arena too, save
// for its garbage, which the arena keeps until the call returns.
func (m *Machine) arenaLargest() int {
	l := int64(arenaMax)
	if lim := m.mem.limit; lim > 0 {
		l = max(l, (lim+lim/16)&^7)
	}
	return int(l)
}

// arenaResult reads the enum Value at the address a compiled function
// returned, copied out of the arena; ok is false when the address does
// not hold an enum.
func (m *Machine) arenaResult(addr uint64) (v value.Value, ok bool) {
	if addr == 0 || addr%8 != 0 {
		return value.Value{}, false
	}
	v = *(*value.Value)(guestAddr(addr))
	if v.Kind() != value.KindEnum {
		return value.Value{}, false
	}
	mem := tierArena.mem
	if len(mem) == 0 {
		return v, true
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	return value.CopyOut(v, lo, lo+uintptr(len(mem))), true
}

// guestAddr is the pointer at an address of the guest's memory that
// compiled code handed back: one Go's heap, the interpreter's stack or the
// arena holds, none of which moves (the guest's collector does not move
// objects, and no goroutine stack is handed to compiled code).
func guestAddr(a uint64) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(nil), uintptr(a)) }
