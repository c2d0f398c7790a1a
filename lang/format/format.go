// Package format parses the literals of Hale's format builtin,
// `format("{} has {:.2} left", name, x)`, and packs each placeholder's spec
// into one int that the interpreter reads at run time.
//
// The checker parses a literal once (Parse) and reports its errors at the
// literal; the lowering to SIR turns the pieces into one Format expression
// of text constants and values, each with its spec packed into an int
// (Spec.Pack), which the code generator stores as a layout constant. The
// interpreter unpacks a spec (Unpack, a few shifts) and pads with Pad: no
// spec is parsed at run time.
//
// A spec is [[fill] align] ["0"] [width] ["." precision] [type], align one
// of < > ^, type x (lower-case hex) or b (binary). Which specs fit which
// argument types is the checker's business (Spec.Fits).
//
// The package is pure: the interpreter embeds it in the wasm guest.
package format

import (
	"strconv"
	"unicode/utf8"
)

// Limits of a spec's numbers, so that a literal cannot ask for a huge
// allocation per call.
const (
	MaxWidth     = 1000
	MaxPrecision = 1000
)

// Align is a placeholder's alignment.
type Align uint8

// Alignments. AlignDefault is resolved by the argument's type: numbers to
// the right, anything else to the left.
const (
	AlignDefault Align = iota
	AlignLeft          // <
	AlignRight         // >
	AlignCenter        // ^: an odd padding puts the extra fill on the right
)

// Spec is a parsed placeholder spec.
type Spec struct {
	Fill      rune // 0 means a space
	Align     Align
	Zero      bool // pad numbers with zeros after the sign
	Width     int  // in code points; 0 for none
	Precision int  // digits after the point; -1 for none
	Type      byte // 0, 'x' or 'b'
}

// Piece is a part of a parsed literal: text (Arg < 0) or a placeholder of
// argument Arg (counting the values after the literal from 0).
type Piece struct {
	Text   string // text, with {{ and }} turned into braces
	Arg    int
	Spec   Spec
	Offset int // byte offset in the literal of the text or of the placeholder's {
	End    int // byte offset just past the piece
}

// Error is a malformed literal: Offset is the byte offset in the literal
// of the place at fault.
type Error struct {
	Offset int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// Parse splits a format literal into text and placeholders. It reports the
// first malformed brace or spec.
func Parse(lit string) ([]Piece, *Error) {
	pieces := make([]Piece, 0, 4) // never nil: the lowering tells a checked call by it
	var text []byte
	textAt := 0
	flush := func(end int) {
		if len(text) > 0 {
			pieces = append(pieces, Piece{Text: string(text), Arg: -1, Offset: textAt, End: end})
			text = text[:0]
		}
	}
	args := 0
	for i := 0; i < len(lit); {
		c := lit[i]
		switch {
		case c == '{' && i+1 < len(lit) && lit[i+1] == '{', c == '}' && i+1 < len(lit) && lit[i+1] == '}':
			if len(text) == 0 {
				textAt = i
			}
			text = append(text, c)
			i += 2
		case c == '}':
			return nil, &Error{i, "unmatched } in format literal (write }} for a brace)"}
		case c == '{':
			end := i + 1
			for end < len(lit) && lit[end] != '}' && lit[end] != '{' {
				end++
			}
			if end == len(lit) || lit[end] == '{' {
				return nil, &Error{i, "unclosed { in format literal (write {{ for a brace)"}
			}
			body := lit[i+1 : end]
			spec := Spec{Precision: -1}
			if body != "" {
				if body[0] != ':' {
					return nil, &Error{i, "placeholder {" + body + "} names an argument: placeholders take the arguments in order, write {} or {:spec}"}
				}
				var err *Error
				spec, err = parseSpec(body[1:], i+2)
				if err != nil {
					return nil, err
				}
			}
			flush(i)
			pieces = append(pieces, Piece{Arg: args, Spec: spec, Offset: i, End: end + 1})
			args++
			i = end + 1
		default:
			if len(text) == 0 {
				textAt = i
			}
			text = append(text, c)
			i++
		}
	}
	flush(len(lit))
	return pieces, nil
}

// parseSpec parses the text after a placeholder's colon; at is its
// offset in the literal.
func parseSpec(s string, at int) (Spec, *Error) {
	spec := Spec{Precision: -1}
	bad := func(i int, msg string) (Spec, *Error) {
		return Spec{}, &Error{at + i, "bad format spec \"" + s + "\": " + msg}
	}
	i := 0
	// [[fill] align]: a fill is any code point followed by an align.
	if r, n := utf8.DecodeRuneInString(s); n > 0 && n < len(s) && alignOf(s[n]) != AlignDefault {
		if r == utf8.RuneError && n == 1 {
			return bad(0, "the fill is not valid UTF-8")
		}
		spec.Fill, spec.Align = r, alignOf(s[n])
		i = n + 1
	} else if len(s) > 0 && alignOf(s[0]) != AlignDefault {
		spec.Align = alignOf(s[0])
		i = 1
	}
	if i < len(s) && s[i] == '0' {
		spec.Zero = true
		i++
	}
	digits := func() (int, bool) {
		start, n := i, 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if n <= MaxWidth {
				n = n*10 + int(s[i]-'0')
			}
			i++
		}
		return n, i > start
	}
	start := i
	if w, ok := digits(); ok {
		if w > MaxWidth {
			return bad(start, "width above "+strconv.Itoa(MaxWidth))
		}
		spec.Width = w
	}
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		p, ok := digits()
		if !ok {
			return bad(i, "a precision needs digits after the point")
		}
		if p > MaxPrecision {
			return bad(start, "precision above "+strconv.Itoa(MaxPrecision))
		}
		spec.Precision = p
	}
	if i < len(s) && (s[i] == 'x' || s[i] == 'b') {
		spec.Type = s[i]
		i++
	}
	if i < len(s) {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return bad(i, "unexpected "+strconv.QuoteRune(r)+" (the form is [[fill]align][0][width][.precision][x|b], align one of < > ^)")
	}
	return spec, nil
}

