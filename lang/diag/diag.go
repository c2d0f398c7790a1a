// Package diag holds the compile-time diagnostics of the Hale front end:
// an Error carries a position, a stable code and a message, a List collects
// every error a phase finds, and Render prints them the way `hale check`
// shows them, each with its source line and a caret under the column:
//
//	app.hl:3:12: undefined name "totl" [E0201]
//	    total += totl;
//	             ^
package diag

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hale-lang/hale/internal/termsafe"
	"github.com/hale-lang/hale/lang/ast"
)

// Code is a stable diagnostic code. Codes never change meaning once
// released; docs/language.md lists them.
type Code string

// Severity says whether a diagnostic stops the build.
type Severity uint8

// Severities. The zero value is an error, so a diagnostic is an error
// unless it says otherwise.
const (
	SevError   Severity = iota // the program is rejected
	SevWarning                 // reported, but the program is accepted (codes W…)
)

// String returns "error" or "warning".
func (s Severity) String() string {
	if s == SevWarning {
		return "warning"
	}
	return "error"
}

// Error is one diagnostic.
type Error struct {
	Pos      ast.Pos
	End      ast.Pos // where the offending text ends; zero when unknown
	Code     Code
	Msg      string
	Severity Severity
	Hints    []string // suggestions, e.g. `did you mean "count"?`
}

// Error formats the diagnostic as file:line:col: message [code], followed
// by its hints in parentheses.
func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s", e.Pos, e.Msg)
	if e.Code != "" {
		s += " [" + string(e.Code) + "]"
	}
	for _, h := range e.Hints {
		s += " (" + h + ")"
	}
	return s
}

// Span returns the diagnostic's first and last positions; the last is the
// first when the end is unknown.
func (e *Error) Span() (from, to ast.Pos) {
	if e.End.Line == 0 {
		return e.Pos, e.Pos
	}
	return e.Pos, e.End
}

// List is an ordered collection of diagnostics. The zero value is ready.
type List []*Error

// Add appends a diagnostic.
func (l *List) Add(pos ast.Pos, code Code, format string, args ...any) {
	*l = append(*l, &Error{Pos: pos, Code: code, Msg: fmt.Sprintf(format, args...)})
}

// Sort orders the list by file, line and column, keeping the order of
// diagnostics at the same position, and drops exact duplicates.
func (l List) Sort() List {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	out := l[:0]
	for i, e := range l {
		if i > 0 && e.Pos == l[i-1].Pos && e.Msg == l[i-1].Msg {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Err returns the list as an error, or nil when it holds no error
// (warnings alone do not make it fail).
func (l List) Err() error {
	if !l.HasErrors() {
		return nil
	}
	return l
}

// HasErrors reports whether the list holds a diagnostic of severity error.
func (l List) HasErrors() bool {
	for _, e := range l {
		if e.Severity == SevError {
			return true
		}
	}
	return false
}

// Hint adds hints to the last diagnostic of the list.
func (l List) Hint(hints ...string) {
	if len(l) > 0 {
		e := l[len(l)-1]
		e.Hints = append(e.Hints, hints...)
	}
}

// Error joins the diagnostics one per line.
func (l List) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// MaxLineWidth is the most characters of a source line Render echoes. A
// longer line (a generated or minified file) is cut to a window of about
// that many characters around the column, with "..." marking each side
// that was cut, so that the caret still points at the column.
const MaxLineWidth = 120

// cutMarker marks the side of an echoed source line that was cut.
const cutMarker = "..."

// Render writes every diagnostic followed by its source line and a caret
// under the column. source returns a file's bytes by logical path (nil
// when unknown, in which case only the message line is printed).
//
// What Render writes is safe to print on a terminal: control characters
// and other unprintable characters of the message (which may quote a file
// name) and of the source line are escaped by termsafe.String (ESC shows
// as \x1b), tabs excepted, and the caret counts the escapes' width.
func Render(l List, source func(path string) []byte) string {
	var b strings.Builder
	lines := map[string][]int{} // line start offsets by file, computed once
	for _, e := range l {
		b.WriteString(termsafe.String(e.Error()))
		b.WriteByte('\n')
		if source == nil {
			continue
		}
		src := source(e.Pos.File)
		starts, ok := lines[e.Pos.File]
		if !ok && src != nil {
			starts = lineStarts(src)
			lines[e.Pos.File] = starts
		}
		line, ok := sourceLine(src, starts, e.Pos.Line)
		if !ok {
			continue
		}
		shown, caret := excerpt(line, e.Pos.Col-1)
		b.WriteString("    ")
		b.WriteString(shown)
		b.WriteString("\n    ")
		b.WriteString(caret)
		b.WriteString("^\n")
	}
	return b.String()
}

// lineStarts returns the offset of the first byte of every line of src.
func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

func sourceLine(src []byte, starts []int, n int) (string, bool) {
	if src == nil || n < 1 || n > len(starts) {
		return "", false
	}
	end := len(src)
	if n < len(starts) {
		end = starts[n] - 1
	}
	return strings.TrimRight(string(src[starts[n-1]:end]), "\r"), true
}

// excerpt returns the part of line to echo, escaped and cut to
// MaxLineWidth characters around the byte column col (0-based), and the
// indentation of the caret under col. The column counts bytes; the caret
// is indented by one space per character shown before it (a UTF-8
// character of several bytes takes one, an escape such as \x1b its
// length), and tabs stay tabs, so that it lines up.
func excerpt(line string, col int) (shown, caret string) {
	col = min(max(col, 0), len(line))
	type cell struct {
		text  string
		width int
	}
	var cells []cell
	at := -1 // the cell the caret points at
	total := 0
	for i := 0; i < len(line); {
		_, size := utf8.DecodeRuneInString(line[i:])
		if at < 0 && i >= col {
			at = len(cells)
		}
		text := termsafe.String(line[i : i+size])
		w := utf8.RuneCountInString(text)
		cells = append(cells, cell{text, w})
		total += w
		i += size
	}
	if at < 0 {
		at = len(cells)
	}
	from, to := 0, len(cells)
	if total > MaxLineWidth {
		// A window of cells around the caret, half before it if the line
		// allows, the room left over after it.
		budget := MaxLineWidth - 2*len(cutMarker)
		from, to = at, at
		width := 0
		for from > 0 && width+cells[from-1].width <= budget/2 {
			from--
			width += cells[from].width
		}
		for to < len(cells) && width+cells[to].width <= budget {
			width += cells[to].width
			to++
		}
		for from > 0 && width+cells[from-1].width <= budget {
			from--
			width += cells[from].width
		}
	}
	var s, c strings.Builder
	if from > 0 {
		s.WriteString(cutMarker)
		c.WriteString(strings.Repeat(" ", len(cutMarker)))
	}
	for i := from; i < to; i++ {
		s.WriteString(cells[i].text)
		if i >= at {
			continue
		}
		if cells[i].text == "\t" {
			c.WriteByte('\t')
		} else {
			c.WriteString(strings.Repeat(" ", cells[i].width))
		}
	}
	if to < len(cells) {
		s.WriteString(cutMarker)
	}
	return s.String(), c.String()
}
