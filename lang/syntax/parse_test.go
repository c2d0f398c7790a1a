package syntax

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/hale-lang/hale/lang/ast"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// mustParse parses src and fails the test on any diagnostic; it also checks
// the span invariants of the whole tree.
func mustParse(t *testing.T, src string) *ast.File {
	t.Helper()
	f, errs := Parse("t.hl", []byte(src))
	if len(errs) > 0 {
		t.Fatalf("parse %q:\n%v", src, errs)
	}
	if err := checkSpans(f, []byte(src)); err != "" {
		t.Fatalf("parse %q: %s", src, err)
	}
	return f
}

// parseExpr parses src as the value of a return statement.
func parseExpr(t *testing.T, src string) ast.Expr {
	t.Helper()
	f := mustParse(t, "fn t() { return "+src+"; }")
	return f.Decls[0].(*ast.FnDecl).Body.Stmts[0].(*ast.ReturnStmt).Value
}

// parseStmts parses src as the body of a fn and dumps its block.
func parseStmts(t *testing.T, src string) string {
	t.Helper()
	f := mustParse(t, "fn t() {\n"+src+"\n}")
	return Dump(f.Decls[0].(*ast.FnDecl).Body)
}

var expressionsTests = []struct{ src, want string }{
	{"x", "x"},
	{"std::time::now_ms", "std::time::now_ms"},
	{"std::time::now_ms()", "(call std::time::now_ms)"},
	{`Verdict::Reject("x")`, `(call Verdict::Reject "x")`},
	{"Verdict::Accept", "Verdict::Accept"},
	{"f(a, b,)", "(call f a b)"},
	{"f()", "(call f)"},
	{"xs[i][j]", "(index (index xs i) j)"},
	{"o.id.x", "(. (. o id) x)"},
	{"a.b(c)[d].e", "(. (index (call (. a b) c) d) e)"},
	{"[1, 2, 3,]", "(list 1 2 3)"},
	{"[]", "(list)"},
	{"{}", "(map)"},
	{`{"a": 1, "b": 2,}`, `(map ("a" 1) ("b" 2))`},
	{"{k: v}", "(map (k v))"},
	{"Point { x: 1, y: 2 }", "(struct Point (x 1) (y 2))"},
	{"Point { x: 1, y: 2, }", "(struct Point (x 1) (y 2))"},
	{"Empty {}", "(struct Empty)"},
	{"std::http::Response { status: 200, body: \"\", headers: {} }", `(struct std::http::Response (status 200) (body "") (headers (map)))`},
	{"Outer { p: Point { x: 1, y: 2 } }", "(struct Outer (p (struct Point (x 1) (y 2))))"},
	{"[Point { x: 1, y: 2 }]", "(list (struct Point (x 1) (y 2)))"},
	{"true", "true"},
	{"false", "false"},
	{"!ok", "(! ok)"},
	{"!!ok", "(! (! ok))"},
	{"-x", "(- x)"},
	{"- -x", "(- (- x))"},
	{"-9223372036854775808", "(- 9223372036854775808)"},
	{"(a)", "a"},
	{"((a + b))", "(+ a b)"},
	{"total", "total"},
	{"insert(xs, 0, 1)", "(call insert xs 0 1)"},
	{"match_label", "match_label"},
	{"assert(c, \"m\")", `(call assert c "m")`},
	{"int(x) + float(y)", "(+ (call int x) (call float y))"},
	{"1.foo", "(. 1 foo)"},
	{"publisher", "publisher"},
	{"_", "_"},
}

func TestExpressions(t *testing.T) {
	for _, tt := range expressionsTests {
		if got := Dump(parseExpr(t, tt.src)); got != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.src, got, tt.want)
		}
	}
}

