package host

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/internal/fmath"
	"github.com/hale-lang/hale/vm/value"
)

// Prim serves one primitive call of the consumer's engine: the gateway
// every publish, print and std::* call crosses. Publishing goes to the
// scheduler (and the Journal's Publish); every other call goes to the
// Journal's Invoke when there is one, which decides whether the live
// implementation runs; pure primitives are computed directly. args is
// only valid during the call.
func (c *consumer) Prim(id uint16, args []byte) ([]byte, error) {
	// After an interrupt (Ctrl-C) every call of the gateway, a poll, a
	// publish, a print or a primitive, ends the running handler: the call
	// does not run and is not journaled, so that a handler looping on a
	// primitive (a sleep that now returns at once) stops at its next call
	// rather than at its next poll. Only cancellation does this: after an
	// exit or a trap elsewhere a running handler still finishes, as the
	// language promises.
	if err := c.r.ctx.Err(); err != nil {
		// As the context's own watcher does; whichever comes first.
		c.r.stop(VerdictCanceled, ExitCanceled, nil, nil, err)
		return nil, fmt.Errorf("%w: %w", vm.ErrInterrupted, err)
	}
	switch id {
	case vm.PrimPublish:
		return nil, c.publishCall(args)
	case vm.PrimPublishAfter:
		return nil, c.publishAfterCall(args)
	case vm.PrimPoll:
		// A long handler run asks whether to go on.
		if p, ok := c.r.journal.(Poller); ok {
			if err := p.Poll(c.id); err != nil {
				return nil, c.interrupt(err)
			}
		}
		if d := c.r.opts.DebugPoll; d != nil {
			return d(c.id), nil
		}
		return nil, nil
	case vm.PrimBreak:
		// A debugger's break: not a primitive, never journaled.
		if d := c.r.opts.Debug; d != nil {
			res, err := d(c.id, args)
			if err != nil {
				return nil, c.interrupt(fmt.Errorf("%w: %w", ErrInterrupt, err))
			}
			return res, nil
		}
		return nil, nil
	}
	if int(id) >= len(prims) || prims[id].live == nil {
		return nil, fmt.Errorf("unknown primitive %d", id)
	}
	p := &prims[id]
	if j := c.r.journal; j != nil && p.Journal != stdlib.Pure {
		args = bytes.Clone(args)
		res, err := j.Invoke(c.id, p.Primitive, args, func() ([]byte, error) { return p.live(c, args) })
		if errors.Is(err, ErrInterrupt) {
			return nil, c.interrupt(err)
		}
		return res, err
	}
	return p.live(c, args)
}

// interrupt ends the running handler at the Journal's request (err wraps
// ErrInterrupt) and returns err, which is not reported as a trap. In a
// handler it retires this consumer only (see loop); at start-up, where a
// canceled recording stopped everything, it stops the run as canceled.
func (c *consumer) interrupt(err error) error {
	if c.r.running.Load() {
		c.cut = true
	} else {
		c.r.stop(VerdictCanceled, ExitCanceled, nil, nil, nil)
	}
	return err
}

// publishCall publishes from the gateway: args are the topic index as a
// uvarint, then the canonical payload.
func (c *consumer) publishCall(args []byte) error {
	topic, payload, bits, err := c.splitPublish(args)
	if err != nil {
		return err
	}
	// args is a view of the engine's memory: the payload outlives it.
	return c.r.publish(c, topic, bytes.Clone(payload), bytes.Clone(bits))
}

// splitPublish splits a publish's gateway arguments into the topic, the
// payload and the guard bits (views of args).
func (c *consumer) splitPublish(args []byte) (topic int, payload, bits []byte, err error) {
	t, n := binary.Uvarint(args)
	if n <= 0 || t >= uint64(len(c.r.subs)) {
		return 0, nil, nil, errors.New("publish: bad topic")
	}
	args = args[n:]
	nb := c.r.router.GuardBytes(int(t))
	if len(args) < nb {
		return 0, nil, nil, errors.New("publish: no guard bits")
	}
	return int(t), args[nb:], args[:nb:nb], nil
}

