package syntax

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
)

// lexDef is the definition of the lexical rules as regular expressions,
// for participle's lexer, which the lexer used until its cost (about half
// a microsecond a byte) dominated the compilation of large sources. scan
// implements the same rules by hand; TestScanMatchesRules and FuzzScan
// hold it to this reference. Rule names map to rules through ruleNames.
var lexDef = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Whitespace", Pattern: `[ \t\r\n]+`},
	{Name: "Ident", Pattern: `[A-Za-z_][A-Za-z0-9_]*`},
	{Name: "Punct", Pattern: `::|\.\.|=>|->|==|!=|<<=|>>=|<<|>>|<=|>=|&&|\|\||\+\+|:=|\+=|-=|\*=|%=|&=|\|=|\^=|[-+*%<>=!.,:;(){}\[\]@&|^?]`},
	{Name: "Number", Pattern: `0[xXbB][0-9A-Za-z_]*` +
		`|[0-9][0-9_]*(?:\.[0-9][0-9_]*(?:[eE][+-]?[0-9_]*)?|[eE][+-]?[0-9_]*)[0-9A-Za-z_]*` +
		`|[0-9][0-9A-Za-z_]*`},
	{Name: "String", Pattern: `"(?:[^"\\\n]|\\[^\n])*"`},
	{Name: "Comment", Pattern: `//[^\n]*|/\*(?s:.)*?\*/`},
	{Name: "OpenComment", Pattern: `/\*(?s:.)*`},
	{Name: "Slash", Pattern: `/=|/`},
	{Name: "OpenString", Pattern: `"[^\n]*`},
	{Name: "Char", Pattern: `(?s:.)`},
})

var ruleNames = map[string]rule{
	"Whitespace": ruleWhitespace, "Ident": ruleIdent, "Punct": rulePunct, "Number": ruleNumber,
	"String": ruleString, "Comment": ruleComment, "OpenComment": ruleOpenComment, "Slash": ruleSlash,
	"OpenString": ruleOpenString, "Char": ruleChar,
}

// compareWithRules fails when scan splits src differently from lexDef.
func compareWithRules(t *testing.T, src string) {
	t.Helper()
	names := map[lexer.TokenType]string{}
	for name, ty := range lexDef.Symbols() {
		names[ty] = name
	}
	lx, err := lexDef.LexString("t.hl", src)
	if err != nil {
		t.Fatal(err)
	}
	off := 0
	for {
		want, err := lx.Next()
		if err != nil {
			t.Fatalf("reference lexer: %v", err)
		}
		if want.EOF() {
			break
		}
		if off >= len(src) {
			t.Fatalf("scan ended at %d, the rules go on with %s %q in %q", off, names[want.Type], want.Value, src)
		}
		r, end := scan(src, off)
		if want.Pos.Offset != off || r != ruleNames[names[want.Type]] || src[off:end] != want.Value {
			t.Fatalf("at %d of %q: scan gives rule %d %q, the rules %s %q at %d", off, src, r, src[off:end], names[want.Type], want.Value, want.Pos.Offset)
		}
		off = end
	}
	if off != len(src) {
		t.Fatalf("scan goes on at %d after the rules ended, in %q", off, src)
	}
}

// TestScanMatchesRules compares scan with the reference rules on the
// test programs and on random strings over the characters that matter.
func TestScanMatchesRules(t *testing.T) {
	for _, src := range seedSources(t) {
		compareWithRules(t, src)
	}
	for _, src := range []string{
		`"abc`, `"a\"`, "\"a\\\nb\"", `"\`, `"é\é"`, "\"\xff\"", `/*`, `/* x *`, `/*/ */`, `//`, `/`, `/=`,
		`1..5`, `1.x`, `1.5.3`, `1e`, `1e+`, `1.5e-x`, `0x`, `0b12`, `0e5`, `1_.5`, `007`, `1__0`, `1.5E+3f`,
		"\xff\xfe", "é", "\x00\f\v", `b"x"`, `::=>->..=`, `<<=<<<>>=>>>&&=&|||=^=^++:=`,
	} {
		compareWithRules(t, src)
	}
	const alphabet = "\"\\\n\r\t /*.:-=<>+e5E0xb_a&|^!é\xff@"
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(string([]rune(alphabet)[rng.IntN(len([]rune(alphabet)))]))
			if rng.IntN(20) == 0 {
				b.WriteByte(0xff)
			}
		}
		compareWithRules(t, b.String())
	}
}

// FuzzScan compares scan with the reference rules on any input.
func FuzzScan(f *testing.F) {
	for _, s := range seedSources(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		compareWithRules(t, src)
	})
}
