package vm

import (
	"math"

	"github.com/hale-lang/hale/vm/value"
)

// A delivery to a payloadLocal handler decodes its payload into the
// topic's reused struct (m.payloads). When every field of the payload is
// an int, a float or a bool, decodeScalarPayload does it without the
// general decoder: on the wasm engine, where every Go call costs several
// times what it does natively, the general decoder was a quarter of the
// fixed cost of a delivery. It accepts exactly the canonical encodings
// value.DecodeStructInto accepts for such a struct and leaves every other
// input (and the first payload of a topic, before there is a struct to
// reuse) to it, so a payload it cannot take gets the same error as
// before.

// scalarPayload is what decodeScalarPayload needs of a topic whose
// payload has only int, float and bool fields, once the general decoder
// made the topic's reused struct.
type scalarPayload struct {
	s      *value.Struct // m.payloads[topic] when it was made
	scalar bool          // the payload has only int, float and bool fields
	v      value.Value   // s's value
	size   int64         // value.ShallowSize(v)
	kinds  []byte        // the fields' tags (value.Kind), fewer than 128
}

// decodeScalarPayload decodes payload into the reused struct of topic
// when the topic's payload has only int, float and bool fields, puts the
// struct in register 0 and charges it as Deliver does. It reports false,
// having decoded nothing or part of the fields, when the general decoder
// must do it (the struct may then hold some of the new fields, which the
// general decoder overwrites). It accepts exactly what
// value.DecodeStructInto accepts for such a struct, with the same values
// (FuzzScalarPayload). It is one function, with no calls on its usual
// path: in the wasm guest each call costs tens of nanoseconds.
func (m *Machine) decodeScalarPayload(topic int, payload []byte) bool {
	if topic >= len(m.scalarPays) {
		return false
	}
	p := &m.scalarPays[topic]
	if !p.scalar || p.s != m.payloads[topic] {
		return false
	}
	kinds, fields := p.kinds, p.s.Fields()
	if len(fields) != len(kinds) || len(payload) < 2 || payload[0] != byte(value.KindStruct) || int(payload[1]) != len(kinds) {
		return false
	}
	off := 2
	for i, k := range kinds {
		// Every scalar takes its tag and at least one byte.
		if off+1 >= len(payload) || payload[off] != k {
			return false
		}
		off++
		switch value.Kind(k) {
		case value.KindInt:
			if c := payload[off]; c < 0x80 {
				fields[i] = value.Int(int64(c>>1) ^ -int64(c&1))
				off++
				continue
			}
			u, n := canonicalUvarint(payload[off:])
			if n == 0 {
				return false
			}
			off += n
			fields[i] = value.Int(int64(u>>1) ^ -int64(u&1))
		case value.KindFloat:
			if len(payload)-off < 8 {
				return false
			}
			b := payload[off : off+8]
			bits := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
				uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
			if f := math.Float64frombits(bits); f != f && bits != value.CanonicalNaN {
				return false
			}
			off += 8
			fields[i] = value.Float(math.Float64frombits(bits))
		case value.KindBool:
			if payload[off] > 1 {
				return false
			}
			fields[i] = value.Bool(payload[off] == 1)
			off++
		default:
			return false
		}
	}
	if off != len(payload) {
		return false
	}
	m.stack[0] = p.v
	m.charge(int64(len(payload)) + p.size)
	return true
}

// scalarKinds returns the tags of t's fields when t is a struct of fewer
// than 128 fields that are all ints, floats and bools (so its count takes
// one byte), or false.
func scalarKinds(t *value.Type) ([]byte, bool) {
	if t == nil || t.Kind != value.KindStruct || len(t.Fields) >= 0x80 {
		return nil, false
	}
	kinds := make([]byte, len(t.Fields))
	for i, f := range t.Fields {
		if f.Type == nil {
			return nil, false
		}
		switch f.Type.Kind {
		case value.KindInt, value.KindFloat, value.KindBool:
			kinds[i] = byte(f.Type.Kind)
		default:
			return nil, false
		}
	}
	return kinds, true
}

// canonicalUvarint reads a minimal LEB128 varint of at most 64 bits, as
// the canonical encoding writes it, and returns it with its length, or
// n == 0 for anything else (truncated, not minimal, overflowing).
func canonicalUvarint(b []byte) (x uint64, n int) {
	var s uint
	for i := 0; i < 10 && i < len(b); i++ {
		c := b[i]
		if c < 0x80 {
			if i > 0 && c == 0 || i == 9 && c > 1 {
				return 0, 0
			}
			return x | uint64(c)<<s, i + 1
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, 0
}

// keepPayload notes topic's reused payload struct, of value v, after
// the general decoder made it, for decodeScalarPayload: once per struct,
// whether or not the payload is one it can decode.
func (m *Machine) keepPayload(topic int, v value.Value) {
	s := v.AsStruct()
	if topic < len(m.scalarPays) && m.scalarPays[topic].s == s {
		return
	}
	if m.scalarPays == nil {
		m.scalarPays = make([]scalarPayload, len(m.img.Topics))
	}
	kinds, ok := scalarKinds(s.Type())
	m.scalarPays[topic] = scalarPayload{s: s, scalar: ok, v: v, size: value.ShallowSize(v), kinds: kinds}
}

// appendScalarTuple appends to m.buf the canonical encoding of the tuple
// vs, as value.EncodeTuple does, when every value is an int, a float or a
// bool, and reports false (m.buf as it was) otherwise. A publish of a
// payload of such fields takes it instead of the general encoder, for
// the same reason as decodeScalarPayload; it returns only a bool for the
// same reason.
func (m *Machine) appendScalarTuple(vs []value.Value) bool {
	if len(vs) >= 0x80 {
		return false
	}
	buf := m.buf
	buf = append(buf, byte(len(vs)))
	for _, v := range vs {
		switch v.Kind() {
		case value.KindInt:
			i := v.AsInt()
			u := uint64(i<<1) ^ uint64(i>>63)
			buf = append(buf, byte(value.KindInt))
			for u >= 0x80 {
				buf = append(buf, byte(u)|0x80)
				u >>= 7
			}
			buf = append(buf, byte(u))
		case value.KindFloat:
			b := math.Float64bits(v.AsFloat())
			if f := v.AsFloat(); f != f {
				b = value.CanonicalNaN
			}
			buf = append(buf, byte(value.KindFloat), byte(b), byte(b>>8), byte(b>>16), byte(b>>24),
				byte(b>>32), byte(b>>40), byte(b>>48), byte(b>>56))
		case value.KindBool:
			c := byte(0)
			if v.AsBool() {
				c = 1
			}
			buf = append(buf, byte(value.KindBool), c)
		default:
			// m.buf keeps its length; its array may have grown.
			m.buf = buf[:len(m.buf)]
			return false
		}
	}
	m.buf = buf
	return true
}
