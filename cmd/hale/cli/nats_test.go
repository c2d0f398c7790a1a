package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/hale-lang/hale/internal/natstest"
	"github.com/hale-lang/hale/replay/artifact"
)

// natsChildEnv holds the arguments (separated by \x1f) of a `hale`
// child process of the nats tests (TestNATSChild).
const natsChildEnv = "HALE_TEST_NATS_CHILD"

// TestNATSChild is a child process of the nats tests: hale with the
// arguments natsChildEnv names (it does nothing in a normal test run).
func TestNATSChild(t *testing.T) {
	args := os.Getenv(natsChildEnv)
	if args == "" {
		t.Skip("child process only")
	}
	os.Exit(RunWith(strings.Split(args, "\x1f"), os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// child is a `hale` process of a nats test.
type child struct {
	cmd         *exec.Cmd
	stdout, err lockedBuffer
}

// lockedBuffer is a bytes.Buffer that a child's output and the test may
// use at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// stdoutText is what the child has printed so far.
func (c *child) stdoutText() string { return c.stdout.String() }

// startChild starts `hale args…` as a child process with env added.
func startChild(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^TestNATSChild$", "-test.count=1")}
	c.cmd.Env = append(append(os.Environ(), natsChildEnv+"="+strings.Join(args, "\x1f")), env...)
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.err
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.cmd.Process.Kill(); c.cmd.Wait() })
	return c
}

// stop sends SIGTERM and returns the exit code.
func (c *child) stop(t *testing.T) int {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	return c.wait(t)
}

// wait waits for the child (at most a minute) and returns its exit code.
func (c *child) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		t.Fatalf("the child did not end; stdout:\n%s\nstderr:\n%s", c.stdout.String(), c.err.String())
		return -1
	}
}

// hale runs the CLI in this process with env added to the environment.
func runHale(env map[string]string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := RunWith(args, strings.NewReader(""), &out, &errb, func(name string) string {
		if v, ok := env[name]; ok {
			return v
		}
		return os.Getenv(name)
	})
	return code, out.String(), errb.String()
}

