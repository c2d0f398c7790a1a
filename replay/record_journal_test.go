package replay

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

// FullDisk is a temporary file that fails with ENOSPC once Budget bytes
// have been written. It is exported for the external tests of this
// package (record_failure_test.go) too.
type FullDisk struct {
	*os.File
	Budget int
}

func (f *FullDisk) Write(p []byte) (int, error) {
	if len(p) > f.Budget {
		n, _ := f.File.Write(p[:f.Budget])
		f.Budget = 0
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	f.Budget -= len(p)
	return f.File.Write(p)
}

// TestRecordingJournalStopsLiveEffectsAfterFailure: once the recorder has
// failed (the disk is full), a journaled call traps at once, uncatchably,
// and its live effect does not happen; Close reports the failure.
func TestRecordingJournalStopsLiveEffectsAfterFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.halerec")
	img := rjProgram()
	h, err := NewHeader(img, HeaderInfo{HaleVersion: "test", EnvPolicy: artifact.EnvWithheld})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := artifact.Create(path, h, artifact.Options{CreateTemp: func(dir, pattern string) (artifact.File, error) {
		f, err := os.CreateTemp(dir, pattern)
		return &FullDisk{File: f, Budget: 4096}, err // the header, then a few entries
	}})
	if err != nil {
		t.Fatal(err)
	}
	j := NewRecordingJournal(rec, img, artifact.EnvWithheld)
	write := rjPrim(t, "std::fs::write_text")
	args := rjArgs(value.Str("out.txt"), value.Str("data"))
	var l liveRecorder
	// Calls go live and are recorded until the writer hits the full disk.
	var trapped error
	deadline := time.Now().Add(5 * time.Second)
	for trapped == nil {
		if time.Now().After(deadline) {
			t.Fatal("the recorder never failed")
		}
		_, trapped = j.Invoke(0, write, args, l.live)
	}
	before := l.calls
	for range 3 {
		_, err := j.Invoke(0, write, args, l.live)
		if err == nil || !errors.Is(err, vm.ErrUncatchable) || !strings.HasPrefix(err.Error(), "recording failed: ") ||
			!strings.Contains(err.Error(), "no space left on device") {
			t.Fatalf("call after the failure: %v, want an uncatchable \"recording failed: …no space left on device\"", err)
		}
	}
	if !errors.Is(trapped, vm.ErrUncatchable) {
		t.Errorf("the call that found the failure: %v, not uncatchable", trapped)
	}
	if l.calls != before {
		t.Errorf("%d live calls after the recording failed, want 0", l.calls-before)
	}
	j.End(artifact.VerdictTrap, 3)
	if err := j.Close(); err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("Close: %v", err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("folder holds %v after the failure", names)
	}
}
