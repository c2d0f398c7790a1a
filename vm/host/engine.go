package host

import (
	"context"
	"fmt"
	"strconv"
	"strings"

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
	// Params returns inst's locus parameters as their canonical tuple,
	// after Init (for the guards' parameter table).
	Params(inst int) ([]byte, error)
	// SetGuardParams gives the engine every instance's parameter tuple
	// (nil where no guard needs it), which the guards it runs read.
	SetGuardParams(table [][]byte) error
	// Guards evaluates topic's guards on payload outside any handler (an
	// ingress line) and returns the guard bits (vm.GuardedSubscribers).
	Guards(topic int, payload []byte) ([]byte, error)
	// Close releases the engine.
	Close() error
}

// breakSetter is an engine that arms a debugger's breaks (both engines
// are): spec is an encoded vm.BreakSpec, empty to disarm.
type breakSetter interface {
	SetBreaks(spec []byte) error
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
		return newEngine(ctx, kind, img, nil, host, vm.DefaultMemoryLimit)
	}
	w, err := defaultWasm()
	if err != nil {
		return nil, err
	}
	prog, err := w.prepare(ctx, img)
	if err != nil {
		return nil, err
	}
	e, err := w.newEngine(ctx, prog, host, vm.DefaultMemoryLimit)
	if err != nil {
		prog.close(ctx)
		return nil, err
	}
	e.(*wasmEngine).owned = prog
	return e, nil
}

// newEngine is NewEngine with the program already prepared (for the wasm
// engine), so that Run prepares it once for all consumers, and a memory
// limit (vm.Machine.SetMemoryLimit).
func newEngine(ctx context.Context, kind EngineKind, img *image.Image, prog *wasmProgram, host vm.Host, memLimit int64) (Engine, error) {
	switch kind {
	case EngineWasm:
		w, err := defaultWasm()
		if err != nil {
			return nil, err
		}
		return w.newEngine(ctx, prog, host, memLimit)
	case EngineNative:
		return newNative(img, host, memLimit)
	}
	return nil, fmt.Errorf("unknown engine %v", kind)
}

// Bounds of a memory limit (Options.MemoryLimit) set by a person: below
// MinMemoryLimit a program can hardly start; above MaxMemoryLimit the
// wasm engine's interpreter, which addresses 4 GiB in all and whose Go
// collector needs room beside the data (1.6 GiB of memory for 1 GiB of
// data), could run out before the limit is reached.
const (
	MinMemoryLimit = 1 << 20
	MaxMemoryLimit = 1 << 30
)

// ParseMemoryLimit reads a memory limit as HALE_MEMORY_LIMIT gives it: a
// whole number of bytes, or of KiB, MiB or GiB with that suffix (K, M and
// G are the same units): "512MiB", "2GiB", "1073741824". It must be
// between MinMemoryLimit and MaxMemoryLimit.
func ParseMemoryLimit(s string) (int64, error) {
	num, unit := s, int64(1)
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
		if strings.HasSuffix(s, u.suffix) {
			num, unit = strings.TrimSuffix(s, u.suffix), u.size
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n <= 0 || n > MaxMemoryLimit/unit || n*unit < MinMemoryLimit {
		return 0, fmt.Errorf("memory limit %q: want a size from 1MiB to 1GiB, such as 512MiB", s)
	}
	return n * unit, nil
}
