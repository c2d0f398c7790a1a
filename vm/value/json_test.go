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

// Option and Result types as the checker builds them.
var (
	errorT       = &Type{Kind: KindStruct, Name: "Error", Fields: []Field{{"kind", StringType}, {"message", StringType}}}
	optIntT      = optionOf(IntType)
	optIntListT  = optionOf(ListOf(IntType))
	optStringT   = optionOf(StringType)
	optOptIntT   = optionOf(optIntT)
	resOptStrT   = resultOf(optStringT)
	resPointT    = resultOf(pointT)
	resIntListsT = resultOf(ListOf(optIntT))
)

func optionOf(t *Type) *Type {
	return &Type{Kind: KindEnum, Name: "Option<" + t.String() + ">", Variants: []Variant{{Name: "Some", Fields: []*Type{t}}, {Name: "None"}}}
}

func resultOf(t *Type) *Type {
	return &Type{Kind: KindEnum, Name: "Result<" + t.String() + ">", Variants: []Variant{{Name: "Ok", Fields: []*Type{t}}, {Name: "Err", Fields: []*Type{errorT}}}}
}

func some(t *Type, v Value) Value { return NewEnum(t, 0, []Value{v}) }
func none(t *Type) Value          { return NewEnum(t, 1, nil) }
func ok(t *Type, v Value) Value   { return NewEnum(t, 0, []Value{v}) }
func errOf(t *Type, kind, msg string) Value {
	return NewEnum(t, 1, []Value{NewStruct(errorT, []Value{Str(kind), Str(msg)})})
}

func TestAppendJSONOptionResult(t *testing.T) {
	for _, c := range []struct {
		name string
		v    Value
		want string
		typ  *Type // when set, JSONOf of v's encoding must give want too
	}{
		{"Some int", some(optIntT, Int(3)), `3`, optIntT},
		{"None", none(optIntT), `null`, optIntT},
		{"Option<[int]> Some", some(optIntListT, list(Int(1), Int(2))), `[1,2]`, optIntListT},
		{"Option<[int]> Some empty", some(optIntListT, list()), `[]`, nil},
		{"Option<[int]> None", none(optIntListT), `null`, optIntListT},
		{"list of options", list(some(optIntT, Int(1)), none(optIntT)), `[1,null]`, nil},
		{"Some(None) is null", some(optOptIntT, none(optIntT)), `null`, optOptIntT},
		{"Some(Some(1))", some(optOptIntT, some(optIntT, Int(1))), `1`, nil},
		{"Ok(Some)", ok(resOptStrT, some(optStringT, Str("x\n"))), `{"ok":"x\n"}`, resOptStrT},
		{"Ok(None)", ok(resOptStrT, none(optStringT)), `{"ok":null}`, resOptStrT},
		{"Err", errOf(resOptStrT, "io", "no \"file\""), `{"err":{"kind":"io","message":"no \"file\""}}`, resOptStrT},
		{"Ok(struct)", ok(resPointT, NewStruct(pointT, []Value{Int(1), Int(2)})), `{"ok":{"x":1,"y":2}}`, nil},
		{"Ok([Option<int>])", ok(resIntListsT, list(none(optIntT), some(optIntT, Int(-4)))), `{"ok":[null,-4]}`, resIntListsT},
		{"map of options", strMap("a", some(optIntT, Int(1)), "b", none(optIntT)), `{"a":1,"b":null}`, MapOf(StringType, optIntT)},
		{"map of results", intMap(Int(2), errOf(resPointT, "arith", "overflow"), Int(1), ok(resPointT, NewStruct(pointT, []Value{Int(0), Int(0)}))),
			`[[2,{"err":{"kind":"arith","message":"overflow"}}],[1,{"ok":{"x":0,"y":0}}]]`, MapOf(IntType, resPointT)},
		{"ordinary enum inside", some(optionOf(verdictT), NewEnum(verdictT, 1, []Value{Str("late")})), `{"variant":"Reject","values":["late"]}`, nil},
	} {
		got, err := AppendJSON(nil, c.v)
		if err != nil || string(got) != c.want {
			t.Errorf("%s: AppendJSON = %s, %v\n want %s", c.name, got, err, c.want)
			continue
		}
		if !json.Valid(got) {
			t.Errorf("%s: invalid JSON: %s", c.name, got)
		}
		// The JSON view of recorded bytes (hale trace dump, --at) is the same.
		b, err := Encode(nil, c.v)
		if err != nil {
			t.Errorf("%s: Encode: %v", c.name, err)
			continue
		}
		if c.typ != nil {
			if got, err := JSONOf(b, c.typ); err != nil || string(got) != c.want {
				t.Errorf("%s: JSONOf = %s, %v\n want %s", c.name, got, err, c.want)
			}
		}
	}
}

// A value that contains itself through a Some is refused, and so is a
// tower of Options deeper than MaxDepth.
func TestAppendJSONOptionCycleAndDepth(t *testing.T) {
	l := list()
	must(l.AsList().Push(some(optIntListT, l)))
	if _, err := AppendJSON(nil, l); err != ErrCyclic {
		t.Errorf("cyclic through Some: err = %v, want ErrCyclic", err)
	}
	v := Int(1)
	for range MaxDepth + 1 {
		v = some(optIntT, v)
	}
	if _, err := AppendJSON(nil, v); err != ErrTooDeep {
		t.Errorf("deep Some: err = %v, want ErrTooDeep", err)
	}
}
