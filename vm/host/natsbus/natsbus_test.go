package natsbus_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/internal/natstest"
	"github.com/hale-lang/hale/vm/host"
	"github.com/hale-lang/hale/vm/host/natsbus"
)

// compile compiles one program from source.
func compile(t testing.TB, src string) *image.Image {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "app.hl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := hale.CompileFile(path, hale.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c.Image
}

// syncBuffer is a bytes.Buffer safe for a run's writers and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// process is one run of a program in the test's own process.
type process struct {
	out, errs syncBuffer
	bus       *natsbus.Bus
	cancel    context.CancelFunc
	done      chan struct{}
	res       host.Result
	err       error
}

func start(t *testing.T, img *image.Image, url string, args ...string) *process {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{cancel: cancel, done: make(chan struct{})}
	p.bus = natsbus.New(natsbus.Options{Stderr: &p.errs, ReconnectWindow: time.Second})
	opts := host.Options{Engine: host.EngineNative, Stdout: &p.out, Stderr: &p.errs, Args: args, Bus: p.bus, ProcessID: 0xabcdef,
		LookupEnv: func(name string) (string, bool) { return url, name == "HALE_NATS_URL" }}
	go func() {
		defer close(p.done)
		p.res, p.err = host.Run(ctx, img, opts)
	}()
	t.Cleanup(func() { cancel(); <-p.done })
	return p
}

func (p *process) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("the run did not end within %s; stdout:\n%s\nstderr:\n%s", timeout, p.out.String(), p.errs.String())
	}
}

const jobs = `topic Job { id: int, text: string }
topic Done { id: int, worker: string, words: int }
`

const producer = jobs + `
locus Producer(count: int) {
    var received = 0;
    on start { for i in 0..count { publish Job { id: i, text: "a b c" }; } }
    on Done(d) { received += 1; if received == count { print("all " + str(received)); std::process::exit(0); } }
}
main {
    spawn Producer(10);
    export Job to nats(env "HALE_NATS_URL") subject "jobs";
    bind nats(env "HALE_NATS_URL") subject "done" to Done;
}
`

const worker = jobs + `
locus Worker(name: string) {
    on Job(j) { print(name + " " + str(j.id)); publish Done { id: j.id, worker: name, words: len(split(j.text, " ")) }; }
}
main {
    spawn Worker(unwrap_or(get(std::os::args(), 0), "w"));
    bind nats(env "HALE_NATS_URL") subject "jobs" queue "workers" to Job;
    export Done to nats(env "HALE_NATS_URL") subject "done";
}
`

// TestProducerAndQueueGroup: a producer and two workers in a queue group
// exchange topics through an embedded server; every job is handled once.
func TestProducerAndQueueGroup(t *testing.T) {
	srv := natstest.Start(t)
	w := compile(t, worker)
	base := srv.Subscriptions() // the server's own
	w1 := start(t, w, srv.URL(), "w1")
	w2 := start(t, w, srv.URL(), "w2")
	srv.WaitSubscriptions(base+2, 10*time.Second)
	p := start(t, compile(t, producer), srv.URL())
	p.wait(t, 20*time.Second)
	if p.err != nil || p.res.Code != 0 || p.out.String() != "all 10\n" {
		t.Fatalf("producer: %v %+v\n%s\n%s", p.err, p.res, p.out.String(), p.errs.String())
	}
	w1.cancel()
	w2.cancel()
	w1.wait(t, 10*time.Second)
	w2.wait(t, 10*time.Second)
	lines := strings.Fields(w1.out.String() + w2.out.String())
	if len(lines) != 20 {
		t.Errorf("the workers handled %d jobs, want 10:\n%s\n%s", len(lines)/2, w1.out.String(), w2.out.String())
	}
	for _, w := range []*process{w1, w2} {
		if w.res.Verdict != host.VerdictCanceled || w.res.Code != host.ExitCanceled {
			t.Errorf("worker ended %+v (%v), want canceled", w.res, w.err)
		}
	}
}

// TestTypeMismatchRefused: a message whose Hale-Topic type hash is not
// the receiving topic's (another build of the program) is refused at the
// receiver, counted and logged, never decoded; the right one goes
// through.
func TestTypeMismatchRefused(t *testing.T) {
	srv := natstest.Start(t)
	img := compile(t, worker)
	base := srv.Subscriptions() // the server's own
	w := start(t, img, srv.URL(), "w1")
	srv.WaitSubscriptions(base+1, 10*time.Second)

	// Another build: Job has one field more.
	other := compile(t, strings.NewReplacer("topic Job { id: int, text: string }", "topic Job { id: int, text: string, urgent: bool }",
		`text: "a b c" }`, `text: "a b c", urgent: true }`).Replace(producer))
	sender := start(t, other, srv.URL())
	// It sends 10 jobs the worker refuses, and waits for results forever.
	deadline := time.Now().Add(10 * time.Second)
	for w.bus.Refused() < 10 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := w.bus.Refused(); n != 10 {
		t.Fatalf("refused %d messages, want 10; stderr:\n%s", n, w.errs.String())
	}
	if !strings.Contains(w.errs.String(), `nats: refused a message on subject "jobs" for topic Job: Hale-Topic "Job `) {
		t.Errorf("stderr:\n%s", w.errs.String())
	}
	sender.cancel()

	// The same build's message is accepted.
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	m := nats.NewMsg("jobs")
	m.Header.Set(natsbus.HeaderTopic, "Job "+natsbus.TypeHash(img, img.Topics[0].Type))
	m.Header.Set(natsbus.HeaderMsgID, "x:1:0")
	m.Data = []byte{8, 2, 1, 14, 4, 1, 'x'} // Job { id: 7, text: "x" }
	if err := nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for !strings.Contains(w.out.String(), "w1 7") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(w.out.String(), "w1 7") {
		t.Errorf("the matching message was not handled; stdout %q stderr %q", w.out.String(), w.errs.String())
	}
}

// TestRefusedConnection: no broker at the URL fails at start-up with
// exit code 3 and a message naming the URL without its password.
func TestRefusedConnection(t *testing.T) {
	srv := natstest.Start(t)
	url := strings.Replace(srv.URL(), "nats://", "nats://ann:hunter2@", 1)
	srv.Shutdown()
	p := start(t, compile(t, worker), url)
	p.wait(t, 20*time.Second)
	if p.res.Verdict != host.VerdictTrap || p.res.Code != host.ExitTrap || p.err != nil {
		t.Fatalf("result %+v (%v), want a trap", p.res, p.err)
	}
	want := "trap: nats: cannot connect to " + strings.Replace(url, "ann:hunter2", "xxxxx", 1)
	if got := p.errs.String(); !strings.HasPrefix(got, want) || strings.Contains(got, "hunter2") || strings.Contains(got, "ann:") {
		t.Errorf("stderr:\n%s\nwant it to start with %q", got, want)
	}
}

// TestTypeHash: the hash follows names, fields and nesting.
func TestTypeHash(t *testing.T) {
	img := compile(t, `type P { x: int, kids: [P] }
enum E { A, B(string, P) }
topic T { p: P, e: E, m: {string: float} }
main {}
`)
	got := natsbus.TypeDescription(img, img.Topics[0].Type)
	want := "struct T { p: struct P { x: int, kids: [@P] }, e: enum E { A, B(string, struct P { x: int, kids: [@P] }) }, m: {string: float} }"
	if got != want {
		t.Errorf("description\n%s\nwant\n%s", got, want)
	}
	if h := natsbus.TypeHash(img, img.Topics[0].Type); len(h) != 16 {
		t.Errorf("hash %q", h)
	}
}
