package cli

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// timerChildEnv names the program a child process of
// TestRunTimerInterrupted runs with `hale run`.
const timerChildEnv = "HALE_TEST_TIMER_CHILD"

// TestRunTimerInterrupted interrupts (SIGINT) `hale run` of a program
// that waits on a one-minute timer: hale ends promptly, with exit code
// 130, rather than after the delay.
func TestRunTimerInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	app := filepath.Join(dir, "wait.hl")
	src := `topic Tick { n: int }
locus Clock {
    on start { publish Tick { n: 1 } after 60_000; print("waiting"); }
    on Tick(t) { print("never"); }
}
main { spawn Clock; }
`
	if err := os.WriteFile(app, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunTimerChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), timerChildEnv+"="+app, "HALE_ENGINE=native")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// The output is flushed when the program starts waiting.
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "waiting" {
		t.Fatalf("child said %q (%v)", line, err)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	took := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitInterrupted {
		t.Errorf("child ended with %v, want exit code %d", err, ExitInterrupted)
	}
	if took > 20*time.Second {
		t.Errorf("the interrupted run took %v to end", took)
	}
}

// TestRunTimerChild is the child process of TestRunTimerInterrupted: it
// is hale running the program named by timerChildEnv (and does nothing
// in a normal test run).
func TestRunTimerChild(t *testing.T) {
	app := os.Getenv(timerChildEnv)
	if app == "" {
		t.Skip("child process only")
	}
	os.Exit(RunWith([]string{"run", app}, os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
