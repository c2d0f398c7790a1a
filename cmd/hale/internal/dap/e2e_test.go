package dap

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	godap "github.com/google/go-dap"
)

// End-to-end sessions: a Go DAP client drives the server over a real
// replay/debug session, on both engines.

// appSource is a Feeder publishing three Jobs to a pinned Worker that adds
// up fee(n) and prints the total. Tests name its lines.
const appSource = `topic Job { n: int }

fn fee(n: int) -> int {
    let f = n * 2;
    return f;
}

locus Feeder {
    on start {
        for i in 1..4 {
            publish Job { n: i };
        }
    }
}

locus Worker {
    var total: int = 0;
    on Job(j) {
        let f = fee(j.n);
        total += f;
        print("total " + str(total));
    }
}

main {
    spawn Feeder;
    spawn Worker on pinned;
}
`

const (
	lineFeeLet   = 4  // let f = n * 2;
	lineFeeRet   = 5  // return f;
	lineBlank    = 7  // no statement
	lineWorkerF  = 19 // let f = fee(j.n);
	lineTotal    = 20 // total += f;
	linePrint    = 21 // print(...)
	appStdout    = "total 2\ntotal 6\ntotal 12\n"
	trapSource   = "topic Job { n: int }\n\nlocus Feeder {\n    on start {\n        for i in 0..3 {\n            publish Job { n: i };\n        }\n    }\n}\n\nlocus Worker {\n    var sum: int = 0;\n    on Job(j) {\n        sum += 10 / (2 - j.n * 2);\n        print(str(sum));\n    }\n}\n\nmain {\n    spawn Feeder;\n    spawn Worker on pinned;\n}\n"
	lineTrap     = 14
	trapStdout   = "5\n"
	trapExitCode = 3 // what `hale run` exits with on a trap (checked below)
)

var engines = []string{"wasm", "native"}

