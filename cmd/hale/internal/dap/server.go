// Package dap is `hale dap`: a Debug Adapter Protocol server (the protocol
// editors such as VS Code speak to debuggers) over a debug session of
// replay/debug. It launches a program, a recording or a bundle; answers
// threads (consumers), stack frames, scopes and variables; sets line,
// function and trap breakpoints; and steps, forwards and (for a recording
// or a bundle) backwards.
//
// The server answers every request in the order it arrives. A resume
// request (continue, next, stepIn, stepOut, stepBack, reverseContinue and
// configurationDone, which starts the run) is answered at once and runs
// the session in a goroutine; its `stopped` event (or `exited` and
// `terminated` at the end of the run) follows. While it runs, `pause`
// interrupts it and requests that read the stop are refused. A bad request
// gets an error response, never a crash of the server.
//
// Lines and columns are 1-based, as VS Code sends them.
package dap

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	godap "github.com/google/go-dap"

	"github.com/hale-lang/hale/vm/host"
)

// Options configure a server.
type Options struct {
	Launch LaunchFunc
	// Engine is used when launch arguments name none.
	Engine host.EngineKind
	// Dir resolves relative paths of launch arguments without `cwd`
	// ("" = the process's working directory).
	Dir string
}

// Serve speaks DAP on r and w until the client disconnects or r ends.
// It returns nil on a disconnect or at the end of r, and the error of a
// broken connection otherwise.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{ctx: ctx, opts: opts, w: w}
	defer s.shutdown()
	br := bufio.NewReader(r)
	for {
		data, err := godap.ReadBaseMessage(br)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading a DAP message: %w", err)
		}
		if s.handle(data) {
			return nil
		}
		if s.writeErr() != nil {
			return s.writeErr()
		}
	}
}

// server is one client's connection and its (at most one) session.
type server struct {
	ctx  context.Context
	opts Options

	wmu  sync.Mutex // one message at a time on w
	w    io.Writer
	seq  int
	werr error

	mu          sync.Mutex // guards the fields below
	sess        Debugger
	canStepBack bool
	noDebug     bool          // breakpoints are not armed
	started     bool          // configurationDone started the run
	running     bool          // a resume call runs in a goroutine
	done        chan struct{} // closed when that goroutine ends
	ended       bool          // the run is over (or terminated)
	threads     []Thread      // as of the last stop
	lastThread  int           // the thread of the last stop
}

// handle answers one message; it reports whether the session is over
// (a disconnect).
func (s *server) handle(data []byte) (disconnect bool) {
	msg, err := godap.DecodeProtocolMessage(data)
	if err != nil {
		s.refuseUndecodable(data, err)
		return false
	}
	req, ok := msg.(godap.RequestMessage)
	if !ok {
		return false // responses to reverse requests and events: none expected
	}
	r := req.GetRequest()
	defer func() {
		// A bug in the server must not end the debug session silently.
		if p := recover(); p != nil {
			s.fail(r, "internal error in hale dap: %v", p)
		}
	}()
	if err := s.dispatch(msg); err != nil {
		s.fail(r, "%s", err.Error())
	}
	_, disconnect = msg.(*godap.DisconnectRequest)
	return disconnect
}

// refuseUndecodable answers a request that go-dap could not decode (an
// unknown command, arguments of the wrong JSON type).
func (s *server) refuseUndecodable(data []byte, err error) {
	var head struct {
		Seq     int    `json:"seq"`
		Type    string `json:"type"`
		Command string `json:"command"`
	}
	if json.Unmarshal(data, &head) != nil || head.Type != "request" {
		s.sendOutput("console", fmt.Sprintf("hale dap: ignored a message that is no request: %v\n", err))
		return
	}
	r := &godap.Request{ProtocolMessage: godap.ProtocolMessage{Seq: head.Seq, Type: "request"}, Command: head.Command}
	var field *godap.DecodeProtocolMessageFieldError
	if errors.As(err, &field) && field.FieldName == "command" {
		s.fail(r, "hale dap does not support the request %q", head.Command)
		return
	}
	s.fail(r, "bad arguments for %q: %v", head.Command, err)
}

