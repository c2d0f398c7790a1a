package syntax

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/hale-lang/hale/lang/ast"
)

// checkSpans verifies the position invariants of a parsed tree: every
// node's span lies within the file, From <= To, Line and Col agree with
// Offset, every position names the file, and every child lies within its
// parent. It returns a description of the first violation, or "".
func checkSpans(f *ast.File, src []byte) string {
	var problem string
	report := func(format string, args ...any) {
		if problem == "" {
			problem = fmt.Sprintf(format, args...)
		}
	}
	lineStart := []int{0}
	for i, c := range src {
		if c == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
	checkPos := func(n ast.Node, p ast.Pos) {
		if p.File != f.Path {
			report("%T: position file %q, want %q", n, p.File, f.Path)
		}
		if p.Offset < 0 || p.Offset > len(src) {
			report("%T: offset %d outside file of %d bytes", n, p.Offset, len(src))
			return
		}
		line := sort.SearchInts(lineStart, p.Offset+1) // lines starting at or before Offset
		col := p.Offset - lineStart[line-1] + 1
		if p.Line != line || p.Col != col {
			report("%T: offset %d at %d:%d, want %d:%d", n, p.Offset, p.Line, p.Col, line, col)
		}
	}
	check := func(n ast.Node) {
		if reflect.ValueOf(n).IsNil() {
			report("nil %T in tree", n)
			return
		}
		checkPos(n, n.Pos())
		checkPos(n, n.End())
		if n.Pos().Offset > n.End().Offset {
			report("%T: From %v after To %v", n, n.Pos(), n.End())
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		check(n)
		if problem != "" {
			return false
		}
		// Visit the direct children only, to compare them with n.
		ast.Inspect(n, func(c ast.Node) bool {
			if c == n {
				return true
			}
			check(c)
			if problem == "" && (c.Pos().Offset < n.Pos().Offset || c.End().Offset > n.End().Offset) {
				report("%T %v-%v lies outside its parent %T %v-%v", c, c.Pos(), c.End(), n, n.Pos(), n.End())
			}
			return false
		})
		return problem == ""
	})
	for _, imp := range f.Imports {
		check(imp)
	}
	return problem
}

// spans lists every node of the tree with its span and source text.
func spans(f *ast.File, src string) string {
	var b strings.Builder
	ast.Inspect(f, func(n ast.Node) bool {
		if _, ok := n.(*ast.File); ok {
			return true
		}
		from, to := n.Pos(), n.End()
		fmt.Fprintf(&b, "%s %d:%d-%d:%d %q\n", strings.TrimPrefix(fmt.Sprintf("%T", n), "*ast."),
			from.Line, from.Col, to.Line, to.Col, src[from.Offset:to.Offset])
		return true
	})
	return b.String()
}

func TestSpans(t *testing.T) {
	src := `@budget(steps: 5)
fn f(a: int) -> [int] {
    let x: int = (a + 1) * -b.c;
    xs[0] += g(1, 2,);
    if x { return; } else if y {} else { h(); }
    match v { E::A(p) => {}, -1 => {} }
    for i in 0..n { }
    publish T { a: 1 };
    let s = P { x: "é" }.x;
}
`
	f := mustParse(t, src)
	got := spans(f, src)
	want := `FnDecl 1:1-10:2 "@budget(steps: 5)\nfn f(a: int) -> [int] {\n    let x: int = (a + 1) * -b.c;\n    xs[0] += g(1, 2,);\n    if x { return; } else if y {} else { h(); }\n    match v { E::A(p) => {}, -1 => {} }\n    for i in 0..n { }\n    publish T { a: 1 };\n    let s = P { x: \"é\" }.x;\n}"
Annotation 1:1-1:18 "@budget(steps: 5)"
Ident 1:2-1:8 "budget"
AnnArg 1:9-1:17 "steps: 5"
Ident 1:9-1:14 "steps"
IntLit 1:16-1:17 "5"
Ident 2:4-2:5 "f"
Param 2:6-2:12 "a: int"
Ident 2:6-2:7 "a"
NamedType 2:9-2:12 "int"
ListType 2:17-2:22 "[int]"
NamedType 2:18-2:21 "int"
Block 2:23-10:2 "{\n    let x: int = (a + 1) * -b.c;\n    xs[0] += g(1, 2,);\n    if x { return; } else if y {} else { h(); }\n    match v { E::A(p) => {}, -1 => {} }\n    for i in 0..n { }\n    publish T { a: 1 };\n    let s = P { x: \"é\" }.x;\n}"
LetStmt 3:5-3:33 "let x: int = (a + 1) * -b.c;"
Ident 3:9-3:10 "x"
NamedType 3:12-3:15 "int"
BinaryExpr 3:18-3:32 "(a + 1) * -b.c"
BinaryExpr 3:18-3:25 "(a + 1)"
Name 3:19-3:20 "a"
Ident 3:19-3:20 "a"
IntLit 3:23-3:24 "1"
UnaryExpr 3:28-3:32 "-b.c"
FieldExpr 3:29-3:32 "b.c"
Name 3:29-3:30 "b"
Ident 3:29-3:30 "b"
Ident 3:31-3:32 "c"
AssignStmt 4:5-4:23 "xs[0] += g(1, 2,);"
IndexExpr 4:5-4:10 "xs[0]"
Name 4:5-4:7 "xs"
Ident 4:5-4:7 "xs"
IntLit 4:8-4:9 "0"
CallExpr 4:14-4:22 "g(1, 2,)"
Name 4:14-4:15 "g"
Ident 4:14-4:15 "g"
IntLit 4:16-4:17 "1"
IntLit 4:19-4:20 "2"
IfStmt 5:5-5:48 "if x { return; } else if y {} else { h(); }"
Name 5:8-5:9 "x"
Ident 5:8-5:9 "x"
Block 5:10-5:21 "{ return; }"
ReturnStmt 5:12-5:19 "return;"
IfStmt 5:27-5:48 "if y {} else { h(); }"
Name 5:30-5:31 "y"
Ident 5:30-5:31 "y"
Block 5:32-5:34 "{}"
Block 5:40-5:48 "{ h(); }"
ExprStmt 5:42-5:46 "h();"
CallExpr 5:42-5:45 "h()"
Name 5:42-5:43 "h"
Ident 5:42-5:43 "h"
MatchStmt 6:5-6:40 "match v { E::A(p) => {}, -1 => {} }"
Name 6:11-6:12 "v"
Ident 6:11-6:12 "v"
Arm 6:15-6:28 "E::A(p) => {}"
Pattern 6:15-6:22 "E::A(p)"
Ident 6:15-6:16 "E"
Ident 6:18-6:19 "A"
Ident 6:20-6:21 "p"
Block 6:26-6:28 "{}"
Arm 6:30-6:38 "-1 => {}"
Pattern 6:30-6:32 "-1"
Block 6:36-6:38 "{}"
ForStmt 7:5-7:22 "for i in 0..n { }"
Ident 7:9-7:10 "i"
IntLit 7:14-7:15 "0"
Name 7:17-7:18 "n"
Ident 7:17-7:18 "n"
Block 7:19-7:22 "{ }"
PublishStmt 8:5-8:24 "publish T { a: 1 };"
Ident 8:13-8:14 "T"
FieldInit 8:17-8:21 "a: 1"
Ident 8:17-8:18 "a"
IntLit 8:20-8:21 "1"
LetStmt 9:5-9:29 "let s = P { x: \"é\" }.x;"
Ident 9:9-9:10 "s"
FieldExpr 9:13-9:28 "P { x: \"é\" }.x"
StructLit 9:13-9:26 "P { x: \"é\" }"
NamedType 9:13-9:14 "P"
FieldInit 9:17-9:24 "x: \"é\""
Ident 9:17-9:18 "x"
StringLit 9:20-9:24 "\"é\""
Ident 9:27-9:28 "x"
`
	if got != want {
		t.Errorf("spans differ:\n%s", lineDiff(got, want))
	}
	// OpPos is the operator token.
	let := f.Decls[0].(*ast.FnDecl).Body.Stmts[0].(*ast.LetStmt)
	if op := let.Value.(*ast.BinaryExpr).OpPos; op.Line != 3 || op.Col != 26 || op.Offset != strings.Index(src, "*") {
		t.Errorf("OpPos = %+v", op)
	}
	if f.From.Offset != 0 || f.To.Offset != len(src) || f.To.Line != 11 || f.To.Col != 1 {
		t.Errorf("file span %v-%v", f.From, f.To)
	}
}

func TestSpansDecls(t *testing.T) {
	src := "import \"a.hl\";\nlocus L(n: int) {\n  var s: int = 0;\n  on start {}\n  on T(m) {}\n}\nmain { spawn L(1) as l on pool(\"p\"); bind stdin to T; }\nenum E { A, B(int) }\ntype P { x: int }\nconst C: {int: [bool]} = {};\n"
	f := mustParse(t, src)
	got := spans(f, src)
	want := `LocusDecl 2:1-6:2 "locus L(n: int) {\n  var s: int = 0;\n  on start {}\n  on T(m) {}\n}"
Ident 2:7-2:8 "L"
Param 2:9-2:15 "n: int"
Ident 2:9-2:10 "n"
NamedType 2:12-2:15 "int"
StateVar 3:3-3:18 "var s: int = 0;"
Ident 3:7-3:8 "s"
NamedType 3:10-3:13 "int"
IntLit 3:16-3:17 "0"
Handler 4:3-4:14 "on start {}"
Block 4:12-4:14 "{}"
Handler 5:3-5:13 "on T(m) {}"
Ident 5:6-5:7 "T"
Ident 5:8-5:9 "m"
Block 5:11-5:13 "{}"
MainDecl 7:1-7:56 "main { spawn L(1) as l on pool(\"p\"); bind stdin to T; }"
Spawn 7:8-7:37 "spawn L(1) as l on pool(\"p\");"
Ident 7:14-7:15 "L"
IntLit 7:16-7:17 "1"
Ident 7:22-7:23 "l"
Placement 7:24-7:36 "on pool(\"p\")"
Bind 7:38-7:54 "bind stdin to T;"
Ident 7:52-7:53 "T"
EnumDecl 8:1-8:21 "enum E { A, B(int) }"
Ident 8:6-8:7 "E"
VariantDecl 8:10-8:11 "A"
Ident 8:10-8:11 "A"
VariantDecl 8:13-8:19 "B(int)"
Ident 8:13-8:14 "B"
NamedType 8:15-8:18 "int"
TypeDecl 9:1-9:18 "type P { x: int }"
Ident 9:6-9:7 "P"
FieldDecl 9:10-9:16 "x: int"
Ident 9:10-9:11 "x"
NamedType 9:13-9:16 "int"
ConstDecl 10:1-10:29 "const C: {int: [bool]} = {};"
Ident 10:7-10:8 "C"
MapType 10:10-10:23 "{int: [bool]}"
NamedType 10:11-10:14 "int"
ListType 10:16-10:22 "[bool]"
NamedType 10:17-10:21 "bool"
MapLit 10:26-10:28 "{}"
`
	if got != want {
		t.Errorf("spans differ:\n%s", lineDiff(got, want))
	}
	if imp := f.Imports[0]; imp.From.Offset != 0 || imp.To.Offset != len(`import "a.hl";`) {
		t.Errorf("import span %v-%v", imp.From, imp.To)
	}
}

// TestSpansExample checks the invariants and records every span of the
// docs/language.md example in a golden file.
func TestSpansExample(t *testing.T) {
	src, err := os.ReadFile("testdata/example.hl")
	if err != nil {
		t.Fatal(err)
	}
	f := mustParse(t, string(src))
	golden(t, "testdata/example.spans", spans(f, string(src)))
}

// lineDiff shows the first differing line of two multi-line strings.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n got  %s\n want %s\n\nfull output:\n%s", i+1, gl, wl, got)
		}
	}
	return ""
}
