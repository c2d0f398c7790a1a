// Package vm is the Hale interpreter: it runs a program image (package
// codegen) one handler at a time, deterministically. It reaches the world
// only through the Host it is given: every primitive call, publish and
// print crosses that one gateway as (primitive id, canonical argument
// bytes) and comes back as canonical result bytes or a trap. The package
// imports nothing that reads time, randomness, the environment, files or
// the network, so the same code runs natively and as a WebAssembly guest
// (vm/guest) with identical results.
//
// # Using a machine
//
// New prepares a Machine for an image (package codegen/image). For each
// instance it hosts, the host calls Init once, in main order, before any
// delivery: Init evaluates the instance's spawn arguments into its
// parameter slots and runs its state initialisers. Deliver then runs one
// handler to completion: HandlerStart for `on start`, or a topic index
// with the canonical payload. State returns the canonical tuple of an
// instance's state variables (StateTypes decodes it). Types, Type,
// PayloadType and StateTypes give the runtime type descriptors (package
// vm/value) that decode payloads, results and state for display.
//
// Within one instance, lists, maps and structs are shared references, as
// the language says; a published payload is encoded, so the receiver gets
// a deep copy.
//
// # The gateway
//
//   - A primitive call sends the canonical tuple of its arguments under the
//     standard library id (package stdlib) and decodes the result with the
//     primitive's result type; an empty result (or a lone void byte) is
//     the result of a primitive without one.
//   - publish T {…} sends PrimPublish with uvarint(topic index) followed by
//     the canonical payload struct; publish T {…} after ms sends
//     PrimPublishAfter with uvarint(topic), uvarint(ms), then the payload
//     (ms 0 is a plain publish; negative ms traps with kind arg).
//   - print(x) sends PrimPrint with str(x) as one canonical string value
//     (tag 0x04, uvarint length, bytes), without the newline: the host
//     writes the newline. std::io::println is an ordinary primitive.
//   - args is only valid during the call (the machine reuses the buffer);
//     a host that keeps it must copy it.
//   - A host error becomes a trap whose message is err.Error(), at the
//     position of the call (or publish or print).
//   - A host error wrapped by Uncatchable (errors.Is(err, ErrUncatchable))
//     becomes a trap with Trap.Uncatchable set: the host cannot go on
//     running the program faithfully (its recording failed), and no `try`
//     may catch such a trap.
//
// # Steps and budgets
//
// A step is one executed bytecode instruction. A call of a builtin or a
// primitive is one step, however much work it does; so is a publish.
// Deliver counts the steps of one handler run from zero, across the Hale
// calls it makes; when the locus has @budget(steps: N), the run traps with
// "budget exhausted" instead of executing its (N+1)-th instruction. Init
// is not counted. The count depends only on the image, so every engine
// running the same image counts the same; Steps reports the count of the
// last run. For example `var s = 0; for i in 0..10 { s += i; }` as a
// whole handler takes 25 steps: three loads, the range test, ten
// iterations of two instructions, and the return.
//
// # Traps
//
// A trap aborts the handler run and is returned as a *Trap: the message
// and the Hale stack, innermost first, each frame naming its function
// ("fib", "Worker.on Job", "Ledger.init", "main" for spawn arguments)
// and the position of the trapping instruction or active call. A stack
// deeper than 100 frames keeps the innermost 100 and ends with a frame
// "(N more frames)". The messages:
//
//	message                                          cause
//	integer overflow                                 int + - * and unary -, abs(MIN), MIN / -1, MIN % -1
//	division by zero                                 int / or % by 0
//	index I out of range for list of length N        xs[i], xs[i] = v, insert (0 <= i <= N), remove
//	index I out of range for string of length N      s[i] (also "for bytes of length N")
//	key K not found in map                           m[k] (K as str() writes it inside a container: "x", 5, true)
//	list changed during iteration                    assigning an element, push, pop, insert or remove on a list a for loop is iterating
//	map changed during iteration                     assigning or delete on a map a for loop is iterating
//	pop from empty list                              pop([])
//	slice bounds A..B out of range for list of length N   slice with A < 0, A > B or B > N (also string, bytes)
//	slice A..B cuts a UTF-8 character                slice of a string whose bound falls inside a character
//	split with empty separator                       split(s, "")
//	cannot convert "x" to int                        int(s) of anything but an optional sign and decimal digits, or out of range
//	cannot convert "x" to float                      float(s) that strconv.ParseFloat rejects (or out of range)
//	cannot convert X to int                          int(f) of NaN, inf, -inf or outside [-2^63, 2^63) (X as str() writes it)
//	<msg>                                            assert(false, msg), panic(msg)
//	budget exhausted                                 a handler run exceeds its @budget
//	stack overflow                                   more than MaxDepth nested calls, or frames beyond MaxStack registers
//	out of memory: the consumer's data outgrew …     the values the machine holds passed its memory limit (memory.go)
//	value contains itself                            ==, contains, std::json::encode, publish or a primitive argument of a cyclic value
//	value nested too deeply                          the same on a value nested deeper than 1000 containers
//	<host error>                                     a primitive, publish or print the host failed (err.Error())
//	bad result from P: <why>                         the host answered primitive P with bytes that do not decode
//	internal error: <why>                            a broken invariant of the machine or image (a bug)
package vm

