package host

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

// Options configures a run. The zero value runs on the wasm engine with
// no input, discards the output, and gives the program the process's
// environment, working folder, clock and entropy.
type Options struct {
	// Engine selects the interpreter engine (default EngineWasm).
	Engine EngineKind

	// Stdin is the program's standard input, read line by line by
	// `bind stdin` bindings. nil is empty input.
	Stdin io.Reader
	// Input, when set, replaces Stdin as the source of ingress lines
	// (replay injects the recorded ones).
	Input Input
	// Stdout receives print and std::io::println, Stderr
	// std::io::eprintln and the trap report. nil discards.
	Stdout, Stderr io.Writer

	// Args are the program's arguments (std::os::args).
	Args []string
	// LookupEnv reads an environment variable (std::os::env); nil reads
	// the process's environment.
	LookupEnv func(name string) (string, bool)
	// Dir is the folder that relative std::fs paths are relative to; ""
	// is the process's working folder.
	Dir string
	// Clock is the time source of std::time; nil is the system clock.
	Clock Clock
	// Entropy is the source of std::os::getrandom and the seed of each
	// consumer's std::rand generator; nil is crypto/rand.
	Entropy io.Reader
	// HTTPClient performs std::http calls; nil is a client with a 30 s
	// timeout that follows up to 10 redirects.
	HTTPClient *http.Client

	// Journal, when set, sees every replayable event and decides what
	// each primitive call returns (see Journal). nil: calls go live.
	Journal Journal
	// Order, when set, picks each consumer's next delivery (see Order).
	// nil: arrival order.
	Order Order
	// Timers, when set, makes the queue that holds the run's timers
	// (`publish T {…} after ms;`) until they are due: ImmediateTimers
	// skips every delay (replay), a virtual clock brings its own. nil:
	// realTimerQueue, on the process's monotonic clock.
	Timers TimerQueueMaker

	// Bus carries the program's nats bindings and exports (bus.go); a
	// program that has some needs one. ProcessID is the run's process id,
	// the first part of the Nats-Msg-Id of every message it sends.
	Bus       Bus
	ProcessID uint64

	// MemoryLimit bounds the data of each consumer, in bytes, as the
	// interpreter counts it (vm.Machine.SetMemoryLimit): a handler that
	// outgrows it traps with "out of memory". 0 is vm.DefaultMemoryLimit.
	// A recording keeps it, and a replay runs with the recorded one.
	MemoryLimit int64

	// Debug, when set, serves a debugger's breaks (vm.PrimBreak): it is
	// called on the consumer's goroutine with the consumer's id and the
	// encoded vm.BreakInfo, blocks while the user looks, and returns the
	// breaks to arm next (an encoded vm.BreakSpec, nil to keep them) or
	// an error, which ends the handler run as an interruption does.
	Debug func(consumer int, info []byte) ([]byte, error)
	// DebugPoll, when set, is called at each poll of a long handler run
	// (vm.PrimPoll) on the consumer's goroutine: a non-nil answer is a
	// break spec the machine arms at once (a debugger pausing a handler
	// that runs without breaks).
	DebugPoll func(consumer int) []byte

	// engine, when set (tests), makes the engines instead of Engine.
	engine func(host vm.Host) (Engine, error)
	// prepared, when set (a Stepper's Program), is the program already
	// prepared for the wasm engines; the run does not release it.
	prepared *wasmProgram
	// stepping is set by a Stepper, which picks each delivery itself.
	stepping bool
}

