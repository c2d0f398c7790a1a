package host

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
)

// This file is the stepping API of the deterministic scheduler (package
// explore): a run whose consumers have no goroutines of their own. The
// caller starts it, looks at every consumer's pending deliveries and
// chooses which one runs next; the handler runs to completion on the
// caller's goroutine. Everything else — identities, publishing and
// routing, the gateway, the Journal, traps, exit and quiescence — is the
// ordinary runtime's, so a stepped run differs from a live one only in
// who picks the next delivery and when.

// Program is a program image prepared once for many runs: the wasm
// engine's encoded image and compiled second tier are shared by every
// Stepper made from it, so that a run costs the guests' instantiation
// and no compilation.
type Program struct {
	img  *image.Image
	kind EngineKind
	wasm *wasmProgram

	mu   sync.Mutex
	idle []*pooledEngine // wasm engines of finished runs, to be reloaded
}

// pooledEngine is a wasm engine a Program lends to one run at a time. Its
// guest calls the gateway through proxy, which is pointed at the
// borrowing run's consumer; Close gives it back.
type pooledEngine struct {
	*wasmEngine
	proxy  *hostProxy
	owner  *Program
	broken bool // a call failed other than by a trap: do not lend it again
}

type hostProxy struct{ h vm.Host }

func (p *hostProxy) Prim(id uint16, args []byte) ([]byte, error) { return p.h.Prim(id, args) }

func (e *pooledEngine) Init(inst int) error { return e.check(e.wasmEngine.Init(inst)) }

func (e *pooledEngine) Deliver(inst, handler int, payload []byte) error {
	return e.check(e.wasmEngine.Deliver(inst, handler, payload))
}

func (e *pooledEngine) check(err error) error {
	var t *vm.Trap
	if err != nil && !errors.As(err, &t) {
		e.broken = true
	}
	return err
}

// Close returns the engine to its program, or closes it when it failed.
func (e *pooledEngine) Close() error {
	if e.broken {
		return e.wasmEngine.Close()
	}
	e.proxy.h = nil
	e.owner.mu.Lock()
	e.owner.idle = append(e.owner.idle, e)
	e.owner.mu.Unlock()
	return nil
}

// engine lends a wasm engine serving host: an idle one reloaded, or a
// new one.
func (p *Program) engine(ctx context.Context, host vm.Host, memLimit int64) (Engine, error) {
	p.mu.Lock()
	var e *pooledEngine
	if n := len(p.idle); n > 0 {
		e, p.idle = p.idle[n-1], p.idle[:n-1]
	}
	p.mu.Unlock()
	if e != nil && e.memLimit == memLimit {
		e.proxy.h = host
		if err := e.reload(); err == nil {
			return e, nil
		}
		e.wasmEngine.Close()
	} else if e != nil {
		e.wasmEngine.Close()
	}
	w, err := defaultWasm()
	if err != nil {
		return nil, err
	}
	proxy := &hostProxy{h: host}
	we, err := w.newEngine(ctx, p.wasm, proxy, memLimit)
	if err != nil {
		return nil, err
	}
	return &pooledEngine{wasmEngine: we.(*wasmEngine), proxy: proxy, owner: p}, nil
}

// PrepareProgram prepares img for runs on the given engine.
func PrepareProgram(ctx context.Context, kind EngineKind, img *image.Image) (*Program, error) {
	if img == nil {
		return nil, errors.New("run: no program")
	}
	if err := checkTopology(img); err != nil {
		return nil, err
	}
	p := &Program{img: img, kind: kind}
	if kind == EngineWasm {
		w, err := defaultWasm()
		if err != nil {
			return nil, err
		}
		if p.wasm, err = w.prepare(ctx, img); err != nil {
			return nil, fmt.Errorf("run: %w", err)
		}
	}
	return p, nil
}

// Image returns the program's image.
func (p *Program) Image() *image.Image { return p.img }

// Close releases what the program holds (its idle engines and compiled
// tier). No run of it may be going on.
func (p *Program) Close() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, e := range idle {
		e.wasmEngine.Close()
	}
	p.wasm.close(context.Background())
	p.wasm = nil
}

// A Program lends its wasm engines to one Stepper at a time and takes
// them back when the Stepper finishes; the next Stepper reloads the
// program into them, which resets every instance as a new guest would.

// Stepper is one run driven a delivery at a time by its caller, on the
// caller's goroutine. Options.Order is ignored (the caller is the order);
// Options.Stdin and Options.Input are ignored too: the caller publishes
// ingress lines with Input.
type Stepper struct {
	r        *runner
	finished bool
	res      Result
}

// NewStepper makes the engines of a run of p (one per consumer that
// hosts instances), with opts.Engine replaced by the program's engine.
func NewStepper(ctx context.Context, p *Program, opts Options) (*Stepper, error) {
	opts.Engine = p.kind
	opts.Order = nil
	opts.stepping = true
	opts.prepared = p.wasm
	if p.kind == EngineWasm {
		memLimit := opts.MemoryLimit
		if memLimit <= 0 {
			memLimit = vm.DefaultMemoryLimit
		}
		opts.engine = func(h vm.Host) (Engine, error) { return p.engine(ctx, h, memLimit) }
	}
	r, err := newRunner(ctx, p.img, opts)
	if err != nil {
		return nil, err
	}
	return &Stepper{r: r}, nil
}