import "errors"

// Host serves the interpreter's primitive calls. args and the result are
// canonical value encodings (package vm/value): args is the tuple of
// arguments, the result is the value (empty for a primitive without a
// result). A non-nil error becomes a trap whose message is err.Error().
//
// Publishing and printing are primitive calls too (ids PrimPublish and
// PrimPrint): publish's args are the topic index (uvarint) followed by
// the canonical payload; print's args are the text as a canonical string.
type Host interface {
	Prim(id uint16, args []byte) ([]byte, error)
}

// Handler selectors for Deliver: HandlerStart runs the instance's
// `on start`; any other value is a topic index into the image's topic
// table and runs the instance's handler for that topic.
const HandlerStart = -1

// Frame is one Hale call frame of a trap's stack.
type Frame struct {
	Func string // qualified: "fib", "Worker.on Job", "Ledger.report"
	Pos  string // logical file:line:col of the active call or trapping op
}

// Trap is a runtime error that aborted a handler. Stack is innermost
// first. Trap implements error.
type Trap struct {
	Kind    string // one of the Kind… constants
	Message string
	Stack   []Frame
	// Uncatchable marks a trap that no `try` may catch: its kind is not
	// Catchable (budget exhaustion, a stack overflow, a failed recording:
	// a host error wrapped by Uncatchable, …).
	Uncatchable bool
}

// Trap kinds. The first group are those `try` catches; the rest end the
// run whatever the program does.
const (
	KindIO      = "io"      // a failed file or network call
	KindTimeout = "timeout" // an HTTP timeout
	KindArith   = "arith"   // overflow, division by zero, shift count
	KindIndex   = "index"   // list, string or bytes bounds, a missing map key, pop of an empty list
	KindConvert = "convert" // int(), float()
	KindArg     = "arg"     // a bad argument to a builtin or primitive
	KindState   = "state"   // a list or map changed while a for loop iterates it
	KindAssert  = "assert"  // a failed assert
	KindPanic   = "panic"   // panic(…), unwrap of None

	KindBudget    = "budget"    // the handler's @budget is exhausted
	KindStack     = "stack"     // stack overflow
	KindMemory    = "memory"    // the interpreter ran out of memory
	KindExit      = "exit"      // std::process::exit
	KindInterrupt = "interrupt" // the run was interrupted
	KindRecord    = "record"    // the recording failed
	KindReplay    = "replay"    // replay's own traps: a journal miss, missing input
	KindHost      = "host"      // any other error of the host
	KindInternal  = "internal"  // a broken invariant (a bug)
)