// Clock is a source of time.
type Clock interface {
	// Now returns the current time; std::time::now_ms is its Unix
	// milliseconds, std::time::monotonic_ns its distance from the Now of
	// the run's start.
	Now() time.Time
	// Sleep waits for d or until ctx is done.
	Sleep(ctx context.Context, d time.Duration)
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Run verdicts, as recorded in an artifact's trailer.
const (
	VerdictQuiescent = "quiescent" // every queue empty, no handler running, every ingress closed: exit 0
	VerdictExit      = "exit"      // std::process::exit(n): exit n
	VerdictTrap      = "trap"      // an uncaught trap: exit 3
	VerdictHalted    = "halted"    // the Journal halted the run before a delivery (replay --at)
	VerdictCanceled  = "canceled"  // the context was canceled
	VerdictError     = "error"     // the runtime or an engine failed (Run returns the error)
)

// ExitTrap is the exit code of a run stopped by a trap (docs/language.md).
const ExitTrap = 3

// ExitCanceled is the exit code of a canceled run (Ctrl-C, SIGTERM): the
// shell's code for a process ended by SIGINT.
const ExitCanceled = 130

// Result is how a run ended.
type Result struct {
	Verdict string // VerdictQuiescent, VerdictExit, …
	// Code is the process exit code: 0 when quiescent or halted, n after
	// std::process::exit(n), ExitTrap after a trap, 1 when canceled or
	// failed.
	Code int
	// Trap is the reported trap (Verdict VerdictTrap); its String is the
	// report Run wrote to Stderr.
	Trap *TrapReport
	// Halt is the Journal's error that halted the run (VerdictHalted).
	Halt error
	// Handled is the number of deliveries each consumer handled, by
	// consumer id (0 for ingress bindings).
	Handled []int
}

// Run runs a program image: its topology (instances, placement,
// consumers, topics and their subscribers, ingress) and its code. It
// follows docs/language.md:
//
//   - One consumer per row of img.Consumers: the main bus, each pool,
//     each pinned and each async_io instance get an engine and a
//     goroutine that handles their queue; ingress bindings only publish.
//   - Start-up: every instance is initialised in main order on its
//     consumer's engine; then the start delivery of every instance with an
//     `on start` is queued in main order; then every consumer runs.
//   - A publish gets the identity (publishing consumer, its publish count)
//     and queues one delivery per subscriber in main order.
//   - The run ends when it is quiescent (exit 0), when a handler calls
//     std::process::exit(n) (every consumer finishes its current handler,
//     exit n) or when a handler traps (likewise, exit 3, the report on
//     Stderr). If several handlers trap at about the same time, the trap
//     that reached the runtime first is reported; later ones are journaled
//     but not reported. The first of exit and trap decides the verdict.
//
// Output is flushed before Run returns. The error is non-nil when the run
// could not start (a bad program, an engine that cannot be made), when an
// engine failed (a crashed guest), or when ctx was canceled; Result then
// says how far the run got.
func Run(ctx context.Context, img *image.Image, opts Options) (Result, error) {
	r, err := newRunner(ctx, img, opts)
	if err != nil {
		return Result{Verdict: VerdictError, Code: 1}, err
	}
	return r.run()
}

// runner is one run.
type runner struct {
	ctx     context.Context
	img     *image.Image
	wasm    *wasmProgram // the program prepared for the wasm engines
	opts    Options
	journal Journal
	order   Order
	out     *output

	consumers []*consumer // by consumer id
	execs     []*consumer // the consumers that handle deliveries and have instances
	ingress   []*consumer // ingress bindings, in binding order
	stdin     []*consumer // the stdin bindings among them
	nats      *busState   // nats bindings and exports (nil: none)
	instCons  []*consumer // by instance index: its consumer
	subs      [][]int     // by topic: subscribing instances in main order
	router    *Router     // which instances get a message (guards, work groups)
	guarded   bool        // some handler has a guard

	clock     Clock
	epoch     time.Time  // the clock at start-up, for monotonic_ns
	timers    TimerQueue // pending timers; stopped when the run stops
	entropyMu sync.Mutex
	entropy   io.Reader
	lookupEnv func(string) (string, bool)
	http      *http.Client

	// outstanding counts queued and running deliveries plus one while the
	// ingress input is open; the run is quiescent when it reaches 0.
	outstanding atomic.Int64
	stopped     atomic.Bool // no consumer takes another delivery
	running     atomic.Bool // start-up is over and the consumers run
	done        chan struct{}
	doneOnce    sync.Once
	wg          sync.WaitGroup

	// ingressMu orders the ingress reader's publishes with the end of
	// the run, so that nothing is published after the journal's End.
	ingressMu sync.Mutex
	// The live stdin reader pauses while more than inputHigh deliveries
	// are outstanding, until fewer than inputLow are (drained).
	inputWaiting atomic.Bool
	drained      chan struct{}

	mu  sync.Mutex // guards end
	end struct {
		verdict string
		code    int
		trap    *TrapReport
		halt    error
		err     error
	}
}

func newRunner(ctx context.Context, img *image.Image, opts Options) (*runner, error) {
	if img == nil {
		return nil, errors.New("run: no program")
	}
	if err := checkTopology(img); err != nil {
		return nil, err
	}
	r := &runner{
		ctx:       ctx,
		img:       img,
		opts:      opts,
		journal:   opts.Journal,
		order:     opts.Order,
		out:       newOutput(opts.Stdout, opts.Stderr),
		clock:     opts.Clock,
		entropy:   opts.Entropy,
		lookupEnv: opts.LookupEnv,
		http:      opts.HTTPClient,
		done:      make(chan struct{}),
		drained:   make(chan struct{}, 1),
	}
	if r.clock == nil {
		r.clock = systemClock{}
	}
	if r.entropy == nil {
		r.entropy = rand.Reader
	}
	if r.lookupEnv == nil {
		r.lookupEnv = os.LookupEnv
	}
	if r.http == nil {
		r.http = defaultHTTPClient()
	}
	r.epoch = r.clock.Now()
	r.timers = newTimerQueue(opts.Timers, r.fireTimer)

	r.consumers = make([]*consumer, len(img.Consumers))
	for id, ic := range img.Consumers {
		c := &consumer{r: r, id: id, kind: ic.Kind, wake: make(chan struct{}, 1), inOrder: opts.Order == nil && !opts.stepping}
		c.windowed = c.runOrder() != nil
		r.consumers[id] = c
		switch {
		case ic.Kind == image.ConsumerIngress:
			r.ingress = append(r.ingress, c)
		case len(ic.Instances) > 0:
			r.execs = append(r.execs, c)
		}
	}
	r.instCons = make([]*consumer, len(img.Instances))
	for i, in := range img.Instances {
		r.instCons[i] = r.consumers[in.Consumer]
	}
	r.subs = make([][]int, len(img.Topics))
	for t, tp := range img.Topics {
		r.subs[t] = tp.Subscribers
	}
	for i, c := range r.ingress {
		c.topic = img.Ingress[i].Topic
		if img.Ingress[i].NATS == nil {
			r.stdin = append(r.stdin, c)
		}
	}
	r.router = NewRouter(img)
	r.guarded = vm.HasGuards(img)
	if err := r.startEngines(img); err != nil {
		return nil, err
	}
	return r, nil
}

// checkTopology rejects an image whose topology tables disagree with each
// other, so that the scheduler can index them freely.
func checkTopology(img *image.Image) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("run: inconsistent program: "+format, args...)
	}
	if len(img.Consumers) == 0 || img.Consumers[0].Kind != image.ConsumerMain {
		return bad("consumer 0 is not the main bus")
	}
	for i, in := range img.Instances {
		if in.Consumer < 0 || in.Consumer >= len(img.Consumers) || img.Consumers[in.Consumer].Kind == image.ConsumerIngress {
			return bad("instance %s has consumer %d", in.Name, in.Consumer)
		}
		if in.Locus < 0 || in.Locus >= len(img.Loci) {
			return bad("instance %s has locus %d", in.Name, in.Locus)
		}
		found := false
		for _, j := range img.Consumers[in.Consumer].Instances {
			found = found || j == i
		}
		if !found {
			return bad("consumer %d does not list instance %s", in.Consumer, in.Name)
		}
	}
	for _, t := range img.Topics {
		for _, s := range t.Subscribers {
			if s < 0 || s >= len(img.Instances) {
				return bad("topic %s has subscriber %d", t.Name, s)
			}
		}
	}
	ingress := 0
	for id, c := range img.Consumers {
		if c.Kind == image.ConsumerIngress {
			if ingress >= len(img.Ingress) || img.Ingress[ingress].Consumer != id {
				return bad("ingress consumer %d has no binding", id)
			}
			ingress++
		}
	}
	if ingress != len(img.Ingress) {
		return bad("%d ingress bindings, %d ingress consumers", len(img.Ingress), ingress)
	}
	for _, in := range img.Ingress {
		if in.Topic < 0 || in.Topic >= len(img.Topics) {
			return bad("ingress topic %d", in.Topic)
		}
		if in.NATS == nil && !lineTopic(img, in.Topic) {
			return bad("ingress topic %s does not have one string field", img.Topics[in.Topic].Name)
		}
	}
	return nil
}

