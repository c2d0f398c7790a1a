package replay_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// benchSrc moves 6,000 jobs from two pinned publishers through a pool of
// workers (each drawing a random number) to a main-bus sink: 30,000
// deliveries and 6,000 journaled calls per run.
const benchSrc = `
topic Job { n: int }
topic Done { n: int, r: int }
locus Pub(base: int) { on start { for i in 0..3000 { publish Job { n: base + i }; } } }
locus Worker(slot: int) {
    on Job(j) { if j.n % 2 == slot { publish Done { n: j.n, r: std::rand::next_int(100) }; } }
}
locus Sink { var sum: int = 0; on Done(d) { sum += d.r; } on Job(j) { sum += 1; } }
main {
    spawn Pub(0) as p0 on pinned;
    spawn Pub(100000) as p1 on pinned;
    spawn Worker(0) as w0 on pool("workers");
    spawn Worker(1) as w1 on pool("workers");
    spawn Sink;
}
`

func benchRun(b *testing.B, p *program, opts host.Options) host.Result {
	opts.Engine = engine
	res, err := host.Run(context.Background(), p.img, opts)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

func BenchmarkLive(b *testing.B) {
	p := compileProgram(b, benchSrc)
	for b.Loop() {
		benchRun(b, p, host.Options{})
	}
}

func BenchmarkRecord(b *testing.B) {
	p := compileProgram(b, benchSrc)
	h, err := replay.NewHeader(p.img, identity)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "run.halerec")
	var size int64
	for b.Loop() {
		rec, err := artifact.Create(path, h, artifact.Options{})
		if err != nil {
			b.Fatal(err)
		}
		j := replay.NewRecordingJournal(rec, p.img, artifact.EnvWithheld)
		benchRun(b, p, host.Options{Journal: j})
		if err := j.Close(); err != nil {
			b.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	a, err := artifact.Decode(data)
	if err != nil {
		b.Fatal(err)
	}
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	b.ReportMetric(float64(len(a.Entries)), "entries")
	b.ReportMetric(float64(size)/float64(len(a.Entries)), "bytes/entry")
}

func BenchmarkReplay(b *testing.B) {
	p := compileProgram(b, benchSrc)
	rec := record(b, p, host.Options{}, artifact.EnvWithheld)
	b.ReportMetric(float64(len(rec.data)), "artifact-bytes")
	for _, recordToo := range []bool{false, true} {
		name := "plain"
		if recordToo {
			name = "recorded"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				ro := replay.Options{}
				var buf bytes.Buffer
				if recordToo {
					h, _ := replay.NewHeader(p.img, identity)
					ro.Record, _ = artifact.New(&buf, h, artifact.Options{})
				}
				r := replay.NewReplayer(rec.art, p.img, ro)
				opts := host.Options{Stdout: io.Discard}
				r.Install(&opts)
				benchRun(b, p, opts)
				if recordToo {
					r.Recording().Close()
				}
				if s := r.Stats(); !s.Clean() {
					b.Fatalf("diverged: %+v", s.Findings[0])
				}
			}
		})
	}
}

func BenchmarkNewReplayer(b *testing.B) {
	p := compileProgram(b, benchSrc)
	rec := record(b, p, host.Options{}, artifact.EnvWithheld)
	for b.Loop() {
		replay.NewReplayer(rec.art, p.img, replay.Options{})
	}
}
