package debug

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/hale-lang/hale/explore"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/host"
)

// modeKind is what a run does until its next stop.
type modeKind int

const (
	modeContinue     modeKind = iota // to the next breakpoint
	modeNext                         // the next statement of the frame (or its caller's)
	modeStepIn                       // the next statement of the thread
	modeStepOut                      // the caller's next statement
	modeNextDelivery                 // before the thread's next delivery
	modeStepDelivery                 // before the next delivery of any consumer
	modeGoto                         // exactly at target (a replay going back)
	modeCollect                      // no stops: collect the keys of earlier stops (a replay going back)
	modeQuit                         // leave the run
)

// mode is a resume command.
type mode struct {
	kind     modeKind
	start    bool // Start: StopOnEntry and StopAt apply
	thread   int  // the consumer stepping
	delivery int  // the delivery the step began in (or before)
	depth    int  // the frames active when the step began
	from     key  // the stop the step began at
	// modeGoto: where to stop and why.
	target key
	reason string
	// modeCollect: keys before `before` of statements of delivery
	// `in` on thread (steps), or of breakpoint hits (bps); the run ends
	// after delivery stopAfter.
	steps, bps bool
	in         int
	before     key
	stopAfter  int
}

// event is what a run tells the session: a stop, or its end.
type event struct {
	stop    Stop
	key     key
	view    *view
	ended   bool
	outcome *explore.Outcome
	err     error
}

// run is one run of the program under the scheduler, on a goroutine of
// its own. While it is stopped its goroutine waits in a hook for the
// next command; only then does the session read its engines.
type run struct {
	s        *Session
	cmds     chan mode
	events   chan event
	st       *host.Stepper
	mode     mode
	quitting bool
	done     bool

	delivery  int // index in the schedule of the delivery in progress (or about to start)
	c, n      int
	d         host.Delivery
	armed     map[int]string // the spec armed on each consumer
	plain     []byte         // the spec of breakpoints only
	stepping  []byte         // the spec of breakpoints and every statement
	version   int            // the session's breakpoints the specs are of (bpVersion)
	collected []key
}

func (s *Session) newRun(m mode) *run {
	r := &run{s: s, cmds: make(chan mode), events: make(chan event), mode: m, delivery: -1, armed: map[int]string{}, version: -1}
	go func() {
		o, err := r.exec()
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		if r.st != nil {
			r.st.Flush()
		}
		r.events <- event{ended: true, outcome: o, err: err}
	}()
	return r
}

// exec runs the schedule of the session's source under the hooks.
func (r *run) exec() (*explore.Outcome, error) {
	s := r.s
	h := &explore.DebugHooks{
		Started: func(st *host.Stepper) { r.st = st },
		Before:  r.before,
		Break:   r.brk,
		Poll:    r.poll,
		Stdout:  s.output(r),
	}
	ctx := context.Background()
	switch {
	case s.rec != nil:
		return s.sched.DebugRecording(ctx, s.rec, h)
	case s.bund != nil:
		return s.sched.DebugBundle(ctx, s.bund, s.comp, h)
	default:
		return s.sched.DebugSeed(ctx, s.cfg.Seed, h)
	}
}

// suspend reports a stop and waits for the next command; errQuit when
// the session leaves the run.
func (r *run) suspend(stop Stop, k key, v *view) error {
	r.st.Flush()
	r.s.pausing.Store(false)
	r.events <- event{stop: stop, key: k, view: v}
	m := <-r.cmds
	if m.kind == modeQuit {
		r.quitting = true
		return errQuit
	}
	r.mode = m
	return nil
}

// before is the hook before each delivery: a stop at a delivery boundary,
// then the breaks this delivery arms.
func (r *run) before(c, n int, d *host.Delivery) error {
	if r.quitting {
		return errQuit
	}
	r.delivery++
	r.c, r.n, r.d = c, n, *d
	s := r.s
	if len(s.order) <= r.delivery {
		s.order = append(s.order, c)
	}
	m := &r.mode
	k := key{delivery: r.delivery, steps: -1}
	reason := ""
	switch {
	case s.pausing.Load() && m.kind != modeGoto && m.kind != modeCollect:
		reason = "pause"
	case m.start && r.delivery == 0 && s.cfg.StopOnEntry:
		reason = "entry"
	case m.start && s.cfg.StopAt != "" && coord(c, n) == s.cfg.StopAt:
		reason = "entry"
	case m.kind == modeNextDelivery && c == m.thread && r.delivery > m.delivery,
		m.kind == modeStepDelivery && r.delivery > m.delivery,
		(m.kind == modeNext || m.kind == modeStepIn || m.kind == modeStepOut) && c == m.thread && r.delivery > m.delivery:
		reason = "step"
	case m.kind == modeGoto && m.target == k:
		reason = m.reason
	case m.kind == modeCollect && r.delivery > m.stopAfter:
		r.quitting = true
		return errQuit
	}
	if reason != "" {
		if err := r.suspend(r.boundaryStop(reason), k, r.boundaryView()); err != nil {
			return err
		}
	}
	return r.arm(c)
}

