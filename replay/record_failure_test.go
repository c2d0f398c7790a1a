package replay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/host"
)

// trapSpy keeps the traps the runtime reports to the recording journal.
type trapSpy struct {
	*replay.RecordingJournal
	mu    sync.Mutex
	traps []*vm.Trap
}

func (s *trapSpy) Trap(c, n int, t *vm.Trap, d *host.Delivery) {
	s.mu.Lock()
	s.traps = append(s.traps, t)
	s.mu.Unlock()
	s.RecordingJournal.Trap(c, n, t, d)
}

// TestRecordingFailureStopsTheHandler: a long handler making fs writes
// while the recording's disk fills up is stopped by an uncatchable trap
// soon after the recorder fails, on both engines, instead of going on with
// writes nothing records; closing the recording reports the failure
// (the CLI's exit code 4).
func TestRecordingFailureStopsTheHandler(t *testing.T) {
	const writes = 20000
	for _, kind := range []host.EngineKind{host.EngineWasm, host.EngineNative} {
		t.Run(kind.String(), func(t *testing.T) {
			if raceBuild && kind == host.EngineNative {
				t.Skip("native engine not run under the race detector here")
			}
			dir := t.TempDir()
			out := filepath.Join(dir, "out.txt")
			p := compileProgram(t, fmt.Sprintf(`
locus Writer {
    on start {
        for i in 0..%d {
            std::fs::append_text(%q, "x");
        }
    }
}
main { spawn Writer; }
`, writes, out))
			h, err := replay.NewHeader(p.img, p.info())
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "run.halerec")
			rec, err := artifact.Create(path, h, artifact.Options{CreateTemp: func(dir, pattern string) (artifact.File, error) {
				f, err := os.CreateTemp(dir, pattern)
				return &replay.FullDisk{File: f, Budget: 4096}, err
			}})
			if err != nil {
				t.Fatal(err)
			}
			spy := &trapSpy{RecordingJournal: replay.NewRecordingJournal(rec, p.img, artifact.EnvWithheld)}
			var stderr bytes.Buffer
			res, err := host.Run(context.Background(), p.img, host.Options{Engine: kind, Journal: spy, Stdout: &bytes.Buffer{}, Stderr: &stderr})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if cerr := spy.Close(); cerr == nil || !strings.Contains(cerr.Error(), "no space left on device") {
				t.Errorf("Close: %v, want the disk-full failure", cerr)
			}
			data, _ := os.ReadFile(out)
			// The writer notices the failure within a batch or its timer;
			// the handler's next call then traps. Without the check every
			// write would happen.
			if len(data) >= writes/4 {
				t.Errorf("%d of %d writes happened after the recording failed early", len(data), writes)
			}
			if len(spy.traps) != 1 {
				t.Fatalf("%d traps reported, want 1 (verdict %s, stderr %q)", len(spy.traps), res.Verdict, stderr.String())
			}
			tr := spy.traps[0]
			if !tr.Uncatchable || !strings.HasPrefix(tr.Message, "recording failed: ") {
				t.Errorf("trap %q uncatchable=%v, want an uncatchable \"recording failed: …\"", tr.Message, tr.Uncatchable)
			}
			if !errors.Is(spy.Err(), syscall.ENOSPC) {
				t.Errorf("Err() = %v", spy.Err())
			}
		})
	}
}
