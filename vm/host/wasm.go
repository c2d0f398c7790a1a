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
	"strconv"
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

// WaitPrepared returns once what Prepare loads for an engine of kind is
// loaded (or failed to load): at once for the native engine.
func WaitPrepared(kind EngineKind) {
	if kind == EngineWasm {
		_, _ = defaultWasm()
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
//
// Its two environment settings are for the guest's Go runtime, which reads
// them as it starts: Go's collector compiled to WebAssembly runs on the
// guest's one thread and marks the live heap at every cycle, so a program
// that allocates (binary-trees, fasta) spent a fifth of its CPU time in
// it at the default GOGC of 100. A heap allowed to grow to five times
// what is live before a cycle (GOGC=400) costs a few megabytes for such a
// program (binary-trees 14: 61 to 76 MB) and takes 15-20% off its CPU
// time (docs/performance.md §5.19); the soft limit (GOMEMLIMIT) keeps a
// guest whose live data is large from growing to five times that: near
// it, the collector runs as often as it must. The soft limit follows the
// memory limit (guestSoftLimit): a consumer's data may take 1.6 times
// itself in Go's heap, and a soft limit below that has the collector run
// without end (three trees of 671 MB in a row under HALE_MEMORY_LIMIT=1GiB
// ran for more than ten minutes at a soft limit of 1 GiB, 20 s at 3 GiB;
// docs/performance.md §5.35). Neither changes what a
// program sees: a consumer's memory limit is the interpreter's own
// measure of the data it holds (vm.Machine.SetMemoryLimit), not the size
// of the Go heap. The program's own environment never reaches the guest
// (std::env reads go through the gateway).
func guestModuleConfig(stderr io.Writer, memLimit int64) wazero.ModuleConfig {
	return wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithStderr(stderr).
		WithEnv("GOGC", guestGOGC).
		WithEnv("GOMEMLIMIT", strconv.FormatInt(guestSoftLimit(memLimit), 10))
}

// guestSoftLimit is the guest's GOMEMLIMIT, in bytes, for machines whose
// memory limit is memLimit (0: none): three times it, from 1 GiB to
// 3 GiB, which leaves the guest's 4 GiB room for the tier's arena (vm's
// arenaLargest) and the stacks.
func guestSoftLimit(memLimit int64) int64 {
	return min(max(3*memLimit, 1<<30), 3<<30)
}

// The guest's collector settings (see guestModuleConfig). guestGOGC is a
// variable for a test that runs guests whose collector runs all the time
// (TestTierFastPush).
var guestGOGC = "400"

// engineKey is the context key under which hale.prim finds the guest
// that calls it.
type engineKey struct{}

// wasmGuest is one guest module instance. It hosts the machines of one or
// more wasm engines (consumers), each its own vm.Machine in the guest,
// sharing the guest's Go runtime, decoded image and second tier. The
// guest runs one call at a time: an engine holds mu for each call, and
// hale.prim serves the guest's primitive calls with the host of the
// engine whose call runs (cur). See docs/design.md on sharing guests.
type wasmGuest struct {
	mu     sync.Mutex
	mod    api.Module
	mem    api.Memory
	ctx    context.Context // carries the guest (engineKey) into primImport
	stderr *cappedBuffer   // the guest runtime's own stderr, for crash reports

	alloc, load, init, deliver, state, result api.Function
	params, setParams, guards, breaks         api.Function
	addMachine, selectMachine                 api.Function
	stack                                     [3]uint64

	// box is the address of the guest's batch box when publishes are
	// batched (abi: publish batches), else 0; then deliverMany is the
	// export that runs several deliveries, and list its input's scratch.
	box         uint32
	deliverMany api.Function
	list        []byte
	// fastInfo is the guest's export that answers what compiled
	// handlers need of an instance (tierhandler.go).
	fastInfo api.Function

	tier *tierInstance // nil: no second tier
	prog *wasmProgram  // what the guest was loaded with

	inPtr, inCap uint32 // the guest's input buffer
	out          []byte // output of the last call (State, Params, Guards)

	// closed is set when the last engine closes. The guest's memory may
	// be unmapped then (see guestMemory), so nothing may touch it
	// afterwards: write and call check this first.
	closed bool

	// pending is a result larger than the guest's result buffer, kept
	// until the guest fetches it (abi.FetchID).
	pending     []byte
	pendingKind uint32
	hasPending  bool

	cur      *wasmEngine // the engine whose call runs
	selected uint32      // the machine the guest's exports address
	machines int         // machines loaded
	users    int         // engines not closed
}

// wasmEngine is one consumer's machine in a guest, which it may share
// with other engines.
type wasmEngine struct {
	g       *wasmGuest
	machine uint32 // its number in the guest
	host    vm.Host
	// owned is the program the engine was made for when nobody else
	// releases it (NewEngine).
	owned    *wasmProgram
	memLimit int64
	closed   bool

	// Compiled handlers (tierhandler.go): whether e runs them (0 not
	// known yet, 1 yes, 2 no), what it knows of each instance, and
	// whether a debugger armed breaks.
	fastMode  uint8
	fast      []fastInst // by instance, from fastLo (fastFor)
	fastLo    int
	breaksSet bool
}

// newEngine instantiates a guest for one engine: machine 0, with host
// serving its primitive calls.
func (w *wasmRuntime) newEngine(ctx context.Context, prog *wasmProgram, host vm.Host, memLimit int64) (Engine, error) {
	g, err := w.newGuest(ctx, prog, memLimit, batches(host))
	if err != nil {
		return nil, err
	}
	g.users = 1
	return &wasmEngine{g: g, host: host, memLimit: memLimit}, nil
}

// newGuest instantiates the guest and loads prog into it, as machine 0
// with memory limit memLimit; batch: the guest batches publishes (only
// for hosts whose publishes cannot fail but for an interrupt: batches).
func (w *wasmRuntime) newGuest(ctx context.Context, prog *wasmProgram, memLimit int64, batch bool) (*wasmGuest, error) {
	img := prog.image
	g := &wasmGuest{stderr: &cappedBuffer{max: 8 << 10}, prog: prog}
	// Calls carry their own context: the guest is never interrupted from
	// outside (the interpreter counts its steps), and a context value is
	// how primImport finds the guest.
	g.ctx = context.WithValue(context.Background(), engineKey{}, g)
	mod, err := w.rt.InstantiateModule(experimental.WithMemoryAllocator(ctx, guestMemory), w.compiled, guestModuleConfig(g.stderr, memLimit))
	if err != nil {
		return nil, fmt.Errorf("wasm engine: instantiating the guest: %w", err)
	}
	g.mod, g.mem = mod, mod.Memory()
	for _, f := range []struct {
		fn   *api.Function
		name string
	}{
		{&g.alloc, abi.ExportAlloc}, {&g.load, abi.ExportLoad}, {&g.init, abi.ExportInit},
		{&g.deliver, abi.ExportDeliver}, {&g.state, abi.ExportState}, {&g.result, abi.ExportResult},
		{&g.params, abi.ExportParams}, {&g.setParams, abi.ExportSetParams}, {&g.guards, abi.ExportGuards},
		{&g.breaks, abi.ExportBreaks}, {&g.addMachine, abi.ExportMachine}, {&g.selectMachine, abi.ExportSelect},
	} {
		if *f.fn = mod.ExportedFunction(f.name); *f.fn == nil {
			mod.Close(g.ctx)
			return nil, fmt.Errorf("wasm engine: the guest does not export %s", f.name)
		}
	}
	if g.mem == nil {
		mod.Close(g.ctx)
		return nil, errors.New("wasm engine: the guest has no memory")
	}
	if err := g.write(img); err != nil {
		mod.Close(g.ctx)
		return nil, err
	}
	g.stack[0], g.stack[1], g.stack[2] = uint64(len(img)), 0, uint64(memLimit)
	if prog.tier != nil {
		// Compiled code polls the host of the engine whose call runs.
		poll := func() ([]byte, error) { return g.cur.host.Prim(vm.PrimPoll, nil) }
		if g.tier, err = w.newTierInstance(ctx, prog, mod, poll); err != nil {
			mod.Close(g.ctx)
			return nil, err
		}
		g.stack[1] = uint64(abi.LoadTier)
		if len(g.tier.handlers) > 0 {
			if g.fastInfo = mod.ExportedFunction(abi.ExportFastInfo); g.fastInfo == nil {
				g.tier.close(g.ctx)
				mod.Close(g.ctx)
				return nil, fmt.Errorf("wasm engine: the guest does not export %s", abi.ExportFastInfo)
			}
		}
	}
	if err := g.call(g.load); err != nil {
		g.tier.close(g.ctx)
		mod.Close(g.ctx)
		return nil, err
	}
	g.machines = 1
	if batch {
		fn := mod.ExportedFunction(abi.ExportBatch)
		if fn == nil {
			g.tier.close(g.ctx)
			mod.Close(g.ctx)
			return nil, fmt.Errorf("wasm engine: the guest does not export %s", abi.ExportBatch)
		}
		if err := fn.CallWithStack(g.ctx, g.stack[:]); err != nil {
			g.tier.close(g.ctx)
			mod.Close(g.ctx)
			return nil, g.crashed(err)
		}
		g.box = uint32(g.stack[0])
		if g.deliverMany = mod.ExportedFunction(abi.ExportDeliverMany); g.deliverMany == nil {
			g.tier.close(g.ctx)
			mod.Close(g.ctx)
			return nil, fmt.Errorf("wasm engine: the guest does not export %s", abi.ExportDeliverMany)
		}
	}
	return g, nil
}

// attach adds an engine to the guest: a machine of its own, with memory
// limit memLimit, whose primitive calls host serves. The first engine
// of a fresh guest gets machine 0, which newGuest loaded with the same
// limit; attach makes one for each of the others.
func (g *wasmGuest) attach(host vm.Host, memLimit int64) (*wasmEngine, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, errEngineClosed
	}
	if g.users == 0 && g.machines == 1 {
		// A fresh guest: machine 0, loaded by newGuest, is free.
		g.users = 1
		return &wasmEngine{g: g, host: host, memLimit: memLimit}, nil
	}
	g.stack[0] = uint64(memLimit)
	if err := g.addMachine.CallWithStack(g.ctx, g.stack[:]); err != nil {
		return nil, g.crashed(err)
	}
	if r := int32(uint32(g.stack[0])); r < 0 {
		return nil, g.failure(-r)
	}
	id := uint32(g.stack[0])
	g.machines++
	g.users++
	return &wasmEngine{g: g, machine: id, host: host, memLimit: memLimit}, nil
}

// begin takes the guest for one call of e: it waits for the guest, makes
// e's host the one hale.prim serves and selects e's machine. end gives
// the guest back.
func (e *wasmEngine) begin() error {
	g := e.g
	g.mu.Lock()
	if e.closed || g.closed {
		g.mu.Unlock()
		return errEngineClosed
	}
	g.cur = e
	if g.selected != e.machine {
		g.stack[0] = uint64(e.machine)
		if err := g.call(g.selectMachine); err != nil {
			g.cur = nil
			g.mu.Unlock()
			return err
		}
		g.selected = e.machine
	}
	return nil
}

func (e *wasmEngine) end() {
	e.g.cur = nil
	e.g.mu.Unlock()
}

// reload loads the program into the guest again: a fresh interpreter,
// every instance uninitialised, as a new guest would be, without the cost
// of instantiating one (a Stepper reuses guests across runs). Only an
// engine alone in its guest reloads.
func (e *wasmEngine) reload() error {
	if err := e.begin(); err != nil {
		return err
	}
	defer e.end()
	g := e.g
	if g.users != 1 || e.machine != 0 {
		return errors.New("wasm engine: reload of a shared guest")
	}
	img := g.prog.image
	if err := g.write(img); err != nil {
		return err
	}
	g.stack[0], g.stack[1], g.stack[2] = uint64(len(img)), 0, uint64(e.memLimit)
	if g.tier != nil {
		g.stack[1] = uint64(abi.LoadTier)
	}
	g.out, g.pending, g.hasPending = nil, nil, false
	g.machines, g.selected = 1, 0
	e.forgetFast(-1)
	return g.call(g.load)
}

func (e *wasmEngine) Init(inst int) error {
	if err := e.begin(); err != nil {
		return err
	}
	defer e.end()
	e.forgetFast(inst)
	e.g.stack[0] = uint64(uint32(inst))
	return e.g.callBatched(e, e.g.init)
}

func (e *wasmEngine) Deliver(inst, handler int, payload []byte) error {
	if err := e.begin(); err != nil {
		return err
	}
	defer e.end()
	g := e.g
	if err := g.write(payload); err != nil {
		return err
	}
	if e.fastOn() {
		if ran, err := e.deliverFast(inst, handler, len(payload)); ran {
			return err
		}
	}
	g.stack[0], g.stack[1], g.stack[2] = uint64(uint32(inst)), uint64(uint32(int32(handler))), uint64(len(payload))
	return g.callBatched(e, g.deliver)
}

// manyDeliveries is the most deliveries, and maxManyBytes about the
// most payload bytes, that DeliverMany hands the guest in one call.
const (
	manyDeliveries = 64
	maxManyBytes   = 16 << 10
)

// DeliverMany runs ds in order in one call of the guest, as Deliver
// would one by one, and returns how many ran to their end: all of them,
// or fewer when a handler crossed hale.prim for anything but a batched
// publish (the caller looks whether the run stopped before it goes on),
// or when ds[ran] failed with err. Only for a guest that batches
// publishes (manyDeliverer).
func (e *wasmEngine) DeliverMany(ds []Delivery) (ran int, err error) {
	if err := e.begin(); err != nil {
		return 0, err
	}
	defer e.end()
	g := e.g
	if e.fastOn() {
		// The deliveries compiled handlers run, up to the first they do
		// not: the consumer hands over the rest again. A run of
		// deliveries to one instance and topic goes to the handler's
		// run export, in one call; a delivery on its own, to the
		// handler's.
		for ran < len(ds) {
			d := ds[ran]
			if end := sameRun(ds[ran:]); end > 1 {
				k, err := e.deliverRun(ds[ran : ran+end])
				ran += k
				if err != nil {
					return ran, err
				}
				if k < end {
					break
				}
				continue
			}
			if err := g.write(d.Payload); err != nil {
				return ran, err
			}
			ok, err := e.deliverFast(d.Target, d.Topic, len(d.Payload))
			if !ok {
				break
			}
			if err != nil {
				return ran, err
			}
			ran++
		}
		if ran > 0 {
			return ran, nil
		}
	}
	list := g.list[:0]
	for _, d := range ds {
		list = abi.AppendDelivery(list, d.Target, d.Topic, d.Payload)
	}
	g.list = list
	if err := g.write(list); err != nil {
		return 0, err
	}
	g.stack[0] = uint64(len(list))
	g.out = nil
	if cerr := g.deliverMany.CallWithStack(g.ctx, g.stack[:]); cerr != nil {
		err = g.crashed(cerr)
		if n, ok := g.mem.ReadUint32Le(g.box + 8); ok && !g.mod.IsClosed() {
			ran = int(n)
		}
	} else if r := int32(uint32(g.stack[0])); r < 0 {
		err = g.failure(-r)
		n, _ := g.mem.ReadUint32Le(g.box + 8)
		ran = int(n)
	} else {
		ran = int(r)
	}
	if err = g.publishLeft(e, err); err != nil {
		// A publish's error after the last handler ended (an
		// interrupt) is the last delivery's.
		return min(max(ran, 0), len(ds)-1), err
	}
	if ran <= 0 || ran > len(ds) {
		return 0, fmt.Errorf("wasm engine: delivermany ran %d of %d deliveries", ran, len(ds))
	}
	return ran, nil
}

// DeliverQuietRun runs ds, a run of deliveries to one instance and
// topic (sameRun), in one call of its handler's run export when that
// handler is compiled whole and publishes nothing, and returns how many
// ran to their end: 0 when it has no such handler or handed ds[0] back,
// fewer than len(ds) when it handed ds[ran] back (it wrote nothing of
// it). A compiled handler hands back every delivery that would cross
// the gateway, trap, poll or measure, so the deliveries that ran made
// no call of the host at all: a journal may stamp them after the call
// (LateJournal, consumer.loopTaken). An error is one of the guest's
// memory before ds[ran] began: the caller runs ds[ran] again the usual
// way.
func (e *wasmEngine) DeliverQuietRun(ds []Delivery) (ran int, err error) {
	if len(ds) < 2 {
		return 0, nil
	}
	if err := e.begin(); err != nil {
		return 0, err
	}
	defer e.end()
	if !e.fastOn() {
		return 0, nil
	}
	if th, _ := e.fastHandler(ds[0].Target, ds[0].Topic); th == nil || th.h.Publishes {
		return 0, nil
	}
	return e.deliverRun(ds)
}

// quietRunner is an engine that may run a run of deliveries whose
// handlers call nothing in one call (the wasm engine).
type quietRunner interface {
	DeliverQuietRun(ds []Delivery) (int, error)
}

// sameRun returns the length of the run of deliveries at the start of ds
// to one instance and topic.
func sameRun(ds []Delivery) int {
	n := 1
	for n < len(ds) && ds[n].Target == ds[0].Target && ds[n].Topic == ds[0].Topic {
		n++
	}
	return n
}

// manyDeliverer is an engine that runs several deliveries in one call
// (the wasm engine when its guest batches publishes).
type manyDeliverer interface {
	DeliverMany(ds []Delivery) (int, error)
	deliversMany() bool
}

func (e *wasmEngine) deliversMany() bool { return e.g.deliverMany != nil }

// callBatched calls an export that runs Hale code for e (init,
// deliver), then hands the publishes left in the guest's batch, if any,
// to e's host, in order, before the export's own result: an error of a
// publish (an interrupt) comes first in the run's order, so it is the
// one returned. A guest that crashed is read only if its memory is
// still there, so that the publishes before the crash are not lost.
func (g *wasmGuest) callBatched(e *wasmEngine, fn api.Function) error {
	return g.publishLeft(e, g.call(fn))
}

// publishLeft publishes what the guest's batch holds after an export
// that ended with err (callBatched).
func (g *wasmGuest) publishLeft(e *wasmEngine, err error) error {
	if g.box == 0 || g.closed || g.mod.IsClosed() {
		return err
	}
	n, ok := g.mem.ReadUint32Le(g.box + 4)
	if !ok || n == 0 {
		return err
	}
	at, _ := g.mem.ReadUint32Le(g.box)
	view, ok := g.mem.Read(at, n)
	if !ok {
		return errors.New("wasm engine: publish batch out of range")
	}
	if perr := publishBatch(e.host, view); perr != nil {
		return perr
	}
	return err
}

func (e *wasmEngine) State(inst int) ([]byte, error) {
	return e.instanceBytes(inst, e.g.state)
}

func (e *wasmEngine) Params(inst int) ([]byte, error) {
	return e.instanceBytes(inst, e.g.params)
}

// instanceBytes calls fn (state, params) for inst and returns its output.
func (e *wasmEngine) instanceBytes(inst int, fn api.Function) ([]byte, error) {
	if err := e.begin(); err != nil {
		return nil, err
	}
	defer e.end()
	e.g.stack[0] = uint64(uint32(inst))
	if err := e.g.call(fn); err != nil {
		return nil, err
	}
	return e.g.out, nil // a fresh copy: valid after the guest moves on
}

func (e *wasmEngine) SetGuardParams(table [][]byte) error {
	if err := e.begin(); err != nil {
		return err
	}
	defer e.end()
	g := e.g
	b := abi.EncodeParamTable(table)
	if err := g.write(b); err != nil {
		return err
	}
	g.stack[0] = uint64(len(b))
	return g.call(g.setParams)
}

// SetBreaks arms a debugger's breaks in the guest (vm.Machine.SetBreaks).
func (e *wasmEngine) SetBreaks(spec []byte) error {
	if err := e.begin(); err != nil {
		return err
	}
	defer e.end()
	g := e.g
	if len(spec) > 0 {
		e.breaksSet, e.fastMode = true, 2 // no compiled handlers under a debugger
	}
	if err := g.write(spec); err != nil {
		return err
	}
	g.stack[0] = uint64(len(spec))
	return g.call(g.breaks)
}

func (e *wasmEngine) Guards(topic int, payload []byte) ([]byte, error) {
	if err := e.begin(); err != nil {
		return nil, err
	}
	defer e.end()
	g := e.g
	if err := g.write(payload); err != nil {
		return nil, err
	}
	g.stack[0], g.stack[1] = uint64(uint32(topic)), uint64(len(payload))
	if err := g.call(g.guards); err != nil {
		return nil, err
	}
	if len(g.out) == 0 {
		return nil, errors.New("wasm engine: guards: no result")
	}
	return g.out[1:], nil
}

// Close releases the engine; the last engine of a guest closes the guest.
func (e *wasmEngine) Close() error {
	g := e.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	e.owned.close(g.ctx)
	if g.users--; g.users > 0 || g.closed {
		return nil
	}
	g.closed = true
	g.tier.close(g.ctx)
	return g.mod.Close(g.ctx)
}

var errEngineClosed = errors.New("wasm engine: the engine is closed")

// write copies b into the guest's input buffer, growing it first if
// needed.
func (g *wasmGuest) write(b []byte) error {
	if g.closed {
		return errEngineClosed
	}
	if uint64(len(b)) > uint64(g.inCap) {
		if len(b) > 1<<31 {
			return errors.New("wasm engine: input too large")
		}
		g.stack[0] = uint64(len(b))
		if err := g.alloc.CallWithStack(g.ctx, g.stack[:]); err != nil {
			return g.crashed(err)
		}
		g.inPtr, g.inCap = uint32(g.stack[0]), uint32(len(b))
	}
	if len(b) > 0 && !g.mem.Write(g.inPtr, b) {
		return errors.New("wasm engine: input buffer out of range")
	}
	return nil
}

// call runs an export whose parameters are in g.stack and interprets its
// int32 result: 0 success, n > 0 success with n bytes of output (left in
// g.out), n < 0 a failure of -n encoded bytes.
func (g *wasmGuest) call(fn api.Function) error {
	if g.closed {
		return errEngineClosed
	}
	g.out = nil
	if err := fn.CallWithStack(g.ctx, g.stack[:]); err != nil {
		return g.crashed(err)
	}
	r := int32(uint32(g.stack[0]))
	if r == 0 {
		return nil
	}
	if r < 0 {
		return g.failure(-r)
	}
	b, err := g.output(r)
	if err != nil {
		return err
	}
	g.out = b
	return nil
}

// output copies the n bytes of the last call's output.
func (g *wasmGuest) output(n int32) ([]byte, error) {
	if err := g.result.CallWithStack(g.ctx, g.stack[:]); err != nil {
		return nil, g.crashed(err)
	}
	view, ok := g.mem.Read(uint32(g.stack[0]), uint32(n))
	if !ok {
		return nil, errors.New("wasm engine: result out of range")
	}
	return append([]byte(nil), view...), nil // the view goes stale when the guest grows its memory
}

// failure decodes the n bytes of the last call's failure.
func (g *wasmGuest) failure(n int32) error {
	b, err := g.output(n)
	if err != nil {
		return err
	}
	return abi.DecodeFailure(b)
}

// crashed describes a guest that stopped (a Go runtime fatal error, an
// exit, a wasm trap): the module cannot be used again.
func (g *wasmGuest) crashed(err error) error {
	tail := g.stderr.String()
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
// in ctx, with the host of the engine whose call runs (see package
// vm/guest/abi for the protocol).
func primImport(ctx context.Context, mod api.Module, stack []uint64) {
	id, argsPtr, argsLen, resPtr, resCap := uint32(stack[0]), uint32(stack[1]), uint32(stack[2]), uint32(stack[3]), uint32(stack[4])
	g, _ := ctx.Value(engineKey{}).(*wasmGuest)
	if g == nil || g.cur == nil {
		stack[0] = abi.Status(abi.Bad, 0)
		return
	}
	mem := mod.Memory()
	var kind uint32
	var res []byte
	if id == abi.FetchID {
		if !g.hasPending {
			res, kind = []byte("fetch with no pending result"), abi.Bad
		} else {
			res, kind = g.pending, g.pendingKind
			g.pending, g.hasPending = nil, false
		}
	} else if args, ok := mem.Read(argsPtr, argsLen); ok && id == abi.BatchID {
		// Publishes the guest batched, before its next call.
		res, kind = primAnswer(nil, publishBatch(g.cur.host, args))
	} else if ok && id == abi.TierID && g.tier != nil {
		// An error is the poll's that interrupted the call: the guest
		// sees it as it would from a poll of its own.
		out, err := g.tier.call(args)
		res, kind = primAnswer(out, err)
	} else if !ok || id > 0xFFFF {
		res, kind = []byte("bad primitive call"), abi.Bad
	} else {
		// args is a view of guest memory, valid during this call: the
		// host copies what it keeps.
		out, err := g.cur.host.Prim(uint16(id), args)
		res, kind = primAnswer(out, err)
	}
	if uint64(len(res)) > uint64(resCap) {
		if id != abi.FetchID {
			g.pending, g.pendingKind, g.hasPending = res, kind, true
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

// primAnswer is what the guest is told of a call through hale.prim (a
// primitive or a tier call) that returned out and err: the bytes and the
// kind of its status word.
func primAnswer(out []byte, err error) ([]byte, uint32) {
	switch {
	case errors.Is(err, vm.ErrInterrupted):
		return []byte(err.Error()), abi.Interrupted
	case errors.Is(err, vm.ErrUncatchable):
		return []byte(err.Error()), abi.Uncatchable
	case err != nil:
		return abi.AppendTrapMessage(nil, err), abi.Trap
	}
	return out, abi.OK
}
