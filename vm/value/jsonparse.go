package value

import (
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// MaxJSONDepth is how deeply arrays and objects may nest in a text that
// std::json::parse or decode reads. A Json value nests two containers per
// level (the variant and its list or map), so a parsed value stays well
// inside MaxDepth, and the parser's recursion inside any Go stack.
const MaxJSONDepth = 256

// JSONError is a text that is not JSON (RFC 8259), or a number outside
// binary64, at byte Offset of the text.
type JSONError struct {
	Offset int
	Msg    string
}

func (e *JSONError) Error() string {
	return "invalid JSON at byte " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// IsJSONType reports whether t is the built-in enum Json (named Json, or
// std::Json when a program declares its own Json): its six variants as
// declared. A program's own enum of that name and exact shape is treated
// alike, which it cannot tell apart.
func IsJSONType(t *Type) bool {
	if t == nil || t.Kind != KindEnum || (t.Name != "Json" && t.Name != "std::Json") || len(t.Variants) != 6 {
		return false
	}
	v := t.Variants
	one := func(i int, name string, k Kind) bool {
		return v[i].Name == name && len(v[i].Fields) == 1 && v[i].Fields[0].Kind == k
	}
	return v[0].Name == "Null" && len(v[0].Fields) == 0 && one(1, "Bool", KindBool) && one(2, "Num", KindFloat) &&
		one(3, "Str", KindString) && one(4, "Arr", KindList) && v[4].Fields[0].Elem == t &&
		one(5, "Obj", KindMap) && v[5].Fields[0].Key.Kind == KindString && v[5].Fields[0].Elem == t
}

// Json variant indexes.
const (
	JSONNull = iota
	JSONBool
	JSONNum
	JSONStr
	JSONArr
	JSONObj
)

// ParseJSON parses s, one JSON text, as a value of the Json enum type jt.
// Objects keep their keys in order; a repeated key keeps its first place
// and takes its last value. It also returns what the value costs towards
// the memory limit (its size as a Sizer counts it, near enough).
func ParseJSON(s string, jt *Type) (Value, int64, error) {
	p := jsonParser{s: s, jt: jt}
	p.ws()
	v, err := p.value()
	if err != nil {
		return Value{}, 0, err
	}
	p.ws()
	if p.i < len(p.s) {
		return Value{}, 0, p.unexpected()
	}
	return v, p.cost, nil
}

// jsonParser reads one JSON text. Its methods report errors as *JSONError.
type jsonParser struct {
	s     string
	i     int
	depth int
	jt    *Type   // Json
	stack []Value // elements of the arrays and objects being read, innermost last
	cost  int64
	buf   []byte // an unescaped string
	// slab holds boxed variants made ahead, so that a parse allocates its
	// many one-value variants in blocks: allocation is most of the cost
	// of parsing, and more so in the wasm guest.
	slab        []enum1
	lists       []List
	maps        []Map
	vals        []Value    // list elements
	ents        []mapEntry // map entries
	strs        []byte     // unescaped strings
	chunk       int        // the size of the next blocks, growing with the text
	true, false Value      // Json::Bool values, shared (values are immutable)
}

// grow returns the size of the next block of n or more objects: blocks
// grow as a text proves large, so a small text allocates little.
func (p *jsonParser) grow(n int) int {
	p.chunk = min(max(p.chunk*2, 16), 1024)
	return max(n, p.chunk)
}

// newList returns a list holding a copy of vs, carved from a block. Its
// capacity is its length, so a push reallocates rather than overwrite a
// neighbour.
func (p *jsonParser) newList(vs []Value) Value {
	if len(p.lists) == 0 {
		p.lists = make([]List, p.grow(1))
	}
	l := &p.lists[0]
	p.lists = p.lists[1:]
	if n := len(vs); n > 0 {
		if len(p.vals) < n {
			p.vals = make([]Value, p.grow(n)*4)
		}
		l.elems = p.vals[:n:n]
		p.vals = p.vals[n:]
		copy(l.elems, vs)
	}
	return l.value()
}

// newMap returns an empty map of string keys with room for n entries,
// carved from blocks as newList does.
func (p *jsonParser) newMap(n int) *Map {
	if len(p.maps) == 0 {
		p.maps = make([]Map, p.grow(1))
	}
	m := &p.maps[0]
	p.maps = p.maps[1:]
	m.keyKind = KindString
	if n > 0 {
		if len(p.ents) < n {
			p.ents = make([]mapEntry, p.grow(n)*4)
		}
		m.entries = p.ents[:0:n]
		p.ents = p.ents[n:]
	}
	return m
}

// enum1 is a boxed variant with one value in one block.
type enum1 struct {
	e enumObj
	a [1]Value
}

func (p *jsonParser) fail(at int, msg string) error { return &JSONError{Offset: at, Msg: msg} }

// unexpected reports the byte at p.i (or the end of the text).
func (p *jsonParser) unexpected() error {
	if p.i >= len(p.s) {
		return p.fail(p.i, "unexpected end of text")
	}
	c := p.s[p.i]
	if c < 0x20 || c >= utf8.RuneSelf {
		return p.fail(p.i, "unexpected byte 0x"+string([]byte{hexDigits[c>>4], hexDigits[c&15]}))
	}
	return p.fail(p.i, "unexpected "+strconv.Quote(string(c)))
}

func (p *jsonParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// literal reads the word w (null, true, false) at p.i.
func (p *jsonParser) literal(w string) error {
	if len(p.s)-p.i >= len(w) && p.s[p.i:p.i+len(w)] == w {
		p.i += len(w)
		return nil
	}
	for j := 0; j < len(w); j++ {
		if p.i+j >= len(p.s) || p.s[p.i+j] != w[j] {
			p.i += j
			return p.unexpected()
		}
	}
	return nil
}

func (p *jsonParser) enum(i int, x Value) Value {
	p.cost += SizeObjectHeader + SizeSlot
	if len(p.slab) == 0 {
		p.slab = make([]enum1, p.grow(1)*4)
	}
	o := &p.slab[0]
	p.slab = p.slab[1:]
	o.a[0] = x
	o.e.typ, o.e.v, o.e.n = p.jt, &o.a[0], 1
	return Value{k: KindEnum, n: uint64(i) | enumBoxed, p: unsafe.Pointer(&o.e)}
}

// value reads one JSON value as a Json.
func (p *jsonParser) value() (Value, error) {
	if p.i >= len(p.s) {
		return Value{}, p.unexpected()
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		if err != nil {
			return Value{}, err
		}
		p.cost += int64(len(s))
		return p.enum(JSONStr, Str(s)), nil
	case c == 'n':
		if err := p.literal("null"); err != nil {
			return Value{}, err
		}
		return NewEnum(p.jt, JSONNull, nil), nil
	case c == 't' || c == 'f':
		w := "true"
		if c == 'f' {
			w = "false"
		}
		if err := p.literal(w); err != nil {
			return Value{}, err
		}
		if p.true.k == KindVoid {
			p.true, p.false = p.enum(JSONBool, Bool(true)), p.enum(JSONBool, Bool(false))
		}
		if c == 't' {
			return p.true, nil
		}
		return p.false, nil
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		text, err := p.number()
		if err != nil {
			return Value{}, err
		}
		f, err := p.float(start, text)
		if err != nil {
			return Value{}, err
		}
		return p.enum(JSONNum, Float(f)), nil
	}
	return Value{}, p.unexpected()
}

// enter counts one more level of nesting at p.i.
func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > MaxJSONDepth {
		return p.fail(p.i, "nested deeper than "+strconv.Itoa(MaxJSONDepth))
	}
	return nil
}

func (p *jsonParser) array() (Value, error) {
	if err := p.enter(); err != nil {
		return Value{}, err
	}
	p.i++ // [
	base := len(p.stack)
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
	} else {
		for {
			v, err := p.value()
			if err != nil {
				return Value{}, err
			}
			p.stack = append(p.stack, v)
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				p.ws()
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == ']' {
				p.i++
				break
			}
			return Value{}, p.expected("\",\" or \"]\"")
		}
	}
	l := p.newList(p.stack[base:])
	clear(p.stack[base:])
	p.stack = p.stack[:base]
	p.depth--
	p.cost += ShallowSize(l)
	return p.enum(JSONArr, l), nil
}

// expected reports what should stand at p.i.
func (p *jsonParser) expected(what string) error {
	err := p.unexpected().(*JSONError)
	err.Msg += ", expected " + what
	return err
}

func (p *jsonParser) object() (Value, error) {
	if err := p.enter(); err != nil {
		return Value{}, err
	}
	p.i++ // {
	base := len(p.stack)
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
	} else {
		for {
			if p.i >= len(p.s) || p.s[p.i] != '"' {
				return Value{}, p.expected("a string key")
			}
			k, err := p.str()
			if err != nil {
				return Value{}, err
			}
			p.ws()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return Value{}, p.expected("\":\"")
			}
			p.i++
			p.ws()
			v, err := p.value()
			if err != nil {
				return Value{}, err
			}
			p.stack = append(p.stack, Str(k), v)
			p.cost += int64(len(k))
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				p.ws()
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				break
			}
			return Value{}, p.expected("\",\" or \"}\"")
		}
	}
	p.depth--
	pairs := p.stack[base:]
	m := p.newMap(len(pairs) / 2)
	for j := 0; j < len(pairs); j += 2 {
		m.Set(pairs[j], pairs[j+1]) // a repeated key keeps its place, takes the last value
	}
	clear(pairs)
	p.stack = p.stack[:base]
	v := m.value()
	p.cost += ShallowSize(v)
	return p.enum(JSONObj, v), nil
}

