package debug_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/explore"
	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/replay/debug"
	"github.com/hale-lang/hale/vm/host"
)

const ledgerApp = `topic Order { id: int, amount: int }

fn fee(amount: int) -> int {
    let base = amount / 10;
    return base + 1;
}

locus Desk(first: int) {
    on start {
        for i in 0..3 {
            publish Order { id: first + i, amount: (first + i) * 10 };
        }
    }
}

locus Ledger {
    var total: int = 0;
    var count: int = 0;

    on Order(o) {
        let f = fee(o.amount);
        total += o.amount - f;
        count += 1;
        print("order " + str(o.id) + " total " + str(total));
    }
}

main {
    spawn Desk(1) as desk on pinned;
    spawn Ledger;
}
`

// lineOf is the line of the first line of src containing text.
func lineOf(t *testing.T, src, text string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("no line with %q", text)
	return 0
}

// recordApp writes src as dir/app.hl, records a run of it and returns
// the paths of the program and the recording.
func recordApp(t *testing.T, src string) (program, recording string) {
	t.Helper()
	dir := t.TempDir()
	program = filepath.Join(dir, "app.hl")
	if err := os.WriteFile(program, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := hale.CompileFile(program, hale.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := replay.NewHeader(c.Image, replay.HeaderInfo{HaleVersion: hale.Version, BuildDigest: c.BuildDigest(), ShapeHash: c.ShapeHash, Files: c.Files})
	if err != nil {
		t.Fatal(err)
	}
	recording = filepath.Join(dir, "run.halerec")
	rec, err := artifact.Create(recording, h, artifact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	j := replay.NewRecordingJournal(rec, c.Image, "")
	if _, err := host.Run(context.Background(), c.Image, host.Options{Engine: host.EngineNative, Journal: j}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return program, recording
}

var engines = []host.EngineKind{host.EngineNative, host.EngineWasm}

func launch(t *testing.T, cfg debug.Config) *debug.Session {
	t.Helper()
	s, err := debug.Launch(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func must(t *testing.T) func(debug.Stop, error) debug.Stop {
	return func(stop debug.Stop, err error) debug.Stop {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return stop
	}
}

// where is "Func:line" of the thread's innermost frame, or its stop
// description when it has none.
func where(t *testing.T, s *debug.Session, stop debug.Stop) string {
	t.Helper()
	if stop.Ended {
		return "ended " + stop.Verdict
	}
	frames, err := s.Stack(stop.Thread)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) == 0 {
		return stop.Reason + " " + stop.Coordinate
	}
	before := ""
	if strings.HasPrefix(stop.Description, "before delivery") {
		before = " (before)"
	}
	return fmt.Sprintf("%s %s %s:%d%s", stop.Reason, stop.Coordinate, frames[0].Name, frames[0].Line, before)
}

func vars(t *testing.T, s *debug.Session, ref int) map[string]string {
	t.Helper()
	vs, err := s.Variables(ref)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, v := range vs {
		out[v.Name] = v.Value
	}
	return out
}

func scope(t *testing.T, s *debug.Session, frame int, name string) map[string]string {
	t.Helper()
	scopes, err := s.Scopes(frame)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scopes {
		if sc.Name == name {
			return vars(t, s, sc.Ref)
		}
	}
	t.Fatalf("no scope %s in %+v", name, scopes)
	return nil
}

func TestLineBreakpoint(t *testing.T) {
	program, rec := recordApp(t, ledgerApp)
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) {
			var out strings.Builder
			s := launch(t, debug.Config{Program: program, Recording: rec, Engine: e, Output: &out})
			if !s.CanStepBack() {
				t.Error("a recording can step back")
			}
			line := lineOf(t, ledgerApp, "total += o.amount")
			bps := s.SetLineBreakpoints(program, []int{line, 2})
			if !bps[0].Verified || bps[1].Verified || bps[1].Message != "no statement on line 2 of app.hl" {
				t.Fatalf("breakpoints %+v", bps)
			}
			stop := must(t)(s.Start())
			if stop.Reason != "breakpoint" {
				t.Fatalf("stop %+v", stop)
			}
			frames, err := s.Stack(stop.Thread)
			if err != nil || len(frames) != 1 || frames[0].Name != "Ledger.on Order" || frames[0].Line != line || frames[0].File != program {
				t.Fatalf("stack %+v %v (want Ledger.on Order at %s:%d)", frames, err, program, line)
			}
			if got := scope(t, s, frames[0].ID, "Locals"); got["f"] != "2" || got["o"] == "" {
				t.Errorf("locals %v", got)
			}
			if got := scope(t, s, frames[0].ID, "State"); got["total"] != "0" || got["count"] != "0" {
				t.Errorf("state %v", got)
			}
			if got := scope(t, s, frames[0].ID, "Message"); got["id"] != "1" || got["amount"] != "10" {
				t.Errorf("message %v", got)
			}
			if v, err := s.Evaluate(frames[0].ID, "o.amount"); err != nil || v.Value != "10" || v.Type != "int" {
				t.Errorf("evaluate o.amount = %+v %v", v, err)
			}
			if _, err := s.Evaluate(frames[0].ID, "nope"); err == nil {
				t.Error("evaluate of an unknown name succeeded")
			}
			// The other thread is between deliveries: no frames, and its
			// instance's state reads.
			for _, th := range s.Threads() {
				if th.ID != stop.Thread {
					if fr, _ := s.Stack(th.ID); len(fr) != 0 {
						t.Errorf("thread %d has frames %+v", th.ID, fr)
					}
				}
			}
			if st, err := s.State("desk"); err != nil || string(st) != "{}" {
				t.Errorf("state of desk %s %v", st, err)
			}
			stop = must(t)(s.Continue())
			if got := scope(t, s, 1, "State"); stop.Reason != "breakpoint" || got["total"] != "8" || got["count"] != "1" {
				t.Errorf("second stop %+v state %v", stop, got)
			}
			must(t)(s.Continue())
			stop = must(t)(s.Continue())
			if !stop.Ended || stop.Verdict != "quiescent" || stop.ExitCode != 0 {
				t.Errorf("end %+v", stop)
			}
			if got := out.String(); got != "order 1 total 8\norder 2 total 25\norder 3 total 51\n" {
				t.Errorf("output %q", got)
			}
		})
	}
}

func TestFunctionBreakpoints(t *testing.T) {
	program, rec := recordApp(t, ledgerApp)
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) {
			s := launch(t, debug.Config{Program: program, Recording: rec, Engine: e})
			bps := s.SetFunctionBreakpoints([]string{"fee", "Ledger.on Order", "missing"})
			if !bps[0].Verified || !bps[1].Verified || bps[2].Verified || bps[2].Message == "" {
				t.Fatalf("breakpoints %+v", bps)
			}
			var got []string
			for stop := must(t)(s.Start()); !stop.Ended && len(got) < 10; stop = must(t)(s.Continue()) {
				got = append(got, where(t, s, stop))
			}
			want := []string{
				"breakpoint 0:0 Ledger.on Order:21",
				"breakpoint 0:0 fee:4",
				"breakpoint 0:1 Ledger.on Order:21",
				"breakpoint 0:1 fee:4",
				"breakpoint 0:2 Ledger.on Order:21",
				"breakpoint 0:2 fee:4",
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("stops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestTrapStop(t *testing.T) {
	src := strings.Replace(ledgerApp, "let base = amount / 10;", "let base = amount / (amount - 20);", 1)
	program, rec := recordApp(t, src)
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) {
			s := launch(t, debug.Config{Program: program, Recording: rec, Engine: e})
			s.SetTrapBreakpoints(true)
			stop := must(t)(s.Start())
			if stop.Reason != "exception" || stop.Description != "trap: division by zero" || stop.Coordinate != "0:1" {
				t.Fatalf("stop %+v", stop)
			}
			frames, _ := s.Stack(stop.Thread)
			if len(frames) != 2 || frames[0].Name != "fee" || frames[0].Line != 4 || frames[1].Name != "Ledger.on Order" {
				t.Fatalf("frames %+v", frames)
			}
			if got := scope(t, s, frames[0].ID, "Locals"); got["amount"] != "20" || got["base"] != "" {
				t.Errorf("locals %v (base is not defined yet)", got)
			}
			// The caller's frame: o is its parameter; f is not assigned
			// until fee returns.
			if got := scope(t, s, frames[1].ID, "Locals"); got["o"] == "" || got["f"] != "" {
				t.Errorf("caller's locals %v", got)
			}
			stop = must(t)(s.Continue())
			if !stop.Ended || stop.Verdict != "trap" || stop.ExitCode == 0 {
				t.Errorf("end %+v", stop)
			}
		})
	}
}

// stepping lists where each step of a scripted session stops.
func stepping(t *testing.T, e host.EngineKind, program, rec string) []string {
	s := launch(t, debug.Config{Program: program, Recording: rec, Engine: e})
	s.SetLineBreakpoints(program, []int{lineOf(t, ledgerApp, "let f = fee")})
	var got []string
	stop := must(t)(s.Start())
	got = append(got, where(t, s, stop))
	th := stop.Thread
	for _, step := range []string{"in", "next", "next", "out", "next", "next", "next", "next", "back", "back", "back", "back", "back", "next", "out", "reverse", "continue"} {
		var err error
		switch step {
		case "in":
			stop, err = s.StepIn(th)
		case "next":
			stop, err = s.Next(th)
		case "out":
			stop, err = s.StepOut(th)
		case "back":
			stop, err = s.StepBack(th)
		case "reverse":
			stop, err = s.ReverseContinue()
		case "continue":
			stop, err = s.Continue()
		}
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		got = append(got, step+": "+where(t, s, stop))
	}
	return got
}

func TestSteppingAndStepBack(t *testing.T) {
	program, rec := recordApp(t, ledgerApp)
	want := []string{
		"breakpoint 0:0 Ledger.on Order:21",
		"in: step 0:0 fee:4",
		"next: step 0:0 fee:5",
		"next: step 0:0 Ledger.on Order:22",
		"out: step 0:1 Ledger.on Order:21 (before)",
		"next: breakpoint 0:1 Ledger.on Order:21",
		"next: step 0:1 Ledger.on Order:22",
		"next: step 0:1 Ledger.on Order:23",
		"next: step 0:1 Ledger.on Order:24",
		"back: step 0:1 Ledger.on Order:23",
		"back: step 0:1 Ledger.on Order:22",
		"back: step 0:1 Ledger.on Order:21",
		"back: step 0:1 Ledger.on Order:21 (before)",
		"back: step 0:0 Ledger.on Order:24",
		"next: step 0:1 Ledger.on Order:21 (before)",
		"out: breakpoint 0:1 Ledger.on Order:21", // a breakpoint on the way stops a step
		"reverse: breakpoint 0:0 Ledger.on Order:21",
		"continue: breakpoint 0:1 Ledger.on Order:21",
	}
	var first []string
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) {
			got := stepping(t, e, program, rec)
			if first == nil {
				first = got
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("stops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			} else if strings.Join(got, "\n") != strings.Join(first, "\n") {
				t.Errorf("the engines stop differently:\n%s\nthen:\n%s", strings.Join(first, "\n"), strings.Join(got, "\n"))
			}
			// Every time the same.
			if again := stepping(t, e, program, rec); strings.Join(again, "\n") != strings.Join(got, "\n") {
				t.Errorf("a second session stops differently:\n%s", strings.Join(again, "\n"))
			}
		})
	}
}

