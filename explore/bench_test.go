package explore

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/hale-lang/hale/vm/host"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSchedules measures schedules per second for a program of
// 1,000 deliveries per run (thousand.hl), with the state reset between
// schedules in one process (docs/performance.md). Besides wall time it
// reports CPU time per schedule, which a busy machine distorts less.
func BenchmarkSchedules(b *testing.B) {
	for _, kind := range []host.EngineKind{host.EngineWasm, host.EngineNative} {
		b.Run(kind.String(), func(b *testing.B) {
			s := newSched(b, "testdata/thousand.hl", kind, Config{})
			strat, _ := newStrategy(StrategyPCT, DefaultDepth)
			// One run first: it instantiates the guests that later runs reuse.
			if o, err := s.run(context.Background(), 0, strat.schedule(0), nil); err != nil || len(o.Steps) != 1002 {
				b.Fatalf("warm-up: %v, %d steps", err, len(o.Steps))
			}
			b.ResetTimer()
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				seed := uint64(i + 1)
				o, err := s.run(context.Background(), seed, strat.schedule(seed), nil)
				if err != nil || o.Failure != nil {
					b.Fatalf("run: %v %+v", err, o.Failure)
				}
				strat.done(o)
			}
			used := cpuTime() - cpu
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
			b.ReportMetric(float64(b.N)/used.Seconds(), "schedules/cpu-s")
		})
	}
}