// livePrim is the host side of one primitive: args are the canonical
// argument tuple (print: one canonical string), the result the canonical
// result (nil for none).
type livePrim func(c *consumer, args []byte) ([]byte, error)

type primEntry struct {
	stdlib.Primitive
	live livePrim
}

// prims is indexed by primitive id.
var prims []primEntry

// liveByName maps each primitive of package stdlib's table to its host
// implementation. A test checks that every primitive has one.
var liveByName = map[string]livePrim{
	"print":                   primPrint,
	"std::io::println":        primPrintln,
	"std::io::eprintln":       primEprintln,
	"std::process::exit":      primExit,
	"std::time::now_ms":       primNowMs,
	"std::time::monotonic_ns": primMonotonicNs,
	"std::time::sleep_ms":     primSleepMs,
	"std::rand::next_int":     primNextInt,
	"std::rand::next_float":   primNextFloat,
	"std::os::getrandom":      primGetrandom,
	"std::os::env":            primEnv,
	"std::os::args":           primArgs,
	"std::fs::read_text":      primReadText,
	"std::fs::read_bytes":     primReadBytes,
	"std::fs::exists":         primExists,
	"std::fs::list_dir":       primListDir,
	"std::fs::write_text":     primWriteText,
	"std::fs::append_text":    primAppendText,
	"std::http::get":          primHTTPGet,
	"std::http::post":         primHTTPPost,
	"std::math::sqrt":         mathPrim(math.Sqrt),
	"std::math::floor":        mathPrim(math.Floor),
	"std::math::ceil":         mathPrim(math.Ceil),
	"std::math::log":          mathPrim(fmath.Log),
	"std::math::exp":          mathPrim(fmath.Exp),
	"std::math::sin":          mathPrim(fmath.Sin),
	"std::math::cos":          mathPrim(fmath.Cos),
	"std::math::tan":          mathPrim(fmath.Tan),
	"std::math::asin":         mathPrim(fmath.Asin),
	"std::math::acos":         mathPrim(fmath.Acos),
	"std::math::atan":         mathPrim(fmath.Atan),
	"std::math::atan2":        mathPrim2(fmath.Atan2),
	"std::math::hypot":        mathPrim2(fmath.Hypot),
	"std::math::pow":          primPow,
	"std::json::encode":       primJSONEncode,
	"std::os::secret":         primSecret,
	"std::http::send":         primHTTPSend,
}

func init() {
	for _, p := range stdlib.All() {
		for int(p.ID) >= len(prims) {
			prims = append(prims, primEntry{})
		}
		prims[p.ID] = primEntry{Primitive: p, live: liveByName[p.Name]}
	}
}

// ---- decoding arguments, encoding results ----

var (
	intType    = value.IntType
	floatType  = value.FloatType
	stringType = value.StringType
)

// decodeArgs decodes a primitive's argument tuple.
func decodeArgs(name string, args []byte, types ...*value.Type) ([]value.Value, error) {
	vs, err := value.DecodeTuple(args, types)
	if err != nil {
		return nil, fmt.Errorf("%s: bad arguments: %v", name, err)
	}
	return vs, nil
}

func encodeValue(v value.Value) ([]byte, error) { return value.Encode(nil, v) }

func encodeInt(i int64) ([]byte, error) { return encodeValue(value.Int(i)) }

func encodeString(s string) ([]byte, error) { return encodeValue(value.Str(s)) }

func encodeStrings(ss []string) ([]byte, error) {
	vs := make([]value.Value, len(ss))
	for i, s := range ss {
		vs[i] = value.Str(s)
	}
	return encodeValue(value.NewList(vs))
}

// ---- io and exit ----

func primPrint(c *consumer, args []byte) ([]byte, error) {
	v, err := value.Decode(args, stringType)
	if err != nil {
		return nil, fmt.Errorf("print: bad argument: %v", err)
	}
	c.r.out.println(v.AsStr())
	return nil, nil
}