var precedenceTests = []struct{ src, want string }{
	{"a || b || c", "(|| (|| a b) c)"},
	{"a || b && c", "(|| a (&& b c))"},
	{"a && b || c", "(|| (&& a b) c)"},
	{"a && b == c", "(&& a (== b c))"},
	{"a == b != c", "(!= (== a b) c)"},
	{"a == b < c", "(== a (< b c))"},
	{"a < b + c", "(< a (+ b c))"},
	{"a <= b >= c", "(>= (<= a b) c)"},
	{"a > b", "(> a b)"},
	{"a + b * c", "(+ a (* b c))"},
	{"a * b + c", "(+ (* a b) c)"},
	{"a - b - c", "(- (- a b) c)"},
	{"a / b / c", "(/ (/ a b) c)"},
	{"a % b * c", "(* (% a b) c)"},
	{"-a * b", "(* (- a) b)"},
	{"-a.b", "(- (. a b))"},
	{"!f(x) && y", "(&& (! (call f x)) y)"},
	{"-xs[0]", "(- (index xs 0))"},
	{"(a + b) * c", "(* (+ a b) c)"},
	{"a - -b", "(- a (- b))"},
	{"a || b && c == d < e + f * -g.h", "(|| a (&& b (== c (< d (+ e (* f (- (. g h))))))))"},
	{"a * b - c / d % e", "(- (* a b) (% (/ c d) e))"},
	{"x == 1 || y != 2 && !z", "(|| (== x 1) (&& (!= y 2) (! z)))"},
	// Bit operators: below the comparisons |, ^, &, then << >> just above
	// + and -.
	{"a < b | c", "(< a (| b c))"},
	{"a | b ^ c", "(| a (^ b c))"},
	{"a ^ b & c", "(^ a (& b c))"},
	{"a & b << c", "(& a (<< b c))"},
	{"a << b + c", "(<< a (+ b c))"},
	{"a >> b >> c", "(>> (>> a b) c)"},
	{"a & b == c", "(== (& a b) c)"},
	{"a | b && c ^ d", "(&& (| a b) (^ c d))"},
	{"!a & b", "(& (! a) b)"},
	{"a << b * c >> d", "(>> (<< a (* b c)) d)"},
	{"a|b^c&d<<e+f*g", "(| a (^ b (& c (<< d (+ e (* f g))))))"},
	// try binds like the other unary operators; ? is postfix.
	{"try f(x) + 1", "(+ (try (call f x)) 1)"},
	{"-try a", "(- (try a))"},
	{"(try f(x))? * 2", "(* (? (try (call f x))) 2)"},
	{"try (f(x)?)", "(try (? (call f x)))"},
	{"f(x)?.y[0]?", "(? (index (. (? (call f x)) y) 0))"},
	{"!a? && b", "(&& (! (? a)) b)"},
}

// TestTypeArguments parses Option<T> and Result<T>, with ">>" (and ">>=")
// closing two argument lists.
func TestTypeArguments(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"fn f(x: Option<int>) {}", "Option<int>"},
		{"fn f(x: Result<[Option<{string: int}>]>) {}", "Result<[Option<{string: int}>]>"},
		{"fn f(x: Option<Option<int>>) {}", "Option<Option<int>>"},
		{"fn f(x: Result<Option<Result<int>>>) {}", "Result<Option<Result<int>>>"},
		{"fn f() { let x: Option<Option<int>>= None; }", "Option<Option<int>>"},
	} {
		if got := Dump(mustParse(t, tt.src)); !strings.Contains(got, tt.want) {
			t.Errorf("%s\n got %s\n want it to contain %s", tt.src, got, tt.want)
		}
	}
}

func TestPrecedence(t *testing.T) {
	for _, tt := range precedenceTests {
		if got := Dump(parseExpr(t, tt.src)); got != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.src, got, tt.want)
		}
	}
}

var literalsTests = []struct{ src, want string }{
	{"0", "0"},
	{"42", "42"},
	{"1_000", "1000"},
	{"1_000_000", "1000000"},
	{"0xff", "255"},
	{"0XFF", "255"},
	{"0xDead_Beef", "3735928559"},
	{"0b101", "5"},
	{"0B1_0", "2"},
	{"9223372036854775807", "9223372036854775807"},
	{"9223372036854775808", "9223372036854775808"},
	{"18446744073709551615", "18446744073709551615"},
	{"0xffffffffffffffff", "18446744073709551615"},
	{"1.5", "1.5"},
	{"0.5", "0.5"},
	{"2e-3", "0.002"},
	{"2E+3", "2000.0"},
	{"1e3", "1000.0"},
	{"1_0.0", "10.0"},
	{"1.5e1_0", "1.5e+10"},
	{"1.0", "1.0"},
	{"00.5", "0.5"},
	{`"hi"`, `"hi"`},
	{`""`, `""`},
	{`"a\nb\tc\rd"`, `"a\nb\tc\rd"`},
	{`"q\"q\\"`, `"q\"q\\"`},
	{`"nul\0"`, `"nul\x00"`},
	{`"\u{1F600}"`, `"😀"`},
	{`"\u{41}\u{e9}"`, `"Aé"`},
	{`"\u{10FFFF}"`, `"\U0010ffff"`},
	{`"héllo 世界"`, `"héllo 世界"`},
	{`"/* not a comment */"`, `"/* not a comment */"`},
	{`b"ab"`, `b"ab"`},
	{`b"\x00\xff\xAB"`, `b"\x00\xff\xab"`},
	{`b"\n\t\r\\\"\0"`, `b"\n\t\r\\\"\x00"`},
	{`b"\u{e9}"`, `b"é"`},
	{`b""`, `b""`},
}

