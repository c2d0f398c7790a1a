package host

import "golang.org/x/sys/unix"

// adviseHugePages asks the kernel to back a guest memory with
// transparent huge pages where it can (MADV_HUGEPAGE; the kernel's
// default policy, "madvise" on most distributions, gives them only to
// memory that asks). A guest's Go runtime touches its memory from the
// bottom up: its data, then a heap that only grows. In 4 KiB pages, each
// page it touches first is a page fault: about 600 for a guest that has
// just started, and one per 4 KiB its heap grows by. In 2 MiB pages the
// faults are 512 times fewer, and the memory resident at most one huge
// page more than was touched (docs/performance.md §5.27). The advice
// changes nothing the guest reads: every new page is zeroed either way.
// A kernel without transparent huge pages refuses it, and the memory
// stays as it was.
func adviseHugePages(buf []byte) {
	_ = unix.Madvise(buf, unix.MADV_HUGEPAGE)
}