// lineTopic reports whether topic's payload is a struct of one string
// field, as a `bind stdin` topic must be.
func lineTopic(img *image.Image, topic int) bool {
	t := img.Topics[topic].Type
	if int(t) < 0 || int(t) >= len(img.Types) {
		return false
	}
	ty := img.Types[t]
	return ty.Kind == image.KindStruct && len(ty.Fields) == 1 && ty.Fields[0].Type == image.TString
}

// startEngines makes one engine per consumer that hosts instances,
// concurrently (instantiating a guest takes a few milliseconds).
func (r *runner) startEngines(img *image.Image) error {
	var prog *wasmProgram
	if r.opts.prepared != nil {
		prog = r.opts.prepared // a Stepper's Program: prepared once, released by it
	}
	// An ingress binding whose topic has guards gets an engine too, to
	// evaluate them for every line it publishes.
	engines := r.execs
	for _, c := range r.ingress {
		if r.router.GuardBytes(c.topic) > 0 {
			engines = append(engines[:len(engines):len(engines)], c)
		}
	}
	if prog == nil && r.opts.Engine == EngineWasm && r.opts.engine == nil && len(engines) > 0 {
		w, err := defaultWasm()
		if err != nil {
			return err
		}
		if prog, err = w.prepare(r.ctx, img); err != nil {
			return fmt.Errorf("run: %w", err)
		}
		r.wasm = prog
	}
	group, shared := r.guestGroups(engines)
	var template *vm.Machine
	if r.opts.Engine == EngineNative && r.opts.engine == nil && len(engines) > 1 && r.opts.Debug == nil && !r.opts.stepping {
		// Native machines are siblings of one (vm.Machine.Sibling), so
		// that the image is prepared once rather than per consumer; not
		// under a debugger or a Stepper, which patch breaks into code.
		m, err := newNativeMachine(img, nil, r.memoryLimit())
		if err != nil {
			return err
		}
		template = m
	}
	errs := make([]error, len(engines))
	var wg sync.WaitGroup
	for i, c := range engines {
		if group[i] >= 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r.opts.engine != nil {
				c.engine, errs[i] = r.opts.engine(c)
				return
			}
			if template != nil {
				c.engine = newNativeSibling(template, c, r.memoryLimit())
				return
			}
			c.engine, errs[i] = newEngine(r.ctx, r.opts.Engine, img, prog, c, r.memoryLimit())
		}()
	}
	// Each shared guest is started, and its consumers' machines made, on
	// a goroutine of its own.
	sharedErrs := make([]error, shared)
	for k := range shared {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sharedErrs[k] = r.startSharedGuest(prog, engines, group, k)
		}()
	}
	wg.Wait()
	errs = append(errs, sharedErrs...)
	if err := errors.Join(errs...); err != nil {
		r.closeEngines()
		return err
	}
	return nil
}

