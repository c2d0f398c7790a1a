package lang

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/check"
	"github.com/hale-lang/hale/lang/diag"
	"github.com/hale-lang/hale/lang/syntax"
)

// FuzzCheck loads arbitrary single-file programs. Loading must never
// panic; errors must be a diag.List with positions; a program that loads
// must be fully annotated. The checker also runs on whatever partial tree
// the parser returns, which Load itself never checks.
func FuzzCheck(f *testing.F) {
	var seeds [][]byte
	names, _ := filepath.Glob("check/testdata/*.hl")
	for _, name := range names {
		if src, err := os.ReadFile(name); err == nil {
			seeds = append(seeds, src)
		}
	}
	archives, _ := filepath.Glob("testdata/*.txtar")
	for _, name := range archives {
		if a, err := txtar.ParseFile(name); err == nil {
			for _, file := range a.Files {
				seeds = append(seeds, file.Data)
			}
		}
	}
	for _, src := range seeds {
		for _, piece := range seedPieces(src) {
			f.Add(piece)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := LoadFS(fstest.MapFS{"app.hl": {Data: src}}, "app.hl")
		if err == nil {
			for _, file := range p.Files {
				if bad := unannotated(file); bad != nil {
					t.Fatalf("%s: %T not annotated", bad.Pos(), bad)
				}
			}
			return
		}
		l, ok := err.(diag.List)
		if !ok || len(l) == 0 {
			t.Fatalf("error %T %v", err, err)
		}
		for _, e := range l {
			if !e.Pos.IsValid() || e.Pos.File == "" || e.Code == "" {
				t.Fatalf("bad diagnostic %#v", e)
			}
		}
		// After syntax errors Load returns the partial tree of the file
		// and the standard library unchecked: check them here. (After
		// other errors, Load has checked the whole tree already; parsing
		// and checking it again would double the cost of an input, and
		// the fuzzer's exploration rate with it.)
		if p != nil && len(p.Files) > 0 && p.Files[0].Path == "app.hl" && p.Scope == nil {
			check.Check(p.Files[:1], p.Stdlib)
		}
	})
}

// maxSeed is the size above which a seed program is cut into pieces.
// Whenever the fuzzer finds an input with new coverage it minimizes it,
// with a few executions per byte of input, before it explores further;
// an input costs a load of the standard library, so a mutant of a 6 KB
// seed kept the fuzzer minimizing, at zero new executions, for up to a
// minute. Pieces keep that short.
const maxSeed = 512

// seedPieces cuts a seed program into runs of whole top-level
// declarations of at most maxSeed bytes (a longer declaration stands
// alone), each with the imports; a short program stays whole.
func seedPieces(src []byte) [][]byte {
	file, _ := syntax.Parse("seed.hl", src)
	if len(src) <= maxSeed || file == nil || len(file.Decls) < 2 {
		return [][]byte{src}
	}
	var imports []byte
	for _, imp := range file.Imports {
		imports = append(imports, src[imp.Pos().Offset:imp.End().Offset]...)
		imports = append(imports, '\n')
	}
	var pieces [][]byte
	start := file.Decls[0].Pos().Offset
	for i := 1; i <= len(file.Decls); i++ {
		end := len(src)
		if i < len(file.Decls) {
			end = file.Decls[i].Pos().Offset
		}
		if i < len(file.Decls) && end-start < maxSeed && file.Decls[i].End().Offset-start <= maxSeed {
			continue // the next declaration fits in this piece
		}
		pieces = append(pieces, append(slices.Clip(imports), src[start:end]...))
		start = end
	}
	return pieces
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

// TestSeedPieces: FuzzCheck's seeds are short, and together they hold
// every declaration of the seed programs.
func TestSeedPieces(t *testing.T) {
	src, err := os.ReadFile("check/testdata/ok_features.hl")
	if err != nil {
		t.Fatal(err)
	}
	pieces := seedPieces(src)
	if len(pieces) < 2 {
		t.Fatalf("%d bytes kept in %d piece", len(src), len(pieces))
	}
	var all []byte
	for _, p := range pieces {
		file, errs := syntax.Parse("p.hl", p)
		if len(p) > maxSeed && (file == nil || len(file.Decls) > 1) {
			t.Errorf("a piece of %d bytes with several declarations:\n%s", len(p), p)
		}
		if len(errs) > 0 {
			t.Errorf("a piece does not parse: %v\n%s", errs, p)
		}
		all = append(all, p...)
	}
	if want := src[bytes.Index(src, []byte("\n\n"))+2:]; !bytes.HasSuffix(all, want[len(want)-200:]) || len(all) < len(want) {
		t.Errorf("the pieces lose text: %d bytes of %d", len(all), len(src))
	}
}
