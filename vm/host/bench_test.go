package host

import (
	"context"
	"fmt"
	"github.com/hale-lang/hale/vm"
	"testing"
	"time"

	"github.com/hale-lang/hale/codegen/image"
)

// benchRun runs a program compiled with its constant N set to b.N and
// reports messages per second of wall time (msgs/s) and of the process's
// CPU time (cpu-msgs/s; msgs per iteration: messages handled per unit of
// N).
func benchRun(b *testing.B, src string, kind EngineKind, msgs int) {
	img := compileAll(b, fmt.Sprintf(src, b.N))
	opts := Options{Engine: kind}
	if kind == EngineWasm {
		if _, err := defaultWasm(); err != nil { // compile outside the timing
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), benchCPUTime()
	res, err := Run(context.Background(), img, opts)
	elapsed, cpu := time.Since(start), benchCPUTime()-cpu
	b.StopTimer()
	if err != nil || res.Code != 0 {
		b.Fatalf("run: %v %+v", err, res)
	}
	b.ReportMetric(float64(b.N*msgs)/elapsed.Seconds(), "msgs/s")
	// Per second of the process's CPU time: steadier on a shared machine.
	b.ReportMetric(float64(b.N*msgs)/cpu.Seconds(), "cpu-msgs/s")
}

// A chain on the main bus: each delivery publishes the next message.
const chainSrc = `
const N: int = %d;
topic Tick { n: int }
locus Counter {
    var count: int = 0;
    on start { publish Tick { n: 1 }; }
    on Tick(t) { count += 1; if t.n < N { publish Tick { n: t.n + 1 }; } }
}
main { spawn Counter; }
`

// A burst on the main bus: one handler publishes N messages, two
// subscribers handle each.
const burstSrc = `
const N: int = %d;
topic Item { n: int, label: string }
locus Source { on start { for i in 0..N { publish Item { n: i, label: "item" }; } } }
locus Sum { var total: int = 0; on Item(it) { total += it.n; } }
main { spawn Source; spawn Sum as a; spawn Sum as b; }
`

// A pipeline across consumers: a pinned source publishes N messages
// that a pinned sink handles.
const pipelineSrc = `
const N: int = %d;
topic Item { n: int }
locus Source { on start { for i in 0..N { publish Item { n: i }; } } }
locus Sink { var total: int = 0; on Item(it) { total += it.n; } }
main { spawn Source on pinned; spawn Sink on pinned; }
`

// Ping-pong across consumers: every message waits for the other side.
const pingPongSrc = `
const N: int = %d;
topic Ping { n: int }
topic Pong { n: int }
locus A {
    on start { publish Ping { n: 1 }; }
    on Pong(p) { if p.n < N { publish Ping { n: p.n + 1 }; } }
}
locus B { on Ping(p) { publish Pong { n: p.n }; } }
main { spawn A on pinned; spawn B on pinned; }
`

func BenchmarkMainBusChain(b *testing.B) {
	for _, kind := range realEngines {
		b.Run(kind.String(), func(b *testing.B) { benchRun(b, chainSrc, kind, 1) })
	}
}

func BenchmarkMainBusBurst(b *testing.B) {
	for _, kind := range realEngines {
		b.Run(kind.String(), func(b *testing.B) { benchRun(b, burstSrc, kind, 2) })
	}
}

func BenchmarkCrossConsumerPipeline(b *testing.B) {
	for _, kind := range realEngines {
		b.Run(kind.String(), func(b *testing.B) { benchRun(b, pipelineSrc, kind, 1) })
	}
}

func BenchmarkCrossConsumerPingPong(b *testing.B) {
	for _, kind := range realEngines {
		b.Run(kind.String(), func(b *testing.B) { benchRun(b, pingPongSrc, kind, 2) })
	}
}

// benchProgram is a small program for start-up measurements.
func benchProgram(b *testing.B) *image.Image {
	return compileAll(b, fmt.Sprintf(chainSrc, 1))
}

// BenchmarkStartupCold measures the first engine of a process with an
// empty compilation cache: compiling the guest, instantiating it and
// loading the image.
func BenchmarkStartupCold(b *testing.B) {
	img := benchProgram(b)
	data, _ := img.MarshalBinary()
	ctx := context.Background()
	for b.Loop() {
		w, err := newWasmRuntime(ctx, b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		e, err := w.newEngine(ctx, &wasmProgram{image: data}, hostFunc(nil), vm.DefaultMemoryLimit)
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
		w.close(ctx)
	}
}

// BenchmarkStartupWarm is BenchmarkStartupCold with the compilation
// cache filled by an earlier process.
func BenchmarkStartupWarm(b *testing.B) {
	img := benchProgram(b)
	data, _ := img.MarshalBinary()
	ctx := context.Background()
	dir := b.TempDir()
	w, err := newWasmRuntime(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	w.close(ctx)
	for b.Loop() {
		w, err := newWasmRuntime(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		e, err := w.newEngine(ctx, &wasmProgram{image: data}, hostFunc(nil), vm.DefaultMemoryLimit)
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
		w.close(ctx)
	}
}

// BenchmarkEngineInstance measures one more engine from the shared
// compiled module (every consumer after the first).
func BenchmarkEngineInstance(b *testing.B) {
	img := benchProgram(b)
	data, _ := img.MarshalBinary()
	ctx := context.Background()
	w, err := defaultWasm()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		e, err := w.newEngine(ctx, &wasmProgram{image: data}, hostFunc(nil), vm.DefaultMemoryLimit)
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}

// BenchmarkRunHello measures a whole small run on each engine, start-up
// included, with the process's compiled module.
func BenchmarkRunHello(b *testing.B) {
	img := compileAll(b, `locus L { on start { print("hello"); } } main { spawn L; }`)
	for _, kind := range realEngines {
		b.Run(kind.String(), func(b *testing.B) {
			if kind == EngineWasm {
				defaultWasm()
			}
			for b.Loop() {
				if _, err := Run(context.Background(), img, Options{Engine: kind}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
