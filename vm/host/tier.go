package host

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/internal/tier"
)

// disableTier turns the second tier off (benchmarks of the interpreter
// alone).
var disableTier bool

// tierAnswered counts the tier calls answered in the process, for tests.
var tierAnswered atomic.Int64

// wasmProgram is a program ready for wasm engines: its encoded image and
// its second tier (package vm/internal/tier), compiled once and shared by
// the engines of a run.
type wasmProgram struct {
	image []byte
	plan  *tier.Plan
	tier  wazero.CompiledModule // nil: no tier
	img   *image.Image
	// handlers[locus][topic] is 1 + the index in plan.Handlers of the
	// topic's handler compiled whole, or 0 (tierhandler.go).
	handlers [][]int32
}

// prepare encodes img and compiles its tier. A tier that fails to compile
// is a bug, but not one worth stopping a program for: the interpreter runs
// every function without it.
func (w *wasmRuntime) prepare(ctx context.Context, img *image.Image) (*wasmProgram, error) {
	data, err := img.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("encoding the program image: %w", err)
	}
	p := &wasmProgram{image: data, img: img}
	if disableTier {
		return p, nil
	}
	p.plan = tier.NewPlan(img)
	tier.PlanHandlers(img, p.plan)
	p.handlers = handlerTable(p)
	p.tier = w.compileTier(ctx, img, p.plan)
	if p.tier == nil && len(p.plan.Handlers) > 0 {
		// Without the handlers compiled whole, the rest of the tier
		// still serves the guest.
		p.plan.Handlers, p.handlers = nil, nil
		p.tier = w.compileTier(ctx, img, p.plan)
	}
	return p, nil
}

// compileTier compiles plan's module, or returns nil.
func (w *wasmRuntime) compileTier(ctx context.Context, img *image.Image, plan *tier.Plan) wazero.CompiledModule {
	mod, err := tier.Compile(img, plan)
	if err != nil || mod == nil {
		return nil
	}
	c, err := w.rt.CompileModule(ctx, mod)
	if err != nil {
		return nil
	}
	return c
}

// close releases the compiled tier.
func (p *wasmProgram) close(ctx context.Context) {
	if p != nil && p.tier != nil {
		p.tier.Close(ctx)
		p.tier = nil
	}
}

// tierKey is the context key under which refillImport finds the running
// tier call.
type tierKey struct{}

// tierInstance is one engine's instance of the tier module; it serves the
// guest's tier calls (abi.TierID) one at a time.
type tierInstance struct {
	mod                       api.Module
	plan                      *tier.Plan
	funcs                     []api.Function // by function index; nil if not an entry
	regions                   []api.Function // by region (tier.Plan.Regions)
	fuel, depth, height, stop api.MutableGlobal
	log, logEnd, commit       api.MutableGlobal
	givenG, logBase           api.MutableGlobal // tier.GlobalGiven, tier.GlobalLogBase
	alloc                     api.MutableGlobal // tier.GlobalAlloc
	guest                     api.Memory        // the interpreter guest's, where the undo log is
	allocs                    bool              // some compiled function allocates: calls must give the allocation block
	ctx                       context.Context
	poll                      func() ([]byte, error) // the host's answer: breaks to arm, or nothing
	stack                     []uint64
	answer                    []byte

	// The running call: the steps it may take, the fuel handed out so
	// far, the error that interrupted it, and the breaks a debugger
	// asked for at a poll (the call then stops, and the guest arms them).
	budget, given int64
	err           error
	breaks        []byte

	// done and fellBack count the calls answered and handed back.
	done, fellBack int

	// handlers are the handlers compiled whole (tierhandler.go), by
	// plan.Handlers' index; hstack their calls' parameters.
	handlers []tierHandler
	hstack   []uint64
	mstack   []uint64 // a run export's parameters (deliverRun)
	// handlerSet: the stop, log, log_end, log_base and commit globals
	// hold what callHandler gives a compiled handler (callHandler).
	handlerSet bool
}

