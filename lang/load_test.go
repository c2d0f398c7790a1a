package lang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/diag"
)

// archiveFS turns a txtar archive into a file system of its .hl files and
// returns the entry (the first file) and the expected errors (the "want"
// file, one per line; none when absent).
func archiveFS(t testing.TB, path string) (fstest.MapFS, string, string) {
	t.Helper()
	a, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	entry, want := "", ""
	for _, f := range a.Files {
		if f.Name == "want" {
			want = string(f.Data)
			continue
		}
		if entry == "" {
			entry = f.Name
		}
		fsys[f.Name] = &fstest.MapFile{Data: f.Data}
	}
	return fsys, entry, want
}

// errorLines renders a Load error one diagnostic per line.
func errorLines(err error) string {
	if err == nil {
		return ""
	}
	return err.Error() + "\n"
}

// TestLoadArchives loads every testdata/*.txtar program and compares the
// diagnostics with its "want" file.
func TestLoadArchives(t *testing.T) {
	names, _ := filepath.Glob("testdata/*.txtar")
	if len(names) == 0 {
		t.Fatal("no archives")
	}
	for _, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) {
			fsys, entry, want := archiveFS(t, name)
			p, err := LoadFS(fsys, entry)
			if got := errorLines(err); got != want {
				t.Errorf("errors:\n%s\nwant:\n%s", got, want)
			}
			if err != nil {
				if _, ok := err.(diag.List); !ok {
					t.Errorf("error is %T, want diag.List", err)
				}
				if p == nil || p.Sources[entry] == nil {
					t.Errorf("no sources returned with the error")
				}
			}
		})
	}
}

func TestLoadImports(t *testing.T) {
	fsys, entry, _ := archiveFS(t, "testdata/imports.txtar")
	p, err := LoadFS(fsys, entry)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range p.Files {
		paths = append(paths, f.Path)
	}
	// Depth first, each file once, logical paths cleaned.
	if got := strings.Join(paths, " "); got != "app.hl lib/util.hl lib/deep/shared.hl" {
		t.Errorf("files = %s", got)
	}
	if p.Entry != "app.hl" || p.Main == nil || len(p.Loci) != 1 || p.Scope["double"] == nil {
		t.Errorf("program: entry %q, main %v, %d loci", p.Entry, p.Main != nil, len(p.Loci))
	}
	for _, want := range []string{"app.hl", "lib/util.hl", "lib/deep/shared.hl", "std/time.hl", "std/http.hl"} {
		if p.Source(want) == nil {
			t.Errorf("no source for %s", want)
		}
	}
	if len(p.Stdlib) == 0 || !p.Stdlib[0].Stdlib || p.Scope["std::time::now_ms"] == nil ||
		p.Scope["std::time::now_ms"].Kind != ast.SymPrim {
		t.Errorf("standard library not loaded")
	}
	// Every position carries a logical path.
	for _, f := range p.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			if n.Pos().File != f.Path {
				t.Errorf("%s: node %T has position in %q", f.Path, n, n.Pos().File)
				return false
			}
			return true
		})
	}
}

// TestLoadSubfolderEntry: logical paths are relative to the entry's folder,
// even when that is a subfolder of the file system, and may climb out of it.
func TestLoadSubfolderEntry(t *testing.T) {
	fsys := fstest.MapFS{
		"proj/app.hl":     {Data: []byte("import \"lib/a.hl\";\nimport \"../shared.hl\";\nmain { spawn L(f()); }\n")},
		"proj/lib/a.hl":   {Data: []byte("locus L(n: int) {}\n")},
		"shared.hl":       {Data: []byte("fn f() -> string { return 1; }\n")},
		"proj/lib/unused": {Data: []byte("junk")},
	}
	_, err := LoadFS(fsys, "proj/app.hl")
	want := "../shared.hl:1:27: cannot use int as string in return [E0301]\n" +
		"app.hl:3:16: cannot use string as int in argument 1 of spawn L [E0301]\n"
	if got := errorLines(err); got != want {
		t.Errorf("got:\n%swant:\n%s", got, want)
	}
}

func TestLoadMissingEntry(t *testing.T) {
	p, err := LoadFS(fstest.MapFS{}, "app.hl")
	l, ok := err.(diag.List)
	if p != nil || !ok || len(l) != 1 {
		t.Fatalf("LoadFS = %v, %v", p, err)
	}
	e := l[0]
	if e.Pos != (ast.Pos{File: "app.hl"}) || e.Code != "E0001" || e.Error() != "app.hl: cannot read app.hl: no such file or directory [E0001]" {
		t.Errorf("error = %#v (%s)", e, e)
	}

	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.hl")
	_, err = Load(missing)
	if err == nil || err.Error() != missing+": cannot read "+missing+": no such file or directory [E0001]" {
		t.Errorf("Load(missing) = %v", err)
	}
	hlDir := filepath.Join(dir, "folder.hl")
	if err := os.Mkdir(hlDir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = Load(hlDir)
	if err == nil || !strings.Contains(err.Error(), "cannot read "+hlDir+": is a directory") {
		t.Errorf("Load(dir) = %v", err)
	}
}

// TestLoadOS loads from the real file system: diagnostics use logical
// paths, never the absolute ones.
func TestLoadOS(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("app.hl", "import \"lib/util.hl\";\nmain {}\n")
	write("lib/util.hl", "import \"more.hl\";\nfn f() -> int { return g(); }\n")
	write("lib/more.hl", "fn g() -> int { return 1; }\n")
	p, err := Load(filepath.Join(dir, "app.hl"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Entry != "app.hl" || len(p.Files) != 3 || p.Files[2].Path != "lib/more.hl" {
		t.Errorf("entry %q, %d files", p.Entry, len(p.Files))
	}
	write("lib/more.hl", "fn g() -> string { return 1; }\n")
	_, err = Load(filepath.Join(dir, "app.hl"))
	want := "lib/more.hl:1:27: cannot use int as string in return [E0301]\n" +
		"lib/util.hl:2:24: cannot use string as int in return [E0301]\n"
	if got := errorLines(err); got != want {
		t.Errorf("got:\n%swant:\n%s", got, want)
	}
	if strings.Contains(errorLines(err), dir) {
		t.Errorf("absolute path in diagnostics")
	}
}

// TestLoadCheckerTestdata loads the checker's positive programs that use
// only the real standard library.
func TestLoadCheckerTestdata(t *testing.T) {
	src, err := os.ReadFile("check/testdata/ok_example.hl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFS(fstest.MapFS{"app.hl": {Data: src}}, "app.hl"); err != nil {
		t.Fatal(err)
	}
}
