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
	if n := len(l.elems); n == cap(l.elems) && n < minPushCap {
		// A list that is pushed to at all starts with room for a few:
		// append's own growth from an empty list (1, 2, 4) would take
		// three allocations (and, for a push compiled in a loop, three
		// trips into the interpreter) before then. Four keeps a list
		// of one element within 2.3 times the memory the limit counts
		// for it (header and backing: 128 bytes against 56), near
		// append's own worst case of twice the slots just after it
		// doubles.
		l.elems = append(make([]Value, 0, minPushCap), l.elems...)
	}
	l.elems = append(l.elems, v)
	return nil
}

// minPushCap is the least capacity a list has after a push.
const minPushCap = 4

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
