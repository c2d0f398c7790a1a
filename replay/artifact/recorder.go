package artifact

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Environment variables that control recording.
const (
	RecordVar    = "LOTUS_OBS_RECORD"     // path of the artifact; unset or empty: no recording
	RecordEnvVar = "LOTUS_OBS_RECORD_ENV" // "full" records environment values; default withheld
)

// Settings is what the environment asks of the recorder.
type Settings struct {
	Path      string // "" when not recording
	EnvPolicy string // EnvWithheld or EnvFull
}

// FromEnv reads the recording settings through getenv (os.Getenv in the
// runtime, a map in tests). An unknown LOTUS_OBS_RECORD_ENV value is an
// error rather than a silent default, since it is most likely a typo for
// "full".
func FromEnv(getenv func(string) string) (Settings, error) {
	s := Settings{Path: getenv(RecordVar), EnvPolicy: EnvWithheld}
	switch v := getenv(RecordEnvVar); v {
	case "", EnvWithheld:
	case EnvFull:
		s.EnvPolicy = EnvFull
	default:
		return Settings{}, fmt.Errorf("%s=%q: want %q or %q", RecordEnvVar, v, EnvFull, EnvWithheld)
	}
	return s, nil
}

// withheldHeaders are the credential headers: a plain request header of
// one of these names (any case) is recorded with its value withheld (its
// name and length kept), whatever the env policy.
var withheldHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "X-Api-Key", "Api-Key"}

