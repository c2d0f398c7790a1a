package explore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/host"
)

// Defaults of the run limits (docs/testing.md).
const (
	DefaultMaxSteps        = 1_000_000
	DefaultMaxHandlerSteps = 10_000_000
)

// Config is what every run of a search shares.
type Config struct {
	Engine          host.EngineKind
	MaxSteps        int   // steps before a run is a livelock; 0: DefaultMaxSteps
	MaxHandlerSteps int64 // interpreter steps per handler run; 0: DefaultMaxHandlerSteps
	Fixtures        *Fixtures
	// Recording, when set, serves every run's inputs and stdin from a
	// recorded run (--inputs, hale explore); what it did not record comes
	// from the fixtures and the seed.
	Recording *Recording
}

// Scheduler runs one program under chosen schedules. It prepares the
// program once; each run gets fresh engines and a fresh world, so runs do
// not share any state.
type Scheduler struct {
	cfg  Config
	img  *image.Image
	prog *host.Program
	// hooks, during a debugged run (debug.go), watch it.
	hooks *DebugHooks
}

// NewScheduler prepares img for runs.
func NewScheduler(ctx context.Context, img *image.Image, cfg Config) (*Scheduler, error) {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.MaxHandlerSteps <= 0 {
		cfg.MaxHandlerSteps = DefaultMaxHandlerSteps
	}
	prog, err := host.PrepareProgram(ctx, cfg.Engine, img)
	if err != nil {
		return nil, err
	}
	return &Scheduler{cfg: cfg, img: img, prog: prog}, nil
}

// Close releases the prepared program.
func (s *Scheduler) Close() { s.prog.Close() }

// Image returns the program the scheduler runs.
func (s *Scheduler) Image() *image.Image { return s.img }

// Step is one step of a schedule: the delivery that ran.
type Step struct {
	Consumer int
	Target   int // instance index
	Start    bool
	Message  host.MessageID // zero for a start delivery
}

func (st Step) same(d *host.Delivery, consumer int) bool {
	if st.Consumer != consumer || st.Target != d.Target || st.Start != d.IsStart() {
		return false
	}
	return st.Start || st.Message == d.Message
}

// message is the step's message as the wire form writes it.
func (st Step) message() string {
	if st.Start {
		return "start"
	}
	return st.Message.String()
}

// Failure is how a failing run failed. Its signature is kind, message and
// position, not where in the schedule it happened.
type Failure struct {
	Kind       string // a trap kind, "exit", "budget" or "livelock"
	Message    string
	Position   string // file:line:col, or a handler's name when no source position applies
	Coordinate string // C:N of the failing delivery ("" when none)
	Stack      []string
}

// Signature is the failure's identity across schedules.
func (f *Failure) Signature() string { return f.Kind + "\n" + f.Message + "\n" + f.Position }

// Outcome is one run.
type Outcome struct {
	Seed    uint64
	Steps   []Step
	Failure *Failure // nil: the run passed
	Verdict string
	Code    int
	Cut     bool   // the run reached --max-steps with a timer pending, and was ended there
	Skipped int    // steps of a followed schedule that named no pending delivery
	Drift   string // strict following: why the schedule could not be followed
	inputs  []call
	outputs []call
	missing string // the transcript had no answer for this primitive
	stdin   []string
}

// choice is one thing the scheduler may run next: consumer's oldest
// pending delivery from one producer (or its next start delivery).
type choice struct {
	consumer int
	pick     int           // index in the consumer's pending deliveries
	d        host.Delivery // a copy: the queue's slots move when a step runs
	age      int           // publish order of the message; -1 for a start delivery
}

// chooser picks a step among the choices (never empty).
type chooser interface {
	choose(step int, choices []choice) int
	// ran is told which choice ran (after it ran).
	ran(step int, c choice)
}

// choices lists what may run now: per consumer in id order, its first
// start delivery if any is pending (start deliveries come first, in main
// order), else the oldest pending delivery of each producer, in order of
// their place in the queue.
func (s *Scheduler) choices(st *host.Stepper, execs []int, w *world, views []queueView, buf []choice) []choice {
	buf = buf[:0]
	for _, c := range execs {
		pending := st.Pending(c)
		if len(pending) == 0 {
			continue
		}
		if pending[0].IsStart() {
			buf = append(buf, choice{consumer: c, pick: 0, d: pending[0], age: -1})
			continue
		}
		v := &views[c]
		v.refresh(pending)
		first := len(buf)
		for _, f := range v.firsts {
			d := pending[f.idx]
			buf = append(buf, choice{consumer: c, pick: f.idx, d: d, age: w.age[d.Message]})
			// Keep them in queue order (a producer's next delivery may
			// sit behind another producer's first).
			for k := len(buf) - 1; k > first && buf[k].pick < buf[k-1].pick; k-- {
				buf[k], buf[k-1] = buf[k-1], buf[k]
			}
		}
	}
	return buf
}

