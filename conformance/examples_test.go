package conformance

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
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
			}
		})
	}
}