// Catchable reports whether try catches a trap of kind. The interpreter
// and the host raise only the kinds above: try catches io, timeout,
// arith, index, convert, arg, state, assert and panic, and never the
// others. unwrap of Err(e) traps with e.kind, which the program chose,
// except that a kind naming one of the never-caught kinds becomes panic:
// a program cannot raise a trap that try cannot catch.
func Catchable(kind string) bool {
	switch kind {
	case KindBudget, KindStack, KindMemory, KindExit, KindInterrupt, KindRecord, KindReplay, KindHost, KindInternal:
		return false
	}
	return true
}

func (t *Trap) Error() string { return t.Message }

// ErrUncatchable is what errors.Is finds in a host error made by
// Uncatchable.
var ErrUncatchable = errors.New("uncatchable")

// Uncatchable wraps a host error so that the trap it causes cannot be
// caught (Trap.Uncatchable). The message stays err's.
func Uncatchable(err error) error { return uncatchableError{err} }

type uncatchableError struct{ err error }

func (e uncatchableError) Error() string   { return e.err.Error() }
func (e uncatchableError) Unwrap() []error { return []error{e.err, ErrUncatchable} }

// Gateway ids of publishing and of the print builtin. They are the ids
// package stdlib's table gives them (stdlib.PublishID and the "print"
// entry; a test keeps them equal); vm cannot import stdlib, which embeds
// files and so reaches package time.
const (
	PrimPublish uint16 = 1 // args: uvarint topic index, then the canonical payload
	PrimPrint   uint16 = 2 // args: the text as a canonical string, without the newline
)

// PrimPoll is the gateway id (0, which no primitive has) with which a
// long handler run asks the host, every PollSteps steps, whether the run
// goes on: the host answers nil to continue, an encoded break spec to
// continue with those breaks armed (a debugger's pause), or an error,
// which ends the run with that error (not a trap). The interpreter cannot be stopped from
// outside (the wasm guest runs until it returns), so this is how a host
// interrupts a handler that never ends. Polls are not journaled.
const PrimPoll uint16 = 0

// PrimPublishAfter is the gateway id of a timer, `publish T {…} after
// ms;` with ms > 0: args are the topic index (uvarint), the delay in
// milliseconds (uvarint), then the canonical payload. Like PrimPublish it
// is not a primitive; its id lies at the top of the 16-bit range, which
// the primitive table never reaches. A delay of 0 is sent as PrimPublish,
// a negative one traps in the machine (kind arg) and is never sent.
const PrimPublishAfter uint16 = 0xFFFF

// ErrInterrupted ends a handler run without a trap. A host answers a
// gateway call (a poll, a primitive, a publish or a print) with an error
// wrapping it when the run was interrupted (Ctrl-C): the call has no
// result, and the machine returns that error from Init or Deliver as it
// does a poll's, never as a trap (which a program could observe).
var ErrInterrupted = errors.New("interrupted")

// PollSteps is the number of steps between two polls: under a millisecond
// of interpretation on the native engine and about 10 ms on the wasm
// engine, so that an interrupt stops even an endless loop within 0.1 s,
// also on a busy machine. A poll costs one host call, nothing next to a
// quarter of a million steps.
const PollSteps = 1 << 18

// The interpreter's entry points, implemented by Machine (machine.go):
//
//	func New(img *image.Image, host Host) (*Machine, error)                 // img: package codegen/image
//	func (m *Machine) Init(inst int) error                                  // evaluate the instance's spawn arguments and state initialisers
//	func (m *Machine) Deliver(inst int, handler int, payload []byte) error  // run one handler to completion; a trap is a *Trap
//	func (m *Machine) State(inst int) ([]byte, error)                       // canonical tuple of the instance's state vars, in declaration order
//
// Instance, topic and locus indices are those of the image, which keeps the
// indices of the SIR program it was compiled from.