// checkChoices, when set (tests), sees every step's choices.
var checkChoices func(st *host.Stepper, execs []int, choices []choice)

// queueView caches, for one consumer, where each producer's oldest
// pending delivery is in its queue, so that listing the choices does not
// rescan a long queue at every step. Producers only append to a queue and
// only the consumer's own steps remove from it.
type queueView struct {
	firsts  []firstOf // one per producer with a pending delivery
	scanned int       // the queue's length when last seen
}

type firstOf struct{ producer, idx int }

// producerOf is the producer a delivery is ordered with: start
// deliveries form their own sequence.
func producerOf(d *host.Delivery) int {
	if d.IsStart() {
		return -1
	}
	return d.Message.Producer
}

// refresh takes in the deliveries appended since the last call.
func (v *queueView) refresh(pending []host.Delivery) {
	for i := v.scanned; i < len(pending); i++ {
		p := producerOf(&pending[i])
		known := false
		for _, f := range v.firsts {
			if f.producer == p {
				known = true
				break
			}
		}
		if !known {
			v.firsts = append(v.firsts, firstOf{p, i})
		}
	}
	v.scanned = len(pending)
}

// removedStart accounts for a step that took the start delivery at the
// head of the queue (start deliveries are not in firsts).
func (v *queueView) removedStart() {
	if v.scanned > 0 {
		v.scanned--
	}
	for j := range v.firsts {
		v.firsts[j].idx--
	}
}

// removed accounts for the step that took pending delivery pick (its
// producer's oldest); pending is the queue after the step's removal and
// before anything the step published (refresh takes those in).
func (v *queueView) removed(pick int, pending []host.Delivery) {
	k := -1
	for j := range v.firsts {
		switch {
		case v.firsts[j].idx == pick:
			k = j
		case v.firsts[j].idx > pick:
			v.firsts[j].idx--
		}
	}
	v.scanned--
	if k < 0 {
		return
	}
	p := v.firsts[k].producer
	for i := pick; i < v.scanned; i++ {
		if producerOf(&pending[i]) == p {
			v.firsts[k].idx = i
			return
		}
	}
	v.firsts = append(v.firsts[:k], v.firsts[k+1:]...)
}

// oldest returns the index of the choice whose message was published
// first (start deliveries before all), the lowest consumer on a tie.
func oldest(choices []choice) int {
	best := 0
	for i, c := range choices[1:] {
		if c.age < choices[best].age {
			best = i + 1
		}
	}
	return best
}

// replayInputs are the inputs of a bundle's run: its stdin lines and its
// transcript of answers.
type replayInputs struct {
	stdin      []string
	transcript map[string][]call
	fallback   bool // answer what the transcript cannot from the fixtures
	at         *atStop
}

