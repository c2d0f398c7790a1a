package value

import (
	"encoding/json"
	"math"
	"testing"
)

func TestAppendJSON(t *testing.T) {
	for _, c := range []struct {
		v    Value
		want string
	}{
		{Int(-3), `-3`},
		{Float(1), `1.0`},
		{Float(-0.5), `-0.5`},
		{Float(1e21), `1e+21`},
		{Float(1e-7), `1e-07`},
		{Float(math.NaN()), `"NaN"`},
		{Float(math.Inf(1)), `"inf"`},
		{Float(math.Inf(-1)), `"-inf"`},
		{Bool(false), `false`},
		{Str(""), `""`},
		{Str("a\"b\\c\n\r\t\b\f\x01\x1f\x7f é😀<>&"), `"a\"b\\c\n\r\t\b\f\u0001\u001f` + "\x7f é😀<>&\""},
		{Str("bad\xff\xfeutf8"), `"bad\ufffd\ufffdutf8"`},
		{BytesOf("\x00\xffA"), `{"bytes":"00ff41"}`},
		{BytesOf(""), `{"bytes":""}`},
		{list(), `[]`},
		{list(Int(1), Str("x"), list()), `[1,"x",[]]`},
		{strMap(), `{}`},
		{strMap("b", Int(1), "a", Int(2)), `{"b":1,"a":2}`},
		{intMap(Int(2), Str("x"), Int(1), Str("y")), `[[2,"x"],[1,"y"]]`},
		{intMap(Bool(true), Float(0.5)), `[[true,0.5]]`},
		{NewMap(KindInt, 0), `[]`},
		{NewStruct(pointT, []Value{Int(1), Int(2)}), `{"x":1,"y":2}`},
		{NewStruct(emptyT, nil), `{}`},
		{NewEnum(verdictT, 0, nil), `{"variant":"Accept","values":[]}`},
		{NewEnum(verdictT, 1, []Value{Str("late")}), `{"variant":"Reject","values":["late"]}`},
		{node("a", node("b")), `{"name":"a","kids":[{"name":"b","kids":[]}]}`},
		{Value{}, `null`},
	} {
		got, err := AppendJSON(nil, c.v)
		if err != nil || string(got) != c.want {
			t.Errorf("AppendJSON(%v) = %s, %v\n                     want %s", c.v, got, err, c.want)
			continue
		}
		if !json.Valid(got) {
			t.Errorf("invalid JSON: %s", got)
		}
	}
}

func TestJSONOf(t *testing.T) {
	v := NewStruct(orderT, []Value{Int(7), Int(-2), Str("hi")})
	b, _ := Encode(nil, v)
	got, err := JSONOf(b, orderT)
	if err != nil || string(got) != `{"id":7,"amount":-2,"note":"hi"}` {
		t.Errorf("JSONOf: %s %v", got, err)
	}
	if _, err := JSONOf(b[:3], orderT); err == nil {
		t.Error("JSONOf of truncated bytes")
	}
}
