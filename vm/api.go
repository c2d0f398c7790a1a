// Package vm is the Hale interpreter: it runs a program image (package
// codegen) one handler at a time, deterministically. It reaches the world
// only through the Host it is given: every primitive call, publish and
// print crosses that one gateway as (primitive id, canonical argument
// bytes) and comes back as canonical result bytes or a trap. The package
// imports nothing that reads time, randomness, the environment, files or
// the network, so the same code runs natively and as a WebAssembly guest
// (vm/guest) with identical results.
package vm

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
	Message string
	Stack   []Frame
}

func (t *Trap) Error() string { return t.Message }

// Gateway ids of publishing and of the print builtin. They are the ids
// package stdlib's table gives them (stdlib.PublishID and the "print"
// entry; a test keeps them equal); vm cannot import stdlib, which embeds
// files and so reaches package time.
const (
	PrimPublish uint16 = 1 // args: uvarint topic index, then the canonical payload
	PrimPrint   uint16 = 2 // args: the text as a canonical string, without the newline
)

// The interpreter's entry points, implemented by Machine (machine.go):
//
//	func New(img *codegen.Image, host Host) (*Machine, error)
//	func (m *Machine) Init(inst int) error                                  // evaluate the instance's spawn arguments and state initialisers
//	func (m *Machine) Deliver(inst int, handler int, payload []byte) error  // run one handler to completion; a trap is a *Trap
//	func (m *Machine) State(inst int) ([]byte, error)                       // canonical tuple of the instance's state vars, in declaration order
//
// Instance, topic and locus indices are those of the image, which keeps the
// indices of the SIR program it was compiled from.
