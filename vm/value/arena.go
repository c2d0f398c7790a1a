package value

import "unsafe"

// Compiled code (vm/internal/tier, alloc.go) makes enum values in an
// arena: a range of memory Go's collector does not scan, laid out as
// NewEnum lays them out (an enumObj header followed by its values). A
// value that leaves compiled code for the interpreter is copied out of
// the arena into Go's heap first: CopyOut.

// forwarded marks an arena object already copied: its v then holds the
// copy's address. No Sizer pass reaches an arena object (the arena is
// dead once copied), so the mark is free to reuse.
const forwarded = ^uint32(0)

// CopyOut returns v with every enum object reachable from it that lies in
// the arena [lo, hi) replaced by a copy in Go's heap, sharing preserved:
// an object reached twice is copied once, so the copy has the shape (and
// the memory measure) of the original. Objects outside the arena are
// kept as they are. The arena's objects are left forwarded (unusable):
// the arena must be dead after the copy.
func CopyOut(v Value, lo, hi uintptr) Value {
	in := func(x Value) bool {
		a := uintptr(x.p)
		return x.k == KindEnum && x.n&enumBoxed != 0 && a >= lo && a < hi
	}
	if !in(v) {
		return v
	}
	// Each slot to fix holds (a copy of) an arena Value; fixing it points
	// it at the object's copy, making the copy on the first visit and
	// queueing the copy's own arena values.
	work := []*Value{&v}
	for len(work) > 0 {
		slot := work[len(work)-1]
		work = work[:len(work)-1]
		o := (*enumObj)(slot.p)
		if o.mark == forwarded {
			slot.p = unsafe.Pointer(o.v)
			continue
		}
		c := NewEnum(o.typ, int(slot.n&^enumBoxed), o.vals())
		o.mark, o.v = forwarded, (*Value)(c.p)
		slot.p = c.p
		vals := (*enumObj)(c.p).vals()
		for i := range vals {
			if in(vals[i]) {
				work = append(work, &vals[i])
			}
		}
	}
	return v
}
