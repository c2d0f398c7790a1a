package host

import (
	"context"
	"fmt"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
)

// Engine runs the interpreter for one consumer: it holds the state of the
// instances the consumer hosts and runs their handlers one at a time.
// Primitive calls, publishes and prints go to the vm.Host the engine was
// made with. An Engine belongs to one goroutine at a time.
//
// A trap is returned as a *vm.Trap; any other error means the engine
// itself failed (a bad image, a crashed guest) and ends the run.
type Engine interface {
	// Init evaluates instance inst's spawn arguments and state
	// initialisers.
	Init(inst int) error
	// Deliver runs one handler of instance inst to completion: its
	// `on start` (handler vm.HandlerStart) or its handler for topic
	// handler, with the canonical payload.
	Deliver(inst, handler int, payload []byte) error
	// State returns inst's state as the canonical tuple of its state
	// variables in declaration order.
	State(inst int) ([]byte, error)
	// Close releases the engine.
	Close() error
}

// EngineKind selects how the interpreter runs.
type EngineKind uint8

// Engines. Both give identical results; the wasm engine is the default
// because its sandbox guarantees that the interpreter reaches the world
// only through the gateway.
const (
	EngineWasm   EngineKind = iota // the interpreter as a WebAssembly guest under wazero
	EngineNative                   // the interpreter in-process (tests, measurement)
)

// String returns "wasm" or "native".
func (k EngineKind) String() string {
	switch k {
	case EngineWasm:
		return "wasm"
	case EngineNative:
		return "native"
	}
	return fmt.Sprintf("engine(%d)", uint8(k))
}

// ParseEngine returns the engine named "wasm" or "native".
func ParseEngine(name string) (EngineKind, error) {
	switch name {
	case "wasm":
		return EngineWasm, nil
	case "native":
		return EngineNative, nil
	}
	return 0, fmt.Errorf("unknown engine %q (want wasm or native)", name)
}

// NewEngine starts an engine of the given kind running img, with host
// serving its primitive calls. Run makes one per consumer; NewEngine is
// for tools and tests that drive instances directly.
func NewEngine(ctx context.Context, kind EngineKind, img *image.Image, host vm.Host) (Engine, error) {
	if kind != EngineWasm {
		return newEngine(ctx, kind, img, nil, host)
	}
	w, err := defaultWasm()
	if err != nil {
		return nil, err
	}
	prog, err := w.prepare(ctx, img)
	if err != nil {
		return nil, err
	}
	e, err := w.newEngine(ctx, prog, host)
	if err != nil {
		prog.close(ctx)
		return nil, err
	}
	e.(*wasmEngine).owned = prog
	return e, nil
}

// newEngine is NewEngine with the program already prepared (for the wasm
// engine), so that Run prepares it once for all consumers.
func newEngine(ctx context.Context, kind EngineKind, img *image.Image, prog *wasmProgram, host vm.Host) (Engine, error) {
	switch kind {
	case EngineWasm:
		w, err := defaultWasm()
		if err != nil {
			return nil, err
		}
		return w.newEngine(ctx, prog, host)
	case EngineNative:
		return newNative(img, host)
	}
	return nil, fmt.Errorf("unknown engine %v", kind)
}
