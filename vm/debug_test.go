package vm_test

import (
	"testing"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

const debugProg = `fn fee(x: int) -> int {
    let y = x * 2;
    return y + 1;
}

@budget(steps: 1000)
locus Main {
    on start {
        var s = 0;
        for i in 0..3 {
            s += fee(i);
        }
        print(s);
    }
}

main { spawn Main; }
`

// breakHost answers every break with spec (nil: keep) and records the
// function, line and locals of each.
type breakHost struct {
	fakeHost
	img   *image.Image
	spec  []byte
	stops []string
	infos []*vm.BreakInfo
}

func (h *breakHost) Prim(id uint16, args []byte) ([]byte, error) {
	if id != vm.PrimBreak {
		return h.fakeHost.Prim(id, args)
	}
	bi, err := vm.DecodeBreakInfo(args)
	if err != nil {
		return nil, err
	}
	h.infos = append(h.infos, bi)
	f := &h.img.Funcs[bi.Frames[0].Fn]
	line := f.PosAt(bi.Frames[0].PC).Line
	if i := f.StmtAt(bi.Frames[0].PC); i >= 0 {
		line = f.Stmts[i].Line
	}
	h.stops = append(h.stops, f.Name+":"+itoa(int(line)))
	return h.spec, nil
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func fnIndex(img *image.Image, name string) int {
	for i, f := range img.Funcs {
		if f.Name == name {
			return i
		}
	}
	return -1
}

func stmtPC(t *testing.T, img *image.Image, fn, line int) int {
	for _, s := range img.Funcs[fn].Stmts {
		if int(s.Line) == line {
			return int(s.PC)
		}
	}
	t.Fatalf("no statement on line %d of %s", line, img.Funcs[fn].Name)
	return 0
}

func runMain(t *testing.T, img *image.Image, h vm.Host, spec []byte) (*vm.Machine, error) {
	m, err := vm.New(img, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Init(0); err != nil {
		t.Fatal(err)
	}
	if spec != nil {
		if err := m.SetBreaks(spec); err != nil {
			t.Fatal(err)
		}
	}
	return m, m.Deliver(0, vm.HandlerStart, nil)
}

// A line breakpoint stops each time its statement runs, with the locals;
// a break is not a step.
func TestBreakLineAndSteps(t *testing.T) {
	img := compile(t, debugProg)
	plain := &breakHost{img: img}
	m, err := runMain(t, img, plain, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := m.Steps()
	fee := fnIndex(img, "fee")
	h := &breakHost{img: img}
	m, err = runMain(t, img, h, vm.EncodeBreakSpec(vm.BreakSpec{At: []vm.BreakPC{{Fn: fee, PC: stmtPC(t, img, fee, 3)}}}))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Steps(); got != want {
		t.Errorf("steps with breaks %d, without %d", got, want)
	}
	if got := h.out.String(); got != "9\n" {
		t.Errorf("output %q", got)
	}
	if len(h.stops) != 3 {
		t.Fatalf("stops %v, want 3 at fee:3", h.stops)
	}
	// The third stop: x = 2, y = 4, called from Main.on start.
	bi := h.infos[2]
	if len(bi.Frames) != 2 || img.Funcs[bi.Frames[1].Fn].Name != "Main.on start" {
		t.Fatalf("frames %+v", bi.Frames)
	}
	for i, want := range map[int]int64{0: 2, 1: 4} {
		v, err := value.Decode(bi.Frames[0].Locals[i], value.IntType)
		if err != nil || v.AsInt() != want {
			t.Errorf("local %s = %v (%v), want %d", img.Funcs[fee].Locals[i].Name, v, err, want)
		}
	}
	// Stepping: every statement stops, and the steps are still the same.
	h = &breakHost{img: img}
	step := vm.EncodeBreakSpec(vm.BreakSpec{Step: true})
	h.spec = step
	m, err = runMain(t, img, h, step)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Steps(); got != want {
		t.Errorf("steps while stepping %d, without %d", got, want)
	}
	if len(h.stops) < 10 || h.stops[0] != "Main.on start:9" || h.stops[len(h.stops)-1] != "Main.on start:13" {
		t.Errorf("step stops %v", h.stops)
	}
	// Disarmed by an empty spec from the host: no more stops.
	h = &breakHost{img: img, spec: vm.EncodeBreakSpec(vm.BreakSpec{})}
	if _, err := runMain(t, img, h, step); err != nil {
		t.Fatal(err)
	}
	if len(h.stops) != 1 {
		t.Errorf("stops after disarming %v", h.stops)
	}
}

// A trap stop shows the trapping frame before the run ends.
func TestBreakTrap(t *testing.T) {
	img := compile(t, `fn half(x: int) -> int {
    let d = x - x;
    return x / d;
}

locus Main {
    on start { print(half(7)); }
}

main { spawn Main; }
`)
	h := &breakHost{img: img}
	_, err := runMain(t, img, h, vm.EncodeBreakSpec(vm.BreakSpec{Traps: true}))
	if err == nil || err.Error() != "division by zero" {
		t.Fatalf("err %v", err)
	}
	if len(h.infos) != 1 || h.infos[0].Reason != vm.BreakTrap || h.infos[0].TrapMessage != "division by zero" {
		t.Fatalf("infos %+v", h.infos)
	}
	if h.stops[0] != "half:3" || len(h.infos[0].Frames) != 2 {
		t.Errorf("trap stop at %v, frames %+v", h.stops, h.infos[0].Frames)
	}
}