// newTierInstance instantiates the tier for the engine whose guest is
// guest: compiled code that reads lists and structs imports the guest's
// memory (and nothing else of it).
func (w *wasmRuntime) newTierInstance(ctx context.Context, p *wasmProgram, guest api.Module, poll func() ([]byte, error)) (*tierInstance, error) {
	resolve := experimental.WithImportResolver(ctx, func(name string) api.Module {
		if name == tier.GuestModule {
			return guest
		}
		return nil
	})
	mod, err := w.rt.InstantiateModule(resolve, p.tier, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		return nil, fmt.Errorf("wasm engine: instantiating the tier: %w", err)
	}
	t := &tierInstance{mod: mod, plan: p.plan, poll: poll, funcs: make([]api.Function, len(p.plan.Entry)),
		allocs: slices.Contains(p.plan.Allocs, true)}
	if guest != nil {
		t.guest = guest.Memory()
	}
	t.ctx = context.WithValue(context.Background(), tierKey{}, t)
	width := 1
	for f, entry := range p.plan.Entry {
		if entry {
			if t.funcs[f] = mod.ExportedFunction(tier.Export(f)); t.funcs[f] == nil {
				mod.Close(ctx)
				return nil, fmt.Errorf("wasm engine: the tier does not export %s", tier.Export(f))
			}
			width = max(width, len(p.plan.Params[f]))
		}
	}
	t.regions = make([]api.Function, len(p.plan.Regions))
	for i := range p.plan.Regions {
		if t.regions[i] = mod.ExportedFunction(tier.RegionExport(i)); t.regions[i] == nil {
			mod.Close(ctx)
			return nil, fmt.Errorf("wasm engine: the tier does not export %s", tier.RegionExport(i))
		}
		width = max(width, 2)
	}
	if !t.newTierHandlers(p) {
		mod.Close(ctx)
		return nil, fmt.Errorf("wasm engine: the tier does not export its handlers")
	}
	t.stack = make([]uint64, width)
	for _, g := range []struct {
		v    *api.MutableGlobal
		name string
	}{{&t.fuel, tier.GlobalFuel}, {&t.depth, tier.GlobalDepth}, {&t.height, tier.GlobalHeight}, {&t.stop, tier.GlobalStop},
		{&t.log, tier.GlobalLog}, {&t.logEnd, tier.GlobalLogEnd}, {&t.commit, tier.GlobalCommit},
		{&t.givenG, tier.GlobalGiven}, {&t.logBase, tier.GlobalLogBase}, {&t.alloc, tier.GlobalAlloc}} {
		mg, ok := mod.ExportedGlobal(g.name).(api.MutableGlobal)
		if !ok {
			mod.Close(ctx)
			return nil, fmt.Errorf("wasm engine: the tier does not export global %s", g.name)
		}
		*g.v = mg
	}
	return t, nil
}

var (
	errTierCall = errors.New("bad tier call")
	errTierUndo = errors.New("tier: undo log outside the guest's memory")
)

// undo writes back what the undo log from logAt to the log global
// recorded, last entry first (see tier.GlobalLog).
func (t *tierInstance) undo(logAt uint64) bool {
	end := t.log.Get()
	if end > math.MaxUint32 || end < logAt || (t.guest == nil && end != logAt) {
		return false
	}
	for at := uint32(end); at >= uint32(logAt)+16; at -= 16 {
		addr, ok1 := t.guest.ReadUint64Le(at - 16)
		old, ok2 := t.guest.ReadUint64Le(at - 8)
		if !ok1 || !ok2 || addr > math.MaxUint32 || !t.guest.WriteUint64Le(uint32(addr), old) {
			return false
		}
	}
	return true
}