// startSharedGuest starts shared guest k and gives every consumer of
// engines in group k an engine in it.
func (r *runner) startSharedGuest(prog *wasmProgram, engines []*consumer, group []int, k int) error {
	w, err := defaultWasm()
	if err != nil {
		return err
	}
	var g *wasmGuest
	for i, c := range engines {
		if group[i] != k {
			continue
		}
		if g == nil {
			if g, err = w.newGuest(r.ctx, prog, r.memoryLimit(), batches(c)); err != nil {
				return err
			}
		}
		e, err := g.attach(c, r.memoryLimit())
		if err != nil {
			if g.users == 0 {
				g.tier.close(g.ctx)
				g.mod.Close(g.ctx)
			}
			return err
		}
		c.engine = e
	}
	return nil
}

func (r *runner) closeEngines() {
	for _, c := range r.consumers {
		if c.engine != nil {
			c.engine.Close()
			c.engine = nil
		}
	}
	r.wasm.close(context.Background())
	r.wasm = nil
}

// run performs start-up, runs the consumers until the run ends and
// reports the end.
func (r *runner) run() (Result, error) {
	defer r.closeEngines()
	if r.connectBus() && r.startUp() {
		// The bindings subscribe before any handler runs (their
		// messages queue after the start deliveries), so that a reply
		// to what a start handler sends is not missed.
		r.subscribeBus()
		r.running.Store(true)
		stopWatch := context.AfterFunc(r.ctx, func() {
			r.stop(VerdictCanceled, ExitCanceled, nil, nil, r.ctx.Err())
		})
		r.markLendable()
		for _, c := range r.execs {
			r.wg.Add(1)
			go c.loop()
		}
		if len(r.stdin) > 0 {
			input, throttle := r.opts.Input, false
			if input == nil {
				input, throttle = LineReader(r.opts.Stdin), true
			}
			go r.readInput(input, throttle)
		}
		if r.outstanding.Load() == 0 {
			r.quiesce()
		}
		<-r.done
		r.wg.Wait()
		stopWatch()
	}
	// Nothing is published after this point: the ingress reader, if it
	// is still waiting for input, sees stopped and gives up.
	r.ingressMu.Lock()
	r.stopped.Store(true)
	r.ingressMu.Unlock()
	r.endBus()

	return r.finish()
}