func (s *server) dispatch(msg godap.Message) error {
	switch m := msg.(type) {
	case *godap.InitializeRequest:
		s.send(&godap.InitializeResponse{Response: s.ok(&m.Request), Body: initialCapabilities()})
	case *godap.LaunchRequest:
		return s.onLaunch(m)
	case *godap.AttachRequest:
		return errors.New("hale dap cannot attach to a running program; use launch (with a recording or a bundle to debug a past run)")
	case *godap.SetBreakpointsRequest:
		return s.onSetBreakpoints(m)
	case *godap.SetFunctionBreakpointsRequest:
		return s.onSetFunctionBreakpoints(m)
	case *godap.SetExceptionBreakpointsRequest:
		return s.onSetExceptionBreakpoints(m)
	case *godap.ConfigurationDoneRequest:
		return s.onConfigurationDone(m)
	case *godap.ThreadsRequest:
		s.onThreads(m)
	case *godap.StackTraceRequest:
		return s.onStackTrace(m)
	case *godap.ScopesRequest:
		return s.onScopes(m)
	case *godap.VariablesRequest:
		return s.onVariables(m)
	case *godap.EvaluateRequest:
		return s.onEvaluate(m)
	case *godap.ContinueRequest:
		return s.resume(&m.Request, false, func(d Debugger) (Stop, error) { return d.Continue() })
	case *godap.NextRequest:
		t := m.Arguments.ThreadId
		return s.resume(&m.Request, false, func(d Debugger) (Stop, error) { return d.Next(t) })
	case *godap.StepInRequest:
		t := m.Arguments.ThreadId
		return s.resume(&m.Request, false, func(d Debugger) (Stop, error) { return d.StepIn(t) })
	case *godap.StepOutRequest:
		t := m.Arguments.ThreadId
		return s.resume(&m.Request, false, func(d Debugger) (Stop, error) { return d.StepOut(t) })
	case *godap.StepBackRequest:
		t := m.Arguments.ThreadId
		return s.resume(&m.Request, true, func(d Debugger) (Stop, error) { return d.StepBack(t) })
	case *godap.ReverseContinueRequest:
		return s.resume(&m.Request, true, func(d Debugger) (Stop, error) { return d.ReverseContinue() })
	case *godap.PauseRequest:
		s.mu.Lock()
		if s.running {
			s.sess.Pause()
		}
		s.mu.Unlock()
		s.send(&godap.PauseResponse{Response: s.ok(&m.Request)})
	case *godap.TerminateRequest:
		s.stopSession()
		s.send(&godap.TerminateResponse{Response: s.ok(&m.Request)})
		s.send(&godap.TerminatedEvent{Event: event("terminated")})
	case *godap.DisconnectRequest:
		s.stopSession()
		s.send(&godap.DisconnectResponse{Response: s.ok(&m.Request)})
	default:
		r, ok := msg.(godap.RequestMessage)
		if ok {
			return fmt.Errorf("hale dap does not support the request %q", r.GetRequest().Command)
		}
	}
	return nil
}

// initialCapabilities are announced in the initialize response. Step back
// is not among them: it depends on what is launched, and is announced by
// a capabilities event after launch (only for a recording or a bundle).
func initialCapabilities() godap.Capabilities {
	return godap.Capabilities{
		SupportsConfigurationDoneRequest: true,
		SupportsFunctionBreakpoints:      true,
		ExceptionBreakpointFilters: []godap.ExceptionBreakpointsFilter{
			{Filter: "trap", Label: "Traps", Description: "Stop at a trap, in the trapping frame, before the run ends"},
		},
		SupportsEvaluateForHovers: true,
		SupportsTerminateRequest:  true,
	}
}

// LaunchArgs are the `launch` request's arguments (the attributes of a
// launch configuration of type "hale" in VS Code).
type LaunchArgs struct {
	Program     string   `json:"program"`
	Recording   string   `json:"recording"`
	Bundle      string   `json:"bundle"`
	Seed        *uint64  `json:"seed"`
	Fixtures    string   `json:"fixtures"`
	Inputs      string   `json:"inputs"`
	Args        []string `json:"args"`
	StopOnEntry bool     `json:"stopOnEntry"`
	StopAt      string   `json:"stopAt"`
	Engine      string   `json:"engine"`
	Cwd         string   `json:"cwd"`
	// Unverified admits a recording of another build of the program
	// (`hale replay --unverified`).
	Unverified bool `json:"unverified"`
	// NoDebug is VS Code's "Run Without Debugging": the run does not stop.
	NoDebug bool `json:"noDebug"`
}

