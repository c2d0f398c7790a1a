// Package value is the runtime value model of the Hale interpreter and the
// one canonical binary encoding of values and types.
//
// The interpreter computes with Value, a three-word struct (see Value) that
// holds ints, floats, bools, strings, bytes and unit enum variants without
// allocating and refers to heap objects for the rest: List, Map, Struct, and
// enum variants that carry values. Lists, maps and structs are references
// inside one locus, so copying a Value aliases them; DeepCopy makes the copy
// a published payload needs. Type is the descriptor of a type; struct and
// enum descriptors are nominal and may be recursive.
//
// A Sizer measures the data reachable from a set of values, the same way on
// every platform, for the interpreter's memory limit.
//
// The package formats values as Hale's str(x) (Format), renders the JSON
// view used by the tools (AppendJSON), and encodes values (Encode, Decode,
// EncodeTuple, DecodeTuple) and type tables (EncodeTypes, DecodeTypes) in
// the canonical form below. Payloads, primitive arguments and results,
// journal entries and state inspection all use it, and replay compares it
// byte for byte, so each value has exactly one encoding: decoders accept
// only that one, and Encode(Decode(b)) == b for every b they accept.
//
// The package is pure computation: it reads no clock, randomness,
// environment, file or network, as the wasm guest requires.
//
// # Canonical encoding of values
//
// uvarint is unsigned LEB128 (as encoding/binary's Uvarint) of minimal length: at
// most 10 bytes, the last byte not 0x00 unless it is the only byte, and a
// tenth byte of at most 0x01. Every value starts with a one-byte tag, the
// Kind:
//
//	void    0x00
//	int     0x01 uvarint(zigzag(i))         zigzag(i) = (i << 1) ^ (i >> 63)
//	float   0x02 8 bytes, IEEE-754 binary64 bits, little-endian; every NaN
//	             is written as 0x7ff8000000000000 (CanonicalNaN); -0.0 keeps
//	             its sign
//	bool    0x03 0x00 (false) | 0x01 (true)
//	string  0x04 uvarint(n) n bytes (not checked to be UTF-8)
//	bytes   0x05 uvarint(n) n bytes
//	list    0x06 uvarint(n) n × value
//	map     0x07 uvarint(n) n × (key value), in insertion order; keys
//	             distinct
//	struct  0x08 uvarint(n) n × value, the fields in declaration order
//	enum    0x09 uvarint(variant) uvarint(n) n × value; variant is the
//	             index in declaration order, n its number of values (0 for
//	             a unit variant)
//
// No type names appear: the decoder is given the expected Type, checks each
// tag against it, and rejects a field or value count that differs from the
// type, a variant index out of range, a bool byte other than 0 or 1, a NaN
// other than CanonicalNaN, a duplicate map key, a non-minimal or overflowing
// uvarint, containers nested deeper than MaxDepth (1000; lists, maps,
// structs and enum variants with values count), a truncated value and
// trailing bytes. Encode refuses the same depth, and a value that contains
// itself, so whatever it writes decodes. void (0x00) appears only at top
// level, as the result of a fn without one; every other value takes at least
// two bytes, so a count larger than the remaining bytes allow is rejected
// before anything is allocated.
//
// A tuple (the arguments of a primitive call) is uvarint(n) followed by the
// n values, each with its tag: ("PATH", "default") is
//
//	02  04 04 'P' 'A' 'T' 'H'  04 07 'd' 'e' 'f' 'a' 'u' 'l' 't'
//
// and the struct value Order { id: 7, amount: -2, note: "hi" } is
//
//	08 03  01 0e  01 03  04 02 'h' 'i'
//
// # Canonical encoding of type tables
//
// A type table carries the types needed to decode values: a list of root type
// expressions and the struct and enum definitions they reach.
//
//	table       uvarint(d) d × definition, uvarint(r) r × expr
//	definition  0x08 str(name) uvarint(f) f × (str(field name) expr)
//	          | 0x09 str(name) uvarint(v) v × (str(variant name) uvarint(n) n × expr)
//	expr        0x00 void | 0x01 int | 0x02 float | 0x03 bool | 0x04 string
//	          | 0x05 bytes | 0x06 expr (list of) | 0x07 expr expr (map of key, value)
//	          | 0x08 uvarint(i) (struct definition i) | 0x09 uvarint(i) (enum definition i)
//	str(s)      uvarint(len(s)) bytes of s
//
// Definitions are numbered from 0 in depth-first pre-order of first reach:
// walk the roots in order; a struct or enum type not yet numbered gets the
// next number, then its field (or variant value) types are walked in
// declaration order; a list walks its element, a map its key then its value.
// Every definition is reached, each exactly once, and a reference names a
// definition of the same kind. void may only be a root; map keys are int,
// string or bool. A recursive type refers to its own number, so
// `type Node { name: string, kids: [Node] }` as the only root is
//
//	01  08 04 'N' 'o' 'd' 'e' 02  04 'n' 'a' 'm' 'e' 04  04 'k' 'i' 'd' 's' 06 08 00
//	01  08 00
//
// # JSON view
//
// AppendJSON writes compact JSON: ints and floats as numbers (floats in their
// str() form, so they keep a point or an exponent: 1.0, 1e+21; NaN and the
// infinities as the strings "NaN", "inf", "-inf"), strings, bools, bytes as
// {"bytes":"<hex>"}, lists as arrays, maps with string keys as objects in
// insertion order and other maps as arrays of [key,value] pairs, structs as
// objects of their fields in declaration order, enums as
// {"variant":"Reject","values":["late"]}; Option as null or its value and
// Result as {"ok":v} or {"err":{"kind":…,"message":…}}.
package value
