package dap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	godap "github.com/google/go-dap"
)

// fakeDebugger is a scripted session for the protocol tests: a run is a
// list of stops; Continue and the steps walk it, StepBack walks back.
type fakeDebugger struct {
	cfg      Config
	stepBack bool

	mu       sync.Mutex
	calls    []string
	pos      int // index into stops of the current stop
	stops    []Stop
	paused   chan struct{} // Continue blocks until Pause when block is set
	block    bool
	trapsOn  bool
	panicsIn string // a method that panics (for the recovery tests)
}

func newFake(cfg Config) *fakeDebugger {
	return &fakeDebugger{
		cfg:      cfg,
		stepBack: cfg.Recording != "" || cfg.Bundle != "",
		paused:   make(chan struct{}, 1),
		stops: []Stop{
			{Reason: "entry", Thread: 1, Description: "before delivery 0:0", Coordinate: "0:0"},
			{Reason: "breakpoint", Thread: 2, Description: "line 5", Coordinate: "1:0"},
			{Reason: "step", Thread: 2, Coordinate: "1:0"},
			{Reason: "exception", Thread: 2, Description: "division by zero", Coordinate: "1:1"},
			{Ended: true, ExitCode: 3, Verdict: "trap"},
		},
	}
}

func (f *fakeDebugger) record(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	if f.panicsIn != "" && strings.HasPrefix(f.calls[len(f.calls)-1], f.panicsIn) {
		panic("fake failure in " + f.panicsIn)
	}
}

func (f *fakeDebugger) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeDebugger) CanStepBack() bool { return f.stepBack }
func (f *fakeDebugger) Threads() []Thread {
	return []Thread{{ID: 1, Name: "0 main (main)"}, {ID: 2, Name: "1 Worker (pinned)"}}
}
func (f *fakeDebugger) SetLineBreakpoints(file string, lines []int) []Breakpoint {
	f.record("SetLineBreakpoints(%s,%v)", filepath.Base(file), lines)
	out := make([]Breakpoint, len(lines))
	for i, l := range lines {
		if l == 7 {
			out[i] = Breakpoint{ID: i + 1, Line: l, Message: "no statement on line 7 of app.hl"}
		} else {
			out[i] = Breakpoint{ID: i + 1, Verified: true, Line: l}
		}
	}
	return out
}
func (f *fakeDebugger) SetFunctionBreakpoints(names []string) []Breakpoint {
	f.record("SetFunctionBreakpoints(%v)", names)
	out := make([]Breakpoint, len(names))
	for i, n := range names {
		if n == "nope" {
			out[i] = Breakpoint{ID: 10 + i, Message: "no handler or fn named nope"}
		} else {
			out[i] = Breakpoint{ID: 10 + i, Verified: true}
		}
	}
	return out
}
func (f *fakeDebugger) SetTrapBreakpoints(on bool) {
	f.record("SetTrapBreakpoints(%v)", on)
	f.trapsOn = on
}
func (f *fakeDebugger) Start() (Stop, error) {
	f.record("Start")
	fmt.Fprint(f.cfg.Output, "hello from the program\n")
	return f.stops[f.pos], nil
}
func (f *fakeDebugger) forward() (Stop, error) {
	if f.pos < len(f.stops)-1 {
		f.pos++
	}
	return f.stops[f.pos], nil
}
func (f *fakeDebugger) Continue() (Stop, error) {
	f.record("Continue")
	if f.block {
		<-f.paused
		return Stop{Reason: "pause", Thread: 1, Coordinate: "0:1"}, nil
	}
	return f.forward()
}
func (f *fakeDebugger) Next(thread int) (Stop, error) {
	f.record("Next(%d)", thread)
	return f.forward()
}
func (f *fakeDebugger) StepIn(thread int) (Stop, error) {
	f.record("StepIn(%d)", thread)
	return f.forward()
}
func (f *fakeDebugger) StepOut(thread int) (Stop, error) {
	f.record("StepOut(%d)", thread)
	return f.forward()
}
func (f *fakeDebugger) StepBack(thread int) (Stop, error) {
	f.record("StepBack(%d)", thread)
	if f.pos == 0 {
		return Stop{}, errors.New("no stop before this one")
	}
	f.pos--
	return f.stops[f.pos], nil
}
func (f *fakeDebugger) ReverseContinue() (Stop, error) {
	f.record("ReverseContinue")
	f.pos = 0
	return f.stops[0], nil
}
func (f *fakeDebugger) Pause() {
	f.record("Pause")
	select {
	case f.paused <- struct{}{}:
	default:
	}
}
func (f *fakeDebugger) Stack(thread int) ([]Frame, error) {
	f.record("Stack(%d)", thread)
	if thread != 2 {
		return nil, nil
	}
	return []Frame{
		{ID: 100, Name: "fee", File: "/src/app.hl", Line: 12, Col: 5},
		{ID: 101, Name: "Worker.on Job", File: "/src/app.hl", Line: 20, Col: 3},
	}, nil
}
func (f *fakeDebugger) Scopes(frameID int) ([]Scope, error) {
	f.record("Scopes(%d)", frameID)
	if frameID != 100 && frameID != 101 {
		return nil, fmt.Errorf("no frame %d", frameID)
	}
	return []Scope{{Name: "Locals", Ref: 1}, {Name: "State", Ref: 2}, {Name: "Message", Ref: 3}}, nil
}
func (f *fakeDebugger) Variables(ref int) ([]Variable, error) {
	f.record("Variables(%d)", ref)
	switch ref {
	case 1:
		return []Variable{{Name: "amount", Value: "40", Type: "int"}, {Name: "order", Value: "Order{…}", Type: "Order", Ref: 4}}, nil
	case 4:
		return []Variable{{Name: "id", Value: `"a1"`, Type: "string"}, {Name: "amount", Value: "40", Type: "int"}}, nil
	}
	return nil, fmt.Errorf("no variables under %d", ref)
}
func (f *fakeDebugger) Evaluate(frameID int, expr string) (Variable, error) {
	f.record("Evaluate(%d,%s)", frameID, expr)
	if expr == "order.amount" {
		return Variable{Name: expr, Value: "40", Type: "int"}, nil
	}
	return Variable{}, fmt.Errorf("no name %s in frame fee", expr)
}
func (f *fakeDebugger) Instances() []string { return []string{"main", "Worker"} }
func (f *fakeDebugger) State(instance string) (json.RawMessage, error) {
	if instance != "Worker" {
		return nil, fmt.Errorf("no instance %s", instance)
	}
	return json.RawMessage(`{"total":40}`), nil
}
func (f *fakeDebugger) Close() error { f.record("Close"); return nil }

