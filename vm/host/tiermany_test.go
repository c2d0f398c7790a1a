package host

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm/guest/abi"
	"github.com/hale-lang/hale/vm/value"
)

// chargeEngines makes, for img, the engines the memory tests compare,
// each with memory limit limit and every instance initialised: the
// native engine, the wasm engine with compiled handlers (as a run's
// consumer: batches and the tier), the same without compiled handlers
// and the wasm engine without the tier. pubs[i] collects engine i's
// publishes.
func chargeEngines(t *testing.T, img *image.Image, limit int64, pubs *[4][]string) (names []string, engines []Engine) {
	t.Helper()
	ctx := context.Background()
	names = []string{"native", "wasm", "wasm without compiled handlers", "wasm without the tier"}
	w, err := defaultWasm()
	if err != nil {
		t.Fatal(err)
	}
	for i := range names {
		host := &countingBatchHost{hostFunc: func(id uint16, args []byte) ([]byte, error) {
			pubs[i] = append(pubs[i], fmt.Sprintf("%d %x", id, args))
			return nil, nil
		}}
		var e Engine
		switch i {
		case 0:
			e, err = newNative(img, host, limit)
		default:
			disableTier = i == 3
			prog, perr := w.prepare(ctx, img)
			disableTier = false
			if perr != nil {
				t.Fatal(perr)
			}
			t.Cleanup(func() { prog.close(ctx) })
			e, err = w.newEngine(ctx, prog, host, limit)
			if err == nil && i == 2 {
				e.(*wasmEngine).fastMode = 2 // no compiled handlers
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		for inst := range img.Instances {
			if err := e.Init(inst); err != nil {
				t.Fatal(err)
			}
		}
		engines = append(engines, e)
	}
	return names, engines
}

// memCounters returns e's machine's charges since its last measure and
// its allowance (of the machine of instance inst, on the wasm engine
// read through fastinfo).
func memCounters(t *testing.T, e Engine, inst int) string {
	t.Helper()
	if n, ok := e.(*nativeEngine); ok {
		c, a := n.m.MemoryCounters()
		return fmt.Sprintf("charged %d, allowance %d", c, a)
	}
	w := e.(*wasmEngine)
	if err := w.begin(); err != nil {
		t.Fatal(err)
	}
	defer w.end()
	if w.g.fastInfo == nil {
		// No compiled handlers (no tier): the guest answers anyway.
		w.g.fastInfo = w.g.mod.ExportedFunction(abi.ExportFastInfo)
	}
	var fi fastInst
	w.askFast(inst, 0, &fi)
	if !fi.known || fi.guards == 0 {
		t.Fatal("fastinfo gave no addresses")
	}
	read := func(at uint64) uint64 {
		b, ok := w.g.mem.Read(uint32(at), 8)
		if !ok {
			t.Fatalf("no memory at %#x", at)
		}
		return binary.LittleEndian.Uint64(b)
	}
	return fmt.Sprintf("charged %d, allowance %d", read(fi.charged), read(read(fi.guards+8)))
}

// TestFastHandlerMeasures delivers messages one by one to a handler
// compiled whole that runs instructions after which the interpreter
// measures memory (a product, a remainder, a call), on a machine with a
// small memory limit: after every delivery, the charges since the last
// measure, the allowance, the state and the publishes must be the same
// on the native engine, on the wasm engine with and without compiled
// handlers and without the tier. The charges of the payloads pass the
// allowance every few tens of thousands of deliveries; the interpreter
// measures at the first such instruction after that, and so must the
// compiled handler (by handing the delivery back). Before it did, the
// compiled handler added its charges past the allowance and the measure
// came later or never.
func TestFastHandlerMeasures(t *testing.T) {
	img := compileAll(t, `
topic T { n: int, m: int }
topic U { v: int }
fn mix(a: int, b: int) -> int {
    var x = a;
    for i in 0..40 { x = (x * 31 + b + i) % 1000003; }
    return x;
}
locus L {
    var acc: int = 1;
    var count: int = 0;
    on T(t) {
        count += 1;
        if t.m == 0 {
            acc = acc + t.n;
        } else if t.m == 1 {
            acc = (acc * 7 + t.n) % 1000003;
        } else {
            acc = mix(acc, t.n);
            publish U { v: acc };
        }
    }
}
locus S { on U(u) { } }
main { spawn L; spawn S; }
`)
	var pubs [4][]string
	names, engines := chargeEngines(t, img, MinMemoryLimit, &pubs)
	ran := fastAnswered.Load()
	measured, last := 0, int64(0)
	r := rand.New(rand.NewPCG(7, 18))
	for k := range 90000 {
		// Mostly deliveries that never measure, so that the charges
		// pass the allowance before one that does.
		m := int64(0)
		if r.IntN(50) == 0 {
			m = 1 + int64(r.IntN(2))
		}
		payload := structPayload(value.Int(int64(r.IntN(100000))), value.Int(m))
		var got [4]string
		for i, e := range engines {
			err := e.Deliver(0, 0, payload)
			st, serr := e.State(0)
			got[i] = fmt.Sprintf("%v, %s, state %x %v, %d publishes", err, memCounters(t, e, 0), st, serr, len(pubs[i]))
		}
		for i := 1; i < len(engines); i++ {
			if got[i] != got[0] {
				t.Fatalf("delivery %d: %s: %s\n%s: %s", k, names[0], got[0], names[i], got[i])
			}
		}
		if c, _ := engines[0].(*nativeEngine).m.MemoryCounters(); c < last {
			measured++
			last = c
		} else {
			last = c
		}
	}
	for i := 1; i < len(pubs); i++ {
		if fmt.Sprint(pubs[i]) != fmt.Sprint(pubs[0]) {
			t.Fatalf("%s and %s published differently", names[0], names[i])
		}
	}
	if ran = fastAnswered.Load() - ran; ran < 80000 {
		t.Fatalf("%d deliveries ran compiled, want 80,000 or more", ran)
	}
	if measured < 2 {
		t.Fatalf("the machines measured %d times, want 2 or more", measured)
	}
	t.Logf("%d deliveries ran compiled, %d measures", ran, measured)
}
