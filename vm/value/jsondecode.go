package value

import (
	"strconv"
	"strings"
	"unsafe"
)

// DecodeJSON reads s as a value of type t (std::json::decode): a struct
// from an object (fields by name, unknown keys ignored, a missing key an
// error unless the field is an Option), a list from an array, a map with
// string keys from an object, an int from a number whose exact decimal
// value is an integer in range, a float from a number or "NaN", "inf",
// "-inf", an Option from null or its value, a Result from {"ok": v} or
// {"err": {"kind": …, "message": …}}, Json from anything, bytes and enums
// from their JSON view. Errors name the path of the value at fault:
// `decode: $.choices[0].message: missing field "content"`. It also returns
// the cost of the value towards the memory limit, as ParseJSON does.
func DecodeJSON(s string, t *Type) (Value, int64, error) {
	p := jsonParser{s: s}
	p.ws()
	n, err := p.node()
	if err == nil {
		p.ws()
		if p.i < len(p.s) {
			err = p.unexpected()
		}
	}
	if err != nil {
		return Value{}, 0, &JSONDecodeError{Msg: err.Error()}
	}
	d := jsonDecoder{}
	v, err := d.value(&n, t, nil)
	if err != nil {
		return Value{}, 0, err
	}
	return v, d.cost, nil
}

// JSONDecodeError is a text that std::json::decode cannot read as its target.
type JSONDecodeError struct {
	Path string // "$.a[0]", or "" for a text that is not JSON
	Msg  string
}

func (e *JSONDecodeError) Error() string {
	if e.Path == "" {
		return "decode: " + e.Msg
	}
	return "decode: " + e.Path + ": " + e.Msg
}

// jnode is a parsed JSON value before it is decoded: the text of a number
// is kept, so that an int is read exactly.
type jnode struct {
	kind byte   // 'n' null, 't' true, 'f' false, '0' number, '"' string, '[' array, '{' object
	text string // number text or string contents
	keys []string
	kids []jnode // array elements, or object values (parallel to keys)
}

// node reads one JSON value as a jnode. A repeated object key keeps its
// first place and takes its last value.
func (p *jsonParser) node() (jnode, error) {
	if p.i >= len(p.s) {
		return jnode{}, p.unexpected()
	}
	switch c := p.s[p.i]; {
	case c == '"':
		s, err := p.str()
		return jnode{kind: '"', text: s}, err
	case c == 'n' || c == 't' || c == 'f':
		w := "null"
		if c == 't' {
			w = "true"
		} else if c == 'f' {
			w = "false"
		}
		return jnode{kind: c}, p.literal(w)
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		text, err := p.number()
		if err == nil {
			_, err = p.float(start, text)
		}
		return jnode{kind: '0', text: text}, err
	case c == '[' || c == '{':
		if err := p.enter(); err != nil {
			return jnode{}, err
		}
		n := jnode{kind: c}
		closer := byte(']')
		if c == '{' {
			closer = '}'
		}
		p.i++
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == closer {
			p.i++
			p.depth--
			return n, nil
		}
		var index map[string]int
		for {
			if c == '{' {
				if p.i >= len(p.s) || p.s[p.i] != '"' {
					return n, p.expected("a string key")
				}
				k, err := p.str()
				if err != nil {
					return n, err
				}
				p.ws()
				if p.i >= len(p.s) || p.s[p.i] != ':' {
					return n, p.expected("\":\"")
				}
				p.i++
				p.ws()
				kid, err := p.node()
				if err != nil {
					return n, err
				}
				at := -1
				if index != nil {
					if j, ok := index[k]; ok {
						at = j
					}
				} else {
					for j, key := range n.keys {
						if key == k {
							at = j
							break
						}
					}
				}
				if at >= 0 {
					n.kids[at] = kid
				} else {
					n.keys = append(n.keys, k)
					n.kids = append(n.kids, kid)
					if len(n.keys) > 8 {
						if index == nil {
							index = make(map[string]int, 16)
							for j, key := range n.keys {
								index[key] = j
							}
						}
						index[k] = len(n.keys) - 1
					}
				}
			} else {
				kid, err := p.node()
				if err != nil {
					return n, err
				}
				n.kids = append(n.kids, kid)
			}
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				p.ws()
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == closer {
				p.i++
				p.depth--
				return n, nil
			}
			return n, p.expected(strconv.Quote(",") + " or " + strconv.Quote(string(closer)))
		}
	}
	return jnode{}, p.unexpected()
}

