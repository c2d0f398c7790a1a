package value

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the JSON view of v (the form of values in every --json
// output, hale trace dump and std::json::encode) to buf, as compact
// JSON without spaces, deterministic to the byte:
//
//	int                    1
//	float                  its str() form, a JSON number that always has a
//	                       point or an exponent (1.0, -0.0, 1e-07, 1e+21);
//	                       "NaN", "inf", "-inf" as strings
//	bool                   true, false
//	string                 a JSON string (see below)
//	bytes                  {"bytes":"00ff"} (lower-case hex)
//	list                   [1,2]
//	map with string keys   {"a":1,"b":2} in insertion order
//	other maps             [[1,"a"],[2,"b"]] in insertion order
//	struct                 {"x":1,"y":2} in declaration order
//	enum                   {"variant":"Reject","values":["late"]}, "values":[] for a unit variant
//	Option<T>              null for None, the value itself for Some(v)
//	Result<T>              {"ok":v} for Ok(v), {"err":{"kind":"io","message":"…"}} for Err(e)
//	Json                   the JSON it holds: null, true, 2.5 (a number as a
//	                       float above), "s", [...], {...}
//	secret                 {"secret":["Bearer ",{"env":"OPENAI_API_KEY"}]}: its parts
//	void                   null
//
// Option<Option<T>> has no form of its own: Some(None) and None are both
// written null (std::json::decode refuses that type as a target).
//
// Strings escape " and \ and the characters below U+0020 (as \n, \r, \t, \b,
// \f or \u00XX); other characters are written as UTF-8, and each byte of
// invalid UTF-8 as \ufffd, so the output is always valid JSON. It fails with
// ErrCyclic or ErrTooDeep.
func AppendJSON(buf []byte, v Value) ([]byte, error) {
	var p path
	return appendJSON(buf, v, &p)
}

// JSONOf decodes data as a value of type t and returns its JSON view.
func JSONOf(data []byte, t *Type) ([]byte, error) {
	v, err := Decode(data, t)
	if err != nil {
		return nil, err
	}
	return AppendJSON(nil, v)
}

func appendJSON(buf []byte, v Value, p *path) ([]byte, error) {
	switch v.k {
	case KindVoid:
		return append(buf, "null"...), nil
	case KindInt:
		return strconv.AppendInt(buf, int64(v.n), 10), nil
	case KindFloat:
		f := math.Float64frombits(v.n)
		if f != f || math.IsInf(f, 0) {
			buf = append(buf, '"')
			buf = AppendFloat(buf, f)
			return append(buf, '"'), nil
		}
		return AppendFloat(buf, f), nil
	case KindBool:
		return strconv.AppendBool(buf, v.n != 0), nil
	case KindString:
		return appendJSONString(buf, v.str()), nil
	case KindBytes:
		buf = append(buf, `{"bytes":"`...)
		s := v.str()
		for i := 0; i < len(s); i++ {
			buf = append(buf, hexDigits[s[i]>>4], hexDigits[s[i]&15])
		}
		return append(buf, `"}`...), nil
	}
	if v.k == KindEnum {
		if t := v.EnumType(); t.IsGeneric() {
			return appendJSONGeneric(buf, v, p)
		} else if IsJSONType(t) {
			return appendJSONJson(buf, v, p)
		}
	}
	o := v.object()
	if o == nil { // unit enum variant
		buf = appendJSONVariant(buf, v)
		return append(buf, "[]}"...), nil
	}
	if err := p.enter(o); err != nil {
		return buf, err
	}
	var err error
	switch v.k {
	case KindList:
		buf, err = appendJSONList(buf, v.AsList().elems, p)
	case KindStruct:
		s := v.AsStruct()
		if IsSecretType(s.typ) {
			buf = appendSecretJSON(buf, v)
			break
		}
		buf = append(buf, '{')
		for i, f := range s.fields() {
			if i > 0 {
				buf = append(buf, ',')
			}
			name := ""
			if i < len(s.typ.Fields) {
				name = s.typ.Fields[i].Name
			}
			buf = appendJSONString(buf, name)
			buf = append(buf, ':')
			if buf, err = appendJSON(buf, f, p); err != nil {
				break
			}
		}
		buf = append(buf, '}')
	case KindEnum:
		buf = appendJSONVariant(buf, v)
		buf, err = appendJSONList(buf, v.Payload(), p)
		buf = append(buf, '}')
	case KindMap:
		buf, err = appendJSONMap(buf, v.AsMap(), p)
	}
	p.leave()
	return buf, err
}

// appendJSONGeneric writes an Option or a Result in their own JSON forms
// rather than as enums: what other programs expect of an optional field or
// an outcome, and what std::json::decode reads back.
func appendJSONGeneric(buf []byte, v Value, p *path) ([]byte, error) {
	t, i := v.EnumType(), v.Variant()
	name := ""
	if i < len(t.Variants) {
		name = t.Variants[i].Name
	}
	payload := v.Payload()
	if len(payload) != 1 { // None
		return append(buf, "null"...), nil
	}
	var key string
	switch name {
	case "Some":
		return appendJSONPayload(buf, v, payload[0], p)
	case "Ok":
		key = `{"ok":`
	default: // Err
		key = `{"err":`
	}
	buf = append(buf, key...)
	buf, err := appendJSONPayload(buf, v, payload[0], p)
	if err != nil {
		return buf, err
	}
	return append(buf, '}'), nil
}

// appendJSONJson writes a value of the built-in enum Json as the JSON text
// it holds.
func appendJSONJson(buf []byte, v Value, p *path) ([]byte, error) {
	payload := v.Payload()
	switch v.Variant() {
	case JSONNull:
		return append(buf, "null"...), nil
	case JSONArr, JSONObj:
		return appendJSONPayload(buf, v, payload[0], p)
	}
	return appendJSON(buf, payload[0], p)
}

// appendJSONPayload writes x, the value carried by the enum value v, with v
// on the path so that a value containing itself through an Option or a
// Result is still found.
func appendJSONPayload(buf []byte, v, x Value, p *path) ([]byte, error) {
	if err := p.enter(v.object()); err != nil {
		return buf, err
	}
	buf, err := appendJSON(buf, x, p)
	p.leave()
	return buf, err
}

func appendJSONMap(buf []byte, m *Map, p *path) ([]byte, error) {
	obj := m.keyKind == KindString
	if obj {
		buf = append(buf, '{')
	} else {
		buf = append(buf, '[')
	}
	first := true
	var err error
	for i := range m.entries {
		e := &m.entries[i]
		if e.key.k == KindVoid {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		if obj {
			buf = appendJSONString(buf, e.key.str())
			buf = append(buf, ':')
		} else {
			buf = append(buf, '[')
			buf, _ = appendJSON(buf, e.key, p) // a scalar: cannot fail
			buf = append(buf, ',')
		}
		if buf, err = appendJSON(buf, e.val, p); err != nil {
			return buf, err
		}
		if !obj {
			buf = append(buf, ']')
		}
	}
	if obj {
		return append(buf, '}'), nil
	}
	return append(buf, ']'), nil
}

func appendJSONVariant(buf []byte, v Value) []byte {
	t, i := v.EnumType(), v.Variant()
	name := ""
	if i < len(t.Variants) {
		name = t.Variants[i].Name
	}
	buf = append(buf, `{"variant":`...)
	buf = appendJSONString(buf, name)
	return append(buf, `,"values":`...)
}

func appendJSONList(buf []byte, vs []Value, p *path) ([]byte, error) {
	buf = append(buf, '[')
	var err error
	for i, x := range vs {
		if i > 0 {
			buf = append(buf, ',')
		}
		if buf, err = appendJSON(buf, x, p); err != nil {
			return buf, err
		}
	}
	return append(buf, ']'), nil
}

func appendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf {
			if c == '"' || c == '\\' {
				buf = append(buf, '\\')
			}
			buf = append(buf, c)
			i++
			continue
		}
		if c < 0x20 {
			switch c {
			case '\n':
				buf = append(buf, `\n`...)
			case '\r':
				buf = append(buf, `\r`...)
			case '\t':
				buf = append(buf, `\t`...)
			case '\b':
				buf = append(buf, `\b`...)
			case '\f':
				buf = append(buf, `\f`...)
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, `\ufffd`...)
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}
