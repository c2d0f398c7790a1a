package lang

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/check"
	"github.com/hale-lang/hale/lang/diag"
	"github.com/hale-lang/hale/lang/syntax"
	"github.com/hale-lang/hale/stdlib"
)

// FuzzCheck loads arbitrary single-file programs. Loading must never
// panic; errors must be a diag.List with positions; a program that loads
// must be fully annotated. The checker also runs on whatever partial tree
// the parser returns, which Load itself never checks.
func FuzzCheck(f *testing.F) {
	seeds, _ := filepath.Glob("check/testdata/*.hl")
	for _, name := range seeds {
		if src, err := os.ReadFile(name); err == nil {
			f.Add(src)
		}
	}
	archives, _ := filepath.Glob("testdata/*.txtar")
	for _, name := range archives {
		if a, err := txtar.ParseFile(name); err == nil {
			for _, file := range a.Files {
				f.Add(file.Data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := LoadFS(fstest.MapFS{"app.hl": {Data: src}}, "app.hl")
		if err != nil {
			l, ok := err.(diag.List)
			if !ok || len(l) == 0 {
				t.Fatalf("error %T %v", err, err)
			}
			for _, e := range l {
				if !e.Pos.IsValid() || e.Pos.File == "" || e.Code == "" {
					t.Fatalf("bad diagnostic %#v", e)
				}
			}
		} else {
			for _, file := range p.Files {
				if bad := unannotated(file); bad != nil {
					t.Fatalf("%s: %T not annotated", bad.Pos(), bad)
				}
			}
		}
		if file, _ := syntax.Parse("app.hl", src); file != nil {
			check.Check([]*ast.File{file}, parseStdlib())
		}
	})
}

func parseStdlib() []*ast.File {
	var files []*ast.File
	for _, s := range stdlib.Files() {
		if f, _ := syntax.ParseStdlib(s.Path, s.Module, s.Src); f != nil {
			files = append(files, f)
		}
	}
	return files
}

// unannotated returns the first expression without a valid type or name
// without a symbol in a checked file, or nil.
func unannotated(f *ast.File) ast.Node {
	var bad ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if bad != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.Annotation:
			return false // names and arguments of annotations are not resolved
		case *ast.Name:
			if n.Ident.Sym == nil {
				bad = n
			}
		case *ast.PathExpr:
			if n.Sym == nil {
				bad = n
			}
		}
		if e, ok := n.(ast.Expr); ok {
			if t := e.TypeOf(); t == nil || t.Kind == ast.Invalid {
				bad = n
			}
		}
		return true
	})
	return bad
}

// TestAnnotatedPrograms: every checked program that loads is annotated.
func TestAnnotatedPrograms(t *testing.T) {
	for _, name := range []string{"check/testdata/ok_example.hl"} {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := LoadFS(fstest.MapFS{"app.hl": {Data: src}}, "app.hl")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append(p.Files, p.Stdlib...) {
			if bad := unannotated(f); bad != nil {
				t.Errorf("%s: %T not annotated", bad.Pos(), bad)
			}
		}
	}
}