// kindName names a JSON value's kind in messages.
func (n *jnode) kindName() string {
	switch n.kind {
	case 'n':
		return "null"
	case 't', 'f':
		return "a bool"
	case '0':
		return "a number"
	case '"':
		return "a string"
	case '[':
		return "an array"
	}
	return "an object"
}

// get returns the value of key k of an object, or nil.
func (n *jnode) get(k string) *jnode {
	for i, key := range n.keys {
		if key == k {
			return &n.kids[i]
		}
	}
	return nil
}

// jpath is the path to the value being decoded, innermost last, kept on
// the Go stack and written out only for an error.
type jpath struct {
	up    *jpath
	key   string
	index int // -1 for a key
}

func (p *jpath) String() string {
	var segs []*jpath
	for q := p; q != nil; q = q.up {
		segs = append(segs, q)
	}
	var b strings.Builder
	b.WriteByte('$')
	for i := len(segs) - 1; i >= 0; i-- {
		q := segs[i]
		switch {
		case q.index >= 0:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(q.index))
			b.WriteByte(']')
		case isPathName(q.key):
			b.WriteByte('.')
			b.WriteString(q.key)
		default:
			b.WriteByte('[')
			b.Write(appendJSONString(nil, q.key))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// isPathName reports whether key can follow a dot in a path: a name.
func isPathName(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

type jsonDecoder struct {
	cost int64
}

func (d *jsonDecoder) fail(path *jpath, msg string) error {
	return &JSONDecodeError{Path: path.String(), Msg: msg}
}

func (d *jsonDecoder) want(path *jpath, what string, n *jnode) error {
	return d.fail(path, "want "+what+", got "+n.kindName())
}

func (d *jsonDecoder) value(n *jnode, t *Type, path *jpath) (Value, error) {
	switch t.Kind {
	case KindInt:
		if n.kind != '0' {
			return Value{}, d.want(path, "an int", n)
		}
		i, msg := exactInt(n.text)
		if msg != "" {
			return Value{}, d.fail(path, n.text+" "+msg)
		}
		return Int(i), nil
	case KindFloat:
		switch {
		case n.kind == '0':
			f, _ := strconv.ParseFloat(n.text, 64) // checked by the parser
			return Float(f), nil
		case n.kind == '"' && (n.text == "NaN" || n.text == "inf" || n.text == "-inf"):
			f, _ := strconv.ParseFloat(n.text, 64)
			return Float(f), nil
		}
		return Value{}, d.want(path, `a float (a number, "NaN", "inf" or "-inf")`, n)
	case KindBool:
		if n.kind != 't' && n.kind != 'f' {
			return Value{}, d.want(path, "a bool", n)
		}
		return Bool(n.kind == 't'), nil
	case KindString:
		if n.kind != '"' {
			return Value{}, d.want(path, "a string", n)
		}
		d.cost += int64(len(n.text))
		return Str(n.text), nil
	case KindBytes:
		var h *jnode
		if n.kind == '{' && len(n.keys) == 1 {
			h = n.get("bytes")
		}
		if h == nil || h.kind != '"' {
			return Value{}, d.fail(path, `want bytes as {"bytes": "<hex>"}, got `+n.kindName())
		}
		b, ok := unhex(h.text)
		if !ok {
			return Value{}, d.fail(&jpath{up: path, key: "bytes", index: -1}, "invalid hex "+strconv.Quote(h.text))
		}
		d.cost += int64(len(b))
		return BytesOf(b), nil
	case KindList:
		if n.kind != '[' {
			return Value{}, d.want(path, "an array", n)
		}
		l := allocList(len(n.kids))
		for i := range n.kids {
			v, err := d.value(&n.kids[i], t.Elem, &jpath{up: path, index: i})
			if err != nil {
				return Value{}, err
			}
			l.elems[i] = v
		}
		v := l.value()
		d.cost += ShallowSize(v)
		return v, nil
	case KindMap:
		if n.kind != '{' || t.Key.Kind != KindString {
			return Value{}, d.want(path, "an object", n)
		}
		m := newMap(KindString, len(n.keys))
		for i, k := range n.keys {
			v, err := d.value(&n.kids[i], t.Elem, &jpath{up: path, key: k, index: -1})
			if err != nil {
				return Value{}, err
			}
			m.add(Str(k), v)
			d.cost += int64(len(k))
		}
		v := m.value()
		d.cost += ShallowSize(v)
		return v, nil
	case KindStruct:
		if n.kind != '{' {
			return Value{}, d.want(path, "an object", n)
		}
		s := allocStruct(t, len(t.Fields))
		for i, f := range t.Fields {
			kid := n.get(f.Name)
			if kid == nil {
				if f.Type.Kind == KindEnum && strings.HasPrefix(f.Type.Name, "Option<") {
					s.fields()[i] = NewEnum(f.Type, 1, nil)
					continue
				}
				return Value{}, d.fail(path, "missing field "+strconv.Quote(f.Name))
			}
			v, err := d.value(kid, f.Type, &jpath{up: path, key: f.Name, index: -1})
			if err != nil {
				return Value{}, err
			}
			s.fields()[i] = v
		}
		v := Value{k: KindStruct, p: unsafe.Pointer(s)}
		d.cost += ShallowSize(v)
		return v, nil
	case KindEnum:
		return d.enum(n, t, path)
	}
	return Value{}, d.fail(path, "cannot decode "+t.String())
}

func (d *jsonDecoder) enum(n *jnode, t *Type, path *jpath) (Value, error) {
	switch {
	case IsJSONType(t):
		return d.json(n, t), nil
	case strings.HasPrefix(t.Name, "Option<"):
		if n.kind == 'n' {
			return NewEnum(t, 1, nil), nil
		}
		v, err := d.value(n, t.Variants[0].Fields[0], path)
		if err != nil {
			return Value{}, err
		}
		return d.boxed(t, 0, v), nil
	case strings.HasPrefix(t.Name, "Result<"):
		if n.kind == '{' && len(n.keys) == 1 && (n.keys[0] == "ok" || n.keys[0] == "err") {
			i := 0
			if n.keys[0] == "err" {
				i = 1
			}
			v, err := d.value(&n.kids[0], t.Variants[i].Fields[0], &jpath{up: path, key: n.keys[0], index: -1})
			if err != nil {
				return Value{}, err
			}
			return d.boxed(t, i, v), nil
		}
		return Value{}, d.fail(path, `want {"ok": …} or {"err": {"kind": …, "message": …}}, got `+n.kindName())
	}
	var name, vals *jnode
	if n.kind == '{' {
		name, vals = n.get("variant"), n.get("values")
	}
	if name == nil || name.kind != '"' || (vals != nil && vals.kind != '[') {
		return Value{}, d.fail(path, `want `+t.Name+` as {"variant": …, "values": […]}, got `+n.kindName())
	}
	i := t.VariantIndex(name.text)
	if i < 0 {
		return Value{}, d.fail(&jpath{up: path, key: "variant", index: -1}, "enum "+t.Name+" has no variant "+strconv.Quote(name.text))
	}
	fields := t.Variants[i].Fields
	var kids []jnode
	if vals != nil {
		kids = vals.kids
	}
	if len(kids) != len(fields) {
		return Value{}, d.fail(&jpath{up: path, key: "values", index: -1},
			"variant "+name.text+" takes "+values(len(fields))+", got "+strconv.Itoa(len(kids)))
	}
	if len(fields) == 0 {
		return NewEnum(t, i, nil), nil
	}
	o := allocEnum(t, len(fields))
	vpath := &jpath{up: path, key: "values", index: -1}
	for j := range kids {
		v, err := d.value(&kids[j], fields[j], &jpath{up: vpath, index: j})
		if err != nil {
			return Value{}, err
		}
		o.vals()[j] = v
	}
	v := Value{k: KindEnum, n: uint64(i) | enumBoxed, p: unsafe.Pointer(o)}
	d.cost += ShallowSize(v)
	return v, nil
}

func (d *jsonDecoder) boxed(t *Type, i int, x Value) Value {
	d.cost += SizeObjectHeader + SizeSlot
	return NewEnum(t, i, []Value{x})
}

// json converts any JSON value to the Json enum t.
func (d *jsonDecoder) json(n *jnode, t *Type) Value {
	switch n.kind {
	case 'n':
		return NewEnum(t, JSONNull, nil)
	case 't', 'f':
		return d.boxed(t, JSONBool, Bool(n.kind == 't'))
	case '0':
		f, _ := strconv.ParseFloat(n.text, 64)
		return d.boxed(t, JSONNum, Float(f))
	case '"':
		d.cost += int64(len(n.text))
		return d.boxed(t, JSONStr, Str(n.text))
	case '[':
		l := allocList(len(n.kids))
		for i := range n.kids {
			l.elems[i] = d.json(&n.kids[i], t)
		}
		v := l.value()
		d.cost += ShallowSize(v)
		return d.boxed(t, JSONArr, v)
	}
	m := newMap(KindString, len(n.keys))
	for i, k := range n.keys {
		m.add(Str(k), d.json(&n.kids[i], t))
	}
	v := m.value()
	d.cost += ShallowSize(v)
	return d.boxed(t, JSONObj, v)
}

// exactInt reads a JSON number's text as an int when its exact decimal
// value is one, or says why not.
func exactInt(text string) (int64, string) {
	neg := strings.HasPrefix(text, "-")
	if neg {
		text = text[1:]
	}
	mant, exp := text, 0
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		e, err := strconv.Atoi(mant[i+1:])
		if err != nil { // an exponent too long for an int: a huge or tiny number
			if strings.HasPrefix(mant[i+1:], "-") {
				e = -1 << 40
			} else {
				e = 1 << 40
			}
		}
		mant, exp = mant[:i], e
	}
	digits := mant
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		digits = mant[:i] + mant[i+1:]
		exp -= len(mant) - i - 1
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return 0, ""
	}
	for strings.HasSuffix(digits, "0") {
		digits = digits[:len(digits)-1]
		exp++
	}
	if exp < 0 {
		return 0, "is not an int"
	}
	if len(digits)+exp > 19 {
		return 0, "is out of range for an int"
	}
	digits += strings.Repeat("0", exp)
	if neg {
		digits = "-" + digits
	}
	i, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, "is out of range for an int"
	}
	return i, ""
}

// unhex decodes lower- or upper-case hex.
func unhex(s string) (string, bool) {
	if len(s)%2 != 0 {
		return "", false
	}
	b := make([]byte, len(s)/2)
	for i := range b {
		hi, ok1 := hexVal(s[2*i])
		lo, ok2 := hexVal(s[2*i+1])
		if !ok1 || !ok2 {
			return "", false
		}
		b[i] = hi<<4 | lo
	}
	return string(b), true
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// values writes a count of values: "1 value", "2 values".
func values(n int) string {
	if n == 1 {
		return "1 value"
	}
	return strconv.Itoa(n) + " values"
}