func TestLiterals(t *testing.T) {
	for _, tt := range literalsTests {
		if got := Dump(parseExpr(t, tt.src)); got != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.src, got, tt.want)
		}
	}
	// Raw keeps the source text of numbers.
	if lit := parseExpr(t, "0xff_ff").(*ast.IntLit); lit.Raw != "0xff_ff" || lit.Value != 0xffff {
		t.Errorf("IntLit = %+v", lit)
	}
	if lit := parseExpr(t, "1_0.5").(*ast.FloatLit); lit.Raw != "1_0.5" || lit.Value != 10.5 {
		t.Errorf("FloatLit = %+v", lit)
	}
}

func TestComments(t *testing.T) {
	got := parseStmts(t, `
		// line comment with "quote and /* opener
		let a = 1; /* block
		comment */ let b = /* inline */ 2;
		/**/ let c = 3; /* a * b / c */
		let d = a /b; // division, not a comment
	`)
	want := "(block (let a _ 1) (let b _ 2) (let c _ 3) (let d _ (/ a b)))"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

var rangeLexingTests = []struct{ src, want string }{
	{"for i in 0..5 {}", "(block (for i in 0 .. 5 (block)))"},
	{"for i in 0 .. n {}", "(block (for i in 0 .. n (block)))"},
	{"for i in 0..(i % 7) * 20 {}", "(block (for i in 0 .. (* (% i 7) 20) (block)))"},
	{"for i in a + 1..len(xs) - 1 {}", "(block (for i in (+ a 1) .. (- (call len xs) 1) (block)))"},
	{"for i in 1.5..2 {}", "(block (for i in 1.5 .. 2 (block)))"},
	{"for i in 0x1..0b1 {}", "(block (for i in 1 .. 1 (block)))"},
}

func TestRangeLexing(t *testing.T) {
	for _, tt := range rangeLexingTests {
		if got := parseStmts(t, tt.src); got != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.src, got, tt.want)
		}
	}
}

