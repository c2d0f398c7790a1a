package hale_test

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/lang/diag"
	"github.com/hale-lang/hale/sir"
)

func TestCompileRunsThePipelineOnce(t *testing.T) {
	fsys := fstest.MapFS{
		"app.hl":      {Data: []byte("import \"lib/util.hl\";\ntopic T { n: int }\nlocus L { on T(t) { print(str(twice(t.n))); } }\nmain { spawn L; }\n")},
		"lib/util.hl": {Data: []byte("fn twice(n: int) -> int { return n * 2; }\n")},
	}
	c, err := hale.Compile(fsys, "app.hl", hale.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Program == nil || c.Effects == nil || c.SIR == nil || c.Image == nil {
		t.Fatalf("missing forms: %+v", c)
	}
	if strings.Join(c.Files, " ") != "app.hl lib/util.hl" {
		t.Errorf("files %q", c.Files)
	}
	if len(c.Image.Instances) != 1 || c.Image.Instances[0].Name != "L" {
		t.Errorf("image instances %+v", c.Image.Instances)
	}
	files := []hale.SourceFile{{Path: "app.hl", Data: fsys["app.hl"].Data}, {Path: "lib/util.hl", Data: fsys["lib/util.hl"].Data}}
	if c.BuildDigest() != hale.BuildDigest(files, hale.BuildOptions{}) {
		t.Error("build digest is not the digest of the program's files")
	}
	if got, want := hex.EncodeToString(c.ShapeHash[:]), sir.BuildShape(c.SIR).Hash(); got != want {
		t.Errorf("shape hash %s, want %s", got, want)
	}
}

func TestCompileErrorsCarryTheirSources(t *testing.T) {
	src := "main { let x: int = \"no\"; }\n"
	_, err := hale.Compile(fstest.MapFS{"app.hl": {Data: []byte(src)}}, "app.hl", hale.BuildOptions{})
	var list diag.List
	var one *diag.Error
	if err == nil || !(errors.As(err, &list) || errors.As(err, &one)) {
		t.Fatalf("want diagnostics, got %v", err)
	}
	var withSource interface{ Source(string) []byte }
	if !errors.As(err, &withSource) || string(withSource.Source("app.hl")) != src {
		t.Fatalf("the error does not give the program's source: %v", err)
	}
	if _, err := hale.Compile(fstest.MapFS{}, "app.hl", hale.BuildOptions{}); err == nil {
		t.Error("a missing entry file compiled")
	}
}