// WithheldHeader reports whether an HTTP request header's value must be
// withheld from a recording (a credential header). Header names are
// case-insensitive.
func WithheldHeader(name string) bool {
	for _, h := range withheldHeaders {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// ErrClosed is returned by Append after Close or Abort has begun.
var ErrClosed = errors.New("recorder closed")

// DefaultBuffer is the number of entries a consumer may have waiting for
// the writer before Append blocks: four of the writer's batches.
const DefaultBuffer = 4096

// File is where a Recorder writes; *os.File satisfies it.
type File interface {
	io.Writer
	Sync() error
	Close() error
	Name() string
}

// Options tunes a Recorder. The zero value is ready to use.
type Options struct {
	// Buffer is the number of entries each consumer may have waiting for
	// the writer; Append blocks beyond it. 0 means DefaultBuffer.
	Buffer int
	// CreateTemp creates the temporary file next to the artifact; it has
	// the signature of os.CreateTemp, the default. Tests inject failures
	// through it.
	CreateTemp func(dir, pattern string) (File, error)
}

// Recorder writes an artifact while the program runs. Each consumer
// appends its entries from its own goroutine, where they are encoded
// (into a buffer on its stack); Append then frames each entry straight
// into one shared buffer, under the recorder's lock. Whoever finds a
// batch gathered and no write going on takes the writer's role: the
// Append that completes the batch, the flush timer, Close, or a consumer
// that would otherwise wait for room. It takes the whole buffer at once,
// hashes it and writes it with one system call, outside the lock, while
// the other consumers append to the next buffer, and goes on while
// another batch has gathered in the meantime. One write at a time, in
// the order the batches were taken, so the file keeps the order of the
// appends.
//
// There is no writer goroutine: the consumer that filled a batch hashes
// and writes it from its own processor's cache, where a writer on
// another processor first had to fetch every line of it, and the
// appender then fetched each line back to fill the buffer again, once
// per 64 bytes of entries (a sixth of a recorded ThreadRing's CPU time,
// on the unlock that waited for those stores).
//
// Order. Every accepted entry goes into that buffer in turn, so the file
// order is the order in which Append calls returned. An entry appended before
// something that causes another consumer's Append therefore precedes that
// entry in the file: the runtime appends a publish before it hands the
// message to any queue, so every delivery follows its publish, and bare
// coordinates (the Nth delivery in file order) are well defined.
//
// Backpressure. The FIFO is shared but the bound is per consumer: a
// consumer with Options.Buffer entries still waiting blocks in Append
// until the writer takes them, while the other consumers go on. Nothing is
// ever dropped.
//
// Failure. The first write or encoding error is remembered. From then on
// Append returns it at once (it never blocks and the entry is discarded),
// Err reports it, and Close returns it after removing the temporary
// file. The runtime must then end the run with exit code 4; it may stop
// as soon as Append returns an error or carry on until Close.
//
// Durability. Entries reach the file in batches: when writerBatch of them
// (or writerBatchBytes) have gathered, and in any case every
// flushInterval while some wait, so a process killed mid-run leaves every
// entry appended more than about flushInterval before in its temporary
// file, where `hale trace` reads it.
//
// All methods may be called on a nil *Recorder, which records nothing, but
// call sites should test for nil before building the entry, so that not
// recording costs one branch.
type Recorder struct {
	path  string // final artifact path; "" when writing to a plain io.Writer
	file  File   // temporary file; nil when writing to a plain io.Writer
	w     *Writer
	limit int

	// hot holds the lock and what every Append writes under it, on a
	// cache line of its own (see queueState).
	hot   *queueState
	space sync.Cond // the writer took a batch or ended a write, the last in-flight Append of a closing recorder left, or the recorder failed
	// spare is the last batch written, reused.
	spare []byte
	// The fields below are read by every Append (under the lock) but
	// written rarely: a lane is added, the recorder closes or fails.
	lanes   []*lane // by consumer id below denseLanes
	far     map[uint32]*lane
	closing bool
	err     error
	stalls  uint64
	// writing: a goroutine holds the writer's role (write). flushWanted:
	// the flush timer found entries waiting while it did, so the writer
	// takes them too before it gives the role up.
	writing     bool
	flushWanted bool
	stop        chan struct{} // closed when the recorder has drained: the flush timer ends
	closed      bool
	// failed is err != nil, read without the lock by every journaled
	// call: it is kept apart from what the lock's holders write.
	_      [cacheLine]byte
	failed atomic.Bool
	_      [cacheLine]byte
}

// cacheLine is the size of a processor's cache line on the machines Hale
// runs on (64 bytes on amd64 and arm64).
const cacheLine = 64

// queueState is the part of a Recorder that each Append writes: the lock,
// the queue of framed entries (appendFrame) waiting for the writer and
// their count, the count of Append calls in flight and the writer's
// generation. Consumers on different threads append in turn, so whatever
// an Append writes moves from one processor's cache to the other's: kept
// together in one 64-byte object (Go allocates objects of that size at
// multiples of 64), it is one cache line to move instead of one per field.
type queueState struct {
	mu     sync.Mutex
	queue  []byte
	queued int
	// inflight counts the Append calls past the closing check and not
	// yet returned.
	inflight int32
	// gen counts the batches taken: a lane whose gen is older has no
	// entries in the queue (lane.waiting is stale).
	gen uint64
	_   [cacheLine - 8 - 24 - 8 - 8 - 8]byte
}

// lane is one consumer's state in the recorder, written only under the
// lock by Appends of that consumer (and read by Close), padded to a cache
// line so that consumers appending in turn do not share one.
type lane struct {
	waiting int    // entries in the queue, if gen is the queue's
	next    uint64 // seq of the consumer's next entry: its entries so far
	gen     uint64 // the writer's generation when waiting was counted
	_       [cacheLine - 8 - 8 - 8]byte
}

// denseLanes bounds the consumer ids whose lanes are kept in a slice
// (the runtime numbers its consumers from 0); larger ones are in a map.
const denseLanes = 1 << 16

// Create starts recording to path. The artifact is written to a temporary
// file in the same folder (".NAME.tmp-*") and renamed to path by Close. The
// header's EnvPolicy and consumer table are checked first. Errors name
// path.
func Create(path string, h *Header, opts Options) (*Recorder, error) {
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("recording %s: %w", path, err)
	}
	// The finished file is renamed over path, which must not replace a
	// device, a folder or a pipe (LOTUS_OBS_RECORD=/dev/null run as root
	// would replace /dev/null).
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("recording %s: not a regular file (a recording is written to a file of its own)", path)
	}
	create := opts.CreateTemp
	if create == nil {
		create = func(dir, pattern string) (File, error) { return os.CreateTemp(dir, pattern) }
	}
	f, err := create(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("recording %s: %w", path, err)
	}
	w, err := NewWriter(f, h)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("recording %s: %w", path, err)
	}
	r := newRecorder(w, opts)
	r.path, r.file = path, f
	return r, nil
}

// New starts recording to w, for callers that handle the file themselves.
// Close writes the trailer but neither syncs nor closes w.
func New(w io.Writer, h *Header, opts Options) (*Recorder, error) {
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	wr, err := NewWriter(w, h)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	return newRecorder(wr, opts), nil
}

