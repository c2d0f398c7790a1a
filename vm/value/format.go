package value

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Format returns the text form of v, as Hale's builtin str(x) gives it:
//
//	string at top level     as is
//	int                     decimal
//	float                   see AppendFloat
//	bool                    true, false
//	bytes                   b"ab\x00"
//	list                    [1, 2]
//	map                     {"a": 1}
//	struct                  Point { x: 1, y: 2 }, and Empty {} without fields
//	enum                    Verdict::Accept, Verdict::Reject("late")
//	Option, Result          Some(3), None, Ok("x"), Err(Error { kind: "io", message: "…" })
//	void                    () (no Hale expression has it)
//
// Inside a container, strings are double-quoted with \" \\ \n \t \r escaped
// and other control characters (U+0000-U+001F, U+007F-U+009F) written as
// \u{1b} (lower-case hex); invalid UTF-8 is copied as it is. A container that
// contains itself is printed as ... where it recurs, as is anything nested
// deeper than MaxDepth, so Format always ends.
func Format(v Value) string {
	if v.k == KindString {
		return v.str()
	}
	var b [64]byte
	return string(AppendFormat(b[:0], v))
}

// AppendFormat appends Format(v) to buf.
func AppendFormat(buf []byte, v Value) []byte {
	switch v.k {
	case KindString:
		return append(buf, v.str()...)
	case KindInt:
		return strconv.AppendInt(buf, int64(v.n), 10)
	case KindFloat:
		return AppendFloat(buf, math.Float64frombits(v.n))
	}
	var p path
	return appendFormat(buf, v, &p)
}

func appendFormat(buf []byte, v Value, p *path) []byte {
	switch v.k {
	case KindVoid:
		return append(buf, "()"...)
	case KindInt:
		return strconv.AppendInt(buf, int64(v.n), 10)
	case KindFloat:
		return AppendFloat(buf, math.Float64frombits(v.n))
	case KindBool:
		return strconv.AppendBool(buf, v.n != 0)
	case KindString:
		return appendQuoted(buf, v.str())
	case KindBytes:
		return appendBytesLit(buf, v.str())
	}
	o := v.object()
	if o == nil { // unit enum variant
		t := v.EnumType()
		return appendVariantName(buf, t, int(v.n))
	}
	if p.enter(o) != nil {
		return append(buf, "..."...)
	}
	switch v.k {
	case KindList:
		buf = append(buf, '[')
		buf = appendFormatList(buf, v.AsList().elems, p)
		buf = append(buf, ']')
	case KindMap:
		m := v.AsMap()
		buf = append(buf, '{')
		first := true
		for i := range m.entries {
			e := &m.entries[i]
			if e.key.k == KindVoid {
				continue
			}
			if !first {
				buf = append(buf, ", "...)
			}
			first = false
			buf = appendFormat(buf, e.key, p)
			buf = append(buf, ": "...)
			buf = appendFormat(buf, e.val, p)
		}
		buf = append(buf, '}')
	case KindStruct:
		s := v.AsStruct()
		if IsSecretType(s.typ) {
			buf = appendSecretFormat(buf, v)
			break
		}
		buf = append(buf, s.typ.Name...)
		if s.n == 0 {
			buf = append(buf, " {}"...)
			break
		}
		buf = append(buf, " { "...)
		for i, f := range s.fields() {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			if i < len(s.typ.Fields) {
				buf = append(buf, s.typ.Fields[i].Name...)
			}
			buf = append(buf, ": "...)
			buf = appendFormat(buf, f, p)
		}
		buf = append(buf, " }"...)
	case KindEnum:
		buf = appendVariantName(buf, v.EnumType(), v.Variant())
		buf = append(buf, '(')
		buf = appendFormatList(buf, v.Payload(), p)
		buf = append(buf, ')')
	}
	p.leave()
	return buf
}

func appendFormatList(buf []byte, vs []Value, p *path) []byte {
	for i, x := range vs {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = appendFormat(buf, x, p)
	}
	return buf
}

func appendVariantName(buf []byte, t *Type, i int) []byte {
	if !t.IsGeneric() {
		buf = append(buf, t.Name...)
		buf = append(buf, "::"...)
	}
	if i < len(t.Variants) {
		buf = append(buf, t.Variants[i].Name...)
	}
	return buf
}

const hexDigits = "0123456789abcdef"

// appendQuoted appends s as a Hale string literal (str of a string inside a
// container).
func appendQuoted(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f { // printable ASCII: the common case
			if c == '"' || c == '\\' {
				buf = append(buf, '\\')
			}
			buf = append(buf, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n':
			buf = append(buf, `\n`...)
		case r == '\t':
			buf = append(buf, `\t`...)
		case r == '\r':
			buf = append(buf, `\r`...)
		case r < 0x20 || (r >= 0x7f && r < 0xa0): // Unicode category Cc
			buf = append(buf, `\u{`...)
			buf = strconv.AppendUint(buf, uint64(r), 16)
			buf = append(buf, '}')
		default: // other characters, and invalid UTF-8 as it is
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}

// appendBytesLit appends s as a Hale bytes literal: b"…" with printable ASCII
// as is except " and \, and every other byte as \xNN.
func appendBytesLit(buf []byte, s string) []byte {
	buf = append(buf, 'b', '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c >= 0x20 && c < 0x7f:
			buf = append(buf, c)
		default:
			buf = append(buf, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return append(buf, '"')
}

// AppendFloat appends the text form of f: the shortest decimal that reads
// back as f, in exponent form when the decimal exponent is below -4 or at
// least 21 (1e-07, 1.5e+21, the exponent with a sign and at least two
// digits), otherwise in positional form with at least one digit after the
// point (1.0, 0.1, -0.0, 100000000000000000000.0); NaN, inf and -inf.
func AppendFloat(buf []byte, f float64) []byte {
	switch {
	case f != f:
		return append(buf, "NaN"...)
	case math.IsInf(f, 1):
		return append(buf, "inf"...)
	case math.IsInf(f, -1):
		return append(buf, "-inf"...)
	case f == 0:
		if math.Signbit(f) {
			return append(buf, "-0.0"...)
		}
		return append(buf, "0.0"...)
	}
	// One shortest conversion gives the digits and the exponent; the
	// positional form is laid out from them.
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	mark := 0
	for e[mark] != 'e' {
		mark++
	}
	exp := 0
	for _, c := range e[mark+2:] {
		exp = exp*10 + int(c-'0')
	}
	if e[mark+1] == '-' {
		exp = -exp
	}
	if exp < -4 || exp >= 21 {
		return append(buf, e...)
	}
	mant := e[:mark]
	if mant[0] == '-' {
		buf = append(buf, '-')
		mant = mant[1:]
	}
	// digits without the point: mant is d or d.ddd
	var digs [24]byte
	nd := copy(digs[:], mant[:1])
	if len(mant) > 2 {
		nd += copy(digs[nd:], mant[2:])
	}
	d := digs[:nd]
	if exp < 0 {
		buf = append(buf, '0', '.')
		for i := -1; i > exp; i-- {
			buf = append(buf, '0')
		}
		return append(buf, d...)
	}
	if len(d) <= exp+1 {
		buf = append(buf, d...)
		for i := len(d); i <= exp; i++ {
			buf = append(buf, '0')
		}
		return append(buf, '.', '0')
	}
	buf = append(buf, d[:exp+1]...)
	buf = append(buf, '.')
	return append(buf, d[exp+1:]...)
}
