package value

import (
	"strconv"
	"unsafe"
)

// CanonicalNaN is the one NaN bit pattern of the canonical encoding: the
// standard quiet NaN (not Go's math.NaN(), which is 0x7ff8000000000001).
const CanonicalNaN = 0x7ff8000000000000

const (
	expMask  = 0x7ff0000000000000
	fracMask = 0x000fffffffffffff
)

func isNaNBits(b uint64) bool { return b&expMask == expMask && b&fracMask != 0 }

// The byte helpers of encoding/binary, written out because that package
// brings reflect into the wasm guest.

const maxVarintLen = 10

// appendUvarint appends x as unsigned LEB128 of minimal length.
func appendUvarint(buf []byte, x uint64) []byte {
	for x >= 0x80 {
		buf = append(buf, byte(x)|0x80)
		x >>= 7
	}
	return append(buf, byte(x))
}

// appendUint64 appends x little-endian.
func appendUint64(buf []byte, x uint64) []byte {
	return append(buf, byte(x), byte(x>>8), byte(x>>16), byte(x>>24),
		byte(x>>32), byte(x>>40), byte(x>>48), byte(x>>56))
}

// uint64At reads a little-endian uint64 from the first 8 bytes of b.
func uint64At(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// Encode appends the canonical encoding of v to buf (see the package
// documentation). It allocates only when buf must grow. It fails with
// ErrCyclic or ErrTooDeep, so that every encoding it produces decodes.
func Encode(buf []byte, v Value) ([]byte, error) {
	if v.object() == nil {
		return appendScalar(buf, v), nil
	}
	var p path
	return encode(buf, v, &p)
}

// EncodeTuple appends the canonical encoding of a tuple of values, such as
// the arguments of a primitive call: the count as a uvarint, then each value.
func EncodeTuple(buf []byte, vs []Value) ([]byte, error) {
	buf = appendUvarint(buf, uint64(len(vs)))
	var p path
	var err error
	for _, v := range vs {
		if buf, err = encode(buf, v, &p); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// appendScalar encodes a value that refers to no heap object.
func appendScalar(buf []byte, v Value) []byte {
	switch v.k {
	case KindVoid:
		return append(buf, byte(KindVoid))
	case KindInt:
		i := int64(v.n)
		return appendUvarint(append(buf, byte(KindInt)), uint64(i<<1)^uint64(i>>63))
	case KindFloat:
		b := v.n
		if isNaNBits(b) {
			b = CanonicalNaN
		}
		return appendUint64(append(buf, byte(KindFloat)), b)
	case KindBool:
		return append(buf, byte(KindBool), byte(v.n))
	case KindString, KindBytes:
		buf = appendUvarint(append(buf, byte(v.k)), v.n)
		return append(buf, v.str()...)
	case KindEnum: // unit variant
		buf = appendUvarint(append(buf, byte(KindEnum)), v.n)
		return append(buf, 0)
	}
	return buf
}

func encode(buf []byte, v Value, p *path) ([]byte, error) {
	o := v.object()
	if o == nil {
		return appendScalar(buf, v), nil
	}
	if err := p.enter(o); err != nil {
		return buf, err
	}
	var err error
	switch v.k {
	case KindList:
		buf, err = encodeValues(append(buf, byte(KindList)), v.AsList().elems, p)
	case KindStruct:
		buf, err = encodeValues(append(buf, byte(KindStruct)), v.AsStruct().fields(), p)
	case KindEnum:
		buf = appendUvarint(append(buf, byte(KindEnum)), v.n&^enumBoxed)
		buf, err = encodeValues(buf, (*enumObj)(v.p).vals(), p)
	case KindMap:
		m := v.AsMap()
		buf = appendUvarint(append(buf, byte(KindMap)), uint64(m.Len()))
		for i := range m.entries {
			e := &m.entries[i]
			if e.key.k == KindVoid {
				continue
			}
			buf = appendScalar(buf, e.key)
			if buf, err = encode(buf, e.val, p); err != nil {
				break
			}
		}
	}
	p.leave()
	return buf, err
}

// encodeValues appends a count and the values.
func encodeValues(buf []byte, vs []Value, p *path) ([]byte, error) {
	buf = appendUvarint(buf, uint64(len(vs)))
	var err error
	for _, x := range vs {
		if buf, err = encode(buf, x, p); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// DecodeError reports where and why bytes are not the canonical encoding of
// a value of the expected type.
type DecodeError struct {
	Offset int // of the first byte that does not fit
	Msg    string
}

func (e *DecodeError) Error() string {
	return "value: decode: byte " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Decode decodes the canonical encoding of one value of type t, which must
// fill data exactly. It accepts only canonical bytes, so that
// Encode(Decode(data)) == data for every data it accepts; it never panics and
// allocates at most a small multiple of len(data). The result's structs and
// enums refer to t's descriptors; strings and bytes are copied out of data.
func Decode(data []byte, t *Type) (Value, error) {
	d := decoder{data: data}
	v, err := d.value(t)
	if err == nil && d.off != len(data) {
		err = d.fail("trailing bytes")
	}
	return v, err
}

// DecodeStructInto is Decode for a struct type t that reuses into (a
// struct of type t, or nil) for the decoded struct's fields instead of
// allocating: a receiver that knows no reference to into survives uses it
// to decode one payload after another.
func DecodeStructInto(data []byte, t *Type, into *Struct) (Value, error) {
	d := decoder{data: data, into: into}
	v, err := d.value(t)
	if err == nil && d.off != len(data) {
		err = d.fail("trailing bytes")
	}
	return v, err
}

// DecodeTuple decodes a tuple encoded by EncodeTuple whose values have the
// given types, in order.
func DecodeTuple(data []byte, types []*Type) ([]Value, error) {
	d := decoder{data: data}
	n, err := d.count(1)
	if err != nil {
		return nil, err
	}
	if n != len(types) {
		return nil, d.fail("tuple of " + strconv.Itoa(n) + " values, want " + strconv.Itoa(len(types)))
	}
	vs := make([]Value, n)
	for i, t := range types {
		if vs[i], err = d.value(t); err != nil {
			return nil, err
		}
	}
	if d.off != len(data) {
		return nil, d.fail("trailing bytes")
	}
	return vs, nil
}

type decoder struct {
	data  []byte
	off   int
	depth int     // containers entered
	copy  string  // of data, when small enough to share
	into  *Struct // storage for the first struct decoded (DecodeStructInto)
}

// shareLimit is the input size up to which the strings of one decoded value
// share one copy of the input: one allocation instead of one per string,
// at the price of keeping at most shareLimit bytes alive per string kept.
const shareLimit = 512

// same reports whether the next value is the string or bytes v, encoded
// canonically, and if so reads past it.
func (d *decoder) same(v Value) bool {
	if (v.k != KindString && v.k != KindBytes) || d.off >= len(d.data) || d.data[d.off] != byte(v.k) {
		return false
	}
	at := d.off
	d.off++
	n, err := d.uvarint()
	if err != nil || n != v.n || uint64(len(d.data)-d.off) < n || string(d.data[d.off:d.off+int(n)]) != v.str() {
		d.off = at
		return false
	}
	d.off += int(n)
	return true
}

// string returns the next n bytes, which are in range, as a string that does
// not alias data.
func (d *decoder) string(n int) string {
	if n == 0 {
		return ""
	}
	var s string
	if len(d.data) <= shareLimit {
		if d.copy == "" {
			d.copy = string(d.data)
		}
		s = d.copy[d.off : d.off+n]
	} else {
		s = string(d.data[d.off : d.off+n])
	}
	d.off += n
	return s
}

func (d *decoder) fail(msg string) error { return &DecodeError{Offset: d.off, Msg: msg} }

const errTruncated = "truncated"

// uvarint reads a minimal-length LEB128 unsigned varint (at most 10 bytes,
// no trailing zero byte): the only canonical form of each number.
func (d *decoder) uvarint() (uint64, error) {
	var x uint64
	for i, s := 0, uint(0); i < maxVarintLen; i, s = i+1, s+7 {
		if d.off >= len(d.data) {
			return 0, d.fail(errTruncated)
		}
		b := d.data[d.off]
		if b < 0x80 {
			if i > 0 && b == 0 {
				return 0, d.fail("non-canonical varint")
			}
			if i == maxVarintLen-1 && b > 1 {
				return 0, d.fail("varint overflows 64 bits")
			}
			d.off++
			return x | uint64(b)<<s, nil
		}
		x |= uint64(b&0x7f) << s
		d.off++
	}
	return 0, d.fail("varint overflows 64 bits")
}

// count reads a count of items that each take at least min bytes, so that no
// count can claim more than the rest of the input holds.
func (d *decoder) count(min int) (int, error) {
	start := d.off
	n, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if n > uint64((len(d.data)-d.off)/min) {
		d.off = start
		return 0, d.fail("count " + strconv.FormatUint(n, 10) + " exceeds the input")
	}
	return int(n), nil
}

func (d *decoder) value(t *Type) (Value, error) {
	if t == nil {
		return Value{}, d.fail("no type")
	}
	if d.off >= len(d.data) {
		return Value{}, d.fail(errTruncated)
	}
	if tag := d.data[d.off]; tag != byte(t.Kind) {
		return Value{}, d.fail("tag " + strconv.Itoa(int(tag)) + ", want " + t.Kind.String())
	}
	d.off++
	switch t.Kind {
	case KindVoid:
		return Value{}, nil
	case KindInt:
		u, err := d.uvarint()
		return Int(int64(u>>1) ^ -int64(u&1)), err
	case KindFloat:
		if len(d.data)-d.off < 8 {
			return Value{}, d.fail(errTruncated)
		}
		b := uint64At(d.data[d.off:])
		if isNaNBits(b) && b != CanonicalNaN {
			return Value{}, d.fail("non-canonical NaN")
		}
		d.off += 8
		return Value{k: KindFloat, n: b}, nil
	case KindBool:
		if d.off >= len(d.data) {
			return Value{}, d.fail(errTruncated)
		}
		b := d.data[d.off]
		if b > 1 {
			return Value{}, d.fail("bool byte " + strconv.Itoa(int(b)))
		}
		d.off++
		return Value{k: KindBool, n: uint64(b)}, nil
	case KindString, KindBytes:
		n, err := d.count(1)
		if err != nil {
			return Value{}, err
		}
		s := d.string(n)
		return Value{k: t.Kind, n: uint64(n), p: unsafe.Pointer(unsafe.StringData(s))}, nil
	case KindList, KindMap, KindStruct, KindEnum:
		if d.depth >= MaxDepth {
			return Value{}, d.fail(ErrTooDeep.Error())
		}
		d.depth++
		v, err := d.container(t)
		d.depth--
		return v, err
	}
	return Value{}, d.fail("type of unknown kind " + t.Kind.String())
}

// Every value but void takes at least two bytes (a tag and a payload byte or
// count), which bounds counts read from the input.
const minValueSize = 2

func (d *decoder) container(t *Type) (Value, error) {
	switch t.Kind {
	case KindList:
		if !isElemType(t.Elem) {
			return Value{}, d.fail("bad list element type")
		}
		n, err := d.count(minValueSize)
		if err != nil {
			return Value{}, err
		}
		l := allocList(n)
		for i := range l.elems {
			if l.elems[i], err = d.value(t.Elem); err != nil {
				return Value{}, err
			}
		}
		return l.value(), nil
	case KindMap:
		if t.Key == nil || !isKeyKind(t.Key.Kind) || !isElemType(t.Elem) {
			return Value{}, d.fail("bad map type")
		}
		n, err := d.count(2 * minValueSize)
		if err != nil {
			return Value{}, err
		}
		m := newMap(t.Key.Kind, n)
		for range n {
			at := d.off
			k, err := d.value(t.Key)
			if err != nil {
				return Value{}, err
			}
			if m.find(k) >= 0 {
				d.off = at
				return Value{}, d.fail("duplicate map key")
			}
			v, err := d.value(t.Elem)
			if err != nil {
				return Value{}, err
			}
			m.add(k, v)
		}
		return m.value(), nil
	case KindStruct:
		at := d.off
		n, err := d.count(minValueSize)
		if err != nil {
			return Value{}, err
		}
		if n != len(t.Fields) {
			d.off = at
			return Value{}, d.fail(strconv.Itoa(n) + " fields, want " + strconv.Itoa(len(t.Fields)) + " for " + t.Name)
		}
		s := d.into
		d.into = nil
		reused := s != nil && s.typ == t && s.n == n
		if !reused {
			s = allocStruct(t, n)
		}
		fs := s.fields()
		for i := range fs {
			ft := t.Fields[i].Type
			if !isElemType(ft) {
				return Value{}, d.fail("bad type of field " + t.Fields[i].Name)
			}
			if reused && d.same(fs[i]) {
				// The field repeats the reused struct's string (a
				// label, a name): keep it rather than copy the input.
				continue
			}
			if fs[i], err = d.value(ft); err != nil {
				return Value{}, err
			}
		}
		return Value{k: KindStruct, p: unsafe.Pointer(s)}, nil
	}
	// enum
	at := d.off
	vi, err := d.uvarint()
	if err != nil {
		return Value{}, err
	}
	if vi >= uint64(len(t.Variants)) {
		d.off = at
		return Value{}, d.fail("variant " + strconv.FormatUint(vi, 10) + " out of range for " + t.Name)
	}
	fields := t.Variants[vi].Fields
	at = d.off
	n, err := d.count(minValueSize)
	if err != nil {
		return Value{}, err
	}
	if n != len(fields) {
		d.off = at
		return Value{}, d.fail(strconv.Itoa(n) + " values, want " + strconv.Itoa(len(fields)) + " for " + t.Name + "::" + t.Variants[vi].Name)
	}
	if n == 0 {
		return Value{k: KindEnum, n: vi, p: unsafe.Pointer(t)}, nil
	}
	e := allocEnum(t, n)
	vals := e.vals()
	for i := range vals {
		if !isElemType(fields[i]) {
			return Value{}, d.fail("bad type of a value of " + t.Name + "::" + t.Variants[vi].Name)
		}
		if vals[i], err = d.value(fields[i]); err != nil {
			return Value{}, err
		}
	}
	return Value{k: KindEnum, n: vi | enumBoxed, p: unsafe.Pointer(e)}, nil
}

func isKeyKind(k Kind) bool { return k == KindInt || k == KindString || k == KindBool }

// isElemType reports whether t can be the type of a list element, map value,
// struct field or enum value: anything but void.
func isElemType(t *Type) bool { return t != nil && t.Kind != KindVoid }
