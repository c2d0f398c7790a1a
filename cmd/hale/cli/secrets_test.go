package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// secretsApp sends requests with a secret Authorization header, a plain
// credential header and a secret one naming two variables, to a server
// that echoes them back; it also reads the key's variable with
// std::os::env (withheld under every policy, since the program names it
// as a secret) and a request that fails with a secret in it.
const secretsApp = `locus Agent {
    on start {
        let base = std::os::args()[0];
        let n = len(std::os::env("HALE_API_KEY", ""));
        print("env length " + str(n));
        match std::os::secret("HALE_API_KEY") {
            Some(key) => {
                var req = std::http::request("POST", base + "/echo");
                req.secret_headers["Authorization"] = "Bearer " + key;
                req.secret_headers["X-Pair"] = unwrap(std::os::secret("HALE_ORG")) + ":" + key;
                req.headers["Cookie"] = "session=` + cookieValue + `";
                req.headers["X-Trace"] = "t-1";
                req.body = "{\"q\": 1}";
                let resp = std::http::send(req);
                print(str(resp.status) + " " + resp.body);
                print(unwrap_or(get(resp.headers, "X-Echo-Auth"), "-"));
                var bad = std::http::request("GET", "http://127.0.0.1:1/");
                bad.secret_headers["Authorization"] = "Bearer " + key;
                let r = try std::http::send(bad);
                match r { Ok(_) => { print("sent"); }, Err(e) => { print(e.kind); } }
            },
            None => { print("no key"); },
        }
    }
}
main { spawn Agent; }
`

const (
	secretKey   = `sk-Q9"x<y>&z\w-7TtLongEnoughKey`
	secretOrg   = "org-4411-secret"
	cookieValue = "c00kie-Value-42"
)

// leakForms returns the encodings in which a value could leak: as is,
// JSON-escaped (Go's and the JSON view's), hex in both cases, and base64
// in its four alphabets.
func leakForms(v string) map[string]string {
	forms := map[string]string{"raw": v}
	js, _ := json.Marshal(v)
	forms["json"] = string(js[1 : len(js)-1])
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	forms["json-noescape"] = strings.TrimSpace(b.String())[1 : len(strings.TrimSpace(b.String()))-1]
	forms["hex"] = hex.EncodeToString([]byte(v))
	forms["HEX"] = strings.ToUpper(hex.EncodeToString([]byte(v)))
	forms["base64"] = base64.StdEncoding.EncodeToString([]byte(v))
	forms["base64url"] = base64.URLEncoding.EncodeToString([]byte(v))
	forms["base64raw"] = base64.RawStdEncoding.EncodeToString([]byte(v))
	forms["base64rawurl"] = base64.RawURLEncoding.EncodeToString([]byte(v))
	return forms
}

