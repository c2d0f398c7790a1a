package host

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

// gateway returns consumer 0 of a run of an empty program, whose Prim is
// the gateway under test.
func gateway(t *testing.T, opts Options) *consumer {
	t.Helper()
	prog := compileSIR(t, `main { }`)
	if opts.LookupEnv == nil {
		opts.LookupEnv = func(string) (string, bool) { return "", false }
	}
	r, err := newRunner(context.Background(), prog, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r.consumers[0]
}

// callPrim calls a primitive by name with canonical arguments.
func callPrim(c *consumer, name string, args ...value.Value) ([]byte, error) {
	p, ok := stdlib.Lookup(name)
	if !ok {
		panic("no primitive " + name)
	}
	b, _ := value.EncodeTuple(nil, args)
	return c.Prim(p.ID, b)
}

func decodeAs(t *testing.T, b []byte, ty *value.Type) value.Value {
	t.Helper()
	v, err := value.Decode(b, ty)
	if err != nil {
		t.Fatalf("result %x: %v", b, err)
	}
	return v
}

// TestEveryPrimitiveHasAnImplementation keeps the host in step with
// package stdlib's table, and the gateway ids with package vm's.
func TestEveryPrimitiveHasAnImplementation(t *testing.T) {
	for _, p := range stdlib.All() {
		if int(p.ID) >= len(prims) || prims[p.ID].live == nil {
			t.Errorf("%s (id %d) has no host implementation", p.Name, p.ID)
		}
	}
	for name := range liveByName {
		if _, ok := stdlib.Lookup(name); !ok {
			t.Errorf("host implements %s, which the standard library does not declare", name)
		}
	}
	if vm.PrimPublish != stdlib.PublishID {
		t.Errorf("vm.PrimPublish %d, stdlib.PublishID %d", vm.PrimPublish, stdlib.PublishID)
	}
	if p, _ := stdlib.Lookup("print"); p.ID != vm.PrimPrint {
		t.Errorf("vm.PrimPrint %d, stdlib print %d", vm.PrimPrint, p.ID)
	}
	c := gateway(t, Options{})
	if _, ok := stdlib.ByID(vm.PrimPoll); ok {
		t.Errorf("vm.PrimPoll %d is a primitive's id", vm.PrimPoll)
	}
	if _, err := c.Prim(vm.PrimPoll, nil); err != nil {
		t.Errorf("poll of a running run: %v", err)
	}
	if _, err := c.Prim(9999, nil); err == nil {
		t.Error("id 9999: no error")
	}
	if _, err := c.Prim(vm.PrimPublish, []byte{0x80}); err == nil {
		t.Error("publish with a bad topic: no error")
	}
}

func TestPrimBadArguments(t *testing.T) {
	c := gateway(t, Options{})
	for _, name := range []string{"std::time::now_ms", "std::rand::next_int", "std::fs::read_text", "std::http::get", "std::os::env"} {
		p, _ := stdlib.Lookup(name)
		if _, err := c.Prim(p.ID, []byte{0x01, 0x09, 0x09}); err == nil || !strings.Contains(err.Error(), "bad arguments") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := c.Prim(vm.PrimPrint, []byte{0x01, 0x01}); err == nil {
		t.Error("print of an int: no error")
	}
}

// fakeClock is a Clock that only moves when told. Consumers share it, so
// its methods lock.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	slept  []time.Duration
	ticked time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.ticked)
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
}

func TestPrimTime(t *testing.T) {
	clock := &fakeClock{now: time.UnixMilli(1_700_000_000_123)}
	c := gateway(t, Options{Clock: clock})
	b, err := callPrim(c, "std::time::now_ms")
	if err != nil || decodeAs(t, b, value.IntType).AsInt() != 1_700_000_000_123 {
		t.Errorf("now_ms: %x %v", b, err)
	}
	clock.ticked = 1500 * time.Nanosecond
	b, err = callPrim(c, "std::time::monotonic_ns")
	if err != nil || decodeAs(t, b, value.IntType).AsInt() != 1500 { // one tick since the run started
		t.Errorf("monotonic_ns: %d %v", decodeAs(t, b, value.IntType).AsInt(), err)
	}
	for _, ms := range []int64{5, 0, -3} {
		if b, err := callPrim(c, "std::time::sleep_ms", value.Int(ms)); err != nil || b != nil {
			t.Errorf("sleep_ms(%d): %x %v", ms, b, err)
		}
	}
	if !reflect.DeepEqual(clock.slept, []time.Duration{5 * time.Millisecond}) {
		t.Errorf("slept %v", clock.slept)
	}
}

