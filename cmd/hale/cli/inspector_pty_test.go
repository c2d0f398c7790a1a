//go:build linux

package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// inspectorApp has two pinned consumers (A on 1, B on 2) busy at once, so
// that a stop on one races with the other's deliveries.
const inspectorApp = `topic Job { n: int }

locus Feeder {
    on start { for i in 0..8 { publish Job { n: i }; } }
}

fn weigh(n: int) -> int { return n * 2; }

locus A {
    var sum: int = 0;
    on Job(j) { sum += j.n; }
}

locus B {
    var sum: int = 0;
    on Job(j) {
        sum += weigh(j.n);
    }
}

main {
    spawn Feeder;
    spawn A on pinned;
    spawn B on pinned;
}
`

// ptySession is `hale replay --at` run on a pseudo-terminal, driven as a
// person would: a command is typed once the prompt shows.
type ptySession struct {
	t      *testing.T
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	code   chan int
}

// openPty opens a pseudo-terminal pair.
func openPty(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skip("no pseudo-terminals here:", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// recordInspectorApp records inspectorApp into dir/run.halerec.
func recordInspectorApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "app.hl"), inspectorApp)
	if code, stderr := runIn(t, dir, nil, map[string]string{"LOTUS_OBS_RECORD": "run.halerec"}, "run", "--engine", "native", "app.hl"); code != 0 {
		t.Fatalf("recording: exit %d: %s", code, stderr)
	}
	return dir
}