// writeApp writes src as app.hl in a new directory and, when record is
// set, records a run of it (run.halerec) with the given engine.
func writeApp(t *testing.T, engine, src string, record bool) (dir, program, recording string) {
	t.Helper()
	dir = t.TempDir()
	program = filepath.Join(dir, "app.hl")
	if err := os.WriteFile(program, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if record {
		recording = filepath.Join(dir, "run.halerec")
		hale(t, dir, []string{"LOTUS_OBS_RECORD=run.halerec"}, "run", "--engine", engine, "app.hl")
	}
	return dir, program, recording
}

// hale runs the hale binary in dir and returns its stdout; it fails the
// test on a non-zero exit.
func hale(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(buildHale(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hale %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func realServer(t *testing.T) *testClient {
	return startServer(t, Options{Launch: LaunchSession})
}

// top returns the innermost frame of a thread.
func (c *testClient) top(thread int) godap.StackFrame {
	c.t.Helper()
	frames := c.stack(thread)
	if len(frames) == 0 {
		c.t.Fatalf("thread %d has no frames", thread)
	}
	return frames[0]
}

// scope returns a frame's scope by name, as name → variable.
func (c *testClient) scope(frame int, name string) map[string]godap.Variable {
	c.t.Helper()
	for _, s := range c.scopes(frame) {
		if s.Name == name {
			vars := map[string]godap.Variable{}
			for _, v := range c.variables(s.VariablesReference) {
				vars[v.Name] = v
			}
			return vars
		}
	}
	c.t.Fatalf("frame %d has no scope %s", frame, name)
	return nil
}

// runToEnd continues until the run ends and returns the exit code.
func (c *testClient) runToEnd(thread int) int {
	c.t.Helper()
	c.call("continue", map[string]any{"threadId": thread})
	return c.exited()
}

// TestRecordingSession debugs a recording: entry, a line breakpoint (and
// one on a line without a statement), threads, frames, scopes, variables,
// evaluate, next, step back within a handler and across a delivery
// boundary, reverseContinue, and the run's output and exit code.
func TestRecordingSession(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			_, program, recording := writeApp(t, engine, appSource, true)
			c := realServer(t)
			c.initialize()
			caps := c.launch(map[string]any{"program": program, "recording": recording, "stopOnEntry": true, "engine": engine})
			if caps == nil || !caps.SupportsStepBack {
				t.Fatalf("no supportsStepBack after launching a recording: %+v", caps)
			}
			bps := c.setBreakpoints(program, lineTotal, lineBlank)
			if !bps[0].Verified || bps[0].Line != lineTotal {
				t.Errorf("breakpoint on line %d: %+v", lineTotal, bps[0])
			}
			if bps[1].Verified || !strings.Contains(bps[1].Message, "no statement on line 7") {
				t.Errorf("breakpoint on a line without a statement: %+v", bps[1])
			}
			c.call("setExceptionBreakpoints", map[string]any{"filters": []string{"trap"}})
			c.call("configurationDone", nil)
			entry := c.stopped("entry")
			if entry.ThreadId != 1 || !strings.Contains(entry.Description, "0:0") {
				t.Errorf("entry stop %+v, want thread 1 before delivery 0:0", entry)
			}
			threads := c.threads()
			if len(threads) != 2 || threads[0].Name != "0 main (main)" || threads[1].Id != 2 || threads[1].Name != "1 Worker (pinned)" {
				t.Errorf("threads %+v", threads)
			}
			// Nothing before the first stop: the client hears why and sees
			// the same stop again.
			c.call("stepBack", map[string]any{"threadId": 1})
			if again := c.event("stopped").(*godap.StoppedEvent).Body; !strings.Contains(again.Text, "start of the run") || again.ThreadId != 1 {
				t.Errorf("stepBack at the entry: %+v", again)
			}

			c.call("continue", map[string]any{"threadId": 1})
			bp := c.stopped("breakpoint")
			if bp.ThreadId != 2 {
				t.Fatalf("breakpoint stop on thread %d, want the Worker's (2)", bp.ThreadId)
			}
			frame := c.top(2)
			if frame.Name != "Worker.on Job" || frame.Line != lineTotal || frame.Source == nil || frame.Source.Path != program {
				t.Errorf("top frame %+v (source %+v)", frame, frame.Source)
			}
			locals := c.scope(frame.Id, "Locals")
			if locals["f"].Value != "2" || locals["f"].Type != "int" {
				t.Errorf("locals %+v: want f = 2", locals)
			}
			j := locals["j"]
			if j.VariablesReference == 0 {
				t.Fatalf("the message j does not expand: %+v", j)
			}
			fields := c.variables(j.VariablesReference)
			if len(fields) != 1 || fields[0].Name != "n" || fields[0].Value != "1" {
				t.Errorf("j's fields %+v", fields)
			}
			if st := c.scope(frame.Id, "State"); st["total"].Value != "0" {
				t.Errorf("state %+v: want total = 0", st)
			}
			if msg := c.scope(frame.Id, "Message"); msg["n"].Value != "1" {
				t.Errorf("message %+v: want n = 1", msg)
			}
			for expr, want := range map[string]string{"j.n": "1", "f": "2", "total": "0"} {
				if got := c.evaluate(frame.Id, expr); got.Result != want {
					t.Errorf("evaluate %s = %+v, want %s", expr, got, want)
				}
			}
			// Any instance's state, from the debug console.
			if ev := c.call("evaluate", map[string]any{"expression": "state Worker", "context": "repl"}).(*godap.EvaluateResponse).Body; ev.Result != `{"total":0}` {
				t.Errorf("state Worker: %+v", ev)
			}
			if msg := c.callErr("evaluate", map[string]any{"frameId": frame.Id, "expression": "nosuch"}); !strings.Contains(msg, "nosuch") {
				t.Errorf("evaluate of an unknown name: %q", msg)
			}

			// next, then step back to where it started.
			c.call("next", map[string]any{"threadId": 2})
			c.stopped("step")
			if f := c.top(2); f.Line != linePrint {
				t.Errorf("after next: line %d, want %d", f.Line, linePrint)
			}
			c.call("stepBack", map[string]any{"threadId": 2})
			c.stopped("step")
			if f := c.top(2); f.Line != lineTotal {
				t.Errorf("after stepBack: line %d, want %d", f.Line, lineTotal)
			}

			// The second hit (delivery 1:1), then back across the boundary
			// into delivery 1:0 (its last statement, after total += f).
			c.call("continue", map[string]any{"threadId": 2})
			second := c.stopped("breakpoint")
			if !strings.Contains(second.Description, "1:1") {
				t.Errorf("second hit %+v, want delivery 1:1", second)
			}
			crossed := false
			for range 6 {
				c.call("stepBack", map[string]any{"threadId": 2})
				st := c.stopped("step")
				if strings.Contains(st.Description, "1:0") && !strings.Contains(st.Description, "before") {
					f := c.top(2)
					if f.Line != linePrint {
						t.Errorf("stepped back into delivery 1:0 at line %d, want its last statement (%d)", f.Line, linePrint)
					}
					if st := c.scope(f.Id, "State"); st["total"].Value != "2" {
						t.Errorf("state in delivery 1:0 after total += f: %+v", st)
					}
					crossed = true
					break
				}
			}
			if !crossed {
				t.Fatalf("six stepBacks from delivery 1:1 did not reach delivery 1:0")
			}

			// reverseContinue: back to the previous breakpoint hit (1:0).
			c.call("continue", map[string]any{"threadId": 2}) // to 1:1 again
			c.stopped("breakpoint")
			c.call("reverseContinue", map[string]any{"threadId": 2})
			back := c.event("stopped").(*godap.StoppedEvent).Body
			if f := c.top(2); f.Line != lineTotal || !strings.Contains(back.Description, "1:0") {
				t.Errorf("reverseContinue stopped at %+v line %d, want the hit in delivery 1:0", back, f.Line)
			}

			c.setBreakpoints(program)
			if code := c.runToEnd(2); code != 0 {
				t.Errorf("exit code %d, want 0", code)
			}
			c.drainOutput()
			if got := c.stdout(); got != appStdout {
				t.Errorf("output events %q, want %q (each byte once, though step back replays)", got, appStdout)
			}
			c.disconnect()
		})
	}
}

// TestProgramSession debugs a program under the deterministic scheduler:
// no step back, a function breakpoint, stepIn, next, stepOut, output.
func TestProgramSession(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			_, program, _ := writeApp(t, engine, appSource, false)
			c := realServer(t)
			c.initialize()
			if caps := c.launch(map[string]any{"program": program, "seed": 1, "engine": engine}); caps != nil {
				t.Errorf("capabilities event after launching a program: %+v", caps)
			}
			c.setBreakpoints(program, lineWorkerF)
			fbps := c.call("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{
				{"name": "fee"}, {"name": "Worker.on Job"}, {"name": "nosuch"},
			}}).(*godap.SetFunctionBreakpointsResponse).Body.Breakpoints
			if len(fbps) != 3 || !fbps[0].Verified || !fbps[1].Verified || fbps[2].Verified || fbps[2].Message == "" {
				t.Errorf("function breakpoints %+v", fbps)
			}
			c.call("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{}})
			c.call("configurationDone", nil)
			bp := c.stopped("breakpoint")
			if f := c.top(bp.ThreadId); f.Name != "Worker.on Job" || f.Line != lineWorkerF {
				t.Fatalf("first stop at %+v, want Worker.on Job line %d", f, lineWorkerF)
			}
			c.call("stepIn", map[string]any{"threadId": bp.ThreadId})
			c.stopped("step")
			frames := c.stack(bp.ThreadId)
			if len(frames) != 2 || frames[0].Name != "fee" || frames[0].Line != lineFeeLet || frames[1].Name != "Worker.on Job" {
				t.Fatalf("after stepIn: %+v", frames)
			}
			if n := c.scope(frames[0].Id, "Locals")["n"]; n.Value != "1" {
				t.Errorf("fee's parameter n = %+v", n)
			}
			c.call("next", map[string]any{"threadId": bp.ThreadId})
			c.stopped("step")
			if f := c.top(bp.ThreadId); f.Line != lineFeeRet {
				t.Errorf("after next in fee: line %d", f.Line)
			}
			c.call("stepOut", map[string]any{"threadId": bp.ThreadId})
			c.stopped("step")
			if frames := c.stack(bp.ThreadId); len(frames) != 1 || frames[0].Name != "Worker.on Job" || frames[0].Line != lineTotal {
				t.Errorf("after stepOut: %+v, want Worker.on Job line %d", frames, lineTotal)
			}
			for _, cmd := range []string{"stepBack", "reverseContinue"} {
				if msg := c.callErr(cmd, map[string]any{"threadId": bp.ThreadId}); !strings.Contains(msg, "needs a recording or a bundle") {
					t.Errorf("%s on a program: %q", cmd, msg)
				}
			}
			// A fn breakpoint: the next call of fee (delivery 1:1).
			c.setBreakpoints(program)
			c.call("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "fee"}}})
			c.call("continue", map[string]any{"threadId": bp.ThreadId})
			c.stopped("breakpoint")
			if f := c.top(bp.ThreadId); f.Name != "fee" {
				t.Errorf("function breakpoint stopped in %+v", f)
			}
			c.call("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{}})
			if code := c.runToEnd(bp.ThreadId); code != 0 {
				t.Errorf("exit code %d", code)
			}
			c.drainOutput()
			if got := c.stdout(); got != appStdout {
				t.Errorf("output %q, want %q", got, appStdout)
			}
			c.disconnect()
		})
	}
}