func readArtifact(t *testing.T, path string) *artifact.Artifact {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := artifact.Decode(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return a
}

// sameButCreated reports whether two artifacts are identical except for
// their creation time and the interleaving of their consumers' entries in
// the file (which follows the threads' timing): the same header, each
// consumer's entries in the same order, the same trailer.
func sameButCreated(t *testing.T, a, b string) bool {
	t.Helper()
	x, y := readArtifact(t, a), readArtifact(t, b)
	x.Header.Created, y.Header.Created = 0, 0
	byConsumer := func(a *artifact.Artifact) map[uint32][]artifact.Entry {
		m := map[uint32][]artifact.Entry{}
		for _, e := range a.Entries {
			m[e.Consumer] = append(m[e.Consumer], e)
		}
		return m
	}
	x.Trailer.Checksum, y.Trailer.Checksum = [32]byte{}, [32]byte{}
	return reflect.DeepEqual(x.Header, y.Header) && reflect.DeepEqual(x.Trailer, y.Trailer) && reflect.DeepEqual(byConsumer(x), byConsumer(y))
}

// countKind counts the entries of one kind.
func countKind(a *artifact.Artifact, k artifact.Kind) int {
	n := 0
	for _, e := range a.Entries {
		if e.Body.Kind() == k {
			n++
		}
	}
	return n
}

const natsPassword = "s3cret-pw-4711"

// TestNATSExample runs examples/nats as three recorded processes through
// an embedded NATS server that wants a password (two workers of a queue
// group in child processes, one on each engine, stopped by SIGTERM; the
// producer in this process), then replays each recording alone with no
// broker on both engines, identically, links the three, and checks that
// the password reached no artifact.
func TestNATSExample(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	srv := natstest.StartWithUser(t, "hale", natsPassword)
	url := strings.Replace(srv.URL(), "nats://", "nats://hale:"+natsPassword+"@", 1)
	dir := t.TempDir()
	ex := filepath.Join("..", "..", "..", "examples", "nats")
	worker, producer := filepath.Join(ex, "worker.hl"), filepath.Join(ex, "producer.hl")
	rec := func(name string) string { return filepath.Join(dir, name+".halerec") }
	env := func(name, engine string) []string {
		return []string{"HALE_NATS_URL=" + url, "LOTUS_OBS_RECORD=" + rec(name), "LOTUS_OBS_RECORD_ENV=full", "HALE_ENGINE=" + engine}
	}
	base := srv.Subscriptions()
	w1 := startChild(t, env("w1", "wasm"), "run", worker, "w1")
	w2 := startChild(t, env("w2", "native"), "run", worker, "w2")
	srv.WaitSubscriptions(base+2, 30*time.Second)

	p := startChild(t, []string{"HALE_NATS_URL=" + url, "LOTUS_OBS_RECORD=" + rec("producer"), "HALE_ENGINE=native"}, "run", producer, "12")
	if code := p.wait(t); code != 0 || p.stdout.String() != "sent 12 jobs\nreceived 12 results, 84 words in all\n" {
		w1.stop(t)
		w2.stop(t)
		t.Fatalf("producer: exit %d\nstdout:\n%s\nstderr:\n%s\nw1:\n%s%s\nw2:\n%s%s", code, p.stdout.String(), p.err.String(),
			w1.stdout.String(), w1.err.String(), w2.stdout.String(), w2.err.String())
	}
	for _, w := range []*child{w1, w2} {
		if code := w.stop(t); code != ExitInterrupted {
			t.Errorf("worker: exit %d, want %d; stderr:\n%s", code, ExitInterrupted, w.err.String())
		}
	}
	if n := strings.Count(w1.stdout.String()+w2.stdout.String(), " handled job "); n != 12 {
		t.Errorf("the workers handled %d jobs, want 12:\n%s%s", n, w1.stdout.String(), w2.stdout.String())
	}

	// --allow-live-effects sends the producer's jobs again, for real,
	// with the recorded origin ids; its results still come from the
	// recording.
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := nc.SubscribeSync("jobs")
	if err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	code, stdout, stderr := runHale(map[string]string{"HALE_NATS_URL": url}, "replay", rec("producer"), producer, "--engine", "native", "--quiet", "--allow-live-effects")
	if code != 0 {
		t.Errorf("live replay of the producer: exit %d\n%s%s", code, stdout, stderr)
	}
	pid := fmt.Sprintf("%016x", readArtifact(t, rec("producer")).Header.ProcessID)
	for i := range 12 {
		m, err := jobs.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("live replay: job %d not received: %v", i, err)
		}
		if id := m.Header.Get("Nats-Msg-Id"); id != pid+":0:"+strconv.Itoa(i) || !strings.HasPrefix(m.Header.Get("Hale-Topic"), "Job ") {
			t.Errorf("live replay: job %d has Nats-Msg-Id %q, Hale-Topic %q", i, id, m.Header.Get("Hale-Topic"))
		}
	}
	nc.Close()
	srv.Shutdown() // replay needs no broker

	ingress := 0
	for _, name := range []string{"producer", "w1", "w2"} {
		data, err := os.ReadFile(rec(name))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(natsPassword)) {
			t.Errorf("%s.halerec holds the password", name)
		}
		a := readArtifact(t, rec(name))
		if a.Version != 3 || a.Header.ProcessID == 0 || len(a.Header.Bindings) != 2 {
			t.Errorf("%s: version %d, process id %x, bindings %+v", name, a.Version, a.Header.ProcessID, a.Header.Bindings)
		}
		want := artifact.VerdictCanceled
		if name == "producer" {
			want = artifact.VerdictExit
		} else {
			ingress += countKind(a, artifact.KindIngress)
		}
		if a.Trailer.Verdict != want {
			t.Errorf("%s: verdict %s, want %s", name, a.Trailer.Verdict, want)
		}
		prog := worker
		if name == "producer" {
			prog = producer
		}
		for _, engine := range []string{"wasm", "native"} {
			out := filepath.Join(dir, name+"."+engine+".replayed.halerec")
			code, stdout, stderr := runHale(nil, "replay", rec(name), prog, "--engine", engine, "--quiet", "-o", out)
			if code != 0 {
				t.Errorf("replay of %s on %s: exit %d\n%s%s", name, engine, code, stdout, stderr)
			}
		}
		if !sameButCreated(t, filepath.Join(dir, name+".wasm.replayed.halerec"), filepath.Join(dir, name+".native.replayed.halerec")) {
			t.Errorf("%s: the two engines' replays recorded different artifacts", name)
		}
	}
	if ingress != 12 {
		t.Errorf("the workers' recordings hold %d ingress entries, want 12", ingress)
	}

	code, out, errs := runHale(nil, "trace", "link", "--json", rec("producer"), rec("w1"), rec("w2"))
	var link artifact.LinkReport
	if err := json.Unmarshal([]byte(out), &link); code != 0 || err != nil {
		t.Fatalf("trace link: exit %d, %v\n%s%s", code, err, out, errs)
	}
	if len(link.Matched) != 24 || len(link.Unreceived) != 0 || len(link.Foreign) != 0 {
		t.Errorf("trace link: %d matched, %d unreceived, %d foreign; want 24, 0, 0", len(link.Matched), len(link.Unreceived), len(link.Foreign))
	}
	for _, m := range link.Matched {
		if !m.SamePayload || m.Message == "" {
			t.Errorf("link row %+v", m)
		}
	}
	code, out, _ = runHale(nil, "trace", "dump", rec("w1"))
	if code != 0 || !strings.Contains(out, `"kind":"ingress","subject":"jobs","msg_id":"`) {
		t.Errorf("trace dump of w1: exit %d\n%s", code, out)
	}
	code, out, _ = runHale(nil, "trace", "summary", rec("w2"))
	if code != 0 || !strings.Contains(out, "  bind    Job    jobs     workers  1         ") || !strings.Contains(out, "  export  Done   done") {
		t.Errorf("trace summary of w2: exit %d\n%s", code, out)
	}
}