// spec is the break spec consumer c arms now.
func (r *run) spec(c int) []byte {
	s := r.s
	if r.version != s.bpVersion {
		r.version = s.bpVersion
		r.plain = vm.EncodeBreakSpec(vm.BreakSpec{At: s.breakpointPCs(), Traps: s.traps})
		r.stepping = vm.EncodeBreakSpec(vm.BreakSpec{At: s.breakpointPCs(), Traps: s.traps, Step: true})
	}
	if r.stepsIn(c) {
		return r.stepping
	}
	return r.plain
}

// arm arms on consumer c the breaks of the current mode.
func (r *run) arm(c int) error {
	spec := r.spec(c)
	if r.armed[c] == string(spec) {
		return nil
	}
	r.armed[c] = string(spec)
	return r.st.SetBreaks(c, spec)
}

// stepsIn reports whether the delivery in progress on consumer c stops
// at every statement.
func (r *run) stepsIn(c int) bool {
	m := &r.mode
	switch m.kind {
	case modeNext, modeStepIn, modeStepOut:
		return c == m.thread && r.delivery == m.delivery
	case modeGoto:
		return r.delivery == m.target.delivery && m.target.steps >= 0
	case modeCollect:
		return m.steps && c == m.thread && r.delivery == m.in
	}
	return r.s.pausing.Load()
}

// poll is the hook of a long handler run's poll: when a pause is asked,
// it arms stepping so the next statement stops (a handler looping
// without breakpoints would otherwise run on until it returns).
func (r *run) poll(c int) []byte {
	m := &r.mode
	if r.quitting || !r.s.pausing.Load() || m.kind == modeGoto || m.kind == modeCollect {
		return nil
	}
	r.spec(c) // brings r.stepping up to date
	r.armed[c] = string(r.stepping)
	return r.stepping
}

// brk is the hook of a machine's break.
func (r *run) brk(c int, info []byte) ([]byte, error) {
	if r.quitting {
		return nil, errQuit
	}
	bi, err := vm.DecodeBreakInfo(info)
	if err != nil || len(bi.Frames) == 0 {
		return nil, fmt.Errorf("debug: %v", err)
	}
	s := r.s
	m := &r.mode
	k := key{delivery: r.delivery, steps: bi.Steps}
	if bi.Reason == vm.BreakTrap {
		k = key{delivery: r.delivery, steps: math.MaxInt64, trap: true}
	}
	top := bi.Frames[0]
	depth := len(bi.Frames)
	bp := bi.Reason == vm.BreakStatement && s.isBreakpoint(top.Fn, top.PC)
	ours := c == m.thread && r.delivery == m.delivery
	reason := ""
	switch {
	case m.kind == modeGoto:
		if k == m.target {
			reason = m.reason
		}
	case m.kind == modeCollect:
		if k.less(m.before) && ((m.steps && c == m.thread && r.delivery == m.in && !k.trap && depth <= m.depth) || (m.bps && bp)) {
			r.collected = append(r.collected, k)
		}
	case bi.Reason == vm.BreakTrap:
		reason = "exception"
	case s.pausing.Load():
		reason = "pause"
	case bp && k != m.from:
		reason = "breakpoint"
	case m.kind == modeNext && ours && depth <= m.depth && k != m.from,
		m.kind == modeStepIn && ours && k != m.from,
		m.kind == modeStepOut && ours && depth < m.depth:
		reason = "step"
	}
	if reason == "" {
		return nil, nil
	}
	v := r.breakView(bi)
	stop := Stop{Reason: reason, Thread: c + 1, Coordinate: coord(r.c, r.n)}
	if bi.Reason == vm.BreakTrap {
		stop.Description = "trap: " + bi.TrapMessage
	} else {
		f := &s.img.Funcs[top.Fn]
		p := s.posOf(top.Fn, top.PC, true)
		stop.Description = fmt.Sprintf("%s at %s:%d in delivery %s", f.Name, s.img.Files[p.File], p.Line, stop.Coordinate)
	}
	if err := r.suspend(stop, k, v); err != nil {
		return nil, err
	}
	spec := r.spec(c)
	if r.armed[c] == string(spec) {
		return nil, nil
	}
	r.armed[c] = string(spec)
	return spec, nil
}

func (r *run) boundaryStop(reason string) Stop {
	s := r.s
	return Stop{Reason: reason, Thread: r.c + 1, Coordinate: coord(r.c, r.n),
		Description: fmt.Sprintf("before delivery %s (%s)", coord(r.c, r.n), s.handlerName(&r.d))}
}