// fakeLaunch returns options whose launch makes a fake (kept in *got).
func fakeLaunch(got **fakeDebugger, setup func(*fakeDebugger)) Options {
	return Options{Launch: func(ctx context.Context, cfg Config) (Debugger, error) {
		f := newFake(cfg)
		if setup != nil {
			setup(f)
		}
		*got = f
		return f, nil
	}}
}

// files makes an app.hl and a run.halerec in a temporary directory.
func files(t *testing.T) (dir, program, recording string) {
	dir = t.TempDir()
	program = filepath.Join(dir, "app.hl")
	recording = filepath.Join(dir, "run.halerec")
	for _, p := range []string{program, recording} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return
}

func TestInitializeCapabilities(t *testing.T) {
	c := startServer(t, Options{})
	caps := c.initialize()
	if !caps.SupportsConfigurationDoneRequest || !caps.SupportsFunctionBreakpoints ||
		!caps.SupportsEvaluateForHovers || !caps.SupportsTerminateRequest {
		t.Errorf("capabilities %+v lack one of configurationDone, functionBreakpoints, evaluateForHovers, terminate", caps)
	}
	if caps.SupportsStepBack {
		t.Errorf("initialize announces supportsStepBack; it must come only after launch of a recording or bundle")
	}
	if len(caps.ExceptionBreakpointFilters) != 1 || caps.ExceptionBreakpointFilters[0].Filter != "trap" ||
		caps.ExceptionBreakpointFilters[0].Label != "Traps" {
		t.Errorf("exception filters %+v, want one {trap, Traps}", caps.ExceptionBreakpointFilters)
	}
	c.disconnect()
}

