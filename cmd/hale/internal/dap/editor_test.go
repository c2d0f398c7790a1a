package dap

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The VS Code extension (editors/vscode) is tested from here: its node
// tests need a hale binary, and its manifest must agree with LaunchArgs.

var vscodeDir = filepath.Join("..", "..", "..", "..", "editors", "vscode")

var (
	haleOnce sync.Once
	haleBin  string
	haleErr  error
	haleDir  string
)

// TestMain removes the hale binary built for the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if haleDir != "" {
		os.RemoveAll(haleDir)
	}
	os.Exit(code)
}

// buildHale builds cmd/hale once per test run.
func buildHale(t testing.TB) string {
	t.Helper()
	haleOnce.Do(func() {
		haleDir, haleErr = os.MkdirTemp("", "hale-dap-test-")
		if haleErr != nil {
			return
		}
		haleBin = filepath.Join(haleDir, "hale")
		goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
		out, err := exec.Command(goBin, "build", "-o", haleBin, "github.com/hale-lang/hale/cmd/hale").CombinedOutput()
		if err != nil {
			haleErr = &buildError{err, string(out)}
		}
	})
	if haleErr != nil {
		t.Fatalf("building hale: %v", haleErr)
	}
	return haleBin
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// nodeWith returns node's path when node and the extension's npm packages
// are installed, and skips the test, naming what is missing, otherwise.
func nodeWith(t *testing.T, packages ...string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("skipped: node is not installed (apt-get install nodejs npm; then npm ci in editors/vscode, as .ci/run does)")
	}
	for _, p := range packages {
		if _, err := os.Stat(filepath.Join(vscodeDir, "node_modules", p, "package.json")); err != nil {
			t.Skipf("skipped: the npm package %s is not installed in editors/vscode/node_modules (run npm ci in editors/vscode, as .ci/run does)", p)
		}
	}
	return node
}

// TestVSCodeClient runs editors/vscode/test/dap.test.js: full sessions of
// `hale dap` on both engines driven by @vscode/debugadapter-testsupport.
func TestVSCodeClient(t *testing.T) {
	node := nodeWith(t, "@vscode/debugadapter-testsupport")
	hale := buildHale(t)
	cmd := exec.Command(node, "--test", "--test-reporter=spec", filepath.Join("test", "dap.test.js"))
	cmd.Dir = vscodeDir
	cmd.Env = append(os.Environ(), "HALE_BIN="+hale)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test test/dap.test.js: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestGrammar runs vscode-tmgrammar-test on the annotated samples in
// editors/vscode/test.
func TestGrammar(t *testing.T) {
	node := nodeWith(t, "vscode-tmgrammar-test")
	cli := filepath.Join("node_modules", "vscode-tmgrammar-test", "dist", "unit.js")
	if _, err := os.Stat(filepath.Join(vscodeDir, cli)); err != nil {
		t.Fatalf("vscode-tmgrammar-test has no %s: %v", cli, err)
	}
	cmd := exec.Command(node, cli, "-c", "-g", filepath.Join("syntaxes", "hale.tmLanguage.json"), "test/*.hl")
	cmd.Dir = vscodeDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("vscode-tmgrammar-test: %v\n%s", err, out)
	}
	samples, _ := filepath.Glob(filepath.Join(vscodeDir, "test", "*.hl"))
	if n := strings.Count(string(out), "run successfuly"); n != len(samples) || n == 0 {
		t.Fatalf("vscode-tmgrammar-test checked %d files of %d:\n%s", n, len(samples), out)
	}
}

// TestGrammarOnExamples tokenizes every program in examples/ with the
// grammar (editors/vscode/test/examples.test.js): no invalid token, every
// keyword scoped as one.
func TestGrammarOnExamples(t *testing.T) {
	node := nodeWith(t, "vscode-textmate", "vscode-oniguruma")
	cmd := exec.Command(node, "--test", "--test-reporter=spec", filepath.Join("test", "examples.test.js"))
	cmd.Dir = vscodeDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test test/examples.test.js: %v\n%s", err, out)
	}
}

