package host

import (
	"math"
	"strings"
	"testing"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/internal/fmath"
	"github.com/hale-lang/hale/vm/internal/tier"
)

// tierMathSrc calls every float function of std::math that compiled code
// asks the guest for (tier.GuestMath) on awkward arguments (signed zeros,
// subnormals, infinities, NaN, values past the trigonometric functions'
// simple reduction, domain errors) three ways: from a compiled function
// of scalars, from a loop region writing a list, and from a handler
// compiled whole that publishes the result.
const tierMathSrc = `
topic Arg { k: int, x: float, y: float }
topic Res { k: int, r: float }
fn apply(k: int, x: float, y: float) -> float {
    if k == 0 { return std::math::sin(x); }
    if k == 1 { return std::math::cos(x); }
    if k == 2 { return std::math::tan(x); }
    if k == 3 { return std::math::asin(x); }
    if k == 4 { return std::math::acos(x); }
    if k == 5 { return std::math::atan(x); }
    if k == 6 { return std::math::log(x); }
    if k == 7 { return std::math::exp(x); }
    if k == 8 { return std::math::pow(x, y); }
    if k == 9 { return std::math::atan2(x, y); }
    return std::math::hypot(x, y);
}
locus W {
    var last: float = 0.0;
    on Arg(a) {
        var r = 0.0;
        if a.k == 0 { r = std::math::sin(a.x); }
        else if a.k == 1 { r = std::math::cos(a.x); }
        else if a.k == 2 { r = std::math::tan(a.x); }
        else if a.k == 3 { r = std::math::asin(a.x); }
        else if a.k == 4 { r = std::math::acos(a.x); }
        else if a.k == 5 { r = std::math::atan(a.x); }
        else if a.k == 6 { r = std::math::log(a.x); }
        else if a.k == 7 { r = std::math::exp(a.x); }
        else if a.k == 8 { r = std::math::pow(a.x, a.y); }
        else if a.k == 9 { r = std::math::atan2(a.x, a.y); }
        else { r = std::math::hypot(a.x, a.y); }
        last = r;
        publish Res { k: a.k, r: r };
    }
}
locus P {
    on Res(m) { print(format("handler {} {}", m.k, m.r)); }
}
locus M {
    on start {
        let zero = 0.0;
        let xs = [0.0, -zero, 5e-324, -5e-324, 1e-300, 0.5, -0.5, 1.0, -1.0, 2.0, 37.2, -37.2,
                  3.141592653589793, 1e10, 536870912.0, 1e300, -1e300, 709.0, 710.0, -745.0,
                  1.0 / zero, -1.0 / zero, zero / zero];
        let ys = [0.0, -zero, 0.5, -2.0, 3.0, 1e-300, 1e300, 1.0 / zero, -1.0 / zero, zero / zero];
        var out: [float] = [];
        for x in xs { push(out, 0.0); }
        for k in 0..11 {
            for j in 0..len(xs) {
                let y = ys[j % len(ys)];
                print(format("fn {} {} {} {}", k, xs[j], y, apply(k, xs[j], y)));
            }
            for j in 0..len(xs) {
                let y = ys[(j + k) % len(ys)];
                if k == 0 { out[j] = std::math::sin(xs[j]); }
                else if k == 3 { out[j] = std::math::asin(xs[j]); }
                else if k == 7 { out[j] = std::math::exp(xs[j]); }
                else if k == 8 { out[j] = std::math::pow(xs[j], y); }
                else if k == 9 { out[j] = std::math::atan2(xs[j], y); }
                else { out[j] = std::math::log(xs[j]); }
            }
            print(format("loop {} {}", k, out));
            for j in 0..len(xs) {
                publish Arg { k: k, x: xs[j], y: ys[(j * 3 + k) % len(ys)] };
            }
        }
    }
}
main { spawn M; spawn W; spawn P; }
`

