package value

import (
	"cmp"
	"errors"
	"math"
	"unsafe"
)

// MaxDepth bounds the nesting of containers (lists, maps, structs, enum
// variants with values) that Encode, Decode, Equal, DeepCopy and AppendJSON
// accept, and that Format prints. It keeps the recursion of every walk
// bounded, also on hostile input. A value nested deeper cannot be published.
const MaxDepth = 1000

// Errors of the walks over values.
var (
	ErrCyclic  = errors.New("value contains itself")
	ErrTooDeep = errors.New("value nested too deeply")
)

// path records the containers from the root of a walk to the current value,
// so that a walk stops at a cycle (a list that contains itself, possible
// through aliasing) instead of recursing forever. Paths are short, so a
// linear scan is cheaper than a set.
type path struct {
	n     int
	small [16]unsafe.Pointer
	more  []unsafe.Pointer
}

// enter pushes the object of v, failing at a cycle or beyond MaxDepth.
func (p *path) enter(o unsafe.Pointer) error {
	if p.n >= MaxDepth {
		return ErrTooDeep
	}
	for i := 0; i < p.n && i < len(p.small); i++ {
		if p.small[i] == o {
			return ErrCyclic
		}
	}
	for _, q := range p.more {
		if q == o {
			return ErrCyclic
		}
	}
	if p.n < len(p.small) {
		p.small[p.n] = o
	} else {
		p.more = append(p.more, o)
	}
	p.n++
	return nil
}

func (p *path) leave() {
	p.n--
	if p.n >= len(p.small) {
		p.more = p.more[:p.n-len(p.small)]
	}
}

// Equal reports whether a and b are structurally equal, as Hale's `==`:
// floats by IEEE-754 (so NaN != NaN, also inside containers, and
// -0.0 == 0.0), strings and bytes by contents, lists element by element,
// maps by their entries ignoring order, structs field by field, enums by
// variant then values. Values of different kinds are unequal. It fails with
// ErrCyclic or ErrTooDeep only when a is cyclic or nested beyond MaxDepth.
func Equal(a, b Value) (bool, error) {
	var p path
	return equal(a, b, &p)
}

func equal(a, b Value, p *path) (bool, error) {
	if a.k != b.k {
		return false, nil
	}
	switch a.k {
	case KindVoid:
		return true, nil
	case KindInt, KindBool:
		return a.n == b.n, nil
	case KindFloat:
		return math.Float64frombits(a.n) == math.Float64frombits(b.n), nil
	case KindString, KindBytes:
		return a.n == b.n && a.str() == b.str(), nil
	}
	o := a.object()
	if o == nil { // unit enum variant
		return a.EnumType().Name == b.EnumType().Name && a.n == b.n, nil
	}
	if err := p.enter(o); err != nil {
		return false, err
	}
	eq, err := equalObject(a, b, p)
	p.leave()
	return eq, err
}

func equalObject(a, b Value, p *path) (bool, error) {
	switch a.k {
	case KindList:
		return equalValues(a.AsList().elems, b.AsList().elems, p)
	case KindStruct:
		sa, sb := a.AsStruct(), b.AsStruct()
		if sa.typ != sb.typ && sa.typ.Name != sb.typ.Name {
			return false, nil
		}
		return equalValues(sa.fields(), sb.fields(), p)
	case KindEnum:
		if a.n != b.n || a.EnumType().Name != b.EnumType().Name {
			return false, nil
		}
		return equalValues(a.Payload(), b.Payload(), p)
	case KindMap:
		ma, mb := a.AsMap(), b.AsMap()
		if ma.Len() != mb.Len() {
			return false, nil
		}
		for i := range ma.entries {
			e := &ma.entries[i]
			if e.key.k == KindVoid {
				continue
			}
			vb, ok := mb.Get(e.key)
			if !ok {
				return false, nil
			}
			if eq, err := equal(e.val, vb, p); !eq || err != nil {
				return false, err
			}
		}
		return true, nil
	}
	return false, nil
}

func equalValues(a, b []Value, p *path) (bool, error) {
	if len(a) != len(b) {
		return false, nil
	}
	for i := range a {
		if eq, err := equal(a[i], b[i], p); !eq || err != nil {
			return false, err
		}
	}
	return true, nil
}

// Less reports a < b for two ints, two floats (IEEE-754: false when either
// is NaN) or two strings (by bytes), as Hale's `<`.
func Less(a, b Value) bool {
	switch a.k {
	case KindInt:
		return int64(a.n) < int64(b.n)
	case KindFloat:
		return math.Float64frombits(a.n) < math.Float64frombits(b.n)
	case KindString, KindBytes:
		return a.str() < b.str()
	}
	return false
}

// Compare returns -1, 0 or +1 comparing two ints, two floats or two strings
// (by bytes). For floats it is a total order, as Go's cmp.Compare: NaN sorts
// before every other float and equals NaN, and -0.0 equals 0.0. sort uses it;
// the operators use Less.
func Compare(a, b Value) int {
	switch a.k {
	case KindInt:
		return cmp.Compare(int64(a.n), int64(b.n))
	case KindFloat:
		return cmp.Compare(math.Float64frombits(a.n), math.Float64frombits(b.n))
	case KindString, KindBytes:
		return cmp.Compare(a.str(), b.str())
	}
	return 0
}

// DeepCopy returns a copy of v that shares no list, map or struct with it,
// as a published payload must. Strings, bytes and unit enum variants are
// immutable and shared. Aliasing inside v is not preserved (a list that
// appears twice is copied twice), exactly as an encode/decode round trip
// would do. It fails with ErrCyclic or ErrTooDeep.
func DeepCopy(v Value) (Value, error) {
	if v.object() == nil {
		return v, nil
	}
	var p path
	return deepCopy(v, &p)
}

func deepCopy(v Value, p *path) (Value, error) {
	o := v.object()
	if o == nil {
		return v, nil
	}
	if err := p.enter(o); err != nil {
		return Value{}, err
	}
	defer p.leave()
	switch v.k {
	case KindList:
		src := v.AsList().elems
		l := allocList(len(src))
		if err := copyValues(l.elems, src, p); err != nil {
			return Value{}, err
		}
		return l.value(), nil
	case KindStruct:
		src := v.AsStruct()
		s := allocStruct(src.typ, src.n)
		if err := copyValues(s.fields(), src.fields(), p); err != nil {
			return Value{}, err
		}
		return Value{k: KindStruct, p: unsafe.Pointer(s)}, nil
	case KindEnum:
		src := (*enumObj)(v.p)
		e := allocEnum(src.typ, src.n)
		if err := copyValues(e.vals(), src.vals(), p); err != nil {
			return Value{}, err
		}
		return Value{k: KindEnum, n: v.n, p: unsafe.Pointer(e)}, nil
	case KindMap:
		src := v.AsMap()
		m := newMap(src.keyKind, src.Len())
		for i := range src.entries {
			e := &src.entries[i]
			if e.key.k == KindVoid {
				continue
			}
			c, err := deepCopy(e.val, p)
			if err != nil {
				return Value{}, err
			}
			m.add(e.key, c)
		}
		return m.value(), nil
	}
	return v, nil
}

func copyValues(dst, src []Value, p *path) error {
	for i, x := range src {
		c, err := deepCopy(x, p)
		if err != nil {
			return err
		}
		dst[i] = c
	}
	return nil
}