// run runs the program once under ch, with the world's streams from seed
// and the fixtures (or, with in, the bundle's inputs).
func (s *Scheduler) run(ctx context.Context, seed uint64, ch chooser, in *replayInputs) (*Outcome, error) {
	if in == nil && s.cfg.Recording != nil {
		in = s.cfg.Recording.replayInputs()
	}
	var transcript map[string][]call
	if in != nil {
		transcript = in.transcript
	}
	maxPolls := int((s.cfg.MaxHandlerSteps + vm.PollSteps - 1) / vm.PollSteps)
	w := newWorld(s.cfg.Fixtures, seed, maxPolls)
	w.transcript = transcript
	w.fallback = in != nil && in.fallback
	if in != nil {
		w.at = in.at
	}
	timers := &virtualTimers{w: w}
	opts := host.Options{Journal: w, Timers: func(fire func(host.Timer)) host.TimerQueue {
		timers.fire = fire
		return timers
	}}
	if s.hooks != nil {
		opts.Debug, w.before, opts.Stdout = s.hooks.Break, s.hooks.Before, s.hooks.Stdout
		opts.DebugPoll = s.hooks.Poll
		w.echo = s.hooks.Stdout != nil
	}
	st, err := host.NewStepper(ctx, s.prog, opts)
	if err != nil {
		return nil, err
	}
	if s.hooks != nil && s.hooks.Started != nil {
		s.hooks.Started(st)
	}
	out := &Outcome{Seed: seed}
	var budgetAt *Step
	var budgetCoord string
	if st.Start() {
		var stdin []string
		if s.cfg.Fixtures != nil {
			stdin = s.cfg.Fixtures.Stdin
		}
		if in != nil {
			stdin = in.stdin
		}
		st.Input(stdin)
		execs := st.Executors()
		views := make([]queueView, len(s.img.Consumers))
		var buf []choice
		for step := 0; !st.Stopped(); step++ {
			timers.fireDue()
			buf = s.choices(st, execs, w, views, buf)
			for (len(buf) == 0 || !wanted(ch, step, buf)) && timers.jump() {
				buf = s.choices(st, execs, w, views, buf)
			}
			if checkChoices != nil {
				checkChoices(st, execs, buf)
			}
			if len(buf) == 0 {
				break // nothing deliverable and no timer pending: the run is over
			}
			if step >= s.cfg.MaxSteps {
				if timers.fired > 0 || len(timers.pending) > 0 {
					// A program driven by timers (a periodic tick) is not
					// a livelock: its run is cut here.
					out.Cut = true
					break
				}
				out.Failure = &Failure{Kind: "livelock", Message: fmt.Sprintf("more than %d steps (--max-steps)", s.cfg.MaxSteps)}
				c := buf[0]
				out.Failure.Coordinate = coord(c.consumer, st.Handled(c.consumer))
				break
			}
			i := ch.choose(step, buf)
			if i < 0 {
				break // the chooser cannot go on (strict following)
			}
			c := buf[i]
			stp := Step{Consumer: c.consumer, Target: c.d.Target, Start: c.d.IsStart(), Message: c.d.Message}
			n := st.Handled(c.consumer)
			out.Steps = append(out.Steps, stp)
			if err := st.Step(c.consumer, c.pick); err != nil {
				st.Finish()
				return nil, err
			}
			if !stp.Start {
				views[c.consumer].removed(c.pick, st.Pending(c.consumer))
			} else {
				views[c.consumer].removedStart()
			}
			ch.ran(step, c)
			if w.overBudget {
				budgetAt, budgetCoord = &out.Steps[len(out.Steps)-1], coord(c.consumer, n)
				break
			}
		}
	}
	res, err := st.Finish()
	if err != nil && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out.Verdict, out.Code = res.Verdict, res.Code
	switch c := ch.(type) {
	case *follow:
		out.Skipped, out.Drift = c.skipped, c.drift
	case *prefixChooser:
		out.Skipped, out.Drift = c.f.skipped, c.f.drift
	}
	if s.cfg.Fixtures != nil && in == nil {
		out.stdin = s.cfg.Fixtures.Stdin
	} else if in != nil {
		out.stdin = in.stdin
	}
	out.inputs, out.outputs, out.missing = w.inputs, w.outputs, w.missing
	switch {
	case budgetAt != nil:
		out.Failure = &Failure{
			Kind:       vm.KindBudget,
			Message:    fmt.Sprintf("handler passed %d steps (--max-handler-steps)", s.cfg.MaxHandlerSteps),
			Position:   s.handlerName(budgetAt),
			Coordinate: budgetCoord,
		}
	case res.Trap != nil:
		t := res.Trap
		f := &Failure{Kind: t.Trap.Kind, Message: t.Trap.Message}
		for _, fr := range t.Trap.Stack {
			f.Stack = append(f.Stack, strings.TrimSpace(fr.Pos+" "+fr.Func))
		}
		if len(t.Trap.Stack) > 0 {
			f.Position = t.Trap.Stack[0].Pos
		}
		if t.N >= 0 {
			f.Coordinate = coord(t.Consumer, t.N)
		}
		out.Failure = f
	case res.Verdict == host.VerdictExit && res.Code != 0:
		f := &Failure{Kind: "exit", Message: "exit code " + strconv.Itoa(res.Code), Position: w.exitPos}
		if len(out.Steps) > 0 {
			last := out.Steps[len(out.Steps)-1]
			f.Coordinate = coord(last.Consumer, res.Handled[last.Consumer]-1)
		}
		out.Failure = f
	}
	return out, nil
}

func coord(c, n int) string { return strconv.Itoa(c) + ":" + strconv.Itoa(n) }

// handlerName names the handler a step ran: "Worker.on Job".
func (s *Scheduler) handlerName(st *Step) string {
	in := s.img.Instances[st.Target]
	l := s.img.Loci[in.Locus]
	if st.Start {
		return l.Name + ".on start"
	}
	// The message's topic is not in the step; the locus names the handler's owner.
	return l.Name + " (" + in.Name + ")"
}
