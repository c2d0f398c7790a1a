package value

import "strconv"

// EncodeTypes appends the canonical encoding of a type table holding roots
// (see the package documentation): every struct and enum type reachable from
// them, numbered in order of first reach, then the roots as type expressions.
// It fails on a type that no value could have: a nil type, an unknown kind, a
// void list element, field or value, a map key other than int, string or
// bool, or unnamed types nested deeper than MaxDepth (or in a cycle).
func EncodeTypes(buf []byte, roots []*Type) ([]byte, error) {
	e := typeEncoder{index: map[*Type]int{}}
	for _, t := range roots {
		if err := e.collect(t, true, 0); err != nil {
			return buf, err
		}
	}
	buf = appendUvarint(buf, uint64(len(e.defs)))
	for _, t := range e.defs {
		buf = append(buf, byte(t.Kind))
		buf = appendString(buf, t.Name)
		if t.Kind == KindStruct {
			buf = appendUvarint(buf, uint64(len(t.Fields)))
			for _, f := range t.Fields {
				buf = appendString(buf, f.Name)
				buf = e.expr(buf, f.Type)
			}
			continue
		}
		buf = appendUvarint(buf, uint64(len(t.Variants)))
		for _, v := range t.Variants {
			buf = appendString(buf, v.Name)
			buf = appendUvarint(buf, uint64(len(v.Fields)))
			for _, ft := range v.Fields {
				buf = e.expr(buf, ft)
			}
		}
	}
	buf = appendUvarint(buf, uint64(len(roots)))
	for _, t := range roots {
		buf = e.expr(buf, t)
	}
	return buf, nil
}

// TypeError reports a type that EncodeTypes cannot encode.
type TypeError struct {
	Type *Type
	Msg  string
}

func (e *TypeError) Error() string { return "value: type " + e.Type.String() + ": " + e.Msg }

type typeEncoder struct {
	index map[*Type]int
	defs  []*Type
}

// collect validates t and numbers the struct and enum types reachable from
// it in depth-first pre-order. void is allowed only as a root.
func (e *typeEncoder) collect(t *Type, root bool, depth int) error {
	if depth > MaxDepth {
		return &TypeError{t, "nested too deeply"}
	}
	if t == nil {
		return &TypeError{t, "missing"}
	}
	switch t.Kind {
	case KindVoid:
		if !root {
			return &TypeError{t, "void inside a type"}
		}
	case KindInt, KindFloat, KindBool, KindString, KindBytes:
	case KindList:
		return e.collect(t.Elem, false, depth+1)
	case KindMap:
		if t.Key == nil || !isKeyKind(t.Key.Kind) {
			return &TypeError{t, "map key must be int, string or bool"}
		}
		return e.collect(t.Elem, false, depth+1)
	case KindStruct, KindEnum:
		if _, ok := e.index[t]; ok {
			return nil
		}
		e.index[t] = len(e.defs)
		e.defs = append(e.defs, t)
		for _, f := range t.Fields {
			if t.Kind == KindEnum {
				return &TypeError{t, "enum with fields"}
			}
			if err := e.collect(f.Type, false, depth+1); err != nil {
				return err
			}
		}
		for _, v := range t.Variants {
			if t.Kind == KindStruct {
				return &TypeError{t, "struct with variants"}
			}
			for _, ft := range v.Fields {
				if err := e.collect(ft, false, depth+1); err != nil {
					return err
				}
			}
		}
	default:
		return &TypeError{t, "unknown kind"}
	}
	return nil
}

// expr appends a type expression; t was validated by collect.
func (e *typeEncoder) expr(buf []byte, t *Type) []byte {
	buf = append(buf, byte(t.Kind))
	switch t.Kind {
	case KindList:
		return e.expr(buf, t.Elem)
	case KindMap:
		return e.expr(e.expr(buf, t.Key), t.Elem)
	case KindStruct, KindEnum:
		return appendUvarint(buf, uint64(e.index[t]))
	}
	return buf
}

func appendString(buf []byte, s string) []byte {
	return append(appendUvarint(buf, uint64(len(s))), s...)
}

