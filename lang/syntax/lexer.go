package syntax

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2/lexer"

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
}

// lexDef is the participle lexer. Rules are tried in order and the first
// match wins; rules with lower-case names are elided by participle. Each
// attempt costs time proportional to the rest of the input (up to a bound),
// so the frequent tokens come first. The Open… rules catch unterminated
// literals and comments so that they get an error at their start; the final
// rule takes any other character, so the lexer itself never fails and the
// parser reports the character.
//
// A bytes literal b"…" lexes as the identifier b immediately followed by a
// string; lex joins the two. Numbers are matched broadly (trailing letters
// and digits included) and validated by scanNumber, which can then point at
// the offending character instead of splitting "0x1g" into a number and an
// identifier.
var lexDef = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "whitespace", Pattern: `[ \t\r\n]+`},
	{Name: "Ident", Pattern: `[A-Za-z_][A-Za-z0-9_]*`},
	{Name: "Punct", Pattern: `::|\.\.|=>|->|==|!=|<<=|>>=|<<|>>|<=|>=|&&|\|\||\+\+|:=|\+=|-=|\*=|%=|&=|\|=|\^=|[-+*%<>=!.,:;(){}\[\]@&|^]`},
	{Name: "Number", Pattern: `0[xXbB][0-9A-Za-z_]*` +
		`|[0-9][0-9_]*(?:\.[0-9][0-9_]*(?:[eE][+-]?[0-9_]*)?|[eE][+-]?[0-9_]*)[0-9A-Za-z_]*` +
		`|[0-9][0-9A-Za-z_]*`},
	{Name: "String", Pattern: `"(?:[^"\\\n]|\\[^\n])*"`},
	{Name: "comment", Pattern: `//[^\n]*|/\*(?s:.)*?\*/`},
	{Name: "OpenComment", Pattern: `/\*(?s:.)*`},
	{Name: "Slash", Pattern: `/=|/`}, // after the comments: "//" and "/*" start comments
	{Name: "OpenString", Pattern: `"[^\n]*`},
	{Name: "Char", Pattern: `(?s:.)`},
})

var (
	symbols   = lexDef.Symbols()
	tyIdent   = symbols["Ident"]
	tyNumber  = symbols["Number"]
	tyString  = symbols["String"]
	tyPunct   = symbols["Punct"]
	tySlash   = symbols["Slash"]
	tyOpenStr = symbols["OpenString"]
	tyOpenCom = symbols["OpenComment"]
)

// lex turns src into tokens, ending with one kEOF token. Lexical errors
// (bad characters, unterminated literals, bad escapes, malformed numbers)
// are added to p.errs; the token stays in the stream (as kBad when it has
// no usable value) so parsing can go on.
func (p *parser) lex(src string) []token {
	lx, err := lexDef.LexString(p.path, src)
	if err != nil {
		p.errorAt(0, "E0101", "%v", err)
		return []token{{kind: kEOF, off: len(src), end: len(src)}}
	}
	toks := make([]token, 0, len(src)/4+1)
	for {
		t, err := lx.Next()
		if err != nil {
			// Unreachable: the Char rule matches anything left.
			p.errorAt(len(src), "E0101", "%v", err)
			break
		}
		if t.EOF() {
			break
		}
		tok := token{text: t.Value, off: t.Pos.Offset, end: t.Pos.Offset + len(t.Value)}
		bytes := false
		if n := len(toks); n > 0 && (t.Type == tyString || t.Type == tyOpenStr) &&
			toks[n-1].kind == kIdent && toks[n-1].text == "b" && toks[n-1].end == tok.off {
			bytes = true
			tok.off--
			tok.text = src[tok.off:tok.end]
			toks = toks[:n-1]
		}
		switch t.Type {
		case tyIdent:
			tok.kind = kIdent
			if keywords[t.Value] {
				tok.kind = kKeyword
			}
		case tyPunct, tySlash:
			tok.kind = kPunct
		case tyNumber:
			p.scanNumber(&tok)
		case tyString:
			tok.kind = kString
			if bytes {
				tok.kind = kBytes
			}
			tok.sval = p.unquote(t.Value[1:len(t.Value)-1], t.Pos.Offset+1, bytes)
		case tyOpenStr:
			tok.kind = kBad
			if bytes {
				p.errorAt(tok.off, "E0103", "bytes literal not terminated")
			} else {
				p.errorAt(tok.off, "E0103", "string literal not terminated")
			}
		case tyOpenCom:
			tok.kind = kBad
			p.errorAt(tok.off, "E0104", "comment not terminated")
		default:
			tok.kind = kBad
			p.errorAt(tok.off, "E0102", "invalid character %s%s", quoteChar(t.Value), charHint(t.Value))
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