// Start initialises every instance in main order and queues the start
// deliveries, as Run does. It reports false when the run already ended
// (an initialiser trapped, failed or exited): call Finish.
func (s *Stepper) Start() bool {
	if !s.r.startUp() {
		return false
	}
	s.r.running.Store(true)
	if s.r.outstanding.Load() == 0 {
		s.r.quiesce()
	}
	return !s.r.stopped.Load()
}

// Input publishes lines on every ingress binding, in binding order (all
// of the program's standard input at once), and closes the input. Call it
// once, after Start, even with no lines when the program binds stdin.
func (s *Stepper) Input(lines []string) {
	r := s.r
	if len(r.stdin) == 0 {
		return
	}
	for _, line := range lines {
		if r.stopped.Load() {
			break
		}
		payload := linePayload(line)
		for _, c := range r.stdin {
			// As readInput: a binding whose topic has guards evaluates them.
			var bits []byte
			if c.engine != nil {
				var err error
				if bits, err = c.engine.Guards(c.topic, payload); err != nil {
					c.failedGuard(err)
					break
				}
			}
			_ = r.publish(c, c.topic, payload, bits) // a stepped run has no bus: nothing is sent
		}
	}
	r.release(1) // the open input
}

// Stopped reports whether the run has ended (quiescent, exit, trap,
// halted or canceled): no more steps.
func (s *Stepper) Stopped() bool { return s.r.stopped.Load() }

// Executors returns the ids of the consumers that handle deliveries, in
// id order.
func (s *Stepper) Executors() []int {
	ids := make([]int, len(s.r.execs))
	for i, c := range s.r.execs {
		ids[i] = c.id
	}
	return ids
}

// Pending returns consumer c's pending deliveries in arrival order. The
// slice is valid until the next Step and must not be modified.
func (s *Stepper) Pending(c int) []Delivery {
	k := s.r.consumers[c]
	return k.queue[k.head:]
}

// Handled returns the number of deliveries consumer c has handled: the N
// of its next delivery's coordinate.
func (s *Stepper) Handled(c int) int { return s.r.consumers[c].handled }

// Step runs consumer c's pending delivery pick (an index into Pending(c))
// to completion. A trap, an exit or quiescence ends the run (Stopped);
// an interruption of the handler by the Journal (an error wrapping
// ErrInterrupt or vm.ErrInterrupted from Invoke or Poll) halts it, with
// that error as Result.Halt.
func (s *Stepper) Step(c, pick int) error {
	r := s.r
	if r.stopped.Load() {
		return errors.New("step: the run has ended")
	}
	if c < 0 || c >= len(r.consumers) || r.consumers[c].engine == nil {
		return fmt.Errorf("step: consumer %d handles no deliveries", c)
	}
	k := r.consumers[c]
	if pick < 0 || pick >= len(k.queue)-k.head {
		return fmt.Errorf("step: consumer %d: pick %d of %d pending deliveries", c, pick, len(k.queue)-k.head)
	}
	k.mu.Lock()
	d := k.remove(pick)
	k.mu.Unlock()
	n := k.handled
	if j := r.journal; j != nil {
		if err := j.Deliver(c, n, &d, k.engine); err != nil {
			r.stop(VerdictHalted, 0, nil, err, nil)
			return nil
		}
	}
	k.handled++
	if err := k.engine.Deliver(d.Target, d.Topic, d.Payload); err != nil {
		if k.cut {
			k.cut = false
			r.stop(VerdictHalted, 0, nil, err, nil)
			return nil
		}
		k.failed(n, &d, d.Target, err)
		return nil
	}
	r.release(1)
	return nil
}

// SetBreaks arms a debugger's breaks in consumer c's engine: spec is an
// encoded vm.BreakSpec (empty: none). They stay armed across deliveries
// until replaced, here or by an answer of Options.Debug.
func (s *Stepper) SetBreaks(c int, spec []byte) error {
	if c < 0 || c >= len(s.r.consumers) || s.r.consumers[c].engine == nil {
		return fmt.Errorf("breaks: consumer %d handles no deliveries", c)
	}
	b, ok := s.r.consumers[c].engine.(breakSetter)
	if !ok {
		return errors.New("breaks: the engine cannot stop")
	}
	return b.SetBreaks(spec)
}

// Flush writes out what the program printed so far (a debugger flushes
// at each stop).
func (s *Stepper) Flush() { s.r.out.flush() }

// InstanceState returns the canonical state tuple of instance inst, read
// from the engine of the consumer hosting it. That consumer must not be
// in the middle of a delivery.
func (s *Stepper) InstanceState(inst int) ([]byte, error) {
	img := s.r.img
	if inst < 0 || inst >= len(img.Instances) {
		return nil, fmt.Errorf("no instance %d", inst)
	}
	c := img.Instances[inst].Consumer
	if c < 0 || c >= len(s.r.consumers) || s.r.consumers[c].engine == nil {
		return nil, fmt.Errorf("instance %s has no engine", img.Instances[inst].Name)
	}
	return s.r.consumers[c].engine.State(inst)
}

// Finish ends the run (if it has not ended, as halted), flushes the
// output, writes the trap report, calls the Journal's End, releases the
// engines and returns how the run ended. It may be called more than once.
func (s *Stepper) Finish() (Result, error) {
	if s.finished {
		return s.res, s.r.end.err
	}
	s.finished = true
	r := s.r
	if !r.stopped.Load() {
		r.stop(VerdictHalted, 0, nil, errors.New("stopped by the scheduler"), nil)
	}
	defer r.closeEngines()
	var err error
	s.res, err = r.finish()
	return s.res, err
}