// DecodeTypes decodes a type table encoded by EncodeTypes and returns its
// roots. Primitive roots are the shared VoidType, IntType, …; struct and enum
// types are new descriptors (recursive ones point at each other). It accepts
// only the exact bytes EncodeTypes produces for the result, and never panics.
func DecodeTypes(data []byte) ([]*Type, error) {
	d := typeDecoder{decoder: decoder{data: data}}
	// a definition takes at least 3 bytes: kind, name length, count
	n, err := d.count(3)
	if err != nil {
		return nil, err
	}
	d.defs = make([]*Type, n)
	for i := range d.defs {
		d.defs[i] = new(Type)
	}
	for _, t := range d.defs {
		if err := d.def(t); err != nil {
			return nil, err
		}
	}
	n, err = d.count(1)
	if err != nil {
		return nil, err
	}
	roots := make([]*Type, n)
	for i := range roots {
		if roots[i], err = d.expr(0); err != nil {
			return nil, err
		}
	}
	if d.off != len(data) {
		return nil, d.fail("trailing bytes")
	}
	for _, r := range d.refs {
		if d.defs[r.index].Kind != r.kind {
			d.off = r.off
			return nil, d.fail("reference to " + d.defs[r.index].Kind.String() + " type " + strconv.Itoa(r.index) + " as " + r.kind.String())
		}
	}
	// Canonical form (definition order, no unreachable or duplicated
	// definition, valid types): the bytes must be what encoding gives.
	again, err := EncodeTypes(nil, roots)
	if err != nil {
		return nil, &DecodeError{Offset: 0, Msg: err.Error()}
	}
	if string(again) != string(data) {
		return nil, &DecodeError{Offset: firstDifference(again, data), Msg: "not the canonical type table"}
	}
	return roots, nil
}

func firstDifference(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

type typeDecoder struct {
	decoder
	defs []*Type
	refs []typeRef // checked once every definition's kind is known
}

type typeRef struct {
	index, off int
	kind       Kind
}

func (d *typeDecoder) def(t *Type) error {
	if d.off >= len(d.data) {
		return d.fail(errTruncated)
	}
	t.Kind = Kind(d.data[d.off])
	if t.Kind != KindStruct && t.Kind != KindEnum {
		return d.fail("definition of kind " + t.Kind.String())
	}
	d.off++
	var err error
	if t.Name, err = d.name(); err != nil {
		return err
	}
	if t.Kind == KindStruct {
		// a field takes at least 2 bytes: name length, type tag
		n, err := d.count(2)
		if err != nil {
			return err
		}
		t.Fields = make([]Field, n)
		for i := range t.Fields {
			f := &t.Fields[i]
			if f.Name, err = d.name(); err != nil {
				return err
			}
			if f.Type, err = d.expr(0); err != nil {
				return err
			}
		}
		return nil
	}
	// a variant takes at least 2 bytes: name length, count
	n, err := d.count(2)
	if err != nil {
		return err
	}
	t.Variants = make([]Variant, n)
	for i := range t.Variants {
		v := &t.Variants[i]
		if v.Name, err = d.name(); err != nil {
			return err
		}
		m, err := d.count(1)
		if err != nil {
			return err
		}
		if m > 0 {
			v.Fields = make([]*Type, m)
		}
		for j := range v.Fields {
			if v.Fields[j], err = d.expr(0); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *typeDecoder) name() (string, error) {
	n, err := d.count(1)
	if err != nil {
		return "", err
	}
	return d.string(n), nil
}

func (d *typeDecoder) expr(depth int) (*Type, error) {
	if depth > MaxDepth {
		return nil, d.fail(ErrTooDeep.Error())
	}
	if d.off >= len(d.data) {
		return nil, d.fail(errTruncated)
	}
	at := d.off
	k := Kind(d.data[d.off])
	d.off++
	switch k {
	case KindVoid, KindInt, KindFloat, KindBool, KindString, KindBytes:
		return primTypes[k], nil
	case KindList:
		elem, err := d.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		return ListOf(elem), nil
	case KindMap:
		key, err := d.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		elem, err := d.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		return MapOf(key, elem), nil
	case KindStruct, KindEnum:
		i, err := d.uvarint()
		if err != nil {
			return nil, err
		}
		if i >= uint64(len(d.defs)) {
			d.off = at
			return nil, d.fail("reference to undefined type " + strconv.FormatUint(i, 10))
		}
		d.refs = append(d.refs, typeRef{index: int(i), off: at, kind: k})
		return d.defs[i], nil
	}
	d.off = at
	return nil, d.fail("type tag " + strconv.Itoa(int(k)))
}
