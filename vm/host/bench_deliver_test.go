package host

import (
	"context"
	"testing"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
)

// The fixed cost of one delivery, without the scheduler: an engine made
// with NewEngine runs one handler b.N times. empty does nothing with its
// payload; read reads a field into the state; steps runs ten integer
// steps; publish publishes one message (the host's Prim only counts it).
// cpu-ns/op is the process's CPU time per delivery. wasm-batched is the
// wasm engine with publish batches and the second tier, as a run's
// consumers have it (each of these handlers runs compiled whole).
var deliverHandlers = []struct{ name, body string }{
	{"empty", ``},
	{"read", `total += t.n;`},
	{"steps", `var s = t.n; s += 1; s += 2; s += 3; s += 4; s += 5; s += 6; s += 7; total = s;`},
	{"publish", `publish U { n: t.n };`},
	{"publish4", `publish U { n: t.n }; publish U { n: t.n + 1 }; publish U { n: t.n + 2 }; publish U { n: t.n + 3 };`},
}

func BenchmarkDeliver(b *testing.B) {
	for _, h := range deliverHandlers {
		b.Run(h.name, func(b *testing.B) {
			img := deliverImage(b, h.body)
			for _, kind := range []string{"native", "wasm", "wasm-batched"} {
				b.Run(kind, func(b *testing.B) {
					published := 0
					host := hostFunc(func(id uint16, args []byte) ([]byte, error) {
						if id == vm.PrimPublish {
							published++
						}
						return nil, nil
					})
					var e Engine
					var err error
					switch kind {
					case "native":
						e, err = NewEngine(context.Background(), EngineNative, img, host)
					case "wasm":
						e, err = NewEngine(context.Background(), EngineWasm, img, host)
					default:
						// As a run's consumer: publishes in batches,
						// and the program's second tier.
						var w *wasmRuntime
						if w, err = defaultWasm(); err == nil {
							var prog *wasmProgram
							if prog, err = w.prepare(context.Background(), img); err == nil {
								defer prog.close(context.Background())
								e, err = w.newEngine(context.Background(), prog, &countingBatchHost{hostFunc: host}, vm.DefaultMemoryLimit)
							}
						}
					}
					if err != nil {
						b.Fatal(err)
					}
					defer e.Close()
					if err := e.Init(0); err != nil {
						b.Fatal(err)
					}
					payload := structPayload(v(2))
					b.ReportAllocs()
					b.ResetTimer()
					cpu := benchCPUTime()
					for range b.N {
						if err := e.Deliver(0, 0, payload); err != nil {
							b.Fatal(err)
						}
					}
					cpu = benchCPUTime() - cpu
					b.StopTimer()
					b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
				})
			}
		})
	}
}

// countingBatchHost takes batches of publishes and hands each to the
// wrapped host, as a run's consumer takes them (batch.go).
type countingBatchHost struct{ hostFunc }

func (h *countingBatchHost) batchPublishes() bool { return true }

func (h *countingBatchHost) publishBatch(batch []byte) error { return publishBatch(h.hostFunc, batch) }

// BenchmarkExportCall is the bare cost of calling an export of the guest
// (result, which returns an address) and of a memory write of a small
// payload: the floor of every delivery's crossing.
func BenchmarkExportCall(b *testing.B) {
	img := compileAll(b, `topic T { n: int } locus L { on T(t) { } } main { spawn L; }`)
	e, err := NewEngine(context.Background(), EngineWasm, img, hostFunc(func(id uint16, args []byte) ([]byte, error) { return nil, nil }))
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	g := e.(*wasmEngine).g
	b.Run("result", func(b *testing.B) {
		for range b.N {
			if err := g.result.CallWithStack(g.ctx, g.stack[:]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write", func(b *testing.B) {
		p := structPayload(v(2))
		for range b.N {
			if err := g.write(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDeliverMany is BenchmarkDeliver's handlers on the wasm engine
// of a run's consumer, handed deliveries in runs of manyDeliveries
// (DeliverMany, as a consumer with nothing to see each delivery does):
// cpu-ns/op is the process's CPU time per delivery.
func BenchmarkDeliverMany(b *testing.B) {
	for _, h := range deliverHandlers {
		b.Run(h.name, func(b *testing.B) {
			img := deliverImage(b, h.body)
			host := hostFunc(func(id uint16, args []byte) ([]byte, error) { return nil, nil })
			w, err := defaultWasm()
			if err != nil {
				b.Fatal(err)
			}
			prog, err := w.prepare(context.Background(), img)
			if err != nil {
				b.Fatal(err)
			}
			defer prog.close(context.Background())
			e, err := w.newEngine(context.Background(), prog, &countingBatchHost{hostFunc: host}, vm.DefaultMemoryLimit)
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			if err := e.Init(0); err != nil {
				b.Fatal(err)
			}
			m := e.(manyDeliverer)
			ds := make([]Delivery, manyDeliveries)
			for i := range ds {
				ds[i] = Delivery{Target: 0, Topic: 0, Payload: structPayload(v(int64(i)))}
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := benchCPUTime()
			for done := 0; done < b.N; {
				n := min(len(ds), b.N-done)
				for at := 0; at < n; {
					ran, err := m.DeliverMany(ds[at:n])
					if err != nil || ran == 0 {
						b.Fatal(ran, err)
					}
					at += ran
				}
				done += n
			}
			cpu = benchCPUTime() - cpu
			b.StopTimer()
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// deliverImage is the program of the Deliver benchmarks: L's handler of
// T runs body, and S takes what it publishes.
func deliverImage(b *testing.B, body string) *image.Image {
	return compileAll(b, `
topic T { n: int }
topic U { n: int }
locus L {
    var total: int = 0;
    on T(t) { `+body+` }
}
locus S { on U(u) { } }
main { spawn L; spawn S; }
`)
}