func TestEntryStopAtAndDeliveries(t *testing.T) {
	program, rec := recordApp(t, ledgerApp)
	s := launch(t, debug.Config{Program: program, Recording: rec, StopOnEntry: true})
	stop := must(t)(s.Start())
	if stop.Reason != "entry" || stop.Coordinate != "1:0" || stop.Description != "before delivery 1:0 (Desk.on start)" {
		t.Fatalf("entry %+v", stop)
	}
	frames, _ := s.Stack(stop.Thread)
	if len(frames) != 1 || frames[0].Name != "Desk.on start" {
		t.Fatalf("entry frames %+v", frames)
	}
	stop = must(t)(s.StepDelivery())
	if stop.Coordinate != "0:0" {
		t.Errorf("step delivery %+v", stop)
	}
	stop = must(t)(s.NextDelivery(stop.Thread))
	if stop.Coordinate != "0:1" {
		t.Errorf("next delivery %+v", stop)
	}
	s2 := launch(t, debug.Config{Program: program, Recording: rec, StopAt: "0:2"})
	stop = must(t)(s2.Start())
	if stop.Reason != "entry" || stop.Coordinate != "0:2" {
		t.Fatalf("stop at %+v", stop)
	}
	st, err := s2.State("Ledger")
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]any
	if err := json.Unmarshal(st, &state); err != nil || fmt.Sprint(state["total"]) != "25" {
		t.Errorf("state %s %v", st, err)
	}
	if _, err := s2.State("nobody"); err == nil {
		t.Error("state of an unknown instance")
	}
}

