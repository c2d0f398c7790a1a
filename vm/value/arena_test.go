package value

import (
	"testing"
	"unsafe"
)

// TestCopyOut copies a tree whose two children are one value, with the
// whole address space taken as the arena: the copy equals the original
// shape, is made of new objects, keeps the sharing (one object for both
// children, so the memory measure counts it once) and leaves values
// outside the arena and unit variants as they are.
func TestCopyOut(t *testing.T) {
	tr := &Type{Kind: KindEnum, Name: "T"}
	tr.Variants = []Variant{{Name: "E"}, {Name: "W", Fields: []*Type{IntType, tr}}, {Name: "N", Fields: []*Type{tr, tr}}}
	build := func() Value {
		s := NewEnum(tr, 1, []Value{Int(7), NewEnum(tr, 0, nil)})
		return NewEnum(tr, 2, []Value{s, s})
	}
	orig := build()
	want := build()
	origObj := orig.p
	got := CopyOut(orig, 0, ^uintptr(0))
	if eq, err := Equal(got, want); err != nil || !eq {
		t.Fatalf("the copy differs: %v", err)
	}
	if got.p == origObj {
		t.Fatal("the root was not copied")
	}
	vals := (*enumObj)(got.p).vals()
	if vals[0].p != vals[1].p {
		t.Fatal("the shared child was copied twice")
	}
	var s Sizer
	s.Begin(1 << 30)
	s.Add([]Value{got})
	var s2 Sizer
	s2.Begin(1 << 30)
	s2.Add([]Value{want})
	if s.Total() != s2.Total() {
		t.Fatalf("the copy measures %d, the original's shape %d", s.Total(), s2.Total())
	}
	// Outside the arena: kept as it is.
	other := build()
	if c := CopyOut(other, 0, 1); c.p != other.p {
		t.Fatal("a value outside the arena was copied")
	}
	if u := NewEnum(tr, 0, nil); CopyOut(u, 0, ^uintptr(0)).p != u.p || unsafe.Pointer(tr) != u.p {
		t.Fatal("a unit variant was changed")
	}
}
