package host

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/guest/abi"
	"github.com/hale-lang/hale/vm/internal/tier"
)

//go:generate go run ./internal/buildguest guest.wasm

// guestWasm is the interpreter compiled to wasip1/wasm (package vm/guest),
// committed and refreshed by `go generate ./vm/host`.
//
//go:embed guest.wasm
var guestWasm []byte

// wasmRuntime is a wazero runtime with the guest compiled once; every
// wasm engine is an instance of the shared compiled module.
type wasmRuntime struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
}

var sharedWasm struct {
	once sync.Once
	w    *wasmRuntime
	err  error
}

// defaultWasm returns the process's wasm runtime, compiling the guest on
// first use with the compilation cache in the user cache folder.
func defaultWasm() (*wasmRuntime, error) {
	sharedWasm.once.Do(func() {
		sharedWasm.w, sharedWasm.err = newWasmRuntime(context.Background(), defaultCacheDir())
	})
	return sharedWasm.w, sharedWasm.err
}

// Prepare starts loading an engine of the given kind in the background:
// for the wasm engine, the compiled interpreter from the cache (about
// 40 ms), or compiling it when the cache is empty. A caller with other
// set-up to do (compiling the program, reading and admitting an artifact)
// calls it first, so that the two overlap; Run and NewEngine wait for the
// load to finish as they would have done it themselves.
func Prepare(kind EngineKind) {
	if kind == EngineWasm {
		go func() { _, _ = defaultWasm() }() // the error reaches the Run that needs the runtime
	}
}

// defaultCacheDir is os.UserCacheDir()/hale/wazero, or "" (no cache) when
// there is no user cache folder.
func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil || dir == "" {
		return ""
	}
	return filepath.Join(dir, "hale", "wazero")
}