// startInspector runs `hale replay run.halerec app.hl --at AT` in dir on
// a pseudo-terminal.
func startInspector(t *testing.T, dir, engine, at string) *ptySession {
	t.Helper()
	master, tty := openPty(t)
	s := &ptySession{t: t, master: master, code: make(chan int, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			s.mu.Lock()
			s.out.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Chdir(dir)
	go func() {
		var stderr bytes.Buffer
		code := Run([]string{"replay", "--engine", engine, "run.halerec", "app.hl", "--at", at, "--quiet"},
			env{stdin: tty, stdout: tty, stderr: &stderr, getenv: func(string) string { return "" }})
		s.code <- code
	}()
	t.Cleanup(func() { tty.Close(); master.Close() })
	return s
}

// output is what the terminal showed so far, without carriage returns.
func (s *ptySession) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.ReplaceAll(s.out.String(), "\r", "")
}

// waitPrompts waits until the terminal has shown n prompts.
func (s *ptySession) waitPrompts(n int) {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(s.output(), "(hale) ") < n {
		if time.Now().After(deadline) {
			s.t.Fatalf("no prompt #%d; the terminal shows:\n%s", n, s.output())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// typeLines types each line at its prompt (the first is prompt #first).
func (s *ptySession) typeLines(first int, lines ...string) {
	s.t.Helper()
	for i, l := range lines {
		s.waitPrompts(first + i)
		if _, err := s.master.Write([]byte(l)); err != nil {
			s.t.Fatal(err)
		}
	}
}

// exit waits for the exit code.
func (s *ptySession) exit() int {
	s.t.Helper()
	select {
	case c := <-s.code:
		return c
	case <-time.After(30 * time.Second):
		s.t.Fatalf("the inspector did not end; the terminal shows:\n%s", s.output())
	}
	return -1
}

var stopLine = regexp.MustCompile(`stopped (?:before delivery |at .* \(delivery )(\d+):(\d+)`)

// stops lists the coordinates of the stops shown.
func (s *ptySession) stops() []string {
	var out []string
	for _, m := range stopLine.FindAllStringSubmatch(s.output(), -1) {
		out = append(out, m[1]+":"+m[2])
	}
	return out
}

// TestInspectorPtyQuitOnce: `quit` ends the session at once with exit
// 0, also at a `step` stop while the other consumer waits at its next
// delivery; on both engines.
func TestInspectorPtyQuitOnce(t *testing.T) {
	dir := recordInspectorApp(t)
	for _, engine := range []string{"native", "wasm"} {
		s := startInspector(t, dir, engine, "1:1")
		s.typeLines(1, "step\r", "quit\r")
		if code := s.exit(); code != 0 {
			t.Fatalf("%s: exit %d, want 0:\n%s", engine, code, s.output())
		}
		if n := strings.Count(s.output(), "(hale) "); n != 2 {
			t.Errorf("%s: %d prompts, want 2 (quit once):\n%s", engine, n, s.output())
		}
	}
}

// TestInspectorPtyNextStays: `next` after a `step` stops only on the
// consumer the step landed on, every time.
func TestInspectorPtyNextStays(t *testing.T) {
	dir := recordInspectorApp(t)
	for try := range 5 {
		s := startInspector(t, dir, "native", "1:1")
		s.typeLines(1, "s\r", "n\r", "n\r", "n\r", "q\r")
		if code := s.exit(); code != 0 {
			t.Fatalf("exit %d:\n%s", code, s.output())
		}
		stops := s.stops()
		if len(stops) != 5 {
			t.Fatalf("try %d: stops %v, want 5:\n%s", try, stops, s.output())
		}
		consumer := strings.Split(stops[1], ":")[0]
		for _, c := range stops[2:] {
			if !strings.HasPrefix(c, consumer+":") {
				t.Fatalf("try %d: `next` left consumer %s: stops %v", try, consumer, stops)
			}
		}
	}
}

// TestInspectorPtyUnknownAndEOF: an unknown command is named and the
// commands listed with their short forms; Ctrl-D quits with exit 0; Up
// brings back the previous command.
func TestInspectorPtyUnknownAndEOF(t *testing.T) {
	dir := recordInspectorApp(t)
	s := startInspector(t, dir, "native", "1:1")
	s.typeLines(1, "frob\r", "state\r", "\x1b[A\r", "\x04")
	if code := s.exit(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, s.output())
	}
	out := s.output()
	if !strings.Contains(out, `unknown command "frob"; commands: state [instance], msg, where, step (s), next (n), continue (c), break (b) LINE|Locus.on Topic|fn, back, quit (q)`) {
		t.Errorf("the unknown command is not named with the commands:\n%s", out)
	}
	if n := strings.Count(out, `{"sum":`); n != 2 {
		t.Errorf("the state was shown %d times, want 2 (Up repeats `state`):\n%s", n, out)
	}
}

// TestInspectorPtyBreakBack: a breakpoint on a handler, a fn or a line
// stops in B's deliveries, at the entry or the statement; `back` replays
// to the previous stop, the breakpoints still set.
func TestInspectorPtyBreakBack(t *testing.T) {
	dir := recordInspectorApp(t)
	for spec, want := range map[string]string{
		"B.on Job": "stops at the entry of B.on Job\n",
		"weigh":    "stops at the entry of weigh\n",
		"17":       "stops at app.hl:17\n",
	} {
		s := startInspector(t, dir, "native", "0:0")
		s.typeLines(1, "b "+spec+"\r", "c\r", "c\r", "back\r", "c\r", "q\r")
		if code := s.exit(); code != 0 {
			t.Fatalf("exit %d:\n%s", code, s.output())
		}
		out := s.output()
		if !strings.Contains(out, "breakpoint "+spec+": "+want) {
			t.Errorf("break %s not confirmed:\n%s", spec, out)
		}
		if !strings.Contains(out, "replaying from the start to 2:0") {
			t.Errorf("break %s: back does not say where it goes:\n%s", spec, out)
		}
		if got := strings.Join(s.stops(), " "); got != "0:0 2:0 2:1 2:0 2:1" {
			t.Errorf("break %s: stops %s, want 0:0 2:0 2:1 2:0 2:1:\n%s", spec, got, out)
		}
	}
	s := startInspector(t, dir, "native", "0:0")
	s.typeLines(1, "b nosuch\r", "back\r", "q\r")
	s.exit()
	for _, want := range []string{"error: break: no handler or fn named nosuch", "error: no earlier stop to go back to"} {
		if !strings.Contains(s.output(), want) {
			t.Errorf("missing %q:\n%s", want, s.output())
		}
	}
}

// TestInspectorPtyStatesAndWhere: at a statement stop in B, `state`
// shows an instance of another consumer (A, between deliveries), `where`
// the source position and the Hale stack; the stops are the same on both
// engines.
func TestInspectorPtyStatesAndWhere(t *testing.T) {
	dir := recordInspectorApp(t)
	var first string
	for _, engine := range []string{"native", "wasm"} {
		s := startInspector(t, dir, engine, "0:0")
		s.typeLines(1, "b weigh\r", "c\r", "where\r", "state A\r", "state\r", "b 99\r", "q\r")
		if code := s.exit(); code != 0 {
			t.Fatalf("%s: exit %d:\n%s", engine, code, s.output())
		}
		out := s.output()
		for _, want := range []string{
			"stopped at app.hl:7:27 in weigh (delivery 2:0, breakpoint)",
			"in delivery 2:0 (target B, message 0:0, topic Job)\n  at app.hl:7:27 in weigh\n  at app.hl:17:16 in B.on Job\n",
			`{"sum":`,
			"error: break: no statement on line 99 of app.hl",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: missing %q:\n%s", engine, want, out)
			}
		}
		// The stops, not the echo of the last keystroke, which races
		// with the end of the session.
		stops := strings.Join(s.stops(), " ")
		if first == "" {
			first = stops
		} else if stops != first {
			t.Errorf("the engines stop differently: %s, then %s", first, stops)
		}
	}
}
