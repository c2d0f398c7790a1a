package fmath

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// inputs returns arguments spread over many magnitudes, both signs, and
// the special values.
func inputs(n int) []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 0.7, 0.66, 2.414, math.Pi, -math.Pi / 2,
		math.Inf(1), math.Inf(-1), math.NaN(), 1e-300, 5e-324, 1 << 29, 1e22, -1e300, math.MaxFloat64}
	for range n {
		mag := math.Pow(10, float64(r.IntN(40)-20))
		xs = append(xs, (r.Float64()*2-1)*mag)
	}
	return xs
}

func same(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

// TestSameAsGoPureCode: on amd64 (without GOAMD64=v3, which may fuse) Go's
// math runs these functions as pure Go code, the code the wasm guest runs
// everywhere: the ports must give the very same bits.
func TestSameAsGoPureCode(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("math's pure Go code is compared on amd64")
	}
	unary := map[string][2]func(float64) float64{
		"sin": {Sin, math.Sin}, "cos": {Cos, math.Cos}, "tan": {Tan, math.Tan},
		"asin": {Asin, math.Asin}, "acos": {Acos, math.Acos}, "atan": {Atan, math.Atan},
	}
	xs := inputs(200_000)
	for name, f := range unary {
		for _, x := range xs {
			if got, want := f[0](x), f[1](x); !same(got, want) {
				t.Fatalf("%s(%v) = %v, math gives %v", name, x, got, want)
			}
			if x >= -1 && x <= 1 && name[0] == 'a' {
				continue
			}
			if y := x / 1e3; !same(f[0](y), f[1](y)) {
				t.Fatalf("%s(%v) = %v, math gives %v", name, y, f[0](y), f[1](y))
			}
		}
	}
	for i := 0; i+1 < len(xs); i++ {
		y, x := xs[i], xs[i+1]
		if got, want := Atan2(y, x), math.Atan2(y, x); !same(got, want) {
			t.Fatalf("atan2(%v, %v) = %v, math gives %v", y, x, got, want)
		}
	}
}

// TestCloseToGo: hypot, log and exp have assembly versions on amd64 that
// need not agree with the pure Go code to the last bit; they must agree to
// within a few units in the last place.
func TestCloseToGo(t *testing.T) {
	xs := inputs(100_000)
	check := func(name string, x, got, want float64) {
		t.Helper()
		if same(got, want) {
			return
		}
		if math.IsInf(want, 0) || math.IsNaN(want) || math.Abs(got-want) > 4*ulp(want) {
			t.Fatalf("%s(%v) = %v, math gives %v", name, x, got, want)
		}
	}
	for i, x := range xs {
		if math.Abs(x) >= 0x1p-1022 { // amd64's assembly Log is wrong for subnormals
			check("log", x, Log(x), math.Log(x))
		}
		if math.Abs(x) < 700 {
			check("exp", x, Exp(x), math.Exp(x))
		}
		if i+1 < len(xs) {
			check("hypot", x, Hypot(x, xs[i+1]), math.Hypot(x, xs[i+1]))
			if y := xs[i+1]; x > 1e-300 && math.Abs(y) < 50 {
				check("pow", x, Pow(x, y), math.Pow(x, y))
			}
		}
	}
}

func ulp(x float64) float64 {
	x = math.Abs(x)
	return math.Nextafter(x, math.Inf(1)) - x
}

// TestKnownValues pins a few results, on every architecture.
func TestKnownValues(t *testing.T) {
	for _, c := range []struct {
		got  float64
		want uint64
	}{
		{Sin(1), math.Float64bits(0.8414709848078965)},
		{Cos(1), math.Float64bits(0.5403023058681398)},
		{Tan(1), math.Float64bits(1.557407724654902)},
		{Sin(1e300), math.Float64bits(-0.8178819121159087)},
		// math.Log on amd64 gives -709.0895657128241 here: its assembly
		// does not handle subnormals, which is why Log is ported at all.
		{Log(5e-324), math.Float64bits(-744.4400719213812)},
		{Atan2(1, -1), math.Float64bits(2.356194490192345)},
		{Hypot(3, 4), math.Float64bits(5)},
		{Log(10), math.Float64bits(2.302585092994046)},
		{Exp(1), math.Float64bits(2.718281828459045)},
		{Pow(2, 10), math.Float64bits(1024)},
		{Pow(2, 0.5), math.Float64bits(math.Sqrt2)},
		{Asin(1), math.Float64bits(math.Pi / 2)},
		{Acos(-1), math.Float64bits(math.Pi)},
	} {
		if math.Float64bits(c.got) != c.want {
			t.Errorf("got %v (%#x), want %v", c.got, math.Float64bits(c.got), math.Float64frombits(c.want))
		}
	}
}

func BenchmarkSin(b *testing.B) {
	b.Run("fmath", func(b *testing.B) {
		s := 0.0
		for i := range b.N {
			s += Sin(float64(i) * 1e-3)
		}
		sink = s
	})
	b.Run("math", func(b *testing.B) {
		s := 0.0
		for i := range b.N {
			s += math.Sin(float64(i) * 1e-3)
		}
		sink = s
	})
}

func BenchmarkLog(b *testing.B) {
	b.Run("fmath", func(b *testing.B) {
		s := 0.0
		for i := range b.N {
			s += Log(float64(i) + 0.5)
		}
		sink = s
	})
	b.Run("math", func(b *testing.B) {
		s := 0.0
		for i := range b.N {
			s += math.Log(float64(i) + 0.5)
		}
		sink = s
	})
}

var sink float64