func TestPrimRandom(t *testing.T) {
	seeded := func() *consumer {
		return gateway(t, Options{Entropy: bytes.NewReader(bytes.Repeat([]byte{7}, 1024))})
	}
	a, b := seeded(), seeded()
	for range 50 {
		x, err := callPrim(a, "std::rand::next_int", value.Int(10))
		y, _ := callPrim(b, "std::rand::next_int", value.Int(10))
		if err != nil || !bytes.Equal(x, y) {
			t.Fatalf("next_int: %x %x %v", x, y, err)
		}
		if n := decodeAs(t, x, value.IntType).AsInt(); n < 0 || n >= 10 {
			t.Fatalf("next_int(10) = %d", n)
		}
		f, err := callPrim(a, "std::rand::next_float")
		if r := decodeAs(t, f, value.FloatType).AsFloat(); err != nil || r < 0 || r >= 1 {
			t.Fatalf("next_float = %v %v", r, err)
		}
		callPrim(b, "std::rand::next_float")
	}
	for _, n := range []int64{0, -1} {
		_, err := callPrim(a, "std::rand::next_int", value.Int(n))
		if err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Errorf("next_int(%d): %v", n, err)
		}
	}
	g, err := callPrim(a, "std::os::getrandom", value.Int(16))
	if err != nil || len(decodeAs(t, g, value.BytesType).AsStr()) != 16 {
		t.Errorf("getrandom(16): %x %v", g, err)
	}
	if _, err := callPrim(a, "std::os::getrandom", value.Int(-1)); err == nil {
		t.Error("getrandom(-1): no error")
	}
	// Exhausted entropy traps rather than returning short.
	c := gateway(t, Options{Entropy: bytes.NewReader(make([]byte, 64))})
	if _, err := callPrim(c, "std::os::getrandom", value.Int(100)); err == nil {
		t.Error("getrandom past the entropy: no error")
	}
}

