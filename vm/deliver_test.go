package vm

import (
	"bytes"
	"math"
	"testing"

	"github.com/hale-lang/hale/vm/value"
)

// scalarTestTypes are payload types for the scalar fast paths: the last
// has a string field, which they must leave to the general code.
var scalarTestTypes = []*value.Type{
	{Kind: value.KindStruct, Name: "E"},
	{Kind: value.KindStruct, Name: "I", Fields: []value.Field{{Name: "n", Type: value.IntType}}},
	{Kind: value.KindStruct, Name: "F", Fields: []value.Field{{Name: "x", Type: value.FloatType}}},
	{Kind: value.KindStruct, Name: "B", Fields: []value.Field{{Name: "b", Type: value.BoolType}}},
	{Kind: value.KindStruct, Name: "M", Fields: []value.Field{
		{Name: "a", Type: value.IntType}, {Name: "x", Type: value.FloatType},
		{Name: "b", Type: value.BoolType}, {Name: "c", Type: value.IntType}}},
	{Kind: value.KindStruct, Name: "S", Fields: []value.Field{{Name: "n", Type: value.IntType}, {Name: "s", Type: value.StringType}}},
}

func scalarOnly(t *value.Type) bool {
	for _, f := range t.Fields {
		switch f.Type.Kind {
		case value.KindInt, value.KindFloat, value.KindBool:
		default:
			return false
		}
	}
	return true
}

// FuzzScalarPayload checks Machine.decodeScalarPayload against
// value.DecodeStructInto on any bytes, for every type above: whatever the
// fast decoder accepts the general one accepts with the same fields, and
// for a payload of scalar fields it accepts everything the general one
// does (so it never leaves a canonical payload to the general decoder).
// appendScalarTuple re-encodes what it decoded to the same bytes as
// value.EncodeTuple.
func FuzzScalarPayload(f *testing.F) {
	seeds := [][]value.Value{
		{},
		{value.Int(0)}, {value.Int(-1)}, {value.Int(math.MaxInt64)}, {value.Int(math.MinInt64)}, {value.Int(300)},
		{value.Float(1.5)}, {value.Float(math.NaN())}, {value.Float(math.Inf(-1))}, {value.Float(math.Copysign(0, -1))},
		{value.Bool(true)}, {value.Bool(false)},
		{value.Int(7), value.Float(-2.25), value.Bool(true), value.Int(-1 << 40)},
		{value.Int(1), value.Str("x")},
	}
	for _, s := range seeds {
		b, err := value.EncodeTuple([]byte{byte(value.KindStruct)}, s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(append(b, 0))
		f.Add(b[:len(b)-1])
	}
	f.Add([]byte{byte(value.KindStruct), 1, byte(value.KindInt), 0x80, 0x00})                                                 // not minimal
	f.Add([]byte{byte(value.KindStruct), 1, byte(value.KindInt), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}) // overflow
	f.Add([]byte{byte(value.KindStruct), 1, byte(value.KindFloat), 1, 0, 0, 0, 0, 0, 0xf8, 0x7f})                             // NaN, not canonical
	f.Add([]byte{byte(value.KindStruct), 1, byte(value.KindBool), 2})                                                         // bad bool
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range scalarTestTypes {
			into := value.NewStruct(typ, nil).AsStruct()
			want, err := value.DecodeStructInto(data, typ, into)
			kinds, scalar := scalarKinds(typ)
			if scalar != scalarOnly(typ) {
				t.Fatalf("%s: scalarKinds says %v", typ.Name, scalar)
			}
			ok := false
			var fields []value.Value
			if scalar {
				reused := value.NewStruct(typ, nil)
				s := reused.AsStruct()
				m := &Machine{stack: make([]value.Value, 1), payloads: []*value.Struct{s},
					scalarPays: []scalarPayload{{s: s, scalar: true, v: reused, size: value.ShallowSize(reused), kinds: kinds}}}
				ok = m.decodeScalarPayload(0, data)
				fields = s.Fields()
				if ok && (m.stack[0].Kind() != value.KindStruct || m.stack[0].AsStruct() != s) {
					t.Fatalf("%s: register 0 does not hold the reused struct", typ.Name)
				}
				if want := int64(len(data)) + value.ShallowSize(reused); ok && m.mem.charged != want {
					t.Fatalf("%s: charged %d, want %d", typ.Name, m.mem.charged, want)
				}
			}
			if ok && err != nil {
				t.Fatalf("%s: fast decoder accepts %x, the general one fails: %v", typ.Name, data, err)
			}
			if !ok && err == nil && scalarOnly(typ) {
				t.Fatalf("%s: fast decoder refuses %x, which the general one accepts", typ.Name, data)
			}
			if !ok {
				continue
			}
			got := value.NewStruct(typ, fields)
			a, err1 := value.Encode(nil, want)
			b, err2 := value.Encode(nil, got)
			if err1 != nil || err2 != nil || !bytes.Equal(a, b) || !bytes.Equal(a, data) {
				t.Fatalf("%s: %x decodes to %x (general) and %x (fast)", typ.Name, data, a, b)
			}
			for i := range fields {
				if fields[i].Kind() != typ.Fields[i].Type.Kind {
					t.Fatalf("%s: field %d of kind %v", typ.Name, i, fields[i].Kind())
				}
			}
			m := &Machine{buf: []byte{byte(value.KindStruct)}}
			if ok := m.appendScalarTuple(fields); !ok || !bytes.Equal(m.buf, data) {
				t.Fatalf("%s: appendScalarTuple gives %x for %x (ok %v)", typ.Name, m.buf, data, ok)
			}
		}
	})
}

// TestAppendScalarTuple compares appendScalarTuple with value.EncodeTuple
// on scalars, NaNs with any payload, and values it must refuse (leaving
// the buffer as it was).
func TestAppendScalarTuple(t *testing.T) {
	nan := value.Float(math.Float64frombits(0x7ff0_0000_0000_0001))
	for _, vs := range [][]value.Value{
		{}, {value.Int(0)}, {value.Int(-64)}, {value.Int(64)}, {value.Int(math.MinInt64)}, {value.Int(math.MaxInt64)},
		{value.Float(0.1)}, {nan}, {value.Float(math.NaN())}, {value.Float(math.Inf(1))},
		{value.Bool(false), value.Bool(true), value.Int(1 << 62), value.Float(-1e300)},
	} {
		want, err := value.EncodeTuple([]byte{9}, vs)
		m := &Machine{buf: []byte{9}}
		ok := m.appendScalarTuple(vs)
		if err != nil || !ok || !bytes.Equal(m.buf, want) {
			t.Errorf("%v: %x %v, want %x %v", vs, m.buf, ok, want, err)
		}
	}
	many := make([]value.Value, 200)
	for i := range many {
		many[i] = value.Int(int64(i))
	}
	for _, vs := range [][]value.Value{{value.Str("s")}, {value.Int(1), value.Str("")}, {{}}, many} {
		m := &Machine{buf: make([]byte, 1, 2)}
		m.buf[0] = 9
		if ok := m.appendScalarTuple(vs); ok || !bytes.Equal(m.buf, []byte{9}) {
			t.Errorf("%v: %x %v, want a refusal", vs, m.buf, ok)
		}
	}
}