func TestSeededRunAndPause(t *testing.T) {
	dir := t.TempDir()
	program := filepath.Join(dir, "app.hl")
	src := strings.Replace(ledgerApp, "for i in 0..3", "for i in 0..20000", 1)
	if err := os.WriteFile(program, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s := launch(t, debug.Config{Program: program, Seed: 7, Engine: host.EngineNative})
	if s.CanStepBack() {
		t.Error("a seeded run cannot step back")
	}
	if _, err := s.StepBack(1); err == nil {
		t.Error("step back of a seeded run")
	}
	s.SetFunctionBreakpoints([]string{"fee"})
	stop := must(t)(s.Start())
	if stop.Reason != "breakpoint" {
		t.Fatalf("stop %+v", stop)
	}
	s.SetFunctionBreakpoints(nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 1000; i++ {
			s.Pause()
		}
	}()
	stop = must(t)(s.Continue())
	<-done
	if stop.Reason != "pause" && !stop.Ended {
		t.Errorf("after pause %+v", stop)
	}
}

func TestLaunchErrors(t *testing.T) {
	_, err := debug.Launch(context.Background(), debug.Config{Program: "/nonexistent/app.hl"})
	if !errors.Is(err, debug.ErrUsage) {
		t.Errorf("missing program: %v", err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.hl")
	os.WriteFile(bad, []byte("locus {"), 0o644)
	if _, err := debug.Launch(context.Background(), debug.Config{Program: bad}); !errors.Is(err, debug.ErrCompile) {
		t.Errorf("bad program: %v", err)
	}
	program, _ := recordApp(t, ledgerApp)
	if _, err := debug.Launch(context.Background(), debug.Config{Program: program, Recording: program}); !errors.Is(err, debug.ErrUsage) {
		t.Errorf("foreign recording: %v", err)
	}
	// The session's messages give no command-line advice: each client
	// phrases its own.
	_, rec := recordApp(t, strings.Replace(ledgerApp, "0..3", "0..4", 1))
	_, err = debug.Launch(context.Background(), debug.Config{Program: program, Recording: rec})
	var refused *debug.IdentityError
	if !errors.As(err, &refused) || !errors.Is(err, debug.ErrUsage) || strings.Contains(err.Error(), "--unverified") || !strings.Contains(err.Error(), "build digest") {
		t.Errorf("recording of another build: %v", err)
	}
	s, err := debug.Launch(context.Background(), debug.Config{Program: program, Recording: rec, Unverified: true})
	if err != nil {
		t.Errorf("unverified: %v", err)
	} else {
		s.Close()
	}
	_, err = debug.Launch(context.Background(), debug.Config{Program: program, StopAt: "x"})
	if !errors.Is(err, debug.ErrUsage) || strings.Contains(err.Error(), "--at") || !strings.Contains(err.Error(), `"x" is not a coordinate`) {
		t.Errorf("a bad stop position: %v", err)
	}
}

// A bundle made from a failing recording runs under its schedule from its
// embedded sources: the trap stops at the same place, and it can go back.
func TestBundle(t *testing.T) {
	src := strings.Replace(ledgerApp, "let base = amount / 10;", "let base = amount / (amount - 20);", 1)
	program, rec := recordApp(t, src)
	c, err := hale.CompileFile(program, hale.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	art, err := artifact.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	b, err := explore.FromRecording(art, c)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trap.replay")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Encode(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, e := range engines {
		s := launch(t, debug.Config{Bundle: path, Engine: e})
		if !s.CanStepBack() {
			t.Error("a bundle can step back")
		}
		s.SetTrapBreakpoints(true)
		stop := must(t)(s.Start())
		if got := where(t, s, stop); got != "exception 0:1 fee:4" {
			t.Fatalf("%s: stop %s", e, got)
		}
		stop = must(t)(s.StepBack(stop.Thread))
		if got := where(t, s, stop); got != "step 0:1 fee:4" { // the start of the trapping statement
			t.Errorf("%s: back to %s", e, got)
		}
		stop = must(t)(s.Continue())
		if stop.Reason != "exception" {
			t.Errorf("%s: continue %+v", e, stop)
		}
		if stop = must(t)(s.Continue()); !stop.Ended || stop.Verdict != "trap" {
			t.Errorf("%s: end %+v", e, stop)
		}
	}
}

// TestOutputFollowsTheStop: what the user has seen of the program's
// output is what it printed up to the current stop, each line once,
// whatever the stepping history: going back (StepBack, ReverseContinue)
// replays ahead to find the previous stop but shows nothing of it, and
// going forward again prints a line only the first time it passes it.
func TestOutputFollowsTheStop(t *testing.T) {
	program, rec := recordApp(t, ledgerApp)
	printLine := lineOf(t, ledgerApp, `print("order "`)
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) {
			var out strings.Builder
			s := launch(t, debug.Config{Program: program, Recording: rec, Engine: e, Output: &out})
			s.SetLineBreakpoints(program, []int{printLine})
			check := func(step string, stop debug.Stop, want string) {
				t.Helper()
				if got := out.String(); got != want {
					t.Errorf("after %s (%s): output %q, want %q", step, where(t, s, stop), got, want)
				}
			}
			first, second := "order 1 total 8\n", "order 2 total 25\n"
			stop := must(t)(s.Start()) // before the print of delivery 0:0
			check("start", stop, "")
			th := stop.Thread
			stop = must(t)(s.StepBack(th)) // replays 0:0 to its end to find the stop before
			check("step back", stop, "")
			stop = must(t)(s.Next(th))
			check("next", stop, "")
			stop = must(t)(s.Next(th)) // past the print: before delivery 0:1
			check("next past the print", stop, first)
			stop = must(t)(s.ReverseContinue()) // replays 0:1, which prints, to its end
			check("reverse continue", stop, first)
			stop = must(t)(s.Continue()) // before the print of 0:1
			check("continue", stop, first)
			stop = must(t)(s.Next(th))
			check("next past the second print", stop, first+second)
			stop = must(t)(s.StepBack(th))
			stop = must(t)(s.StepBack(th))
			check("back twice", stop, first+second)
			stop = must(t)(s.Continue())
			stop = must(t)(s.Continue())
			check("forward again", stop, first+second)
			stop = must(t)(s.Continue())
			if !stop.Ended {
				t.Fatalf("not the end: %s", where(t, s, stop))
			}
			check("the end", stop, first+second+"order 3 total 51\n")
		})
	}
}

