package host

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/internal/tier"
)

const debugTierSrc = `
fn fib(n: int) -> int { if n < 2 { return n; } return fib(n - 1) + fib(n - 2); }
fn loop(n: int) -> int {
    var s = 0;
    for i in 0..n {
        s += i;
    }
    return s;
}
@budget(steps: %d)
locus Main { on start { print(fib(12) + loop(50) + fib(3)); } }
main { spawn Main; }
`

// debugRun runs img's start delivery on a Stepper of kind with spec armed
// and counts the breaks (each answered with nothing: keep them).
func debugRun(t *testing.T, img *image.Image, kind EngineKind, spec []byte) (breaks []*vm.BreakInfo, res Result, stdout string) {
	t.Helper()
	ctx := context.Background()
	p, err := PrepareProgram(ctx, kind, img)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var out strings.Builder
	st, err := NewStepper(ctx, p, Options{Stdout: &out, Debug: func(c int, info []byte) ([]byte, error) {
		bi, err := vm.DecodeBreakInfo(info)
		if err != nil {
			t.Fatal(err)
		}
		breaks = append(breaks, bi)
		return nil, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetBreaks(0, spec); err != nil {
		t.Fatal(err)
	}
	if st.Start() {
		for !st.Stopped() && len(st.Pending(0)) > 0 {
			if err := st.Step(0, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	res, err = st.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return breaks, res, out.String()
}

// A breakpoint inside a function the second tier compiles stops: the
// function runs in the interpreter while a break is armed.
func TestBreakInTieredFunction(t *testing.T) {
	img := compileAll(t, fmt.Sprintf(debugTierSrc, 100000))
	loop := -1
	for i, f := range img.Funcs {
		if f.Name == "loop" {
			loop = i
		}
	}
	if !tier.NewPlan(img).Entry[loop] {
		t.Fatal("loop is not compiled by the tier: the test proves nothing")
	}
	var pc int = -1
	for _, s := range img.Funcs[loop].Stmts {
		if s.Line == 6 {
			pc = int(s.PC)
		}
	}
	spec := vm.EncodeBreakSpec(vm.BreakSpec{At: []vm.BreakPC{{Fn: loop, PC: pc}}})
	for _, kind := range []EngineKind{EngineWasm, EngineNative} {
		breaks, res, out := debugRun(t, img, kind, spec)
		if len(breaks) != 50 || res.Code != 0 || out != "1371\n" {
			t.Fatalf("%s: %d breaks, exit %d, output %q; want 50 breaks", kind, len(breaks), res.Code, out)
		}
		if bi := breaks[49]; len(bi.Frames) != 2 || bi.Frames[0].Fn != loop || img.Funcs[bi.Frames[1].Fn].Name != "Main.on start" {
			t.Errorf("%s: last break %+v", kind, bi.Frames)
		}
	}
	// Disarmed, the tier is back (the run still agrees).
	if _, res, out := debugRun(t, img, EngineWasm, nil); res.Code != 0 || out != "1371\n" {
		t.Errorf("disarmed: exit %d, %q", res.Code, out)
	}
}

// Breaks are not steps: at the exact @budget a run stepping every
// statement passes, one step less traps, on both engines.
func TestBreaksAreNotSteps(t *testing.T) {
	run := func(budget int, kind EngineKind, spec []byte) Result {
		_, res, _ := debugRun(t, compileAll(t, fmt.Sprintf(debugTierSrc, budget)), kind, spec)
		return res
	}
	lo, hi := 1, 100000
	for lo < hi {
		mid := (lo + hi) / 2
		if run(mid, EngineNative, nil).Code == 0 {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	step := vm.EncodeBreakSpec(vm.BreakSpec{Step: true})
	for _, kind := range []EngineKind{EngineNative, EngineWasm} {
		if res := run(lo, kind, step); res.Code != 0 {
			t.Errorf("%s: budget %d while stepping: exit %d", kind, lo, res.Code)
		}
		if res := run(lo-1, kind, step); res.Code != ExitTrap {
			t.Errorf("%s: budget %d while stepping: exit %d, want the budget trap", kind, lo-1, res.Code)
		}
	}
}
