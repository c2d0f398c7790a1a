package value

import "strings"

// Type describes a Hale type. Struct and enum types are nominal and may be
// recursive (a struct holding a list of itself), so types form a pointer
// graph; every other type is a tree of Elem and Key. A Type must not change
// once values of it exist.
type Type struct {
	Kind     Kind
	Name     string    // struct and enum
	Elem     *Type     // list element, map value
	Key      *Type     // map key: int, string or bool
	Fields   []Field   // struct, in declaration order
	Variants []Variant // enum, in declaration order
}

// Field is a struct field.
type Field struct {
	Name string
	Type *Type
}

// Variant is an enum variant with the types of the values it carries (none
// for a unit variant).
type Variant struct {
	Name   string
	Fields []*Type
}

// The primitive types. Treat them as constants.
var (
	VoidType   = &Type{Kind: KindVoid}
	IntType    = &Type{Kind: KindInt}
	FloatType  = &Type{Kind: KindFloat}
	BoolType   = &Type{Kind: KindBool}
	StringType = &Type{Kind: KindString}
	BytesType  = &Type{Kind: KindBytes}
)

var primTypes = [...]*Type{VoidType, IntType, FloatType, BoolType, StringType, BytesType}

// ListOf returns the type [elem].
func ListOf(elem *Type) *Type { return &Type{Kind: KindList, Elem: elem} }

// MapOf returns the type {key: elem}.
func MapOf(key, elem *Type) *Type { return &Type{Kind: KindMap, Key: key, Elem: elem} }

// IsGeneric reports whether t is an instance of the built-in generic enums
// Option<T> or Result<T>, whose names are written with their type argument
// ("Option<int>"), which no declared type's name can be. Their variants
// are written unqualified: Some(3), None, Ok("x"), Err(…).
func (t *Type) IsGeneric() bool {
	return t.Kind == KindEnum && (strings.HasPrefix(t.Name, "Option<") || strings.HasPrefix(t.Name, "Result<"))
}

// FieldIndex returns the index of the field called name, or -1.
func (t *Type) FieldIndex(name string) int {
	for i, f := range t.Fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// VariantIndex returns the index of the variant called name, or -1.
func (t *Type) VariantIndex(name string) int {
	for i, v := range t.Variants {
		if v.Name == name {
			return i
		}
	}
	return -1
}

// String returns the type as written in Hale: int, [Point], {string: int}.
func (t *Type) String() string {
	var b strings.Builder
	t.write(&b, 0)
	return b.String()
}

func (t *Type) write(b *strings.Builder, depth int) {
	if t == nil || depth > MaxDepth {
		b.WriteString("?")
		return
	}
	switch t.Kind {
	case KindList:
		b.WriteByte('[')
		t.Elem.write(b, depth+1)
		b.WriteByte(']')
	case KindMap:
		b.WriteByte('{')
		t.Key.write(b, depth+1)
		b.WriteString(": ")
		t.Elem.write(b, depth+1)
		b.WriteByte('}')
	case KindStruct, KindEnum:
		b.WriteString(t.Name)
	default:
		b.WriteString(t.Kind.String())
	}
}
