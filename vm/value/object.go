package value

import "unsafe"

// Struct is an instance of a struct type: its descriptor and its fields in
// declaration order. It is shared by every Value that refers to it.
//
// Its fields follow the header in the same allocation (an array of more
// than eight is allocated on its own): the header keeps their address
// and count, not a slice, whose capacity would be a word of every struct
// for nothing (a struct of two fields fits the allocator's 80-byte size
// class rather than its 96-byte one). The second tier reads the address
// and the count where a slice keeps its data pointer and length
// (LayoutStructField).
type Struct struct {
	typ  *Type
	f    *Value // the first field
	n    int    // the number of fields
	mark uint32 // the Sizer pass that last counted it
}

// NewStruct returns a struct value of type t holding a copy of fields, which
// must have one value per field of t; nil gives void fields to be filled with
// SetField.
func NewStruct(t *Type, fields []Value) Value {
	if fields != nil && len(fields) != len(t.Fields) {
		panic("value: NewStruct of " + t.String() + " with a wrong number of fields")
	}
	var s *Struct
	switch len(fields) {
	case 1:
		// The common sizes store their fields directly, as NewEnum
		// does.
		b := &obj1[Struct]{a: [1]Value{fields[0]}}
		s = &b.h
		s.f = &b.a[0]
	case 2:
		b := &obj2[Struct]{a: [2]Value{fields[0], fields[1]}}
		s = &b.h
		s.f = &b.a[0]
	case 3:
		b := &obj3[Struct]{a: [3]Value{fields[0], fields[1], fields[2]}}
		s = &b.h
		s.f = &b.a[0]
	case 4:
		b := &obj4[Struct]{a: [4]Value{fields[0], fields[1], fields[2], fields[3]}}
		s = &b.h
		s.f = &b.a[0]
	default:
		s = allocStruct(t, len(t.Fields))
		copy(s.fields(), fields)
		return Value{k: KindStruct, p: unsafe.Pointer(s)}
	}
	s.typ, s.n = t, len(fields)
	return Value{k: KindStruct, p: unsafe.Pointer(s)}
}

// Type returns the struct's type.
func (s *Struct) Type() *Type { return s.typ }

// Len returns the number of fields.
func (s *Struct) Len() int { return s.n }

// Field returns field i (in declaration order).
func (s *Struct) Field(i int) Value { return s.indexable()[i] }

// SetField replaces field i.
func (s *Struct) SetField(i int, v Value) { s.indexable()[i] = v }

// indexable returns the fields as a slice to index, and only to index:
// it reads the address and count as a slice's data pointer and length,
// which they are laid out as, with no check (the interpreter's loop
// inlines Field, where a check or a call would cost every field read),
// and its capacity is not the fields'.
func (s *Struct) indexable() []Value { return *(*[]Value)(unsafe.Pointer(&s.f)) }

// Fields returns the fields themselves, not a copy.
func (s *Struct) Fields() []Value { return s.fields() }

func (s *Struct) fields() []Value { return valuesAt(s.f, s.n) }

// maxValues bounds the values of one object, for valuesAt.
const maxValues = 1 << 28

// valuesAt returns the n values from p. It slices an array pointer
// rather than calling unsafe.Slice, whose checks (a multiplication that
// is a Go call in the wasm guest) every field read would pay.
func valuesAt(p *Value, n int) []Value {
	if p == nil {
		return nil
	}
	return (*[maxValues]Value)(unsafe.Pointer(p))[:n:n]
}

// objN is an object of n values: its header h (a Struct or an enumObj)
// and its values in one allocation.
type (
	obj1[H any] struct {
		h H
		a [1]Value
	}
	obj2[H any] struct {
		h H
		a [2]Value
	}
	obj3[H any] struct {
		h H
		a [3]Value
	}
	obj4[H any] struct {
		h H
		a [4]Value
	}
	obj6[H any] struct {
		h H
		a [6]Value
	}
	obj8[H any] struct {
		h H
		a [8]Value
	}
)

