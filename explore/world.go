package explore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
	"path"
	"sort"
	"strings"

	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/host"
	"github.com/hale-lang/hale/vm/value"
)

// Virtual time (docs/testing.md): std::time::now_ms starts at
// 2026-01-01T00:00:00Z and std::time::monotonic_ns at 0; only
// std::time::sleep_ms advances them.
const epochMs = 1767225600000

// call is one primitive call of a run as the world answered it: an input
// (its result, or the trap it raised) or an output.
type call struct {
	consumer int
	prim     string
	args     []byte
	result   []byte
	trap     *vm.TrapError // the call trapped (an input only)
}

// world is the Journal of one run: the only way the run reaches anything
// outside the interpreter. It serves inputs from the fixtures and the
// seeded streams, or, when transcript is set, from a bundle's transcript;
// it keeps outputs instead of writing them.
type world struct {
	fx   *Fixtures
	rand *mrand.Rand    // std::rand
	ent  *mrand.ChaCha8 // std::os::getrandom
	// transcript, when set, answers every input: the n-th call with a
	// given primitive and arguments gets the n-th recorded answer.
	transcript map[string][]call
	missing    string // the first input the transcript could not answer
	// fallback: a call the transcript cannot answer is answered from the
	// fixtures and streams instead (regressions of a changed program).
	fallback bool

	elapsedNs int64             // virtual time since the epoch
	overlay   map[string]string // files written by the run
	httpCalls map[string]int    // calls so far, by "METHOD URL"

	inputs  []call
	outputs []call
	exitPos string // the position of the last std::process::exit call

	// age numbers messages in publish order, for "the oldest pending
	// delivery" (shrinking, regressions).
	age     map[host.MessageID]int
	publish int

	at *atStop // --at: stop before a delivery
	// before, in a debugged run, sees every delivery first (DebugHooks).
	before func(c, n int, d *host.Delivery) error
	echo   bool // print, println and eprintln write to the run's output (a debugged run)

	maxPolls   int // polls allowed per handler run (0: no limit)
	polls      int
	overBudget bool
}

// streamSeed derives the 32-byte ChaCha8 seed of one stream of a run's
// seed: the seed as 8 little-endian bytes, then the stream's label.
func streamSeed(seed uint64, label string) [32]byte {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:8], seed)
	copy(s[8:], label)
	return s
}

func newWorld(fx *Fixtures, seed uint64, maxPolls int) *world {
	if fx == nil {
		fx = &Fixtures{}
	}
	return &world{
		fx:        fx,
		rand:      mrand.New(mrand.NewChaCha8(streamSeed(seed, "rand"))),
		ent:       mrand.NewChaCha8(streamSeed(seed, "entropy")),
		overlay:   map[string]string{},
		httpCalls: map[string]int{},
		age:       map[host.MessageID]int{},
		maxPolls:  maxPolls,
	}
}

func callKey(prim string, args []byte) string { return prim + "\x00" + string(args) }

// Invoke answers one primitive call (host.Journal).
func (w *world) Invoke(c int, p stdlib.Primitive, args []byte, live func() ([]byte, error)) ([]byte, error) {
	switch p.Journal {
	case stdlib.Output:
		w.outputs = append(w.outputs, call{consumer: c, prim: p.Name, args: args})
		if p.Name == "std::process::exit" {
			if vs, err := value.DecodeTuple(args, []*value.Type{value.IntType, value.StringType}); err == nil {
				w.exitPos = vs[1].AsStr()
			}
			return live() // stops the run with the code; writes nothing
		}
		if w.echo && (p.Name == "print" || p.Name == "std::io::println" || p.Name == "std::io::eprintln") {
			return live() // a debugged run shows what it prints
		}
		return nil, nil
	}
	if p.Name == "std::time::sleep_ms" {
		// Time advances whoever answers: a delayed message may depend on it.
		if vs, err := value.DecodeTuple(args, []*value.Type{value.IntType}); err == nil && vs[0].AsInt() > 0 {
			w.elapsedNs += min(vs[0].AsInt(), int64(1<<62/1_000_000)) * 1_000_000
		}
	}
	var res []byte
	var err error
	if w.transcript != nil {
		res, err = w.replayed(p.Name, args)
	} else {
		res, err = w.answer(p.Name, args)
	}
	rec := call{consumer: c, prim: p.Name, args: args, result: res}
	if te, ok := err.(*vm.TrapError); ok {
		rec.trap = te
	}
	w.inputs = append(w.inputs, rec)
	if p.Journal == stdlib.Virtual {
		w.outputs = append(w.outputs, call{consumer: c, prim: p.Name, args: args})
	}
	return res, err
}

