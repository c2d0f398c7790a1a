package check_test

import (
	"strings"
	"testing"

	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/check"
	"github.com/hale-lang/hale/lang/syntax"
)

// checkWithStd checks app.hl against the given standard library files
// (path -> source; the module is derived from the path).
func checkWithStd(t *testing.T, user string, std map[string]string) []string {
	t.Helper()
	f, errs := syntax.Parse("app.hl", []byte(user))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var stdFiles []*ast.File
	for path, src := range std {
		module := strings.ReplaceAll(strings.TrimSuffix(path, ".hl"), "/", "::")
		sf, errs := syntax.ParseStdlib(path, module, []byte(src))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		stdFiles = append(stdFiles, sf)
	}
	_, errs = check.Check([]*ast.File{f}, stdFiles)
	var out []string
	for _, e := range errs.Sort() {
		out = append(out, e.Error())
	}
	return out
}

func TestStdlibRules(t *testing.T) {
	tests := []struct {
		name string
		user string
		std  map[string]string
		want []string
	}{{
		name: "primitive needs no body, others need one",
		user: "main {}",
		std: map[string]string{"std/a.hl": `
@primitive(effect: "time")
fn ok() -> int;
fn missing() -> int;
@primitive(effect: "io")
fn with_body() {}
@primitive(effect: 1)
fn bad_effect();
@primitive(kind: "x")
fn bad_name();
@primitive
fn pure_prim(x: float) -> float;
@primitive(effect: "net")
locus NoLocus {}
`},
		want: []string{
			`std/a.hl:4:4: fn "missing" has no body [E0605]`,
			`std/a.hl:6:4: @primitive fn "with_body" must not have a body [E0605]`,
			`std/a.hl:7:20: @primitive effect must be a string literal [E0603]`,
			`std/a.hl:9:1: @primitive takes one argument: @primitive(effect: "name") [E0603]`,
			`std/a.hl:13:1: @primitive applies only to top-level fns, not to a locus [E0602]`,
		},
	}, {
		name: "module names are qualified and visible unqualified inside the module only",
		user: `
type Item { n: int }
fn user_fn() -> int { return 1; }
fn use() -> int { return std::a::get(std::a::Item { n: 1 }) + std::b::twice(); }
main {}`,
		std: map[string]string{
			"std/a.hl": `
type Item { n: int }
const K: int = 2;
fn get(i: Item) -> int { return i.n * K; }
fn bad() -> int { return user_fn(); }
fn bad2(i: std::b::Nope) {}
`,
			"std/b.hl": `
fn twice() -> int { return std::a::get(std::a::Item { n: 2 }) * std::a::K; }
fn local_item() -> int { let i = Item { n: 1 }; return i.n; }
`,
		},
		want: []string{
			`std/a.hl:5:26: undefined name "user_fn" [E0201]`,
			`std/a.hl:6:12: undefined type "std::b::Nope" [E0201]`,
			`std/b.hl:3:34: undefined type "Item" [E0201]`,
		},
	}, {
		name: "duplicates inside a module are qualified",
		user: "main {}",
		std: map[string]string{"std/a.hl": `
@primitive(effect: "time")
fn f() -> int;
fn f() -> int { return 1; }
`},
		want: []string{`std/a.hl:4:4: duplicate declaration of "std::a::f" (first declared at std/a.hl:3:4) [E0202]`},
	}, {
		name: "std::json::encode is the builtin even when declared",
		user: `fn f() -> string { return std::json::encode([1, 2]) + std::json::encode("x"); } main {}`,
		std: map[string]string{"std/json.hl": `
@primitive(effect: "pure")
fn encode(s: string) -> string;
`},
	}, {
		name: "main in the standard library",
		user: "main {}",
		std:  map[string]string{"std/a.hl": "main {}"},
		want: []string{
			`std/a.hl:1:1: main must be declared in the entry file "app.hl", not in "std/a.hl" [E0505]`,
			`std/a.hl:1:1: duplicate main (first declared at app.hl:1:1) [E0504]`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkWithStd(t, tt.user, tt.std)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestBrokenTrees runs the checker on trees with missing parts, as a
// parser might leave them, and on hand-built trees the parser cannot
// produce; it must report errors, never panic.
func TestBrokenTrees(t *testing.T) {
	id := func(name string) *ast.Ident { return &ast.Ident{Name: name} }
	files := []*ast.File{{
		Path: "app.hl",
		Decls: []ast.Decl{
			&ast.FnDecl{Name: id("nobody")}, // a user fn without a body
			&ast.FnDecl{Params: []*ast.Param{nil, {Name: id("p")}}, Body: &ast.Block{Stmts: []ast.Stmt{
				nil,
				&ast.LetStmt{Name: nil, Value: nil},
				&ast.ExprStmt{},
				&ast.AssignStmt{},
				&ast.IfStmt{},
				&ast.WhileStmt{},
				&ast.ForStmt{},
				&ast.MatchStmt{Arms: []*ast.Arm{nil, {Pattern: &ast.Pattern{Kind: ast.PatVariant}}}},
				&ast.PublishStmt{Fields: []*ast.FieldInit{nil, {}}},
				&ast.ReturnStmt{Value: &ast.CallExpr{}},
				&ast.ExprStmt{X: &ast.CallExpr{Fun: &ast.Name{}}},
				&ast.ExprStmt{X: &ast.CallExpr{Fun: &ast.PathExpr{Parts: []*ast.Ident{nil, nil}}}},
				&ast.ExprStmt{X: &ast.StructLit{Fields: []*ast.FieldInit{{Name: id("x")}}}},
				&ast.ExprStmt{X: &ast.MapLit{Entries: []*ast.MapEntry{nil, {}}}},
				&ast.ExprStmt{X: &ast.ListLit{Elems: []ast.Expr{nil}}},
				&ast.ExprStmt{X: &ast.FieldExpr{}},
				&ast.ExprStmt{X: &ast.IndexExpr{}},
				&ast.ExprStmt{X: &ast.UnaryExpr{Op: ast.Neg}},
				&ast.ExprStmt{X: &ast.BinaryExpr{Op: ast.Add}},
			}}},
			&ast.ConstDecl{},
			&ast.TypeDecl{Fields: []*ast.FieldDecl{nil, {Name: id("f")}}},
			&ast.EnumDecl{Name: id("E"), Variants: []*ast.VariantDecl{nil, {Name: id("V"), Types: []ast.TypeExpr{nil}}}},
			&ast.LocusDecl{
				Name:        id("L"),
				Annotations: []*ast.Annotation{nil, {}, {Name: id("budget"), Args: []*ast.AnnArg{nil}}},
				Params:      []*ast.Param{nil},
				State:       []*ast.StateVar{nil, {Name: id("s")}},
				Handlers:    []*ast.Handler{nil, {}, {Start: true}, {Topic: id("T"), Param: id("x")}},
				Fns:         []*ast.FnDecl{nil, {Name: id("g")}},
			},
			&ast.MainDecl{
				Spawns: []*ast.Spawn{nil, {}, {Locus: id("L"), HasArgs: true, Args: []ast.Expr{nil}}},
				Binds:  []*ast.Bind{nil, {}},
			},
			nil,
		},
	}, nil}
	_, errs := check.Check(files, []*ast.File{nil, {Stdlib: true, Module: "std::x", Decls: []ast.Decl{&ast.FnDecl{Name: id("p")}}}})
	if len(errs) == 0 {
		t.Fatal("no errors for broken trees")
	}
	if _, errs := check.Check(nil, nil); len(errs) != 0 {
		t.Errorf("empty program: %v", errs)
	}
}
