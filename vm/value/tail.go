package value

import "unsafe"

// Tail makes a chain of concatenations, s = s + t in a loop, append in
// place instead of copying s every time, which made building a string
// of n pieces cost n^2/2 bytes of copying and an allocation per piece.
//
// It remembers one buffer: the last result of Concat, its bytes in use
// and its room. Strings and bytes are immutable, and every value made
// from the buffer shows a prefix of it no longer than used, so bytes
// written past used are seen by no value: a + b appends b there when a
// is exactly the buffer's used prefix, and the result shows the longer
// prefix. Any other a (an older prefix, a string from elsewhere) is
// copied as before. used never goes back while the buffer is
// remembered, and a buffer is remembered by one Tail only (each makes
// its own), so two appends never write the same bytes.
//
// A machine keeps one Tail; the zero Tail is ready. Results are the
// values a copying concatenation gives, byte for byte; only the memory
// behind them differs (a chain's buffer has up to twice the room it
// uses), which the memory limit's measure does not see: it counts
// strings by their length (Sizer).
type Tail struct {
	p    unsafe.Pointer // the buffer's first byte, nil for none
	used int            // bytes of the buffer that values show
	room int            // the buffer's size
}

// tailMin is the smallest buffer of a chain: the first append to a
// concatenation's result makes one.
const tailMin = 64

// Concat returns a + b, both strings or both bytes, of a's kind.
func (t *Tail) Concat(a, b Value) Value {
	la, lb := int(a.n), int(b.n)
	switch {
	case lb == 0:
		return a
	case la == 0:
		return Value{k: a.k, n: b.n, p: b.p}
	}
	n := la + lb
	if a.p == t.p && la == t.used {
		if n <= t.room {
			// b may lie in the buffer (s = s + s): below used, apart
			// from where it is copied to.
			copy(unsafe.Slice((*byte)(unsafe.Add(t.p, la)), lb), b.str())
			t.used = n
			return Value{k: a.k, n: uint64(n), p: t.p}
		}
		// A chain: give the new buffer room for as much again.
		return t.fresh(a, b, max(2*n, tailMin))
	}
	// Perhaps the start of a chain: Go's own concatenation (the exact
	// size, not zeroed first), so that strings made once (keys,
	// messages) cost what they did.
	s := a.str() + b.str()
	t.p, t.used, t.room = unsafe.Pointer(unsafe.StringData(s)), n, n
	return Value{k: a.k, n: uint64(n), p: t.p}
}

// fresh copies a + b into a new buffer of room bytes and remembers it.
func (t *Tail) fresh(a, b Value, room int) Value {
	buf := make([]byte, room)
	n := copy(buf, a.str())
	n += copy(buf[n:], b.str())
	t.p, t.used, t.room = unsafe.Pointer(&buf[0]), n, room
	return Value{k: a.k, n: uint64(n), p: t.p}
}
