// Package debug is a debugging session over the deterministic scheduler
// (package explore): it runs a program, a recording or a bundle one
// delivery at a time and stops before a delivery, at a statement (a line
// breakpoint, a step), at the entry of a fn or handler, or at a trap. A
// recording runs under its merged order, a bundle under its schedule, and
// a program alone as one seeded schedule, so every stop is the same every
// time, on both engines. When one consumer stops, every other is between
// two deliveries, so every instance's state can be read.
//
// Going back (StepBack, ReverseContinue) replays from the start to the
// previous stop: a stop is identified by its place in the run (the index
// of its delivery in the schedule, and the interpreter's step count within
// that delivery), which a replay reaches exactly.
//
// The terminal inspector (`hale replay … --at`) and `hale dap` are both
// clients of a Session. Resume calls are synchronous: the run goes on, on
// a goroutine of its own, until the next stop, while the caller waits.
package debug

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/explore"
	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/host"
	"github.com/hale-lang/hale/vm/value"
)

// Config says what to debug. Program is the .hl file (may be "" when
// Bundle embeds its sources). At most one of Recording (.halerec) and
// Bundle (.replay); neither = a deterministic run under the scheduler
// with Seed, Fixtures (dir), Inputs (file of stdin lines) as for `hale
// test`. Args, when given, are std::os::args of a deterministic run (in
// place of the fixtures' `args`); a recording or a bundle answers with
// the recorded arguments, so Args with one is refused.
type Config struct {
	Program, Recording, Bundle string
	Seed                       uint64
	Fixtures, Inputs           string
	Args                       []string
	Engine                     host.EngineKind // the zero value is wasm
	StopOnEntry                bool
	StopAt                     string    // a coordinate "C:N": stop before that delivery
	Output                     io.Writer // what the program prints (nil = discard)
	// Unverified admits a recording of another build of the program
	// (`hale replay --unverified`).
	Unverified bool
}

// Errors of Launch, for the exit codes of the command line.
var (
	// ErrUsage: a missing or unreadable file, a foreign artifact, bad
	// arguments.
	ErrUsage = errors.New("usage")
	// ErrCompile: the program does not compile.
	ErrCompile = errors.New("the program does not compile")
)

// IdentityError: the recording is of another build of the program (its
// build digest or shape hash differs). Config.Unverified admits it; the
// message says what differs, and each client adds how it sets that
// (`--unverified`, the launch argument `unverified`). It is an ErrUsage.
type IdentityError struct {
	Recording string
	Reason    string // what differs, without advice
	err       error
}

func (e *IdentityError) Error() string        { return e.Recording + ": refused: " + e.Reason }
func (e *IdentityError) Is(target error) bool { return target == ErrUsage }
func (e *IdentityError) Unwrap() error        { return e.err }

type usageError struct{ msg string }

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == ErrUsage }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// Thread is a consumer: ID = consumer id + 1; Name as `hale trace
// summary` lists it.
type Thread struct {
	ID   int
	Name string
}

// Breakpoint is the answer to a breakpoint request.
type Breakpoint struct {
	ID       int
	Verified bool
	Line     int    // the line used (only exact statement lines verify)
	Message  string // why not verified, e.g. `no statement on line 7 of app.hl`
}

// Stop is where a resume call ended.
type Stop struct {
	Reason      string // "entry", "breakpoint", "step", "exception", "pause"; "" when Ended
	Thread      int    // the thread that stopped (0 when Ended)
	Description string // e.g. `before delivery 1:3 (Ledger.on OrderPlaced)` or the trap message
	Coordinate  string // "C:N" of the delivery the thread is in or about to start
	Ended       bool   // the run is over: no more stops forward
	ExitCode    int    // when Ended: the code `hale run` would exit with
	Verdict     string // when Ended: quiescent, exit, trap, ...
}

// Frame is one Hale frame of a thread at a stop.
type Frame struct {
	ID        int    // unique within the current stop (reset at each resume)
	Name      string // "Ledger.on OrderPlaced", "fee", "Ledger.apply"
	File      string // absolute path of the source file
	Line, Col int
}

// Scope is a group of variables of a frame: "Locals", "State", "Message".
type Scope struct {
	Name string
	Ref  int
}

// Variable is one named value; Ref > 0 means it expands (struct fields,
// list items, map entries, enum payload).
type Variable struct {
	Name, Value, Type string
	Ref               int
}