// replayed serves a call from the transcript.
func (w *world) replayed(prim string, args []byte) ([]byte, error) {
	k := callKey(prim, args)
	q := w.transcript[k]
	if len(q) == 0 {
		if w.fallback {
			return w.answer(prim, args)
		}
		if w.missing == "" {
			w.missing = prim
		}
		return nil, &vm.TrapError{Kind: vm.KindReplay, Message: "the bundle has no answer for this call of " + prim}
	}
	w.transcript[k] = q[1:]
	if q[0].trap != nil {
		return nil, q[0].trap
	}
	return q[0].result, nil
}

func ioTrap(format string, args ...any) error {
	return &vm.TrapError{Kind: vm.KindIO, Message: fmt.Sprintf(format, args...)}
}

// answer serves an input from the virtual clock, the seeded streams and
// the fixtures.
func (w *world) answer(prim string, args []byte) ([]byte, error) {
	str, i64 := value.StringType, value.IntType
	dec := func(types ...*value.Type) ([]value.Value, error) {
		vs, err := value.DecodeTuple(args, types)
		if err != nil {
			return nil, fmt.Errorf("%s: bad arguments: %v", prim, err)
		}
		return vs, nil
	}
	enc := func(v value.Value) ([]byte, error) { return value.Encode(nil, v) }
	switch prim {
	case "std::time::now_ms":
		return enc(value.Int(epochMs + w.elapsedNs/1e6))
	case "std::time::monotonic_ns":
		return enc(value.Int(w.elapsedNs))
	case "std::time::sleep_ms":
		return nil, nil
	case "std::rand::next_int":
		vs, err := dec(i64)
		if err != nil {
			return nil, err
		}
		n := vs[0].AsInt()
		if n <= 0 {
			return nil, &vm.TrapError{Kind: vm.KindArg, Message: fmt.Sprintf("std::rand::next_int: n must be positive, got %d", n)}
		}
		return enc(value.Int(w.rand.Int64N(n)))
	case "std::rand::next_float":
		return enc(value.Float(w.rand.Float64()))
	case "std::os::getrandom":
		vs, err := dec(i64)
		if err != nil {
			return nil, err
		}
		n := vs[0].AsInt()
		if n < 0 || n > 1<<20 {
			return nil, &vm.TrapError{Kind: vm.KindArg, Message: fmt.Sprintf("std::os::getrandom: n must be between 0 and %d, got %d", 1<<20, n)}
		}
		b := make([]byte, n)
		_, _ = w.ent.Read(b)
		return enc(value.BytesOf(string(b)))
	case "std::os::env":
		vs, err := dec(str, str)
		if err != nil {
			return nil, err
		}
		if v, ok := w.fx.Env[vs[0].AsStr()]; ok {
			return enc(value.Str(v))
		}
		return enc(vs[1])
	case "std::os::args":
		list := make([]value.Value, len(w.fx.Args))
		for i, a := range w.fx.Args {
			list[i] = value.Str(a)
		}
		return enc(value.NewList(list))
	case "std::fs::read_text", "std::fs::read_bytes":
		vs, err := dec(str)
		if err != nil {
			return nil, err
		}
		text, ok := w.file(vs[0].AsStr())
		if !ok {
			return nil, ioTrap("cannot read %q: no such file or directory", vs[0].AsStr())
		}
		if prim == "std::fs::read_bytes" {
			return enc(value.BytesOf(text))
		}
		return enc(value.Str(text))
	case "std::fs::exists":
		vs, err := dec(str)
		if err != nil {
			return nil, err
		}
		_, file := w.file(vs[0].AsStr())
		return enc(value.Bool(file || w.dir(vs[0].AsStr())))
	case "std::fs::list_dir":
		vs, err := dec(str)
		if err != nil {
			return nil, err
		}
		names, ok := w.list(vs[0].AsStr())
		if !ok {
			return nil, ioTrap("cannot list %q: no such file or directory", vs[0].AsStr())
		}
		list := make([]value.Value, len(names))
		for i, n := range names {
			list[i] = value.Str(n)
		}
		return enc(value.NewList(list))
	case "std::fs::write_text", "std::fs::append_text":
		vs, err := dec(str, str)
		if err != nil {
			return nil, err
		}
		p, ok := clean(vs[0].AsStr())
		if !ok {
			return nil, ioTrap("cannot write %q: outside the working folder", vs[0].AsStr())
		}
		if prim == "std::fs::append_text" {
			old, _ := w.file(p)
			w.overlay[p] = old + vs[1].AsStr()
		} else {
			w.overlay[p] = vs[1].AsStr()
		}
		return nil, nil
	case "std::http::get":
		vs, err := dec(str)
		if err != nil {
			return nil, err
		}
		return w.http("GET", vs[0].AsStr())
	case "std::os::secret":
		return w.secret(args)
	case "std::http::send":
		return w.send(args)
	case "std::http::post":
		vs, err := dec(str, str, str)
		if err != nil {
			return nil, err
		}
		return w.http("POST", vs[0].AsStr())
	}
	return nil, &vm.TrapError{Kind: vm.KindHost, Message: "the deterministic scheduler does not serve " + prim}
}