const spinApp = `topic Go { n: int }

locus Spinner {
    var spins: int = 0;

    on start {
        publish Go { n: 1 };
    }

    on Go(g) {
        var i = 0;
        while g.n > 0 {
            i += 1;
            spins = i;
        }
    }
}

main {
    spawn Spinner;
}
`

// TestPauseInALoop: a handler looping without breakpoints is paused
// (the machine's poll arms stepping), inside the loop, with a stack;
// it can be continued and paused again, and closed without a hang.
func TestPauseInALoop(t *testing.T) {
	dir := t.TempDir()
	program := filepath.Join(dir, "spin.hl")
	if err := os.WriteFile(program, []byte(spinApp), 0o644); err != nil {
		t.Fatal(err)
	}
	loopFirst, loopLast := lineOf(t, spinApp, "while g.n"), lineOf(t, spinApp, "spins = i")
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) {
			s := launch(t, debug.Config{Program: program, Engine: e, StopOnEntry: true})
			must(t)(s.Start())
			pauseDuring := func(resume func() (debug.Stop, error)) debug.Stop {
				t.Helper()
				done, exited := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(exited)
					for {
						select {
						case <-done:
							return
						case <-time.After(2 * time.Millisecond):
							s.Pause()
						}
					}
				}()
				stop, err := resume()
				close(done)
				// No pause of this goroutine may land in the next
				// command (a step), which would stop it as a pause.
				<-exited
				if err != nil {
					t.Fatal(err)
				}
				return stop
			}
			for i := 0; i < 2; i++ {
				var stop debug.Stop
				var frames []debug.Frame
				// A pause that arrives before the loop runs stops before
				// it (a delivery boundary, the handler's first line): go on.
				for try := 0; try < 5 && (len(frames) == 0 || frames[0].Line < loopFirst); try++ {
					stop = pauseDuring(s.Continue)
					if stop.Ended || stop.Reason != "pause" {
						t.Fatalf("pause %d: %+v", i, stop)
					}
					var err error
					if frames, err = s.Stack(stop.Thread); err != nil {
						t.Fatal(err)
					}
				}
				if len(frames) == 0 {
					t.Fatalf("pause %d: no stack (%s)", i, stop.Description)
				}
				if f := frames[0]; f.Name != "Spinner.on Go" || f.Line < loopFirst || f.Line > loopLast {
					t.Errorf("pause %d: stopped at %s:%d, want in the loop (lines %d-%d)", i, f.Name, f.Line, loopFirst, loopLast)
				}
				// A step from the pause goes on inside the loop.
				next := must(t)(s.Next(stop.Thread))
				if next.Reason != "step" {
					t.Errorf("next after pause %d: %+v", i, next)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestStepCapEndsAsATrap: a handler reaching the scheduler's step cap
// ends the session as `hale test` reports it, a failure of kind budget
// (verdict trap, exit 3), never as a clean halt with exit 0.
func TestStepCapEndsAsATrap(t *testing.T) {
	dir := t.TempDir()
	program := filepath.Join(dir, "spin.hl")
	if err := os.WriteFile(program, []byte(spinApp), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) {
			s := launch(t, debug.Config{Program: program, Engine: e})
			stop := must(t)(s.Start())
			if !stop.Ended || stop.Verdict != "trap" || stop.ExitCode != 3 || !strings.HasPrefix(stop.Description, "budget: handler passed 10000000 steps") || !strings.Contains(stop.Description, "delivery 0:1") {
				t.Errorf("end at the step cap: %+v", stop)
			}
		})
	}
}