// TestTrapSession: with the trap filter on, a trap stops in the trapping
// frame (reason exception) before the run ends; the exit code is then
// that of `hale run`.
func TestTrapSession(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			dir, program, _ := writeApp(t, engine, trapSource, false)
			cmd := exec.Command(buildHale(t), "run", "--engine", engine, "app.hl")
			cmd.Dir = dir
			if err := cmd.Run(); cmd.ProcessState.ExitCode() != trapExitCode {
				t.Fatalf("hale run of the trapping program: %v, want exit %d", err, trapExitCode)
			}
			c := realServer(t)
			c.initialize()
			c.launch(map[string]any{"program": program, "engine": engine})
			c.call("setExceptionBreakpoints", map[string]any{"filters": []string{"trap"}})
			c.call("configurationDone", nil)
			trap := c.stopped("exception")
			if !strings.Contains(trap.Description, "division by zero") {
				t.Errorf("exception stop %+v, want the trap's message", trap)
			}
			f := c.top(trap.ThreadId)
			if f.Name != "Worker.on Job" || f.Line != lineTrap {
				t.Errorf("trapping frame %+v, want Worker.on Job line %d", f, lineTrap)
			}
			if j := c.scope(f.Id, "Message")["n"]; j.Value != "1" {
				t.Errorf("the trapping message: n = %+v", j)
			}
			if code := c.runToEnd(trap.ThreadId); code != trapExitCode {
				t.Errorf("exit code %d, want %d", code, trapExitCode)
			}
			c.drainOutput()
			if got := c.stdout(); got != trapStdout {
				t.Errorf("output %q, want %q", got, trapStdout)
			}
			c.disconnect()
		})
	}
}

