package syntax

import (
	"strings"
	"testing"

	"github.com/hale-lang/hale/lang/ast"
)

var errorsTests = []struct{ src, want string }{
	// Statements and expressions.
	{"fn f() { x = 1 }", `t.hl:1:16: expected ";" after assignment, found "}" [E0101]`},
	{"fn f() -> int {\n    let x = 1\n    return x;\n}", `t.hl:2:14: expected ";" after variable initial value, found keyword "return" [E0101]`},
	{"fn f() {\n    g(x) // call\n    h(y);\n}", `t.hl:2:9: expected ";" after expression, found identifier "h" [E0101]`},
	{"main {\n  spawn A\n}", `t.hl:2:10: expected ";" after spawn, found "}" [E0101]`},
	{"fn f() {\n    let x = 1\n    \"abc\n}", `t.hl:3:5: string literal not terminated [E0103]`},
	{"fn f() -> string { return \"bad \\q escape\"; }\nmain {}", `t.hl:1:32: unknown escape sequence \q [E0105]`},
	{"fn f() -> string {\n    return \"never closed;\n}\nmain {}", `t.hl:2:12: string literal not terminated [E0103]`},
	{"fn f() { g(x) }", `t.hl:1:15: expected ";" after expression, found "}" [E0101]`},
	{"fn f() { a => b; }", `t.hl:1:12: expected ";" after expression, found "=>" [E0101]`},
	{"fn f() { let x = => 1; }", `t.hl:1:18: expected expression, found "=>" [E0101]`},
	{"fn f() { let x = 1 \"ééééééééééééééééééééééé\"; }", `t.hl:1:20: expected ";" after variable initial value, found string "ééééééééééééééééééé… [E0101]`},
	{"fn f() { let x = ; }", `t.hl:1:18: expected expression, found ";" [E0101]`},
	{"fn f() { let = 1; }", `t.hl:1:14: expected variable name after "let", found "=" [E0101]`},
	{"fn f() { let x; }", `t.hl:1:15: expected "=" after variable name (a variable needs an initial value), found ";" [E0101]`},
	{"fn f() { ; }", `t.hl:1:10: expected statement, found ";" [E0101]`},
	{"fn f() { { let x = 1; } }", `t.hl:1:10: a block cannot stand alone as a statement [E0101]`},
	{"fn f() { {} }", `t.hl:1:10: a block cannot stand alone as a statement [E0101]`},
	{"fn f() { let x = b \"a\"; }", `t.hl:1:20: expected ";" after variable initial value, found string "a" [E0101]`},
	{"fn f() { let x = 0..5; }", `t.hl:1:19: expected ";" after variable initial value, found ".." (a range is only allowed in a for head) [E0101]`},
	{"fn f() { if P { x: 1 } == p {} }", `t.hl:1:13: struct literal not allowed in if head; put it in parentheses [E0101]`},
	{"fn f() { while a::B { x: 1 }.x {} }", `t.hl:1:16: struct literal not allowed in while head; put it in parentheses [E0101]`},
	{"fn f() { for x in P { a: 1 }.xs {} }", `t.hl:1:19: struct literal not allowed in for head; put it in parentheses [E0101]`},
	{"fn f() { if m == P { to: 1 } {} }", `t.hl:1:18: struct literal not allowed in if head; put it in parentheses [E0101]`},
	{"fn f() { let to = 1; }", `t.hl:1:14: expected variable name after "let", found keyword "to" [E0101]`},
	{"fn f() { match P { a: 1 } { _ => {} } }", `t.hl:1:16: struct literal not allowed in match head; put it in parentheses [E0101]`},
	{"fn f() { if x {} else return; }", `t.hl:1:23: expected "if" or "{" after "else", found keyword "return" [E0101]`},
	{"fn f() { let x = f(1 2); }", `t.hl:1:22: expected "," or ")" after argument, found number 2 [E0101]`},
	{"fn f() { let x = [1, 2; }", `t.hl:1:23: expected "," or "]" after list element, found ";" [E0101]`},
	{"fn f() { let x = (1 + 2; }", `t.hl:1:24: expected ")" to close "(", found ";" [E0101]`},
	{"fn f() { x.1 = 2; }", `t.hl:1:12: expected field name after ".", found number 1 [E0101]`},
	{"fn f() { for i, in xs {} }", `t.hl:1:17: expected second loop variable name, found keyword "in" [E0101]`},
	{"fn f() { for i xs {} }", `t.hl:1:16: expected "in" after loop variables, found identifier "xs" [E0101]`},
	{"fn f() { match x { 1 => {} 2 => {} } }", `t.hl:1:28: expected "," or "}" after match arm, found number 2 [E0101]`},
	{"fn f() { let v = try g()?; }", `t.hl:1:25: ambiguous try with ?: write (try E)? to return its Err, or try (E?) to catch the trap of E? [E0101]`},
	{"fn f() { match x { y:: => {} } }", `t.hl:1:24: expected variant name, found "=>" [E0101]`},
	{"fn f() { match x { 1.5 => {} } }", `t.hl:1:20: expected pattern, found number 1.5 [E0101]`},
	{"fn f() { match x { 9223372036854775808 => {} } }", `t.hl:1:20: integer pattern 9223372036854775808 is out of range [E0107]`},
	{"fn f() { match x { E::V() => {} } }", `t.hl:1:25: expected binding name, found ")" [E0101]`},
	{"fn f() { publish T { a: 1 } }", `t.hl:1:29: expected ";" after publish, found "}" [E0101]`},
	{"fn f() { publish T { a: 1 } after; }", `t.hl:1:34: expected expression, found ";" [E0101]`},
	{"fn f() { publish T { a: 1 } later 5; }", `t.hl:1:29: expected ";" after publish, found identifier "later" [E0101]`},
	{"fn f() { publish T { a: 1 } after 5 }", `t.hl:1:37: expected ";" after publish, found "}" [E0101]`},
	{"fn f() { return 1 }", `t.hl:1:19: expected ";" after return, found "}" [E0101]`},
	{"fn f() { break }", `t.hl:1:16: expected ";" after "break", found "}" [E0101]`},
	{"fn f() { } else {}", `t.hl:1:12: expected declaration, found keyword "else" [E0101]`},
	{"fn f() {\n  if x {\n", `t.hl:3:1: expected "}" to close the block opened at 2:8, found end of file [E0101]`},
	{"fn f() { let p = P { x 1 }; }", `t.hl:1:24: expected ":" after field name, found number 1 [E0101]`},
	// Declarations.
	{"x", `t.hl:1:1: expected declaration, found identifier "x" [E0101]`},
	{"fn f(a int) {}", `t.hl:1:8: expected ":" and a type after parameter name, found identifier "int" [E0101]`},
	{"fn f() int {}", `t.hl:1:8: expected "->" or "{" after fn parameters, found identifier "int" [E0101]`},
	{"fn f() -> {}", `t.hl:1:12: expected type, found "}" [E0101]`},
	{"fn f() -> int;", `t.hl:1:14: fn f has no body (only standard library primitives may omit it) [E0109]`},
	{"fn type() {}", `t.hl:1:4: expected fn name, found keyword "type" [E0101]`},
	{"type T { x: int y: int }", `t.hl:1:17: expected "," or "}" after field, found identifier "y" [E0101]`},
	{"enum E {}", `t.hl:1:9: expected variant name, found "}" [E0101]`},
	{"enum E { A() }", `t.hl:1:12: expected type, found ")" [E0101]`},
	{"const X = 1;", `t.hl:1:9: expected ":" and a type after constant name, found "=" [E0101]`},
	{"const X: int = 1;\nimport \"a.hl\";", `t.hl:2:1: import must come before all declarations [E0108]`},
	{"import a;", `t.hl:1:8: expected a path string after "import", found identifier "a" [E0101]`},
	{"@deterministic const X: int = 1;", `t.hl:1:16: expected "fn" or "locus" after annotation, found keyword "const" [E0101]`},
	{"@budget(steps 1) locus L {}", `t.hl:1:15: expected ":" after annotation argument name, found number 1 [E0101]`},
	{"locus L { let x = 1; }", `t.hl:1:11: expected state variable, handler or fn in locus body, found keyword "let" [E0101]`},
	{"locus L { var x 1; }", `t.hl:1:17: expected "=" after state variable (state needs an initial value), found number 1 [E0101]`},
	{"locus L { on 1 {} }", `t.hl:1:14: expected "start" or a topic name after "on", found number 1 [E0101]`},
	{"locus L { on T {} }", `t.hl:1:16: expected "(" after topic name in handler, found "{" [E0101]`},
	{"locus L {", `t.hl:1:10: expected "}" to close locus L, found end of file [E0101]`},
	{"main { for i in 0..3 spawn W(i) as w[i]; }", `t.hl:1:22: expected "{" after a spawn loop's range, found keyword "spawn" [E0101]`},
	{"main { for i in 3 { } }", `t.hl:1:19: expected ".." in a spawn loop's range (for i in 0..N), found "{" [E0101]`},
	{"main { for i in 0..3 { spawn W(i) as w[i; } }", `t.hl:1:41: expected "]" after the index of an instance name, found ";" [E0101]`},
	{"main { for i in 0..3 { spawn W(i) as w[0]; } }", `t.hl:1:40: expected loop variable in an instance name's index, found number 0 [E0101]`},
	{"main { for i in 0..3 { print(i); } }", `t.hl:1:24: expected "spawn", "bind", "export" or "for" in main, found identifier "print" [E0101]`},
	{"main { " + strings.Repeat("for i in 0..1 { ", 1200), `t.hl:1:16017: nesting too deep (more than 1000 levels) [E0110]`},
	{"main { print(1); }", `t.hl:1:8: expected "spawn", "bind", "export" or "for" in main, found identifier "print" [E0101]`},
	{"main { spawn A on moon; }", `t.hl:1:19: expected placement (main, pinned, async_io or pool("name")) after "on", found identifier "moon" [E0101]`},
	{"main { spawn A on pool(p); }", `t.hl:1:24: expected pool name string, found identifier "p" [E0101]`},
	{"main { spawn A as; }", `t.hl:1:18: expected instance name after "as", found ";" [E0101]`},
	{"main { spawn A }", `t.hl:1:16: expected ";" after spawn, found "}" [E0101]`},
	{"main { bind stdout to T; }", `t.hl:1:13: expected "stdin" or "nats" after "bind", found identifier "stdout" [E0101]`},
	// Lexical errors.
	{"fn f() { let s = \"abc\\q\"; }", `t.hl:1:22: unknown escape sequence \q [E0105]`},
	{"fn f() { let s = \"\\u{D800}\"; }", `t.hl:1:19: escape \u{D800} is not a Unicode scalar value [E0105]`},
	{"fn f() { let s = \"\\u{110000}\"; }", `t.hl:1:19: escape \u{110000} is not a Unicode scalar value [E0105]`},
	{"fn f() { let s = \"\\u41\"; }", `t.hl:1:19: escape \u must be written \u{X} with 1 to 6 hexadecimal digits [E0105]`},
	{"fn f() { let s = \"\\u{1234567}\"; }", `t.hl:1:19: escape \u must be written \u{X} with 1 to 6 hexadecimal digits [E0105]`},
	{"fn f() { let s = \"\\u{}\"; }", `t.hl:1:19: escape \u must be written \u{X} with 1 to 6 hexadecimal digits [E0105]`},
	{"fn f() { let s = \"\\xff\"; }", `t.hl:1:19: escape \x is only allowed in bytes literals (use \u{…}) [E0105]`},
	{"fn f() { let s = b\"\\xf\"; }", `t.hl:1:20: escape \x needs exactly two hexadecimal digits [E0105]`},
	{"fn f() { let s = b\"ok\\q\"; }", `t.hl:1:22: unknown escape sequence \q [E0105]`},
	{"fn f() { let s = \"\\é\"; }", `t.hl:1:19: unknown escape sequence \é [E0105]`},
	{"fn f() {\n  let s = \"abc; }", `t.hl:2:11: string literal not terminated [E0103]`},
	{"fn f() { let s = \"abc\nxyz\"; }", `t.hl:1:18: string literal not terminated [E0103]`},
	{"fn f() { let s = b\"abc; }", `t.hl:1:18: bytes literal not terminated [E0103]`},
	{"fn f() {\n /* never closed\n }", `t.hl:2:2: comment not terminated [E0104]`},
	{"fn f() { let x = 1__0; }", `t.hl:1:19: '_' must separate successive digits [E0106]`},
	{"fn f() { let x = 1_; }", `t.hl:1:19: '_' must separate successive digits [E0106]`},
	{"fn f() { let x = 0x_ff; }", `t.hl:1:20: '_' must separate successive digits [E0106]`},
	{"fn f() { let x = 1_.5; }", `t.hl:1:19: '_' must separate successive digits [E0106]`},
	{"fn f() { let x = 1e_5; }", `t.hl:1:20: '_' must separate successive digits [E0106]`},
	{"fn f() { let x = 0xfg; }", `t.hl:1:21: invalid digit 'g' in hexadecimal literal [E0106]`},
	{"fn f() { let x = 0x; }", `t.hl:1:18: hexadecimal literal has no digits [E0106]`},
	{"fn f() { let x = 0b102; }", `t.hl:1:22: invalid digit '2' in binary literal [E0106]`},
	{"fn f() { let x = 12ab; }", `t.hl:1:20: invalid digit 'a' in decimal literal [E0106]`},
	{"fn f() { let x = 007; }", `t.hl:1:18: decimal literal 007 cannot start with 0 [E0106]`},
	{"fn f() { let x = 18446744073709551616; }", `t.hl:1:18: integer literal 18446744073709551616 does not fit in 64 bits [E0107]`},
	{"fn f() { let x = 0x1_0000_0000_0000_0000; }", `t.hl:1:18: integer literal 0x1_0000_0000_0000_0000 does not fit in 64 bits [E0107]`},
	{"fn f() { let x = 1e400; }", `t.hl:1:18: float literal 1e400 is out of range [E0107]`},
	{"fn f() { let x = 1e; }", `t.hl:1:20: exponent has no digits [E0106]`},
	{"fn f() { let x = 1.5x; }", `t.hl:1:21: invalid character 'x' in float literal [E0106]`},
	{"fn f() { let x = a # b; }", `t.hl:1:20: invalid character "#" [E0102]`},
	{"fn f() { let x = a ~ b; }", `t.hl:1:20: invalid character "~" [E0102]`},
	{"fn f() { i++; }", `t.hl:1:11: Hale has no "++" operator [E0101] (write "i += 1;")`},
	{"fn f() { xs[0]++; }", `t.hl:1:15: Hale has no "++" operator [E0101] (write "xs[0] += 1;")`},
	{"fn f() { x := 1; }", `t.hl:1:12: ":=" is not an operator in Hale [E0101] (declare it with "let x = …;" (or "var" to change it later))`},
	{"fn f() { n--; }", `t.hl:1:11: Hale has no "--" operator [E0101] (write "n -= 1;")`},
	{"fn f() { switch (x) { } }", `t.hl:1:10: Hale has no switch statement [E0101] (use "match": match x { 1 => { … }, _ => { … } })`},
	{"fn f() { switch x { } }", `t.hl:1:10: Hale has no switch statement [E0101] (use "match": match x { 1 => { … }, _ => { … } })`},
	{"fn f() { let x = 'a'; }", `t.hl:1:18: invalid character "'" (strings use double quotes) [E0102]`},
	{"fn f() { let x = \x01; }", `t.hl:1:18: invalid character U+0001 [E0102]`},
	{"fn f() {}\n\xff", `t.hl:2:1: invalid UTF-8 encoding [E0111]`},
	{"fn f() { let x = " + strings.Repeat("(", 2000) + "1" + strings.Repeat(")", 2000) + "; }",
		`t.hl:1:1017: nesting too deep (more than 1000 levels) [E0110]`},
}