// TestSecretsNeverRecorded records the app on both engines under every
// env policy against a loopback server that echoes the Authorization
// header into its body and a header, and checks that no form of the
// secret values (nor of the credential header's value) is in the
// artifact, its trace dump, trace summary --json, or the replay's --json
// and --diff outputs; the replay runs without the variables.
func TestSecretsNeverRecorded(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Pair")+"|"+r.Header.Get("Cookie"))
		mu.Unlock()
		w.Header()["Date"] = nil
		w.Header().Set("X-Echo-Auth", r.Header.Get("Authorization"))
		fmt.Fprintf(w, "auth=%s pair=%s key=%s body=%s", r.Header.Get("Authorization"), r.Header.Get("X-Pair"),
			strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), body)
	}))
	defer srv.Close()

	dir := t.TempDir()
	write(t, filepath.Join(dir, "app.hl"), secretsApp)
	needles := map[string]string{}
	for _, v := range []string{secretKey, secretOrg, "Bearer " + secretKey, secretOrg + ":" + secretKey, cookieValue} {
		for form, s := range leakForms(v) {
			needles[form+" of "+v] = s
		}
	}
	for _, engine := range []string{"native", "wasm"} {
		for _, policy := range []string{"", "withheld", "full"} {
			t.Run(engine+"/"+policy, func(t *testing.T) {
				t.Setenv("HALE_API_KEY", secretKey)
				t.Setenv("HALE_ORG", secretOrg)
				vars := map[string]string{"LOTUS_OBS_RECORD": "run.halerec", "LOTUS_OBS_RECORD_ENV": policy}
				var stdout bytes.Buffer
				t.Chdir(dir)
				code := Run([]string{"run", "--engine", engine, "app.hl", srv.URL}, env{stdin: strings.NewReader(""), stdout: &stdout, stderr: io.Discard,
					getenv: func(k string) string { return vars[k] }})
				if code != 0 {
					t.Fatalf("record: exit %d\n%s", code, &stdout)
				}
				mu.Lock()
				last := seen[len(seen)-1]
				mu.Unlock()
				if want := "Bearer " + secretKey + "|" + secretOrg + ":" + secretKey + "|session=" + cookieValue; last != want {
					t.Errorf("the server got %q, want the real values", last)
				}
				wantOut := fmt.Sprintf("env length %d\n200 auth=[secret HALE_API_KEY] pair=[secret HALE_ORG+HALE_API_KEY] key=[secret HALE_API_KEY] body={\"q\": 1}\n[secret HALE_API_KEY]\nio\n", len(secretKey))
				if stdout.String() != wantOut {
					t.Errorf("output:\n%s\nwant:\n%s", &stdout, wantOut)
				}

				// Replay without the variables.
				os.Unsetenv("HALE_API_KEY")
				os.Unsetenv("HALE_ORG")
				outputs := map[string]string{}
				data, err := os.ReadFile(filepath.Join(dir, "run.halerec"))
				if err != nil {
					t.Fatal(err)
				}
				outputs["artifact"] = string(data)
				for name, args := range map[string][]string{
					"trace dump":           {"trace", "dump", "run.halerec"},
					"trace summary --json": {"trace", "summary", "--json", "run.halerec"},
					"replay --json":        {"replay", "--engine", engine, "--json", "run.halerec", "app.hl"},
					"replay --diff":        {"replay", "--engine", engine, "--diff", "-o", "again.halerec", "run.halerec", "app.hl"},
				} {
					var out, errOut bytes.Buffer
					code := Run(args, env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }})
					want := 0
					if name == "replay --json" || name == "replay --diff" {
						// The env read of the key is withheld and not
						// supplied: a missing input, named, not a leak.
						want = 1
					}
					if code != want {
						t.Errorf("%s: exit %d, want %d\n%s%s", name, code, want, &out, &errOut)
					}
					outputs[name] = out.String() + errOut.String()
				}
				again, _ := os.ReadFile(filepath.Join(dir, "again.halerec"))
				outputs["replay's own artifact"] = string(again)
				if !strings.Contains(outputs["trace dump"], `{"secret":["Bearer ",{"env":"HALE_API_KEY"}]}`) {
					t.Errorf("trace dump does not show the secret header's parts:\n%s", outputs["trace dump"])
				}
				if !strings.Contains(outputs["trace dump"], `"Cookie":"[withheld: 23 bytes]"`) || !strings.Contains(outputs["trace dump"], `"X-Trace":"t-1"`) {
					t.Errorf("trace dump does not show the credential header withheld (and only it):\n%s", outputs["trace dump"])
				}
				for where, text := range outputs {
					for what, needle := range needles {
						if strings.Contains(text, needle) {
							t.Errorf("%s holds the %s", where, what)
						}
					}
				}

				// With the env read supplied (by length), the replay is
				// identical, still without any secret's value.
				var out, errOut bytes.Buffer
				code = Run([]string{"replay", "--engine", engine, "run.halerec", "app.hl", "--env", "HALE_API_KEY=" + strings.Repeat("x", len(secretKey))},
					env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }})
				if code != 0 || !strings.Contains(errOut.String(), "replay OK") {
					t.Errorf("replay with the env value supplied: exit %d\n%s%s", code, &out, &errOut)
				}
				if out.String() != wantOut {
					t.Errorf("replayed output:\n%s\nwant:\n%s", &out, wantOut)
				}
			})
		}
	}
}
