package value

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// sample is a value with its type, for round trips and fuzz seeds.
type sample struct {
	t *Type
	v Value
}

func samples() []sample {
	bigMap := NewMap(KindInt, 0)
	bigList := make([]Value, 300)
	for i := range 300 {
		must(bigMap.AsMap().Set(Int(int64(i*7-500)), Str(strconv.Itoa(i))))
		bigList[i] = Int(int64(i) << 40)
	}
	for i := 0; i < 300; i += 3 {
		must(bigMap.AsMap().Delete(Int(int64(i*7 - 500))))
	}
	must(bigMap.AsMap().Set(Int(-500), Str("again"))) // re-added: goes last
	expr := NewEnum(exprT, 1, []Value{NewStruct(pairT, []Value{
		NewEnum(exprT, 0, []Value{Int(1)}),
		NewEnum(exprT, 2, []Value{func() Value {
			m := NewMap(KindString, 0)
			must(m.AsMap().Set(Str("x"), NewEnum(exprT, 3, nil)))
			return m
		}()}),
	})})
	return []sample{
		{VoidType, Value{}},
		{IntType, Int(0)},
		{IntType, Int(-1)},
		{IntType, Int(63)},
		{IntType, Int(64)},
		{IntType, Int(math.MaxInt64)},
		{IntType, Int(math.MinInt64)},
		{FloatType, Float(0)},
		{FloatType, Float(math.Copysign(0, -1))},
		{FloatType, Float(1.5)},
		{FloatType, Float(math.Inf(-1))},
		{FloatType, Float(math.NaN())},
		{BoolType, Bool(true)},
		{BoolType, Bool(false)},
		{StringType, Str("")},
		{StringType, Str("héllo\x00")},
		{StringType, Str(strings.Repeat("x", 200))},
		{BytesType, BytesOf("\x00\xff")},
		{ListOf(IntType), list()},
		{ListOf(IntType), NewList(bigList)},
		{ListOf(ListOf(StringType)), list(list(Str("a")), list())},
		{strIntT, strMap("b", Int(1), "a", Int(2))},
		{intStrT, bigMap},
		{boolFT, intMap(Bool(true), Float(1), Bool(false), Float(2))},
		{pointT, NewStruct(pointT, []Value{Int(1), Int(-2)})},
		{emptyT, NewStruct(emptyT, nil)},
		{orderT, NewStruct(orderT, []Value{Int(7), Int(-2), Str("hi")})},
		{verdictT, NewEnum(verdictT, 0, nil)},
		{verdictT, NewEnum(verdictT, 1, []Value{Str("late")})},
		{shapeT, NewEnum(shapeT, 2, []Value{Str("t"), BytesOf("b"), Bool(true)})},
		{ListOf(shapeT), list(NewEnum(shapeT, 0, nil), NewEnum(shapeT, 1, []Value{Float(1), Float(2)}))},
		{nodeT, node("root", node("a", node("a1")), node("b"))},
		{exprT, expr},
		{MapOf(StringType, ListOf(nodeT)), strMap("x", list(node("n")))},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, s := range samples() {
		b, err := Encode(nil, s.v)
		if err != nil {
			t.Fatalf("Encode(%v): %v", s.v, err)
		}
		v, err := Decode(b, s.t)
		if err != nil {
			t.Fatalf("Decode(%x) as %v: %v", b, s.t, err)
		}
		again, err := Encode(nil, v)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%v: re-encoded %x, want %x (%v)", s.v, again, b, err)
		}
		if Format(v) != Format(s.v) {
			t.Errorf("decoded %v, want %v", v, s.v)
		}
		if eq, _ := Equal(v, s.v); !eq && !strings.Contains(Format(v), "NaN") {
			t.Errorf("decoded %v is not equal to %v", v, s.v)
		}
		c, err := DeepCopy(s.v)
		if err != nil {
			t.Fatal(err)
		}
		if cb, _ := Encode(nil, c); !bytes.Equal(cb, b) {
			t.Errorf("DeepCopy of %v encodes differently", s.v)
		}
		if _, err := Decode(b, IntType); s.t.Kind != KindInt && err == nil {
			t.Errorf("%x decodes as an int", b)
		}
		// every strict prefix is rejected
		for i := range b {
			if _, err := Decode(b[:i], s.t); err == nil {
				t.Fatalf("prefix %x of %x accepted", b[:i], b)
			}
		}
	}
}

