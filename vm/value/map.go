package value

import (
	"math/bits"
	"unsafe"
)

// Map is a map with int, string or bool keys that remembers insertion order:
// assigning an existing key keeps its place, a deleted and re-added key goes
// last. It is shared by every Value that refers to it.
//
// Entries live in a slice in insertion order. A deleted entry becomes a
// tombstone (a void key) and the slice is compacted when tombstones reach
// half of it, or before positional access (KeyAt, ValueAt, BeginIter), so
// get, set and delete are O(1) amortised. Maps of up to smallMap entries
// are searched linearly and have no hash index: most maps are small.
//
// The index of a larger map is the map's own open-addressing table
// (mapIndex), not a Go map: a Go map's lookup is a call into the runtime and
// its hash a call again, which the wasm guest pays several times over
// (docs/design.md, "maps' own index"), and the table is one allocation.
type Map struct {
	entries []mapEntry
	dead    int // tombstones in entries
	iter    int32
	mark    uint32 // the Sizer pass that last counted it
	keyKind Kind
	// idx is the hash index, nil while the map is small; apart, so that
	// a small map's header keeps to 64 bytes.
	idx *mapIndex
}

// mapIndex is a power-of-two table of positions in entries plus one, 0
// for an empty slot and slotDeleted for a deleted key's, probed linearly
// from the top bits of the key's hash (shift = 64 - log2(len(slots))).
type mapIndex struct {
	slots []int32
	used  int // slots not empty, deleted ones included
	shift uint8
}

type mapEntry struct {
	key, val Value // key.k == KindVoid marks a tombstone
}

// holds reports whether e's key is k (a tombstone's, void, is no key).
func (e *mapEntry) holds(k Value) bool {
	return e.key.n == k.n && e.key.k == k.k && (k.k != KindString || e.key.str() == k.str())
}

const (
	smallMap = 8
	// slotDeleted marks the slot of a deleted key: a probe goes on past
	// it, and an insertion may take it.
	slotDeleted = -1
	// minSlots is the smallest index: room for smallMap*2 keys at the
	// load limit.
	minSlots = 32
)

// hashKey returns k's hash; its top bits choose the slot. It is fixed,
// not seeded: the package reads no randomness, and the guest's Go maps
// it replaced were no better (their seed came from wazero's fixed
// random source); nothing a program sees depends on it, since entries
// keep their insertion order. Every word goes through wyhash's
// multiply-and-fold (mix), so keys that collide cannot be written down
// from the formula, as they could for a plain multiply: finding them
// takes a search, as it did for Go's hash.
func hashKey(k Value) uint64 {
	if k.k == KindString {
		return hashString(k.p, int(k.n))
	}
	return mix(k.n^hashK0, hashK1)
}

// The constants of wyhash.
const (
	hashK0 = 0xa0761d6478bd642f
	hashK1 = 0xe7037ed1a0b428db
	hashK2 = 0x8ebc6af09c88c6e3
)

// mix multiplies a and b into 128 bits and folds them.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// hashString hashes n bytes at p eight at a time, the tail as one
// word, and the length last.
func hashString(p unsafe.Pointer, n int) uint64 {
	h := uint64(hashK2)
	i := 0
	for ; i+8 <= n; i += 8 {
		h = mix(*(*uint64)(unsafe.Add(p, i))^hashK0, h^hashK1)
	}
	if i < n {
		var w uint64
		for j := n - 1; j >= i; j-- {
			w = w<<8 | uint64(*(*byte)(unsafe.Add(p, j)))
		}
		h = mix(w^hashK0, h^hashK1)
	}
	return mix(h^uint64(n), hashK2)
}

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
	_, i := m.findSlot(k)
	return i
}

// findSlot returns the position of key k in entries and, when the map
// has an index, k's slot in it; -1 for what is missing. It is one
// function, not a probe per kind of key called from a lookup, because a
// call costs the wasm guest more than the probe does.
func (m *Map) findSlot(k Value) (slot, pos int) {
	if k.k != m.keyKind {
		return -1, -1 // also keeps a void key from matching a tombstone
	}
	x := m.idx
	if x == nil {
		for i := range m.entries {
			if m.entries[i].holds(k) {
				return -1, i
			}
		}
		return -1, -1
	}
	mask := len(x.slots) - 1
	i := int(hashKey(k) >> x.shift)
	for {
		s := x.slots[i]
		if s == 0 {
			return -1, -1
		}
		if s > 0 && m.entries[s-1].holds(k) {
			return i, int(s - 1)
		}
		i = (i + 1) & mask
	}
}

// Get returns the value stored under k.
func (m *Map) Get(k Value) (Value, bool) {
	if _, i := m.findSlot(k); i >= 0 {
		return m.entries[i].val, true
	}
	return Value{}, false
}

// Has reports whether k is a key of m.
func (m *Map) Has(k Value) bool {
	_, i := m.findSlot(k)
	return i >= 0
}

// Set stores v under k. A new key goes last; an existing key keeps its place.
func (m *Map) Set(k, v Value) error {
	if m.iter != 0 {
		return ErrIterating
	}
	if k.k != m.keyKind {
		panic("value: Map.Set with a " + k.k.String() + " key in a map of " + m.keyKind.String() + " keys")
	}
	if _, i := m.findSlot(k); i >= 0 {
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
	switch {
	case m.idx != nil:
		m.indexKey(k, len(m.entries)-1)
	case len(m.entries) > smallMap:
		m.buildIndex()
	}
}

// indexKey puts absent key k, at position pos in entries, in the index,
// which it rebuilds larger when the insertion would fill past half of it.
func (m *Map) indexKey(k Value, pos int) {
	x := m.idx
	if 2*(x.used+1) > len(x.slots) {
		m.buildIndex() // the entry at pos is in entries already
		return
	}
	mask := len(x.slots) - 1
	i := int(hashKey(k) >> x.shift)
	for x.slots[i] > 0 {
		i = (i + 1) & mask
	}
	if x.slots[i] == 0 {
		x.used++
	}
	x.slots[i] = int32(pos + 1)
}

// buildIndex makes the index anew from the live entries, a quarter full
// or less (so that it doubles as the map does), without deleted slots.
func (m *Map) buildIndex() {
	live := len(m.entries) - m.dead
	n := minSlots
	for n < 4*live {
		n *= 2
	}
	x := m.idx
	if x == nil {
		x = new(mapIndex)
		m.idx = x
	}
	if len(x.slots) == n {
		clear(x.slots)
	} else {
		x.slots = make([]int32, n)
	}
	x.shift = uint8(64 - bits.TrailingZeros(uint(n)))
	x.used = 0
	mask := n - 1
	for pos := range m.entries {
		k := m.entries[pos].key
		if k.k == KindVoid {
			continue
		}
		i := int(hashKey(k) >> x.shift)
		for x.slots[i] != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = int32(pos + 1)
		x.used++
	}
}

// Delete removes k; a missing key is no error. Like every mutation it fails
// while the map is iterated, even when k is missing, so that the trap does not
// depend on the data.
func (m *Map) Delete(k Value) error {
	if m.iter != 0 {
		return ErrIterating
	}
	slot, i := m.findSlot(k)
	if slot >= 0 {
		m.idx.slots[slot] = slotDeleted
	}
	if i < 0 {
		return nil
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
	if m.idx != nil {
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
