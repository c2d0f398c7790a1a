package diag

import (
	"strings"
	"testing"

	"github.com/hale-lang/hale/lang/ast"
)

func TestRenderShowsLineAndCaret(t *testing.T) {
	src := map[string][]byte{"app.hl": []byte("fn f() {\n\tlet x = 1 +;\n}\n")}
	var l List
	l.Add(ast.Pos{File: "app.hl", Line: 2, Col: 13}, "E0101", "unexpected %q", ";")
	got := Render(l, func(p string) []byte { return src[p] })
	want := "app.hl:2:13: unexpected \";\" [E0101]\n    \tlet x = 1 +;\n    \t           ^\n"
	if got != want {
		t.Errorf("Render:\n%q\nwant\n%q", got, want)
	}
}

// The column counts bytes, but the caret is indented by characters, so a
// line with multi-byte characters before the column still lines up.
func TestRenderCaretAfterMultiByteCharacters(t *testing.T) {
	src := map[string][]byte{"mb.hl": []byte("fn f() { let s = \"ééé\"; let x = y; }\n")}
	var l List
	l.Add(ast.Pos{File: "mb.hl", Line: 1, Col: 36}, "E0201", "undefined name %q", "y")
	got := Render(l, func(p string) []byte { return src[p] })
	want := "mb.hl:1:36: undefined name \"y\" [E0201]\n    fn f() { let s = \"ééé\"; let x = y; }\n    " + strings.Repeat(" ", 32) + "^\n"
	if got != want {
		t.Errorf("Render:\n%s\nwant\n%s", got, want)
	}
}

func TestRenderWithoutSource(t *testing.T) {
	var l List
	l.Add(ast.Pos{File: "gone.hl", Line: 9, Col: 1}, "E0201", "undefined name %q", "x")
	got := Render(l, func(string) []byte { return nil })
	if want := "gone.hl:9:1: undefined name \"x\" [E0201]\n"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}

func TestSortOrdersAndDeduplicates(t *testing.T) {
	var l List
	l.Add(ast.Pos{File: "b.hl", Line: 1, Col: 1}, "E1", "b")
	l.Add(ast.Pos{File: "a.hl", Line: 3, Col: 2}, "E1", "late")
	l.Add(ast.Pos{File: "a.hl", Line: 3, Col: 1}, "E1", "early")
	l.Add(ast.Pos{File: "a.hl", Line: 3, Col: 1}, "E1", "early")
	got := l.Sort()
	if len(got) != 3 || got[0].Msg != "early" || got[1].Msg != "late" || got[2].Msg != "b" {
		t.Fatalf("Sort = %v", got)
	}
	if got.Err() == nil || List(nil).Err() != nil {
		t.Fatal("Err: want non-nil for a non-empty list and nil for an empty one")
	}
}

// Control characters of the source line and of the message are escaped
// as %q would, tabs excepted, and the caret counts the escapes' width.
func TestRenderEscapesControlCharacters(t *testing.T) {
	src := map[string][]byte{"a\x1b.hl": []byte("fn f() { let s = \"\x1b[2J\a\"; \tlet x = y; }\n")}
	var l List
	l.Add(ast.Pos{File: "a\x1b.hl", Line: 1, Col: 36}, "E0201", "undefined name %q", "y")
	got := Render(l, func(p string) []byte { return src[p] })
	want := `a\x1b.hl:1:36: undefined name "y" [E0201]` + "\n" +
		`    fn f() { let s = "\x1b[2J\a"; ` + "\tlet x = y; }\n" +
		"    " + strings.Repeat(" ", 30) + "\t" + strings.Repeat(" ", 8) + "^\n"
	if got != want {
		t.Errorf("Render:\n%s\nwant\n%s", got, want)
	}
	for _, c := range got {
		if c < ' ' && c != '\n' && c != '\t' {
			t.Fatalf("Render wrote control character %q: %q", c, got)
		}
	}
}

// A long line is cut to a window around the column, marked with "..."
// on each side cut, and the caret still points at the column.
func TestRenderCutsLongLines(t *testing.T) {
	long := "fn f() -> int { return " + strings.Repeat("1+", 5000) + "x; }"
	col := strings.Index(long, "x;") + 1
	for _, tt := range []struct {
		name   string
		col    int
		target string // what the caret must point at
		before bool   // a marker before the window
		after  bool   // a marker after it
	}{
		{"middle", col - 5000, "1", true, true},
		{"near the end", col, "x", true, false},
		{"start", 1, "f", false, true},
		{"past the end", len(long) + 1, "", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var l List
			l.Add(ast.Pos{File: "big.hl", Line: 2, Col: tt.col}, "E0201", "here")
			got := Render(l, func(string) []byte { return []byte("// first\n" + long + "\n") })
			parts := strings.Split(got, "\n")
			if len(parts) != 4 {
				t.Fatalf("Render = %q", got)
			}
			shown, caret := strings.TrimPrefix(parts[1], "    "), strings.TrimPrefix(parts[2], "    ")
			if n := len([]rune(shown)); n > MaxLineWidth {
				t.Errorf("echoed %d characters, more than %d: %q", n, MaxLineWidth, shown)
			}
			if strings.HasPrefix(shown, "...") != tt.before || strings.HasSuffix(shown, "...") != tt.after {
				t.Errorf("markers: %q, want before %v after %v", shown, tt.before, tt.after)
			}
			i := len(caret) - 1
			if caret[i] != '^' || strings.TrimSpace(caret[:i]) != "" {
				t.Fatalf("caret line %q", caret)
			}
			if tt.target == "" {
				if i != len(shown) && !strings.HasSuffix(shown, "...") {
					t.Errorf("caret at %d, want past the end of %q", i, shown)
				}
				return
			}
			if i >= len(shown) || shown[i:i+1] != tt.target {
				t.Errorf("caret at %d of %q, want it under %q", i, shown, tt.target)
			}
			if want := long[tt.col-1 : min(tt.col-1+10, len(long))]; !strings.HasPrefix(shown[i:], want[:min(len(want), len(shown)-i)]) {
				t.Errorf("the window from the caret reads %q, want %q", shown[i:], want)
			}
		})
	}
}