func primPrintln(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::io::println", args, stringType)
	if err != nil {
		return nil, err
	}
	c.r.out.println(vs[0].AsStr())
	return nil, nil
}

func primEprintln(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::io::eprintln", args, stringType)
	if err != nil {
		return nil, err
	}
	c.r.out.eprintln(vs[0].AsStr())
	return nil, nil
}

// primExit stops the run with the exit code: every consumer, the caller
// included, finishes its current handler and takes nothing more. Its
// gateway arguments are the code and the source position of the call
// (see vm.ExitPrimitive).
func primExit(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::process::exit", args, intType, stringType)
	if err != nil {
		return nil, err
	}
	c.r.stop(VerdictExit, int(vs[0].AsInt()), nil, nil, nil)
	return nil, nil
}

// ---- time ----

func primNowMs(c *consumer, args []byte) ([]byte, error) {
	if _, err := decodeArgs("std::time::now_ms", args); err != nil {
		return nil, err
	}
	return encodeInt(c.r.clock.Now().UnixMilli())
}

func primMonotonicNs(c *consumer, args []byte) ([]byte, error) {
	if _, err := decodeArgs("std::time::monotonic_ns", args); err != nil {
		return nil, err
	}
	return encodeInt(c.r.clock.Now().Sub(c.r.epoch).Nanoseconds())
}

func primSleepMs(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::time::sleep_ms", args, intType)
	if err != nil {
		return nil, err
	}
	if ms := vs[0].AsInt(); ms > 0 {
		c.r.out.flush()
		d := time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
		c.r.clock.Sleep(c.r.ctx, d)
	}
	return nil, nil
}

// ---- rand and entropy ----

// random returns the consumer's std::rand generator, seeded from the
// run's entropy on first use.
func (c *consumer) random() (*mrand.Rand, error) {
	if c.rng == nil {
		var seed [32]byte
		c.r.entropyMu.Lock()
		_, err := io.ReadFull(c.r.entropy, seed[:])
		c.r.entropyMu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("std::rand: seeding: %v", err)
		}
		c.rng = mrand.New(mrand.NewChaCha8(seed))
	}
	return c.rng, nil
}

func primNextInt(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::rand::next_int", args, intType)
	if err != nil {
		return nil, err
	}
	n := vs[0].AsInt()
	if n <= 0 {
		return nil, &vm.TrapError{Kind: vm.KindArg, Message: fmt.Sprintf("std::rand::next_int: n must be positive, got %d", n)}
	}
	rng, err := c.random()
	if err != nil {
		return nil, err
	}
	return encodeInt(rng.Int64N(n))
}

func primNextFloat(c *consumer, args []byte) ([]byte, error) {
	if _, err := decodeArgs("std::rand::next_float", args); err != nil {
		return nil, err
	}
	rng, err := c.random()
	if err != nil {
		return nil, err
	}
	return encodeValue(value.Float(rng.Float64()))
}

// maxGetrandom bounds one std::os::getrandom call.
const maxGetrandom = 1 << 20

func primGetrandom(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::os::getrandom", args, intType)
	if err != nil {
		return nil, err
	}
	n := vs[0].AsInt()
	if n < 0 || n > maxGetrandom {
		return nil, &vm.TrapError{Kind: vm.KindArg, Message: fmt.Sprintf("std::os::getrandom: n must be between 0 and %d, got %d", maxGetrandom, n)}
	}
	b := make([]byte, n)
	c.r.entropyMu.Lock()
	_, err = io.ReadFull(c.r.entropy, b)
	c.r.entropyMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("std::os::getrandom: %v", err)
	}
	return encodeValue(value.BytesOf(string(b)))
}

// ---- env and args ----

func primEnv(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::os::env", args, stringType, stringType)
	if err != nil {
		return nil, err
	}
	v, ok := c.r.lookupEnv(vs[0].AsStr())
	if !ok {
		return encodeValue(vs[1])
	}
	return encodeString(v)
}

