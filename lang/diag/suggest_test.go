package diag

import "testing"

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
