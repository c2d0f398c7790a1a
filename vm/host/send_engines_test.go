package host

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The values of the secrets the send tests use.
const (
	testKey   = "sk-test-1234567890abcdef"
	testOrg   = "org-ZZ99"
	testShort = "pw"
)

func testEnv(name string) (string, bool) {
	switch name {
	case "HALE_KEY":
		return testKey, true
	case "HALE_ORG":
		return testOrg, true
	case "HALE_EMPTY":
		return "", true
	}
	return "", false
}

// echoServer answers with the method, the request's headers of interest
// and the body, echoing the Authorization header into its body and a
// response header, as a careless API might.
func echoServer(t testing.TB) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Echo-Auth", r.Header.Get("Authorization"))
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		fmt.Fprintf(w, "%s auth=%q org=%q accept=%q body=%q", r.Method, r.Header.Get("Authorization"),
			r.Header.Get("X-Org"), r.Header.Get("Accept"), b)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// runSendCase runs src on both engines with testEnv and checks that they
// agree and print want.
func runSendCase(t *testing.T, src, want string) {
	t.Helper()
	img := compileAll(t, src)
	var outs []outcome
	for _, kind := range realEngines {
		o := runWith(t, img, Options{Engine: kind, LookupEnv: testEnv})
		if o.err != nil {
			t.Fatalf("%v: %v", kind, o.err)
		}
		outs = append(outs, o)
	}
	if outs[0].stdout != outs[1].stdout || outs[0].stderr != outs[1].stderr {
		t.Fatalf("engines disagree:\nnative:\n%s%s\nwasm:\n%s%s", outs[0].stdout, outs[0].stderr, outs[1].stdout, outs[1].stderr)
	}
	if outs[0].stdout != want {
		t.Errorf("got:\n%s%s\nwant:\n%s", outs[0].stdout, outs[0].stderr, want)
	}
	for _, secret := range []string{testKey, testOrg} {
		if strings.Contains(outs[0].stdout+outs[0].stderr, secret) {
			t.Errorf("the output holds the secret %q", secret)
		}
	}
}

// TestEnginesSecret runs std::os::secret and joining on both engines: the
// program sees presence, never the value.
func TestEnginesSecret(t *testing.T) {
	// join is called often enough to be hot: a fn that joins secrets is
	// not one the second tier compiles, and runs as interpreted.
	runSendCase(t, `
fn join(k: secret, i: int) -> secret { if i % 2 == 0 { return "x" + k; } return k + "y"; }
fn count(n: int) -> int { var s = 0; for i in 0..n { s += i & 3; } return s; }
`+startSrc(`
            let hot = unwrap(std::os::secret("HALE_KEY"));
            var acc: [secret] = [];
            for i in 0..3000 { push(acc, join(hot, i)); }
            print(len(acc) + count(3000));
            print([is_some(std::os::secret("HALE_KEY")), is_some(std::os::secret("HALE_EMPTY")), is_none(std::os::secret("HALE_NONE"))]);
            let k = unwrap(std::os::secret("HALE_KEY"));
            let joined = "a" + ("b" + k) + "c" + "" + (k + k);
            var xs: [secret] = [joined, k];
            let m: {string: secret} = {"x": k};
            print(len(xs) + len(m));
            print(is_some(get(m, "x")));`),
		"7500\n[true, false, true]\n3\ntrue\n")
}

// TestEnginesHTTPSend runs std::http::send on both engines against a
// loopback server: methods, plain and secret headers, scrubbed echoes in
// the body and a header, repeated headers, timeouts and the traps.
func TestEnginesHTTPSend(t *testing.T) {
	srv := echoServer(t)
	decl := `
fn show(r: Result<std::http::Response>) {
    match r {
        Ok(resp) => { print(str(resp.status) + " " + resp.body); print(unwrap_or(get(resp.headers, "X-Echo-Auth"), "-") + " | " + unwrap_or(get(resp.headers, "X-Multi"), "-")); },
        Err(e) => { print(e.kind + ": " + e.message); },
    }
}
`
	src := decl + startSrc(`
            let base = "`+srv.URL+`";
            var req = std::http::request("PUT", base + "/echo");
            req.headers["Accept"] = "text/plain";
            req.secret_headers["authorization"] = "Bearer " + unwrap(std::os::secret("HALE_KEY"));
            req.secret_headers["X-Org"] = unwrap(std::os::secret("HALE_ORG")) + "/team";
            req.body = "payload";
            show(try std::http::send(req));
            var both = std::http::request("GET", base + "/echo");
            both.headers["X-ORG"] = "plain";
            both.secret_headers["x-org"] = unwrap(std::os::secret("HALE_ORG"));
            show(try std::http::send(both));
            var neg = std::http::request("GET", base + "/echo");
            neg.timeout_ms = -1;
            show(try std::http::send(neg));
            var slow = std::http::request("GET", base + "/slow");
            slow.timeout_ms = 50;
            let r = try std::http::send(slow);
            match r { Ok(_) => { print("no timeout"); }, Err(e) => { print(e.kind); } }
            var missing = std::http::request("GET", base + "/echo");
            let m = unwrap(std::os::secret("HALE_KEY"));
            missing.secret_headers["Authorization"] = m;
            show(try std::http::send(missing));
            show(try std::http::send(std::http::request("DELETE", "http://127.0.0.1:1/")));`)
	// The whole value of a secret header is replaced, so an echo does
	// not even show the literal parts around the variable.
	want := "200 PUT auth=\"[secret HALE_KEY]\" org=\"[secret HALE_ORG]\" accept=\"text/plain\" body=\"payload\"\n" +
		"[secret HALE_KEY] | a, b\n" +
		"arg: std::http::send: header \"x-org\" is in both headers (as \"X-ORG\") and secret_headers\n" +
		"arg: std::http::send: timeout_ms must not be negative, got -1\n" +
		"timeout\n" +
		"200 GET auth=\"[secret HALE_KEY]\" org=\"\" accept=\"\" body=\"\"\n" +
		"[secret HALE_KEY] | a, b\n" +
		"io: cannot DELETE \"http://127.0.0.1:1/\": dial tcp 127.0.0.1:1: connect: connection refused\n"
	runSendCase(t, src, want)
}

