package ast

import "strings"

// TypeKind classifies a Type.
type TypeKind uint8

// Type kinds. Void is the "result" of a fn without `-> T`. Invalid marks an
// expression whose type could not be determined (an error was reported);
// the checker treats it as compatible with everything to avoid cascades.
const (
	Invalid TypeKind = iota
	Void
	Int
	Float
	Bool
	String
	Bytes
	List   // Elem
	Map    // Key, Elem
	Struct // Name, Fields (also the payload type of a topic: Topic is true)
	Enum   // Name, Variants
	Func   // Params, Result: the type of a fn symbol, never of a value
)

var kindNames = [...]string{
	Invalid: "invalid", Void: "void", Int: "int", Float: "float", Bool: "bool",
	String: "string", Bytes: "bytes", List: "list", Map: "map", Struct: "struct",
	Enum: "enum", Func: "fn",
}

func (k TypeKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "?"
}

// Type is a Hale type. Basic types are the shared values in Basic; list and
// map types are structural (compare them with Identical); struct, enum and
// topic types are nominal: one *Type per declaration, compared by pointer.
type Type struct {
	Kind TypeKind
	Elem *Type // List element, Map value
	Key  *Type // Map key

	Name     string     // Struct and Enum: declared name (qualified for std types, e.g. "std::http::Response")
	Topic    bool       // Struct: declared with `topic`
	Fields   []*Field   // Struct
	Variants []*Variant // Enum
	Decl     Pos        // Struct and Enum: where declared
	// Generic is "Option" or "Result" for an instance of a built-in
	// generic enum (Name is then "Option<int>"). The checker interns
	// instances, so they too are identical only by pointer.
	Generic string

	Params []*Type // Func
	Result *Type   // Func (Void when the fn returns nothing)
}

// Field is a struct or topic field.
type Field struct {
	Name string
	Type *Type
}

// Variant is an enum variant; Fields are its payload types (none for a
// unit variant like Verdict::Accept).
type Variant struct {
	Name   string
	Fields []*Type
}

// Shared basic types. Never allocate another *Type of these kinds.
var (
	InvalidType = &Type{Kind: Invalid}
	VoidType    = &Type{Kind: Void}
	IntType     = &Type{Kind: Int}
	FloatType   = &Type{Kind: Float}
	BoolType    = &Type{Kind: Bool}
	StringType  = &Type{Kind: String}
	BytesType   = &Type{Kind: Bytes}
)

// ListOf returns the type [elem].
func ListOf(elem *Type) *Type { return &Type{Kind: List, Elem: elem} }

// MapOf returns the type {key: val}.
func MapOf(key, val *Type) *Type { return &Type{Kind: Map, Key: key, Elem: val} }

// TypeArg returns the type argument of an Option or Result instance: the
// payload type of its first variant (Some or Ok).
func (t *Type) TypeArg() *Type {
	if t.Generic == "" || len(t.Variants) == 0 || len(t.Variants[0].Fields) == 0 {
		return InvalidType
	}
	return t.Variants[0].Fields[0]
}

// IsOption reports whether t is an instance of the built-in Option<T>.
func (t *Type) IsOption() bool { return t != nil && t.Generic == "Option" }

// IsResult reports whether t is an instance of the built-in Result<T>.
func (t *Type) IsResult() bool { return t != nil && t.Generic == "Result" }

// FieldIndex returns the index of the named field of a struct type, or -1.
func (t *Type) FieldIndex(name string) int {
	for i, f := range t.Fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// VariantIndex returns the index of the named variant of an enum type, or -1.
func (t *Type) VariantIndex(name string) int {
	for i, v := range t.Variants {
		if v.Name == name {
			return i
		}
	}
	return -1
}

// Identical reports whether a and b are the same type: basic kinds by kind,
// lists and maps structurally, structs and enums by declaration (pointer).
func Identical(a, b *Type) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case List:
		return Identical(a.Elem, b.Elem)
	case Map:
		return Identical(a.Key, b.Key) && Identical(a.Elem, b.Elem)
	case Struct, Enum:
		return false // nominal: only the same pointer is identical
	case Func:
		if len(a.Params) != len(b.Params) || !Identical(a.Result, b.Result) {
			return false
		}
		for i := range a.Params {
			if !Identical(a.Params[i], b.Params[i]) {
				return false
			}
		}
		return true
	}
	return true
}

// String renders the type as Hale source writes it: int, [string],
// {string: [int]}, Point.
func (t *Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t *Type) write(b *strings.Builder) {
	if t == nil {
		b.WriteString("<nil>")
		return
	}
	switch t.Kind {
	case List:
		b.WriteByte('[')
		t.Elem.write(b)
		b.WriteByte(']')
	case Map:
		b.WriteByte('{')
		t.Key.write(b)
		b.WriteString(": ")
		t.Elem.write(b)
		b.WriteByte('}')
	case Struct, Enum:
		b.WriteString(t.Name)
	case Func:
		b.WriteString("fn(")
		for i, p := range t.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			p.write(b)
		}
		b.WriteByte(')')
		if t.Result != nil && t.Result.Kind != Void {
			b.WriteString(" -> ")
			t.Result.write(b)
		}
	default:
		b.WriteString(t.Kind.String())
	}
}