// newWasmRuntime makes a runtime with the guest compiled, caching compiled
// code in cacheDir ("" or an unusable folder: no cache). The guest gets
// WASI with wazero's deterministic defaults (fake clocks, fake random) and
// the hale.prim import; modules get no environment, arguments,
// preopened folders or stdout.
func newWasmRuntime(ctx context.Context, cacheDir string) (*wasmRuntime, error) {
	cfg := wazero.NewRuntimeConfig()
	if cacheDir != "" {
		if cache, err := wazero.NewCompilationCacheWithDir(cacheDir); err == nil {
			cfg = cfg.WithCompilationCache(cache)
		}
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	fail := func(what string, err error) (*wasmRuntime, error) {
		rt.Close(ctx)
		return nil, fmt.Errorf("wasm engine: %s: %w", what, err)
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return fail("instantiating WASI", err)
	}
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	_, err := rt.NewHostModuleBuilder(abi.ImportModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(primImport), []api.ValueType{i32, i32, i32, i32, i32}, []api.ValueType{i64}).
		WithParameterNames("id", "args", "args_len", "res", "res_cap").
		Export(abi.ImportPrim).
		Instantiate(ctx)
	if err != nil {
		return fail("instantiating the hale module", err)
	}
	_, err = rt.NewHostModuleBuilder(tier.ImportModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(refillImport), []api.ValueType{i64}, []api.ValueType{i64}).
		WithParameterNames("fuel").
		Export(tier.ImportRefill).
		Instantiate(ctx)
	if err != nil {
		return fail("instantiating the tier's host module", err)
	}
	if len(guestWasm) == 0 {
		return fail("compiling the guest", errors.New("guest.wasm is empty; run go generate ./vm/host"))
	}
	compiled, err := rt.CompileModule(experimental.WithCompilationWorkers(ctx, runtime.GOMAXPROCS(0)), guestWasm)
	if err != nil {
		return fail("compiling the guest", err)
	}
	return &wasmRuntime{rt: rt, compiled: compiled}, nil
}

// close releases the runtime (tests and benchmarks; the shared one lives
// as long as the process).
func (w *wasmRuntime) close(ctx context.Context) error { return w.rt.Close(ctx) }

// guestModuleConfig is the configuration every guest instance gets. It
// leaves wazero's deterministic defaults in place, which the sandbox
// relies on: WASI's wall clock starts at 2022-01-01T00:00:00Z and its
// monotonic clock at 0, each advancing 1 ms per reading, and random_get
// reads a pseudo-random stream seeded with 42. So nothing the guest's Go
// runtime reads from the system differs between runs; time and
// randomness reach a program only through recorded primitives.
// TestGuestSandboxIsDeterministic pins this: adding WithSysWalltime,
// WithSysNanotime or WithRandSource here fails it.
func guestModuleConfig(stderr io.Writer) wazero.ModuleConfig {
	return wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithStderr(stderr)
}

// engineKey is the context key under which a wasm engine finds itself
// when its guest calls hale.prim.
type engineKey struct{}

// wasmEngine is one guest module instance.
type wasmEngine struct {
	mod    api.Module
	mem    api.Memory
	ctx    context.Context // carries the engine (engineKey) into primImport
	host   vm.Host
	stderr *cappedBuffer // the guest runtime's own stderr, for crash reports

	alloc, load, init, deliver, state, result api.Function
	params, setParams, guards, breaks         api.Function
	stack                                     [3]uint64

	tier *tierInstance // nil: no second tier
	// owned is the program the engine was made for when nobody else
	// releases it (NewEngine).
	owned *wasmProgram
	// prog and memLimit are what the guest was loaded with (reload).
	prog     *wasmProgram
	memLimit int64

	inPtr, inCap uint32 // the guest's input buffer
	out          []byte // output of the last call (State)

	// closed is set by Close. The guest's memory may be unmapped then
	// (see guestMemory), so nothing may touch it afterwards: write and
	// call check this first.
	closed bool

	// pending is a result larger than the guest's result buffer, kept
	// until the guest fetches it (abi.FetchID).
	pending     []byte
	pendingKind uint32
	hasPending  bool
}

func (w *wasmRuntime) newEngine(ctx context.Context, prog *wasmProgram, host vm.Host, memLimit int64) (Engine, error) {
	img := prog.image
	e := &wasmEngine{host: host, stderr: &cappedBuffer{max: 8 << 10}}
	// Calls carry their own context: the guest is never interrupted from
	// outside (the interpreter counts its steps), and a context value is
	// how primImport finds the engine.
	e.ctx = context.WithValue(context.Background(), engineKey{}, e)
	mod, err := w.rt.InstantiateModule(experimental.WithMemoryAllocator(ctx, guestMemory), w.compiled, guestModuleConfig(e.stderr))
	if err != nil {
		return nil, fmt.Errorf("wasm engine: instantiating the guest: %w", err)
	}
	e.mod, e.mem = mod, mod.Memory()
	for _, f := range []struct {
		fn   *api.Function
		name string
	}{
		{&e.alloc, abi.ExportAlloc}, {&e.load, abi.ExportLoad}, {&e.init, abi.ExportInit},
		{&e.deliver, abi.ExportDeliver}, {&e.state, abi.ExportState}, {&e.result, abi.ExportResult},
		{&e.params, abi.ExportParams}, {&e.setParams, abi.ExportSetParams}, {&e.guards, abi.ExportGuards},
		{&e.breaks, abi.ExportBreaks},
	} {
		if *f.fn = mod.ExportedFunction(f.name); *f.fn == nil {
			mod.Close(e.ctx)
			return nil, fmt.Errorf("wasm engine: the guest does not export %s", f.name)
		}
	}
	if e.mem == nil {
		mod.Close(e.ctx)
		return nil, errors.New("wasm engine: the guest has no memory")
	}
	if err := e.write(img); err != nil {
		mod.Close(e.ctx)
		return nil, err
	}
	e.prog, e.memLimit = prog, memLimit
	e.stack[0], e.stack[1], e.stack[2] = uint64(len(img)), 0, uint64(memLimit)
	if prog.tier != nil {
		poll := func() error { _, err := host.Prim(vm.PrimPoll, nil); return err }
		if e.tier, err = w.newTierInstance(ctx, prog, mod, poll); err != nil {
			mod.Close(e.ctx)
			return nil, err
		}
		e.stack[1] = uint64(abi.LoadTier)
	}
	if err := e.call(e.load); err != nil {
		e.tier.close(e.ctx)
		mod.Close(e.ctx)
		return nil, err
	}
	return e, nil
}

// reload loads the program into the guest again: a fresh interpreter,
// every instance uninitialised, as a new guest would be, without the cost
// of instantiating one (a Stepper reuses guests across runs).
func (e *wasmEngine) reload() error {
	img := e.prog.image
	if err := e.write(img); err != nil {
		return err
	}
	e.stack[0], e.stack[1], e.stack[2] = uint64(len(img)), 0, uint64(e.memLimit)
	if e.tier != nil {
		e.stack[1] = uint64(abi.LoadTier)
	}
	e.out, e.pending, e.hasPending = nil, nil, false
	return e.call(e.load)
}

func (e *wasmEngine) Init(inst int) error {
	e.stack[0] = uint64(uint32(inst))
	return e.call(e.init)
}

func (e *wasmEngine) Deliver(inst, handler int, payload []byte) error {
	if err := e.write(payload); err != nil {
		return err
	}
	e.stack[0], e.stack[1], e.stack[2] = uint64(uint32(inst)), uint64(uint32(int32(handler))), uint64(len(payload))
	return e.call(e.deliver)
}

func (e *wasmEngine) State(inst int) ([]byte, error) {
	e.stack[0] = uint64(uint32(inst))
	if err := e.call(e.state); err != nil {
		return nil, err
	}
	return e.out, nil
}

func (e *wasmEngine) Params(inst int) ([]byte, error) {
	e.stack[0] = uint64(uint32(inst))
	if err := e.call(e.params); err != nil {
		return nil, err
	}
	return e.out, nil
}

func (e *wasmEngine) SetGuardParams(table [][]byte) error {
	b := abi.EncodeParamTable(table)
	if err := e.write(b); err != nil {
		return err
	}
	e.stack[0] = uint64(len(b))
	return e.call(e.setParams)
}

// SetBreaks arms a debugger's breaks in the guest (vm.Machine.SetBreaks).
func (e *wasmEngine) SetBreaks(spec []byte) error {
	if err := e.write(spec); err != nil {
		return err
	}
	e.stack[0] = uint64(len(spec))
	return e.call(e.breaks)
}

func (e *wasmEngine) Guards(topic int, payload []byte) ([]byte, error) {
	if err := e.write(payload); err != nil {
		return nil, err
	}
	e.stack[0], e.stack[1] = uint64(uint32(topic)), uint64(len(payload))
	if err := e.call(e.guards); err != nil {
		return nil, err
	}
	if len(e.out) == 0 {
		return nil, errors.New("wasm engine: guards: no result")
	}
	return e.out[1:], nil
}

func (e *wasmEngine) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	e.tier.close(e.ctx)
	e.owned.close(e.ctx)
	return e.mod.Close(e.ctx)
}

