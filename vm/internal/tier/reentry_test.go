package tier

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// These tests measure the premise of one route to allocation in compiled
// code (docs/design.md, "what finishing would take"): compiled code calls
// an export of the interpreter guest while the guest waits in an import.
// testdata/reentry stands in for the guest; the compiled side is written
// with this package's encoder and imports the guest's export directly.

var reentryGuest struct {
	once sync.Once
	bin  []byte
	err  error
}

// buildReentryGuest builds testdata/reentry for wasip1 once per process.
func buildReentryGuest(t testing.TB) []byte {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a wasip1 program")
	}
	g := &reentryGuest
	g.once.Do(func() {
		dir, err := os.MkdirTemp("", "reentry")
		if err != nil {
			g.err = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "g.wasm")
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "./testdata/reentry")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if msg, err := cmd.CombinedOutput(); err != nil {
			g.err = &buildError{string(msg), err}
			return
		}
		g.bin, g.err = os.ReadFile(out)
	})
	if g.err != nil {
		t.Fatal(g.err)
	}
	return g.bin
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// reentryCompiled is the compiled side: build(depth) builds a perfect
// binary tree with the guest's export named alloc, as make_tree in
// binarytrees.hl does, and returns the root's handle.
func reentryCompiled(alloc string) []byte {
	const opI32Sub = 0x6B
	var m, s buffer
	m.bytes([]byte("\x00asm\x01\x00\x00\x00"))
	s.u32(2)
	s.bytes([]byte{0x60, 2, typeI32, typeI32, 1, typeI32}) // (l, r) -> handle
	s.bytes([]byte{0x60, 1, typeI32, 1, typeI32})          // build(depth) -> handle
	m.section(1, &s)
	s.reset()
	s.u32(1)
	s.name("hale_guest")
	s.name(alloc)
	s.bytes([]byte{0, 0})
	m.section(2, &s)
	s.reset()
	s.bytes([]byte{1, 1})
	m.section(3, &s)
	s.reset()
	s.u32(1)
	s.name("build")
	s.bytes([]byte{0, 1})
	m.section(7, &s)
	var f buffer
	f.u32(0) // no locals
	f.op(opLocalGet)
	f.u32(0)
	f.op(opI32Eqz)
	f.bytes([]byte{opIf, typeI32})
	f.i32Const(-1)
	f.i32Const(-1)
	f.op(opCall)
	f.u32(0)
	f.op(opElse)
	for range 2 {
		f.op(opLocalGet)
		f.u32(0)
		f.i32Const(1)
		f.op(opI32Sub)
		f.op(opCall)
		f.u32(1)
	}
	f.op(opCall)
	f.u32(0)
	f.op(opEnd)
	f.op(opEnd)
	s.reset()
	s.u32(1)
	s.u32(uint32(len(f.b)))
	s.bytes(f.b)
	m.section(10, &s)
	return m.b
}

// reentry instantiates the stand-in guest and the compiled side, the
// host's wait running make(depth) meanwhile; it returns the guest's run.
func reentry(t testing.TB, alloc string) api.Function {
	t.Helper()
	bin := buildReentryGuest(t)
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	var build api.Function
	_, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func(ctx context.Context, depth int32) int32 {
			r, err := build.Call(ctx, uint64(uint32(depth)))
			if err != nil {
				panic(err)
			}
			return int32(r[0])
		}).Export("wait").Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	guest, err := rt.InstantiateWithConfig(ctx, bin, wazero.NewModuleConfig().
		WithName("hale_guest").WithStartFunctions("_initialize"))
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := rt.InstantiateWithConfig(ctx, reentryCompiled(alloc), wazero.NewModuleConfig().WithName("compiled"))
	if err != nil {
		t.Fatal(err)
	}
	build = compiled.ExportedFunction("build")
	return guest.ExportedFunction("run")
}

// TestGuestReentry checks that Go's wasmexport may be entered while the
// guest waits in an import, and that what it allocates then, rooted in a
// handle table, survives collections run inside those entries.
func TestGuestReentry(t *testing.T) {
	run := reentry(t, "new_node")
	for _, every := range []int32{0, 1, 97} {
		r, err := run.Call(context.Background(), 10, uint64(every))
		if err != nil {
			t.Fatalf("gc every %d: %v", every, err)
		}
		if r[0] != 1<<11-1 {
			t.Fatalf("gc every %d: the tree has %d nodes, want %d", every, r[0], 1<<11-1)
		}
	}
}

// BenchmarkGuestReentry measures, per call from compiled code, one
// allocation through the guest kept alive while the tree grows
// (new_node), one that is garbage at once (new_garbage), and the bare
// entry (nop).
func BenchmarkGuestReentry(b *testing.B) {
	for _, alloc := range []string{"new_node", "new_garbage", "nop"} {
		b.Run(alloc, func(b *testing.B) {
			run := reentry(b, alloc)
			const depth = 16
			start := cpuTime()
			for b.Loop() {
				if _, err := run.Call(context.Background(), depth, 0); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time, not wall time: the machines this runs on are shared.
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/(1<<(depth+1)-1), "cpu-ns/call")
		})
	}
}
