package artifact

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// killChildEnv names, in the child process of TestRecorderKilled, the
// artifact to record to.
const killChildEnv = "HALE_TEST_RECORDER_KILL_CHILD"

// killChildEntries is how many entries the child appends: fewer than a
// batch, so only the flush timer writes them.
const killChildEntries = writerBatch / 4

// TestRecorderKilled kills (SIGKILL) a process that appended a few
// entries and then went quiet for longer than flushInterval: its
// temporary file holds every entry.
func TestRecorderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	path := filepath.Join(t.TempDir(), "run.halerec")
	cmd := exec.Command(os.Args[0], "-test.run=^TestRecorderKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), killChildEnv+"="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	tmp, ok := strings.CutPrefix(strings.TrimSpace(line), "appended to ")
	if !ok {
		t.Fatalf("child said %q", line)
	}
	// Ten times the bound: the machine may be busy.
	time.Sleep(10 * flushInterval)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	data, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Salvage(data)
	if a == nil {
		t.Fatalf("salvage: %v", err)
	}
	if a.Complete || len(a.Entries) != killChildEntries {
		t.Errorf("salvaged %d entries (complete %v) from the killed recording, want all %d", len(a.Entries), a.Complete, killChildEntries)
	}
}

// TestRecorderKillChild is the child process of TestRecorderKilled: it
// records a few entries, says where, and waits to be killed.
func TestRecorderKillChild(t *testing.T) {
	path := os.Getenv(killChildEnv)
	if path == "" {
		t.Skip("only run by TestRecorderKilled")
	}
	r, err := Create(path, testHeader(1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range killChildEntries {
		if err := r.Append(0, Publish{Topic: "T", Payload: []byte{byte(i)}}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			// The writer, started with the recorder, may find the first
			// entry at once; the others wait for the writer to wake.
			time.Sleep(10 * time.Millisecond)
		}
	}
	fmt.Printf("appended to %s\n", r.file.Name())
	time.Sleep(time.Minute)
}
