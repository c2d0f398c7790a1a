// Package termsafe makes untrusted text safe to print on a terminal. The
// reports hale writes itself (diagnostics with their source lines, trace
// summaries, replay reports, the inspector's views, error messages) show
// text that comes from files a user may not have written: a source file, a
// recording made elsewhere, a forged artifact. A raw ESC or BEL in such
// text would reach the terminal and could move the cursor, retitle the
// window or hide the rest of the report, so every such report passes its
// untrusted text through String.
//
// String escapes as Go's %q verb does, without the surrounding quotes: a
// character that is not printable (strconv.IsPrint) becomes \a, \b, \f,
// \n, \r, \v, \xHH, \uHHHH or \UHHHHHHHH, and a byte that is not valid
// UTF-8 becomes \xHH. Tab is kept, because it only moves the cursor right
// and source lines are indented with it. Unlike %q, quotes and
// backslashes are kept as they are, so that a source line still reads as
// its source; the escaping is for display and is not meant to be
// reversed.
//
// The program's own output (print, std::io) is never passed through it.
//
// The package imports only the standard library, so that every layer
// (lang/diag, replay, the command line) can use it.
package termsafe

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// String returns s with every character that is not printable, except
// tab, escaped as Go's %q would escape it (see the package comment).
// Escaping is idempotent: String(String(s)) == String(s).
func String(s string) string {
	i := unsafeIndex(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[s[i]>>4])
			b.WriteByte(hexDigits[s[i]&0xf])
		case r == '\t' || strconv.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\n', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

const hexDigits = "0123456789abcdef"

// Lines is String applied to each line of s: the line breaks ('\n')
// themselves are kept. It is for whole reports whose lines are separated
// by newlines, as a last line of defence behind the escaping of each
// value they show.
func Lines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = String(l)
	}
	return strings.Join(lines, "\n")
}

// unsafeIndex returns the index of the first byte of s that String would
// change, or -1.
func unsafeIndex(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < ' ' && c != '\t') || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || !strconv.IsPrint(r) {
			return i
		}
		i += size
	}
	return -1
}

// JSON escapes, in JSON text such as encoding/json writes, every
// character that is not printable as a \uHHHH escape (a surrogate pair
// above U+FFFF). encoding/json already escapes the C0 controls but passes
// DEL, the C1 controls (U+0080 to U+009F, which some terminals obey) and
// invisible format characters through; the JSON value is the same after
// escaping, since such characters can only stand inside JSON strings.
func JSON(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == '\t' || r == '\n' || strconv.IsPrint(r) || (r == utf8.RuneError && size == 1) {
			if out != nil {
				out = append(out, b[i:i+size]...)
			}
			i += size
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(b)+16), b[:i]...)
		}
		if r > 0xffff {
			r -= 0x10000
			out = appendU(appendU(out, 0xd800+(r>>10)), 0xdc00+(r&0x3ff))
		} else {
			out = appendU(out, r)
		}
		i += size
	}
	if out == nil {
		return b
	}
	return out
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// JSONWriter returns a writer that passes JSON text to w through JSON.
// Each Write must hold whole characters, as json.Encoder's do (one
// encoded value each).
func JSONWriter(w io.Writer) io.Writer { return jsonWriter{w} }

type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(p []byte) (int, error) {
	if _, err := j.w.Write(JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
