package syntax

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hale-lang/hale/lang/diag"
)

// tokKind classifies a token. Keywords and operators share kKeyword and
// kPunct; the parser compares their text.
type tokKind uint8

const (
	kEOF tokKind = iota
	kIdent
	kKeyword
	kPunct
	kInt
	kFloat
	kString
	kBytes
	kBad // a lexical error, already reported
)

// token is one lexed token with its decoded literal value.
type token struct {
	kind     tokKind
	text     string // source text
	off, end int    // byte offsets [off, end)
	ival     uint64 // kInt
	fval     float64
	sval     string // kString, kBytes: decoded value
}

// keywords are exactly the reserved words of docs/language.md. The type names
// int, float, bool, string and bytes are identifiers.
var keywords = map[string]bool{
	"import": true, "const": true, "type": true, "enum": true, "topic": true,
	"fn": true, "locus": true, "main": true, "on": true, "start": true,
	"var": true, "let": true, "if": true, "else": true, "while": true,
	"for": true, "in": true, "match": true, "return": true, "break": true,
	"continue": true, "publish": true, "spawn": true, "as": true,
	"pinned": true, "pool": true, "async_io": true, "bind": true,
	"stdin": true, "to": true, "true": true, "false": true,
	"try": true,
}

// rule is the lexical rule a token matched. The rules are those of a
// regular-expression lexer, tried in order with the first match winning
// (the reference definition, with participle, is lexDef in
// lexer_test.go, which checks that scan agrees with it); scan implements
// them by hand, because the regular expressions cost about half a
// microsecond a byte, most of the time spent on a large source:
//
//	whitespace   [ \t\r\n]+                       (skipped)
//	Ident        [A-Za-z_][A-Za-z0-9_]*
//	Punct        ::|\.\.|=>|->|==|!=|<<=|>>=|<<|>>|<=|>=|&&|\|\||\+\+|:=|\+=|-=|\*=|%=|&=|\|=|\^=
//	             |[-+*%<>=!.,:;(){}\[\]@&|^?]
//	Number       0[xXbB][0-9A-Za-z_]*
//	             |[0-9][0-9_]*(?:\.[0-9][0-9_]*(?:[eE][+-]?[0-9_]*)?|[eE][+-]?[0-9_]*)[0-9A-Za-z_]*
//	             |[0-9][0-9A-Za-z_]*
//	String       "(?:[^"\\\n]|\\[^\n])*"
//	comment      //[^\n]*|/\*(?s:.)*?\*/         (skipped)
//	OpenComment  /\*(?s:.)*
//	Slash        /=|/                             (after the comments)
//	OpenString   "[^\n]*
//	Char         (?s:.)                           (any other character)
//
// The Open… rules catch unterminated literals and comments so that they
// get an error at their start; Char takes any other character (or byte
// that is not UTF-8), so the lexer itself never fails and the parser
// reports the character.
//
// A bytes literal b"…" lexes as the identifier b immediately followed by a
// string; lex joins the two. Numbers are matched broadly (trailing letters
// and digits included) and validated by scanNumber, which can then point at
// the offending character instead of splitting "0x1g" into a number and an
// identifier.
type rule uint8

const (
	ruleWhitespace rule = iota
	ruleIdent
	rulePunct
	ruleNumber
	ruleString
	ruleComment
	ruleOpenComment
	ruleSlash
	ruleOpenString
	ruleChar
)

// threeCharPuncts are the operators of three characters, which win over
// their first two characters (and their first) alone.
var threeCharPuncts = map[string]bool{"<<=": true, ">>=": true}

// twoCharPuncts are the operators of two characters, which win over
// their first character alone.
var twoCharPuncts = map[string]bool{
	"::": true, "..": true, "=>": true, "->": true, "==": true, "!=": true, "<<": true, ">>": true,
	"<=": true, ">=": true, "&&": true, "||": true, "++": true, ":=": true, "+=": true, "-=": true,
	"*=": true, "%=": true, "&=": true, "|=": true, "^=": true,
}

// oneCharPuncts are the operators and delimiters of one character.
const oneCharPuncts = "-+*%<>=!.,:;(){}[]@&|^?"

func isIdentStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' }
func isDecimal(c byte) bool    { return c >= '0' && c <= '9' }

// scan returns the rule the token starting at src[i] matches and the
// offset just past it; i < len(src).
func scan(src string, i int) (rule, int) {
	c := src[i]
	// skip advances j past the bytes that ok accepts.
	skip := func(j int, ok func(byte) bool) int {
		for j < len(src) && ok(src[j]) {
			j++
		}
		return j
	}
	switch {
	case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		return ruleWhitespace, skip(i, func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' })
	case isIdentStart(c):
		return ruleIdent, skip(i+1, isIdentChar)
	case isDecimal(c):
		return ruleNumber, scanNumberEnd(src, i)
	case c == '"':
		for j := i + 1; j < len(src); j++ {
			switch src[j] {
			case '"':
				return ruleString, j + 1
			case '\n':
				return ruleOpenString, j
			case '\\':
				if j+1 >= len(src) || src[j+1] == '\n' {
					return ruleOpenString, skip(j, func(c byte) bool { return c != '\n' })
				}
				// The escaped character may be several bytes long; its
				// continuation bytes are not '"', '\\' or '\n' anyway.
				j++
			}
		}
		return ruleOpenString, len(src)
	case c == '/':
		if i+1 < len(src) {
			switch src[i+1] {
			case '/':
				return ruleComment, skip(i, func(c byte) bool { return c != '\n' })
			case '*':
				if k := strings.Index(src[i+2:], "*/"); k >= 0 {
					return ruleComment, i + 2 + k + 2
				}
				return ruleOpenComment, len(src)
			case '=':
				return ruleSlash, i + 2
			}
		}
		return ruleSlash, i + 1
	}
	if i+2 < len(src) && threeCharPuncts[src[i:i+3]] {
		return rulePunct, i + 3
	}
	if i+1 < len(src) && twoCharPuncts[src[i:i+2]] {
		return rulePunct, i + 2
	}
	if strings.IndexByte(oneCharPuncts, c) >= 0 {
		return rulePunct, i + 1
	}
	_, size := utf8.DecodeRuneInString(src[i:])
	return ruleChar, i + size
}

// scanNumberEnd returns the end of the Number token starting with the
// decimal digit at src[i], following the three alternatives of the rule
// in order.
func scanNumberEnd(src string, i int) int {
	alnum := func(j int) int {
		for j < len(src) && isIdentChar(src[j]) {
			j++
		}
		return j
	}
	if i+1 < len(src) && src[i] == '0' && strings.IndexByte("xXbB", src[i+1]) >= 0 {
		return alnum(i + 2)
	}
	j := i + 1
	for j < len(src) && (isDecimal(src[j]) || src[j] == '_') {
		j++
	}
	exponent := func(j int) int { // src[j] is 'e' or 'E'
		j++
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		return alnum(j)
	}
	switch {
	case j+1 < len(src) && src[j] == '.' && isDecimal(src[j+1]):
		j += 2
		for j < len(src) && (isDecimal(src[j]) || src[j] == '_') {
			j++
		}
		if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
			return exponent(j)
		}
		return alnum(j)
	case j < len(src) && (src[j] == 'e' || src[j] == 'E'):
		return exponent(j)
	}
	return alnum(i + 1)
}

