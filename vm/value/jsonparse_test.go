package value

import (
	"encoding/json"
	"strings"
	"testing"
)

// jsonT is the built-in enum Json as the type table gives it.
var jsonT = func() *Type {
	t := &Type{Kind: KindEnum, Name: "Json"}
	t.Variants = []Variant{
		{Name: "Null"},
		{Name: "Bool", Fields: []*Type{BoolType}},
		{Name: "Num", Fields: []*Type{FloatType}},
		{Name: "Str", Fields: []*Type{StringType}},
		{Name: "Arr", Fields: []*Type{ListOf(t)}},
		{Name: "Obj", Fields: []*Type{MapOf(StringType, t)}},
	}
	return t
}()

func TestIsJSONType(t *testing.T) {
	if !IsJSONType(jsonT) {
		t.Error("Json is not Json")
	}
	std := *jsonT
	std.Name = "std::Json"
	std.Variants = append([]Variant(nil), jsonT.Variants...)
	std.Variants[4] = Variant{Name: "Arr", Fields: []*Type{ListOf(&std)}}
	std.Variants[5] = Variant{Name: "Obj", Fields: []*Type{MapOf(StringType, &std)}}
	if !IsJSONType(&std) {
		t.Error("std::Json is not Json")
	}
	other := *jsonT
	other.Name = "Jason"
	if IsJSONType(&other) || IsJSONType(verdictT) || IsJSONType(IntType) || IsJSONType(nil) {
		t.Error("another type taken for Json")
	}
	// A user's Json of another shape is an ordinary enum.
	mine := &Type{Kind: KindEnum, Name: "Json", Variants: []Variant{{Name: "Null"}}}
	if IsJSONType(mine) {
		t.Error("a one-variant Json taken for the built-in")
	}
}

