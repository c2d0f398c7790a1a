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

// Render writes every diagnostic followed by its source line and a caret
// under the column. source returns a file's bytes by logical path (nil
// when unknown, in which case only the message line is printed).
func Render(l List, source func(path string) []byte) string {
	var b strings.Builder
	for _, e := range l {
		b.WriteString(e.Error())
		b.WriteByte('\n')
		if source == nil {
			continue
		}
		line, ok := sourceLine(source(e.Pos.File), e.Pos.Line)
		if !ok {
			continue
		}
		b.WriteString("    ")
		b.WriteString(line)
		b.WriteString("\n    ")
		// The column counts bytes; the caret is indented by one space per
		// character before it (a UTF-8 character of several bytes takes
		// one), and tabs stay tabs, so that it lines up.
		col := min(max(e.Pos.Col-1, 0), len(line))
		for _, r := range line[:col] {
			if r == '\t' {
				b.WriteByte('\t')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString("^\n")
	}
	return b.String()
}

func sourceLine(src []byte, n int) (string, bool) {
	if src == nil || n < 1 {
		return "", false
	}
	lines := strings.Split(string(src), "\n")
	if n > len(lines) {
		return "", false
	}
	return strings.TrimRight(lines[n-1], "\r"), true
}