func coord(c, n int) string { return strconv.Itoa(c) + ":" + strconv.Itoa(n) }

// handlerName names the handler a delivery runs: "Ledger.on OrderPlaced".
func (s *Session) handlerName(d *host.Delivery) string {
	if fn := s.handlerOf(d); fn >= 0 {
		return s.img.Funcs[fn].Name
	}
	return s.img.Instances[d.Target].Name
}

// handlerOf returns the function a delivery runs, or -1.
func (s *Session) handlerOf(d *host.Delivery) int {
	l := &s.img.Loci[s.img.Instances[d.Target].Locus]
	if d.IsStart() {
		return l.Start
	}
	return l.HandlerFor(d.Topic)
}

// ---- The session's side ----

// errNotStarted and errEnded are the errors of a resume call out of turn.
var (
	errNotStarted = errors.New("the session has not started (call Start)")
	errEnded      = errors.New("the run is over")
)

// await waits for the run's next stop or end.
func (s *Session) await() (Stop, error) {
	ev := <-s.run.events
	if ev.ended {
		s.run.done = true
		s.cur = nil
		if ev.err != nil && !errors.Is(ev.err, errQuit) {
			return Stop{}, ev.err
		}
		stop := Stop{Ended: true}
		if o := ev.outcome; o != nil {
			stop.Verdict, stop.ExitCode = o.Verdict, o.Code
			if f := o.Failure; f != nil {
				stop.Description = f.Kind + ": " + f.Message
				if f.Kind == vm.KindBudget {
					// The scheduler halts a handler at its step cap; `hale
					// test` reports that as a failure, so the session ends
					// as a trap would, never as a clean halt with exit 0.
					stop.Verdict, stop.ExitCode = host.VerdictTrap, host.ExitTrap
					stop.Description += " in " + f.Position + ", delivery " + f.Coordinate
				}
			}
		}
		s.last = stop
		return stop, nil
	}
	s.cur = ev.view
	s.last = ev.stop
	s.curKey = ev.key
	s.history = append(s.history, ev.key)
	s.reasons = append(s.reasons, ev.stop.Reason)
	return ev.stop, nil
}

// resume sends a command to the stopped run and waits for its next stop.
func (s *Session) resume(m mode) (Stop, error) {
	switch {
	case s.closed:
		return Stop{}, errors.New("the session is closed")
	case s.run == nil:
		return Stop{}, errNotStarted
	case s.run.done:
		return s.last, nil
	}
	s.cur = nil
	s.pausing.Store(false) // a pause asked while nothing ran
	s.run.cmds <- m
	return s.await()
}

// stopRun ends the current run, if any.
func (s *Session) stopRun() {
	r := s.run
	if r == nil {
		return
	}
	s.run = nil
	s.cur = nil
	if r.done {
		return
	}
	r.cmds <- mode{kind: modeQuit}
	for ev := range r.events {
		if ev.ended {
			return
		}
		// A stop after the quit cannot happen (every hook returns
		// errQuit), but drain it to be safe.
		go func() { r.cmds <- mode{kind: modeQuit} }()
	}
}

// Start runs to the first stop.
func (s *Session) Start() (Stop, error) {
	if s.started {
		return Stop{}, errors.New("the session has already started")
	}
	s.started = true
	s.run = s.newRun(mode{kind: modeContinue, start: true, delivery: -1, thread: -1})
	return s.await()
}

// Continue runs to the next breakpoint, trap stop or the end.
func (s *Session) Continue() (Stop, error) {
	return s.resume(mode{kind: modeContinue, from: s.curKey, thread: -1})
}

func (s *Session) stepMode(kind modeKind, thread int) mode {
	m := mode{kind: kind, thread: thread - 1, delivery: s.curKey.delivery, from: s.curKey}
	if s.cur != nil && s.cur.bi != nil && s.cur.thread == thread-1 {
		m.depth = len(s.cur.bi.Frames)
	} else if s.cur != nil && s.cur.thread == thread-1 {
		m.depth = math.MaxInt // before the handler: its first statement
	} else if s.cur != nil && s.cur.thread != thread-1 {
		// Another thread is between deliveries: its next delivery.
		m.delivery = s.curKey.delivery
		if kind != modeStepDelivery {
			m.kind = modeNextDelivery
		}
	}
	if s.cur != nil && s.cur.bi == nil && s.cur.thread == thread-1 && kind == modeStepOut {
		m.kind = modeNextDelivery // out of a handler not begun: before the next
	}
	return m
}

// Next runs to the next statement of the current frame (or its caller's
// after a return); at a delivery boundary, to the handler's first
// statement.
func (s *Session) Next(thread int) (Stop, error) { return s.resume(s.stepMode(modeNext, thread)) }