// TestParseJSON checks the values parse builds through their JSON view,
// which writes them back as compact JSON.
func TestParseJSON(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`null`, `null`},
		{` true `, `true`},
		{"\t\r\nfalse\n", `false`},
		{`0`, `0.0`},
		{`-0`, `-0.0`},
		{`12.5e3`, `12500.0`},
		{`1E-2`, `0.01`},
		{`1e-400`, `0.0`}, // underflow rounds to zero: it is inside binary64's range
		{`1.7976931348623157e308`, `1.7976931348623157e+308`},
		{`"a\"\\\/\b\f\n\r\t\u00e9\u20AC"`, `"a\"\\/\b\f\n\r\té€"`},
		{`"\ud83d\ude00"`, `"😀"`},
		{`"\ud83d x"`, "\"\ufffd x\""}, // a lone surrogate half is U+FFFD
		{`"\ude00"`, "\"\ufffd\""},
		{`"é😀"`, `"é😀"`},
		{`[]`, `[]`},
		{`[1, [2, []], {}]`, `[1.0,[2.0,[]],{}]`},
		{`{"b": 1, "a": {"c": null}}`, `{"b":1.0,"a":{"c":null}}`},
		{`{"a": 1, "b": 2, "a": 3}`, `{"a":3.0,"b":2.0}`}, // first place, last value
		{`{"": ""}`, `{"":""}`},
		{strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth), strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth)},
	} {
		v, _, err := ParseJSON(c.in, jsonT)
		if err != nil {
			t.Errorf("ParseJSON(%q): %v", c.in, err)
			continue
		}
		got, err := AppendJSON(nil, v)
		if err != nil || string(got) != c.want {
			t.Errorf("ParseJSON(%q) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
}

func TestParseJSONErrors(t *testing.T) {
	deep := strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1)
	for _, c := range []struct{ in, want string }{
		{``, `invalid JSON at byte 0: unexpected end of text`},
		{`   `, `invalid JSON at byte 3: unexpected end of text`},
		{`nul`, `invalid JSON at byte 3: unexpected end of text`},
		{`nulL`, `invalid JSON at byte 3: unexpected "L"`},
		{`True`, `invalid JSON at byte 0: unexpected "T"`},
		{`1 2`, `invalid JSON at byte 2: unexpected "2"`},
		{`01`, `invalid JSON at byte 1: unexpected "1"`},
		{`+1`, `invalid JSON at byte 0: unexpected "+"`},
		{`-`, `invalid JSON at byte 1: unexpected end of text, expected a digit`},
		{`.5`, `invalid JSON at byte 0: unexpected "."`},
		{`1.`, `invalid JSON at byte 2: unexpected end of text, expected a digit`},
		{`1e+`, `invalid JSON at byte 3: unexpected end of text, expected a digit`},
		{`[1e400]`, `invalid JSON at byte 1: number 1e400 is outside the range of a float`},
		{`-1e309`, `invalid JSON at byte 0: number -1e309 is outside the range of a float`},
		{`NaN`, `invalid JSON at byte 0: unexpected "N"`},
		{`[1,]`, `invalid JSON at byte 3: unexpected "]"`},
		{`[1 2]`, `invalid JSON at byte 3: unexpected "2", expected "," or "]"`},
		{`{"a" 1}`, `invalid JSON at byte 5: unexpected "1", expected ":"`},
		{`{"a":1,}`, `invalid JSON at byte 7: unexpected "}", expected a string key`},
		{`{a:1}`, `invalid JSON at byte 1: unexpected "a", expected a string key`},
		{`{"a":1`, `invalid JSON at byte 6: unexpected end of text, expected "," or "}"`},
		{`"abc`, `invalid JSON at byte 4: unexpected end of text in a string`},
		{"\"a\tb\"", `invalid JSON at byte 2: control character 0x09 in a string`},
		{"\"\\x\"", `invalid JSON at byte 1: invalid escape \x`},
		{`"\u12"`, `invalid JSON at byte 1: invalid \u escape`},
		{"\"\xff\"", `invalid JSON at byte 1: invalid UTF-8 in a string`},
		{"\"\\n\xff\"", `invalid JSON at byte 3: invalid UTF-8 in a string`},
		{"\xef\xbb\xbf1", `invalid JSON at byte 0: unexpected byte 0xef`}, // no byte order mark
		{"[\x00]", `invalid JSON at byte 1: unexpected byte 0x00`},
		{`'a'`, `invalid JSON at byte 0: unexpected "'"`},
		{deep, `invalid JSON at byte 256: nested deeper than 256`},
	} {
		_, _, err := ParseJSON(c.in, jsonT)
		if err == nil || err.Error() != c.want {
			t.Errorf("ParseJSON(%q) = %v\n                  want %s", c.in, err, c.want)
		}
		if json.Valid([]byte(c.in)) && c.in != deep && !strings.Contains(c.want, "outside") && !strings.Contains(c.want, "UTF-8") {
			t.Errorf("%q is valid JSON to encoding/json", c.in)
		}
	}
}

// A repeated key keeps its first place: get finds the last value and the
// keys are in order of first appearance.
func TestParseJSONRepeatedKeys(t *testing.T) {
	v, _, err := ParseJSON(`{"x":1,"y":2,"x":{"z":[]},"w":3,"y":4}`, jsonT)
	if err != nil {
		t.Fatal(err)
	}
	m := v.Payload()[0].AsMap()
	var keys []string
	for i := 0; i < m.Len(); i++ {
		keys = append(keys, m.KeyAt(i).AsStr())
	}
	if strings.Join(keys, ",") != "x,y,w" {
		t.Errorf("keys %v", keys)
	}
	if x, _ := m.Get(Str("x")); x.Variant() != JSONObj {
		t.Errorf("x = %v", x)
	}
}

// The cost parse reports grows with the value, so a large text reaches the
// memory limit's measure.
func TestParseJSONCost(t *testing.T) {
	_, small, _ := ParseJSON(`[1]`, jsonT)
	_, big, _ := ParseJSON("["+strings.Repeat(`"abcdefgh",`, 1000)+"1]", jsonT)
	if small <= 0 || big < 1000*(8+SizeSlot) {
		t.Errorf("costs %d, %d", small, big)
	}
}
