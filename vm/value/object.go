package value

import "unsafe"

// Struct is an instance of a struct type: its descriptor and its fields in
// declaration order. It is shared by every Value that refers to it.
type Struct struct {
	typ    *Type
	fields []Value
	mark   uint32 // the Sizer pass that last counted it
}

// NewStruct returns a struct value of type t holding a copy of fields, which
// must have one value per field of t; nil gives void fields to be filled with
// SetField.
func NewStruct(t *Type, fields []Value) Value {
	if fields != nil && len(fields) != len(t.Fields) {
		panic("value: NewStruct of " + t.String() + " with a wrong number of fields")
	}
	s := allocStruct(t, len(t.Fields))
	copy(s.fields, fields)
	return Value{k: KindStruct, p: unsafe.Pointer(s)}
}

// Type returns the struct's type.
func (s *Struct) Type() *Type { return s.typ }

// Len returns the number of fields.
func (s *Struct) Len() int { return len(s.fields) }

// Field returns field i (in declaration order).
func (s *Struct) Field(i int) Value { return s.fields[i] }

// SetField replaces field i.
func (s *Struct) SetField(i int, v Value) { s.fields[i] = v }

// Fields returns the fields themselves, not a copy.
func (s *Struct) Fields() []Value { return s.fields }

// allocStruct allocates a struct of n void fields, header and fields in one
// allocation (sizes chosen to fill the allocator's size classes).
func allocStruct(t *Type, n int) *Struct {
	var s *Struct
	switch {
	case n == 0:
		s = &Struct{}
	case n == 1:
		o := new(struct {
			s Struct
			a [1]Value
		})
		o.s.fields = o.a[:]
		s = &o.s
	case n == 2:
		o := new(struct {
			s Struct
			a [2]Value
		})
		o.s.fields = o.a[:]
		s = &o.s
	case n == 3:
		o := new(struct {
			s Struct
			a [3]Value
		})
		o.s.fields = o.a[:]
		s = &o.s
	case n == 4:
		o := new(struct {
			s Struct
			a [4]Value
		})
		o.s.fields = o.a[:]
		s = &o.s
	case n <= 6:
		o := new(struct {
			s Struct
			a [6]Value
		})
		o.s.fields = o.a[:n:n]
		s = &o.s
	case n <= 8:
		o := new(struct {
			s Struct
			a [8]Value
		})
		o.s.fields = o.a[:n:n]
		s = &o.s
	default:
		s = &Struct{fields: make([]Value, n)}
	}
	s.typ = t
	return s
}

// enumObj is the heap part of an enum value whose variant carries values.
// Enum values are immutable, so a unit variant needs no object at all: its
// Value points at the enum's *Type.
type enumObj struct {
	typ  *Type
	vals []Value
	mark uint32 // the Sizer pass that last counted it
}

// NewEnum returns variant i of enum type t carrying a copy of vals (nil or
// empty for a unit variant). It panics if i is not a variant of t.
func NewEnum(t *Type, i int, vals []Value) Value {
	if uint(i) >= uint(len(t.Variants)) {
		panic("value: NewEnum of " + t.String() + " with a bad variant")
	}
	if len(vals) == 0 {
		return Value{k: KindEnum, n: uint64(i), p: unsafe.Pointer(t)}
	}
	o := allocEnum(t, len(vals))
	copy(o.vals, vals)
	return Value{k: KindEnum, n: uint64(i) | enumBoxed, p: unsafe.Pointer(o)}
}

func allocEnum(t *Type, n int) *enumObj {
	var e *enumObj
	switch {
	case n == 1:
		o := new(struct {
			e enumObj
			a [1]Value
		})
		o.e.vals = o.a[:]
		e = &o.e
	case n == 2:
		o := new(struct {
			e enumObj
			a [2]Value
		})
		o.e.vals = o.a[:]
		e = &o.e
	case n <= 4:
		o := new(struct {
			e enumObj
			a [4]Value
		})
		o.e.vals = o.a[:n:n]
		e = &o.e
	default:
		e = &enumObj{vals: make([]Value, n)}
	}
	e.typ = t
	return e
}

// EnumType returns the enum type of v. It panics if v is not an enum.
func (v Value) EnumType() *Type {
	if v.k != KindEnum {
		panic(wrongKind("EnumType", v.k))
	}
	if v.n&enumBoxed != 0 {
		return (*enumObj)(v.p).typ
	}
	return (*Type)(v.p)
}

// Variant returns the variant index of enum value v.
func (v Value) Variant() int {
	if v.k != KindEnum {
		panic(wrongKind("Variant", v.k))
	}
	return int(v.n &^ enumBoxed)
}

// Payload returns the values carried by enum value v (nil for a unit
// variant), not a copy.
func (v Value) Payload() []Value {
	if v.k != KindEnum {
		panic(wrongKind("Payload", v.k))
	}
	if v.n&enumBoxed != 0 {
		return (*enumObj)(v.p).vals
	}
	return nil
}

// object returns the heap object v refers to, nil for scalars and unit enum
// variants. It identifies containers on a path (see path).
func (v Value) object() unsafe.Pointer {
	switch v.k {
	case KindList, KindMap, KindStruct:
		return v.p
	case KindEnum:
		if v.n&enumBoxed != 0 {
			return v.p
		}
	}
	return nil
}
