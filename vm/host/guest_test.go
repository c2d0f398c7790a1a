package host

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/guest/abi"
	"github.com/hale-lang/hale/vm/internal/tier"
)

// TestGuestFresh rebuilds the guest and fails when the committed
// guest.wasm differs. The build is reproducible for one Go toolchain
// (see internal/buildguest); with another one the test skips.
func TestGuestFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("rebuilding the guest takes a while")
	}
	recorded, err := os.ReadFile("guest.wasm.goversion")
	if err != nil {
		t.Fatalf("%v: run `go generate ./vm/host`", err)
	}
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	if have, want := strings.TrimSpace(string(out)), strings.TrimSpace(string(recorded)); have != want {
		t.Skipf("guest.wasm was built with %s; this is %s, whose build differs", want, have)
	}
	fresh := filepath.Join(t.TempDir(), "guest.wasm")
	cmd := exec.Command("go", "run", "./internal/buildguest", fresh)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the guest: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, guestWasm) {
		t.Fatalf("vm/host/guest.wasm is stale (%d bytes committed, %d rebuilt): run `go generate ./vm/host`", len(guestWasm), len(got))
	}
}

// wasiAllowed are the WASI functions the Go runtime imports on wasip1.
// With wazero's defaults, and no environment, arguments or preopened
// folders given, none of them reaches the host's clock, randomness,
// environment or files.
var wasiAllowed = []string{
	"args_get", "args_sizes_get", // empty: no arguments are configured
	"environ_get", "environ_sizes_get", // empty: no environment is configured
	"clock_time_get", "poll_oneoff", "sched_yield", // fake clock; sleeps return at once
	"random_get", // fake, seeded random source (the Go runtime's own seeds)
	"fd_write",   // only stderr, captured for crash reports
	"proc_exit",  // a Go runtime fatal error
}

// TestGuestImports checks the sandbox: the guest imports hale.prim and
// nothing but the WASI functions above.
// TestGuestStopTheWorldGC checks that the committed guest collects
// garbage with the world stopped (see guestGODEBUG in
// internal/buildguest): with the concurrent collector, a long handler
// that starts a cycle runs the rest of the cycle with the write barrier
// on, 2 to 10 times slower.
func TestGuestStopTheWorldGC(t *testing.T) {
	if !bytes.Contains(guestWasm, []byte("gcstoptheworld=1")) {
		t.Fatal("guest.wasm has no default GODEBUG gcstoptheworld=1: rebuild it with `go generate ./vm/host`")
	}
}

func TestGuestImports(t *testing.T) {
	w, err := defaultWasm()
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{abi.ImportModule + "." + abi.ImportPrim: true}
	for _, name := range wasiAllowed {
		allowed["wasi_snapshot_preview1."+name] = true
	}
	var got []string
	prim := false
	for _, f := range w.compiled.ImportedFunctions() {
		mod, name, _ := f.Import()
		full := mod + "." + name
		got = append(got, full)
		if !allowed[full] {
			t.Errorf("the guest imports %s, which is not allowed", full)
		}
		if full == abi.ImportModule+"."+abi.ImportPrim {
			prim = true
			i32, i64 := api.ValueTypeI32, api.ValueTypeI64
			if !reflect.DeepEqual(f.ParamTypes(), []api.ValueType{i32, i32, i32, i32, i32}) || !reflect.DeepEqual(f.ResultTypes(), []api.ValueType{i64}) {
				t.Errorf("hale.prim has type %v -> %v", f.ParamTypes(), f.ResultTypes())
			}
		}
	}
	if !prim {
		t.Error("the guest does not import hale.prim")
	}
	for _, m := range w.compiled.ImportedMemories() {
		mod, name, _ := m.Import()
		t.Errorf("the guest imports memory %s.%s", mod, name)
	}
	sort.Strings(got)
	t.Logf("imports: %s", strings.Join(got, " "))
	var exports []string
	for name := range w.compiled.ExportedFunctions() {
		exports = append(exports, name)
	}
	sort.Strings(exports)
	want := []string{"_initialize", abi.ExportAlloc, abi.ExportDeliver, abi.ExportInit, abi.ExportLoad, abi.ExportResult, abi.ExportState, abi.ExportParams, abi.ExportSetParams, abi.ExportGuards, abi.ExportBreaks, abi.ExportMachine, abi.ExportSelect, abi.ExportBatch, abi.ExportDeliverMany, tier.GuestStep, abi.ExportFastInfo, tier.GuestMath}
	sort.Strings(want)
	if !reflect.DeepEqual(exports, want) {
		t.Errorf("exports %q, want %q", exports, want)
	}
}