// TestArgs: Config.Args are std::os::args of a deterministic run; with a
// recording (whose arguments are the recorded ones) they are refused.
func TestArgs(t *testing.T) {
	src := "locus Echo {\n    on start {\n        let a = std::os::args();\n        print(str(len(a)) + \" \" + a[0] + \" \" + a[1]);\n    }\n}\n\nmain {\n    spawn Echo;\n}\n"
	program, rec := recordApp(t, ledgerApp)
	dir := t.TempDir()
	echo := filepath.Join(dir, "echo.hl")
	if err := os.WriteFile(echo, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) {
			var out strings.Builder
			s := launch(t, debug.Config{Program: echo, Engine: e, Args: []string{"alpha", "beta"}, Output: &out})
			if stop := must(t)(s.Start()); !stop.Ended || stop.ExitCode != 0 {
				t.Errorf("end %+v", stop)
			}
			if got := out.String(); got != "2 alpha beta\n" {
				t.Errorf("output %q, want the arguments given", got)
			}
		})
	}
	_, err := debug.Launch(context.Background(), debug.Config{Program: program, Recording: rec, Args: []string{"x"}})
	if !errors.Is(err, debug.ErrUsage) || !strings.Contains(err.Error(), "recorded") {
		t.Errorf("args with a recording: %v", err)
	}
}
