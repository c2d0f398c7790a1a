//go:build linux

package pages

import (
	"bytes"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeOnRequest reports whether the system gives transparent huge pages
// only to memory that asks for them (the "madvise" setting).
var hugeOnRequest = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && bytes.Contains(b, []byte("[madvise]"))
})

// hugePage is the size of a transparent huge page on amd64 and arm64
// (with 4 KiB pages).
const hugePage = 2 << 20

func prepare(b []byte) {
	// madvise takes whole pages: the part of b from its first page
	// boundary to its last.
	ps := uintptr(os.Getpagesize())
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (ps - p%ps) % ps
	hi := (p + uintptr(len(b))) % ps
	if lo+hi >= uintptr(len(b)) {
		return
	}
	b = b[lo : uintptr(len(b))-hi]
	if len(b) >= hugePage && hugeOnRequest() {
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	}
	_ = unix.Madvise(b, unix.MADV_POPULATE_WRITE)
}