// call serves one tier call (see vm.EnableTier for args); a non-nil error
// is the interruption that stopped it.
func (t *tierInstance) call(args []byte) ([]byte, error) {
	d := args
	next := func() uint64 {
		v, n := binary.Uvarint(d)
		if n <= 0 {
			d = nil
			return math.MaxUint64
		}
		d = d[n:]
		return v
	}
	fn, budget, depth, height := next(), next(), next(), next()
	logAt, logLen, alloc := next(), next(), next()
	if budget > math.MaxInt64 || depth > math.MaxInt32 || height > math.MaxInt32 ||
		logAt > math.MaxUint32 || logLen > math.MaxUint32 || logLen%16 != 0 || alloc > math.MaxUint32 ||
		t.allocs && (alloc == 0 || alloc%8 != 0) {
		return nil, errTierCall
	}
	// A function (its parameters follow), or a region (fn past the
	// functions; the addresses of the frame's registers and of the out
	// buffer follow).
	var f api.Function
	nparams := 0
	switch {
	case fn < uint64(len(t.funcs)) && t.funcs[fn] != nil:
		f, nparams = t.funcs[fn], len(t.plan.Params[fn])
	case fn >= uint64(len(t.funcs)) && fn-uint64(len(t.funcs)) < uint64(len(t.regions)):
		f, nparams = t.regions[fn-uint64(len(t.funcs))], 2
	default:
		return nil, errTierCall
	}
	if len(d) != 8*nparams {
		return nil, errTierCall
	}
	for i := range nparams {
		t.stack[i] = binary.LittleEndian.Uint64(d[8*i:])
	}
	t.budget, t.err, t.breaks = int64(budget), nil, t.breaks[:0]
	t.handlerSet = false
	t.given = min(t.budget, vm.PollSteps)
	t.fuel.Set(uint64(t.given))
	t.givenG.Set(uint64(t.given))
	// Compiled code stops where the interpreter's frames would reach
	// vm.MaxDepth: it counts from the frames already active.
	t.depth.Set(depth)
	t.height.Set(height)
	t.stop.Set(0)
	t.alloc.Set(alloc)
	// An empty log (logLen 0) stops the first write: log > logEnd.
	t.log.Set(logAt)
	t.logBase.Set(logAt)
	t.logEnd.Set(logAt + logLen - 16)
	// A region commits at a loop header once its log is past half
	// full (or the host has refilled its fuel: refill sets commit to 0).
	t.commit.Set(logAt + logLen/32*16)
	if logLen == 0 {
		t.logEnd.Set(0)
		t.log.Set(1)
		t.logBase.Set(1)
		t.commit.Set(0)
	}
	err := f.CallWithStack(t.ctx, t.stack)
	if t.err != nil {
		return nil, t.err
	}
	if err != nil || t.stop.Get() != 0 {
		// Compiled code stopped where the interpreter may trap (or
		// wazero's stack ran out): its writes are undone and the
		// interpreter runs the call.
		t.fellBack++
		full := logLen > 0 && t.log.Get() > t.logEnd.Get()
		if logLen > 0 && !t.undo(logAt) {
			return nil, errTierUndo
		}
		a := append(t.answer[:0], vm.TierFallback)
		switch {
		case len(t.breaks) > 0:
			a = append(a, vm.TierBreaks)
			a = append(a, t.breaks...)
		case full:
			a = append(a, vm.TierLogFull)
		case err == nil && t.stop.Get() == tier.StopAlloc:
			// With the steps the call took before it was handed back.
			a = append(a, vm.TierMeasure)
			a = binary.AppendUvarint(a, uint64(max(t.given-int64(t.fuel.Get()), 0)))
		}
		t.answer = a
		return a, nil
	}
	t.done++
	tierAnswered.Add(1)
	used := t.given - int64(t.fuel.Get())
	a := append(t.answer[:0], vm.TierDone)
	a = binary.LittleEndian.AppendUint64(a, t.stack[0])
	a = binary.AppendUvarint(a, uint64(used))
	if logLen > 0 && t.log.Get() > logAt+logLen/32*16 {
		// A region committed with its log past half full: a larger
		// log would have it commit less often.
		a = append(a, vm.TierLogFull)
	}
	t.answer = a
	return a, nil
}

// refill hands out more fuel to compiled code whose fuel went down to f
// (< 0): it polls the host, as the interpreter does between slices of
// vm.PollSteps steps, and answers the new fuel, or -1 to stop the call
// when the budget is used up (the interpreter will trap at the exact
// step) or the run was interrupted (t.err).
func (t *tierInstance) refill(f int64) int64 {
	if t.given-f > t.budget {
		return -1
	}
	spec, err := t.poll()
	if err != nil {
		t.err = err
		return -1
	}
	if len(spec) > 0 {
		// A debugger pausing the run: the call stops (undone), and the
		// guest arms the breaks and interprets.
		t.breaks = append(t.breaks[:0], spec...)
		return -1
	}
	t.commit.Set(0)
	for f < 0 {
		more := min(t.budget-t.given, vm.PollSteps)
		if more <= 0 {
			return -1
		}
		t.given += more
		f += more
	}
	t.givenG.Set(uint64(t.given))
	return f
}

// refillImport is hale_tier.refill, called by compiled code.
func refillImport(ctx context.Context, _ api.Module, stack []uint64) {
	t, _ := ctx.Value(tierKey{}).(*tierInstance)
	if t == nil {
		stack[0] = math.MaxUint64 // -1
		return
	}
	stack[0] = uint64(t.refill(int64(stack[0])))
}

func (t *tierInstance) close(ctx context.Context) {
	if t != nil {
		t.mod.Close(ctx)
	}
}
