// Package conformance is the executable specification of Hale: txtar
// scripts under testdata/<area>/ run the real hale command (registered in
// TestMain, so scripts see real exit codes) and assert exact output and
// exit codes, every script once per engine (wasm and native). Run one
// area with `go test ./conformance -run TestScripts/wasm/replay`;
// rewrite expected output in place with `go test ./conformance -update`.
package conformance

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hale-lang/hale/cmd/hale/cli"
)

var update = flag.Bool("update", false, "rewrite the scripts' expected output files (cmp targets) in place")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"hale": func() { os.Exit(cli.Main()) },
	})
}

func TestScripts(t *testing.T) {
	areas, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	// One compilation cache for every script: compiling the interpreter
	// module once instead of once per script keeps the suite fast, and
	// the cache is keyed by the module's content.
	cache := t.TempDir()
	secrets := suiteSecretValues(t)
	total := 0
	// Every script runs under both engines ($HALE_ENGINE is the default
	// of --engine) and must give the same exact output on each.
	for _, engine := range []string{"wasm", "native"} {
		for _, dir := range areas {
			files, _ := filepath.Glob(filepath.Join(dir, "*.txtar"))
			if len(files) == 0 {
				continue
			}
			total += len(files)
			t.Run(engine+"/"+filepath.Base(dir), func(t *testing.T) {
				testscript.Run(t, testscript.Params{
					Dir:           dir,
					UpdateScripts: *update && engine == "wasm",
					Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
						"exitcode":  cmdExitCode,
						"httpserve": cmdHTTPServe,
						"corrupt":   cmdCorrupt,
						"repeat":    cmdRepeat,
					},
					Setup: func(env *testscript.Env) error {
						env.Setenv("XDG_CACHE_HOME", cache)
						env.Setenv("HOME", env.WorkDir)
						env.Setenv("HALE_ENGINE", engine)
						scanForSecrets(env, secrets)
						return nil
					},
				})
			})
		}
	}
	if total == 0 {
		t.Fatal("no conformance scripts found")
	}
}

// cmdExitCode implements `exitcode N command [args...]`: it runs the
// command like exec (so stdout and stderr can be checked afterwards) and
// fails unless it exits with status N.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad status %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// cmdHTTPServe implements `httpserve`: it starts an HTTP server on
// 127.0.0.1 for the rest of the script and sets $SERVER to its base URL,
// and $REFUSED to a URL whose port refuses connections. Routes:
// /hello (200 "hello world"), /missing (404 "not here"), /redirect (302 to
// /hello), /echo (echoes a POST body upper-cased, with its content type),
// /authecho (echoes the method, the Authorization, X-Api-Key and X-Trace
// headers and the body, and Authorization in the X-Echo-Auth response
// header), /slow (answers after 3 s), /away (302 to /authecho on another
// host name for the same server) and /here (302 to /authecho).
func cmdHTTPServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: httpserve")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Greeting", "yes")
		w.Header()["Date"] = nil // a fixed response, so a live replay can match the recording
		fmt.Fprint(w, "hello world")
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not here", http.StatusNotFound)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/hello", http.StatusFound)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.Header.Get("Content-Type"), strings.ToUpper(string(body)))
	})
	mux.HandleFunc("/authecho", func(w http.ResponseWriter, r *http.Request) {
		// A careless API: it echoes the credentials it got into its body
		// and a response header.
		body, _ := io.ReadAll(r.Body)
		w.Header()["Date"] = nil
		w.Header().Set("X-Echo-Auth", r.Header.Get("Authorization"))
		w.Header().Add("X-Multi", "one")
		w.Header().Add("X-Multi", "two")
		fmt.Fprintf(w, "%s auth=%s key=%s trace=%s body=%s", r.Method, r.Header.Get("Authorization"),
			r.Header.Get("X-Api-Key"), r.Header.Get("X-Trace"), body)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	ts.Defer(srv.Close)
	ts.Setenv("SERVER", srv.URL)
	// /away redirects to /authecho on the same server named otherwise
	// (localhost rather than 127.0.0.1): another host to the client.
	other := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other+"/authecho", http.StatusFound)
	})
	mux.HandleFunc("/here", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/authecho", http.StatusFound)
	})

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ts.Fatalf("httpserve: %v", err)
	}
	refused := "http://" + l.Addr().String() + "/"
	l.Close()
	ts.Setenv("REFUSED", refused)
}

// cmdCorrupt implements `corrupt truncate|flip|set FILE N [BYTE]`, damaging
// an artifact the way disks and networks do: truncate keeps the first N
// bytes (N < 0: drops the last -N), flip inverts the byte at offset N, set
// stores BYTE there (negative offsets count from the end).
func cmdCorrupt(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: corrupt truncate|flip|set FILE N [BYTE]")
	}
	path := ts.MkAbs(args[1])
	data, err := os.ReadFile(path)
	ts.Check(err)
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	if n < 0 {
		n += len(data)
	}
	if n < 0 || n > len(data) {
		ts.Fatalf("corrupt: offset %s out of range for %d bytes", args[2], len(data))
	}
	switch args[0] {
	case "truncate":
		data = data[:n]
	case "flip":
		data[n] ^= 0xff
	case "set":
		if len(args) != 4 {
			ts.Fatalf("usage: corrupt set FILE N BYTE")
		}
		b, err := strconv.Atoi(args[3])
		ts.Check(err)
		data[n] = byte(b)
	default:
		ts.Fatalf("corrupt: unknown operation %q", args[0])
	}
	ts.Check(os.WriteFile(path, data, 0o644))
}

// cmdRepeat implements `repeat TEMPLATE OUT MARK N ITEM SEP`: OUT is
// TEMPLATE with MARK replaced by N copies of ITEM joined by SEP, for
// programs too large to hold in a script (a sum of 100,000 terms).
func cmdRepeat(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 6 {
		ts.Fatalf("usage: repeat TEMPLATE OUT MARK N ITEM SEP")
	}
	tmpl, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	n, err := strconv.Atoi(args[3])
	ts.Check(err)
	items := make([]string, n)
	for i := range items {
		items[i] = args[4]
	}
	out := strings.Replace(string(tmpl), args[2], strings.Join(items, args[5]), 1)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(out), 0o644))
}