// served lists the primitives answer serves; a test keeps it equal to
// the standard library's inputs and virtualised calls, so that a new
// primitive cannot reach a run unserved.
var served = []string{
	"std::time::now_ms", "std::time::monotonic_ns", "std::time::sleep_ms",
	"std::rand::next_int", "std::rand::next_float", "std::os::getrandom",
	"std::os::env", "std::os::args",
	"std::fs::read_text", "std::fs::read_bytes", "std::fs::exists", "std::fs::list_dir",
	"std::fs::write_text", "std::fs::append_text",
	"std::http::get", "std::http::post",
	"std::os::secret", "std::http::send",
}

// clean makes a program's path relative to the working folder; false when
// it leaves it (absolute, or "..").
func clean(p string) (string, bool) {
	if strings.HasPrefix(p, "/") {
		return "", false
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	return c, true
}

func (w *world) file(p string) (string, bool) {
	c, ok := clean(p)
	if !ok {
		return "", false
	}
	if s, ok := w.overlay[c]; ok {
		return s, true
	}
	s, ok := w.fx.Files[c]
	return s, ok
}

func (w *world) dir(p string) bool {
	c, ok := clean(p)
	return ok && w.fx.Dirs[c]
}

func (w *world) list(p string) ([]string, bool) {
	c, ok := clean(p)
	if !ok || !w.fx.Dirs[c] {
		return nil, false
	}
	prefix := c + "/"
	if c == "." {
		prefix = ""
	}
	seen := map[string]bool{}
	add := func(full string) {
		if rest, ok := strings.CutPrefix(full, prefix); ok && rest != "" && rest != "." {
			name, _, _ := strings.Cut(rest, "/")
			seen[name] = true
		}
	}
	for f := range w.fx.Files {
		add(f)
	}
	for d := range w.fx.Dirs {
		add(d)
	}
	for f := range w.overlay {
		add(f)
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, true
}

func (w *world) http(method, url string) ([]byte, error) {
	key := method + " " + url
	replies := w.fx.HTTP[key]
	if len(replies) == 0 {
		return nil, ioTrap("cannot %s %q: no fixture for this request", method, url)
	}
	n := w.httpCalls[key]
	w.httpCalls[key] = n + 1
	r := replies[min(n, len(replies)-1)]
	if r.Trap != nil {
		msg := r.Trap.Message
		if msg == "" {
			msg = fmt.Sprintf("cannot %s %q: %s (fixture)", method, url, r.Trap.Kind)
		}
		return nil, &vm.TrapError{Kind: r.Trap.Kind, Message: msg}
	}
	names := make([]string, 0, len(r.Headers))
	for n := range r.Headers {
		names = append(names, n)
	}
	sort.Strings(names)
	headers := value.NewMap(value.KindString, len(names))
	for _, n := range names {
		headers.AsMap().Set(value.Str(n), value.Str(r.Headers[n]))
	}
	return value.Encode(nil, value.NewStruct(host.ResponseType, []value.Value{value.Int(int64(r.Status)), value.Str(r.Body), headers}))
}

// Publish numbers the message in publish order (host.Journal).
func (w *world) Publish(c int, msg host.MessageID, topic int, payload []byte, targets []int) {
	w.age[msg] = w.publish
	w.publish++
}

// Deliver starts a handler run's step budget (host.Journal).
func (w *world) Deliver(c, n int, d *host.Delivery, state host.StateReader) error {
	w.polls = 0
	if w.at != nil {
		return w.at.deliver(c, n, d, state)
	}
	if w.before != nil {
		return w.before(c, n, d)
	}
	return nil
}

// Trap is reported through the run's Result (host.Journal).
func (w *world) Trap(c, n int, t *vm.Trap, d *host.Delivery) {}

// End is the end of the run (host.Journal).
func (w *world) End(verdict string, code int) {}

// errBudget ends a handler run that passed --max-handler-steps.
var errBudget = fmt.Errorf("%w: the handler passed its step budget", vm.ErrInterrupted)

// Poll counts a handler run's steps, PollSteps at a time (host.Poller).
func (w *world) Poll(c int) error {
	w.polls++
	if w.maxPolls > 0 && w.polls >= w.maxPolls {
		w.overBudget = true
		return errBudget
	}
	return nil
}

// sameOutputs reports whether two runs wrote the same outputs.
func sameOutputs(a, b []call) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].consumer != b[i].consumer || a[i].prim != b[i].prim || !bytes.Equal(a[i].args, b[i].args) {
			return false
		}
	}
	return true
}

func trapError(kind, message string) *vm.TrapError {
	return &vm.TrapError{Kind: kind, Message: message}
}
