package value

import "unsafe"

// List is a growable list of values. It is shared by every Value that refers
// to it. While a for loop iterates over it (BeginIter … EndIter, nested loops
// count), every mutating method fails with ErrIterating.
type List struct {
	elems []Value
	iter  int32
	mark  uint32 // the Sizer pass that last counted it
}

// NewList returns a list value holding a copy of elems.
func NewList(elems []Value) Value {
	l := allocList(len(elems))
	copy(l.elems, elems)
	return l.value()
}

// NewListLen returns a list value of n void elements, to be filled with Set.
func NewListLen(n int) Value { return allocList(n).value() }

// Concat returns a new list holding a's elements then b's (the `+` of lists).
func Concat(a, b *List) Value {
	l := allocList(len(a.elems) + len(b.elems))
	copy(l.elems[copy(l.elems, a.elems):], b.elems)
	return l.value()
}

// allocList returns a list of length n, with the list header and a small
// backing array in one allocation: allocation is the expensive part of
// running inside the wasm guest.
func allocList(n int) *List {
	switch {
	case n == 0:
		return &List{}
	case n <= 1:
		o := new(struct {
			l List
			a [1]Value
		})
		o.l.elems = o.a[:n]
		return &o.l
	case n <= 2:
		o := new(struct {
			l List
			a [2]Value
		})
		o.l.elems = o.a[:n]
		return &o.l
	case n <= 4:
		o := new(struct {
			l List
			a [4]Value
		})
		o.l.elems = o.a[:n]
		return &o.l
	case n <= 8:
		o := new(struct {
			l List
			a [8]Value
		})
		o.l.elems = o.a[:n]
		return &o.l
	}
	return &List{elems: make([]Value, n)}
}

func (l *List) value() Value { return Value{k: KindList, p: unsafe.Pointer(l)} }

// NewPushable returns an empty list with the room a first push would
// give it (minPushCap), in one allocation: the lists compiled code takes
// for `[]` (vm's list pool), which it then pushes to without growing.
func NewPushable() *List {
	o := new(struct {
		l List
		a [minPushCap]Value
	})
	o.l.elems = o.a[:0]
	return &o.l
}

// Len returns the number of elements.
func (l *List) Len() int { return len(l.elems) }

// Elems returns the elements themselves, not a copy. Callers must not change
// them except through Set.
func (l *List) Elems() []Value { return l.elems }

// At returns element i, which must be in range (the caller checks Len).
func (l *List) At(i int) Value { return l.elems[i] }

// Get returns element i, or ErrIndex.
func (l *List) Get(i int) (Value, error) {
	if uint(i) >= uint(len(l.elems)) {
		return Value{}, ErrIndex
	}
	return l.elems[i], nil
}

// Set replaces element i.
func (l *List) Set(i int, v Value) error {
	if l.iter != 0 {
		return ErrIterating
	}
	if uint(i) >= uint(len(l.elems)) {
		return ErrIndex
	}
	l.elems[i] = v
	return nil
}

// Push appends v.
func (l *List) Push(v Value) error {
	if l.iter != 0 {
		return ErrIterating
	}
	if n := len(l.elems); n == cap(l.elems) && n < quadGrowUpTo {
		// A small list that is pushed to grows four times over, from
		// room for minPushCap: append's own doubling from empty (1, 2,
		// 4, …, 64) takes seven allocations to reach a line of 60
		// letters, and for a push compiled in a loop each is a trip
		// into the interpreter; this takes three (4, 16, 64). The
		// spare room is not counted by the memory limit and is at most
		// 48 slots a list (about 1 KiB): a list of one element holds
		// 128 bytes against 56 counted, one of 17 holds 64 slots.
		g := make([]Value, n, max(minPushCap, 4*n))
		copy(g, l.elems)
		l.elems = g
	}
	l.elems = append(l.elems, v)
	return nil
}

// minPushCap is the least capacity a list has after a push, and
// quadGrowUpTo the length from which a full list grows as append grows
// it (about double).
const (
	minPushCap   = 4
	quadGrowUpTo = 64
)

// Pop removes and returns the last element.
func (l *List) Pop() (Value, error) {
	if l.iter != 0 {
		return Value{}, ErrIterating
	}
	n := len(l.elems) - 1
	if n < 0 {
		return Value{}, ErrEmpty
	}
	v := l.elems[n]
	l.elems[n] = Value{} // let the collector have what it referred to
	l.elems = l.elems[:n]
	return v, nil
}

// Insert inserts v before element i; i may equal Len.
func (l *List) Insert(i int, v Value) error {
	if l.iter != 0 {
		return ErrIterating
	}
	if uint(i) > uint(len(l.elems)) {
		return ErrIndex
	}
	l.elems = append(l.elems, Value{})
	copy(l.elems[i+1:], l.elems[i:])
	l.elems[i] = v
	return nil
}

// Remove removes and returns element i.
func (l *List) Remove(i int) (Value, error) {
	if l.iter != 0 {
		return Value{}, ErrIterating
	}
	if uint(i) >= uint(len(l.elems)) {
		return Value{}, ErrIndex
	}
	v := l.elems[i]
	n := len(l.elems) - 1
	copy(l.elems[i:], l.elems[i+1:])
	l.elems[n] = Value{}
	l.elems = l.elems[:n]
	return v, nil
}

// BeginIter marks the start of a for loop over l. Every BeginIter must be
// matched by one EndIter, also when the loop is left by break or return.
func (l *List) BeginIter() { l.iter++ }

// EndIter marks the end of a for loop over l.
func (l *List) EndIter() { l.iter-- }

// Iterating reports whether a for loop is iterating over l.
func (l *List) Iterating() bool { return l.iter != 0 }

// JoinStrs returns the strings (or bytes) of elems joined with sep, the
// `join` builtin. It reads the elements' lengths and bytes directly: in
// the wasm guest, a call (or a copy of a Value) per element of a list of
// letters cost more than the letters.
func JoinStrs(elems []Value, sep string) Value {
	n := len(sep) * max(len(elems)-1, 0)
	for i := range elems {
		n += int(elems[i].n)
	}
	b := make([]byte, n)
	at := 0
	for i := range elems {
		if i > 0 && len(sep) > 0 {
			at += copy(b[at:], sep)
		}
		e := &elems[i]
		if e.n == 1 {
			b[at] = *(*byte)(e.p)
			at++
		} else if e.n > 0 {
			at += copy(b[at:], unsafe.String((*byte)(e.p), int(e.n)))
		}
	}
	return Str(unsafe.String(unsafe.SliceData(b), len(b)))
}
