package value

import (
	"strings"
	"testing"
)

func TestExactInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		msg  string
	}{
		{"0", 0, ""}, {"-0", 0, ""}, {"0.000e9", 0, ""}, {"12", 12, ""}, {"-12", -12, ""},
		{"1.0", 1, ""}, {"1.50e1", 15, ""}, {"1500e-2", 15, ""}, {"1E2", 100, ""},
		{"9223372036854775807", 1<<63 - 1, ""}, {"-9223372036854775808", -1 << 63, ""},
		{"9.223372036854775807e18", 1<<63 - 1, ""},
		{"9223372036854775808", 0, "is out of range for an int"},
		{"1e19", 0, "is out of range for an int"},
		{"1e99999999999999999999", 0, "is out of range for an int"},
		{"1e-99999999999999999999", 0, "is not an int"},
		{"0.5", 0, "is not an int"}, {"1e-1", 0, "is not an int"}, {"10.01", 0, "is not an int"},
		// Read from the text, not through a float: 2^53 + 1 is exact.
		{"9007199254740993", 9007199254740993, ""},
	} {
		got, msg := exactInt(c.in)
		if got != c.want || msg != c.msg {
			t.Errorf("exactInt(%s) = %d, %q; want %d, %q", c.in, got, msg, c.want, c.msg)
		}
	}
}

func TestJSONPathNames(t *testing.T) {
	p := &jpath{key: "choices", index: -1}
	p = &jpath{up: p, index: 0}
	p = &jpath{up: p, key: "a b", index: -1}
	p = &jpath{up: p, key: "_x1", index: -1}
	p = &jpath{up: p, key: "1x", index: -1}
	p = &jpath{up: p, key: "", index: -1}
	if got, want := p.String(), `$.choices[0]["a b"]._x1["1x"][""]`; got != want {
		t.Errorf("path %s, want %s", got, want)
	}
	var root *jpath
	if root.String() != "$" {
		t.Errorf("root path %s", root.String())
	}
}

// TestDecodeJSONRoundTrip decodes the JSON view of values back to equal
// values, and reports the first value at fault by its path.
func TestDecodeJSONRoundTrip(t *testing.T) {
	for _, c := range []struct {
		v   Value
		typ *Type
	}{
		{NewStruct(pointT, []Value{Int(1), Int(-2)}), pointT},
		{list(some(optIntT, Int(1)), none(optIntT)), ListOf(optIntT)},
		{errOf(resOptStrT, "io", "x"), resOptStrT},
		{ok(resOptStrT, some(optStringT, Str("\x01é"))), resOptStrT},
		{NewEnum(verdictT, 1, []Value{Str("late")}), verdictT},
		{BytesOf("\x00\xff"), BytesType},
		{strMap("b", Float(0.5), "a", Float(-1)), MapOf(StringType, FloatType)},
		{node("a", node("b"), node("c")), nodeT},
	} {
		js, err := AppendJSON(nil, c.v)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := DecodeJSON(string(js), c.typ)
		if err != nil {
			t.Errorf("DecodeJSON(%s): %v", js, err)
			continue
		}
		if eq, _ := Equal(got, c.v); !eq {
			t.Errorf("DecodeJSON(%s) = %v, %v; want %v", js, got, err, c.v)
		}
	}
	_, _, err := DecodeJSON(`{"name":"a","kids":[{"name":"b","kids":[]},{"name":2}]}`, nodeT)
	if err == nil || err.Error() != `decode: $.kids[1].name: want a string, got a number` {
		t.Errorf("error %v", err)
	}
	_, _, err = DecodeJSON(strings.Repeat("[", MaxJSONDepth+1), ListOf(IntType))
	if err == nil || !strings.Contains(err.Error(), "nested deeper than 256") {
		t.Errorf("error %v", err)
	}
}