// finish reports how the run ended, once every consumer has stopped: it
// flushes the output, prints the trap report, ends the journal and
// returns the result.
func (r *runner) finish() (Result, error) {
	r.mu.Lock()
	end := r.end
	r.mu.Unlock()
	r.out.flush()
	if end.trap != nil {
		r.out.report(end.trap.String())
	}
	if r.journal != nil {
		r.journal.End(end.verdict, end.code)
	}
	res := Result{Verdict: end.verdict, Code: end.code, Trap: end.trap, Halt: end.halt}
	res.Handled = make([]int, len(r.consumers))
	for id, c := range r.consumers {
		res.Handled[id] = c.handled
	}
	return res, end.err
}

// startUp initialises every instance in main order and queues the start
// deliveries; it reports false when an initialiser trapped or failed.
func (r *runner) startUp() bool {
	for i := range r.img.Instances {
		c := r.instCons[i]
		if err := c.engine.Init(i); err != nil {
			c.failed(-1, nil, i, err)
			return false
		}
		if r.stopped.Load() {
			return false // an initialiser called std::process::exit, or was interrupted
		}
		if err := r.ctx.Err(); err != nil {
			r.stop(VerdictCanceled, ExitCanceled, nil, nil, err)
			return false
		}
	}
	if r.guarded {
		if err := r.shareGuardParams(); err != nil {
			r.fail(err)
			return false
		}
	}
	for i, in := range r.img.Instances {
		if r.img.Loci[in.Locus].Start >= 0 {
			r.instCons[i].enqueue(Delivery{Target: i, Topic: StartTopic})
		}
	}
	if len(r.stdin) > 0 {
		r.outstanding.Add(1) // the open input
	}
	if r.nats != nil {
		r.outstanding.Add(int64(len(r.nats.bindings))) // each open binding
	}
	return true
}

