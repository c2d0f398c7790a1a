package value

import "unsafe"

// The sizes a Sizer counts. They are a measure of a consumer's data, the
// same on every platform and engine, not the bytes the Go runtime uses
// (which depend on its allocator and collector): a container counts a
// header and one slot per element, a string or bytes value its length.
const (
	SizeSlot         = 24 // one element of a list, field of a struct or value of an enum variant
	SizeListHeader   = 32
	SizeMapHeader    = 64
	SizeMapEntry     = 2 * SizeSlot // a key and its value
	SizeObjectHeader = 32           // a struct, or an enum variant with values
	// SizeLongString is the length from which a string (or bytes) held in
	// several places counts once: a shorter one counts wherever it is held,
	// which costs at most a few times its slot.
	SizeLongString = 64
)

// A Sizer measures the data reachable from a set of values, counting
// each list, map, struct and enum variant once however many references
// lead to it (cycles included), and each long string once. Measuring
// writes a mark into every container it counts, so two Sizers must not
// measure values they share; one interpreter machine owns its values and
// its Sizer.
type Sizer struct {
	pass  uint32 // marks of the current pass
	total int64
	limit int64
	work  []Value // containers to visit
	long  map[longString]struct{}
}

type longString struct {
	p unsafe.Pointer
	n uint64
}

// Begin starts a measure that stops counting once it passes limit.
func (s *Sizer) Begin(limit int64) {
	s.pass++
	if s.pass == 0 { // wrapped: a mark of 0 is that of a fresh container
		s.pass = 1
	}
	s.total, s.limit = 0, limit
	clear(s.long)
}

// Total returns the bytes counted since Begin.
func (s *Sizer) Total() int64 { return s.total }

// Over reports whether the count passed the limit given to Begin.
func (s *Sizer) Over() bool { return s.total > s.limit }

// Add counts vs and everything reachable from them that this measure has
// not counted yet. It stops early once the count passes the limit.
func (s *Sizer) Add(vs []Value) {
	s.scan(vs)
	for len(s.work) > 0 && !s.Over() {
		v := s.work[len(s.work)-1]
		s.work = s.work[:len(s.work)-1]
		switch v.k {
		case KindList:
			l := (*List)(v.p)
			s.total += SizeListHeader + SizeSlot*int64(len(l.elems))
			s.scan(l.elems)
		case KindMap:
			m := (*Map)(v.p)
			s.total += SizeMapHeader + SizeMapEntry*int64(len(m.entries))
			for i := range m.entries {
				e := &m.entries[i]
				s.scan1(e.key)
				s.scan1(e.val)
			}
		case KindStruct:
			o := (*Struct)(v.p)
			s.total += SizeObjectHeader + SizeSlot*int64(o.n)
			s.scan(o.fields())
		case KindEnum:
			o := (*enumObj)(v.p)
			s.total += SizeObjectHeader + SizeSlot*int64(o.n)
			// A tree's values are mostly variants: queued here
			// rather than through scan1, a call less per value
			// (the measure walks binary-trees' long-lived tree
			// about once per node it allocates).
			for _, c := range o.vals() {
				if c.k != KindEnum {
					s.scan1(c)
				} else if c.n&enumBoxed != 0 {
					if co := (*enumObj)(c.p); co.mark != s.pass {
						co.mark = s.pass
						s.work = append(s.work, c)
					}
				}
			}
		}
	}
	clear(s.work)
	s.work = s.work[:0]
}

func (s *Sizer) scan(vs []Value) {
	for i := range vs {
		if vs[i].k > KindBool { // a scalar counts nothing: no call for it
			s.scan1(vs[i])
		}
	}
}

// scan1 counts a string at once and queues a container not yet marked.
func (s *Sizer) scan1(v Value) {
	switch v.k {
	case KindString, KindBytes:
		if v.n < SizeLongString {
			s.total += int64(v.n)
			return
		}
		k := longString{v.p, v.n}
		if _, seen := s.long[k]; !seen {
			if s.long == nil {
				s.long = make(map[longString]struct{})
			}
			s.long[k] = struct{}{}
			s.total += int64(v.n)
		}
	case KindList:
		if l := (*List)(v.p); l.mark != s.pass {
			l.mark = s.pass
			s.work = append(s.work, v)
		}
	case KindMap:
		if m := (*Map)(v.p); m.mark != s.pass {
			m.mark = s.pass
			s.work = append(s.work, v)
		}
	case KindStruct:
		if o := (*Struct)(v.p); o.mark != s.pass {
			o.mark = s.pass
			s.work = append(s.work, v)
		}
	case KindEnum:
		if v.n&enumBoxed != 0 {
			if o := (*enumObj)(v.p); o.mark != s.pass {
				o.mark = s.pass
				s.work = append(s.work, v)
			}
		}
	}
}

// ShallowSize is what making v cost at most beyond the values it refers
// to: a container's header and slots, a string's length. The interpreter
// charges it for each value an operation makes, to decide when to measure.
func ShallowSize(v Value) int64 {
	switch v.k {
	case KindString, KindBytes:
		return int64(v.n)
	case KindList:
		return SizeListHeader + SizeSlot*int64(len((*List)(v.p).elems))
	case KindMap:
		return SizeMapHeader + SizeMapEntry*int64(len((*Map)(v.p).entries))
	case KindStruct:
		return SizeObjectHeader + SizeSlot*int64((*Struct)(v.p).n)
	case KindEnum:
		if v.n&enumBoxed != 0 {
			return SizeObjectHeader + SizeSlot*int64((*enumObj)(v.p).n)
		}
	}
	return 0
}
