package hale

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGo is a `go` command for .ci/fuzz: `go list` prints the package
// folder $FAKE_DIR, and each `go test` plays the next outcome of the
// space-separated $FAKE_OUTCOMES: pass, deadline (the coordinator's
// "context deadline exceeded" at -fuzztime expiry), crash (a failure that
// writes a new input under testdata/fuzz, with the deadline message
// too), or fail (any other failure).
const fakeGo = `#!/usr/bin/env bash
case $1 in
  list) echo "$FAKE_DIR"; exit 0 ;;
esac
n=$(cat "$FAKE_DIR/calls" 2>/dev/null || echo 0)
echo $((n+1)) >"$FAKE_DIR/calls"
set -- $FAKE_OUTCOMES
shift $n
case ${1:-pass} in
  pass) echo "PASS"; exit 0 ;;
  deadline) echo "fuzz: elapsed: 10s, execs: 1000"; echo "--- FAIL: FuzzX (10.00s)"; echo "    context deadline exceeded"; exit 1 ;;
  crash) mkdir -p "$FAKE_DIR/testdata/fuzz/FuzzX"; echo x >"$FAKE_DIR/testdata/fuzz/FuzzX/0123abcd"
         echo "--- FAIL: FuzzX"; echo "    context deadline exceeded"; exit 1 ;;
  fail) echo "--- FAIL: FuzzX"; echo "    panic: boom"; exit 1 ;;
esac
`

// TestCIFuzzStep checks that CI's fuzz step passes the fuzz coordinator's
// deadline flake (retried once, then a note) but fails on a real finding.
func TestCIFuzzStep(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script, err := filepath.Abs(".ci/fuzz")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		outcomes string
		pass     bool
		calls    string
		says     string
	}{
		{"pass", true, "1", ""},
		{"deadline pass", true, "2", "running it once more"},
		{"deadline deadline", true, "2", "counted as a pass"},
		{"crash", false, "1", "left a new failing input"},
		{"deadline crash", false, "2", "left a new failing input"},
		{"fail", false, "1", "panic: boom"},
	} {
		t.Run(strings.ReplaceAll(tc.outcomes, " ", "_"), func(t *testing.T) {
			bin, dir := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bash, script, "example.com/p", "FuzzX", "10s")
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
				"FAKE_DIR="+dir, "FAKE_OUTCOMES="+tc.outcomes)
			out, err := cmd.CombinedOutput()
			if (err == nil) != tc.pass {
				t.Errorf("passed = %v, want %v; output:\n%s", err == nil, tc.pass, out)
			}
			calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
			if got := strings.TrimSpace(string(calls)); got != tc.calls {
				t.Errorf("go test ran %s times, want %s", got, tc.calls)
			}
			if !strings.Contains(string(out), tc.says) {
				t.Errorf("output does not say %q:\n%s", tc.says, out)
			}
		})
	}
}
