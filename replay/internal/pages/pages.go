// Package pages asks the system for the pages of a large slice at once,
// before the slice is first written.
//
// A replay fills tens of megabytes that a recorded run never touches: the
// artifact read into memory, its index and the replayer's tables. Each of
// their pages costs a page fault when first written, and where the
// machine is virtual a fault costs several microseconds: 400,000 entries
// take about 7,000 of them. Prepare has the system supply the pages of
// such a slice in one call instead (and, where the system gives huge
// pages only on request, as huge pages), which costs a fraction of the
// faults and changes nothing in the slice.
package pages

import "unsafe"

// MinBytes is the size below which Prepare does nothing: a smaller slice
// has too few pages to be worth the system call.
const MinBytes = 256 << 10

// Prepare readies the memory of s, up to its capacity, for being written:
// on Linux it asks the system to supply the pages now (madvise with
// MADV_POPULATE_WRITE, and MADV_HUGEPAGE first when transparent huge
// pages are given on request only). It does not change s's contents,
// length or capacity, and a system that refuses (an older kernel, another
// system) leaves the pages to be supplied on first write, as before. Use
// it on a slice just made and not yet written: the memory of a slice
// made from the garbage collector's recycled pages is already present,
// and Prepare then costs one system call that finds nothing to do.
func Prepare[T any](s []T) {
	var zero T
	n := uintptr(cap(s)) * unsafe.Sizeof(zero)
	if n < MinBytes {
		return
	}
	prepare(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s[:cap(s)]))), n))
}