func TestEncodeGolden(t *testing.T) {
	for _, c := range []struct {
		v    Value
		want string
	}{
		{Value{}, "00"},
		{Int(0), "0100"},
		{Int(-1), "0101"},
		{Int(1), "0102"},
		{Int(-65), "018101"},
		{Int(math.MaxInt64), "01feffffffffffffffff01"},
		{Int(math.MinInt64), "01ffffffffffffffffff01"},
		{Float(1), "02000000000000f03f"},
		{Float(math.Copysign(0, -1)), "020000000000000080"},
		{Float(math.NaN()), "02000000000000f87f"},                               // Go's NaN is ...0001
		{Float(math.Float64frombits(0xfff0000000000001)), "02000000000000f87f"}, // any NaN
		{Bool(false), "0300"},
		{Bool(true), "0301"},
		{Str("hi"), "04026869"},
		{BytesOf("\x00"), "050100"},
		{list(Int(1), Int(2)), "0602" + "0102" + "0104"},
		{strMap("b", Bool(true), "a", Bool(false)), "0702" + "040162" + "0301" + "040161" + "0300"},
		{NewStruct(orderT, []Value{Int(7), Int(-2), Str("hi")}), "0803" + "010e" + "0103" + "04026869"},
		{NewStruct(emptyT, nil), "0800"},
		{NewEnum(verdictT, 0, nil), "090000"},
		{NewEnum(verdictT, 1, []Value{Str("late")}), "0901" + "01" + "04046c617465"},
	} {
		b, err := Encode(nil, c.v)
		if err != nil || hex.EncodeToString(b) != c.want {
			t.Errorf("Encode(%v) = %x, %v; want %s", c.v, b, err, c.want)
		}
	}
}