// TestEnginesSendMissingSecret: a secret whose variable is gone when the
// request is sent traps with kind io, naming the variable.
func TestEnginesSendMissingSecret(t *testing.T) {
	srv := echoServer(t)
	src := startSrc(`
            var req = std::http::request("GET", "` + srv.URL + `/echo");
            req.secret_headers["Authorization"] = "Bearer " + unwrap(std::os::secret("HALE_KEY"));
            let r = try std::http::send(req);
            match r { Ok(_) => { print("sent"); }, Err(e) => { print(e.kind + ": " + e.message); } }`)
	img := compileAll(t, src)
	calls := 0
	env := func(name string) (string, bool) {
		calls++
		if calls == 1 { // present for std::os::secret, gone when sending
			return testKey, true
		}
		return "", false
	}
	for _, kind := range realEngines {
		calls = 0
		o := runWith(t, img, Options{Engine: kind, LookupEnv: env})
		want := "io: std::http::send: secret header \"Authorization\": environment variable HALE_KEY is not set\n"
		if o.err != nil || o.stdout != want {
			t.Errorf("%v: %v\n%s%s", kind, o.err, o.stdout, o.stderr)
		}
	}
}

// TestSendRedirectDropsSecrets: a redirect to another host drops the
// secret headers; one to the same host keeps them.
func TestSendRedirectDropsSecrets(t *testing.T) {
	other := echoServer(t)
	mux := http.NewServeMux()
	same := httptest.NewServer(mux)
	t.Cleanup(same.Close)
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		// 127.0.0.1 and localhost are other hosts to the client.
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/echo", http.StatusFound)
	})
	mux.HandleFunc("/here", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/echo", http.StatusFound)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "here x-key=%q", r.Header.Get("X-Key"))
	})
	src := startSrc(`
            for path in ["/away", "/here"] {
                var req = std::http::request("GET", "` + same.URL + `" + path);
                req.secret_headers["X-Key"] = unwrap(std::os::secret("HALE_KEY"));
                req.secret_headers["Authorization"] = "Bearer " + unwrap(std::os::secret("HALE_KEY"));
                print(std::http::send(req).body);
            }`)
	runSendCase(t, src, "GET auth=\"\" org=\"\" accept=\"\" body=\"\"\nhere x-key=\"[secret HALE_KEY]\"\n")
}

// TestScrubber replaces whole values before their parts, every
// occurrence, and names a value of several variables by all of them.
func TestScrubber(t *testing.T) {
	s := newScrubber([]secretHeader{
		{name: "Authorization", value: "Bearer " + testKey, envs: []string{"HALE_KEY"}, vals: []string{testKey}},
		{name: "X-Pair", value: testOrg + ":" + testShort, envs: []string{"HALE_ORG", "HALE_PW"}, vals: []string{testOrg, testShort}},
		{name: "X-Lit", value: "literal only"},
	})
	in := "Bearer " + testKey + " then " + testKey + testKey + " and " + testOrg + ":" + testShort + " / " + testOrg + " literal only"
	want := "[secret HALE_KEY] then [secret HALE_KEY][secret HALE_KEY] and [secret HALE_ORG+HALE_PW] / [secret HALE_ORG] literal only"
	if got := s.scrub(in); got != want {
		t.Errorf("scrub:\n got %q\nwant %q", got, want)
	}
	if got := (*scrubber)(nil).scrub("x"); got != "x" {
		t.Errorf("nil scrubber changed the text: %q", got)
	}
}