// key identifies a stop in a run: the delivery's index in the schedule
// and the interpreter's steps within it (-1: before the delivery), and
// whether it is a trap stop.
type key struct {
	delivery int
	steps    int64
	trap     bool
}

func (k key) less(o key) bool {
	if k.delivery != o.delivery {
		return k.delivery < o.delivery
	}
	if k.steps != o.steps {
		return k.steps < o.steps
	}
	return !k.trap && o.trap
}

// Session is one debugging session. Its methods are called from one
// goroutine at a time, except Pause.
type Session struct {
	cfg   Config
	comp  *hale.Compiled
	img   *image.Image
	types []*value.Type
	files []string // absolute path of each image file
	sched *explore.Scheduler
	rec   *explore.Recording
	bund  *explore.Bundle
	fx    *explore.Fixtures

	// Breakpoints.
	nextBP  int
	lineBPs map[int][]lineBP // by image file
	fnBPs   []int            // functions whose entry stops
	traps   bool
	// bpVersion counts the changes of the breakpoints (a run re-arms).
	bpVersion int

	pausing atomic.Bool

	run     *run     // the run going on (nil before Start and after Close)
	history []key    // the stops of this timeline, in order
	reasons []string // and their reasons
	curKey  key      // the current stop's
	// order is the consumer of each delivery of the schedule, as far as
	// a run got (the same in every run).
	order   []int
	written int64 // bytes of output written (onceWriter)
	cur     *view // what the current stop shows
	last    Stop  // the current stop
	started bool
	closed  bool
}

type lineBP struct {
	id, line int
	pcs      []vm.BreakPC
}

// Launch prepares the session; the program has not run yet.
func Launch(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Recording != "" && cfg.Bundle != "" {
		return nil, usagef("give a recording or a bundle, not both")
	}
	s := &Session{cfg: cfg, lineBPs: map[int][]lineBP{}, nextBP: 1}
	var err error
	switch {
	case cfg.Bundle != "":
		data, rerr := os.ReadFile(cfg.Bundle)
		if rerr != nil {
			return nil, usagef("cannot read bundle: %v", rerr)
		}
		if s.bund, err = explore.DecodeBundle(data); err != nil {
			return nil, usagef("%s: %v", cfg.Bundle, err)
		}
		if cfg.Program != "" {
			s.comp, err = compileFile(cfg.Program)
		} else if s.comp, err = s.bund.Compile(); err != nil {
			err = fmt.Errorf("%w: the bundle's sources: %v", ErrCompile, err)
		}
	default:
		if cfg.Program == "" {
			return nil, usagef("no program to debug")
		}
		s.comp, err = compileFile(cfg.Program)
	}
	if err != nil {
		return nil, err
	}
	s.img = s.comp.Image
	s.types = vm.Types(s.img)
	base := filepath.Dir(cfg.Program)
	if cfg.Program == "" {
		base = filepath.Dir(cfg.Bundle)
	}
	if abs, err := filepath.Abs(base); err == nil {
		base = abs
	}
	for _, f := range s.img.Files {
		if filepath.IsAbs(f) {
			s.files = append(s.files, f)
		} else {
			s.files = append(s.files, filepath.Join(base, filepath.FromSlash(f)))
		}
	}
	if cfg.Recording != "" {
		data, rerr := artifact.ReadFile(cfg.Recording)
		if rerr != nil {
			return nil, usagef("cannot read recording: %v", rerr)
		}
		if err := replay.Replayable(s.img); err != nil {
			return nil, usagef("%v", err)
		}
		want := artifact.Identity{BuildDigest: s.comp.BuildDigest(), ShapeHash: s.comp.ShapeHash}
		ia, ierr := artifact.Index(data)
		art, _, err := artifact.AdmitIndexed(ia, ierr, want, cfg.Unverified)
		var refusal *artifact.RefusalError
		if errors.As(err, &refusal) && refusal.Kind == artifact.RefusedIdentity {
			return nil, &IdentityError{Recording: cfg.Recording, Reason: strings.TrimSuffix(refusal.Reason, artifact.UnverifiedAdvice), err: err}
		}
		if err != nil {
			return nil, usagef("%s: %v", cfg.Recording, err)
		}
		if s.rec, err = explore.ReadRecording(art, s.img); err != nil {
			return nil, usagef("%s: %v", cfg.Recording, err)
		}
	}
	if (cfg.Recording != "" || cfg.Bundle != "") && len(cfg.Args) > 0 {
		return nil, usagef("arguments are for a run without a recording or a bundle (a replay has the recorded ones)")
	}
	if cfg.Recording == "" && cfg.Bundle == "" {
		fx := &explore.Fixtures{}
		if cfg.Fixtures != "" {
			if fx, err = explore.LoadFixtures(cfg.Fixtures); err != nil {
				return nil, usagef("%v", err)
			}
		}
		if cfg.Inputs != "" {
			data, err := os.ReadFile(cfg.Inputs)
			if err != nil {
				return nil, usagef("cannot read inputs: %v", err)
			}
			text := strings.TrimSuffix(string(data), "\n")
			if text != "" {
				fx.Stdin = strings.Split(text, "\n")
			}
		}
		if len(cfg.Args) > 0 {
			fx.Args = cfg.Args
		}
		s.fx = fx
	}
	if cfg.StopAt != "" {
		if _, _, ok := parseCoord(cfg.StopAt); !ok {
			return nil, usagef("stop position %q is not a coordinate C:N (consumer C's delivery N)", cfg.StopAt)
		}
	}
	ecfg := explore.Config{Engine: cfg.Engine, Fixtures: s.fx}
	if s.bund != nil {
		ecfg.MaxSteps, ecfg.MaxHandlerSteps = s.bund.Limits.MaxSteps, s.bund.Limits.MaxHandlerSteps
	}
	if s.sched, err = explore.NewScheduler(ctx, s.img, ecfg); err != nil {
		return nil, err
	}
	return s, nil
}

