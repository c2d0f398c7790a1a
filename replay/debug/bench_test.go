package debug_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/replay/debug"
	"github.com/hale-lang/hale/vm/host"
)

const ticksApp = `topic Tick { n: int }

locus Source {
    on start {
        for i in 0..100000 {
            publish Tick { n: i };
        }
    }
}

locus Sink {
    var total: int = 0;
    on Tick(t) {
        total += t.n;
    }
}

main { spawn Source; spawn Sink; }
`

// recordB is recordApp for a benchmark.
func recordB(b *testing.B, src string) (program, recording string) {
	dir := b.TempDir()
	program = filepath.Join(dir, "app.hl")
	if err := os.WriteFile(program, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	c, err := hale.CompileFile(program, hale.BuildOptions{})
	if err != nil {
		b.Fatal(err)
	}
	h, err := replay.NewHeader(c.Image, replay.HeaderInfo{HaleVersion: hale.Version, BuildDigest: c.BuildDigest(), ShapeHash: c.ShapeHash, Files: c.Files})
	if err != nil {
		b.Fatal(err)
	}
	recording = filepath.Join(dir, "run.halerec")
	rec, err := artifact.Create(recording, h, artifact.Options{})
	if err != nil {
		b.Fatal(err)
	}
	j := replay.NewRecordingJournal(rec, c.Image, "")
	if _, err := host.Run(context.Background(), c.Image, host.Options{Engine: host.EngineNative, Journal: j}); err != nil {
		b.Fatal(err)
	}
	if err := j.Close(); err != nil {
		b.Fatal(err)
	}
	return program, recording
}

// BenchmarkStepBack: one step back at the end of a recording of 100,001
// deliveries (a start, then 100,000 Ticks), from a statement of the last
// delivery to the one before it: a replay from the start to the stop.
//
//	go test ./replay/debug -run XXX -bench StepBack -benchtime 3x
func BenchmarkStepBack(b *testing.B) {
	program, rec := recordB(b, ticksApp)
	for _, e := range []host.EngineKind{host.EngineWasm, host.EngineNative} {
		b.Run(e.String(), func(b *testing.B) {
			s, err := debug.Launch(context.Background(), debug.Config{Program: program, Recording: rec, Engine: e, StopAt: "0:100000"})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			stop, err := s.Start()
			if err != nil || stop.Coordinate != "0:100000" {
				b.Fatalf("start: %+v %v", stop, err)
			}
			var cpu time.Duration
			b.ResetTimer()
			for b.Loop() {
				start := cpuTime()
				// From before delivery 0:100000 back to the last
				// statement of 0:99999, then forward again.
				stop, err := s.StepBack(stop.Thread)
				if err != nil || stop.Coordinate != "0:99999" {
					b.Fatalf("step back: %+v %v", stop, err)
				}
				cpu += cpuTime() - start
				b.StopTimer()
				if stop, err = s.Next(stop.Thread); err != nil || stop.Coordinate != "0:100000" {
					b.Fatalf("next: %+v %v", stop, err)
				}
				b.StartTimer()
			}
			// CPU time (user+sys) of the process: the wall time depends
			// on the load of a shared machine.
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