// writerBatch is how many queued entries make a batch, and
// writerBatchBytes how many bytes of them, whichever comes first: the
// Append that completes it then takes them all and writes them with one
// system call, unless a write is going on (then that writer takes them
// after its own). A consumer may have DefaultBuffer (four batches)
// waiting, so that a slow disk rarely makes a busy consumer wait.
const (
	writerBatch      = 1024
	writerBatchBytes = 64 << 10
)

// flushInterval bounds how long an accepted entry waits in memory when
// fewer than a batch are queued: a timer writes them at least this often
// while entries wait, so a process killed at any moment (kill -9) leaves
// in its temporary file every entry appended more than about
// flushInterval before, plus the time to write them. (The file is synced
// only by Close: a power cut may lose more.)
const flushInterval = 50 * time.Millisecond

func newRecorder(w *Writer, opts Options) *Recorder {
	r := &Recorder{w: w, limit: opts.Buffer, hot: &queueState{}, far: map[uint32]*lane{}, stop: make(chan struct{})}
	if r.limit <= 0 {
		r.limit = DefaultBuffer
	}
	r.space.L = &r.hot.mu
	go r.tick()
	return r
}

// tick writes what waits below a batch every flushInterval (or, while a
// write goes on, has its writer take it too), until the recorder has
// drained.
func (r *Recorder) tick() {
	t := time.NewTicker(flushInterval)
	defer t.Stop()
	h := r.hot
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		h.mu.Lock()
		if len(h.queue) > 0 && !r.closing {
			if r.writing {
				r.flushWanted = true
			} else {
				r.write(true)
			}
		}
		h.mu.Unlock()
	}
}

// Append records one entry of consumer and gives it the consumer's next
// sequence number. The body is encoded (its byte slices copied) before
// Append returns, so the caller may reuse them. Append blocks while the
// consumer has Options.Buffer entries waiting for the writer.
//
// AppendPublish, AppendDelivery, AppendInvocation and AppendOutput do
// the same for the entries of every message and call, without boxing the
// entry into a Body.
func (r *Recorder) Append(consumer uint32, body Body) error {
	if r == nil {
		return nil
	}
	var buf [entryBuffer]byte
	rest, err := appendBody(buf[:0], body, FormatVersion)
	var kind Kind
	if err == nil {
		kind = body.Kind()
	}
	return r.queueEntry(consumer, kind, rest, err)
}

// entryBuffer is the size of the buffer on the stack that an entry's
// kind-specific part is encoded into before it is queued: a larger entry
// is encoded on the heap.
const entryBuffer = 192

// AppendPublish is Append of a Publish entry.
func (r *Recorder) AppendPublish(consumer uint32, e *Publish) error {
	if r == nil {
		return nil
	}
	var buf [entryBuffer]byte
	rest, err := appendPublish(buf[:0], e, FormatVersion)
	return r.queueEntry(consumer, KindPublish, rest, err)
}

// AppendDelivery is Append of a Delivery entry.
func (r *Recorder) AppendDelivery(consumer uint32, e *Delivery) error {
	if r == nil {
		return nil
	}
	var buf [entryBuffer]byte
	return r.queueEntry(consumer, KindDelivery, appendDelivery(buf[:0], e), nil)
}

// AppendInvocation is Append of an Invocation entry.
func (r *Recorder) AppendInvocation(consumer uint32, e *Invocation) error {
	if r == nil {
		return nil
	}
	var buf [entryBuffer]byte
	rest, err := appendInvocation(buf[:0], e, FormatVersion)
	return r.queueEntry(consumer, KindInvocation, rest, err)
}

// AppendOutput is Append of an Output entry.
func (r *Recorder) AppendOutput(consumer uint32, e *Output) error {
	if r == nil {
		return nil
	}
	var buf [entryBuffer]byte
	rest, err := appendOutput(buf[:0], e, FormatVersion)
	return r.queueEntry(consumer, KindOutput, rest, err)
}

