package check_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/check"
	"github.com/hale-lang/hale/lang/diag"
	"github.com/hale-lang/hale/lang/syntax"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.out golden files")

// fakeStd is a small standard library, so that these tests do not depend
// on the real one: primitives, a std type, and a module with a const, an
// enum and fns with bodies that use the module's names unqualified.
var fakeStd = []struct{ path, module, src string }{
	{"std/time.hl", "std::time", `
@primitive(effect: "time")
fn now_ms() -> int;
@primitive(effect: "time")
fn sleep_ms(ms: int);
`},
	{"std/http.hl", "std::http", `
type Response { status: int, body: string, headers: {string: string} }
@primitive(effect: "net")
fn get(url: string) -> Response;
type Request { method: string, url: string, headers: {string: string},
               secret_headers: {string: secret}, body: string, timeout_ms: int }
fn request(method: string, url: string) -> Request {
    return Request { method: method, url: url, headers: {}, secret_headers: {}, body: "", timeout_ms: 0 };
}
@primitive(effect: "net")
fn send(req: Request) -> Response;
`},
	{"std/os.hl", "std::os", `
@primitive(effect: "env")
fn secret(name: string) -> Option<secret>;
`},
	{"std/io.hl", "std::io", `
@primitive(effect: "io")
fn println(s: string);
`},
	{"std/text.hl", "std::text", `
const SEP: string = ",";
enum Mode { Plain, Quoted(string) }
fn twice(s: string) -> string { return s + SEP + s; }
fn quote(s: string) -> Mode { return Mode::Quoted(twice(s)); }
fn label(m: Mode) -> string {
    match m {
        Mode::Plain => { return "plain"; },
        Mode::Quoted(q) => { return q; },
    }
}
`},
}

// parseStd parses fakeStd afresh (the checker annotates the trees).
func parseStd(t testing.TB) []*ast.File {
	var files []*ast.File
	for _, s := range fakeStd {
		f, errs := syntax.ParseStdlib(s.path, s.module, []byte(s.src))
		if len(errs) > 0 {
			t.Fatalf("fake stdlib %s: %v", s.path, errs)
		}
		files = append(files, f)
	}
	return files
}

// checkFiles parses the named sources (the entry first) and checks them.
func checkFiles(t testing.TB, names []string, srcs [][]byte) ([]*ast.File, *check.Result, diag.List) {
	var files []*ast.File
	for i, name := range names {
		f, errs := syntax.Parse(name, srcs[i])
		if len(errs) > 0 {
			t.Fatalf("syntax errors:\n%v", errs)
		}
		files = append(files, f)
	}
	res, errs := check.Check(files, parseStd(t))
	return files, res, errs.Sort()
}

// checkSource checks one file named app.hl.
func checkSource(t testing.TB, src string) (*ast.File, *check.Result, diag.List) {
	files, res, errs := checkFiles(t, []string{"app.hl"}, [][]byte{[]byte(src)})
	return files[0], res, errs
}

// errorComment matches `/* ERROR "regexp" */` or /* ERROR `regexp` */.
var errorComment = regexp.MustCompile("/\\* ERROR (\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`) \\*/")

// expectations returns, per line, the regexps of the errors expected there.
func expectations(t *testing.T, src string) map[int][]*regexp.Regexp {
	want := map[int][]*regexp.Regexp{}
	for i, line := range strings.Split(src, "\n") {
		for _, m := range errorComment.FindAllStringSubmatch(line, -1) {
			s, err := strconv.Unquote(m[1])
			if err != nil {
				t.Fatalf("line %d: bad ERROR comment %s: %v", i+1, m[1], err)
			}
			rx, err := regexp.Compile(s)
			if err != nil {
				t.Fatalf("line %d: bad ERROR regexp: %v", i+1, err)
			}
			want[i+1] = append(want[i+1], rx)
		}
	}
	return want
}

// matchErrors compares reported errors of one file with its ERROR comments:
// every error must be expected on its line, every expectation met. The
// regexps match "message [code]" followed by each hint in parentheses.
func matchErrors(t *testing.T, file, src string, errs diag.List) {
	t.Helper()
	want := expectations(t, src)
	for _, e := range errs {
		if e.Pos.File != file {
			continue
		}
		text := e.Msg + " [" + string(e.Code) + "]"
		for _, h := range e.Hints {
			text += " (" + h + ")"
		}
		rxs := want[e.Pos.Line]
		found := -1
		for i, rx := range rxs {
			if rx.MatchString(text) {
				found = i
				break
			}
		}
		if found < 0 {
			t.Errorf("%s: unexpected error: %s", e.Pos, text)
			continue
		}
		want[e.Pos.Line] = append(rxs[:found:found], rxs[found+1:]...)
	}
	for line, rxs := range want {
		for _, rx := range rxs {
			t.Errorf("%s:%d: missing error matching %q", file, line, rx)
		}
	}
}

// golden compares text with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, text string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if text == "" {
			os.Remove(path)
			return
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil && text != "" {
		t.Fatalf("missing golden file %s (run go test -update)", path)
	}
	if string(old) != text {
		t.Errorf("%s differs (run go test -update to accept):\n--- got\n%s--- want\n%s", path, text, old)
	}
}

// TestCheck checks every testdata/*.hl file against its ERROR comments and
// its golden list of errors with exact positions (testdata/*.out). Files
// without ERROR comments must check cleanly.
func TestCheck(t *testing.T) {
	names, err := filepath.Glob("testdata/*.hl")
	if err != nil || len(names) == 0 {
		t.Fatalf("no test files: %v", err)
	}
	for _, path := range names {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, _, errs := checkFiles(t, []string{name}, [][]byte{src})
			matchErrors(t, name, string(src), errs)
			var out strings.Builder
			for _, e := range errs {
				out.WriteString(e.Error() + "\n")
			}
			golden(t, strings.TrimSuffix(name, ".hl")+".out", out.String())
		})
	}
}