// lex turns src into tokens, ending with one kEOF token. Lexical errors
// (bad characters, unterminated literals, bad escapes, malformed numbers)
// are added to p.errs; the token stays in the stream (as kBad when it has
// no usable value) so parsing can go on.
func (p *parser) lex(src string) []token {
	toks := make([]token, 0, len(src)/4+1)
	for off := 0; off < len(src); {
		r, end := scan(src, off)
		text := src[off:end]
		off = end
		if r == ruleWhitespace || r == ruleComment {
			continue
		}
		tok := token{text: text, off: end - len(text), end: end}
		bytes := false
		if n := len(toks); n > 0 && (r == ruleString || r == ruleOpenString) &&
			toks[n-1].kind == kIdent && toks[n-1].text == "b" && toks[n-1].end == tok.off {
			bytes = true
			tok.off--
			tok.text = src[tok.off:tok.end]
			toks = toks[:n-1]
		}
		switch r {
		case ruleIdent:
			tok.kind = kIdent
			if keywords[text] {
				tok.kind = kKeyword
			}
		case rulePunct, ruleSlash:
			tok.kind = kPunct
		case ruleNumber:
			p.scanNumber(&tok)
		case ruleString:
			tok.kind = kString
			if bytes {
				tok.kind = kBytes
			}
			tok.sval = p.unquote(text[1:len(text)-1], end-len(text)+1, bytes)
		case ruleOpenString:
			tok.kind = kBad
			if bytes {
				p.errorAt(tok.off, "E0103", "bytes literal not terminated")
			} else {
				p.errorAt(tok.off, "E0103", "string literal not terminated")
			}
		case ruleOpenComment:
			tok.kind = kBad
			p.errorAt(tok.off, "E0104", "comment not terminated")
		default:
			tok.kind = kBad
			p.errorAt(tok.off, "E0102", "invalid character %s%s", quoteChar(text), charHint(text))
		}
		toks = append(toks, tok)
	}
	return append(toks, token{kind: kEOF, off: len(src), end: len(src)})
}

func quoteChar(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	if r < ' ' || r == utf8.RuneError || r == 0x7f {
		return fmt.Sprintf("%U", r)
	}
	return strconv.Quote(s)
}

func charHint(s string) string {
	switch s {
	case "'":
		return " (strings use double quotes)"
	}
	return ""
}

// scanNumber validates and decodes a Number token.
//
// Grammar decisions (documented in the package comment):
//   - decimal `42`, hexadecimal `0xff`/`0XFF`, binary `0b101`; floats
//     `1.5`, `2e-3`, `1.5E+3` (a float needs a digit after the '.');
//   - an underscore must stand between two digits: `1_000`, `0xff_ff`,
//     `1_0.0_1` are fine; `1__0`, `1_`, `0x_ff`, `1_.5`, `1e_3` are not;
//   - a decimal integer of more than one digit cannot start with 0
//     (`007` is rejected rather than guessed to be octal).
func (p *parser) scanNumber(t *token) {
	s := t.text
	t.kind = kInt
	if len(s) > 1 && s[0] == '0' && strings.ContainsRune("xXbB", rune(s[1])) {
		base, name := 16, "hexadecimal"
		if s[1] == 'b' || s[1] == 'B' {
			base, name = 2, "binary"
		}
		digits := s[2:]
		if digits == "" {
			p.errorAt(t.off, "E0106", "%s literal has no digits", name)
			return
		}
		if !p.checkDigits(digits, t.off+2, base, name) {
			return
		}
		v, err := strconv.ParseUint(strings.ReplaceAll(digits, "_", ""), base, 64)
		if err != nil {
			p.errorAt(t.off, "E0107", "integer literal %s does not fit in 64 bits", s)
			return
		}
		t.ival = v
		return
	}
	if strings.ContainsAny(s, ".eE") {
		p.scanFloat(t)
		return
	}
	if !p.checkDigits(s, t.off, 10, "decimal") {
		return
	}
	if len(s) > 1 && s[0] == '0' {
		p.errorAt(t.off, "E0106", "decimal literal %s cannot start with 0", s)
		return
	}
	v, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 10, 64)
	if err != nil {
		p.errorAt(t.off, "E0107", "integer literal %s does not fit in 64 bits", s)
		return
	}
	t.ival = v
}

// checkDigits reports the first character of s that is not a digit of
// base or a well-placed underscore.
func (p *parser) checkDigits(s string, off, base int, name string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			if i == 0 || i == len(s)-1 || !isDigit(s[i-1], base) || !isDigit(s[i+1], base) {
				p.errorAt(off+i, "E0106", "'_' must separate successive digits")
				return false
			}
			continue
		}
		if !isDigit(c, base) {
			p.errorAt(off+i, "E0106", "invalid digit %q in %s literal", c, name)
			return false
		}
	}
	return true
}

func isDigit(c byte, base int) bool {
	switch base {
	case 2:
		return c == '0' || c == '1'
	case 16:
		return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
	}
	return c >= '0' && c <= '9'
}