// TestFailureEncoding checks the guest's failure encoding both ways.
func TestFailureEncoding(t *testing.T) {
	trap := &vm.Trap{Message: "division by zero", Stack: []vm.Frame{{Func: "Worker.on Job", Pos: "app.hl:17:16"}, {Func: "f", Pos: ""}}}
	got := abi.DecodeFailure(abi.AppendFailure(nil, trap))
	if !reflect.DeepEqual(got, trap) {
		t.Errorf("trap round trip: %#v", got)
	}
	fatal := &vm.Trap{Message: "recording failed: disk full", Stack: trap.Stack, Uncatchable: true}
	if got := abi.DecodeFailure(abi.AppendFailure(nil, fatal)); !reflect.DeepEqual(got, fatal) {
		t.Errorf("uncatchable trap round trip: %#v", got)
	}
	empty := &vm.Trap{Message: ""}
	if got := abi.DecodeFailure(abi.AppendFailure(nil, empty)); !reflect.DeepEqual(got, empty) {
		t.Errorf("empty trap round trip: %#v", got)
	}
	plain := errors.New("vm: no such instance")
	got = abi.DecodeFailure(abi.AppendFailure(nil, plain))
	var tr *vm.Trap
	if got == nil || errors.As(got, &tr) || got.Error() != plain.Error() {
		t.Errorf("error round trip: %#v", got)
	}
	for _, bad := range [][]byte{nil, {0}, {3, 0}, {1}, {1, 5, 'a'}, {1, 0, 9}, {2, 1, 'a', 'b'}, {1, 0, 1, 0}} {
		if err := abi.DecodeFailure(bad); !errors.Is(err, abi.ErrMalformed) {
			t.Errorf("%x: %v", bad, err)
		}
	}
	st := abi.Status(abi.Trap, 1<<31+5)
	if k, n := abi.SplitStatus(st); k != abi.Trap || n != 1<<31+5 {
		t.Errorf("status %x: %d %d", st, k, n)
	}
}

func FuzzDecodeFailure(f *testing.F) {
	f.Add(abi.AppendFailure(nil, &vm.Trap{Message: "m", Stack: []vm.Frame{{Func: "f", Pos: "p"}}}))
	f.Add(abi.AppendFailure(nil, &vm.Trap{Kind: vm.KindIndex, Message: "m"}))
	f.Add(abi.AppendFailure(nil, errors.New("e")))
	f.Add(abi.AppendFailure(nil, &vm.Trap{Message: "m", Uncatchable: true}))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := abi.DecodeFailure(data)
		if errors.Is(err, abi.ErrMalformed) {
			return
		}
		if again := abi.AppendFailure(nil, err); !bytes.Equal(again, data) {
			t.Fatalf("%x decodes to %#v, which encodes to %x", data, err, again)
		}
	})
}

// TestLargeResults drives the prim protocol's pending path: results and
// trap messages larger than the guest's result buffer, fetched without
// calling the primitive again.
func TestLargeResults(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("0123456789", 10_000)
	os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o644)
	long := strings.Repeat("dir/", 150) + "x.txt" // a trap message longer than the guest's result buffer
	src := `
locus L {
    on start {
        let s = std::fs::read_text("big.txt");
        print(len(s));
        let t = std::fs::read_text("big.txt");
        print(len(t) + 1);
        print(slice(s, 99990, 100000));
        print(len(std::fs::read_text("` + long + `")));
    }
}
main { spawn L; }
`
	img := compileAll(t, src)
	for _, kind := range realEngines {
		t.Run(kind.String(), func(t *testing.T) {
			j := newLogJournal(img)
			o := runWith(t, img, Options{Engine: kind, Dir: dir, Journal: j})
			if o.err != nil || o.res.Code != ExitTrap {
				t.Fatalf("run: %v %+v", o.err, o.res)
			}
			if o.stdout != "100000\n100001\n0123456789\n" {
				t.Errorf("stdout %q", o.stdout)
			}
			want := `trap: cannot read "` + long + `": no such file or directory`
			if !strings.HasPrefix(o.stderr, want+"\n") {
				t.Errorf("stderr %q", o.stderr)
			}
			reads := 0
			for _, ev := range j.events(0) {
				if strings.HasPrefix(ev, "invoke std::fs::read_text") {
					reads++
				}
			}
			if reads != 3 {
				t.Errorf("%d read_text calls journaled, want 3", reads)
			}
			j.check(t)
		})
	}
}

