package syntax

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// seedSources returns every program the tests use, plus the example and
// conformance programs and the standard library of the repository (whichever exist when it runs).
func seedSources(tb testing.TB) []string {
	var seeds []string
	for _, table := range [][]struct{ src, want string }{expressionsTests, precedenceTests, literalsTests} {
		for _, tt := range table {
			seeds = append(seeds, "fn t() { return "+tt.src+"; }")
		}
	}
	for _, tt := range append(rangeLexingTests, statementsTests...) {
		seeds = append(seeds, "fn t() {\n"+tt.src+"\n}")
	}
	for _, table := range [][]struct{ src, want string }{declarationsTests, errorsTests} {
		for _, tt := range table {
			seeds = append(seeds, tt.src)
		}
	}
	for _, pattern := range []string{"testdata/*.hl", "../../examples/*.hl", "../../examples/*/*.hl", "../../stdlib/std/*.hl"} {
		files, _ := filepath.Glob(pattern)
		for _, name := range files {
			if src, err := os.ReadFile(name); err == nil {
				seeds = append(seeds, string(src))
			}
		}
	}
	// The conformance scenarios hold their programs as .hl sections.
	archives, _ := filepath.Glob("../../conformance/testdata/*/*.txtar")
	for _, name := range archives {
		a, err := txtar.ParseFile(name)
		if err != nil {
			continue
		}
		for _, f := range a.Files {
			if strings.HasSuffix(f.Name, ".hl") {
				seeds = append(seeds, string(f.Data))
			}
		}
	}
	return seeds
}

// FuzzParse checks that no input panics the parser and that every tree,
// even one returned with errors, has well-formed spans.
func FuzzParse(f *testing.F) {
	for _, s := range seedSources(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, stdlib := range []bool{false, true} {
			file, errs := Parse("f.hl", []byte(src))
			if stdlib {
				file, errs = ParseStdlib("f.hl", "std::f", []byte(src))
			}
			if file == nil {
				t.Fatal("nil file")
			}
			if problem := checkSpans(file, []byte(src)); problem != "" {
				t.Fatalf("%s\nsource %q", problem, src)
			}
			for _, e := range errs {
				if e.Pos.File != "f.hl" || e.Pos.Offset < 0 || e.Pos.Offset > len(src) || e.Code == "" || e.Msg == "" {
					t.Fatalf("bad diagnostic %v (%+v)", e, e.Pos)
				}
			}
			if len(errs) == 0 {
				Dump(file)
			}
		}
	})
}