var statementsTests = []struct{ src, want string }{
	{"let x = 1;", "(block (let x _ 1))"},
	{"let x: int = 1;", "(block (let x int 1))"},
	{"var xs: [int] = [];", "(block (var xs [int] (list)))"},
	{"var m: {string: [int]} = {};", "(block (var m {string: [int]} (map)))"},
	{"let r: std::http::Response = std::http::get(u);", "(block (let r std::http::Response (call std::http::get u)))"},
	{"x = 1;", "(block (= x 1))"},
	{"x += 1; x -= 2; x *= 3; x /= 4; x %= 5;", "(block (+= x 1) (-= x 2) (*= x 3) (/= x 4) (%= x 5))"},
	{"x &= 1; x |= 2; x ^= 3; x <<= 4; x >>= 5;", "(block (&= x 1) (|= x 2) (^= x 3) (<<= x 4) (>>= x 5))"},
	{"xs[i] = v;", "(block (= (index xs i) v))"},
	{"p.f.g = v;", "(block (= (. (. p f) g) v))"},
	{"f(x) = 1;", "(block (= (call f x) 1))"},
	{"print(x);", "(block (expr (call print x)))"},
	{"1 + 2;", "(block (expr (+ 1 2)))"},
	{"if c { a(); }", "(block (if c (block (expr (call a)))))"},
	{"if c {} else {}", "(block (if c (block) (block)))"},
	{"if a {} else if b {} else if c {} else { d(); }", "(block (if a (block) (if b (block) (if c (block) (block (expr (call d)))))))"},
	{"if x == y {}", "(block (if (== x y) (block)))"},
	{"if (Point { x: 1, y: 2 }) == p {}", "(block (if (== (struct Point (x 1) (y 2)) p) (block)))"},
	{"if p == (Point { x: 1, y: 2 }) {}", "(block (if (== p (struct Point (x 1) (y 2))) (block)))"},
	{"if f(Point { x: 1 }) {}", "(block (if (call f (struct Point (x 1))) (block)))"},
	{"if xs[P { a: 1 }.a] {}", "(block (if (index xs (. (struct P (a 1)) a)) (block)))"},
	{"if [P {}] == xs {}", "(block (if (== (list (struct P)) xs) (block)))"},
	{"while x < 10 { x += 1; }", "(block (while (< x 10) (block (+= x 1))))"},
	{"while true { break; continue; }", "(block (while true (block (break) (continue))))"},
	{"for x in xs { s += x; }", "(block (for x in xs (block (+= s x))))"},
	{"for k, v in m {}", "(block (for k v in m (block)))"},
	{"for k in keys(m) {}", "(block (for k in (call keys m) (block)))"},
	{"match v { Verdict::Accept => {}, Verdict::Reject(why) => { print(why); }, _ => {} }",
		"(block (match v (arm Verdict::Accept (block)) (arm (Verdict::Reject why) (block (expr (call print why)))) (arm _ (block))))"},
	{"match v { E::A(a, _, c,) => {}, }", "(block (match v (arm (E::A a _ c) (block))))"},
	{`match n { 0 => {}, -1 => {}, 42 => {}, -9223372036854775808 => {}, 0x10 => {} }`,
		"(block (match n (arm 0 (block)) (arm -1 (block)) (arm 42 (block)) (arm -9223372036854775808 (block)) (arm 16 (block))))"},
	{`match s { "a" => {}, "\n" => {} }`, `(block (match s (arm "a" (block)) (arm "\n" (block))))`},
	{"match b { true => {}, false => {}, }", "(block (match b (arm true (block)) (arm false (block))))"},
	{"match x.kind { _ => {} }", "(block (match (. x kind) (arm _ (block))))"},
	{"publish OrderPlaced { id: 1, amount: a * 2 };", "(block (publish OrderPlaced (id 1) (amount (* a 2))))"},
	{"publish Tick {};", "(block (publish Tick))"},
	{"publish Moved { id: 1, to: m.to.in };", "(block (publish Moved (id 1) (to (. (. m to) in))))"},
	{"let p = P { match: 1, if: 2 };", "(block (let p _ (struct P (match 1) (if 2))))"},
	{"publish Tick { n: 1, };", "(block (publish Tick (n 1)))"},
	{"publish Retry { id: r.id } after 5_000;", "(block (publish Retry (id (. r id)) (after 5000)))"},
	{"publish Retry {} after base * 2 + after(n);", "(block (publish Retry (after (+ (* base 2) (call after n)))))"},
	{"publish Retry {} after after;", "(block (publish Retry (after after)))"},
	{"let after = 1; after = after + 1; after(after);", "(block (let after _ 1) (= after (+ after 1)) (expr (call after after)))"},
	{"return;", "(block (return))"},
	{"return x + 1;", "(block (return (+ x 1)))"},
	{"return P { x: 1 };", "(block (return (struct P (x 1))))"},
	{"let p = P { x: 1 };", "(block (let p _ (struct P (x 1))))"},
	{"p = P { x: 1 };", "(block (= p (struct P (x 1))))"},
	{"{}.x();", "(block (expr (call (. (map) x))))"},
}

func TestStatements(t *testing.T) {
	for _, tt := range statementsTests {
		if got := parseStmts(t, tt.src); got != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.src, got, tt.want)
		}
	}
}

