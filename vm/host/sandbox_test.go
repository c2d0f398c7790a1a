package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math/rand"
	"testing"
	"time"
)

// wasmProbe is a hand-assembled WebAssembly module that imports WASI's
// clock_time_get and random_get and exports them as
//
//	clock(id i32, ptr i32) -> errno   clock_time_get(id, 0, ptr)
//	random(ptr i32, len i32) -> errno random_get(ptr, len)
//
// with its memory, so a test can read what the sandbox answers.
func wasmProbe() []byte {
	vec := func(n int, items ...[]byte) []byte {
		return append([]byte{byte(n)}, bytes.Join(items, nil)...)
	}
	name := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	section := func(id byte, content []byte) []byte {
		return append([]byte{id, byte(len(content))}, content...)
	}
	const i32, i64, fn = 0x7f, 0x7e, 0x60
	const wasi = "wasi_snapshot_preview1"
	clockBody := []byte{0x00, 0x20, 0x00, 0x42, 0x00, 0x20, 0x01, 0x10, 0x00, 0x0b} // no locals; local.get 0, i64.const 0, local.get 1, call 0, end
	randomBody := []byte{0x00, 0x20, 0x00, 0x20, 0x01, 0x10, 0x01, 0x0b}            // no locals; local.get 0, local.get 1, call 1, end
	return bytes.Join([][]byte{
		{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00},
		section(1, vec(2, // types: 0 (i32 i64 i32) -> i32, 1 (i32 i32) -> i32
			[]byte{fn, 3, i32, i64, i32, 1, i32},
			[]byte{fn, 2, i32, i32, 1, i32})),
		section(2, vec(2, // imports: functions 0 and 1
			append(append(name(wasi), name("clock_time_get")...), 0x00, 0),
			append(append(name(wasi), name("random_get")...), 0x00, 1))),
		section(3, vec(2, []byte{1}, []byte{1})), // functions 2 and 3 have type 1
		section(5, vec(1, []byte{0x00, 1})),      // one memory of one page
		section(7, vec(3, // exports
			append(name("memory"), 0x02, 0),
			append(name("clock"), 0x00, 2),
			append(name("random"), 0x00, 3))),
		section(10, vec(2,
			append([]byte{byte(len(clockBody))}, clockBody...),
			append([]byte{byte(len(randomBody))}, randomBody...))),
	}, nil)
}

// TestGuestSandboxIsDeterministic instantiates a probe module in the
// runtime `hale run` uses with the configuration every guest gets
// (guestModuleConfig) and checks that WASI's clocks and random source are
// wazero's fake, deterministic ones. The guest's Go runtime reads them
// (for its own start-up, its hash seeds, time.Now inside the guest), so a
// real clock or random source there would make runs differ in ways no
// recording holds.
func TestGuestSandboxIsDeterministic(t *testing.T) {
	w, err := defaultWasm()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	compiled, err := w.rt.CompileModule(ctx, wasmProbe())
	if err != nil {
		t.Fatalf("compiling the probe: %v", err)
	}
	defer compiled.Close(ctx)
	cfg := guestModuleConfig(io.Discard, 256<<20).WithStartFunctions() // the probe has no _initialize
	mod, err := w.rt.InstantiateModule(ctx, compiled, cfg)
	if err != nil {
		t.Fatalf("instantiating the probe: %v", err)
	}
	defer mod.Close(ctx)
	clock := func(id uint64) uint64 {
		t.Helper()
		res, err := mod.ExportedFunction("clock").Call(ctx, id, 8)
		if err != nil || res[0] != 0 {
			t.Fatalf("clock_time_get(%d): %v, errno %v", id, err, res)
		}
		b, _ := mod.Memory().Read(8, 8)
		return binary.LittleEndian.Uint64(b)
	}
	const realtime, monotonic = 0, 1
	epoch := uint64(time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	ms := uint64(time.Millisecond)
	for i := range uint64(3) {
		if got, want := clock(realtime), epoch+i*ms; got != want {
			t.Errorf("wall clock reading %d: %v, want %v (2022-01-01 + %d ms)", i, time.Unix(0, int64(got)).UTC(), time.Unix(0, int64(want)).UTC(), i)
		}
	}
	for i := range uint64(3) {
		if got, want := clock(monotonic), i*ms; got != want {
			t.Errorf("monotonic clock reading %d: %d ns, want %d", i, got, want)
		}
	}
	const n = 32
	if res, err := mod.ExportedFunction("random").Call(ctx, 64, n); err != nil || res[0] != 0 {
		t.Fatalf("random_get: %v, errno %v", err, res)
	}
	got, _ := mod.Memory().Read(64, n)
	want := make([]byte, n)
	rand.New(rand.NewSource(42)).Read(want)
	if !bytes.Equal(got, want) {
		t.Errorf("random_get gave %x, want %x (math/rand seeded 42, wazero's fake source)", got, want)
	}
}