// config checks the launch arguments and turns them into a session
// Config, with paths made absolute. Every error names the attribute and
// the path it is about.
func (a LaunchArgs) config(defaultEngine host.EngineKind, dir string) (Config, error) {
	var cfg Config
	if a.Cwd != "" {
		dir = a.Cwd
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return cfg, fmt.Errorf("launch: cwd %s is not a directory", dir)
		}
	}
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return cfg, fmt.Errorf("launch: no working directory: %v", err)
		}
		dir = wd
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	cfg.Program, cfg.Recording, cfg.Bundle = abs(a.Program), abs(a.Recording), abs(a.Bundle)
	cfg.Fixtures, cfg.Inputs = abs(a.Fixtures), abs(a.Inputs)
	if cfg.Recording != "" && cfg.Bundle != "" {
		return cfg, errors.New("launch: give a recording or a bundle, not both")
	}
	if cfg.Program == "" && cfg.Bundle == "" {
		return cfg, errors.New("launch: no program (an .hl file) given")
	}
	replayed := cfg.Recording != "" || cfg.Bundle != ""
	if replayed && (a.Seed != nil || cfg.Fixtures != "" || cfg.Inputs != "" || len(a.Args) > 0) {
		return cfg, errors.New("launch: seed, fixtures, inputs and args are for a run without a recording or a bundle (a replay takes them from the artifact)")
	}
	for _, f := range []struct{ attr, path string }{
		{"program", cfg.Program}, {"recording", cfg.Recording}, {"bundle", cfg.Bundle}, {"inputs", cfg.Inputs},
	} {
		if f.path == "" {
			continue
		}
		st, err := os.Stat(f.path)
		if err != nil {
			return cfg, fmt.Errorf("launch: %s %s: %v", f.attr, f.path, describeStatError(err))
		}
		if st.IsDir() {
			return cfg, fmt.Errorf("launch: %s %s is a directory, not a file", f.attr, f.path)
		}
	}
	if cfg.Fixtures != "" {
		if st, err := os.Stat(cfg.Fixtures); err != nil || !st.IsDir() {
			return cfg, fmt.Errorf("launch: fixtures %s is not a directory", cfg.Fixtures)
		}
	}
	if a.Seed != nil {
		cfg.Seed = *a.Seed
	}
	if a.StopAt != "" && !isCoordinate(a.StopAt) {
		return cfg, fmt.Errorf("launch: stopAt %q is not a coordinate C:N (consumer C's delivery N, as hale trace dump shows them)", a.StopAt)
	}
	cfg.Args = a.Args
	cfg.Unverified = a.Unverified
	cfg.StopOnEntry = a.StopOnEntry && !a.NoDebug
	if !a.NoDebug {
		cfg.StopAt = a.StopAt
	}
	cfg.Engine = defaultEngine
	if a.Engine != "" {
		kind, err := host.ParseEngine(a.Engine)
		if err != nil {
			return cfg, fmt.Errorf("launch: engine: %v", err)
		}
		cfg.Engine = kind
	}
	return cfg, nil
}

// isCoordinate reports whether s is a coordinate C:N of two decimal
// numbers.
func isCoordinate(s string) bool {
	c, n, ok := strings.Cut(s, ":")
	digits := func(x string) bool {
		if x == "" || len(x) > 9 {
			return false
		}
		for _, r := range x {
			if r < '0' || r > '9' {
				return false
			}
		}
		return true
	}
	return ok && digits(c) && digits(n)
}

