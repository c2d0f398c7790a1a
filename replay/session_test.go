package replay_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// session runs replay.Run with the test engine and the program's identity.
func session(t *testing.T, art *artifact.Artifact, p *program, opts replay.SessionOptions) (*replay.Session, error) {
	t.Helper()
	opts.Engine, opts.Info = engine, p.info()
	return replay.Run(context.Background(), art, p.img, opts)
}

func TestSessionIdentical(t *testing.T) {
	p := compileProgram(t, basicSrc)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	var out strings.Builder
	s, err := session(t, rec.art, p, replay.SessionOptions{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if s.Report == nil || s.Report.Diverged() || s.Report.Verdict != artifact.ReportIdentical {
		t.Fatalf("report %+v", s.Report)
	}
	if out.String() != rec.stdout {
		t.Errorf("printed again %q, recorded %q", out.String(), rec.stdout)
	}
	if s.Report.Deliveries == 0 || s.Report.Consumers == 0 {
		t.Errorf("report counts nothing: %+v", s.Report)
	}
}

// TestSessionDivergencePosition checks that a divergence found by the
// replayer alone is run again recorded, so that the report shows both
// sides, and that it names the handler's declaration in the image.
func TestSessionDivergencePosition(t *testing.T) {
	p := compileProgram(t, basicSrc)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	changed := strings.Replace(basicSrc, `print("total " + str(t.sum));`, `print("sum " + str(t.sum));`, 1)
	q := compileProgram(t, changed)
	s, err := session(t, rec.art, q, replay.SessionOptions{Options: replay.Options{Quiet: true}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Report == nil || !s.Report.Diverged() || len(s.Report.Divergences) == 0 {
		t.Fatalf("no divergence: %+v", s.Report)
	}
	d := s.Report.Divergences[0]
	if d.Kind != artifact.ChangedOutput {
		t.Errorf("kind %s, want %s (%s)", d.Kind, artifact.ChangedOutput, d.Sentence)
	}
	line := 1 + strings.Count(changed[:strings.Index(changed, "on Total(t)")], "\n")
	if want := "app.hl:" + strconv.Itoa(line) + ":5 in Reporter.on Total"; d.Position != want {
		t.Errorf("position %q, want %q", d.Position, want)
	}
	if !strings.Contains(d.Recorded+d.Replayed, "total") || !strings.Contains(d.Recorded+d.Replayed, "sum") {
		t.Errorf("both sides not shown: recorded %q, replayed %q", d.Recorded, d.Replayed)
	}
}

func TestSessionOutput(t *testing.T) {
	p := compileProgram(t, basicSrc)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	path := filepath.Join(t.TempDir(), "replayed.halerec")
	s, err := session(t, rec.art, p, replay.SessionOptions{Output: path, Options: replay.Options{Quiet: true}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Report.Diverged() {
		t.Fatalf("diverged: %+v", s.Report.Divergences)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := artifact.Decode(data)
	if err != nil {
		t.Fatalf("the replay's recording: %v", err)
	}
	if again.Len() != rec.art.Len() || again.Header.EnvPolicy != rec.art.Header.EnvPolicy {
		t.Errorf("replay recorded %d entries (policy %s), the recording has %d (policy %s)",
			again.Len(), again.Header.EnvPolicy, rec.art.Len(), rec.art.Header.EnvPolicy)
	}
	_, err = session(t, rec.art, p, replay.SessionOptions{Output: filepath.Join(t.TempDir(), "no", "such", "dir", "r.halerec")})
	if !errors.Is(err, replay.ErrOutput) {
		t.Errorf("unwritable output: %v, want ErrOutput", err)
	}
}

func TestSessionStopsAt(t *testing.T) {
	p := compileProgram(t, basicSrc)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	at := artifact.Coordinate{Consumer: 0, N: 1}
	s, err := session(t, rec.art, p, replay.SessionOptions{Options: replay.Options{At: &at, Quiet: true}})
	if err != nil {
		t.Fatal(err)
	}
	if s.View == nil || s.Report != nil {
		t.Fatalf("want the --at view and no report: %+v", s)
	}
	if s.View.Coordinate != "0:1" {
		t.Errorf("stopped at %s", s.View.Coordinate)
	}
}

func TestSessionRefusesAsyncIO(t *testing.T) {
	p := compileProgram(t, `
locus L { on start { print("x"); } }
main { spawn L on async_io; }
`)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	_, err := session(t, rec.art, p, replay.SessionOptions{})
	if err == nil || !strings.Contains(err.Error(), "async_io instances (L)") {
		t.Fatalf("async_io program: %v", err)
	}
}

func TestSessionCanceled(t *testing.T) {
	p := compileProgram(t, basicSrc)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := replay.Run(ctx, rec.art, p.img, replay.SessionOptions{Engine: engine, Info: p.info()})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled session: %v", err)
	}
}

func TestStartRecording(t *testing.T) {
	p := compileProgram(t, basicSrc)
	if j, err := replay.StartRecording(artifact.Settings{}, p.img, p.info()); j != nil || err != nil {
		t.Fatalf("no path: %v %v", j, err)
	}
	path := filepath.Join(t.TempDir(), "run.halerec")
	j, err := replay.StartRecording(artifact.Settings{Path: path, EnvPolicy: artifact.EnvFull}, p.img, p.info())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := host.Run(context.Background(), p.img, host.Options{Engine: engine, Journal: j}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	art, err := artifact.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	h := art.Header
	if h.EnvPolicy != artifact.EnvFull || strings.Join(h.Files, " ") != "app.hl" || h.BuildDigest != identity.BuildDigest || len(h.Consumers) != 2 {
		t.Errorf("header %+v", h)
	}
	if _, err := replay.StartRecording(artifact.Settings{Path: filepath.Join(path, "x", "y")}, p.img, p.info()); err == nil {
		t.Error("an unwritable path started a recording")
	}
}

// TestSessionStarted: Started is called once, before the program prints
// anything, in a session that diverges and runs again, and in one that
// fails before the program runs.
func TestSessionStarted(t *testing.T) {
	p := compileProgram(t, basicSrc)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	var out strings.Builder
	calls, printedBefore := 0, -1
	started := func() {
		calls++
		printedBefore = out.Len()
	}
	changed := compileProgram(t, strings.Replace(basicSrc, `print("total " + str(t.sum));`, `print("sum " + str(t.sum));`, 1))
	s, err := session(t, rec.art, changed, replay.SessionOptions{Stdout: &out, Started: started})
	if err != nil || !s.Report.Diverged() {
		t.Fatalf("changed program: %v, %+v", err, s)
	}
	if calls != 1 || printedBefore != 0 || out.Len() == 0 {
		t.Errorf("Started called %d times, with %d bytes printed before it (printed %d in all); want once, before anything",
			calls, printedBefore, out.Len())
	}

	calls = 0
	bad := replay.SessionOptions{Output: filepath.Join(t.TempDir(), "no", "such", "folder", "x.halerec"), Started: started}
	if _, err := session(t, rec.art, p, bad); !errors.Is(err, replay.ErrOutput) {
		t.Fatalf("-o into a missing folder: %v", err)
	}
	if calls != 1 {
		t.Errorf("Started called %d times in a session that failed to start, want once", calls)
	}
}
