package value

import (
	"bytes"
	"encoding/json"
	"testing"
)

// fuzzTypes are the types FuzzDecode decodes as; the seeds are the samples
// encoded with their own type.
func fuzzTypes(ss []sample) []*Type {
	ts := []*Type{}
	seen := map[*Type]bool{}
	for _, s := range ss {
		if !seen[s.t] {
			seen[s.t] = true
			ts = append(ts, s.t)
		}
	}
	return ts
}

func typeIndex(ts []*Type, t *Type) uint8 {
	for i, x := range ts {
		if x == t {
			return uint8(i)
		}
	}
	panic("no such type")
}

func FuzzDecode(f *testing.F) {
	ss := samples()
	ts := fuzzTypes(ss)
	for _, s := range ss {
		b, err := Encode(nil, s.v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, typeIndex(ts, s.t))
		tup, _ := EncodeTuple(nil, []Value{s.v, s.v})
		f.Add(tup, typeIndex(ts, s.t)|0x80)
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		typ := ts[int(which&0x7f)%len(ts)]
		if which&0x80 != 0 { // as a tuple of two values
			vs, err := DecodeTuple(data, []*Type{typ, typ})
			if err != nil {
				return
			}
			again, err := EncodeTuple(nil, vs)
			if err != nil || !bytes.Equal(again, data) {
				t.Fatalf("tuple %x re-encodes as %x (%v)", data, again, err)
			}
			return
		}
		v, err := Decode(data, typ)
		if typ.Kind == KindStruct {
			// Decoding into a reused struct gives the same value, or
			// the same error.
			var into *Struct
			if prev, err := DecodeStructInto(data, typ, nil); err == nil {
				into = prev.AsStruct()
			}
			w, werr := DecodeStructInto(data, typ, into)
			if (werr == nil) != (err == nil) {
				t.Fatalf("%x as %v: Decode %v, DecodeStructInto %v", data, typ, err, werr)
			}
			if err == nil {
				if into != nil && w.AsStruct() != into {
					t.Fatalf("%x as %v: the struct was not reused", data, typ)
				}
				if wb, _ := Encode(nil, w); !bytes.Equal(wb, data) {
					t.Fatalf("%x as %v: DecodeStructInto re-encodes as %x", data, typ, wb)
				}
			}
		}
		if err != nil {
			return
		}
		again, err := Encode(nil, v)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("%x as %v re-encodes as %x (%v)", data, typ, again, err)
		}
		_ = Format(v)
		j, err := AppendJSON(nil, v)
		if err != nil || !json.Valid(j) {
			t.Fatalf("JSON of %v: %s %v", v, j, err)
		}
		c, err := DeepCopy(v)
		if err != nil {
			t.Fatal(err)
		}
		if cb, _ := Encode(nil, c); !bytes.Equal(cb, data) {
			t.Fatalf("DeepCopy of %v encodes as %x", v, cb)
		}
		if _, err := Equal(v, c); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzDecodeTypes(f *testing.F) {
	for _, roots := range [][]*Type{
		nil,
		{VoidType, IntType, FloatType, BoolType, StringType, BytesType},
		{ListOf(MapOf(BoolType, ListOf(BytesType))), MapOf(IntType, FloatType)},
		{orderT, verdictT, shapeT, emptyT, pointT},
		{nodeT},
		{exprT, pairT},
		{MapOf(StringType, ListOf(nodeT)), exprT, nodeT, VoidType},
	} {
		b, err := EncodeTypes(nil, roots)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, []byte{0x08, 0x00})
	}
	f.Fuzz(func(t *testing.T, data, value []byte) {
		roots, err := DecodeTypes(data)
		if err != nil {
			return
		}
		again, err := EncodeTypes(nil, roots)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("%x re-encodes as %x (%v)", data, again, err)
		}
		for _, r := range roots {
			_ = r.String()
			// decoding with a decoded type is as safe as with any other
			if v, err := Decode(value, r); err == nil {
				if b, err := Encode(nil, v); err != nil || !bytes.Equal(b, value) {
					t.Fatalf("%x as %v re-encodes as %x (%v)", value, r, b, err)
				}
			}
		}
	})
}