// queueEntry frames the entry of consumer whose kind-specific part is
// rest into the queue, or fails the recorder with encErr, the error
// encoding it gave. It does not keep rest.
func (r *Recorder) queueEntry(consumer uint32, kind Kind, rest []byte, encErr error) error {
	h := r.hot
	h.mu.Lock()
	if encErr != nil {
		r.failLocked(fmt.Errorf("encoding an entry of consumer %d: %w", consumer, encErr))
	}
	if r.err != nil {
		err := r.err
		h.mu.Unlock()
		return err
	}
	if r.closing {
		h.mu.Unlock()
		return ErrClosed
	}
	l := r.lane(consumer)
	if l.gen != h.gen {
		l.gen, l.waiting = h.gen, 0 // the writer has taken its entries
	}
	// An Append that has passed the closing check is finished by Close,
	// not refused, even if it has to wait for space.
	h.inflight++
	if l.waiting >= r.limit {
		// Whatever the batch size, the queue must be written to make
		// room: by this Append, unless a write is going on.
		r.stalls++
		for l.gen == h.gen && l.waiting >= r.limit && r.err == nil {
			if r.writing {
				r.space.Wait()
			} else {
				r.write(true)
			}
		}
		if r.err != nil {
			err := r.err
			r.leave()
			return err
		}
		if l.gen != h.gen {
			l.gen, l.waiting = h.gen, 0
		}
	}
	h.queue = appendFrame(h.queue, kind, consumer, l.next, rest)
	h.queued++
	l.next++
	l.waiting++
	if (h.queued >= writerBatch || len(h.queue) >= writerBatchBytes) && !r.writing {
		r.write(false)
	}
	r.leave()
	return nil
}

// leave ends an Append call admitted in flight and releases the lock;
// the last one in flight of a closing recorder wakes Close. Entries
// below a batch wait in memory, bounded by the per-consumer limit, until
// the batch is complete or the next tick (flushInterval).
func (r *Recorder) leave() {
	h := r.hot
	h.inflight--
	if r.closing && h.inflight == 0 {
		r.space.Broadcast()
	}
	h.mu.Unlock()
}

// lane returns consumer's lane, made on first use.
func (r *Recorder) lane(consumer uint32) *lane {
	if consumer < denseLanes {
		if int(consumer) < len(r.lanes) {
			if l := r.lanes[consumer]; l != nil {
				return l
			}
		} else {
			r.lanes = append(r.lanes, make([]*lane, int(consumer)+1-len(r.lanes))...)
		}
		l := &lane{}
		r.lanes[consumer] = l
		return l
	}
	l := r.far[consumer]
	if l == nil {
		l = &lane{}
		r.far[consumer] = l
	}
	return l
}

// write takes the writer's role (r.writing, which must be false) and
// writes everything queued at once, so a slow disk costs one write per
// batch, not per entry; then, while a whole batch has gathered during
// the write (or the flush timer asked), it writes that too, and gives
// the role up. Without force it writes only a whole batch. It is called
// and returns with the lock held, which it releases during each write:
// the others append to the other buffer meanwhile, and the role makes
// the writes one at a time, in the order the batches were taken. After
// a failure the batches are taken and dropped.
func (r *Recorder) write(force bool) {
	h := r.hot
	r.writing = true
	for h.queued > 0 && (force || r.flushWanted || h.queued >= writerBatch || len(h.queue) >= writerBatchBytes) {
		force = false
		batch, n := h.queue, h.queued
		h.queue, h.queued = r.spare[:0], 0
		r.spare = nil
		r.flushWanted = false
		h.gen++ // every lane's waiting entries are taken
		r.space.Broadcast()
		failed := r.err != nil
		h.mu.Unlock()

		var err error
		if !failed {
			err = r.w.writeFrames(batch, uint64(n))
		}

		h.mu.Lock()
		r.spare = batch[:0]
		if err != nil {
			r.failLocked(r.wrap(err))
		}
	}
	r.writing = false
	r.space.Broadcast() // a consumer waiting for room may write now, Close may go on
}

// failLocked remembers the first failure and wakes every waiting producer.
func (r *Recorder) failLocked(err error) {
	if r.err == nil {
		r.err = err
		r.failed.Store(true)
	}
	r.space.Broadcast()
}

// Failed reports whether the recorder has failed: Err() != nil without
// taking the lock, for a check on every journaled call.
func (r *Recorder) Failed() bool { return r != nil && r.failed.Load() }

func (r *Recorder) wrap(err error) error {
	if r.path != "" {
		return fmt.Errorf("recording %s: %w", r.path, err)
	}
	return fmt.Errorf("recording: %w", err)
}

// Err returns the recorder's failure, or nil.
func (r *Recorder) Err() error {
	if r == nil {
		return nil
	}
	r.hot.mu.Lock()
	defer r.hot.mu.Unlock()
	return r.err
}

// Stalls returns how many Append calls had to wait for the writer.
func (r *Recorder) Stalls() uint64 {
	if r == nil {
		return 0
	}
	r.hot.mu.Lock()
	defer r.hot.mu.Unlock()
	return r.stalls
}

