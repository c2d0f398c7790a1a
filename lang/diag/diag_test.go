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
