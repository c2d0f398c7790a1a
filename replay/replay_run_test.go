package replay_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// program is a compiled test program.
type program struct {
	img   *image.Image
	files []string
}

// compileProgram loads src as app.hl and compiles it to an image.
func compileProgram(t testing.TB, src string) *program {
	t.Helper()
	fsys := fstest.MapFS{"app.hl": &fstest.MapFile{Data: []byte(src)}}
	c, err := hale.Compile(fsys, "app.hl", hale.BuildOptions{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return &program{img: c.Image, files: c.Files}
}

// info is the header information of a recording of p.
func (p *program) info() replay.HeaderInfo {
	info := identity
	info.Files = p.files
	return info
}

// identity is the fake toolchain identity of the test recordings.
var identity = replay.HeaderInfo{HaleVersion: "test", BuildDigest: [32]byte{1}, ShapeHash: [32]byte{2}}

// recording is a recorded run.
type recording struct {
	path   string
	data   []byte
	art    *artifact.Artifact
	res    host.Result
	stdout string
	stderr string
}

// record runs prog live with a recording journal, into a temporary file.
func record(t testing.TB, p *program, opts host.Options, envPolicy string) *recording {
	t.Helper()
	return recordCtx(t, context.Background(), p, opts, envPolicy)
}

// recordCtx is record with a context: a run it cancels is recorded too.
func recordCtx(t testing.TB, ctx context.Context, p *program, opts host.Options, envPolicy string) *recording {
	t.Helper()
	info := p.info()
	info.EnvPolicy = envPolicy
	info.MemoryLimit = opts.MemoryLimit
	h, err := replay.NewHeader(p.img, info)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.halerec")
	rec, err := artifact.Create(path, h, artifact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	j := replay.NewRecordingJournal(rec, p.img, envPolicy)
	var stdout, stderr bytes.Buffer
	opts.Journal, opts.Stdout, opts.Stderr = j, &stdout, &stderr
	opts.Engine = engine
	res, err := host.Run(ctx, p.img, opts)
	if err != nil && (ctx.Err() == nil || !errors.Is(err, ctx.Err())) {
		t.Fatalf("run: %v", err)
	}
	if err := j.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	art, err := artifact.Decode(data)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if err := art.Verify(); err != nil {
		t.Fatalf("verify: %v", err)
	}
	return &recording{path: path, data: data, art: art, res: res, stdout: stdout.String(), stderr: stderr.String()}
}

// engine is the engine record and replayRun use.
var engine = host.EngineNative

// raceBuild is set under the race detector, where only the wasm engine
// runs (see engine_race_test.go).
var raceBuild = false

// replayed is a replayed run.
type replayed struct {
	art    *artifact.Artifact
	res    host.Result
	stats  replay.Stats
	report *artifact.Report
	stdout string
	stderr string
	at     *replay.AtView
}

// replayRun replays art with p, recording the replay in memory, and
// compares the two artifacts.
func replayRun(t testing.TB, art *artifact.Artifact, p *program, ro replay.Options) *replayed {
	t.Helper()
	return replayWith(t, art, p, ro, host.Options{})
}

// replayWith is replayRun with host options (the folder of live effects,
// say).
func replayWith(t testing.TB, art *artifact.Artifact, p *program, ro replay.Options, opts host.Options) *replayed {
	t.Helper()
	h, err := replay.ReplayHeader(art, p.img, p.info())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rec, err := artifact.New(&buf, h, artifact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ro.Record = rec
	r := replay.NewReplayer(art, p.img, ro)
	var stdout, stderr bytes.Buffer
	opts.Stdout, opts.Stderr, opts.Engine = &stdout, &stderr, engine
	r.Install(&opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := host.Run(ctx, p.img, opts)
	if err != nil {
		t.Fatalf("replay run: %v", err)
	}
	if err := r.Recording().Close(); err != nil {
		t.Fatalf("closing the replay's recording: %v", err)
	}
	again, err := artifact.Decode(buf.Bytes())
	if err != nil {
		t.Fatalf("decoding the replay's recording: %v", err)
	}
	stats := r.Stats()
	rep := artifact.Differ{Decode: replay.ProgramDecoder(p.img)}.Diff(art, again)
	stats.Apply(rep)
	return &replayed{art: again, res: res, stats: stats, report: rep, stdout: stdout.String(), stderr: stderr.String(), at: r.At()}
}

// explain describes a replay for a failure message.
func (rp *replayed) explain() string {
	var b strings.Builder
	rp.report.WriteText(&b)
	for _, f := range rp.stats.Findings {
		b.WriteString("finding: " + string(f.Kind) + ": " + f.Sentence + "\n")
	}
	return b.String()
}

const basicSrc = `
topic Tick { n: int }
topic Total { sum: int }

locus Clock {
    on start {
        let t = std::time::now_ms();
        for i in 0..5 { publish Tick { n: i + std::rand::next_int(10) }; }
        print("clock started");
    }
}

locus Adder {
    var sum: int = 0;
    var seen: int = 0;
    on Tick(t) {
        sum += t.n;
        seen += 1;
        if seen == 5 { publish Total { sum: sum }; }
    }
}

locus Reporter {
    on Total(t) { print("total " + str(t.sum)); }
}

main {
    spawn Clock;
    spawn Adder on pinned;
    spawn Reporter;
}
`

func TestReplayBasic(t *testing.T) {
	p := compileProgram(t, basicSrc)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	if rec.res.Verdict != host.VerdictQuiescent {
		t.Fatalf("recorded verdict %s", rec.res.Verdict)
	}
	rp := replayRun(t, rec.art, p, replay.Options{})
	if rp.report.Diverged() || !rp.stats.Clean() {
		t.Fatalf("replay diverged:\n%s", rp.explain())
	}
	if rp.stdout != rec.stdout {
		t.Errorf("stdout %q, recorded %q", rp.stdout, rec.stdout)
	}
}

// tryCatchSrc catches the trap of a failed file read and of a bad
// argument, and prints what it caught.
const tryCatchSrc = `
locus Main {
    on start {
        match try std::fs::read_text("no/such/file.txt") {
            Ok(text) => { print(text); },
            Err(e) => { print("caught " + e.kind + ": " + e.message); },
        }
        print(try std::rand::next_int(0));
        print(try std::rand::next_int(1));
    }
}
main { spawn Main; }
`

// engines are the engines a test runs on: both, or only wasm under the
// race detector (engine_race_test.go).
func engines() []host.EngineKind {
	if raceBuild {
		return []host.EngineKind{host.EngineWasm}
	}
	return []host.EngineKind{host.EngineNative, host.EngineWasm}
}

// onEngine runs f with record and replayRun on engine e (they use the
// package's engine).
func onEngine(e host.EngineKind, f func()) {
	saved := engine
	engine = e
	defer func() { engine = saved }()
	f()
}

// trapKinds lists the kinds of an artifact's trapped invocations, in order.
func trapKinds(a *artifact.Artifact) []string {
	var kinds []string
	for _, e := range a.Entries {
		if x, ok := e.Body.(artifact.Invocation); ok && x.Outcome == artifact.Trapped {
			kinds = append(kinds, x.TrapKind)
		}
	}
	return kinds
}

// TestReplayCaughtTrap records a run whose journaled calls fail and are
// caught by try: the recording holds each trap's kind, the replay serves
// the recorded traps, try catches them again with the same kind, and the
// run replays exactly, on both engines.
func TestReplayCaughtTrap(t *testing.T) {
	p := compileProgram(t, tryCatchSrc)
	for _, e := range engines() {
		onEngine(e, func() {
			rec := record(t, p, host.Options{}, artifact.EnvWithheld)
			if rec.res.Verdict != host.VerdictQuiescent {
				t.Fatalf("%v: recorded verdict %s\n%s", e, rec.res.Verdict, rec.stderr)
			}
			want := "caught io: cannot read \"no/such/file.txt\": no such file or directory\n" +
				"Err(Error { kind: \"arg\", message: \"std::rand::next_int: n must be positive, got 0\" })\nOk(0)\n"
			if rec.stdout != want {
				t.Fatalf("%v: recorded stdout %q, want %q", e, rec.stdout, want)
			}
			if rec.art.Version != artifact.FormatVersion {
				t.Errorf("%v: recorded format version %d", e, rec.art.Version)
			}
			if got := strings.Join(trapKinds(rec.art), ","); got != "io,arg" {
				t.Errorf("%v: recorded trap kinds %q, want io,arg", e, got)
			}
			rp := replayWith(t, rec.art, p, replay.Options{}, host.Options{})
			if rp.report.Diverged() || !rp.stats.Clean() {
				t.Fatalf("%v: replay diverged:\n%s", e, rp.explain())
			}
			if rp.stdout != rec.stdout {
				t.Errorf("%v: stdout %q, recorded %q", e, rp.stdout, rec.stdout)
			}
			if got := strings.Join(trapKinds(rp.art), ","); got != "io,arg" {
				t.Errorf("%v: the replay's recording has trap kinds %q, want io,arg", e, got)
			}
		})
	}
}

// TestReplayServesRecordedKind checks that a replay serves the kind the
// artifact records rather than one guessed from the message: the failed
// read, re-labelled "timeout" in the recording, is caught as a timeout,
// and --diff reports the changed output.
func TestReplayServesRecordedKind(t *testing.T) {
	p := compileProgram(t, tryCatchSrc)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	a := *rec.art
	a.Entries = append([]artifact.Entry(nil), rec.art.Entries...)
	relabelled := false
	for i, e := range a.Entries {
		if x, ok := e.Body.(artifact.Invocation); ok && x.Primitive == "std::fs::read_text" {
			x.TrapKind = "timeout"
			a.Entries[i].Body = x
			relabelled = true
		}
	}
	if !relabelled {
		t.Fatal("no std::fs::read_text entry")
	}
	rp := replayWith(t, &a, p, replay.Options{}, host.Options{})
	if want := "caught timeout: cannot read"; !strings.HasPrefix(rp.stdout, want) {
		t.Errorf("stdout %q does not start with %q", rp.stdout, want)
	}
	if !rp.report.Diverged() {
		t.Error("the diff does not report the changed output")
	}
}

// TestReplayFormat1 replays a recording made in artifact format version
// 1 (testdata/format1, recorded by the hale before version 2): it still
// decodes (both decoders, re-encoding to the same bytes), its traps have
// no kind and their kind is recovered from the message, and it replays
// exactly on both engines; the replay's own recording is version 2 and
// holds the kinds.
func TestReplayFormat1(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "format1", "app.hl"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "format1", "run.halerec"))
	if err != nil {
		t.Fatal(err)
	}
	p := compileProgram(t, string(src))
	art, err := artifact.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if art.Version != 1 {
		t.Fatalf("fixture has format version %d, want 1", art.Version)
	}
	if err := art.Verify(); err != nil {
		t.Fatalf("verify: %v", err)
	}
	if again, err := artifact.Encode(art); err != nil || !bytes.Equal(again, data) {
		t.Errorf("re-encoding the format 1 artifact does not give its bytes (err %v)", err)
	}
	if got := strings.Join(trapKinds(art), ","); got != "," {
		t.Errorf("format 1 trap kinds %q, want two empty ones", got)
	}
	indexed, err := artifact.Index(data)
	if err != nil {
		t.Fatalf("index: %v", err)
	}
	var want strings.Builder
	for _, e := range art.Entries {
		switch x := e.Body.(type) {
		case artifact.Output:
			want.Write(x.Result)
		case artifact.Publish:
			if x.DelayMS != 0 {
				t.Errorf("format 1 publish with delay %d", x.DelayMS)
			}
		}
	}
	for _, e := range engines() {
		onEngine(e, func() {
			for _, a := range []*artifact.Artifact{art, indexed} {
				rp := replayWith(t, a, p, replay.Options{}, host.Options{})
				if rp.report.Diverged() || !rp.stats.Clean() {
					t.Fatalf("%v: replay diverged:\n%s", e, rp.explain())
				}
				if rp.stdout != want.String() || !strings.HasPrefix(rp.stdout, "caught io: ") {
					t.Errorf("%v: stdout %q, recorded %q", e, rp.stdout, want.String())
				}
				if rp.art.Version != artifact.FormatVersion {
					t.Errorf("%v: the replay's recording has format version %d", e, rp.art.Version)
				}
				if got := strings.Join(trapKinds(rp.art), ","); got != "io,arg" {
					t.Errorf("%v: the replay's recording has trap kinds %q, want io,arg", e, got)
				}
			}
		})
	}
}