func describeStatError(err error) string {
	if errors.Is(err, os.ErrNotExist) {
		return "no such file"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func (s *server) onLaunch(m *godap.LaunchRequest) error {
	s.mu.Lock()
	launched := s.sess != nil
	s.mu.Unlock()
	if launched {
		return errors.New("launch: this session has already launched a program")
	}
	if s.opts.Launch == nil {
		return errors.New("launch: no debugger available")
	}
	var args LaunchArgs
	if len(m.Arguments) > 0 {
		if err := json.Unmarshal(m.Arguments, &args); err != nil {
			return fmt.Errorf("launch: bad arguments: %v", err)
		}
	}
	cfg, err := args.config(s.opts.Engine, s.opts.Dir)
	if err != nil {
		return err
	}
	cfg.Output = outputWriter{s}
	sess, err := s.opts.Launch(s.ctx, cfg)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.sess = sess
	s.noDebug = args.NoDebug
	s.canStepBack = sess.CanStepBack()
	s.threads = sess.Threads()
	s.mu.Unlock()
	s.send(&godap.LaunchResponse{Response: s.ok(&m.Request)})
	if s.canStepBack {
		s.send(&godap.CapabilitiesEvent{Event: event("capabilities"),
			Body: godap.CapabilitiesEventBody{Capabilities: godap.Capabilities{SupportsStepBack: true}}})
	}
	s.send(&godap.InitializedEvent{Event: event("initialized")})
	return nil
}

// session returns the launched session, or an error naming what the
// client must do first.
func (s *server) session() (Debugger, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil {
		return nil, errors.New("no program launched yet (send launch first)")
	}
	return s.sess, nil
}

// stoppedSession returns the session when it is stopped and can be read.
func (s *server) stoppedSession() (Debugger, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.sess == nil:
		return nil, errors.New("no program launched yet (send launch first)")
	case s.ended:
		return nil, errors.New("the run has ended")
	case !s.started:
		return nil, errors.New("the run has not started (send configurationDone first)")
	case s.running:
		return nil, errors.New("the program is running; pause it first")
	}
	return s.sess, nil
}

// notSet answers a breakpoint the session did not set (a run without
// debugging sets none).
const notSet = "not set: the program runs without debugging"

// debugging reports whether breakpoints are armed (not noDebug).
func (s *server) debugging() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.noDebug
}

func (s *server) onSetBreakpoints(m *godap.SetBreakpointsRequest) error {
	sess, err := s.session()
	if err != nil {
		return err
	}
	if s.isRunning() {
		return errors.New("breakpoints can be changed only while the program is stopped")
	}
	src := m.Arguments.Source
	if src.Path == "" {
		return errors.New("setBreakpoints: the source has no path")
	}
	lines := m.Arguments.Lines
	if len(m.Arguments.Breakpoints) > 0 {
		lines = make([]int, len(m.Arguments.Breakpoints))
		for i, b := range m.Arguments.Breakpoints {
			lines[i] = b.Line
		}
	}
	var got []Breakpoint
	if s.debugging() {
		got = sess.SetLineBreakpoints(src.Path, lines)
	}
	out := make([]godap.Breakpoint, len(lines))
	for i, line := range lines {
		b := godap.Breakpoint{Line: line, Source: &godap.Source{Name: filepath.Base(src.Path), Path: src.Path}}
		if i < len(got) {
			b.Id, b.Verified, b.Message = got[i].ID, got[i].Verified, got[i].Message
			if got[i].Line > 0 {
				b.Line = got[i].Line
			}
		} else {
			b.Message = notSet
		}
		out[i] = b
	}
	s.send(&godap.SetBreakpointsResponse{Response: s.ok(&m.Request),
		Body: godap.SetBreakpointsResponseBody{Breakpoints: out}})
	return nil
}

func (s *server) onSetFunctionBreakpoints(m *godap.SetFunctionBreakpointsRequest) error {
	sess, err := s.session()
	if err != nil {
		return err
	}
	if s.isRunning() {
		return errors.New("breakpoints can be changed only while the program is stopped")
	}
	names := make([]string, len(m.Arguments.Breakpoints))
	for i, b := range m.Arguments.Breakpoints {
		names[i] = b.Name
	}
	var got []Breakpoint
	if s.debugging() {
		got = sess.SetFunctionBreakpoints(names)
	}
	out := make([]godap.Breakpoint, len(names))
	for i := range names {
		if i < len(got) {
			out[i] = godap.Breakpoint{Id: got[i].ID, Verified: got[i].Verified, Message: got[i].Message, Line: got[i].Line}
		} else {
			out[i] = godap.Breakpoint{Message: notSet}
		}
	}
	s.send(&godap.SetFunctionBreakpointsResponse{Response: s.ok(&m.Request),
		Body: godap.SetFunctionBreakpointsResponseBody{Breakpoints: out}})
	return nil
}

