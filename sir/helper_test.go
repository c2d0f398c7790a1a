package sir

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/hale-lang/hale/effects"
	"github.com/hale-lang/hale/lang"
	"github.com/hale-lang/hale/lang/diag"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// lowerFiles loads, checks, analyses and lowers a program given as files
// ("app.hl" is the entry) and validates the result.
func lowerFiles(files map[string]string) (*Program, error) {
	fsys := fstest.MapFS{}
	for name, src := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(src)}
	}
	lp, err := lang.LoadFS(fsys, "app.hl")
	if err != nil {
		return nil, err
	}
	fx, errs := effects.Analyze(lp)
	if len(errs) > 0 {
		return nil, diag.List(errs)
	}
	p, err := Lower(lp, fx)
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// loadSrc lowers a one-file program, failing the test on any error.
func loadSrc(t testing.TB, src string) *Program {
	t.Helper()
	p, err := lowerFiles(map[string]string{"app.hl": src})
	if err != nil {
		t.Fatalf("lower: %v", err)
	}
	return p
}

// testdataPrograms returns the txtar programs of testdata by base name.
func testdataPrograms(t testing.TB) map[string]map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata programs: %v", err)
	}
	out := map[string]map[string]string{}
	for _, path := range paths {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		for _, f := range ar.Files {
			files[f.Name] = string(f.Data)
		}
		out[strings.TrimSuffix(filepath.Base(path), ".txtar")] = files
	}
	return out
}

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept):\n%s", path, lineDiff(string(want), string(got)))
	}
}

// lineDiff shows the first differing lines of two texts.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + itoa(i+1) + ":\n  want: " + w + "\n  got:  " + g
		}
	}
	return "(no line differs)"
}

func itoa(i int) string {
	var b []byte
	if i == 0 {
		return "0"
	}
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
