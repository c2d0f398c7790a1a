package cli

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// credsApp fetches a page with a password read from the environment in
// the URL's userinfo.
const credsApp = `locus Main {
    on start {
        let pw = std::os::env("SITE_PASSWORD", "");
        let r = std::http::get("http://alice:" + pw + "@" + std::os::args()[0] + "/page");
        print(str(r.status) + " " + r.body);
    }
}
main { spawn Main; }
`

// TestURLPasswordIsWithheld: the password in a URL's userinfo reaches the
// server (the live call uses the real URL) but appears nowhere in the
// recording, nor in trace dump; the replay matches the call by the
// password's length, and one of another length diverges.
func TestURLPasswordIsWithheld(t *testing.T) {
	const password = "Zq7-very-secret-PW"
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pw, ok := r.BasicAuth()
		mu.Lock()
		got = append(got, fmt.Sprintf("%s:%s:%v", user, pw, ok))
		mu.Unlock()
		w.Header()["Date"] = nil
		fmt.Fprintf(w, "hello %s", user)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	dir := t.TempDir()
	write(t, filepath.Join(dir, "app.hl"), credsApp)
	for _, policy := range []string{"", "full"} {
		t.Run("env policy "+policy, func(t *testing.T) {
			// The program reads the process environment; hale its settings
			// through getenv.
			t.Setenv("SITE_PASSWORD", password)
			vars := map[string]string{"LOTUS_OBS_RECORD": "run.halerec"}
			if policy != "" {
				vars["LOTUS_OBS_RECORD_ENV"] = policy
			}
			code, stderr := runIn(t, dir, nil, vars, "run", "--engine", "native", "app.hl", host)
			if code != 0 {
				t.Fatalf("record: exit %d, %s", code, stderr)
			}
			mu.Lock()
			last := got[len(got)-1]
			mu.Unlock()
			if last != "alice:"+password+":true" {
				t.Errorf("the server got %q, want the real credentials", last)
			}
			data, err := os.ReadFile(filepath.Join(dir, "run.halerec"))
			if err != nil {
				t.Fatal(err)
			}
			var stdout, errOut bytes.Buffer
			t.Chdir(dir)
			if code := Run([]string{"trace", "dump", "run.halerec"}, env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &errOut, getenv: func(string) string { return "" }}); code != 0 {
				t.Fatalf("trace dump: exit %d, %s", code, &errOut)
			}
			dump := stdout.String()
			wantURL := "http://alice:" + strings.Repeat("*", len(password)) + "@" + host + "/page"
			if !strings.Contains(dump, `"args":["`+wantURL+`"]`) {
				t.Errorf("trace dump does not show the URL as %s:\n%s", wantURL, dump)
			}
			if policy == "full" {
				// The env value itself is recorded under this policy; the
				// URL's copy of it still is not.
				if n := strings.Count(dump, password); n != 1 {
					t.Errorf("with env policy full, the password appears %d times in the dump, want once (the env call)", n)
				}
				return
			}
			for _, where := range []struct{ name, text string }{{"the artifact", string(data)}, {"trace dump", dump}} {
				if strings.Contains(where.text, password) {
					t.Errorf("the password appears in %s", where.name)
				}
			}

			// Replay: the right length matches (the recorded response is
			// served; nothing is sent to the server), another diverges.
			before := len(got)
			same := strings.Repeat("x", len(password))
			if code, stderr := runIn(t, dir, nil, nil, "replay", "--engine", "native", "run.halerec", "app.hl", "--env", "SITE_PASSWORD="+same); code != 0 || !strings.Contains(stderr, "replay OK") {
				t.Errorf("replay with a password of the same length: exit %d, %s", code, stderr)
			}
			if len(got) != before {
				t.Errorf("the replay called the server")
			}
			code, stderr = runIn(t, dir, nil, nil, "replay", "--engine", "native", "run.halerec", "app.hl", "--env", "SITE_PASSWORD=short")
			if code != ExitFailure || !strings.Contains(stderr, "missing input SITE_PASSWORD: the value supplied has 5 bytes, the recorded one had 18 bytes") {
				t.Errorf("replay with a shorter password: exit %d, %s", code, stderr)
			}
			// A program that sends a password one byte longer (from the
			// same env value) misses the journal at the call, and the
			// report shows neither password.
			write(t, filepath.Join(dir, "longer.hl"), strings.Replace(credsApp, `"http://alice:" + pw`, `"http://alice:" + pw + "!"`, 1))
			code, stderr = runIn(t, dir, nil, nil, "replay", "--engine", "native", "--unverified", "run.halerec", "longer.hl", "--env", "SITE_PASSWORD="+password)
			if code != ExitFailure || !strings.Contains(stderr, "journal miss") ||
				!strings.Contains(stderr, "alice:"+strings.Repeat("*", len(password)+1)+"@") || strings.Contains(stderr, password) {
				t.Errorf("replay with a longer password in the URL: exit %d, %s", code, stderr)
			}
		})
	}
}