// TestBundleSession launches a bundle (hale trace bundle of a recording
// that trapped) at a coordinate, and steps back from there.
func TestBundleSession(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			dir, _, _ := writeApp(t, engine, trapSource, false)
			cmd := exec.Command(buildHale(t), "run", "--engine", engine, "app.hl")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "LOTUS_OBS_RECORD=run.halerec")
			if err := cmd.Run(); cmd.ProcessState.ExitCode() != trapExitCode {
				t.Fatalf("recording the trapping program: %v", err)
			}
			hale(t, dir, nil, "trace", "bundle", "run.halerec", "app.hl", "-o", "run.replay", "--engine", engine)
			c := realServer(t)
			c.initialize()
			caps := c.launch(map[string]any{"bundle": "run.replay", "cwd": dir, "stopAt": "1:1", "engine": engine})
			if caps == nil || !caps.SupportsStepBack {
				t.Errorf("no supportsStepBack after launching a bundle: %+v", caps)
			}
			c.call("configurationDone", nil)
			st := c.event("stopped").(*godap.StoppedEvent).Body
			if st.ThreadId != 2 || !strings.Contains(st.Description, "1:1") {
				t.Errorf("stopAt 1:1 stopped at %+v", st)
			}
			if msg := c.scope(c.top(2).Id, "Message"); msg["n"].Value != "1" {
				t.Errorf("message at 1:1: %+v", msg)
			}
			c.call("stepBack", map[string]any{"threadId": 2})
			back := c.stopped("step")
			if !strings.Contains(back.Description, "1:0") {
				t.Errorf("stepBack from before 1:1: %+v, want a stop in delivery 1:0", back)
			}
			if code := c.runToEnd(2); code != trapExitCode {
				t.Errorf("exit code %d, want %d", code, trapExitCode)
			}
			c.disconnect()
		})
	}
}

