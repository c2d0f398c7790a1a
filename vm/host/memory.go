package host

import "github.com/tetratelabs/wazero/experimental"

// guestMemory backs every wasm guest's linear memory. wazero's default
// keeps the memory in a Go slice and copies all of it into a larger one
// whenever the guest grows past the capacity; reserveMemory (where the
// platform has it) instead reserves the largest memory the guest may have
// as address space up front, so that growing never copies and untouched
// memory costs nothing.
var guestMemory experimental.MemoryAllocator = experimental.MemoryAllocatorFunc(func(capacity, max uint64) experimental.LinearMemory {
	if m := reserveMemory(max); m != nil {
		return m
	}
	return &sliceMemory{buf: make([]byte, 0, capacity), max: max}
})

// sliceMemory is wazero's default behaviour: a slice grown by copying.
type sliceMemory struct {
	buf []byte
	max uint64
}

func (m *sliceMemory) Reallocate(size uint64) []byte {
	switch {
	case size > m.max:
		return nil
	case size <= uint64(cap(m.buf)):
		m.buf = m.buf[:size]
	default:
		m.buf = append(m.buf, make([]byte, size-uint64(len(m.buf)))...)
	}
	return m.buf
}

func (m *sliceMemory) Free() { m.buf = nil }