// StepIn runs to the next statement of the thread, inside a call.
func (s *Session) StepIn(thread int) (Stop, error) { return s.resume(s.stepMode(modeStepIn, thread)) }

// StepOut runs to the caller's next statement; out of a handler, before
// the thread's next delivery.
func (s *Session) StepOut(thread int) (Stop, error) {
	return s.resume(s.stepMode(modeStepOut, thread))
}

// NextDelivery runs to just before the thread's next delivery (the
// inspector's `next`).
func (s *Session) NextDelivery(thread int) (Stop, error) {
	return s.resume(mode{kind: modeNextDelivery, thread: thread - 1, delivery: s.curKey.delivery, from: s.curKey})
}

// StepDelivery runs to just before the next delivery of any consumer, in
// the schedule's order (the inspector's `step`).
func (s *Session) StepDelivery() (Stop, error) {
	return s.resume(mode{kind: modeStepDelivery, thread: -1, delivery: s.curKey.delivery, from: s.curKey})
}

// collect replays from the start without stopping and returns the keys m
// collects.
func (s *Session) collect(m mode) ([]key, error) {
	s.stopRun()
	r := s.newRun(m)
	for ev := range r.events {
		if ev.ended {
			if ev.err != nil && !errors.Is(ev.err, errQuit) {
				return nil, ev.err
			}
			break
		}
	}
	return r.collected, nil
}

// gotoKey replays from the start to the stop at k.
func (s *Session) gotoKey(k key, reason string) (Stop, error) {
	s.stopRun()
	n := 0
	for i, h := range s.history {
		if h.less(k) {
			s.history[n], s.reasons[n] = h, s.reasons[i]
			n++
		}
	}
	s.history, s.reasons = s.history[:n], s.reasons[:n]
	s.run = s.newRun(mode{kind: modeGoto, target: k, reason: reason, thread: -1})
	return s.await()
}

// StepBack goes back to the thread's previous statement (or delivery
// boundary), by replaying from the start.
func (s *Session) StepBack(thread int) (Stop, error) {
	if !s.CanStepBack() {
		return Stop{}, errors.New("step back needs a recording or a bundle")
	}
	if !s.started {
		return Stop{}, errNotStarted
	}
	if s.run != nil && s.run.done {
		return Stop{}, errors.New("the run is over: step back from a stop")
	}
	c := thread - 1
	cur := s.curKey
	if cur.steps >= 0 && s.cur != nil && s.cur.thread == c {
		depth := 1
		if s.cur.bi != nil {
			depth = len(s.cur.bi.Frames)
		}
		keys, err := s.collect(mode{kind: modeCollect, steps: true, thread: c, in: cur.delivery, depth: depth, before: cur, stopAfter: cur.delivery})
		if err != nil {
			return Stop{}, err
		}
		if len(keys) > 0 {
			return s.gotoKey(keys[len(keys)-1], "step")
		}
		return s.gotoKey(key{delivery: cur.delivery, steps: -1}, "step")
	}
	prev := -1
	for i := min(cur.delivery, len(s.order)) - 1; i >= 0; i-- {
		if s.order[i] == c {
			prev = i
			break
		}
	}
	if prev < 0 {
		if cur.delivery == 0 && cur.steps < 0 {
			return Stop{}, errors.New("already at the start of the run")
		}
		return s.gotoKey(key{delivery: 0, steps: -1}, "entry")
	}
	keys, err := s.collect(mode{kind: modeCollect, steps: true, thread: c, in: prev, depth: 1, before: cur, stopAfter: prev})
	if err != nil {
		return Stop{}, err
	}
	if len(keys) > 0 {
		return s.gotoKey(keys[len(keys)-1], "step")
	}
	return s.gotoKey(key{delivery: prev, steps: -1}, "step")
}

// ReverseContinue goes back to the previous breakpoint hit, or to the
// start of the run, by replaying from the start.
func (s *Session) ReverseContinue() (Stop, error) {
	if !s.CanStepBack() {
		return Stop{}, errors.New("reverse continue needs a recording or a bundle")
	}
	if !s.started {
		return Stop{}, errNotStarted
	}
	if s.run != nil && s.run.done {
		return Stop{}, errors.New("the run is over: go back from a stop")
	}
	cur := s.curKey
	keys, err := s.collect(mode{kind: modeCollect, bps: true, thread: -1, in: -1, before: cur, stopAfter: cur.delivery})
	if err != nil {
		return Stop{}, err
	}
	if len(keys) > 0 {
		return s.gotoKey(keys[len(keys)-1], "breakpoint")
	}
	return s.gotoKey(key{delivery: 0, steps: -1}, "entry")
}