// TestPauseSession: pause stops a long loop where it is.
func TestPauseSession(t *testing.T) {
	// A locus that sends itself ticks for ever.
	const spin = "topic Tick { n: int }\n\nlocus Spinner {\n    var n: int = 0;\n    on start { publish Tick { n: 0 }; }\n    on Tick(t) {\n        n = t.n;\n        publish Tick { n: t.n + 1 };\n    }\n}\n\nmain { spawn Spinner; }\n"
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			_, program, _ := writeApp(t, engine, spin, false)
			c := realServer(t)
			c.initialize()
			c.launch(map[string]any{"program": program, "engine": engine})
			c.call("configurationDone", nil)
			time.Sleep(200 * time.Millisecond)
			c.call("pause", map[string]any{"threadId": 1})
			p := c.stopped("pause")
			f := c.top(p.ThreadId)
			if f.Name != "Spinner.on Tick" && f.Name != "Spinner.on start" {
				t.Errorf("paused at %+v", f)
			}
			if n := c.evaluate(f.Id, "n"); n.Result == "0" || n.Type != "int" {
				t.Errorf("n at the pause: %+v", n)
			}
			c.call("terminate", nil)
			c.event("terminated")
			c.disconnect()
		})
	}
}

// TestListen: `hale dap --listen 127.0.0.1:0` prints its address and
// serves a session over TCP.
func TestListen(t *testing.T) {
	_, program, _ := writeApp(t, "native", appSource, false)
	cmd := exec.Command(buildHale(t), "dap", "--listen", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	t.Cleanup(func() {
		if !waited {
			cmd.Process.Kill()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("first line %q (%v), want listening on 127.0.0.1:PORT", line, err)
	}
	c := dialClient(t, addr)
	c.initialize()
	c.launch(map[string]any{"program": program, "engine": "native"})
	c.call("configurationDone", nil)
	if code := c.exited(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	c.drainOutput()
	if got := c.stdout(); got != appStdout {
		t.Errorf("output %q", got)
	}
	c.call("disconnect", nil)
	// The server goes on listening: a second session, left open.
	c2 := dialClient(t, addr)
	c2.initialize()
	// Ctrl-C ends it (and the open session), exit 130.
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		waited = true
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			t.Errorf("hale dap --listen after SIGINT: exit %d, want 130", code)
		}
	case <-time.After(timeout):
		t.Fatalf("hale dap --listen did not end after SIGINT")
	}
}

// TestOutputAfterStepBack: the output events say what the program printed
// up to the stop shown, no more: after stepping back to before a print,
// that print has not been shown yet.
func TestOutputAfterStepBack(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			_, program, recording := writeApp(t, engine, appSource, true)
			c := realServer(t)
			c.initialize()
			c.launch(map[string]any{"program": program, "recording": recording, "engine": engine})
			c.setBreakpoints(program, lineTotal)
			c.call("configurationDone", nil)
			c.stopped("breakpoint")
			c.call("next", map[string]any{"threadId": 2})
			c.stopped("step")
			c.call("stepBack", map[string]any{"threadId": 2})
			c.stopped("step")
			time.Sleep(100 * time.Millisecond)
			c.drainOutput()
			if got := c.stdout(); got != "" {
				t.Errorf("at line %d of delivery 1:0, before its print, the client was shown %q", lineTotal, got)
			}
			c.disconnect()
		})
	}
}

