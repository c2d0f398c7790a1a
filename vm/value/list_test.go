package value

import (
	"strings"
	"testing"
)

// TestPushStartsWithRoom: the first push to an empty list gives it room
// for minPushCap elements and a small full list grows four times over,
// so that a list built by pushes grows fewer times (each growth of a
// push compiled in a loop is a trip into the interpreter); past
// quadGrowUpTo it grows as append grows it. Its contents are the ones
// pushed.
func TestPushStartsWithRoom(t *testing.T) {
	l := NewList(nil).AsList()
	var caps []int
	for i := range 100 {
		before := cap(l.elems)
		if err := l.Push(Int(int64(i))); err != nil {
			t.Fatal(err)
		}
		if cap(l.elems) != before {
			caps = append(caps, cap(l.elems))
		}
	}
	if len(caps) < 4 || caps[0] != minPushCap || caps[1] != 4*minPushCap || caps[2] != 16*minPushCap {
		t.Fatalf("capacities as 100 pushes grow a list: %v, want 4, 16, 64, then append's", caps)
	}
	if caps[3] >= 4*caps[2] || caps[3] <= caps[2] {
		t.Fatalf("a list of %d grew to %d: past %d it grows as append does", caps[2], caps[3], quadGrowUpTo)
	}
	for i := range 100 {
		if l.At(i).AsInt() != int64(i) {
			t.Fatalf("element %d is %d after 100 pushes", i, l.At(i).AsInt())
		}
	}
	big := NewList(make([]Value, 9)).AsList()
	if err := big.Push(Int(1)); err != nil || big.Len() != 10 || big.At(9).AsInt() != 1 {
		t.Fatal("a full list of 9 takes a push")
	}
	if cap(big.elems) != 36 {
		t.Fatalf("a full list of 9 grew to %d, want 36", cap(big.elems))
	}
}

// TestJoinStrs: join of lists of strings of every length (none, one
// letter, longer, empty) with separators of every length is
// strings.Join's answer.
func TestJoinStrs(t *testing.T) {
	parts := []string{"a", "", "bc", "é", "long string", "x"}
	for _, sep := range []string{"", "\n", ", ", "—"} {
		for n := range len(parts) + 1 {
			elems := make([]Value, n)
			for i := range n {
				elems[i] = Str(parts[i])
			}
			got := JoinStrs(elems, sep)
			if want := strings.Join(parts[:n], sep); got.Kind() != KindString || got.AsStr() != want {
				t.Fatalf("JoinStrs(%q, %q) = %q, want %q", parts[:n], sep, got.AsStr(), want)
			}
		}
	}
	if got := JoinStrs([]Value{BytesOf("ab"), BytesOf("c")}, "-"); got.AsStr() != "ab-c" {
		t.Fatalf("bytes joined: %q", got.AsStr())
	}
}