var errEngineClosed = errors.New("wasm engine: the engine is closed")

// write copies b into the guest's input buffer, growing it first if
// needed.
func (e *wasmEngine) write(b []byte) error {
	if e.closed {
		return errEngineClosed
	}
	if uint64(len(b)) > uint64(e.inCap) {
		if len(b) > 1<<31 {
			return errors.New("wasm engine: input too large")
		}
		e.stack[0] = uint64(len(b))
		if err := e.alloc.CallWithStack(e.ctx, e.stack[:]); err != nil {
			return e.crashed(err)
		}
		e.inPtr, e.inCap = uint32(e.stack[0]), uint32(len(b))
	}
	if len(b) > 0 && !e.mem.Write(e.inPtr, b) {
		return errors.New("wasm engine: input buffer out of range")
	}
	return nil
}

// call runs an export whose parameters are in e.stack and interprets its
// int32 result: 0 success, n > 0 success with n bytes of output (left in
// e.out), n < 0 a failure of -n encoded bytes.
func (e *wasmEngine) call(fn api.Function) error {
	if e.closed {
		return errEngineClosed
	}
	e.out = nil
	if err := fn.CallWithStack(e.ctx, e.stack[:]); err != nil {
		return e.crashed(err)
	}
	r := int32(uint32(e.stack[0]))
	if r == 0 {
		return nil
	}
	n := r
	if r < 0 {
		n = -r
	}
	if err := e.result.CallWithStack(e.ctx, e.stack[:]); err != nil {
		return e.crashed(err)
	}
	view, ok := e.mem.Read(uint32(e.stack[0]), uint32(n))
	if !ok {
		return errors.New("wasm engine: result out of range")
	}
	b := append([]byte(nil), view...) // the view goes stale when the guest grows its memory
	if r > 0 {
		e.out = b
		return nil
	}
	return abi.DecodeFailure(b)
}