// TestLaunchRefusals: what the session refuses reaches the client as an
// error response that says why, and the adapter serves on.
func TestLaunchRefusals(t *testing.T) {
	dir, program, recording := writeApp(t, "native", appSource, true)
	broken := filepath.Join(dir, "broken.hl")
	if err := os.WriteFile(broken, []byte("main { spawn Nobody; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.hl")
	if err := os.WriteFile(other, []byte(trapSource), 0o644); err != nil {
		t.Fatal(err)
	}
	c := realServer(t)
	c.initialize()
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"program": broken}, "broken.hl:1:"},
		{map[string]any{"program": other, "recording": recording}, "run.halerec"},
		{map[string]any{"program": program, "recording": program}, "app.hl"},
		{map[string]any{"program": program, "stopAt": "x"}, `stopAt "x" is not a coordinate`},
	} {
		msg := c.callErr("launch", tc.args)
		t.Logf("launch %v: %s", tc.args, msg)
		if !strings.Contains(msg, tc.want) {
			t.Errorf("launch %v: %q, want it to name %q", tc.args, msg, tc.want)
		}
	}
	// Refused for another build: the advice is the launch argument's,
	// not the command line's.
	msg := c.callErr("launch", map[string]any{"program": other, "recording": recording})
	if strings.Contains(msg, "--unverified") || !strings.Contains(msg, `"unverified": true`) {
		t.Errorf("refusal of another build: %q, want the launch argument unverified, not the flag", msg)
	}
	c.launch(map[string]any{"program": program})
	c.call("configurationDone", nil)
	if code := c.exited(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	c.disconnect()
	// unverified: true debugs it anyway.
	c = realServer(t)
	c.initialize()
	c.launch(map[string]any{"program": other, "recording": recording, "unverified": true})
	c.disconnect()
}

// longSource: 10,000 deliveries to a pinned Worker.
const longSource = `topic Job { n: int }

locus Feeder {
    on start {
        for i in 0..10000 {
            publish Job { n: i };
        }
    }
}

locus Worker {
    var total: int = 0;
    on Job(j) {
        total += j.n;
    }
}

main {
    spawn Feeder;
    spawn Worker on pinned;
}
`