func alignOf(c byte) Align {
	switch c {
	case '<':
		return AlignLeft
	case '>':
		return AlignRight
	case '^':
		return AlignCenter
	}
	return AlignDefault
}

// Kind is what the checker knows of an argument's type for Fits.
type Kind uint8

// Argument kinds.
const (
	Other Kind = iota
	Int
	Float
)

// Fits says why the spec does not fit an argument of kind k, or "".
func (s Spec) Fits(k Kind) string {
	switch {
	case s.Precision >= 0 && k != Float:
		return "a precision (.N) is only for floats"
	case s.Type != 0 && k != Int:
		return "type " + string(rune(s.Type)) + " is only for ints"
	case s.Zero && k != Int && k != Float:
		return "zero padding (0) is only for ints and floats"
	}
	return ""
}

// Bit layout of a packed spec: the fill's code point, the align, the zero
// flag, the type, whether there is a precision, the width, the precision.
const (
	fillBits   = 21
	alignShift = 21
	zeroBit    = 1 << 23
	hexBit     = 1 << 24
	binBit     = 1 << 25
	precBit    = 1 << 26
	widthShift = 32
	precShift  = 48
	fieldMask  = 1<<16 - 1
)

// Pack encodes the spec as a non-negative int, with the default align
// resolved for an argument that is a number or not.
func (s Spec) Pack(number bool) int64 {
	align := s.Align
	if align == AlignDefault {
		align = AlignLeft
		if number {
			align = AlignRight
		}
	}
	fill := s.Fill
	if fill == 0 {
		fill = ' '
	}
	p := int64(fill) | int64(align)<<alignShift | int64(s.Width)<<widthShift
	if s.Zero {
		p |= zeroBit
	}
	switch s.Type {
	case 'x':
		p |= hexBit
	case 'b':
		p |= binBit
	}
	if s.Precision >= 0 {
		p |= precBit | int64(s.Precision)<<precShift
	}
	return p
}

// Unpack decodes a packed spec. The align is never AlignDefault and the
// fill never 0 for a spec that Pack made.
func Unpack(p int64) Spec {
	s := Spec{
		Fill:      rune(p & (1<<fillBits - 1)),
		Align:     Align(p >> alignShift & 3),
		Zero:      p&zeroBit != 0,
		Width:     int(p >> widthShift & fieldMask),
		Precision: -1,
	}
	switch {
	case p&hexBit != 0:
		s.Type = 'x'
	case p&binBit != 0:
		s.Type = 'b'
	}
	if p&precBit != 0 {
		s.Precision = int(p >> precShift & fieldMask)
	}
	return s
}

// Base is the spec type's number base: 16, 2 or 10.
func (s Spec) Base() int {
	switch s.Type {
	case 'x':
		return 16
	case 'b':
		return 2
	}
	return 10
}

// Pad appends body laid out in the spec's width to buf. zeros says body
// is a finite number, which a zero flag pads with zeros after its sign;
// anything else is padded with the fill on the side the align says.
func (s Spec) Pad(buf []byte, body string, zeros bool) []byte {
	n := s.Width - utf8.RuneCountInString(body)
	if n <= 0 {
		return append(buf, body...)
	}
	if s.Zero && zeros {
		if body != "" && (body[0] == '-' || body[0] == '+') {
			buf = append(buf, body[0])
			body = body[1:]
		}
		for ; n > 0; n-- {
			buf = append(buf, '0')
		}
		return append(buf, body...)
	}
	fill, align := s.Fill, s.Align
	if s.Zero { // a non-finite number: right-aligned with spaces
		fill, align = ' ', AlignRight
	}
	left := 0
	switch align {
	case AlignRight:
		left = n
	case AlignCenter:
		left = n / 2
	}
	buf = appendFill(buf, fill, left)
	buf = append(buf, body...)
	return appendFill(buf, fill, n-left)
}

func appendFill(buf []byte, fill rune, n int) []byte {
	for ; n > 0; n-- {
		buf = utf8.AppendRune(buf, fill)
	}
	return buf
}
