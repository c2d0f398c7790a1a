package value

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzJSONParse: parse never panics, accepts only what encoding/json
// accepts, and a parsed value written back and parsed again is the same
// text (parse(encode(parse(x))) is stable).
func FuzzJSONParse(f *testing.F) {
	for _, s := range []string{
		`null`, `[1, -0.5e3, "x\u00e9\ud83d\ude00", true, {"a": {}, "a": []}]`, `{"":""}`, `"\ud800"`,
		`1e400`, `[1,]`, `{"a" 1}`, "\"\xff\"", `[[[[[]]]]]`, ` 0 `, `-`, `"\u00"`, `{"b":1,"a":2,"b":3}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, cost, err := ParseJSON(s, jsonT)
		if err != nil {
			var je *JSONError
			if !errors.As(err, &je) || je.Offset < 0 || je.Offset > len(s) {
				t.Fatalf("error %v", err)
			}
			// What encoding/json accepts is refused only for a number out
			// of range, nesting or invalid UTF-8.
			if json.Valid([]byte(s)) && utf8.ValidString(s) && !strings.Contains(je.Msg, "outside the range") &&
				!strings.Contains(je.Msg, "nested deeper") {
				t.Fatalf("%q refused: %v", s, err)
			}
			return
		}
		if !json.Valid([]byte(s)) {
			t.Fatalf("%q accepted, but it is not JSON", s)
		}
		if cost <= 0 && v.Variant() != JSONNull {
			t.Fatalf("cost %d", cost)
		}
		out, err := AppendJSON(nil, v)
		if err != nil {
			t.Fatalf("AppendJSON: %v", err)
		}
		v2, _, err := ParseJSON(string(out), jsonT)
		if err != nil {
			t.Fatalf("%s (from %q) does not parse: %v", out, s, err)
		}
		out2, _ := AppendJSON(nil, v2)
		if !bytes.Equal(out, out2) {
			t.Fatalf("unstable: %q -> %s -> %s", s, out, out2)
		}
		// decode into Json reads the same value.
		v3, _, err := DecodeJSON(s, jsonT)
		if err != nil {
			t.Fatalf("decode as Json: %v", err)
		}
		if out3, _ := AppendJSON(nil, v3); !bytes.Equal(out, out3) {
			t.Fatalf("decode as Json gives %s, parse %s", out3, out)
		}
	})
}

// gen builds values from fuzz bytes.
type gen struct {
	b     []byte
	depth int
}

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

func (g *gen) n(max int) int { return int(g.byte()) % max }

func (g *gen) int() int64 {
	var u uint64
	for i := 0; i < 8; i++ {
		u = u<<8 | uint64(g.byte())
	}
	return int64(u)
}

func (g *gen) str() string {
	n := g.n(6)
	var b []byte
	for i := 0; i < n; i++ {
		b = append(b, g.byte())
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func (g *gen) float(finite bool) float64 {
	f := math.Float64frombits(uint64(g.int()))
	if finite && (f != f || math.IsInf(f, 0)) {
		return float64(g.n(100)) / 8
	}
	return f
}

// fuzzDecodeT is a struct with a field of every kind decode reads back.
var fuzzDecodeT = func() *Type {
	optStrs := optionOf(ListOf(StringType))
	return &Type{Kind: KindStruct, Name: "All", Fields: []Field{
		{"i", IntType}, {"f", FloatType}, {"b", BoolType}, {"s", StringType}, {"by", BytesType},
		{"l", ListOf(IntType)}, {"m", MapOf(StringType, FloatType)}, {"o", optStrs},
		{"r", resultOf(pointT)}, {"j", jsonT}, {"v", ListOf(verdictT)}, {"oj", optionOf(jsonT)},
		{"ro", resultOf(optIntT)},
	}}
}()

// value makes a value of type t; it knows the types fuzzDecodeT holds.
func (g *gen) value(t *Type) Value {
	switch {
	case t == IntType:
		return Int(g.int())
	case t == FloatType:
		return Float(g.float(false))
	case t == BoolType:
		return Bool(g.byte()&1 == 1)
	case t == StringType:
		return Str(g.str())
	case t == BytesType:
		n := min(g.n(8), len(g.b))
		b := string(g.b[:n])
		g.b = g.b[n:]
		return BytesOf(b)
	case t == jsonT:
		return g.json()
	case t.Kind == KindList:
		n := g.n(4)
		vs := make([]Value, n)
		for i := range vs {
			vs[i] = g.value(t.Elem)
		}
		return NewList(vs)
	case t.Kind == KindMap:
		m := NewMap(KindString, 0)
		for i := g.n(4); i > 0; i-- {
			_ = m.AsMap().Set(Str(g.str()), g.value(t.Elem))
		}
		return m
	case t.Kind == KindStruct:
		vs := make([]Value, len(t.Fields))
		for i, f := range t.Fields {
			vs[i] = g.value(f.Type)
		}
		return NewStruct(t, vs)
	case strings.HasPrefix(t.Name, "Option<"):
		if g.byte()&1 == 0 {
			return none(t)
		}
		x := g.value(t.Variants[0].Fields[0])
		if x.Kind() == KindEnum && IsJSONType(x.EnumType()) && x.Variant() == JSONNull {
			return none(t) // Some(Json::Null) is written null, read back None
		}
		return some(t, x)
	case strings.HasPrefix(t.Name, "Result<"):
		if g.byte()&1 == 0 {
			return errOf(t, g.str(), g.str())
		}
		return ok(t, g.value(t.Variants[0].Fields[0]))
	case t == verdictT:
		if g.byte()&1 == 0 {
			return NewEnum(t, 0, nil)
		}
		return NewEnum(t, 1, []Value{Str(g.str())})
	}
	panic("gen: type " + t.String())
}

func (g *gen) json() Value {
	g.depth++
	defer func() { g.depth-- }()
	k := g.n(6)
	if g.depth > 4 && k >= JSONArr {
		k = JSONNull
	}
	switch k {
	case JSONNull:
		return NewEnum(jsonT, JSONNull, nil)
	case JSONBool:
		return NewEnum(jsonT, JSONBool, []Value{Bool(g.byte()&1 == 1)})
	case JSONNum:
		return NewEnum(jsonT, JSONNum, []Value{Float(g.float(true))})
	case JSONStr:
		return NewEnum(jsonT, JSONStr, []Value{Str(g.str())})
	case JSONArr:
		vs := make([]Value, g.n(4))
		for i := range vs {
			vs[i] = g.json()
		}
		return NewEnum(jsonT, JSONArr, []Value{NewList(vs)})
	}
	m := NewMap(KindString, 0)
	for i := g.n(4); i > 0; i-- {
		_ = m.AsMap().Set(Str(g.str()), g.json())
	}
	return NewEnum(jsonT, JSONObj, []Value{m})
}

// FuzzJSONDecode: decode(encode(v)) == v for values of every type decode
// reads back (not maps with int or bool keys, which encode as arrays of
// pairs; not Some(Json::Null), which encodes as null), compared by their
// canonical encodings so that NaN and -0.0 count exactly.
func FuzzJSONDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08\x7f\xf0\x00\x00\x00\x00\x00\x00\x01\x03abc"))
	f.Add(bytes.Repeat([]byte{0xff, 0x05, 0x03, 0x01}, 40))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{b: data}
		v := g.value(fuzzDecodeT)
		js, err := AppendJSON(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		back, _, err := DecodeJSON(string(js), fuzzDecodeT)
		if err != nil {
			t.Fatalf("decode %s: %v", js, err)
		}
		want, _ := Encode(nil, v)
		got, _ := Encode(nil, back)
		if !bytes.Equal(want, got) {
			t.Fatalf("decode(encode(v)) != v:\n v    %v\n back %v\n json %s", v, back, js)
		}
	})
}