var declarationsTests = []struct{ src, want string }{
	{`import "a.hl"; import "lib/b.hl";`, `(file (import "a.hl") (import "lib/b.hl"))`},
	{"const LIMIT: int = 10;", "(file (const LIMIT int 10))"},
	{"const NAMES: [string] = [\"a\",];", `(file (const NAMES [string] (list "a")))`},
	{"type Point { x: int, y: int }", "(file (type Point (x int) (y int)))"},
	{"type Point { x: int, y: int, }", "(file (type Point (x int) (y int)))"},
	{"type Unit {}", "(file (type Unit))"},
	{"type R { r: std::http::Response }", "(file (type R (r std::http::Response)))"},
	{"topic Line { text: string }", "(file (topic Line (text string)))"},
	{"topic Moved { id: int, to: Point, type: string, }", "(file (topic Moved (id int) (to Point) (type string)))"},
	{"enum Verdict { Accept, Reject(string) }", "(file (enum Verdict Accept (Reject string)))"},
	{"enum E { A, B(int, [string],), }", "(file (enum E A (B int [string])))"},
	{"fn f() {}", "(file (fn f (params) (block)))"},
	{"fn add(a: int, b: int,) -> int { return a + b; }", "(file (fn add (params (a int) (b int)) -> int (block (return (+ a b)))))"},
	{"fn g(m: {string: [int]}) -> {int: bool} { return {}; }", "(file (fn g (params (m {string: [int]})) -> {int: bool} (block (return (map)))))"},
	{"@deterministic fn f() {}", "(file (fn (@deterministic) f (params) (block)))"},
	{"@a @b(x: 1, y: \"s\",) fn f() {}", `(file (fn (@a) (@b (x 1) (y "s")) f (params) (block)))`},
	{"locus L {}", "(file (locus L))"},
	{"locus L() {}", "(file (locus L (params)))"},
	{"@budget(steps: 200000) locus L(a: int, b: string) {}", "(file (locus (@budget (steps 200000)) L (params (a int) (b string))))"},
	{`locus L {
		var n: int = 0;
		var m: {int: bool} = {};
		on start { n = 1; }
		on Tick(t) { n += t.n; }
		fn get() -> int { return n; }
		@deterministic fn h() {}
	}`, "(file (locus L (state n int 0) (state m {int: bool} (map)) (on start (block (= n 1))) (on Tick t (block (+= n (. t n)))) (fn get (params) -> int (block (return n))) (fn (@deterministic) h (params) (block))))"},
	{`main {
		spawn A;
		spawn B();
		spawn C(1, "x",) as c;
		spawn D as d on main;
		spawn E on pinned;
		spawn F as f on async_io;
		spawn G(P { x: 1 }) as g on pool("workers");
		bind stdin to Line;
	}`, `(file (main (spawn A) (spawn B (args)) (spawn C (args 1 "x") as c) (spawn D as d on main) (spawn E on pinned) (spawn F as f on async_io) (spawn G (args (struct P (x 1))) as g on pool("workers")) (bind Line)))`},
	{"main {}", "(file (main))"},
}

func TestDeclarations(t *testing.T) {
	for _, tt := range declarationsTests {
		if got := Dump(mustParse(t, tt.src)); got != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.src, got, tt.want)
		}
	}
}

func TestKeywordsAreWholeWords(t *testing.T) {
	// Identifiers that start with (or equal parts of) keywords.
	src := `fn t() {
		let total = 1; let insert = 2; let match_label = 3; let assert = 4;
		let format = 5; let iffy = 6; let int = 7; let string = 8; let bytes = 9;
		let mainly = 10; let starts = 11; let as_ = 12; let onward = 13; let tot = 14;
	}`
	got := Dump(mustParse(t, src))
	for _, name := range []string{"total", "insert", "match_label", "assert", "format", "iffy", "int", "string", "bytes", "mainly", "starts", "as_", "onward", "tot"} {
		if !strings.Contains(got, "(let "+name+" ") {
			t.Errorf("missing let %s in %s", name, got)
		}
	}
	// Every keyword is reserved: it cannot name a variable.
	for kw := range keywords {
		_, errs := Parse("t.hl", []byte("fn t() { let "+kw+" = 1; }"))
		if len(errs) == 0 {
			t.Errorf("keyword %q accepted as a name", kw)
		}
	}
	if len(keywords) != 33 {
		t.Errorf("%d keywords, docs/language.md lists 33", len(keywords))
	}
}

func TestByteOrderMark(t *testing.T) {
	f := mustParse(t, "\uFEFFfn f() {}")
	if p := f.Decls[0].Pos(); p.Line != 1 || p.Col != 4 || p.Offset != 3 {
		t.Errorf("fn at %+v", p)
	}
	if _, errs := Parse("t.hl", []byte("fn f() {}\uFEFF")); len(errs) == 0 {
		t.Error("byte order mark accepted after the start")
	}
}