func TestTuple(t *testing.T) {
	b, err := EncodeTuple(nil, []Value{Str("PATH"), Str("default")})
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(b); got != "02"+"040450415448"+"040764656661756c74" {
		t.Errorf("EncodeTuple = %s", got)
	}
	vs, err := DecodeTuple(b, []*Type{StringType, StringType})
	if err != nil || len(vs) != 2 || vs[0].AsStr() != "PATH" || vs[1].AsStr() != "default" {
		t.Errorf("DecodeTuple: %v %v", vs, err)
	}
	for _, bad := range []struct {
		data  []byte
		types []*Type
	}{
		{b, []*Type{StringType}},
		{b, []*Type{StringType, IntType}},
		{append(b, 0), []*Type{StringType, StringType}},
		{b[:len(b)-1], []*Type{StringType, StringType}},
		{nil, nil},
	} {
		if _, err := DecodeTuple(bad.data, bad.types); err == nil {
			t.Errorf("DecodeTuple(%x) accepted", bad.data)
		}
	}
	if b, _ := EncodeTuple(nil, nil); !bytes.Equal(b, []byte{0}) {
		t.Errorf("empty tuple: %x", b)
	}
	if vs, err := DecodeTuple([]byte{0}, nil); err != nil || len(vs) != 0 {
		t.Errorf("empty tuple: %v", err)
	}
	if _, err := EncodeTuple(nil, []Value{cyclic()}); err != ErrCyclic {
		t.Errorf("cyclic tuple: %v", err)
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, c := range []struct {
		hex  string
		t    *Type
		want string
	}{
		{"", IntType, "truncated"},
		{"02", IntType, "tag"},
		{"0180", IntType, "truncated"},
		{"018000", IntType, "non-canonical varint"},
		{"01ffffffffffffffffff02", IntType, "overflow"},
		{"01ffffffffffffffffffff01", IntType, "overflow"},
		{"010000", IntType, "trailing"},
		{"02010000000000f87f", FloatType, "non-canonical NaN"},
		{"02000000000000f8ff", FloatType, "non-canonical NaN"},
		{"02000000000000f0", FloatType, "truncated"},
		{"0302", BoolType, "bool byte"},
		{"03", BoolType, "truncated"},
		{"040361", StringType, "exceeds"},
		{"0480006161", StringType, "non-canonical varint"},
		{"0403616161", BytesType, "tag"},
		{"0602010201", ListOf(IntType), "exceeds"},
		{"06ffffffff0f", ListOf(IntType), "exceeds"},
		{"0702040161010204016101 04", strIntT, "duplicate map key"},
		{"0701010201", MapOf(IntType, IntType), "exceeds"},
		{"080101020102", pointT, "fields, want 2"},
		{"080201020180", pointT, "truncated"},
		{"090200", verdictT, "variant 2 out of range"},
		{"090100", verdictT, "0 values, want 1"},
		{"09000104016c", verdictT, "1 values, want 0"},
		{"0900", verdictT, "truncated"},
		{"0600", ListOf(VoidType), "bad list element type"},
		{"0700", MapOf(FloatType, IntType), "bad map type"},
		{"0800", nil, "no type"},
		{"0801 0000", &Type{Kind: KindStruct, Name: "V", Fields: []Field{{"v", VoidType}}}, "bad type of field"},
		{"00", &Type{Kind: numKinds}, "tag"},
	} {
		data, err := hex.DecodeString(strings.ReplaceAll(c.hex, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Decode(data, c.t)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Decode(%s) as %v: %v, want %q", c.hex, c.t, err, c.want)
		}
	}
}

func TestDecodeErrorOffset(t *testing.T) {
	_, err := Decode([]byte{0x06, 0x02, 0x01, 0x00, 0x03, 0x00}, ListOf(IntType))
	de, ok := err.(*DecodeError)
	if !ok || de.Offset != 4 || !strings.Contains(de.Error(), "byte 4") {
		t.Errorf("error %v", err)
	}
}

func TestDecodeSharesNothingWithInput(t *testing.T) {
	data, _ := Encode(nil, list(Str("abc")))
	v, err := Decode(data, ListOf(StringType))
	if err != nil {
		t.Fatal(err)
	}
	clear(data)
	if got := v.AsList().At(0).AsStr(); got != "abc" {
		t.Errorf("decoded string changed with its input: %q", got)
	}
}

func TestTypeTableGolden(t *testing.T) {
	b, err := EncodeTypes(nil, []*Type{nodeT})
	if err != nil {
		t.Fatal(err)
	}
	want := "01" + "08044e6f6465" + "02" + "046e616d65" + "04" + "046b696473" + "060800" + "01" + "0800"
	if got := hex.EncodeToString(b); got != want {
		t.Errorf("EncodeTypes(Node) = %s\n                  want %s", got, want)
	}
	roots, err := DecodeTypes(b)
	if err != nil {
		t.Fatal(err)
	}
	n := roots[0]
	if n.Kind != KindStruct || n.Name != "Node" || n.Fields[1].Type.Elem != n {
		t.Errorf("decoded Node is not recursive: %+v", n)
	}
}

func TestTypeTableRoundTrip(t *testing.T) {
	tables := [][]*Type{
		nil,
		{VoidType},
		{IntType, FloatType, BoolType, StringType, BytesType, VoidType},
		{ListOf(MapOf(BoolType, ListOf(BytesType)))},
		{pointT, pointT, ListOf(pointT)},
		{orderT, verdictT, shapeT, emptyT},
		{nodeT},
		{exprT},
		{pairT, ListOf(exprT)},
		{MapOf(StringType, ListOf(nodeT)), exprT, nodeT, VoidType},
	}
	for _, roots := range tables {
		b, err := EncodeTypes(nil, roots)
		if err != nil {
			t.Fatalf("EncodeTypes(%v): %v", roots, err)
		}
		got, err := DecodeTypes(b)
		if err != nil {
			t.Fatalf("DecodeTypes(%x): %v", b, err)
		}
		if len(got) != len(roots) {
			t.Fatalf("%d roots, want %d", len(got), len(roots))
		}
		for i := range roots {
			if got[i].String() != roots[i].String() {
				t.Errorf("root %d: %v, want %v", i, got[i], roots[i])
			}
		}
		// values decode with the decoded types as with the originals
		for _, s := range samples() {
			for i, r := range roots {
				if r != s.t {
					continue
				}
				b, _ := Encode(nil, s.v)
				v, err := Decode(b, got[i])
				if err != nil || Format(v) != Format(s.v) {
					t.Errorf("%v with decoded type: %v %v", s.v, v, err)
				}
			}
		}
		for i := range b {
			if _, err := DecodeTypes(b[:i]); err == nil {
				t.Fatalf("prefix %x of %x accepted", b[:i], b)
			}
		}
	}
}

func TestDecodeTypesRejects(t *testing.T) {
	for _, c := range []struct{ hex, want string }{
		{"", "truncated"},
		{"000000", "trailing"},
		{"00 01 0a", "type tag 10"},
		{"00 01 0800", "undefined type"},
		{"00 01 06 00", "void inside a type"},
		{"00 01 07 02 01", "map key"},
		{"01 0900 00 01 0800", "reference to enum type 0 as struct"},
		{"01 0100 00 01 01", "definition of kind int"},
		// Point defined but unreachable
		{"01 0800 00 01 01", "not the canonical type table"},
		// two definitions reached in the wrong order
		{"02 0801 42 00 0801 41 01 01 62 0800 01 0801", "not the canonical type table"},
		{"02 0801 41 01 01 62 0800 0801 42 00 01 0801", "not the canonical type table"},
		{"00 8000", "non-canonical varint"},
	} {
		data, err := hex.DecodeString(strings.ReplaceAll(c.hex, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeTypes(data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeTypes(%s): %v, want %q", c.hex, err, c.want)
		}
	}
	// a correct two-definition table, to show the one above differs only in order
	a := &Type{Kind: KindStruct, Name: "A"}
	bT := &Type{Kind: KindStruct, Name: "B"}
	a.Fields = []Field{{"b", bT}}
	good, _ := EncodeTypes(nil, []*Type{a})
	if got := hex.EncodeToString(good); got != "02"+"080141"+"01"+"0162"+"0801"+"080142"+"00"+"01"+"0800" {
		t.Errorf("A,B table: %s", got)
	}
}

func TestEncodeTypesRejects(t *testing.T) {
	loop := &Type{Kind: KindList}
	loop.Elem = loop
	for _, roots := range [][]*Type{
		{nil},
		{ListOf(nil)},
		{ListOf(VoidType)},
		{MapOf(FloatType, IntType)},
		{MapOf(nil, IntType)},
		{&Type{Kind: numKinds}},
		{&Type{Kind: KindStruct, Name: "S", Fields: []Field{{"v", VoidType}}}},
		{&Type{Kind: KindEnum, Name: "E", Fields: []Field{{"v", IntType}}}},
		{&Type{Kind: KindStruct, Name: "S", Variants: []Variant{{Name: "v"}}}},
		{&Type{Kind: KindEnum, Name: "E", Variants: []Variant{{Name: "v", Fields: []*Type{nil}}}}},
		{loop},
	} {
		if _, err := EncodeTypes(nil, roots); err == nil {
			t.Errorf("EncodeTypes(%v) accepted", roots)
		} else if _, ok := err.(*TypeError); !ok || err.Error() == "" {
			t.Errorf("error %T %v", err, err)
		}
	}
}

func TestUvarintMatchesEncodingBinary(t *testing.T) {
	for _, x := range []uint64{0, 1, 127, 128, 255, 300, 1<<14 - 1, 1 << 14, 1<<63 - 1, 1 << 63, math.MaxUint64} {
		b := appendUvarint(nil, x)
		if want := binary.AppendUvarint(nil, x); !bytes.Equal(b, want) {
			t.Errorf("appendUvarint(%d) = %x, want %x", x, b, want)
		}
		d := decoder{data: b}
		if got, err := d.uvarint(); err != nil || got != x || d.off != len(b) {
			t.Errorf("uvarint(%x) = %d, %v", b, got, err)
		}
		if got := uint64At(appendUint64(nil, x)); got != x {
			t.Errorf("uint64 round trip of %d: %d", x, got)
		}
		if got := binary.LittleEndian.AppendUint64(nil, x); !bytes.Equal(got, appendUint64(nil, x)) {
			t.Errorf("appendUint64(%d) is not little-endian", x)
		}
	}
}

// TestDecodeStructInto checks that decoding into a struct reuses it, keeps
// a string field that repeats the struct's (no allocation at all), and
// decodes a changed one afresh without touching the string it replaces.
func TestDecodeStructInto(t *testing.T) {
	enc := func(id int64, note string) []byte {
		b, err := Encode(nil, NewStruct(orderT, []Value{Int(id), Int(7), Str(note)}))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first, err := DecodeStructInto(enc(1, "coffee"), orderT, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := first.AsStruct()
	kept := s.Field(2).AsStr()
	second := enc(2, "coffee")
	if n := testing.AllocsPerRun(100, func() {
		if _, err := DecodeStructInto(second, orderT, s); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("decoding into the struct with a repeated string allocates %v times, want 0", n)
	}
	v, _ := DecodeStructInto(second, orderT, s)
	if v.AsStruct() != s || v.AsStruct().Field(0).AsInt() != 2 || unsafe.StringData(v.AsStruct().Field(2).AsStr()) != unsafe.StringData(kept) {
		t.Fatalf("got %v, want the same struct holding 2 and the same string", v)
	}
	v, err = DecodeStructInto(enc(3, "tea"), orderT, s)
	if err != nil || v.AsStruct().Field(2).AsStr() != "tea" || kept != "coffee" {
		t.Fatalf("got %v (%v), kept %q; want tea, coffee", v, err, kept)
	}
	// A bad encoding of the repeated string is still refused.
	bad := enc(4, "tea")
	bad[len(bad)-4]++ // the string's length
	if _, err := DecodeStructInto(bad, orderT, s); err == nil {
		t.Fatal("a damaged string decoded")
	}
}