// TestFakeSessionRecording drives every request through a session that can
// step back, checking what the server asks of the session and what it
// tells the client.
func TestFakeSessionRecording(t *testing.T) {
	var f *fakeDebugger
	c := startServer(t, fakeLaunch(&f, nil))
	dir, program, recording := files(t)
	c.initialize()
	caps := c.launch(map[string]any{"program": "app.hl", "recording": "run.halerec", "cwd": dir, "stopOnEntry": true, "stopAt": "1:12", "engine": "native"})
	if caps == nil || !caps.SupportsStepBack {
		t.Fatalf("no capabilities event with supportsStepBack after launching a recording: %+v", caps)
	}
	if f.cfg.Program != program || f.cfg.Recording != recording || !f.cfg.StopOnEntry || f.cfg.StopAt != "1:12" || f.cfg.Engine.String() != "native" {
		t.Errorf("session config %+v: want absolute paths, stopOnEntry and the native engine", f.cfg)
	}

	bps := c.setBreakpoints(program, 5, 7)
	if len(bps) != 2 || !bps[0].Verified || bps[0].Line != 5 || bps[1].Verified ||
		bps[1].Message != "no statement on line 7 of app.hl" || bps[0].Source == nil || bps[0].Source.Path != program {
		t.Errorf("setBreakpoints answered %+v", bps)
	}
	fbps := c.call("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "Worker.on Job"}, {"name": "nope"}}}).(*godap.SetFunctionBreakpointsResponse).Body.Breakpoints
	if len(fbps) != 2 || !fbps[0].Verified || fbps[1].Verified || fbps[1].Message == "" {
		t.Errorf("setFunctionBreakpoints answered %+v", fbps)
	}
	c.call("setExceptionBreakpoints", map[string]any{"filters": []string{"trap"}})
	if msg := c.callErr("stackTrace", map[string]any{"threadId": 1}); !strings.Contains(msg, "configurationDone") {
		t.Errorf("stackTrace before the run started: %q", msg)
	}
	c.call("configurationDone", nil)
	entry := c.stopped("entry")
	if entry.ThreadId != 1 {
		t.Errorf("entry stop on thread %d, want 1", entry.ThreadId)
	}
	if got := c.stdout(); got != "hello from the program\n" {
		t.Errorf("stdout output events %q", got)
	}
	threads := c.threads()
	if len(threads) != 2 || threads[1].Id != 2 || threads[1].Name != "1 Worker (pinned)" {
		t.Errorf("threads %+v", threads)
	}

	c.call("continue", map[string]any{"threadId": 1})
	bp := c.stopped("breakpoint")
	if bp.ThreadId != 2 {
		t.Errorf("breakpoint stop on thread %d", bp.ThreadId)
	}
	frames := c.stack(2)
	if len(frames) != 2 || frames[0].Name != "fee" || frames[0].Line != 12 || frames[0].Column != 5 ||
		frames[0].Source == nil || frames[0].Source.Path != "/src/app.hl" || frames[0].Source.Name != "app.hl" {
		t.Errorf("stack %+v", frames)
	}
	paged := c.call("stackTrace", map[string]any{"threadId": 2, "startFrame": 1, "levels": 5}).(*godap.StackTraceResponse).Body
	if len(paged.StackFrames) != 1 || paged.StackFrames[0].Id != 101 || paged.TotalFrames != 2 {
		t.Errorf("stack from frame 1: %+v", paged)
	}
	scopes := c.scopes(100)
	if len(scopes) != 3 || scopes[0].Name != "Locals" || scopes[1].Name != "State" || scopes[2].Name != "Message" {
		t.Errorf("scopes %+v", scopes)
	}
	locals := c.variables(scopes[0].VariablesReference)
	if len(locals) != 2 || locals[1].Name != "order" || locals[1].VariablesReference != 4 {
		t.Fatalf("locals %+v", locals)
	}
	fields := c.variables(locals[1].VariablesReference)
	if len(fields) != 2 || fields[0].Value != `"a1"` || fields[0].Type != "string" {
		t.Errorf("order's fields %+v", fields)
	}
	if ev := c.evaluate(100, "order.amount"); ev.Result != "40" || ev.Type != "int" {
		t.Errorf("evaluate order.amount = %+v", ev)
	}
	if msg := c.callErr("evaluate", map[string]any{"frameId": 100, "expression": "zz"}); msg != "no name zz in frame fee" {
		t.Errorf("evaluate of an unknown name: %q", msg)
	}
	// Without a frame: the innermost frame of the stopped thread.
	if ev := c.call("evaluate", map[string]any{"expression": "order.amount", "context": "repl"}).(*godap.EvaluateResponse).Body; ev.Result != "40" {
		t.Errorf("evaluate without a frame: %+v", ev)
	}

	// The debug console's `state NAME`.
	if ev := c.call("evaluate", map[string]any{"expression": "state Worker", "context": "repl"}).(*godap.EvaluateResponse).Body; ev.Result != `{"total":40}` {
		t.Errorf("state Worker in the console: %+v", ev)
	}
	if msg := c.callErr("evaluate", map[string]any{"expression": "state Nobody", "context": "repl"}); msg != "state Nobody: no instance Nobody (instances: main, Worker)" {
		t.Errorf("state of an unknown instance: %q", msg)
	}

	c.call("next", map[string]any{"threadId": 2})
	c.stopped("step")
	c.call("stepBack", map[string]any{"threadId": 2})
	c.stopped("breakpoint")
	c.call("stepIn", map[string]any{"threadId": 2})
	c.stopped("step")
	c.call("reverseContinue", map[string]any{"threadId": 2})
	c.stopped("entry")
	c.call("stepBack", map[string]any{"threadId": 1})
	// The session refuses (no stop before the first): the client hears why
	// and sees the same stop again.
	again := c.event("stopped").(*godap.StoppedEvent).Body
	if again.Text != "no stop before this one" || again.ThreadId != 1 {
		t.Errorf("stepBack at the first stop: %+v", again)
	}
	c.call("continue", map[string]any{"threadId": 1})
	c.stopped("breakpoint")
	c.call("stepOut", map[string]any{"threadId": 2})
	c.stopped("step")
	c.call("continue", map[string]any{"threadId": 2})
	trap := c.stopped("exception")
	if trap.Description != "division by zero" {
		t.Errorf("exception stop %+v", trap)
	}
	c.call("continue", map[string]any{"threadId": 2})
	if code := c.exited(); code != 3 {
		t.Errorf("exit code %d, want 3", code)
	}
	if msg := c.callErr("continue", map[string]any{"threadId": 1}); msg != "the run has ended" {
		t.Errorf("continue after the end: %q", msg)
	}
	if th := c.threads(); len(th) != 0 {
		t.Errorf("threads after the end: %+v", th)
	}
	c.disconnect()

	want := []string{
		"SetLineBreakpoints(app.hl,[5 7])", "SetFunctionBreakpoints([Worker.on Job nope])", "SetTrapBreakpoints(true)",
		"Start", "Continue", "Stack(2)", "Stack(2)", "Scopes(100)", "Variables(1)", "Variables(4)",
		"Evaluate(100,order.amount)", "Evaluate(100,zz)", "Stack(2)", "Evaluate(100,order.amount)",
		"Next(2)", "StepBack(2)", "StepIn(2)", "ReverseContinue", "StepBack(1)", "Continue", "StepOut(2)",
		"Continue", "Continue", "Close",
	}
	if got := f.called(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("session calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFakeSessionProgram: a run from a program alone cannot step back;
// nothing announces it and the requests are refused.
func TestFakeSessionProgram(t *testing.T) {
	var f *fakeDebugger
	c := startServer(t, fakeLaunch(&f, nil))
	dir, _, _ := files(t)
	c.initialize()
	if caps := c.launch(map[string]any{"program": filepath.Join(dir, "app.hl"), "seed": 7, "args": []string{"a", "b"}}); caps != nil {
		t.Errorf("capabilities event after launching a program: %+v", caps)
	}
	if f.cfg.Seed != 7 || strings.Join(f.cfg.Args, ",") != "a,b" {
		t.Errorf("config %+v", f.cfg)
	}
	c.call("configurationDone", nil)
	c.stopped("entry")
	for _, cmd := range []string{"stepBack", "reverseContinue"} {
		if msg := c.callErr(cmd, map[string]any{"threadId": 1}); !strings.Contains(msg, "needs a recording or a bundle") {
			t.Errorf("%s on a program run: %q", cmd, msg)
		}
	}
	c.call("terminate", nil)
	c.event("terminated")
	c.disconnect()
	if got := f.called(); got[len(got)-1] != "Close" {
		t.Errorf("the session was not closed: %v", got)
	}
}

func TestLaunchErrors(t *testing.T) {
	dir, program, recording := files(t)
	missing := filepath.Join(dir, "nope.hl")
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"program": missing}, "launch: program " + missing + ": no such file"},
		{map[string]any{"program": program, "recording": filepath.Join(dir, "x.halerec")}, "launch: recording " + filepath.Join(dir, "x.halerec") + ": no such file"},
		{map[string]any{"program": program, "bundle": dir}, "launch: bundle " + dir + " is a directory, not a file"},
		{map[string]any{"program": program, "recording": recording, "bundle": recording}, "launch: give a recording or a bundle, not both"},
		{map[string]any{}, "launch: no program (an .hl file) given"},
		{map[string]any{"program": program, "recording": recording, "seed": 3}, "launch: seed, fixtures, inputs and args are for a run without a recording or a bundle"},
		{map[string]any{"program": program, "recording": recording, "args": []string{"x"}}, "launch: seed, fixtures, inputs and args are for a run without a recording or a bundle"},
		{map[string]any{"program": program, "fixtures": program}, "launch: fixtures " + program + " is not a directory"},
		{map[string]any{"program": program, "engine": "jit"}, `launch: engine: unknown engine "jit" (want wasm or native)`},
		{map[string]any{"program": program, "seed": "x"}, "launch: bad arguments"},
		{map[string]any{"program": "app.hl", "cwd": missing}, "launch: cwd " + missing + " is not a directory"},
		{map[string]any{"program": program, "stopAt": "1-2"}, `launch: stopAt "1-2" is not a coordinate C:N`},
		{map[string]any{"program": program, "stopAt": "1:"}, `launch: stopAt "1:" is not a coordinate C:N`},
	} {
		c := startServer(t, Options{Launch: func(context.Context, Config) (Debugger, error) {
			t.Fatalf("launched with bad arguments %v", tc.args)
			return nil, nil
		}})
		c.initialize()
		if msg := c.callErr("launch", tc.args); !strings.HasPrefix(msg, tc.want) {
			t.Errorf("launch %v: %q, want it to start with %q", tc.args, msg, tc.want)
		}
		c.disconnect()
	}

	// An error of the session's own launch reaches the client as it is.
	c := startServer(t, Options{Launch: func(context.Context, Config) (Debugger, error) {
		return nil, fmt.Errorf("%s:3:1: unknown name x", program)
	}})
	c.initialize()
	if msg := c.callErr("launch", map[string]any{"program": program}); msg != program+":3:1: unknown name x" {
		t.Errorf("launch error %q", msg)
	}
	c.disconnect()
}

// TestNoDebug: Run Without Debugging arms no breakpoint and does not stop
// on entry.
func TestNoDebug(t *testing.T) {
	var f *fakeDebugger
	c := startServer(t, fakeLaunch(&f, nil))
	_, program, _ := files(t)
	c.initialize()
	c.launch(map[string]any{"program": program, "noDebug": true, "stopOnEntry": true, "stopAt": "1:2"})
	if f.cfg.StopOnEntry || f.cfg.StopAt != "" {
		t.Errorf("config %+v: a run without debugging must not stop", f.cfg)
	}
	if bps := c.setBreakpoints(program, 5); len(bps) != 1 || bps[0].Verified || bps[0].Message != notSet {
		t.Errorf("breakpoints without debugging: %+v", bps)
	}
	c.call("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "fee"}}})
	c.call("setExceptionBreakpoints", map[string]any{"filters": []string{"trap"}})
	for _, call := range f.called() {
		if strings.HasPrefix(call, "SetLine") || strings.HasPrefix(call, "SetFunction") || call == "SetTrapBreakpoints(true)" {
			t.Errorf("armed without debugging: %s", call)
		}
	}
	c.disconnect()
}

// TestPause: pause interrupts a running continue; requests that read the
// stop are refused while it runs.
func TestPause(t *testing.T) {
	var f *fakeDebugger
	c := startServer(t, fakeLaunch(&f, func(f *fakeDebugger) { f.block = true }))
	_, program, _ := files(t)
	c.initialize()
	c.launch(map[string]any{"program": program})
	c.call("configurationDone", nil)
	c.stopped("entry")
	c.call("continue", map[string]any{"threadId": 1})
	if msg := c.callErr("stackTrace", map[string]any{"threadId": 1}); msg != "the program is running; pause it first" {
		t.Errorf("stackTrace while running: %q", msg)
	}
	if msg := c.callErr("next", map[string]any{"threadId": 1}); msg != "the program is running; pause it first" {
		t.Errorf("next while running: %q", msg)
	}
	if th := c.threads(); len(th) != 2 {
		t.Errorf("threads while running (the last stop's): %+v", th)
	}
	c.call("pause", map[string]any{"threadId": 1})
	if p := c.stopped("pause"); p.ThreadId != 1 {
		t.Errorf("pause stop %+v", p)
	}
	c.call("pause", map[string]any{"threadId": 1}) // nothing runs: no effect, no error
	c.disconnect()
}

// TestBadRequests: whatever the client sends, the server answers with an
// error response and goes on serving.
func TestBadRequests(t *testing.T) {
	var f *fakeDebugger
	c := startServer(t, fakeLaunch(&f, func(f *fakeDebugger) { f.panicsIn = "Variables" }))
	_, program, _ := files(t)
	c.initialize()
	if msg := c.callErr("stackTrace", map[string]any{"threadId": 1}); !strings.Contains(msg, "launch first") {
		t.Errorf("stackTrace before launch: %q", msg)
	}
	if msg := c.callErr("setBreakpoints", map[string]any{"source": map[string]any{"path": program}}); !strings.Contains(msg, "launch first") {
		t.Errorf("setBreakpoints before launch: %q", msg)
	}
	if msg := c.callErr("frobnicate", nil); msg != `hale dap does not support the request "frobnicate"` {
		t.Errorf("unknown request: %q", msg)
	}
	if msg := c.callErr("readMemory", map[string]any{"memoryReference": "0", "count": 1}); msg != `hale dap does not support the request "readMemory"` {
		t.Errorf("unsupported request: %q", msg)
	}
	if msg := c.callErr("attach", map[string]any{}); !strings.Contains(msg, "cannot attach") {
		t.Errorf("attach: %q", msg)
	}
	if msg := c.callErr("stackTrace", json.RawMessage(`{"threadId":"one"}`)); !strings.HasPrefix(msg, `bad arguments for "stackTrace"`) {
		t.Errorf("arguments of the wrong type: %q", msg)
	}
	if msg := c.callErr("configurationDone", nil); !strings.Contains(msg, "launch first") {
		t.Errorf("configurationDone before launch: %q", msg)
	}
	c.launch(map[string]any{"program": program})
	if msg := c.callErr("launch", map[string]any{"program": program}); !strings.Contains(msg, "already launched") {
		t.Errorf("second launch: %q", msg)
	}
	if msg := c.callErr("setBreakpoints", map[string]any{"source": map[string]any{"name": "app.hl"}}); !strings.Contains(msg, "no path") {
		t.Errorf("setBreakpoints without a path: %q", msg)
	}
	c.call("configurationDone", nil)
	c.stopped("entry")
	if msg := c.callErr("configurationDone", nil); !strings.Contains(msg, "already started") {
		t.Errorf("second configurationDone: %q", msg)
	}
	if msg := c.callErr("variables", map[string]any{"variablesReference": 0}); !strings.Contains(msg, "no variables under reference 0") {
		t.Errorf("variables 0: %q", msg)
	}
	if msg := c.callErr("variables", map[string]any{"variablesReference": 1}); !strings.Contains(msg, "internal error in hale dap: fake failure in Variables") {
		t.Errorf("a panic in the session: %q", msg)
	}
	if msg := c.callErr("scopes", map[string]any{"frameId": 999}); msg != "no frame 999" {
		t.Errorf("scopes of an unknown frame: %q", msg)
	}
	if msg := c.callErr("evaluate", map[string]any{"expression": "  "}); !strings.Contains(msg, "nothing to evaluate") {
		t.Errorf("empty evaluate: %q", msg)
	}
	// Still serving.
	if th := c.threads(); len(th) != 2 {
		t.Errorf("threads after the errors: %+v", th)
	}
	c.disconnect()
}

// TestEndOfInput: a client that goes away without disconnect ends Serve
// and closes the session.
func TestEndOfInput(t *testing.T) {
	var f *fakeDebugger
	c := startServer(t, fakeLaunch(&f, nil))
	_, program, _ := files(t)
	c.initialize()
	c.launch(map[string]any{"program": program})
	c.conn.Close()
	if err := <-c.served; err != nil {
		t.Errorf("Serve at the end of input: %v", err)
	}
	if got := f.called(); len(got) == 0 || got[len(got)-1] != "Close" {
		t.Errorf("session not closed at the end of input: %v", got)
	}
}