func TestLineEndings(t *testing.T) {
	f := mustParse(t, "fn f() {\r\n\treturn 1;\r\n}\r\n")
	ret := f.Decls[0].(*ast.FnDecl).Body.Stmts[0]
	if p := ret.Pos(); p.Line != 2 || p.Col != 2 {
		t.Errorf("return at %v", p)
	}
}

func TestStdlib(t *testing.T) {
	src := `@primitive(effect: "time") fn now_ms() -> int;
@primitive(effect: "time")
fn sleep_ms(ms: int);
type Response { status: int, body: string, headers: {string: string} }
fn helper(x: int) -> int { return x; }
`
	f, errs := ParseStdlib("std/time.hl", "std::time", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if !f.Stdlib || f.Module != "std::time" || f.Path != "std/time.hl" {
		t.Errorf("file = Stdlib %v Module %q Path %q", f.Stdlib, f.Module, f.Path)
	}
	want := `(file (fn (@primitive (effect "time")) now_ms (params) -> int ;) (fn (@primitive (effect "time")) sleep_ms (params (ms int)) ;) (type Response (status int) (body string) (headers {string: string})) (fn helper (params (x int)) -> int (block (return x))))`
	if got := Dump(f); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if fn := f.Decls[0].(*ast.FnDecl); fn.Body != nil || fn.To.Offset != strings.Index(src, ";")+1 {
		t.Errorf("now_ms: body %v, span end %v", fn.Body, fn.To)
	}
	if err := checkSpans(f, []byte(src)); err != "" {
		t.Error(err)
	}
	// A locus fn never omits its body, even in the standard library.
	if _, errs := ParseStdlib("std/x.hl", "std::x", []byte("locus L { fn f(); }")); len(errs) == 0 {
		t.Error("body-less locus fn accepted")
	}
	// User files never omit bodies.
	f, errs = Parse("t.hl", []byte(src))
	if len(errs) == 0 || f.Stdlib || f.Module != "" {
		t.Errorf("user file: errs %v, Stdlib %v", errs, f.Stdlib)
	}
}

func TestExampleProgram(t *testing.T) {
	src, err := os.ReadFile("testdata/example.hl")
	if err != nil {
		t.Fatal(err)
	}
	f := mustParse(t, string(src))
	golden(t, "testdata/example.dump", Dump(f)+"\n")
	if len(f.Imports) != 1 || len(f.Decls) != 9 {
		t.Errorf("%d imports, %d decls", len(f.Imports), len(f.Decls))
	}
}

// golden compares got with the file at path, rewriting it with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update to rewrite):\n got  %s\n want %s", filepath.Base(path), got, want)
	}
}

// TestRepositoryPrograms parses every example program, the standard
// library, and every .hl section of the conformance scenarios: only scenarios about syntax errors
// may fail to parse.
func TestRepositoryPrograms(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.hl")
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, errs := Parse(filepath.Base(name), src)
		if len(errs) > 0 {
			t.Errorf("%s:\n%v", name, errs)
		} else if problem := checkSpans(f, src); problem != "" {
			t.Errorf("%s: %s", name, problem)
		}
	}
	files, _ = filepath.Glob("../../stdlib/std/*.hl")
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		module := "std::" + strings.TrimSuffix(filepath.Base(name), ".hl")
		f, errs := ParseStdlib("std/"+filepath.Base(name), module, src)
		if len(errs) > 0 {
			t.Errorf("%s:\n%v", name, errs)
		} else if problem := checkSpans(f, src); problem != "" {
			t.Errorf("%s: %s", name, problem)
		}
	}
	archives, _ := filepath.Glob("../../conformance/testdata/*/*.txtar")
	for _, name := range archives {
		a, err := txtar.ParseFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range a.Files {
			if !strings.HasSuffix(file.Name, ".hl") {
				continue
			}
			f, errs := Parse(file.Name, file.Data)
			if problem := checkSpans(f, file.Data); problem != "" {
				t.Errorf("%s %s: %s", name, file.Name, problem)
			}
			// Scenarios about syntax errors say so in their name or comment.
			about := strings.ToLower(filepath.Base(name) + string(a.Comment))
			expected := strings.Contains(about, "syntax") || strings.Contains(about, "lexical")
			if len(errs) > 0 && !expected {
				t.Errorf("%s %s:\n%v", filepath.Base(name), file.Name, errs)
			}
		}
	}
}