// TestNATSBrokerLost stops the broker under a recorded worker that has
// handled some jobs: after the reconnect window the run fails naming the
// URL (exit 3, trap kind io), the recording says so and keeps every
// message received before, and it replays alone identically.
func TestNATSBrokerLost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	srv := natstest.Start(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "w.halerec")
	worker := filepath.Join("..", "..", "..", "examples", "nats", "worker.hl")
	base := srv.Subscriptions()
	w := startChild(t, []string{"HALE_NATS_URL=" + srv.URL(), "LOTUS_OBS_RECORD=" + rec, "HALE_NATS_RECONNECT=500ms", "HALE_ENGINE=native"}, "run", worker, "w")
	srv.WaitSubscriptions(base+1, 30*time.Second)
	// A producer that sends 5 jobs and waits for the results forever.
	p := startChild(t, []string{"HALE_NATS_URL=" + srv.URL(), "HALE_ENGINE=native"}, "run", filepath.Join("..", "..", "..", "examples", "nats", "producer.hl"), "5")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if strings.Count(w.stdoutText(), " handled job ") == 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv.Shutdown()
	code := w.wait(t)
	p.cmd.Process.Kill()
	want := "trap: nats: lost the connection to " + srv.URL() + " and could not reconnect within 500ms\n" +
		"  on nats binding \"jobs\" for topic Job (consumer 1)\n"
	if code != ExitTrap || !strings.Contains(w.err.String(), want) {
		t.Fatalf("worker: exit %d, want %d; stdout:\n%s\nstderr:\n%s\nwant stderr to hold:\n%s", code, ExitTrap, w.stdoutText(), w.err.String(), want)
	}
	a := readArtifact(t, rec)
	if a.Trailer.Verdict != artifact.VerdictTrap || a.Trailer.ExitCode != ExitTrap || countKind(a, artifact.KindIngress) != 5 {
		t.Errorf("recording: verdict %s, code %d, %d ingress entries", a.Trailer.Verdict, a.Trailer.ExitCode, countKind(a, artifact.KindIngress))
	}
	last := a.Entries[len(a.Entries)-1].Body
	if x, ok := last.(artifact.Trap); !ok || x.TrapKind != "io" || !strings.HasPrefix(x.Message, "nats: lost the connection to "+srv.URL()) {
		t.Errorf("the recording ends with %+v, want the io trap", last)
	}
	code, stdout, stderr := runHale(nil, "replay", rec, worker, "--engine", "native", "--quiet")
	if code != 0 || !strings.Contains(stderr, "replay OK") {
		t.Errorf("replay: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestNATSRefusedConnection: no broker at the URL fails at start-up with
// exit code 3 and a message naming the URL without its password.
func TestNATSRefusedConnection(t *testing.T) {
	srv := natstest.Start(t)
	url := strings.Replace(srv.URL(), "nats://", "nats://ann:"+natsPassword+"@", 1)
	srv.Shutdown()
	worker := filepath.Join("..", "..", "..", "examples", "nats", "worker.hl")
	rec := filepath.Join(t.TempDir(), "refused.halerec")
	code, stdout, stderr := runHale(map[string]string{"HALE_NATS_URL": url, "HALE_ENGINE": "native", "LOTUS_OBS_RECORD": rec}, "run", worker)
	want := "trap: nats: cannot connect to " + strings.Replace(url, "ann:"+natsPassword, "xxxxx", 1) + ": "
	if code != ExitTrap || !strings.HasPrefix(stderr, want) || strings.Contains(stderr, natsPassword) || strings.Contains(stderr, "ann:") || stdout != "" {
		t.Errorf("exit %d, want %d; stderr:\n%s\nwant it to start with %q", code, ExitTrap, stderr, want)
	}
	// The recording says so, without the password, and replays to the
	// same refusal.
	if data, err := os.ReadFile(rec); err != nil || bytes.Contains(data, []byte(natsPassword)) || bytes.Contains(data, []byte("ann:")) {
		t.Errorf("recording: %v, or it holds the user name or the password", err)
	}
	if a := readArtifact(t, rec); a.Trailer.Verdict != artifact.VerdictTrap || a.Trailer.ExitCode != ExitTrap {
		t.Errorf("recorded verdict %s, code %d", a.Trailer.Verdict, a.Trailer.ExitCode)
	}
	if code, _, stderr := runHale(nil, "replay", rec, worker, "--engine", "native"); code != 0 || !strings.Contains(stderr, "replay OK") {
		t.Errorf("replay of the refused run: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runHale(map[string]string{"HALE_NATS_URL": url, "HALE_NATS_RECONNECT": "soon"}, "run", worker)
	if code != ExitUsage || !strings.Contains(stderr, "HALE_NATS_RECONNECT") {
		t.Errorf("bad HALE_NATS_RECONNECT: exit %d\n%s", code, stderr)
	}
}
