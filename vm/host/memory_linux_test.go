package host

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// A guest's memory asks for transparent huge pages, so that a guest's
// start and its heap's growth fault in 2 MiB at a time rather than 4 KiB
// (a page fault costs microseconds; a guest that has just started
// touches about 600 small pages). The test reads the mapping's flags
// from /proc/self/smaps: "hg" is MADV_HUGEPAGE.
func TestGuestMemoryAdvisesHugePages(t *testing.T) {
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skipf("no transparent huge pages: %v", err)
	} else if strings.Contains(string(b), "[never]") {
		t.Skip("transparent huge pages are off on this system")
	}
	m := reserveMemory(1 << 30)
	if m == nil {
		t.Skip("no mapped guest memory here")
	}
	defer m.Free()
	buf := m.Reallocate(4 << 20)
	buf[0] = 1
	flags, err := vmFlags(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the guest memory's mapping has flags %q, without hg (MADV_HUGEPAGE)", flags)
	}
}

// vmFlags returns the VmFlags line of the mapping that holds addr.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	in := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 && strings.Contains(line[:strings.IndexByte(line, ' ')], "-") {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping holds %#x", addr)
}