func compileFile(path string) (*hale.Compiled, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, usagef("cannot read program: %v", err)
	}
	c, err := hale.CompileFile(path, hale.BuildOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCompile, err)
	}
	return c, nil
}

func parseCoord(s string) (c, n int, ok bool) {
	a, b, found := strings.Cut(s, ":")
	if !found {
		return 0, 0, false
	}
	c, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	return c, n, err1 == nil && err2 == nil && c >= 0 && n >= 0
}

// Image returns the program the session runs.
func (s *Session) Image() *image.Image { return s.img }

// CanStepBack: true for a recording or a bundle.
func (s *Session) CanStepBack() bool { return s.rec != nil || s.bund != nil }

// Threads are the consumers that handle deliveries.
func (s *Session) Threads() []Thread {
	kinds := [...]string{"main", "pool", "pinned", "async_io", "ingress"}
	var out []Thread
	for id, c := range s.img.Consumers {
		if len(c.Instances) == 0 {
			continue
		}
		kind := "consumer"
		if int(c.Kind) < len(kinds) {
			kind = kinds[c.Kind]
		}
		out = append(out, Thread{ID: id + 1, Name: fmt.Sprintf("%d %s (%s)", id, c.Name, kind)})
	}
	return out
}

// fileIndex finds the image file a client's path names: the same
// absolute path, or else the same logical path or base name.
func (s *Session) fileIndex(file string) int {
	abs, _ := filepath.Abs(file)
	for i, f := range s.files {
		if f == abs || f == file {
			return i
		}
	}
	slash := filepath.ToSlash(file)
	for i, f := range s.img.Files {
		if f == slash || strings.HasSuffix(slash, "/"+f) {
			return i
		}
	}
	return -1
}

// SetLineBreakpoints replaces the line breakpoints of file. A line
// verifies when a statement starts on it.
func (s *Session) SetLineBreakpoints(file string, lines []int) []Breakpoint {
	fi := s.fileIndex(file)
	out := make([]Breakpoint, 0, len(lines))
	var bps []lineBP
	for _, line := range lines {
		bp := Breakpoint{ID: s.nextBP, Line: line}
		s.nextBP++
		if fi < 0 {
			bp.Message = fmt.Sprintf("%s is not a file of the program", file)
			out = append(out, bp)
			continue
		}
		pcs := s.statementsOn(fi, line)
		if len(pcs) == 0 {
			bp.Message = fmt.Sprintf("no statement on line %d of %s", line, s.img.Files[fi])
		} else {
			bp.Verified = true
			bps = append(bps, lineBP{id: bp.ID, line: line, pcs: pcs})
		}
		out = append(out, bp)
	}
	if fi >= 0 {
		s.lineBPs[fi] = bps
	}
	s.bpVersion++
	return out
}

