package diag

import (
	"testing"

	"github.com/hale-lang/hale/lang/ast"
)

func TestClosest(t *testing.T) {
	names := []string{"count", "counter", "total", "amount", "xs", "ab", "bat", "cat"}
	for _, c := range []struct{ name, want string }{
		{"cuont", "count"},  // two substitutions
		{"coutn", "count"},  // a transposition is two edits
		{"count", "amount"}, // an exact name is skipped; "amount" and "counter" are two edits away, "amount" sorts first
		{"totl", "total"},   // a deletion
		{"amout", "amount"},
		{"zat", "bat"},   // one substitution from both "bat" and "cat": "bat" sorts first
		{"xy", ""},       // two characters: no suggestion
		{"abcdefg", ""},  // nothing within 2
		{"countxyz", ""}, // three insertions
	} {
		if got := Closest(c.name, names); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"abc", "abc", 0}} {
		if got := editDistance(c.a, c.b, 10); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

// TestWarningsDoNotFail: a list of warnings alone is not an error, and
// hints print after the message.
func TestWarningsDoNotFail(t *testing.T) {
	var l List
	l.Add(ast.Pos{File: "a.hl", Line: 1, Col: 2}, "W0101", "header %q withheld", "X-Api-Key")
	l[0].Severity = SevWarning
	if l.HasErrors() || l.Err() != nil {
		t.Fatalf("warnings only: HasErrors %v, Err %v", l.HasErrors(), l.Err())
	}
	l.Add(ast.Pos{File: "a.hl", Line: 2, Col: 1}, "E0201", "undefined name %q", "cuont")
	l.Hint(`did you mean "count"?`)
	if !l.HasErrors() || l.Err() == nil {
		t.Fatal("an error in the list: not reported")
	}
	if got, want := l[1].Error(), `a.hl:2:1: undefined name "cuont" [E0201] (did you mean "count"?)`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if l[0].Severity.String() != "warning" || l[1].Severity.String() != "error" {
		t.Errorf("severities %s, %s", l[0].Severity, l[1].Severity)
	}
	if from, to := l[1].Span(); from != to {
		t.Errorf("span without an end: %v..%v", from, to)
	}
}