func TestPrimEnvArgs(t *testing.T) {
	env := map[string]string{"HOME_TOWN": "Ghent", "EMPTY": ""}
	c := gateway(t, Options{
		Args:      []string{"-v", "two words"},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	for _, tc := range []struct{ name, def, want string }{
		{"HOME_TOWN", "x", "Ghent"},
		{"EMPTY", "x", ""},
		{"MISSING", "fallback", "fallback"},
	} {
		b, err := callPrim(c, "std::os::env", value.Str(tc.name), value.Str(tc.def))
		if err != nil || decodeAs(t, b, value.StringType).AsStr() != tc.want {
			t.Errorf("env(%s): %x %v", tc.name, b, err)
		}
	}
	b, err := callPrim(c, "std::os::args")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := value.Encode(nil, value.NewList([]value.Value{value.Str("-v"), value.Str("two words")}))
	if !bytes.Equal(b, want) {
		t.Errorf("args: %x, want %x", b, want)
	}
}

func TestPrimFS(t *testing.T) {
	dir := t.TempDir()
	c := gateway(t, Options{Dir: dir})
	str := func(b []byte, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return decodeAs(t, b, value.StringType).AsStr()
	}
	if _, err := callPrim(c, "std::fs::write_text", value.Str("data.txt"), value.Str("héllo\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := callPrim(c, "std::fs::append_text", value.Str("data.txt"), value.Str("more")); err != nil {
		t.Fatal(err)
	}
	if _, err := callPrim(c, "std::fs::append_text", value.Str("new.txt"), value.Str("x")); err != nil {
		t.Fatal(err)
	}
	if got := str(callPrim(c, "std::fs::read_text", value.Str("data.txt"))); got != "héllo\nmore" {
		t.Errorf("read_text: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new.txt")); string(b) != "x" {
		t.Errorf("new.txt: %q", b)
	}
	os.WriteFile(filepath.Join(dir, "bin"), []byte{0, 0xff}, 0o644)
	b, err := callPrim(c, "std::fs::read_bytes", value.Str("bin"))
	if err != nil || decodeAs(t, b, value.BytesType).AsStr() != "\x00\xff" {
		t.Errorf("read_bytes: %x %v", b, err)
	}
	// Absolute paths are used as they are.
	abs := filepath.Join(dir, "data.txt")
	if got := str(callPrim(c, "std::fs::read_text", value.Str(abs))); !strings.HasPrefix(got, "héllo") {
		t.Errorf("absolute read_text: %q", got)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	for _, tc := range []struct {
		path string
		want bool
	}{{"data.txt", true}, {"sub", true}, {"nope.txt", false}, {"data.txt/inside", false}} {
		b, err := callPrim(c, "std::fs::exists", value.Str(tc.path))
		if err != nil || decodeAs(t, b, value.BoolType).AsBool() != tc.want {
			t.Errorf("exists(%s): %x %v", tc.path, b, err)
		}
	}
	b, err = callPrim(c, "std::fs::list_dir", value.Str("."))
	want, _ := value.Encode(nil, value.NewList([]value.Value{value.Str("bin"), value.Str("data.txt"), value.Str("new.txt"), value.Str("sub")}))
	if err != nil || !bytes.Equal(b, want) {
		t.Errorf("list_dir: %x %v", b, err)
	}
	for _, tc := range []struct {
		prim string
		args []value.Value
		want string
	}{
		{"std::fs::read_text", []value.Value{value.Str("missing.txt")}, `cannot read "missing.txt": no such file or directory`},
		{"std::fs::read_bytes", []value.Value{value.Str("missing.bin")}, `cannot read "missing.bin": no such file or directory`},
		{"std::fs::list_dir", []value.Value{value.Str("nodir")}, `cannot list "nodir": no such file or directory`},
		{"std::fs::write_text", []value.Value{value.Str("nodir/f.txt"), value.Str("x")}, `cannot write "nodir/f.txt": no such file or directory`},
		{"std::fs::append_text", []value.Value{value.Str("nodir/f.txt"), value.Str("x")}, `cannot append to "nodir/f.txt": no such file or directory`},
		{"std::fs::read_text", []value.Value{value.Str("sub")}, `cannot read "sub": is a directory`},
	} {
		_, err := callPrim(c, tc.prim, tc.args...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %s", tc.prim, err, tc.want)
		}
	}
}

func TestPrimHTTP(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/final", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-B", "2")
		w.Header().Set("x-a", "1")
		w.Header().Add("X-M", "one")
		w.Header().Add("X-M", "two")
		fmt.Fprintf(w, "ok %s", r.Method)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/final", http.StatusFound)
	})
	mux.HandleFunc("/chain/", func(w http.ResponseWriter, r *http.Request) {
		// /chain/N redirects N more times, then answers.
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/chain/"))
		if n == 0 {
			fmt.Fprint(w, "end of chain")
			return
		}
		http.Redirect(w, r, "/chain/"+strconv.Itoa(n-1), http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		var body bytes.Buffer
		body.ReadFrom(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s %s %s", r.Method, r.Header.Get("Content-Type"), body.String())
	})
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	defer srv.Close()
	c := gateway(t, Options{})

	type response struct {
		status  int64
		body    string
		headers map[string]string
		keys    []string
	}
	decode := func(b []byte, err error) response {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		s := decodeAs(t, b, ResponseType).AsStruct()
		m := s.Field(2).AsMap()
		r := response{status: s.Field(0).AsInt(), body: s.Field(1).AsStr(), headers: map[string]string{}}
		for i := range m.Len() {
			k := m.KeyAt(i).AsStr()
			r.keys = append(r.keys, k)
			r.headers[k] = m.ValueAt(i).AsStr()
		}
		return r
	}

	r := decode(callPrim(c, "std::http::get", value.Str(srv.URL+"/redirect")))
	if r.status != 200 || r.body != "ok GET" || r.headers["X-A"] != "1" || r.headers["X-B"] != "2" || r.headers["X-M"] != "one, two" {
		t.Errorf("redirected get: %+v", r)
	}
	if !reflect.DeepEqual(r.keys, []string{"Content-Length", "Content-Type", "Date", "X-A", "X-B", "X-M"}) {
		t.Errorf("header order %q", r.keys)
	}
	r = decode(callPrim(c, "std::http::get", value.Str(srv.URL+"/missing")))
	if r.status != 404 || !strings.Contains(r.body, "not found") {
		t.Errorf("404: %+v", r)
	}
	r = decode(callPrim(c, "std::http::post", value.Str(srv.URL+"/echo"), value.Str(`{"a":1}`), value.Str("application/json")))
	if r.status != 200 || r.body != `POST application/json {"a":1}` {
		t.Errorf("post: %+v", r)
	}

	// Up to 10 redirects are followed; the 11th is the response, as any
	// status is.
	r = decode(callPrim(c, "std::http::get", value.Str(srv.URL+"/chain/10")))
	if r.status != 200 || r.body != "end of chain" {
		t.Errorf("10 redirects: %+v", r)
	}
	if r = decode(callPrim(c, "std::http::get", value.Str(srv.URL+"/chain/11"))); r.status != http.StatusFound {
		t.Errorf("11 redirects: %+v", r)
	}
	if r = decode(callPrim(c, "std::http::get", value.Str(srv.URL+"/loop"))); r.status != http.StatusFound {
		t.Errorf("redirect loop: %+v", r)
	}

	// A port nobody listens on: the connection is refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String() + "/x"
	l.Close()
	_, err = callPrim(c, "std::http::get", value.Str(refused))
	if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("cannot GET %q: ", refused)) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("refused: %v", err)
	}
	_, err = callPrim(c, "std::http::get", value.Str("not a url"))
	if err == nil || !strings.Contains(err.Error(), `cannot GET "not a url"`) {
		t.Errorf("bad URL: %v", err)
	}
}

// TestPrimIO checks print, println and eprintln through the gateway, and
// that lines stay whole.
func TestPrimIO(t *testing.T) {
	var out, errb bytes.Buffer
	c := gateway(t, Options{Stdout: &out, Stderr: &errb})
	args, _ := value.Encode(nil, value.Str("via print"))
	c.Prim(vm.PrimPrint, args)
	callPrim(c, "std::io::println", value.Str("via println"))
	callPrim(c, "std::io::eprintln", value.Str("to stderr"))
	// stderr flushed stdout first.
	if out.String() != "via print\nvia println\n" || errb.String() != "to stderr\n" {
		t.Errorf("stdout %q stderr %q", out.String(), errb.String())
	}
	c.r.out.flush()
}