// BenchmarkDAPStepBack: a stepBack request near the end of a recording of
// 10,001 deliveries, from the request to the stopped event, in CPU time
// (cpu-ns/op: user + sys of the whole process; the machine is shared).
//
//	go test ./cmd/hale/internal/dap/ -run '^$' -bench DAPStepBack -benchtime 5x
func BenchmarkDAPStepBack(b *testing.B) {
	for _, engine := range engines {
		b.Run(engine, func(b *testing.B) {
			dir := b.TempDir()
			program := filepath.Join(dir, "app.hl")
			if err := os.WriteFile(program, []byte(longSource), 0o644); err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command(buildHale(b), "run", "--engine", engine, "app.hl")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "LOTUS_OBS_RECORD=run.halerec")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("recording: %v\n%s", err, out)
			}
			c := startServer(b, Options{Launch: LaunchSession})
			c.initialize()
			c.launch(map[string]any{"program": program, "recording": filepath.Join(dir, "run.halerec"), "stopAt": "1:9999", "engine": engine})
			c.call("configurationDone", nil)
			c.event("stopped")
			var cpu time.Duration
			b.ResetTimer()
			for range b.N {
				before := cpuTime()
				c.call("stepBack", map[string]any{"threadId": 2})
				c.stopped("step")
				cpu += cpuTime() - before
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			c.disconnect()
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// spinSource loops for ever in a handler without a breakpoint.
const spinSource = "topic Go { n: int }\n\nlocus Spinner {\n    var spins: int = 0;\n    on start {\n        publish Go { n: 1 };\n    }\n    on Go(g) {\n        var i = 0;\n        while g.n > 0 {\n            i += 1;\n            spins = i;\n        }\n    }\n}\n\nmain {\n    spawn Spinner;\n}\n"

// TestStepCapSession: a handler reaching the scheduler's step cap ends
// the session as a trap (exit 3) and says why on stderr, never exit 0.
func TestStepCapSession(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			_, program, _ := writeApp(t, engine, spinSource, false)
			c := realServer(t)
			c.initialize()
			c.launch(map[string]any{"program": program, "engine": engine})
			c.call("configurationDone", nil)
			if code := c.exited(); code != trapExitCode {
				t.Errorf("exit code %d, want %d", code, trapExitCode)
			}
			c.drainOutput()
			var stderr strings.Builder
			for _, o := range c.output {
				if o.Category == "stderr" {
					stderr.WriteString(o.Output)
				}
			}
			if !strings.Contains(stderr.String(), "budget: handler passed 10000000 steps") {
				t.Errorf("stderr %q, want the step cap named", stderr.String())
			}
			c.disconnect()
		})
	}
}

// TestPauseInALoopSession: pause stops a handler looping without
// breakpoints, inside the loop, with a stack; disconnect then ends the
// session without a hang.
// slowSpinSource is spinSource with a loop whose steps are dear (a
// string formatted at each), so that the scheduler's step cap is seconds
// away rather than tens of milliseconds: a pause sent while the machine
// is loaded (a race-detector build in CI) still finds the loop running.
const slowSpinSource = "topic Go { n: int }\n\nlocus Spinner {\n    var spins: int = 0;\n    on start {\n        publish Go { n: 1 };\n    }\n    on Go(g) {\n        var i = 0;\n        while g.n > 0 {\n            i += 1;\n            spins = len(format(\"{} {} {} {}\", i, i * 7, i * 13, i * 31));\n        }\n    }\n}\n\nmain {\n    spawn Spinner;\n}\n"

func TestPauseInALoopSession(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			_, program, _ := writeApp(t, engine, slowSpinSource, false)
			c := realServer(t)
			c.initialize()
			c.launch(map[string]any{"program": program, "engine": engine, "stopOnEntry": true})
			c.call("configurationDone", nil)
			entry := c.stopped("entry")
			// A pause that arrives before the loop runs stops before it
			// (a delivery boundary, the handler's first line): go on.
			var f godap.StackFrame
			for i := 0; i < 5 && (f.Name != "Spinner.on Go" || f.Line < 10); i++ {
				c.call("continue", map[string]any{"threadId": entry.ThreadId})
				// Natively the loop reaches the step cap in a few tens of
				// milliseconds: pause soon after the run starts.
				time.Sleep(2 * time.Millisecond)
				c.call("pause", map[string]any{"threadId": entry.ThreadId})
				f = c.top(c.stopped("pause").ThreadId)
			}
			if f.Name != "Spinner.on Go" || f.Line < 10 || f.Line > 12 {
				t.Errorf("paused at %s:%d, want in the loop of Spinner.on Go", f.Name, f.Line)
			}
			stop := godap.StoppedEventBody{ThreadId: entry.ThreadId}
			c.call("continue", map[string]any{"threadId": stop.ThreadId})
			c.disconnect()
		})
	}
}