// TestTierMath checks that compiled code gets std::math's results from the
// guest exactly: every function, on awkward arguments, from a compiled
// function, a loop region and a handler compiled whole, prints what the
// native engine's interpreter prints and journals the same payloads; and
// that all three compiled paths ran (a tier that always handed back
// would agree too).
func TestTierMath(t *testing.T) {
	img := compileAll(t, tierMathSrc)
	before := fastAnswered.Load()
	native := runFast(t, img, EngineNative, false)
	wasm := runFast(t, img, EngineWasm, false)
	sameRuns(t, "native and wasm", tierMathSrc, native, wasm)
	if n := strings.Count(native.out.stdout, "\n"); n != 2*11*23+11 {
		t.Fatalf("printed %d lines, want %d:\n%s", n, 2*11*23+11, native.out.stdout)
	}
	// One handler delivery of the first topic on a machine goes through
	// the guest; the others run compiled.
	if ran := fastAnswered.Load() - before; ran < 11*23-1 {
		t.Fatalf("compiled handlers ran %d deliveries, want %d", ran, 11*23-1)
	}
	_, p, _ := prepareTier(t, tierMathSrc)
	if p.plan.Handlers == nil || len(p.plan.Regions) == 0 || !p.plan.Compiled[funcIndex(t, img, "apply")] {
		t.Fatalf("not compiled: %d handlers, %d regions, apply compiled: %v", len(p.plan.Handlers), len(p.plan.Regions), p.plan.Compiled[funcIndex(t, img, "apply")])
	}
	e, _, err := startOnWasm(t, tierMathSrc)
	if err != nil {
		t.Fatal(err)
	}
	// One call handed back: the printing loop's region, given up at its
	// 64th batch run in place (vm's regionMinCompiled); it prints what
	// compiled functions return, and the interpreter does as well.
	if ti := e.g.tier; ti == nil || ti.done == 0 || ti.fellBack != 1 {
		t.Fatalf("tier calls: %d answered, %d handed back; want some answered, one handed back", ti.done, ti.fellBack)
	}
}

// funcIndex returns the index of img's function named name.
func funcIndex(t *testing.T, img *image.Image, name string) int {
	t.Helper()
	for f := range img.Funcs {
		if img.Funcs[f].Name == name {
			return f
		}
	}
	t.Fatalf("no function %s", name)
	return -1
}

// TestTierMathIsTheInterpreters checks the guest's answer to compiled
// code (vm.TierMath) against the functions the interpreter calls, bit
// for bit, builtin by builtin, so that a number or an argument crossed
// over in the table shows.
func TestTierMathIsTheInterpreters(t *testing.T) {
	one := map[image.Builtin]func(float64) float64{
		image.BuiltinSin: fmath.Sin, image.BuiltinCos: fmath.Cos, image.BuiltinTan: fmath.Tan,
		image.BuiltinAsin: fmath.Asin, image.BuiltinAcos: fmath.Acos, image.BuiltinAtan: fmath.Atan,
		image.BuiltinLog: fmath.Log, image.BuiltinExp: fmath.Exp,
	}
	two := map[image.Builtin]func(float64, float64) float64{
		image.BuiltinPow: fmath.Pow, image.BuiltinAtan2: fmath.Atan2, image.BuiltinHypot: fmath.Hypot,
	}
	xs := []float64{0, math.Copysign(0, -1), 5e-324, 0.3, -0.7, 1, 2.5, 37.2, 1e10, 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
	for b := image.Builtin(0); b < 200; b++ {
		ok, binary := tier.MathBuiltin(b)
		f1, in1 := one[b]
		f2, in2 := two[b]
		if ok != (in1 || in2) || binary != in2 {
			t.Fatalf("builtin %d: tier.MathBuiltin says %v, %v", b, ok, binary)
		}
		for _, x := range xs {
			for _, y := range xs {
				var want float64
				switch {
				case in1:
					want = f1(x)
				case in2:
					want = f2(x, y)
				default:
					continue
				}
				got := vm.TierMath(uint64(b), math.Float64bits(x), math.Float64bits(y))
				if got != math.Float64bits(want) {
					t.Fatalf("builtin %d (%v, %v): %#x, want %#x", b, x, y, got, math.Float64bits(want))
				}
			}
		}
	}
}

// TestTierImportsMath keeps the tier's module inside the sandbox when it
// calls std::math (see TestTierImports): the only function it imports
// besides refill and the guest's step is the guest's own hale_math, and
// a program without those functions does not import it.
func TestTierImportsMath(t *testing.T) {
	imports := func(src string) string {
		_, p, _ := prepareTier(t, src)
		var names []string
		for _, f := range p.tier.ImportedFunctions() {
			mod, name, _ := f.Import()
			names = append(names, mod+"."+name)
		}
		return strings.Join(names, " ")
	}
	refill, step, guestMath := tier.ImportModule+"."+tier.ImportRefill, tier.GuestModule+"."+tier.GuestStep, tier.GuestModule+"."+tier.GuestMath
	if got, want := imports(tierMathSrc), refill+" "+step+" "+guestMath; got != want {
		t.Fatalf("the tier imports %q, want %q", got, want)
	}
	if got := imports(tierPrograms["lists_structs"]); strings.Contains(got, guestMath) {
		t.Fatalf("a program without std::math's functions: the tier imports %q", got)
	}
}
