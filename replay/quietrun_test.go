package replay_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// recordFixed records p on kind with a fixed header (the Savina
// artifacts' way) and returns the artifact's bytes and the run's output.
func recordFixed(t *testing.T, p *program, kind host.EngineKind) ([]byte, string, host.Result) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.halerec")
	info := p.info()
	info.Created = time.Unix(1, 0)
	h, err := replay.NewHeader(p.img, info)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := artifact.Create(path, h, artifact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	j := replay.NewRecordingJournal(rec, p.img, artifact.EnvWithheld)
	var out bytes.Buffer
	res, err := host.Run(context.Background(), p.img, host.Options{Engine: kind, Stdout: &out, Stderr: io.Discard, Journal: j})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data, out.String(), res
}

// TestQuietRunRecording holds the recording of a counter whose
// increments the wasm engine runs in runs of one call, stamped after it
// (host.LateJournal), to the recording of the same program made before
// that (testdata/quietrun/run.halerec, by the tree of docs/performance.md
// §5.25, each consumer's entries grouped as for Counting's Savina
// digest), on both engines; and replays that older recording on both
// engines without a divergence.
func TestQuietRunRecording(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "quietrun", "app.hl"))
	if err != nil {
		t.Fatal(err)
	}
	p := compileProgram(t, string(src))
	fixture := filepath.Join("testdata", "quietrun", "run.halerec")
	if out := os.Getenv("HALE_WRITE_QUIETRUN"); out != "" {
		data, _, _ := recordFixed(t, p, host.EngineWasm)
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	want := byConsumer(t, old)
	for _, kind := range engines() {
		data, out, res := recordFixed(t, p, kind)
		if res.Verdict != host.VerdictQuiescent || !bytes.Contains([]byte(out), []byte("counted 3000\n")) {
			t.Fatalf("%s: verdict %s, output %q", kind, res.Verdict, out)
		}
		if got := byConsumer(t, data); !bytes.Equal(got, want) {
			t.Errorf("%s: the recording differs from the one made before runs were stamped late (%d bytes, %d before)", kind, len(got), len(want))
		}
	}
	art, err := artifact.Decode(old)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range engines() {
		onEngine(e, func() {
			rp := replayRun(t, art, p, replay.Options{})
			if rp.report.Diverged() || !rp.stats.Clean() {
				t.Fatalf("%v: replay of the older recording diverged:\n%s", e, rp.explain())
			}
			if !bytes.Contains([]byte(rp.stdout), []byte("counted 3000\n")) {
				t.Errorf("%v: replay printed %q", e, rp.stdout)
			}
		})
	}
}
