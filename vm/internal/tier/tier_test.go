package tier

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/codegen/image"
)

// compile runs the front end and the code generator on a one-file
// program.
func compile(t testing.TB, src string) *image.Image {
	t.Helper()
	c, err := hale.Compile(fstest.MapFS{"app.hl": {Data: []byte(src)}}, "app.hl", hale.BuildOptions{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return c.Image
}

func funcIndex(t testing.TB, img *image.Image, name string) int {
	for i := range img.Funcs {
		if img.Funcs[i].Name == name {
			return i
		}
	}
	t.Fatalf("no function %s", name)
	return -1
}

// module instantiates the tier of img, with a refill that hands out
// fuel until budget steps are used.
type module struct {
	mod    api.Module
	given  int64
	budget int64
}

func instantiate(t testing.TB, img *image.Image, p *Plan) *module {
	t.Helper()
	bin, err := Compile(img, p)
	if err != nil {
		t.Fatal(err)
	}
	if bin == nil {
		t.Fatal("nothing compiled")
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	m := &module{budget: 1 << 62}
	_, err = rt.NewHostModuleBuilder(ImportModule).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
			f := int64(stack[0])
			for f < 0 && m.given < m.budget {
				more := min(m.budget-m.given, 1000)
				m.given += more
				f += more
			}
			if f < 0 {
				f = -1
			}
			stack[0] = uint64(f)
		}), []api.ValueType{api.ValueTypeI64}, []api.ValueType{api.ValueTypeI64}).
		Export(ImportRefill).Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m.mod, err = rt.InstantiateWithConfig(ctx, bin, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatalf("instantiating the tier: %v", err)
	}
	return m
}

// call runs entry f and returns its result and the steps it took, or
// ok false when it stopped.
func (m *module) call(t testing.TB, f int, args ...uint64) (res uint64, steps int64, ok bool) {
	t.Helper()
	fn := m.mod.ExportedFunction(Export(f))
	if fn == nil {
		t.Fatalf("%s is not exported", Export(f))
	}
	m.given = 0
	fuel := m.mod.ExportedGlobal(GlobalFuel).(api.MutableGlobal)
	fuel.Set(0)
	m.mod.ExportedGlobal(GlobalDepth).(api.MutableGlobal).Set(1)
	m.mod.ExportedGlobal(GlobalHeight).(api.MutableGlobal).Set(0)
	out, err := fn.Call(context.Background(), args...)
	if err != nil {
		return 0, 0, false
	}
	return out[0], m.given - int64(fuel.Get()), true
}

const fibSrc = `
fn fib(n: int) -> int {
    if n < 2 { return n; }
    return fib(n - 1) + fib(n - 2);
}
fn small(n: int) -> int { return n + 1; }
locus Main { on start { print(fib(20) + small(1)); } }
main { spawn Main; }
`

func TestPlanAndFib(t *testing.T) {
	img := compile(t, fibSrc)
	p := NewPlan(img)
	fib, small := funcIndex(t, img, "fib"), funcIndex(t, img, "small")
	if !p.Compiled[fib] || !p.Entry[fib] {
		t.Fatalf("fib: compiled %v entry %v, want both", p.Compiled[fib], p.Entry[fib])
	}
	if !p.Compiled[small] || p.Entry[small] {
		t.Fatalf("small: compiled %v entry %v, want compiled only", p.Compiled[small], p.Entry[small])
	}
	m := instantiate(t, img, p)
	res, steps, ok := m.call(t, fib, 20)
	if !ok || res != 6765 {
		t.Fatalf("fib(20) = %d, %v; want 6765", res, ok)
	}
	// 21891 calls: 10946 leaves of 2 steps, 10945 inner calls of 7.
	if want := int64(10946*2 + 10945*7); steps != want {
		t.Fatalf("fib(20) took %d steps, want %d", steps, want)
	}
}

// TestPlanLeavesOut checks what the tier does not compile: functions of
// strings, functions with effects or reaching instance state, and every
// function calling one of those.
func TestPlanLeavesOut(t *testing.T) {
	img := compile(t, `
fn label(n: int) -> string { return "n" + str(n); }
fn long(n: int) -> int { var s = 0; for i in 0..n { s += len(label(i)); } return s; }
fn now(n: int) -> int { var s = 0; for i in 0..n { s += std::time::now_ms(); } return s; }
fn calls_now(n: int) -> int { return now(n) + 1; }
fn pure(n: int) -> int { var s = 0; for i in 0..n { s += i; } return s; }
fn calls_pure(n: int) -> int { return pure(n) + 1; }
locus Main {
    var k: int = 3;
    fn scaled(n: int) -> int { var s = 0; for i in 0..n { s += k; } return s; }
    on start { print(long(2) + calls_now(1) + calls_pure(3) + scaled(2)); }
}
main { spawn Main; }
`)
	p := NewPlan(img)
	for name, want := range map[string][2]bool{
		"label":         {false, false},
		"long":          {false, false},
		"now":           {false, false},
		"calls_now":     {false, false},
		"pure":          {true, true},
		"calls_pure":    {true, true},
		"Main.scaled":   {false, false},
		"Main.on start": {false, false},
	} {
		f := funcIndex(t, img, name)
		if got := [2]bool{p.Compiled[f], p.Entry[f]}; got != want {
			t.Errorf("%s: compiled, entry = %v, want %v", name, got, want)
		}
	}
}
