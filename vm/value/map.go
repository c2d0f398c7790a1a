package value

import "unsafe"

// Map is a map with int, string or bool keys that remembers insertion order:
// assigning an existing key keeps its place, a deleted and re-added key goes
// last. It is shared by every Value that refers to it.
//
// Entries live in a slice in insertion order. A deleted entry becomes a
// tombstone (a void key) and the slice is compacted when tombstones reach
// half of it, or before positional access (KeyAt, ValueAt, BeginIter), so
// get, set and delete are O(1) amortised. Maps of up to smallMap entries
// are searched linearly and have no hash index: most maps are small, and a
// Go map costs allocations that the wasm guest pays dearly for.
type Map struct {
	entries []mapEntry
	dead    int // tombstones in entries
	iter    int32
	mark    uint32 // the Sizer pass that last counted it
	keyKind Kind
	indexed bool
	ints    map[uint64]int // int and bool keys -> position in entries
	strs    map[string]int // string keys -> position in entries
}

type mapEntry struct {
	key, val Value // key.k == KindVoid marks a tombstone
}

const smallMap = 8

// NewMap returns an empty map value whose keys are of kind key (KindInt,
// KindString or KindBool), with room for capacity entries.
func NewMap(key Kind, capacity int) Value { return newMap(key, capacity).value() }

func newMap(key Kind, capacity int) *Map {
	if key != KindInt && key != KindString && key != KindBool {
		panic("value: NewMap with " + key.String() + " keys")
	}
	m := &Map{keyKind: key}
	if capacity > 0 {
		m.entries = make([]mapEntry, 0, capacity)
	}
	return m
}

func (m *Map) value() Value { return Value{k: KindMap, p: unsafe.Pointer(m)} }

// KeyKind returns the kind of the map's keys.
func (m *Map) KeyKind() Kind { return m.keyKind }

// Len returns the number of entries.
func (m *Map) Len() int { return len(m.entries) - m.dead }

// find returns the position of key k in entries, or -1.
func (m *Map) find(k Value) int {
	if k.k != m.keyKind {
		return -1 // also keeps a void key from matching a tombstone
	}
	if m.indexed {
		var i int
		var ok bool
		if k.k == KindString {
			i, ok = m.strs[k.str()]
		} else {
			i, ok = m.ints[k.n]
		}
		if !ok {
			return -1
		}
		return i
	}
	if k.k == KindString {
		for i := range m.entries {
			e := &m.entries[i]
			if e.key.k == KindString && e.key.n == k.n && e.key.str() == k.str() {
				return i
			}
		}
		return -1
	}
	for i := range m.entries {
		e := &m.entries[i]
		if e.key.n == k.n && e.key.k == k.k {
			return i
		}
	}
	return -1
}

// Get returns the value stored under k.
func (m *Map) Get(k Value) (Value, bool) {
	if i := m.find(k); i >= 0 {
		return m.entries[i].val, true
	}
	return Value{}, false
}

// Has reports whether k is a key of m.
func (m *Map) Has(k Value) bool { return m.find(k) >= 0 }

// Set stores v under k. A new key goes last; an existing key keeps its place.
func (m *Map) Set(k, v Value) error {
	if m.iter != 0 {
		return ErrIterating
	}
	if k.k != m.keyKind {
		panic("value: Map.Set with a " + k.k.String() + " key in a map of " + m.keyKind.String() + " keys")
	}
	if i := m.find(k); i >= 0 {
		m.entries[i].val = v
		return nil
	}
	m.add(k, v)
	return nil
}

// add appends a key known to be absent.
func (m *Map) add(k, v Value) {
	if cap(m.entries) == 0 {
		m.entries = make([]mapEntry, 0, 4) // skip the growth steps 1 and 2
	}
	m.entries = append(m.entries, mapEntry{k, v})
	if m.indexed {
		m.indexKey(k, len(m.entries)-1)
	} else if len(m.entries) > smallMap {
		m.buildIndex()
	}
}

func (m *Map) indexKey(k Value, i int) {
	if k.k == KindString {
		m.strs[k.str()] = i
	} else {
		m.ints[k.n] = i
	}
}

func (m *Map) buildIndex() {
	if m.keyKind == KindString {
		if m.strs == nil {
			m.strs = make(map[string]int, len(m.entries))
		} else {
			clear(m.strs)
		}
	} else {
		if m.ints == nil {
			m.ints = make(map[uint64]int, len(m.entries))
		} else {
			clear(m.ints)
		}
	}
	m.indexed = true
	for i := range m.entries {
		if k := m.entries[i].key; k.k != KindVoid {
			m.indexKey(k, i)
		}
	}
}

// Delete removes k; a missing key is no error. Like every mutation it fails
// while the map is iterated, even when k is missing, so that the trap does not
// depend on the data.
func (m *Map) Delete(k Value) error {
	if m.iter != 0 {
		return ErrIterating
	}
	i := m.find(k)
	if i < 0 {
		return nil
	}
	if m.indexed {
		if k.k == KindString {
			delete(m.strs, k.str())
		} else {
			delete(m.ints, k.n)
		}
	}
	if i == len(m.entries)-1 {
		m.entries[i] = mapEntry{}
		m.entries = m.entries[:i]
		return nil
	}
	m.entries[i] = mapEntry{}
	m.dead++
	if m.dead > smallMap/2 && 2*m.dead >= len(m.entries) {
		m.pack()
	}
	return nil
}

// pack removes tombstones, keeping order, and rebuilds the index.
func (m *Map) pack() {
	if m.dead == 0 {
		return
	}
	j := 0
	for i := range m.entries {
		if m.entries[i].key.k != KindVoid {
			m.entries[j] = m.entries[i]
			j++
		}
	}
	clear(m.entries[j:])
	m.entries = m.entries[:j]
	m.dead = 0
	if m.indexed {
		m.buildIndex()
	}
}

// KeyAt returns the i-th key in insertion order, 0 <= i < Len.
func (m *Map) KeyAt(i int) Value {
	if m.dead != 0 {
		m.pack()
	}
	return m.entries[i].key
}

// ValueAt returns the i-th value in insertion order, 0 <= i < Len.
func (m *Map) ValueAt(i int) Value {
	if m.dead != 0 {
		m.pack()
	}
	return m.entries[i].val
}

// Keys returns a new list of the keys in insertion order.
func (m *Map) Keys() Value {
	m.pack()
	l := allocList(len(m.entries))
	for i := range m.entries {
		l.elems[i] = m.entries[i].key
	}
	return l.value()
}

// Values returns a new list of the values in insertion order.
func (m *Map) Values() Value {
	m.pack()
	l := allocList(len(m.entries))
	for i := range m.entries {
		l.elems[i] = m.entries[i].val
	}
	return l.value()
}

// BeginIter marks the start of a for loop over m; see List.BeginIter. Between
// BeginIter and EndIter, KeyAt and ValueAt are plain slice reads.
func (m *Map) BeginIter() {
	m.pack()
	m.iter++
}

// EndIter marks the end of a for loop over m.
func (m *Map) EndIter() { m.iter-- }

// Iterating reports whether a for loop is iterating over m.
func (m *Map) Iterating() bool { return m.iter != 0 }