// drain stops new Appends, waits for the ones in flight and for a write
// going on, writes everything left, ends the flush timer and reports
// whether the recorder was already closed.
func (r *Recorder) drain() (already bool) {
	h := r.hot
	h.mu.Lock()
	already = r.closed
	r.closed, r.closing = true, true
	for {
		if r.writing || h.inflight > 0 {
			r.space.Wait()
			continue
		}
		if h.queued > 0 {
			r.write(true)
			continue
		}
		break
	}
	h.mu.Unlock()
	if !already {
		close(r.stop)
	}
	return already
}

// Close waits for every accepted entry to be written, then writes the
// trailer with the run's verdict and exit code. For a recorder made by
// Create it then syncs the file and renames it to its path; on any
// failure it removes the temporary file instead and returns the failure.
// The runtime calls Close once every consumer has stopped appending.
func (r *Recorder) Close(verdict string, exitCode int64) error {
	if r == nil {
		return nil
	}
	if r.drain() {
		return ErrClosed
	}
	err := r.Err()
	if err == nil {
		// Every accepted entry is written: each consumer's count is the
		// seq its next entry would have had.
		r.hot.mu.Lock()
		for id, l := range r.lanes {
			if l != nil && l.next > 0 {
				r.w.setCounts(uint32(id), l.next)
			}
		}
		for id, l := range r.far {
			if l.next > 0 {
				r.w.setCounts(id, l.next)
			}
		}
		r.hot.mu.Unlock()
		if err = r.w.Finish(verdict, exitCode); err != nil {
			err = r.wrap(err)
		}
	}
	if r.file == nil {
		return err
	}
	if err == nil {
		if err = r.file.Sync(); err != nil {
			err = r.wrap(err)
		}
	}
	if cerr := r.file.Close(); err == nil && cerr != nil {
		err = r.wrap(cerr)
	}
	if err == nil {
		if rerr := os.Rename(r.file.Name(), r.path); rerr != nil {
			err = r.wrap(rerr)
		}
	}
	if err != nil {
		os.Remove(r.file.Name())
		return err
	}
	syncDir(filepath.Dir(r.path))
	return nil
}

// Abort stops recording without a trailer and removes the temporary file.
// It is for runs that end in a way the artifact cannot describe.
func (r *Recorder) Abort() {
	if r == nil || r.drain() || r.file == nil {
		return
	}
	r.file.Close()
	os.Remove(r.file.Name())
}

// syncDir makes the rename durable where the system allows it; the
// artifact is already complete, so a failure here is not reported.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// check rejects a header the recorder should never write: an unknown env
// policy or consumer kind, or a consumer id or instance listed twice.
func (h *Header) check() error {
	if h.EnvPolicy != EnvWithheld && h.EnvPolicy != EnvFull {
		return fmt.Errorf("env policy %q is neither %q nor %q", h.EnvPolicy, EnvWithheld, EnvFull)
	}
	ids := map[uint32]bool{}
	owner := map[string]uint32{}
	for _, c := range h.Consumers {
		switch c.Kind {
		case ConsumerMain, ConsumerPool, ConsumerPinned, ConsumerAsyncIO, ConsumerIngress:
		default:
			return fmt.Errorf("consumer %d has unknown kind %q", c.ID, c.Kind)
		}
		if ids[c.ID] {
			return fmt.Errorf("consumer %d is listed twice", c.ID)
		}
		ids[c.ID] = true
		for _, in := range c.Instances {
			if o, dup := owner[in]; dup {
				return fmt.Errorf("instance %s is listed by consumers %d and %d", in, o, c.ID)
			}
			owner[in] = c.ID
		}
	}
	return nil
}

// bodySizeHint estimates an entry body's encoded size, so that encoding
// it allocates once.
func bodySizeHint(body Body) int {
	const fixed = 24 // varints, outcome byte, flags
	switch x := body.(type) {
	case Invocation:
		return fixed + len(x.Primitive) + len(x.Args) + len(x.Result) + len(x.Message)
	case Publish:
		return fixed + len(x.Topic) + len(x.Payload)
	case Delivery:
		return fixed + len(x.Target) + len(x.Topic)
	case Output:
		return fixed + len(x.Channel) + len(x.Primitive) + len(x.Args) + len(x.Result) + len(x.Message)
	}
	return 64
}