func (s *server) onSetExceptionBreakpoints(m *godap.SetExceptionBreakpointsRequest) error {
	sess, err := s.session()
	if err != nil {
		return err
	}
	if s.isRunning() {
		return errors.New("breakpoints can be changed only while the program is stopped")
	}
	on := false
	out := make([]godap.Breakpoint, len(m.Arguments.Filters))
	for i, f := range m.Arguments.Filters {
		if f == "trap" {
			on = true
			out[i] = godap.Breakpoint{Verified: true}
		} else {
			out[i] = godap.Breakpoint{Message: fmt.Sprintf("unknown exception filter %q (hale dap has \"trap\")", f)}
		}
	}
	sess.SetTrapBreakpoints(on && s.debugging())
	s.send(&godap.SetExceptionBreakpointsResponse{Response: s.ok(&m.Request),
		Body: godap.SetExceptionBreakpointsResponseBody{Breakpoints: out}})
	return nil
}

func (s *server) onConfigurationDone(m *godap.ConfigurationDoneRequest) error {
	if _, err := s.session(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errors.New("configurationDone: the run has already started")
	}
	s.started = true
	s.mu.Unlock()
	s.send(&godap.ConfigurationDoneResponse{Response: s.ok(&m.Request)})
	s.runInBackground(func(d Debugger) (Stop, error) { return d.Start() })
	return nil
}

func (s *server) onThreads(m *godap.ThreadsRequest) {
	s.mu.Lock()
	var threads []Thread
	if !s.ended {
		threads = s.threads
	}
	s.mu.Unlock()
	out := make([]godap.Thread, len(threads))
	for i, t := range threads {
		out[i] = godap.Thread{Id: t.ID, Name: t.Name}
	}
	s.send(&godap.ThreadsResponse{Response: s.ok(&m.Request), Body: godap.ThreadsResponseBody{Threads: out}})
}

func (s *server) onStackTrace(m *godap.StackTraceRequest) error {
	sess, err := s.stoppedSession()
	if err != nil {
		return err
	}
	frames, err := sess.Stack(m.Arguments.ThreadId)
	if err != nil {
		return err
	}
	total := len(frames)
	start := min(max(m.Arguments.StartFrame, 0), total)
	end := total
	if m.Arguments.Levels > 0 {
		end = min(start+m.Arguments.Levels, total)
	}
	out := make([]godap.StackFrame, 0, end-start)
	for _, f := range frames[start:end] {
		sf := godap.StackFrame{Id: f.ID, Name: f.Name, Line: f.Line, Column: max(f.Col, 1)}
		if f.File != "" {
			sf.Source = &godap.Source{Name: filepath.Base(f.File), Path: f.File}
		}
		out = append(out, sf)
	}
	s.send(&godap.StackTraceResponse{Response: s.ok(&m.Request),
		Body: godap.StackTraceResponseBody{StackFrames: out, TotalFrames: total}})
	return nil
}

func (s *server) onScopes(m *godap.ScopesRequest) error {
	sess, err := s.stoppedSession()
	if err != nil {
		return err
	}
	scopes, err := sess.Scopes(m.Arguments.FrameId)
	if err != nil {
		return err
	}
	out := make([]godap.Scope, len(scopes))
	for i, sc := range scopes {
		out[i] = godap.Scope{Name: sc.Name, VariablesReference: sc.Ref}
		if sc.Name == "Locals" {
			out[i].PresentationHint = "locals"
		}
	}
	s.send(&godap.ScopesResponse{Response: s.ok(&m.Request), Body: godap.ScopesResponseBody{Scopes: out}})
	return nil
}