// allocStruct allocates a struct of n void fields, header and fields in one
// allocation (sizes chosen to fill the allocator's size classes).
func allocStruct(t *Type, n int) *Struct {
	var s *Struct
	switch {
	case n == 0:
		s = &Struct{}
	case n == 1:
		o := new(obj1[Struct])
		s = &o.h
		s.f = &o.a[0]
	case n == 2:
		o := new(obj2[Struct])
		s = &o.h
		s.f = &o.a[0]
	case n == 3:
		o := new(obj3[Struct])
		s = &o.h
		s.f = &o.a[0]
	case n == 4:
		o := new(obj4[Struct])
		s = &o.h
		s.f = &o.a[0]
	case n <= 6:
		o := new(obj6[Struct])
		s = &o.h
		s.f = &o.a[0]
	case n <= 8:
		o := new(obj8[Struct])
		s = &o.h
		s.f = &o.a[0]
	default:
		s = &Struct{f: unsafe.SliceData(make([]Value, n))}
	}
	s.typ, s.n = t, n
	return s
}

// enumObj is the heap part of an enum value whose variant carries values.
// Enum values are immutable, so a unit variant needs no object at all: its
// Value points at the enum's *Type. Like a struct's fields, the values
// follow the header in the same allocation, which keeps their address and
// count (LayoutEnumVals).
type enumObj struct {
	typ  *Type
	v    *Value // the first value
	n    int    // the number of values
	mark uint32 // the Sizer pass that last counted it
}

func (o *enumObj) vals() []Value { return valuesAt(o.v, o.n) }

// NewEnum returns variant i of enum type t carrying a copy of vals (nil or
// empty for a unit variant). It panics if i is not a variant of t.
func NewEnum(t *Type, i int, vals []Value) Value {
	if uint(i) >= uint(len(t.Variants)) {
		panic("value: NewEnum of " + t.String() + " with a bad variant")
	}
	var o *enumObj
	switch len(vals) {
	case 0:
		return Value{k: KindEnum, n: uint64(i), p: unsafe.Pointer(t)}
	case 1:
		// The common sizes store their values directly: a copy of a
		// slice of Values is a call into the runtime, dear in the wasm
		// guest.
		b := &obj1[enumObj]{a: [1]Value{vals[0]}}
		o = &b.h
		o.v = &b.a[0]
	case 2:
		b := &obj2[enumObj]{a: [2]Value{vals[0], vals[1]}}
		o = &b.h
		o.v = &b.a[0]
	default:
		o = allocEnum(t, len(vals))
		copy(o.vals(), vals)
	}
	o.typ, o.n = t, len(vals)
	return Value{k: KindEnum, n: uint64(i) | enumBoxed, p: unsafe.Pointer(o)}
}

// NewEnum2 returns variant i of enum type t carrying a copy of *a and
// *b, like NewEnum(t, i, []Value{*a, *b}) but small enough to be inlined
// into the interpreter's operation: i must be a variant of t that
// carries two values.
func NewEnum2(t *Type, i int, a, b *Value) Value {
	o := &obj2[enumObj]{h: enumObj{typ: t, n: 2}, a: [2]Value{*a, *b}}
	o.h.v = &o.a[0]
	return Value{k: KindEnum, n: uint64(i) | enumBoxed, p: unsafe.Pointer(&o.h)}
}

// allocEnum allocates the object of a variant of n void values (n > 0).
func allocEnum(t *Type, n int) *enumObj {
	var e *enumObj
	switch {
	case n == 1:
		o := new(obj1[enumObj])
		e = &o.h
		e.v = &o.a[0]
	case n == 2:
		o := new(obj2[enumObj])
		e = &o.h
		e.v = &o.a[0]
	case n == 3:
		o := new(obj3[enumObj])
		e = &o.h
		e.v = &o.a[0]
	case n == 4:
		o := new(obj4[enumObj])
		e = &o.h
		e.v = &o.a[0]
	default:
		e = &enumObj{v: unsafe.SliceData(make([]Value, n))}
	}
	e.typ, e.n = t, n
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
		return (*enumObj)(v.p).vals()
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
