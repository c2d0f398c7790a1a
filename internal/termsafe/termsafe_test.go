package termsafe

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"plain text, with \"quotes\" and a \\ backslash", "plain text, with \"quotes\" and a \\ backslash"},
		{"tab\tstays", "tab\tstays"},
		{"bell\a esc\x1b[2J nul\x00", `bell\a esc\x1b[2J nul\x00`},
		{"line\nbreak\r\n", `line\nbreak\r\n`},
		{"del\x7f c1\u009b", `del\x7f c1\u009b`},
		{"bidi \u202eevil", `bidi \u202eevil`},
		{"bad utf-8 \xff\xfe", `bad utf-8 \xff\xfe`},
		{"café ✓ 日本", "café ✓ 日本"},
	} {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again := String(String(tt.in)); again != String(tt.in) {
			t.Errorf("String is not idempotent on %q: %q", tt.in, again)
		}
	}
}

// TestStringAsQuote: for every rune and every byte, String escapes
// exactly as %q does inside its quotes, except tab, quotes and backslash.
func TestStringAsQuote(t *testing.T) {
	check := func(s string) {
		want := fmt.Sprintf("%q", s)
		want = want[1 : len(want)-1]
		switch s {
		case "\t", `"`, `\`:
			want = s
		}
		if got := String(s); got != want {
			t.Fatalf("String(%q) = %q, want %q", s, got, want)
		}
	}
	for r := rune(0); r < 0x11000; r++ {
		check(string(r))
	}
	for b := 0x80; b < 0x100; b++ {
		check(string([]byte{byte(b)}))
	}
}

func TestLines(t *testing.T) {
	got := Lines("name\x1b]0;pwned\a\nsecond\tline\n")
	if want := "name\\x1b]0;pwned\\a\nsecond\tline\n"; got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
}

func TestJSON(t *testing.T) {
	v := "esc\x1b del\x7f c1\u0085 bidi\u202e emoji\U0001F600 format\U000E0001 tab\t"
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	esc := JSON(raw)
	if i := unsafeIndex(strings.ReplaceAll(string(esc), "\n", "")); i >= 0 {
		t.Fatalf("JSON left %q unescaped in %s", esc[i:], esc)
	}
	var back string
	if err := json.Unmarshal(esc, &back); err != nil || back != v {
		t.Fatalf("JSON changed the value: %s decodes to %q, %v", esc, back, err)
	}
	if plain := []byte(`{"a":"b"}`); &JSON(plain)[0] != &plain[0] {
		t.Error("JSON copied text that needed no escaping")
	}
}