// crashed describes a guest that stopped (a Go runtime fatal error, an
// exit, a wasm trap): the module cannot be used again.
func (e *wasmEngine) crashed(err error) error {
	tail := e.stderr.String()
	// The Go runtime either reports that it ran out, or fails to grow
	// the memory past the 4 GiB a WebAssembly instance addresses.
	if strings.Contains(tail, "fatal error: out of memory") || strings.Contains(err.Error(), ".runtime.growMemory(") {
		// The program, not the engine, failed: it is a trap like any
		// other, reported at its delivery. The guest is gone, so there
		// is no Hale stack.
		return &vm.Trap{Message: msgOutOfMemory}
	}
	msg := fmt.Sprintf("wasm engine: the guest crashed: %v", err)
	if tail != "" {
		msg += "\nguest stderr:\n" + tail
	}
	return errors.New(msg)
}

// msgOutOfMemory is the trap of a program whose consumer used up the
// interpreter's memory: a WebAssembly guest addresses at most 4 GiB.
const msgOutOfMemory = "out of memory: the consumer's interpreter used up its 4 GiB"

// primImport is hale.prim: it serves one vm.Host.Prim call of the guest
// whose engine is in ctx (see package vm/guest/abi for the protocol).
func primImport(ctx context.Context, mod api.Module, stack []uint64) {
	id, argsPtr, argsLen, resPtr, resCap := uint32(stack[0]), uint32(stack[1]), uint32(stack[2]), uint32(stack[3]), uint32(stack[4])
	e, _ := ctx.Value(engineKey{}).(*wasmEngine)
	if e == nil {
		stack[0] = abi.Status(abi.Bad, 0)
		return
	}
	mem := mod.Memory()
	var kind uint32
	var res []byte
	if id == abi.FetchID {
		if !e.hasPending {
			res, kind = []byte("fetch with no pending result"), abi.Bad
		} else {
			res, kind = e.pending, e.pendingKind
			e.pending, e.hasPending = nil, false
		}
	} else if args, ok := mem.Read(argsPtr, argsLen); ok && id == abi.TierID && e.tier != nil {
		out, err := e.tier.call(args)
		if err != nil {
			res, kind = abi.AppendTrapMessage(nil, err), abi.Trap
		} else {
			res, kind = out, abi.OK
		}
	} else if !ok || id > 0xFFFF {
		res, kind = []byte("bad primitive call"), abi.Bad
	} else {
		// args is a view of guest memory, valid during this call: the
		// host copies what it keeps.
		out, err := e.host.Prim(uint16(id), args)
		switch {
		case errors.Is(err, vm.ErrInterrupted):
			res, kind = []byte(err.Error()), abi.Interrupted
		case errors.Is(err, vm.ErrUncatchable):
			res, kind = []byte(err.Error()), abi.Uncatchable
		case err != nil:
			res, kind = abi.AppendTrapMessage(nil, err), abi.Trap
		default:
			res, kind = out, abi.OK
		}
	}
	if uint64(len(res)) > uint64(resCap) {
		if id != abi.FetchID {
			e.pending, e.pendingKind, e.hasPending = res, kind, true
		}
		stack[0] = abi.Status(kind, len(res))
		return
	}
	if len(res) > 0 && !mem.Write(resPtr, res) {
		res, kind = nil, abi.Bad
	}
	stack[0] = abi.Status(kind, len(res))
}

// cappedBuffer keeps the first max bytes written to it (a Go runtime
// crash report starts with what matters).
type cappedBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *cappedBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - len(t.b); room > 0 {
		t.b = append(t.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (t *cappedBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
