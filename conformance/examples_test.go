package conformance

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hale-lang/hale/cmd/hale/cli"
)

// TestExamplesRecordAndReplayIdentically records every program in
// examples/ (several times for the racy ones) and requires
// `hale replay --diff` to say identical, on both engines.
func TestExamplesRecordAndReplayIdentically(t *testing.T) {
	files, err := filepath.Glob("../examples/*.hl")
	if err != nil || len(files) < 5 {
		t.Fatalf("want at least 5 examples, found %d (%v)", len(files), err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		fmt.Fprintf(w, "page %s", r.URL.Path)
	}))
	defer srv.Close()
	inputs := map[string]struct {
		args  []string
		stdin string
	}{
		"fetch.hl":     {args: []string{srv.URL + "/a", srv.URL + "/bb", srv.URL + "/ccc"}},
		"wordcount.hl": {stdin: "the cat\nThe dog and the CAT\n"},
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			in := inputs[name]
			for i, engine := range []string{"wasm", "native", "wasm"} {
				artifact := filepath.Join(t.TempDir(), "run.halerec")
				getenv := func(k string) string {
					if k == "LOTUS_OBS_RECORD" {
						return artifact
					}
					return ""
				}
				var out, errOut bytes.Buffer
				args := append([]string{"run", "--engine", engine, file, "--"}, in.args...)
				code := cli.RunWith(args, strings.NewReader(in.stdin), &out, &errOut, getenv)
				if code != 0 && code != 3 {
					t.Fatalf("run %d (%s): exit %d\n%s", i, engine, code, errOut.String())
				}
				// Replay on the other engine: the recording is the
				// schedule, so the engines must agree exactly.
				other := map[string]string{"wasm": "native", "native": "wasm"}[engine]
				var rout, rerr bytes.Buffer
				rcode := cli.RunWith([]string{"replay", artifact, file, "--diff", "--engine", other},
					strings.NewReader(""), &rout, &rerr, func(string) string { return "" })
				if rcode != 0 || !strings.Contains(rerr.String(), "replay OK") {
					t.Fatalf("replay %d of %s (recorded on %s, replayed on %s): exit %d\n%s", i, name, engine, other, rcode, rerr.String())
				}
				if rout.String() != out.String() {
					t.Errorf("replay %d printed\n%s\nbut the recorded run printed\n%s", i, rout.String(), out.String())
				}
				if want, ok := examplesOutput[name]; ok && out.String() != want {
					t.Errorf("run %d (%s) printed\n%s\nwant\n%s", i, engine, out.String(), want)
				}
			}
		})
	}
}

// examplesOutput is the exact output of the examples whose output does
// not depend on how their consumers interleave.
var examplesOutput = map[string]string{
	// Timeouts and retries by timer: which attempts time out depends only
	// on the work group's round-robin, which counts the dispatcher's
	// publishes, and the timeouts fire in due order.
	"jobs.hl": `job 1 timed out on attempt 0
job 2 timed out on attempt 0
job 5 timed out on attempt 0
job 6 timed out on attempt 0
job 2 timed out on attempt 1
job 5 timed out on attempt 1
job 0: worker 0, attempt 0, value 111
job 1: worker 0, attempt 1, value 18
job 2: gave up after 2 attempts
job 3: worker 3, attempt 0, value 18
job 4: worker 0, attempt 0, value 106
job 5: gave up after 2 attempts
job 6: worker 3, attempt 1, value 26
job 7: worker 3, attempt 0, value 13
6 timeouts
`,
}

// TestBankExample: hale test finds the lost update of examples/bank.hl
// with a fixed seed, shrinks it and writes the bundle kept in
// examples/bank-fixed/tests/replays/, which verifies; the fixed version
// passes hale test with that bundle as a regression.
func TestBankExample(t *testing.T) {
	const kept = "../examples/bank-fixed/tests/replays/360148bdc6f6.replay"
	run := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := cli.RunWith(args, strings.NewReader(""), &out, &errOut, func(string) string { return "" })
		return code, out.String() + errOut.String()
	}
	dir := t.TempDir()
	code, out := run("test", "../examples/bank.hl", "--seed", "1", "--out", dir, "--engine", "native")
	if code != 1 || !strings.Contains(out, "assert: lost update: the balance is 120, not 130 at bank.hl:41:13") {
		t.Fatalf("hale test bank.hl: exit %d\n%s", code, out)
	}
	found, err := os.ReadFile(filepath.Join(dir, "360148bdc6f6.replay"))
	if err != nil {
		t.Fatal(err)
	}
	keptData, err := os.ReadFile(kept)
	if err != nil {
		t.Fatal(err)
	}
	// The same schedule as the kept bundle (the digests change with the toolchain).
	schedule := func(b []byte) string {
		s := string(b)
		return s[strings.Index(s, `"seed"`):]
	}
	if schedule(found) != schedule(keptData) {
		t.Errorf("hale test wrote another bundle than the kept one:\n%s", found)
	}
	for _, engine := range []string{"wasm", "native"} {
		if code, out := run("replay", kept, "--verify", "--engine", engine); code != 0 || !strings.Contains(out, "reproduced: ") {
			t.Errorf("verify on %s: exit %d\n%s", engine, code, out)
		}
	}
	if code, out := run("test", "../examples/bank-fixed/bank.hl", "--seed", "1", "--engine", "native", "--out", t.TempDir()); code != 0 || !strings.Contains(out, "regressions: 1 bundles, 0 failing") {
		t.Errorf("hale test bank-fixed: exit %d\n%s", code, out)
	}
}