// TestExtensionManifest: the extension's package.json contributes the
// language, the grammar and a `hale` debugger whose launch attributes are
// exactly the launch arguments hale dap reads.
func TestExtensionManifest(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(vscodeDir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Main        string `json:"main"`
		Contributes struct {
			Languages []struct {
				ID         string   `json:"id"`
				Extensions []string `json:"extensions"`
			} `json:"languages"`
			Grammars []struct {
				Language, ScopeName, Path string
			} `json:"grammars"`
			Breakpoints []struct {
				Language string `json:"language"`
			} `json:"breakpoints"`
			Debuggers []struct {
				Type                    string `json:"type"`
				ConfigurationAttributes struct {
					Launch struct {
						Properties map[string]json.RawMessage `json:"properties"`
					} `json:"launch"`
				} `json:"configurationAttributes"`
				ConfigurationSnippets []struct {
					Body map[string]any `json:"body"`
				} `json:"configurationSnippets"`
			} `json:"debuggers"`
			Configuration struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"configuration"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(data, &manifest); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	c := manifest.Contributes
	if len(c.Languages) != 1 || c.Languages[0].ID != "hale" || !slices.Equal(c.Languages[0].Extensions, []string{".hl"}) {
		t.Errorf("languages %+v, want hale for .hl", c.Languages)
	}
	if len(c.Grammars) != 1 || c.Grammars[0].ScopeName != "source.hale" {
		t.Fatalf("grammars %+v", c.Grammars)
	}
	var grammar struct {
		ScopeName string `json:"scopeName"`
	}
	g, err := os.ReadFile(filepath.Join(vscodeDir, c.Grammars[0].Path))
	if err != nil || json.Unmarshal(g, &grammar) != nil || grammar.ScopeName != "source.hale" {
		t.Errorf("grammar %s: %v, scope %q", c.Grammars[0].Path, err, grammar.ScopeName)
	}
	if len(c.Breakpoints) != 1 || c.Breakpoints[0].Language != "hale" {
		t.Errorf("breakpoints %+v: VS Code would not let breakpoints be set in .hl files", c.Breakpoints)
	}
	if _, ok := c.Configuration.Properties["hale.path"]; !ok {
		t.Errorf("no hale.path setting for the adapter's path")
	}
	if _, err := os.Stat(filepath.Join(vscodeDir, manifest.Main)); err != nil {
		t.Errorf("main %s: %v", manifest.Main, err)
	}
	if len(c.Debuggers) != 1 || c.Debuggers[0].Type != "hale" {
		t.Fatalf("debuggers %+v", c.Debuggers)
	}
	var attrs []string
	for name := range c.Debuggers[0].ConfigurationAttributes.Launch.Properties {
		attrs = append(attrs, name)
	}
	var fields []string
	lt := reflect.TypeFor[LaunchArgs]()
	for i := range lt.NumField() {
		// noDebug is VS Code's own attribute (Run Without Debugging).
		if tag := lt.Field(i).Tag.Get("json"); tag != "noDebug" {
			fields = append(fields, tag)
		}
	}
	slices.Sort(attrs)
	slices.Sort(fields)
	if !slices.Equal(attrs, fields) {
		t.Errorf("launch attributes in package.json %v, hale dap reads %v", attrs, fields)
	}
	kinds := map[string]bool{}
	for _, s := range c.Debuggers[0].ConfigurationSnippets {
		if s.Body["type"] != "hale" || s.Body["request"] != "launch" {
			t.Errorf("snippet %v is not a hale launch", s.Body)
		}
		for _, k := range []string{"recording", "bundle"} {
			if _, ok := s.Body[k]; ok {
				kinds[k] = true
			}
		}
		for k := range s.Body {
			if k != "type" && k != "request" && k != "name" && !slices.Contains(fields, k) {
				t.Errorf("snippet attribute %q is no launch argument", k)
			}
		}
	}
	if !kinds["recording"] || !kinds["bundle"] || len(c.Debuggers[0].ConfigurationSnippets) != 3 {
		t.Errorf("want snippets for a program, a recording and a bundle")
	}
}