// TestWasmEngineDirect drives a wasm engine without the scheduler: state
// reads, bad instance indices, and a closed engine.
func TestWasmEngineDirect(t *testing.T) {
	img := compileAll(t, `
topic T { n: int }
locus L {
    var total: int = 40;
    on T(t) { total += t.n; }
}
main { spawn L; }
`)
	for _, kind := range realEngines {
		t.Run(kind.String(), func(t *testing.T) {
			e := initedEngine(t, kind, img)
			if err := e.Deliver(0, 0, structPayload(v(2))); err != nil {
				t.Fatal(err)
			}
			st, err := e.State(0)
			if want := []byte{1, 1, 84}; err != nil || !bytes.Equal(st, want) { // (42)
				t.Errorf("state %x %v, want %x", st, err, want)
			}
			var tr *vm.Trap
			if err := e.Deliver(5, 0, nil); err == nil || errors.As(err, &tr) {
				t.Errorf("bad instance: %v", err)
			}
			if err := e.Deliver(0, 0, []byte{9}); err == nil || errors.As(err, &tr) {
				t.Errorf("bad payload: %v", err)
			}
			if _, err := e.State(7); err == nil {
				t.Error("state of a bad instance: no error")
			}
			if kind == EngineWasm {
				e.Close()
				if err := e.Deliver(0, 0, structPayload(v(2))); err == nil || errors.As(err, &tr) || !strings.Contains(err.Error(), "closed") {
					t.Errorf("deliver after close: %v", err)
				}
			}
		})
	}
}

type hostFunc func(id uint16, args []byte) ([]byte, error)

func (f hostFunc) Prim(id uint16, args []byte) ([]byte, error) { return f(id, args) }

// TestStateTooDeep: the state of an instance holding a value nested past
// the encoder's depth cannot be read; both engines say so with the same
// error and no bytes (the native engine used to return the part it had
// encoded).
func TestStateTooDeep(t *testing.T) {
	img := compileAll(t, `
type Node { kids: [Node] }
topic T { n: int }
locus L {
    var n: Node = Node { kids: [] };
    on T(t) { for i in 0..t.n { n = Node { kids: [n] }; } }
}
main { spawn L; }
`)
	msgs := map[EngineKind]string{}
	for _, kind := range realEngines {
		e := initedEngine(t, kind, img)
		if err := e.Deliver(0, 0, structPayload(v(3))); err != nil {
			t.Fatal(err)
		}
		if st, err := e.State(0); err != nil || len(st) == 0 {
			t.Fatalf("%v: state of a shallow tree: %x, %v", kind, st, err)
		}
		if err := e.Deliver(0, 0, structPayload(v(1100))); err != nil {
			t.Fatal(err)
		}
		st, err := e.State(0)
		if err == nil || !strings.Contains(err.Error(), "nested too deeply") || st != nil {
			t.Fatalf("%v: state of a tree 1,103 deep: %d bytes, %v; want none and the depth error", kind, len(st), err)
		}
		msgs[kind] = err.Error()
	}
	if msgs[EngineNative] != msgs[EngineWasm] {
		t.Fatalf("engines disagree: native %q, wasm %q", msgs[EngineNative], msgs[EngineWasm])
	}
}

// initedEngine returns an engine of kind for img whose host answers
// every primitive (a poll of a long handler among them) with nothing,
// its instance 0 initialised; it is closed with the test.
func initedEngine(t *testing.T, kind EngineKind, img *image.Image) Engine {
	t.Helper()
	e, err := NewEngine(context.Background(), kind, img, hostFunc(func(id uint16, args []byte) ([]byte, error) {
		return nil, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.Init(0); err != nil {
		t.Fatal(err)
	}
	return e
}
