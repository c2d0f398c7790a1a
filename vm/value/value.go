package value

import (
	"errors"
	"math"
	"strconv"
	"unsafe"
)

// Kind is the dynamic kind of a Value and of a Type. Its numeric value is
// also the tag byte of the canonical encoding, so it must never be
// renumbered.
type Kind uint8

// The kinds. KindVoid is the zero Kind: the zero Value is void.
const (
	KindVoid Kind = iota
	KindInt
	KindFloat
	KindBool
	KindString
	KindBytes
	KindList
	KindMap
	KindStruct
	KindEnum
	numKinds
)

var kindNames = [numKinds]string{"void", "int", "float", "bool", "string", "bytes", "list", "map", "struct", "enum"}

// String returns the kind's name as written in Hale ("int", "list", …).
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one Hale value. It is three words (24 bytes on 64-bit targets,
// wasm included) and is passed and stored by value, so ints, floats, bools,
// strings, bytes and unit enum variants never allocate:
//
//	kind     n                        p
//	int      int64 bits               nil
//	float    float64 bits             nil
//	bool     0 or 1                   nil
//	string   length                   first byte of the (immutable) contents
//	bytes    length                   first byte of the (immutable) contents
//	list     0                        *List
//	map      0                        *Map
//	struct   0                        *Struct
//	enum     variant | enumBoxed      *enumObj, or the enum's *Type for a unit variant
//
// p is an unsafe.Pointer rather than an interface so that the struct stays at
// three words; the accessors check the kind before converting it back, so a
// wrong accessor panics instead of reading memory as the wrong type. Lists,
// maps and structs are references: copying a Value aliases them.
//
// The zero Value is void (the "result" of a fn without one). Values are not
// comparable with ==; use Equal.
type Value struct {
	_ [0]func() // forbids ==, which would compare string pointers
	k Kind
	n uint64
	p unsafe.Pointer
}

// enumBoxed marks an enum Value whose p is an *enumObj (a variant with
// values) rather than the enum's *Type (a unit variant).
const enumBoxed = 1 << 63

// Errors returned by list and map operations. The interpreter turns them into
// traps and may add detail (index, length).
var (
	ErrIndex     = errors.New("index out of range")
	ErrEmpty     = errors.New("pop from an empty list")
	ErrIterating = errors.New("changed while a for loop iterates over it")
)

// Int returns an int value.
func Int(i int64) Value { return Value{k: KindInt, n: uint64(i)} }

// Float returns a float value. The bits are kept as they are; NaN is
// canonicalised only when the value is encoded.
func Float(f float64) Value { return Value{k: KindFloat, n: math.Float64bits(f)} }

// Bool returns a bool value.
func Bool(b bool) Value {
	if b {
		return Value{k: KindBool, n: 1}
	}
	return Value{k: KindBool}
}

// Str returns a string value sharing s's memory (strings are immutable).
func Str(s string) Value {
	return Value{k: KindString, n: uint64(len(s)), p: unsafe.Pointer(unsafe.StringData(s))}
}

// BytesVal returns a bytes value holding a copy of b.
func BytesVal(b []byte) Value { return BytesOf(string(b)) }

// BytesOf returns a bytes value whose contents are s, without copying.
func BytesOf(s string) Value {
	return Value{k: KindBytes, n: uint64(len(s)), p: unsafe.Pointer(unsafe.StringData(s))}
}

// Kind returns v's kind.
func (v Value) Kind() Kind { return v.k }

// IsVoid reports whether v is the void value.
func (v Value) IsVoid() bool { return v.k == KindVoid }

// AsInt returns the int in v. Like the other scalar accessors it does not
// check the kind (the program is type-checked): on another kind the result is
// meaningless but harmless.
func (v Value) AsInt() int64 { return int64(v.n) }

// AsFloat returns the float in v.
func (v Value) AsFloat() float64 { return math.Float64frombits(v.n) }

// AsBool returns the bool in v.
func (v Value) AsBool() bool { return v.n != 0 }

// AsStr returns the contents of a string or bytes value without copying. It
// panics on any other kind.
func (v Value) AsStr() string {
	if v.k != KindString && v.k != KindBytes {
		panic(wrongKind("AsStr", v.k))
	}
	return unsafe.String((*byte)(v.p), int(v.n))
}

// AsBytes returns a copy of the contents of a bytes (or string) value.
func (v Value) AsBytes() []byte { return []byte(v.AsStr()) }

// AsList returns the list in v. It panics if v is not a list.
func (v Value) AsList() *List {
	if v.k != KindList {
		panic(wrongKind("AsList", v.k))
	}
	return (*List)(v.p)
}

// AsMap returns the map in v. It panics if v is not a map.
func (v Value) AsMap() *Map {
	if v.k != KindMap {
		panic(wrongKind("AsMap", v.k))
	}
	return (*Map)(v.p)
}

// AsStruct returns the struct in v. It panics if v is not a struct.
func (v Value) AsStruct() *Struct {
	if v.k != KindStruct {
		panic(wrongKind("AsStruct", v.k))
	}
	return (*Struct)(v.p)
}

// str returns the contents of a value known to be a string or bytes.
// ByteLen returns the length in bytes of a string or bytes value.
func (v Value) ByteLen() int { return int(v.n) }

func (v Value) str() string { return unsafe.String((*byte)(v.p), int(v.n)) }

// String returns Format(v), so that fmt prints values as str(x) does.
func (v Value) String() string { return Format(v) }

func wrongKind(op string, k Kind) string { return "value: " + op + " of " + k.String() }