// TestErrors checks the exact text of the first diagnostic for malformed
// input, as `file:line:col: message [code]`.
func TestErrors(t *testing.T) {
	for _, tt := range errorsTests {
		_, errs := Parse("t.hl", []byte(tt.src))
		if len(errs) == 0 {
			t.Errorf("%q: no error, want %s", tt.src, tt.want)
			continue
		}
		if got := errs[0].Error(); got != tt.want {
			src := tt.src
			if len(src) > 80 {
				src = src[:80] + "…"
			}
			t.Errorf("%q\n got  %s\n want %s", src, got, tt.want)
		}
	}
}

// TestSeveralErrors checks that the parser resumes at the next top-level
// declaration and that lexical errors are all reported.
func TestSeveralErrors(t *testing.T) {
	src := `fn f() { x = 1; }}
fn g() { y = ; }
fn h() { z }
fn ok() { let s = "\q"; let n = 1__2; }
locus L { on start { a += ; } }
main { spawn L; }
`
	_, errs := Parse("t.hl", []byte(src))
	want := []string{
		`t.hl:1:18: expected declaration, found "}" [E0101]`,
		`t.hl:2:14: expected expression, found ";" [E0101]`,
		`t.hl:3:12: expected ";" after expression, found "}" [E0101]`,
		`t.hl:4:20: unknown escape sequence \q [E0105]`,
		`t.hl:4:34: '_' must separate successive digits [E0106]`,
		`t.hl:5:27: expected expression, found ";" [E0101]`,
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The list is capped.
	_, errs = Parse("t.hl", []byte(strings.Repeat("fn f() { x }\n", 50)))
	if len(errs) != maxErrors {
		t.Errorf("%d errors, want the cap %d", len(errs), maxErrors)
	}
}

// TestStatementRecovery: after a syntax error the parser resumes at the
// next statement, so every error in one fn is reported, and statements
// after the errors still parse.
func TestStatementRecovery(t *testing.T) {
	src := `fn f(xs: [int]) {
    let a = ;
    i++;
    x := 2;
    if a == { print(1); }
    let ok = 1;
    let b = (1 + ;
    switch a { }
    return;
}
fn g() { let c = 1 +; }
`
	f, errs := Parse("t.hl", []byte(src))
	want := []string{
		`t.hl:2:13: expected expression, found ";" [E0101]`,
		`t.hl:3:6: Hale has no "++" operator [E0101] (write "i += 1;")`,
		`t.hl:4:7: ":=" is not an operator in Hale [E0101] (declare it with "let x = …;" (or "var" to change it later))`,
		`t.hl:5:23: expected ":" after map key, found ";" [E0101]`,
		`t.hl:7:18: expected expression, found ";" [E0101]`,
		`t.hl:8:5: Hale has no switch statement [E0101] (use "match": match x { 1 => { … }, _ => { … } })`,
		`t.hl:11:21: expected expression, found ";" [E0101]`,
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Both fns are in the tree, f with the statements that parsed.
	if len(f.Decls) != 2 {
		t.Fatalf("%d declarations, want 2", len(f.Decls))
	}
	body := f.Decls[0].(*ast.FnDecl).Body.Stmts
	if len(body) != 2 {
		t.Errorf("f keeps %d statements, want 2 (let ok, return)", len(body))
	}
}

// TestNoCascade: a token the lexer already reported is not reported again
// by the parser.
func TestNoCascade(t *testing.T) {
	for _, src := range []string{
		"fn f() { let s = \"abc; }",
		"fn f() { x # y; }",
		"fn f() { /* open",
	} {
		if _, errs := Parse("t.hl", []byte(src)); len(errs) != 1 {
			t.Errorf("%q: %d errors:\n%v", src, len(errs), errs)
		}
	}
}

// TestChainLimit: a chain nests the tree one level per operator, call,
// index or field (maxChain), though the parser builds it with a loop.
// (Not in errorsTests, whose sources seed the fuzz targets and the
// comparison with the regular-expression lexer, slow on such lines.)
func TestChainLimit(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"fn f() { let x = 1" + strings.Repeat("+1", 1<<17+1) + "; }",
			`t.hl:1:262163: expression nested too deep (more than 131072 operators, calls, indexes and fields in one expression); split it with variables [E0110]`},
		{"fn f() { let x = a" + strings.Repeat(".b[0](1)", 1<<16) + ".c; }",
			`t.hl:1:349544: expression nested too deep (more than 131072 operators, calls, indexes and fields in one expression); split it with variables [E0110]`},
		{"fn f() { let x = 1" + strings.Repeat("+1", 1<<17) + "; }", ""},
	} {
		_, errs := Parse("t.hl", []byte(tt.src))
		got := ""
		if len(errs) > 0 {
			got = errs[0].Error()
		}
		if got != tt.want {
			t.Errorf("%.40q...: got %q, want %q", tt.src, got, tt.want)
		}
	}
}
