package pages

import (
	"bytes"
	"testing"
)

// TestPrepare holds Prepare to changing nothing a program can see: slices
// of every size around MinBytes and a huge page, fresh or written before,
// keep their length, capacity and contents, and stay writable.
func TestPrepare(t *testing.T) {
	for _, n := range []int{0, 1, 4095, MinBytes - 1, MinBytes, MinBytes + 1, 3 << 20, 5<<20 + 17} {
		b := make([]byte, n, n+n/3)
		Prepare(b)
		if len(b) != n || cap(b) != n+n/3 {
			t.Fatalf("%d bytes: len %d cap %d after Prepare", n, len(b), cap(b))
		}
		if !bytes.Equal(b[:cap(b)], make([]byte, cap(b))) {
			t.Fatalf("%d bytes: a fresh slice is not zero after Prepare", n)
		}
		for i := range b {
			b[i] = byte(i*7 + 1)
		}
		want := bytes.Clone(b)
		Prepare(b)
		Prepare(b[:n/2])
		if !bytes.Equal(b, want) {
			t.Fatalf("%d bytes: Prepare changed written contents", n)
		}
	}
	type span struct{ a, b, c, d uint64 }
	s := make([]span, 0, 200000)
	Prepare(s)
	for i := range 200000 {
		s = append(s, span{uint64(i), 1, 2, 3})
	}
	for i, v := range s {
		if v.a != uint64(i) || v.d != 3 {
			t.Fatalf("span %d is %+v", i, v)
		}
	}
	// An unaligned window of a larger slice: only its own pages, and
	// nothing outside it, are touched.
	big := make([]byte, 2<<20)
	for i := range big {
		big[i] = 0xa5
	}
	Prepare(big[1000 : 1<<20+3])
	for i, c := range big {
		if c != 0xa5 {
			t.Fatalf("byte %d is %#x after Prepare of a window", i, c)
		}
	}
}