// Ingress flow control: a live reader stops reading while the program
// has more than inputHigh deliveries outstanding, so that a large input
// does not pile up in the queues; it reads on once fewer than inputLow
// are. Injected input (replay) is never throttled, since a replaying
// consumer may hold many deliveries while it waits for the next line's.
const (
	inputHigh = 1 << 16
	inputLow  = 1 << 14
)

// readInput publishes every line of input on every ingress binding, in
// binding order, and closes the ingress at the end of input.
func (r *runner) readInput(input Input, throttle bool) {
	defer r.release(1)
	for {
		if throttle && !r.awaitDrain() {
			return
		}
		line, err := input.Line()
		if err != nil {
			return
		}
		r.ingressMu.Lock()
		if r.stopped.Load() {
			r.ingressMu.Unlock()
			return
		}
		payload := linePayload(line) // shared, like every message's payload
		for _, c := range r.stdin {
			var bits []byte
			if c.engine != nil {
				if bits, err = c.engine.Guards(c.topic, payload); err != nil {
					r.ingressMu.Unlock()
					c.failedGuard(err)
					return
				}
			}
			if err := r.publish(c, c.topic, payload, bits); err != nil {
				r.ingressMu.Unlock()
				r.busTrap(-1, err)
				return
			}
		}
		r.ingressMu.Unlock()
	}
}

// linePayload is the canonical payload of an ingress topic T { text }.
func linePayload(line string) []byte {
	b := make([]byte, 0, len(line)+8)
	b = append(b, byte(value.KindStruct), 1)
	b, _ = value.Encode(b, value.Str(line)) // a string never fails to encode
	return b
}

// publish gives a message its identity, journals it and queues one
// delivery per instance the Router picks (in main order), given the
// publish's guard bits; an exported topic's message is also sent to
// NATS (egress), whose failure is the error. It runs on c's goroutine.
func (r *runner) publish(c *consumer, topic int, payload []byte, bits []byte) error {
	// route's body, kept here: a call more per publish showed on the
	// main bus.
	msg := MessageID{Producer: c.id, Seq: c.published}
	c.published++
	k := c.topicCount(topic)
	c.targets = r.router.Route(c.targets[:0], topic, bits, k)
	if j := r.journal; j != nil {
		j.Publish(c.id, msg, topic, payload, c.targets)
	}
	for _, inst := range c.targets {
		r.instCons[inst].enqueueFrom(c, Delivery{Target: inst, Topic: topic, Message: msg, Payload: payload})
	}
	if r.nats != nil {
		return r.egress(c, topic, msg, payload)
	}
	return nil
}

// route numbers a publish of c's, routes it into c.targets and journals
// it.
func (r *runner) route(c *consumer, topic int, payload []byte, bits []byte) MessageID {
	msg := MessageID{Producer: c.id, Seq: c.published}
	c.published++
	k := c.topicCount(topic)
	c.targets = r.router.Route(c.targets[:0], topic, bits, k)
	if j := r.journal; j != nil {
		j.Publish(c.id, msg, topic, payload, c.targets)
	}
	return msg
}

// enqueuePublish routes and journals a publish of c's and queues its
// deliveries at once.
func (r *runner) enqueuePublish(c *consumer, topic int, payload []byte, bits []byte) MessageID {
	msg := r.route(c, topic, payload, bits)
	for _, inst := range c.targets {
		r.instCons[inst].enqueueFrom(c, Delivery{Target: inst, Topic: topic, Message: msg, Payload: payload})
	}
	return msg
}