// scanFloat validates mantissa[.fraction][e[+-]exponent].
func (p *parser) scanFloat(t *token) {
	s := t.text
	t.kind = kFloat
	i := 0
	run := func(what string) bool { // a run of decimal digits with inner underscores
		start := i
		for i < len(s) && (isDigit(s[i], 10) || s[i] == '_') {
			i++
		}
		if i == start {
			p.errorAt(t.off+i, "E0106", "%s has no digits", what)
			return false
		}
		return p.checkDigits(s[start:i], t.off+start, 10, "float")
	}
	if !run("float literal") {
		return
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !run("fraction") {
			return
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !run("exponent") {
			return
		}
	}
	if i < len(s) {
		p.errorAt(t.off+i, "E0106", "invalid character %q in float literal", s[i])
		return
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil || math.IsInf(v, 0) {
		p.errorAt(t.off, "E0107", "float literal %s is out of range", s)
		return
	}
	t.fval = v
}

// unquote decodes the body of a string (or, with bytes, a bytes literal)
// starting at offset off. Escapes: \n \t \r \\ \" \0 \u{X…} (1 to 6 hex
// digits, a Unicode scalar value), and for bytes also \xNN. An invalid
// escape is reported at its backslash and decoding goes on.
func (p *parser) unquote(body string, off int, bytes bool) string {
	if !strings.Contains(body, `\`) {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		at := off + i
		if i+1 >= len(body) { // unreachable: the lexer pairs every '\'
			p.errorAt(at, "E0105", `incomplete escape sequence`)
			break
		}
		e := body[i+1]
		i += 2
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		case '"':
			b.WriteByte('"')
		case '0':
			b.WriteByte(0)
		case 'x':
			if !bytes {
				p.errorAt(at, "E0105", `escape \x is only allowed in bytes literals (use \u{…})`)
				continue
			}
			if i+2 > len(body) || !isDigit(body[i], 16) || !isDigit(body[i+1], 16) {
				p.errorAt(at, "E0105", `escape \x needs exactly two hexadecimal digits`)
				continue
			}
			v, _ := strconv.ParseUint(body[i:i+2], 16, 8)
			b.WriteByte(byte(v))
			i += 2
		case 'u':
			if i >= len(body) || body[i] != '{' {
				p.errorAt(at, "E0105", `escape \u must be written \u{X} with 1 to 6 hexadecimal digits`)
				continue
			}
			j := i + 1
			for j < len(body) && isDigit(body[j], 16) {
				j++
			}
			if j == i+1 || j-(i+1) > 6 || j >= len(body) || body[j] != '}' {
				p.errorAt(at, "E0105", `escape \u must be written \u{X} with 1 to 6 hexadecimal digits`)
				// Skip to a closing brace on this literal, if any, to avoid
				// decoding its digits as text.
				if k := strings.IndexByte(body[i:], '}'); k >= 0 && !strings.ContainsAny(body[i:i+k], `\"`) {
					i += k + 1
				}
				continue
			}
			v, _ := strconv.ParseUint(body[i+1:j], 16, 32)
			i = j + 1
			if v > utf8.MaxRune || v >= 0xD800 && v <= 0xDFFF {
				p.errorAt(at, "E0105", `escape \u{%s} is not a Unicode scalar value`, body[at-off+3:j])
				continue
			}
			b.WriteRune(rune(v))
		default:
			r, size := utf8.DecodeRuneInString(body[i-1:])
			p.errorAt(at, "E0105", `unknown escape sequence \%c`, r)
			i += size - 1
		}
	}
	return b.String()
}

// errorAt records a diagnostic at a byte offset.
func (p *parser) errorAt(off int, code diag.Code, format string, args ...any) {
	if len(p.errs) >= maxErrors {
		return
	}
	p.errs.Add(p.pos(off), code, format, args...)
	// An error at the current token covers it (for check --json).
	if p.i < len(p.toks) && p.toks[p.i].off == off && p.toks[p.i].end > off {
		p.errs[len(p.errs)-1].End = p.pos(p.toks[p.i].end)
	}
}