func (s *server) onVariables(m *godap.VariablesRequest) error {
	sess, err := s.stoppedSession()
	if err != nil {
		return err
	}
	if m.Arguments.VariablesReference <= 0 {
		return fmt.Errorf("variables: no variables under reference %d", m.Arguments.VariablesReference)
	}
	vars, err := sess.Variables(m.Arguments.VariablesReference)
	if err != nil {
		return err
	}
	if m.Arguments.Start > 0 || m.Arguments.Count > 0 {
		start := min(m.Arguments.Start, len(vars))
		end := len(vars)
		if m.Arguments.Count > 0 {
			end = min(start+m.Arguments.Count, len(vars))
		}
		vars = vars[start:end]
	}
	out := make([]godap.Variable, len(vars))
	for i, v := range vars {
		out[i] = godap.Variable{Name: v.Name, Value: v.Value, Type: v.Type, VariablesReference: v.Ref}
	}
	s.send(&godap.VariablesResponse{Response: s.ok(&m.Request), Body: godap.VariablesResponseBody{Variables: out}})
	return nil
}

func (s *server) onEvaluate(m *godap.EvaluateRequest) error {
	sess, err := s.stoppedSession()
	if err != nil {
		return err
	}
	expr := strings.TrimSpace(m.Arguments.Expression)
	if expr == "" {
		return errors.New("evaluate: nothing to evaluate")
	}
	if name, ok := strings.CutPrefix(expr, "state "); ok && m.Arguments.Context == "repl" {
		// The debug console's `state NAME`: any instance's state, as the
		// inspector's state command shows it.
		return s.evaluateState(m, sess, strings.TrimSpace(name))
	}
	frame := m.Arguments.FrameId
	if frame == 0 {
		// No frame selected (the debug console before a stackTrace):
		// the innermost frame of the thread that stopped.
		s.mu.Lock()
		thread := s.lastThread
		s.mu.Unlock()
		frames, err := sess.Stack(thread)
		if err != nil || len(frames) == 0 {
			return fmt.Errorf("evaluate %s: no frame to read it in", expr)
		}
		frame = frames[0].ID
	}
	v, err := sess.Evaluate(frame, expr)
	if err != nil {
		return err
	}
	s.send(&godap.EvaluateResponse{Response: s.ok(&m.Request),
		Body: godap.EvaluateResponseBody{Result: v.Value, Type: v.Type, VariablesReference: v.Ref}})
	return nil
}

func (s *server) evaluateState(m *godap.EvaluateRequest, sess Debugger, instance string) error {
	state, err := sess.State(instance)
	if err != nil {
		return fmt.Errorf("state %s: %v (instances: %s)", instance, err, strings.Join(sess.Instances(), ", "))
	}
	s.send(&godap.EvaluateResponse{Response: s.ok(&m.Request),
		Body: godap.EvaluateResponseBody{Result: string(state)}})
	return nil
}

func (s *server) isRunning() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// resume answers a resume request at once and runs it in a goroutine;
// the stop is announced by an event.
func (s *server) resume(r *godap.Request, backwards bool, run func(Debugger) (Stop, error)) error {
	if _, err := s.stoppedSession(); err != nil {
		return err
	}
	s.mu.Lock()
	canStepBack := s.canStepBack
	s.mu.Unlock()
	if backwards && !canStepBack {
		return fmt.Errorf("%s needs a recording or a bundle: a run launched from a program alone cannot go back", r.Command)
	}
	switch r.Command {
	case "continue":
		s.send(&godap.ContinueResponse{Response: s.ok(r), Body: godap.ContinueResponseBody{AllThreadsContinued: true}})
	default:
		resp := s.ok(r)
		s.send(&resp)
	}
	s.runInBackground(run)
	return nil
}

// runInBackground runs one resume call of the session in a goroutine and
// reports where it stopped.
func (s *server) runInBackground(run func(Debugger) (Stop, error)) {
	s.mu.Lock()
	sess := s.sess
	s.running = true
	done := make(chan struct{})
	s.done = done
	s.mu.Unlock()
	go func() {
		defer close(done)
		stop, err := s.runGuarded(sess, run)
		s.mu.Lock()
		s.running = false
		if s.ended { // terminated while it ran: nothing more to say
			s.mu.Unlock()
			return
		}
		if err == nil && !stop.Ended {
			s.threads = sess.Threads()
			s.lastThread = stop.Thread
		}
		s.mu.Unlock()
		if err != nil {
			// The session stays where it was: say why and show the stop again.
			s.sendOutput("stderr", "hale: "+err.Error()+"\n")
			s.mu.Lock()
			thread := s.lastThread
			s.mu.Unlock()
			s.send(&godap.StoppedEvent{Event: event("stopped"), Body: godap.StoppedEventBody{
				Reason: "step", Description: err.Error(), Text: err.Error(), ThreadId: thread, AllThreadsStopped: true}})
			return
		}
		s.report(stop)
	}()
}

