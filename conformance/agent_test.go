package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hale-lang/hale/cmd/hale/cli"
	"github.com/hale-lang/hale/internal/fakellm"
)

// The key the agent tests use: it must never appear in a recording.
const agentKey = "sk-conformance-4f1d9a7c2b"

// runHale runs the hale CLI in process and returns its exit code, stdout
// and stderr. The program's environment is this process's (t.Setenv).
func runHale(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	getenv := func(k string) string { return os.Getenv(k) }
	code := cli.RunWith(args, strings.NewReader(""), &out, &errOut, getenv)
	return code, out.String(), errOut.String()
}

// assertNoKey fails if data holds the key in any of the forms an encoder
// might have written it in.
func assertNoKey(t *testing.T, what string, data []byte) {
	t.Helper()
	for _, form := range []string{
		agentKey,
		base64.StdEncoding.EncodeToString([]byte(agentKey)),
		base64.RawURLEncoding.EncodeToString([]byte(agentKey)),
		hex.EncodeToString([]byte(agentKey)),
		strings.TrimPrefix(agentKey, "sk-"), // a prefix-stripped echo
	} {
		if bytes.Contains(data, []byte(form)) {
			t.Errorf("%s holds the API key (as %q)", what, form)
		}
	}
}

// TestAgentExampleRecordedAndReplayedWithoutTheKey runs examples/agent.hl
// against a fake chat-completions server whose first call fails with 503
// and whose second stalls past the agent's timeout, so the agent's retry
// path runs; then it replays the recording on the other engine with the
// server gone and the key unset, and checks the key is nowhere in the
// artifact or in its dump.
func TestAgentExampleRecordedAndReplayedWithoutTheKey(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the agent against a fake server: a few seconds")
	}
	example := filepath.Join("..", "examples", "agent.hl")
	for _, engine := range []string{"wasm", "native"} {
		t.Run(engine, func(t *testing.T) {
			srv, err := fakellm.Start(fakellm.Options{Key: agentKey, FailFirst: 1, StallFirst: 1, Stall: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			t.Setenv("OPENAI_API_KEY", agentKey)
			t.Setenv("LLM_BASE_URL", srv.URL)
			t.Setenv("LLM_MODEL", "fake-model")
			art := filepath.Join(t.TempDir(), "agent.halerec")
			t.Setenv("LOTUS_OBS_RECORD", art)
			// Record every env value, so the replay needs no --env: the
			// key stays out even so, because it is only ever a secret.
			t.Setenv("LOTUS_OBS_RECORD_ENV", "full")

			code, out, errOut := runHale(t, "run", "--engine", engine, example, "--", "How many pears do we have, and what do they cost?")
			if code != 0 {
				t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			want := regexp.MustCompile(`^attempt 1 of 3: HTTP 503
attempt 2 of 3: cannot POST "http://127\.0\.0\.1:[0-9]+/v1/chat/completions": no response within 1500 ms \(timeout\)
tool call call_1: lookup_stock\(\{"item":"pears"\}\)
tool call call_2: unit_price\(\{"item":"pears"\}\)
answer: Here is what I found: 7 pears in stock; pears cost 1\.20 euros each\.
$`)
			if !want.MatchString(out) {
				t.Fatalf("the agent printed\n%s\nwant it to match\n%s", out, want)
			}
			if n := srv.Calls(); n != 4 {
				t.Errorf("the server saw %d calls, want 4 (503, timeout, tools, answer)", n)
			}

			// Replay on the other engine, with the server gone and no key.
			srv.Close()
			t.Setenv("OPENAI_API_KEY", "")
			t.Setenv("LLM_BASE_URL", "")
			t.Setenv("LOTUS_OBS_RECORD", "")
			other := map[string]string{"wasm": "native", "native": "wasm"}[engine]
			code, rout, rerr := runHale(t, "replay", art, example, "--diff", "--engine", other)
			if code != 0 || !strings.Contains(rerr, "replay OK") {
				t.Fatalf("replay: exit %d\n%s", code, rerr)
			}
			if rout != out {
				t.Errorf("the replay printed\n%s\nbut the run printed\n%s", rout, out)
			}

			data, err := os.ReadFile(art)
			if err != nil {
				t.Fatal(err)
			}
			assertNoKey(t, "the artifact", data)
			code, dump, derr := runHale(t, "trace", "dump", art)
			if code != 0 {
				t.Fatalf("trace dump: exit %d\n%s", code, derr)
			}
			assertNoKey(t, "hale trace dump", []byte(dump))
			if !strings.Contains(dump, `{"secret":["Bearer ",{"env":"OPENAI_API_KEY"}]}`) {
				t.Errorf("hale trace dump does not show the Authorization header as its secret parts:\n%s", dump)
			}
		})
	}
}

// TestAgentExampleScrubsAnEchoedKey gives the server a different key, so
// it answers 401 with the key it was sent quoted in its error message, as
// some real APIs do: the agent prints the failure with the key replaced by
// [secret OPENAI_API_KEY], and neither the output nor the recording holds
// it.
func TestAgentExampleScrubsAnEchoedKey(t *testing.T) {
	srv, err := fakellm.Start(fakellm.Options{Key: "sk-the-server-wants-another"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", agentKey)
	t.Setenv("LLM_BASE_URL", srv.URL)
	art := filepath.Join(t.TempDir(), "agent.halerec")
	t.Setenv("LOTUS_OBS_RECORD", art)
	code, out, errOut := runHale(t, "run", filepath.Join("..", "examples", "agent.hl"), "--", "How many apples?")
	if code != 1 {
		t.Fatalf("run: exit %d, want 1 (the agent gives up)\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "the agent failed: HTTP 401") || !strings.Contains(out, "[secret OPENAI_API_KEY]") {
		t.Errorf("want the 401 reported with the echoed key scrubbed, got\n%s", out)
	}
	assertNoKey(t, "the output", []byte(out+errOut))
	data, err := os.ReadFile(art)
	if err != nil {
		t.Fatal(err)
	}
	assertNoKey(t, "the artifact", data)
}

// TestAgentExampleWithoutAKey: the agent says what to set and exits 2.
func TestAgentExampleWithoutAKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("LLM_BASE_URL", "http://127.0.0.1:1")
	code, out, _ := runHale(t, "run", filepath.Join("..", "examples", "agent.hl"), "--", "How many apples?")
	if code != 2 || !strings.Contains(out, "set OPENAI_API_KEY") {
		t.Errorf("exit %d, output\n%s\nwant exit 2 asking for OPENAI_API_KEY", code, out)
	}
}
