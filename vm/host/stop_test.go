package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hale-lang/hale/vm"
)

// TestOutOfMemoryTrapsAlike runs a program whose data grows without end
// under a small memory limit: on both engines it traps "out of memory"
// (exit 3) quickly, with the same report, rather than crashing the wasm
// guest after 4 GiB or the whole process on the native engine.
func TestOutOfMemoryTrapsAlike(t *testing.T) {
	img := compileAll(t, `
locus M { on start { var xs: [[int]] = []; while true { push(xs, [1,2,3,4,5,6,7,8]); } } }
main { spawn M; }
`)
	reports := map[EngineKind]string{}
	for _, kind := range []EngineKind{EngineNative, EngineWasm} {
		var stderr strings.Builder
		start := time.Now()
		res, err := Run(context.Background(), img, Options{Engine: kind, Stderr: &stderr, MemoryLimit: 16 << 20})
		if err != nil || res.Verdict != VerdictTrap || res.Code != ExitTrap {
			t.Fatalf("%v: %v %+v\n%s", kind, err, res, stderr.String())
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%v: took %v", kind, took)
		}
		reports[kind] = stderr.String()
	}
	want := "trap: out of memory: the consumer's data outgrew its limit of 16 MiB\n  at app.hl:2:"
	if !strings.HasPrefix(reports[EngineNative], want) || reports[EngineWasm] != reports[EngineNative] {
		t.Errorf("native:\n%s\nwasm:\n%s", reports[EngineNative], reports[EngineWasm])
	}
}

func TestParseMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"512MiB", 512 << 20}, {"1GiB", 1 << 30}, {"64M", 64 << 20}, {"2048K", 2 << 20}, {"1048576", 1 << 20},
		{"", 0}, {"0", 0}, {"-5MiB", 0}, {"512KiB", 0}, {"2GiB", 0}, {"1.5GiB", 0}, {"12x", 0}, {"9999999999999G", 0},
	} {
		got, err := ParseMemoryLimit(c.in)
		if got != c.want || (err == nil) != (c.want != 0) {
			t.Errorf("ParseMemoryLimit(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

// TestInterruptedCallIsNotATrap answers a primitive call with
// vm.ErrInterrupted, as the runtime does after Ctrl-C: on both engines the
// handler ends there with that error, not with a trap the program or the
// trap report could see, and the statement after the call does not run.
func TestInterruptedCallIsNotATrap(t *testing.T) {
	img := compileAll(t, `
locus M { on start { std::time::sleep_ms(5); print("after the sleep"); } }
main { spawn M; }
`)
	for _, kind := range realEngines {
		t.Run(kind.String(), func(t *testing.T) {
			printed := false
			e, err := NewEngine(context.Background(), kind, img, hostFunc(func(id uint16, args []byte) ([]byte, error) {
				if id == vm.PrimPrint {
					printed = true
					return nil, nil
				}
				return nil, fmt.Errorf("%w: context canceled", vm.ErrInterrupted)
			}))
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if err := e.Init(0); err != nil {
				t.Fatal(err)
			}
			err = e.Deliver(0, vm.HandlerStart, nil)
			var tr *vm.Trap
			if err == nil || errors.As(err, &tr) || !strings.Contains(err.Error(), "interrupted") || printed {
				t.Errorf("deliver: %v (a trap: %v), printed %v", err, tr != nil, printed)
			}
		})
	}
}

// TestGuestOutOfMemoryCrashIsATrap: should the wasm guest still run out of
// its 4 GiB (memory the limit does not count), the Go runtime's failure to
// grow the memory, a wasm trap inside runtime.growMemory, is reported as
// the out of memory trap rather than as a crashed engine.
func TestGuestOutOfMemoryCrashIsATrap(t *testing.T) {
	e := &wasmGuest{stderr: &cappedBuffer{max: 100}}
	crash := errors.New("wasm error: out of bounds memory access\nwasm stack trace:\n\t.runtime.growMemory(i32) i32\n\t.runtime.sbrk(i32) i32")
	var tr *vm.Trap
	if err := e.crashed(crash); !errors.As(err, &tr) || tr.Message != msgOutOfMemory {
		t.Errorf("growMemory crash: %v", err)
	}
	if err := e.crashed(errors.New("wasm error: unreachable")); errors.As(err, &tr) {
		t.Errorf("another crash became a trap: %v", err)
	}
}