// runGuarded runs a resume call, turning a panic into an error so the
// client hears about it.
func (s *server) runGuarded(sess Debugger, run func(Debugger) (Stop, error)) (stop Stop, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error in hale dap: %v", p)
		}
	}()
	return run(sess)
}

// report sends the events of a stop: `stopped`, or `exited` and
// `terminated` at the end of the run.
func (s *server) report(stop Stop) {
	if stop.Ended {
		s.mu.Lock()
		s.ended = true
		s.mu.Unlock()
		if stop.Description != "" {
			// How a failed run ended (a trap, the step cap), as `hale run`
			// says it on stderr.
			s.sendOutput("stderr", stop.Description+"\n")
		}
		s.send(&godap.ExitedEvent{Event: event("exited"), Body: godap.ExitedEventBody{ExitCode: stop.ExitCode}})
		s.send(&godap.TerminatedEvent{Event: event("terminated")})
		return
	}
	s.send(&godap.StoppedEvent{Event: event("stopped"), Body: godap.StoppedEventBody{
		Reason:            stop.Reason,
		Description:       stop.Description,
		ThreadId:          stop.Thread,
		AllThreadsStopped: true,
	}})
}

// stopSession pauses a running resume call, waits for it (a while) and
// closes the session. Used by terminate and disconnect.
func (s *server) stopSession() {
	s.mu.Lock()
	sess, running, done := s.sess, s.running, s.done
	s.ended = true
	s.sess = nil
	s.mu.Unlock()
	if sess == nil {
		return
	}
	if running {
		sess.Pause()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			s.sendOutput("console", "hale dap: the program did not pause within 10 s; closing it anyway\n")
		}
	}
	sess.Close()
}

// shutdown closes what is left when the connection ends.
func (s *server) shutdown() { s.stopSession() }

func (s *server) fail(r *godap.Request, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.send(&godap.ErrorResponse{
		Response: godap.Response{ProtocolMessage: godap.ProtocolMessage{Type: "response"},
			RequestSeq: r.Seq, Success: false, Command: r.Command, Message: msg},
		Body: godap.ErrorResponseBody{Error: &godap.ErrorMessage{Id: 1, Format: msg, ShowUser: true}},
	})
}

func (s *server) ok(r *godap.Request) godap.Response {
	return godap.Response{ProtocolMessage: godap.ProtocolMessage{Type: "response"},
		RequestSeq: r.Seq, Success: true, Command: r.Command}
}

func event(name string) godap.Event {
	return godap.Event{ProtocolMessage: godap.ProtocolMessage{Type: "event"}, Event: name}
}

func (s *server) sendOutput(category, text string) {
	s.send(&godap.OutputEvent{Event: event("output"), Body: godap.OutputEventBody{Category: category, Output: text}})
}

// send writes one message with the next sequence number. Messages come
// from the request loop and from resume goroutines (events, output).
func (s *server) send(m godap.Message) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.werr != nil {
		return
	}
	s.seq++
	reflect.ValueOf(m).Elem().FieldByName("Seq").SetInt(int64(s.seq))
	if err := godap.WriteProtocolMessage(s.w, m); err != nil {
		s.werr = err
	}
}

func (s *server) writeErr() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.werr
}

// outputWriter turns what the program prints into `output` events.
type outputWriter struct{ s *server }

func (o outputWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		o.s.sendOutput("stdout", string(p))
	}
	return len(p), nil
}

// ServeListener accepts connections on l and serves each, as its own
// session, until ctx ends or l is closed.
func ServeListener(ctx context.Context, l net.Listener, opts Options) error {
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			connCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			context.AfterFunc(connCtx, func() { conn.Close() })
			Serve(connCtx, conn, conn, opts)
		}()
	}
}