// publishStaged is publish for a publish of a batch (publishBatch): its
// deliveries are staged, for c.flushStaged to enqueue. A batching run
// has no nats exports, so there is nothing to send.
func (r *runner) publishStaged(c *consumer, topic int, payload []byte, bits []byte) {
	msg := r.route(c, topic, payload, bits)
	for _, inst := range c.targets {
		c.stage(r.instCons[inst], Delivery{Target: inst, Topic: topic, Message: msg, Payload: payload})
	}
}

// shareGuardParams gives every engine the parameters of the instances
// whose handlers have guards, as start-up left them (parameters never
// change afterwards).
func (r *runner) shareGuardParams() error {
	table := make([][]byte, len(r.img.Instances))
	for t := range r.img.Topics {
		for _, g := range vm.GuardedSubscribers(r.img, t) {
			if table[g.Inst] != nil {
				continue
			}
			b, err := r.instCons[g.Inst].engine.Params(g.Inst)
			if err != nil {
				return fmt.Errorf("run: parameters of %s: %w", r.instanceName(g.Inst), err)
			}
			table[g.Inst] = append([]byte{}, b...)
		}
	}
	for _, c := range r.consumers {
		if c.engine == nil {
			continue
		}
		if err := c.engine.SetGuardParams(table); err != nil {
			return fmt.Errorf("run: consumer %d: %w", c.id, err)
		}
	}
	return nil
}

// awaitDrain waits while too many deliveries are outstanding; it reports
// false when the run stopped meanwhile.
func (r *runner) awaitDrain() bool {
	for r.outstanding.Load() > inputHigh {
		r.inputWaiting.Store(true)
		if r.outstanding.Load() <= inputHigh {
			r.inputWaiting.Store(false)
			break
		}
		select {
		case <-r.drained:
		case <-r.done:
			return false
		}
		r.inputWaiting.Store(false)
	}
	return !r.stopped.Load()
}

// release marks n deliveries (or the input) finished and detects
// quiescence.
func (r *runner) release(n int64) {
	left := r.outstanding.Add(-n)
	if left == 0 {
		r.quiesce()
	}
	if left < inputLow && r.inputWaiting.Load() {
		select {
		case r.drained <- struct{}{}:
		default:
		}
	}
}

func (r *runner) quiesce() { r.stop(VerdictQuiescent, 0, nil, nil, nil) }

// stop ends the run: the first call decides the verdict; every consumer
// finishes its current handler and takes nothing more.
func (r *runner) stop(verdict string, code int, trap *TrapReport, halt, err error) {
	r.mu.Lock()
	if r.end.verdict == "" {
		r.end.verdict, r.end.code, r.end.trap, r.end.halt, r.end.err = verdict, code, trap, halt, err
	}
	r.mu.Unlock()
	r.stopped.Store(true)
	r.timers.Stop() // exit, a trap or an interrupt cancels pending timers
	r.doneOnce.Do(func() { close(r.done) })
	for _, c := range r.execs {
		c.signal()
	}
}

// memoryLimit is the memory limit of each consumer's engine.
func (r *runner) memoryLimit() int64 {
	if r.opts.MemoryLimit > 0 {
		return r.opts.MemoryLimit
	}
	return vm.DefaultMemoryLimit
}

// canceled reports whether the run has stopped as canceled.
func (r *runner) canceled() bool {
	if !r.stopped.Load() {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.end.verdict == VerdictCanceled
}

// fail ends the run because the runtime or an engine failed.
func (r *runner) fail(err error) { r.stop(VerdictError, 1, nil, nil, err) }

// instanceName returns the name of instance i.
func (r *runner) instanceName(i int) string { return r.img.Instances[i].Name }

// topicName returns the name of topic t.
func (r *runner) topicName(t int) string { return r.img.Topics[t].Name }

// compile-time check that a consumer serves its engine's primitive calls.
var _ vm.Host = (*consumer)(nil)