func (s *Session) statementsOn(file, line int) []vm.BreakPC {
	var pcs []vm.BreakPC
	for fn := range s.img.Funcs {
		for _, st := range s.img.Funcs[fn].Stmts {
			if int(st.File) == file && int(st.Line) == line {
				pcs = append(pcs, vm.BreakPC{Fn: fn, PC: int(st.PC)})
			}
		}
	}
	return pcs
}

// SetFunctionBreakpoints replaces the function breakpoints: a handler
// ("Ledger.on OrderPlaced", "Ledger.on start") or a fn ("fee",
// "Locus.fee"); each stops at the function's entry.
func (s *Session) SetFunctionBreakpoints(names []string) []Breakpoint {
	s.fnBPs = nil
	s.bpVersion++
	out := make([]Breakpoint, 0, len(names))
	for _, name := range names {
		bp := Breakpoint{ID: s.nextBP}
		s.nextBP++
		name = strings.TrimSpace(name)
		found := false
		for fn, f := range s.img.Funcs {
			if f.Kind == image.FuncInit || f.Kind == image.FuncSpawn || f.Kind == image.FuncGuard {
				continue
			}
			if f.Name == name || (f.Kind == image.FuncLocusFn && strings.HasSuffix(f.Name, "."+name)) {
				s.fnBPs = append(s.fnBPs, fn)
				found = true
				if bp.Line == 0 {
					bp.Line = int(f.Decl.Line)
				}
			}
		}
		if found {
			bp.Verified = true
		} else {
			bp.Message = fmt.Sprintf("no fn or handler %q in the program", name)
		}
		out = append(out, bp)
	}
	return out
}

// SetTrapBreakpoints turns the stops at traps on or off.
func (s *Session) SetTrapBreakpoints(on bool) { s.traps = on; s.bpVersion++ }

// breakpointPCs are the pcs every delivery arms.
func (s *Session) breakpointPCs() []vm.BreakPC {
	var pcs []vm.BreakPC
	for _, f := range sortedKeys(s.lineBPs) {
		for _, bp := range s.lineBPs[f] {
			pcs = append(pcs, bp.pcs...)
		}
	}
	for _, fn := range s.fnBPs {
		pcs = append(pcs, vm.BreakPC{Fn: fn, PC: 0})
	}
	return pcs
}

func (s *Session) isBreakpoint(fn, pc int) bool {
	for _, bfn := range s.fnBPs {
		if bfn == fn && pc == 0 {
			return true
		}
	}
	for _, bps := range s.lineBPs {
		for _, bp := range bps {
			for _, at := range bp.pcs {
				if at.Fn == fn && at.PC == pc {
					return true
				}
			}
		}
	}
	return false
}

// Pause makes the running resume call stop with reason "pause" at the
// next delivery boundary or statement break, whichever comes first; a
// handler looping without breakpoints arms stepping at its next poll
// (every vm.PollSteps steps) and stops at its next statement. It may be
// called from another goroutine. No effect when nothing runs.
func (s *Session) Pause() { s.pausing.Store(true) }

// Close ends the session and its run. It must not be called while a
// resume call runs on another goroutine: Pause, and wait for it to
// return, first.
func (s *Session) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.stopRun()
	s.sched.Close()
	return nil
}

// errQuit ends a run the session abandons.
var errQuit = errors.New("the debugger left the run")

// InstanceNames lists the program's instances in main order.
func (s *Session) Instances() []string {
	out := make([]string, len(s.img.Instances))
	for i, in := range s.img.Instances {
		out[i] = in.Name
	}
	return out
}

// State of any instance at the current stop, as canonical JSON.
func (s *Session) State(instance string) (json.RawMessage, error) {
	inst := -1
	for i, in := range s.img.Instances {
		if in.Name == instance {
			inst = i
		}
	}
	if inst < 0 {
		return nil, fmt.Errorf("no instance %q (instances: %s)", instance, strings.Join(s.Instances(), ", "))
	}
	tuple, err := s.stateTuple(inst)
	if err != nil {
		return nil, err
	}
	return replay.StateJSON(s.img, inst, tuple)
}
