//go:build linux || darwin || freebsd || netbsd || openbsd

package host

import (
	"golang.org/x/sys/unix"

	"github.com/tetratelabs/wazero/experimental"
)

// mappedMemory is a guest memory inside one private anonymous mapping of
// its maximum size. The kernel supplies zeroed pages as the guest first
// touches them, which is also what wasm requires of grown memory (the
// memory never shrinks, so bytes past the current size were never
// written).
type mappedMemory struct {
	buf []byte
}

// reserveMemory maps max bytes of address space, or returns nil when the
// system refuses (a strict overcommit policy, a small address space), and
// the caller falls back to a slice.
func reserveMemory(max uint64) experimental.LinearMemory {
	if max == 0 || max > 1<<32 {
		return nil
	}
	buf, err := unix.Mmap(-1, 0, int(max), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|mapNoReserve)
	if err != nil {
		return nil
	}
	adviseHugePages(buf)
	return &mappedMemory{buf: buf}
}

func (m *mappedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size:size]
}

func (m *mappedMemory) Free() {
	if m.buf != nil {
		_ = unix.Munmap(m.buf)
		m.buf = nil
	}
}
