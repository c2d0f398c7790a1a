package artifact

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// testHeader lists n pool consumers, consumer i running instance "W<i>".
func testHeader(n int) *Header {
	h := &Header{HaleVersion: "test", EnvPolicy: EnvWithheld}
	for i := range n {
		h.Consumers = append(h.Consumers, Consumer{ID: uint32(i), Kind: ConsumerPool,
			Name: fmt.Sprintf("pool%d", i), Instances: []string{fmt.Sprintf("W%d", i)}})
	}
	return h
}

// slowWriter sleeps on every Write, like a slow disk.
type slowWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	delay  time.Duration
	writes int
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(w.delay)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return w.buf.Write(p)
}

// TestRecorderSlowWriter has many producers outrun a slow writer through
// small buffers: they must stall, and the artifact must still hold every
// entry, in each consumer's order, with every delivery after its publish.
func TestRecorderSlowWriter(t *testing.T) {
	const producers, perProducer = 8, 300
	w := &slowWriter{delay: 200 * time.Microsecond}
	r, err := New(w, testHeader(producers), Options{Buffer: 4})
	if err != nil {
		t.Fatal(err)
	}
	// Each producer publishes to the next one, which delivers the message
	// as soon as it is handed over: the handover is what orders them.
	inbox := make([]chan MessageID, producers)
	for i := range inbox {
		inbox[i] = make(chan MessageID, perProducer)
	}
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := uint32(p)
			for n := range perProducer {
				args := binary.AppendUvarint(nil, uint64(n))
				if err := r.Append(c, Invocation{Primitive: "std::time::now_ms", Args: args, Result: args}); err != nil {
					t.Error(err)
					return
				}
				id := MessageID{c, uint64(n)}
				if err := r.Append(c, Publish{Topic: "T", Message: id, Payload: args}); err != nil {
					t.Error(err)
					return
				}
				inbox[(p+1)%producers] <- id
				if err := r.Append(c, Delivery{Target: fmt.Sprintf("W%d", p), Message: <-inbox[p], Topic: "T"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := r.Close(VerdictQuiescent, 0); err != nil {
		t.Fatal(err)
	}
	a, err := Decode(w.buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Verify(); err != nil {
		t.Fatal(err)
	}
	if got, want := len(a.Entries), producers*perProducer*3; got != want {
		t.Fatalf("%d entries, want %d", got, want)
	}
	next := map[uint32]uint64{}
	for i, e := range a.Entries {
		inv, ok := e.Body.(Invocation)
		if !ok {
			continue
		}
		n, _ := binary.Uvarint(inv.Args)
		if n != next[e.Consumer] {
			t.Fatalf("entry %d: consumer %d invocation %d where %d was expected", i, e.Consumer, n, next[e.Consumer])
		}
		next[e.Consumer]++
	}
	for _, cc := range a.Trailer.Counts {
		if cc.Entries != perProducer*3 {
			t.Errorf("consumer %d: %d entries", cc.Consumer, cc.Entries)
		}
	}
	if r.Stalls() == 0 {
		t.Error("no producer ever stalled; the test does not exercise backpressure")
	}
	t.Logf("%d entries in %d writes, %d stalls", len(a.Entries), w.writes, r.Stalls())
}

// gateWriter blocks every Write until the gate is opened.
type gateWriter struct {
	gate chan struct{}
	buf  bytes.Buffer
}

func (w *gateWriter) Write(p []byte) (int, error) {
	<-w.gate
	return w.buf.Write(p)
}

// TestRecorderStallsPerConsumer fills one consumer's buffer while the
// writer is stuck: that consumer blocks, another one does not.
func TestRecorderStallsPerConsumer(t *testing.T) {
	w := &gateWriter{gate: make(chan struct{})}
	go func() { w.gate <- struct{}{} }() // let the header through
	r, err := New(w, testHeader(2), Options{Buffer: 2})
	if err != nil {
		t.Fatal(err)
	}
	appended := make(chan int, 100)
	go func() {
		for i := range 20 {
			r.Append(0, Exit{Code: int64(i)})
			appended <- i
		}
		close(appended)
	}()
	// The writer takes at most one batch (at most 2 entries) and then
	// blocks in Write; consumer 0 can queue at most 2 more.
	time.Sleep(50 * time.Millisecond)
	if n := len(appended); n > 4 {
		t.Fatalf("consumer 0 appended %d entries past a full buffer", n)
	}
	done := make(chan error)
	go func() { done <- r.Append(1, Exit{}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("consumer 1 was blocked by consumer 0's full buffer")
	}
	close(w.gate)
	for range appended {
	}
	if err := r.Close(VerdictQuiescent, 0); err != nil {
		t.Fatal(err)
	}
	a, err := Decode(w.buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Entries) != 21 {
		t.Fatalf("%d entries, want 21", len(a.Entries))
	}
}

func TestRecorderCreate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.halerec")
	r, err := Create(path, testHeader(1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("the artifact exists before Close")
	}
	for range 10 {
		if err := r.Append(0, Output{Channel: ChannelStdout, Primitive: "std::io::println", Result: []byte("hi\n")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(VerdictQuiescent, 0); err != nil {
		t.Fatal(err)
	}
	a, err := readFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Entries) != 10 || a.Trailer.Verdict != VerdictQuiescent {
		t.Errorf("%d entries, verdict %q", len(a.Entries), a.Trailer.Verdict)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("folder holds %v, want only the artifact", names)
	}
	if err := r.Append(0, Exit{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	if err := r.Close(VerdictQuiescent, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// faultyFile is a real temporary file that fails on demand.
type faultyFile struct {
	*os.File
	writeBudget int // bytes that may be written before ENOSPC; <0: no limit
	syncErr     error
	closeErr    error
}

func (f *faultyFile) Write(p []byte) (int, error) {
	if f.writeBudget >= 0 && len(p) > f.writeBudget {
		n, _ := f.File.Write(p[:f.writeBudget])
		f.writeBudget = 0
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	if f.writeBudget >= 0 {
		f.writeBudget -= len(p)
	}
	return f.File.Write(p)
}

func (f *faultyFile) Sync() error {
	if f.syncErr != nil {
		return f.syncErr
	}
	return f.File.Sync()
}

func (f *faultyFile) Close() error {
	err := f.File.Close()
	if f.closeErr != nil {
		return f.closeErr
	}
	return err
}

// TestRecorderFailures makes the file fail at each step: Close (or
// Create) must report it, name the artifact, and leave the folder empty.
func TestRecorderFailures(t *testing.T) {
	const atTrailer = -2 // stands for a budget ending inside the trailer
	entries := make([]Entry, 300)
	for i := range entries {
		entries[i] = Entry{uint32(i % 2), uint64(i / 2), Invocation{Primitive: "std::time::now_ms", Result: []byte{1}}}
	}
	full := len(mustEncode(t, &Artifact{Header: *testHeader(2), Entries: entries, Trailer: Trailer{Verdict: VerdictQuiescent}}))
	tests := []struct {
		name      string
		file      faultyFile
		createErr bool
		msg       string
	}{
		{"disk full at the header", faultyFile{writeBudget: 10}, true, "no space left on device"},
		{"disk full at the entries", faultyFile{writeBudget: 200}, false, "no space left on device"},
		{"disk full at the trailer", faultyFile{writeBudget: atTrailer}, false, "no space left on device"},
		{"sync fails", faultyFile{writeBudget: -1, syncErr: errors.New("sync: I/O error")}, false, "sync: I/O error"},
		{"close fails", faultyFile{writeBudget: -1, closeErr: errors.New("close: I/O error")}, false, "close: I/O error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "run.halerec")
			opts := Options{Buffer: 1, CreateTemp: func(dir, pattern string) (File, error) {
				f, err := os.CreateTemp(dir, pattern)
				if err != nil {
					return nil, err
				}
				ff := tt.file
				ff.File = f
				if ff.writeBudget == atTrailer {
					ff.writeBudget = full - 10
				}
				return &ff, nil
			}}
			r, err := Create(path, testHeader(2), opts)
			if tt.createErr {
				checkFailure(t, err, path, tt.msg)
				checkEmpty(t, dir)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// After a failure Append must neither block nor succeed.
			done := make(chan struct{})
			go func() {
				defer close(done)
				for _, e := range entries {
					r.Append(e.Consumer, e.Body)
				}
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("producers deadlocked")
			}
			checkFailure(t, r.Close(VerdictQuiescent, 0), path, tt.msg)
			checkEmpty(t, dir)
		})
	}
}

func checkFailure(t *testing.T, err error, path, msg string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), msg) {
		t.Errorf("error %q does not name %s and %q", err, path, msg)
	}
}

func checkEmpty(t *testing.T, dir string) {
	t.Helper()
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("folder holds %v after a failure", names)
	}
}

func TestRecorderAppendAfterFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.halerec")
	r, err := Create(path, testHeader(1), Options{CreateTemp: func(dir, pattern string) (File, error) {
		f, err := os.CreateTemp(dir, pattern)
		return &faultyFile{File: f, writeBudget: 150}, err
	}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for r.Append(0, Publish{Topic: "T", Payload: make([]byte, 50)}) == nil {
		if time.Now().After(deadline) {
			t.Fatal("Append never reported the failure")
		}
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Err() = %v", err)
	}
	if err := r.Close(VerdictQuiescent, 0); err == nil {
		t.Error("Close succeeded after a failure")
	}
	checkEmpty(t, dir)
}

func TestRecorderBadPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "run.halerec")
	r, err := Create(path, testHeader(1), Options{})
	if err == nil {
		r.Abort()
		t.Fatal("Create succeeded in a missing folder")
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name %s", err, path)
	}
}

func TestRecorderEncodingFailure(t *testing.T) {
	var buf bytes.Buffer
	r, err := New(&buf, testHeader(1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Append(0, Invocation{Outcome: 9}); err == nil {
		t.Fatal("Append accepted an invalid outcome")
	}
	if err := r.Append(0, Exit{}); err == nil {
		t.Error("Append succeeded after a failure")
	}
	if err := r.Close(VerdictQuiescent, 0); err == nil || !strings.Contains(err.Error(), "invalid call outcome 9") {
		t.Errorf("Close: %v", err)
	}
}

func TestRecorderAbort(t *testing.T) {
	dir := t.TempDir()
	r, err := Create(filepath.Join(dir, "run.halerec"), testHeader(1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Append(0, Exit{})
	r.Abort()
	checkEmpty(t, dir)
}

func TestCreateChecksHeader(t *testing.T) {
	tests := []struct {
		name string
		edit func(h *Header)
		msg  string
	}{
		{"env policy", func(h *Header) { h.EnvPolicy = "some" }, `env policy "some"`},
		{"consumer kind", func(h *Header) { h.Consumers[0].Kind = "thread" }, `unknown kind "thread"`},
		{"duplicate id", func(h *Header) { h.Consumers[1].ID = 0 }, "consumer 0 is listed twice"},
		{"duplicate instance", func(h *Header) { h.Consumers[1].Instances = []string{"W0"} }, "instance W0 is listed by consumers 0 and 1"},
	}
	for _, tt := range tests {
		h := testHeader(2)
		tt.edit(h)
		dir := t.TempDir()
		_, err := Create(filepath.Join(dir, "run.halerec"), h, Options{})
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %v", tt.name, err)
		}
		checkEmpty(t, dir)
	}
}

func TestNilRecorder(t *testing.T) {
	var r *Recorder
	if err := r.Append(0, Exit{}); err != nil {
		t.Error(err)
	}
	if err := r.Close(VerdictQuiescent, 0); err != nil {
		t.Error(err)
	}
	r.Abort()
	if r.Err() != nil || r.Stalls() != 0 {
		t.Error("nil recorder reports state")
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want Settings
		err  string
	}{
		{map[string]string{}, Settings{EnvPolicy: EnvWithheld}, ""},
		{map[string]string{RecordVar: ""}, Settings{EnvPolicy: EnvWithheld}, ""},
		{map[string]string{RecordVar: "run.halerec"}, Settings{Path: "run.halerec", EnvPolicy: EnvWithheld}, ""},
		{map[string]string{RecordVar: "r", RecordEnvVar: "full"}, Settings{Path: "r", EnvPolicy: EnvFull}, ""},
		{map[string]string{RecordVar: "r", RecordEnvVar: "withheld"}, Settings{Path: "r", EnvPolicy: EnvWithheld}, ""},
		{map[string]string{RecordVar: "r", RecordEnvVar: "ful"}, Settings{}, `LOTUS_OBS_RECORD_ENV="ful"`},
	}
	for _, tt := range tests {
		got, err := FromEnv(func(k string) string { return tt.env[k] })
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: error %v, want %q", tt.env, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%v: %+v, %v; want %+v", tt.env, got, err, tt.want)
		}
	}
}

func TestWithheldHeader(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "cookie": true, "PROXY-AUTHORIZATION": true,
		"x-api-key": true, "API-KEY": true, "X-Api-Key": true,
		"Accept": false, "Set-Cookie": false, "X-Authorization": false, "Api-Keys": false,
	} {
		if WithheldHeader(name) != want {
			t.Errorf("WithheldHeader(%q) != %v", name, want)
		}
	}
}

// BenchmarkRecorderAppend measures Append with the writer discarding
// bytes, and reports the encoded size of a typical invocation.
func BenchmarkRecorderAppend(b *testing.B) {
	var w countWriter
	r, err := New(&w, testHeader(4), Options{})
	if err != nil {
		b.Fatal(err)
	}
	inv := Invocation{Primitive: "std::time::now_ms", Args: []byte{}, Result: []byte{2, 0x80, 0xa0, 0xc8, 0x9a, 0xd5, 0x65}}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Append(0, inv)
		}
	})
	if err := r.Close(VerdictQuiescent, 0); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(w.n)/float64(b.N), "bytes/entry")
}

type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// TestRecorderHotLayout holds the recorder to its layout: what every
// Append writes under the lock is one 64-byte object at a multiple of 64
// (one cache line), each consumer's lane is one too, and the flag that
// every journaled call reads (Failed) shares no line with them or with
// the fields beside it.
func TestRecorderHotLayout(t *testing.T) {
	if s := unsafe.Sizeof(queueState{}); s != cacheLine {
		t.Errorf("queueState is %d bytes, want %d", s, cacheLine)
	}
	if s := unsafe.Sizeof(lane{}); s != cacheLine {
		t.Errorf("lane is %d bytes, want %d", s, cacheLine)
	}
	var r Recorder
	if off := unsafe.Offsetof(r.failed); off-unsafe.Offsetof(r.closed) < cacheLine || unsafe.Sizeof(r)-off < cacheLine {
		t.Errorf("Recorder.failed at %d of %d bytes shares a cache line with another field", off, unsafe.Sizeof(r))
	}
	for range 8 {
		rec, err := New(io.Discard, testHeader(3), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for c := range uint32(3) {
			if err := rec.Append(c, Exit{}); err != nil {
				t.Fatal(err)
			}
		}
		if p := uintptr(unsafe.Pointer(rec.hot)); p%cacheLine != 0 {
			t.Errorf("queueState at %#x, not on a cache line of its own", p)
		}
		for c, l := range rec.lanes {
			if p := uintptr(unsafe.Pointer(l)); p%cacheLine != 0 {
				t.Errorf("lane %d at %#x, not on a cache line of its own", c, p)
			}
		}
		if err := rec.Close(VerdictQuiescent, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// stackWriter notes, for each Write, whether it was made from inside an
// Append (queueEntry on the calling goroutine's stack).
type stackWriter struct {
	mu         sync.Mutex
	buf        bytes.Buffer
	fromAppend []bool
}

func (w *stackWriter) Write(p []byte) (int, error) {
	stack := make([]byte, 16<<10)
	stack = stack[:runtime.Stack(stack, false)]
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fromAppend = append(w.fromAppend, bytes.Contains(stack, []byte("artifact.(*Recorder).queueEntry")))
	return w.buf.Write(p)
}

func (w *stackWriter) writes() []bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.fromAppend)
}

// TestRecorderWritesOnAppender: the Append that completes a batch writes
// it before it returns, on its own goroutine (there is no writer
// goroutine, whose processor had to fetch every line of the batch from
// the appender's cache and back), and the entries keep their order.
func TestRecorderWritesOnAppender(t *testing.T) {
	w := &stackWriter{}
	r, err := New(w, testHeader(1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	header := len(w.writes()) // New may write the header
	payload := []byte{8, 2, 2, 0x80, 0x40, 3, 4, 't', 'i', 'c', 'k', 0}
	appendOne := func(i int) {
		pub := Publish{Topic: "Tick", Message: MessageID{Seq: uint64(i)}, Payload: payload}
		if err := r.AppendPublish(0, &pub); err != nil {
			t.Fatal(err)
		}
	}
	for i := range writerBatch - 1 {
		appendOne(i)
	}
	if got := w.writes(); len(got) != header {
		t.Fatalf("%d writes before a batch had gathered", len(got)-header)
	}
	appendOne(writerBatch - 1)
	got := w.writes()[header:]
	if len(got) == 0 {
		t.Fatal("the Append that completed a batch returned before the batch was written")
	}
	for i, fromAppend := range got {
		if !fromAppend {
			t.Fatalf("write %d of the first batch was not made by the Append that completed it", i)
		}
	}
	const total = 3*writerBatch + 10
	for i := writerBatch; i < total; i++ {
		appendOne(i)
	}
	if got := w.writes(); !got[len(got)-1] {
		t.Error("the third batch was not written by an Append")
	}
	if err := r.Close(VerdictQuiescent, 0); err != nil {
		t.Fatal(err)
	}
	a, err := Decode(w.buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Entries) != total {
		t.Fatalf("%d entries, want %d", len(a.Entries), total)
	}
	for i, e := range a.Entries {
		if p, ok := e.Body.(Publish); !ok || e.Seq != uint64(i) || p.Message.Seq != uint64(i) {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
}