func primArgs(c *consumer, args []byte) ([]byte, error) {
	if _, err := decodeArgs("std::os::args", args); err != nil {
		return nil, err
	}
	return encodeStrings(c.r.opts.Args)
}

// ---- fs ----

// path resolves a program's path: relative paths are relative to
// Options.Dir (or the process's working folder).
func (c *consumer) path(p string) string {
	if dir := c.r.opts.Dir; dir != "" && !filepath.IsAbs(p) {
		return filepath.Join(dir, p)
	}
	return p
}

// fsError words a failed file operation, naming the path as the program
// wrote it: `cannot read "data.txt": no such file or directory`.
func fsError(what, p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &vm.TrapError{Kind: vm.KindIO, Message: fmt.Sprintf("cannot %s %q: %v", what, p, err)}
}

func pathArg(name string, args []byte) (string, error) {
	vs, err := decodeArgs(name, args, stringType)
	if err != nil {
		return "", err
	}
	return vs[0].AsStr(), nil
}

func primReadText(c *consumer, args []byte) ([]byte, error) {
	p, err := pathArg("std::fs::read_text", args)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(c.path(p))
	if err != nil {
		return nil, fsError("read", p, err)
	}
	return encodeValue(value.Str(string(b)))
}

func primReadBytes(c *consumer, args []byte) ([]byte, error) {
	p, err := pathArg("std::fs::read_bytes", args)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(c.path(p))
	if err != nil {
		return nil, fsError("read", p, err)
	}
	return encodeValue(value.BytesOf(string(b)))
}

func primExists(c *consumer, args []byte) ([]byte, error) {
	p, err := pathArg("std::fs::exists", args)
	if err != nil {
		return nil, err
	}
	_, err = os.Stat(c.path(p))
	switch {
	case err == nil:
		return encodeValue(value.Bool(true))
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return encodeValue(value.Bool(false))
	}
	return nil, fsError("check", p, err)
}

func primListDir(c *consumer, args []byte) ([]byte, error) {
	p, err := pathArg("std::fs::list_dir", args)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(c.path(p)) // sorted by name
	if err != nil {
		return nil, fsError("list", p, err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return encodeStrings(names)
}

func primWriteText(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::fs::write_text", args, stringType, stringType)
	if err != nil {
		return nil, err
	}
	p := vs[0].AsStr()
	if err := os.WriteFile(c.path(p), []byte(vs[1].AsStr()), 0o644); err != nil {
		return nil, fsError("write", p, err)
	}
	return nil, nil
}

func primAppendText(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::fs::append_text", args, stringType, stringType)
	if err != nil {
		return nil, err
	}
	p := vs[0].AsStr()
	f, err := os.OpenFile(c.path(p), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fsError("append to", p, err)
	}
	_, err = f.WriteString(vs[1].AsStr())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fsError("append to", p, err)
	}
	return nil, nil
}

// ---- pure ----

// The pure primitives are builtins the interpreter computes; the host
// serves them too, should an interpreter send them.

func mathPrim(f func(float64) float64) livePrim {
	return func(c *consumer, args []byte) ([]byte, error) {
		vs, err := decodeArgs("std::math", args, floatType)
		if err != nil {
			return nil, err
		}
		return encodeValue(value.Float(f(vs[0].AsFloat())))
	}
}

func mathPrim2(f func(float64, float64) float64) livePrim {
	return func(c *consumer, args []byte) ([]byte, error) {
		vs, err := decodeArgs("std::math", args, floatType, floatType)
		if err != nil {
			return nil, err
		}
		return encodeValue(value.Float(f(vs[0].AsFloat(), vs[1].AsFloat())))
	}
}

func primPow(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::math::pow", args, floatType, floatType)
	if err != nil {
		return nil, err
	}
	return encodeValue(value.Float(fmath.Pow(vs[0].AsFloat(), vs[1].AsFloat())))
}

func primJSONEncode(c *consumer, args []byte) ([]byte, error) {
	return nil, errors.New("std::json::encode is computed by the interpreter, not the host")
}