// number scans a number at p.i and returns its text.
func (p *jsonParser) number() (string, error) {
	s, start := p.s, p.i
	i := p.i
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		p.i = i
		return "", p.expected("a digit")
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			p.i = i
			return "", p.expected("a digit")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			p.i = i
			return "", p.expected("a digit")
		}
	}
	p.i = i
	return s[start:i], nil
}

// float converts a number's text, which starts at byte start.
func (p *jsonParser) float(start int, text string) (float64, error) {
	// An integer of up to 15 digits is exact as a float: no need for
	// ParseFloat, the costliest step of a number.
	if len(text) <= 15 {
		var n int64
		neg := text[0] == '-'
		digits := text
		if neg {
			digits = text[1:]
		}
		plain := true
		for j := 0; j < len(digits); j++ {
			c := digits[j]
			if c < '0' || c > '9' {
				plain = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if plain {
			if neg {
				return -float64(n), nil
			}
			return float64(n), nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, p.fail(start, "number "+text+" is outside the range of a float")
	}
	return f, nil
}

// str reads a string at p.i (on its opening quote). A string without
// escapes shares the text's memory.
func (p *jsonParser) str() (string, error) {
	s := p.s
	start := p.i + 1
	i := start
	for i < len(s) {
		// Most of a text is plain ASCII in strings: skip it in a tight loop.
		for i < len(s) && plainByte[s[i]] {
			i++
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		switch {
		case c == '"':
			p.i = i + 1
			return s[start:i], nil
		case c == '\\':
			return p.escaped(start, i)
		case c < 0x20:
			p.i = i
			return "", p.fail(i, "control character 0x"+string([]byte{hexDigits[c>>4], hexDigits[c&15]})+" in a string")
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return "", p.fail(i, "invalid UTF-8 in a string")
			}
			i += n
		default:
			i++
		}
	}
	p.i = i
	return "", p.fail(i, "unexpected end of text in a string")
}

// escaped continues str from the first backslash at i, unescaping into a
// new string.
func (p *jsonParser) escaped(start, i int) (string, error) {
	s := p.s
	b := append(p.buf[:0], s[start:i]...)
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			p.i = i + 1
			p.buf = b
			return p.keep(b), nil
		case c == '\\':
			if i+1 >= len(s) {
				return "", p.fail(i+1, "unexpected end of text in a string")
			}
			e := s[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(s, i)
				if !ok {
					return "", p.fail(i-2, "invalid \\u escape")
				}
				i += 4
				if r >= 0xd800 && r < 0xe000 {
					// A pair of UTF-16 halves gives one character; a lone
					// half is U+FFFD.
					r2, ok := hex4(s, i+2)
					if ok && r < 0xdc00 && s[i] == '\\' && s[i+1] == 'u' && r2 >= 0xdc00 && r2 < 0xe000 {
						r = 0x10000 + (r-0xd800)<<10 + (r2 - 0xdc00)
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				return "", p.fail(i-2, "invalid escape \\"+string(e))
			}
		case c < 0x20:
			return "", p.fail(i, "control character 0x"+string([]byte{hexDigits[c>>4], hexDigits[c&15]})+" in a string")
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return "", p.fail(i, "invalid UTF-8 in a string")
			}
			b = append(b, s[i:i+n]...)
			i += n
		default:
			b = append(b, c)
			i++
		}
	}
	return "", p.fail(i, "unexpected end of text in a string")
}

// plainByte marks the bytes a string holds as they are: printable ASCII
// other than " and \.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// keep returns a string of b's bytes, carved from a block (strings are
// immutable, so neighbours never see each other).
func (p *jsonParser) keep(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(p.strs) < len(b) {
		p.strs = make([]byte, max(len(b), p.grow(1)*64))
	}
	d := p.strs[:len(b):len(b)]
	p.strs = p.strs[len(b):]
	copy(d, b)
	return unsafe.String(&d[0], len(d))
}

// hex4 reads four hex digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) || i < 0 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
