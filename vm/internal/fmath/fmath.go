// Package fmath holds the float functions of std::math whose results must
// be bit-identical on every engine and every machine: sin, cos, tan, asin,
// acos, atan, atan2, hypot, log, exp and pow.
//
// Go's math package does not promise that. On amd64, math.Hypot,
// math.Log and math.Exp are written in assembly with other algorithms than
// the pure Go code the wasm guest runs, and on arm64 (and amd64 built with
// GOAMD64=v3) the compiler may fuse x*y+z into one instruction with one
// rounding, which the wasm guest never does. The functions here are Go's
// own pure Go algorithms (from go1.26 src/math, BSD licence, themselves
// from the Cephes library and FreeBSD's msun) with every product that
// feeds a sum written as mul(x, y): the explicit float64 conversion there
// rounds the product, which the Go specification says prevents fusion. So
// each function computes exactly what Go's pure Go code computes on a
// machine without fused multiply-add, everywhere.
package fmath

import (
	"math"
	"math/bits"
)

// mul returns x*y rounded to float64, never fused into a following add.
func mul(x, y float64) float64 { return float64(x * y) }

// Pi/4 split into three parts, for the extended precision argument
// reduction of Sin, Cos and Tan.
const (
	pi4A = 7.85398125648498535156e-1  // 0x3fe921fb40000000
	pi4B = 3.77489470793079817668e-8  // 0x3e64442d00000000
	pi4C = 2.69515142907905952645e-15 // 0x3ce8469898cc5170
)

var sinCoef = [...]float64{
	1.58962301576546568060e-10, // 0x3de5d8fd1fd19ccd
	-2.50507477628578072866e-8, // 0xbe5ae5e5a9291f5d
	2.75573136213857245213e-6,  // 0x3ec71de3567d48a1
	-1.98412698295895385996e-4, // 0xbf2a01a019bfdf03
	8.33333333332211858878e-3,  // 0x3f8111111110f7d0
	-1.66666666666666307295e-1, // 0xbfc5555555555548
}

var cosCoef = [...]float64{
	-1.13585365213876817300e-11, // 0xbda8fa49a0861a9b
	2.08757008419747316778e-9,   // 0x3e21ee9d7b4e3f05
	-2.75573141792967388112e-7,  // 0xbe927e4f7eac4bc6
	2.48015872888517045348e-5,   // 0x3efa01a019c844f5
	-1.38888888888730564116e-3,  // 0xbf56c16c16c14f91
	4.16666666666665929218e-2,   // 0x3fa555555555554b
}

// horner6 evaluates ((c[0]*x + c[1])*x + …)*x + c[5], written out as
// Go's code has it.
func horner6(c *[6]float64, x float64) float64 {
	return mul(mul(mul(mul(mul(c[0], x)+c[1], x)+c[2], x)+c[3], x)+c[4], x) + c[5]
}

// sinPoly and cosPoly approximate sin and cos of z in [-Pi/4, Pi/4].
func sinPoly(z, zz float64) float64 {
	return z + mul(mul(z, zz), horner6(&sinCoef, zz))
}

func cosPoly(zz float64) float64 {
	return (1.0 - mul(0.5, zz)) + mul(mul(zz, zz), horner6(&cosCoef, zz))
}

// reduce returns the octant j of x >= 0 (0 to 7, made even) and the
// remainder z, in [-Pi/4, Pi/4].
func reduce(x float64) (j uint64, z float64) {
	if x >= reduceThreshold {
		return trigReduce(x)
	}
	j = uint64(x * (4 / math.Pi)) // integer part of x/(Pi/4)
	y := float64(j)
	if j&1 == 1 {
		j++
		y++
	}
	j &= 7
	return j, ((x - mul(y, pi4A)) - mul(y, pi4B)) - mul(y, pi4C)
}

// Sin returns the sine of the radian argument x (math.Sin).
func Sin(x float64) float64 {
	switch {
	case x == 0 || math.IsNaN(x):
		return x
	case math.IsInf(x, 0):
		return math.NaN()
	}
	sign := false
	if x < 0 {
		x = -x
		sign = true
	}
	j, z := reduce(x)
	if j > 3 {
		sign = !sign
		j -= 4
	}
	zz := z * z
	var y float64
	if j == 1 || j == 2 {
		y = cosPoly(zz)
	} else {
		y = sinPoly(z, zz)
	}
	if sign {
		y = -y
	}
	return y
}

// Cos returns the cosine of the radian argument x (math.Cos).
func Cos(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return math.NaN()
	}
	sign := false
	x = math.Abs(x)
	j, z := reduce(x)
	if j > 3 {
		j -= 4
		sign = !sign
	}
	if j > 1 {
		sign = !sign
	}
	zz := z * z
	var y float64
	if j == 1 || j == 2 {
		y = sinPoly(z, zz)
	} else {
		y = cosPoly(zz)
	}
	if sign {
		y = -y
	}
	return y
}

var tanP = [...]float64{
	-1.30936939181383777646e4, // 0xc0c992d8d24f3f38
	1.15351664838587416140e6,  // 0x413199eca5fc9ddd
	-1.79565251976484877988e7, // 0xc1711fead3299176
}

var tanQ = [...]float64{
	1.00000000000000000000e0,
	1.36812963470692954678e4,  // 0x40cab8a5eeb36572
	-1.32089234440210967447e6, // 0xc13427bc582abc96
	2.50083801823357915839e7,  // 0x4177d98fc2ead8ef
	-5.38695755929454629881e7, // 0xc189afe03cbe5a31
}

// Tan returns the tangent of the radian argument x (math.Tan).
func Tan(x float64) float64 {
	switch {
	case x == 0 || math.IsNaN(x):
		return x
	case math.IsInf(x, 0):
		return math.NaN()
	}
	sign := false
	if x < 0 {
		x = -x
		sign = true
	}
	var j uint64
	var z float64
	if x >= reduceThreshold {
		j, z = trigReduce(x)
	} else {
		j = uint64(x * (4 / math.Pi))
		y := float64(j)
		if j&1 == 1 { // map zeros and singularities to origin
			j++
			y++
		}
		z = ((x - mul(y, pi4A)) - mul(y, pi4B)) - mul(y, pi4C)
	}
	zz := z * z
	y := z
	if zz > 1e-14 {
		num := mul(mul(tanP[0], zz)+tanP[1], zz) + tanP[2]
		// tanQ[0] is 1: Go's code starts with zz+tanQ[1].
		den := mul(mul(mul(zz+tanQ[1], zz)+tanQ[2], zz)+tanQ[3], zz) + tanQ[4]
		y = z + mul(z, mul(zz, num)/den)
	}
	if j&2 == 2 {
		y = -1 / y
	}
	if sign {
		y = -y
	}
	return y
}

// reduceThreshold is the smallest x that trigReduce reduces: below it the
// three-part reduction is exact enough.
const reduceThreshold = 1 << 29

// trigReduce reduces x >= reduceThreshold by Pi/4 with Payne and Hanek's
// method, using the bits of 4/Pi in mPi4 (math's trigReduce).
func trigReduce(x float64) (j uint64, z float64) {
	const (
		pi4   = math.Pi / 4
		shift = 52
		mask  = 0x7FF
		bias  = 1023
	)
	if x < pi4 {
		return 0, x
	}
	ix := math.Float64bits(x)
	exp := int(ix>>shift&mask) - bias - shift
	ix &^= mask << shift
	ix |= 1 << shift
	digit, bitshift := uint(exp+61)/64, uint(exp+61)%64
	z0 := (mPi4[digit] << bitshift) | (mPi4[digit+1] >> (64 - bitshift))
	z1 := (mPi4[digit+1] << bitshift) | (mPi4[digit+2] >> (64 - bitshift))
	z2 := (mPi4[digit+2] << bitshift) | (mPi4[digit+3] >> (64 - bitshift))
	z2hi, _ := bits.Mul64(z2, ix)
	z1hi, z1lo := bits.Mul64(z1, ix)
	z0lo := z0 * ix
	lo, c := bits.Add64(z1lo, z2hi, 0)
	hi, _ := bits.Add64(z0lo, z1hi, c)
	j = hi >> 61
	hi = hi<<3 | lo>>61
	lz := uint(bits.LeadingZeros64(hi))
	e := uint64(bias - (lz + 1))
	hi = (hi << (lz + 1)) | (lo >> (64 - (lz + 1)))
	hi >>= 64 - shift
	hi |= e << shift
	z = math.Float64frombits(hi)
	if j&1 == 1 {
		j++
		j &= 7
		z--
	}
	return j, z * pi4
}

// mPi4 is the binary digits of 4/pi as a uint64 array.
var mPi4 = [...]uint64{
	0x0000000000000001,
	0x45f306dc9c882a53,
	0xf84eafa3ea69bb81,
	0xb6c52b3278872083,
	0xfca2c757bd778ac3,
	0x6e48dc74849ba5c0,
	0x0c925dd413a32439,
	0xfc3bd63962534e7d,
	0xd1046bea5d768909,
	0xd338e04d68befc82,
	0x7323ac7306a673e9,
	0x3908bf177bf25076,
	0x3ff12fffbc0b301f,
	0xde5e2316b414da3e,
	0xda6cfd9e4f96136e,
	0x9e8c7ecd3cbfd45a,
	0xea4f758fd7cbe2f6,
	0x7a0e73ef14a525d4,
	0xd7f6bf623f1aba10,
	0xac06608df8f6d757,
}

// Asin returns the arcsine, in radians, of x (math.Asin).
func Asin(x float64) float64 {
	if x == 0 {
		return x
	}
	sign := false
	if x < 0 {
		x = -x
		sign = true
	}
	if x > 1 {
		return math.NaN()
	}
	temp := math.Sqrt(1 - mul(x, x))
	if x > 0.7 {
		temp = math.Pi/2 - satan(temp/x)
	} else {
		temp = satan(x / temp)
	}
	if sign {
		temp = -temp
	}
	return temp
}

// Acos returns the arccosine, in radians, of x (math.Acos).
func Acos(x float64) float64 { return math.Pi/2 - Asin(x) }

// xatan evaluates a series valid in the range [0, 0.66].
func xatan(x float64) float64 {
	const (
		P0 = -8.750608600031904122785e-01
		P1 = -1.615753718733365076637e+01
		P2 = -7.500855792314704667340e+01
		P3 = -1.228866684490136173410e+02
		P4 = -6.485021904942025371773e+01
		Q0 = +2.485846490142306297962e+01
		Q1 = +1.650270098316988542046e+02
		Q2 = +4.328810604912902668951e+02
		Q3 = +4.853903996359136964868e+02
		Q4 = +1.945506571482613964425e+02
	)
	z := x * x
	num := mul(mul(mul(mul(P0, z)+P1, z)+P2, z)+P3, z) + P4
	den := mul(mul(mul(mul(z+Q0, z)+Q1, z)+Q2, z)+Q3, z) + Q4
	z = mul(z, num) / den
	return mul(x, z) + x
}

// satan reduces its argument (known to be positive) to the range
// [0, 0.66] and calls xatan.
func satan(x float64) float64 {
	const (
		morebits = 6.123233995736765886130e-17 // pi/2 = PIO2 + morebits
		tan3pio8 = 2.41421356237309504880      // tan(3*pi/8)
	)
	if x <= 0.66 {
		return xatan(x)
	}
	if x > tan3pio8 {
		return math.Pi/2 - xatan(1/x) + morebits
	}
	return math.Pi/4 + xatan((x-1)/(x+1)) + 0.5*morebits
}

// Atan returns the arctangent, in radians, of x (math.Atan).
func Atan(x float64) float64 {
	if x == 0 {
		return x
	}
	if x > 0 {
		return satan(x)
	}
	return -satan(-x)
}

// Atan2 returns the arc tangent of y/x, using the signs of the two to
// determine the quadrant of the return value (math.Atan2).
func Atan2(y, x float64) float64 {
	switch {
	case math.IsNaN(y) || math.IsNaN(x):
		return math.NaN()
	case y == 0:
		if x >= 0 && !math.Signbit(x) {
			return math.Copysign(0, y)
		}
		return math.Copysign(math.Pi, y)
	case x == 0:
		return math.Copysign(math.Pi/2, y)
	case math.IsInf(x, 0):
		if math.IsInf(x, 1) {
			if math.IsInf(y, 0) {
				return math.Copysign(math.Pi/4, y)
			}
			return math.Copysign(0, y)
		}
		if math.IsInf(y, 0) {
			return math.Copysign(3*math.Pi/4, y)
		}
		return math.Copysign(math.Pi, y)
	case math.IsInf(y, 0):
		return math.Copysign(math.Pi/2, y)
	}
	q := Atan(y / x)
	if x < 0 {
		if q <= 0 {
			return q + math.Pi
		}
		return q - math.Pi
	}
	return q
}

// Hypot returns Sqrt(p*p + q*q), taking care to avoid unnecessary
// overflow and underflow (math.Hypot).
func Hypot(p, q float64) float64 {
	p, q = math.Abs(p), math.Abs(q)
	switch {
	case math.IsInf(p, 1) || math.IsInf(q, 1):
		return math.Inf(1)
	case math.IsNaN(p) || math.IsNaN(q):
		return math.NaN()
	}
	if p < q {
		p, q = q, p
	}
	if p == 0 {
		return 0
	}
	q = q / p
	return p * math.Sqrt(1+mul(q, q))
}

// Log returns the natural logarithm of x (math.Log).
func Log(x float64) float64 {
	const (
		Ln2Hi = 6.93147180369123816490e-01 // 3fe62e42 fee00000
		Ln2Lo = 1.90821492927058770002e-10 // 3dea39ef 35793c76
		L1    = 6.666666666666735130e-01   // 3FE55555 55555593
		L2    = 3.999999999940941908e-01   // 3FD99999 9997FA04
		L3    = 2.857142874366239149e-01   // 3FD24924 94229359
		L4    = 2.222219843214978396e-01   // 3FCC71C5 1D8E78AF
		L5    = 1.818357216161805012e-01   // 3FC74664 96CB03DE
		L6    = 1.531383769920937332e-01   // 3FC39A09 D078C69F
		L7    = 1.479819860511658591e-01   // 3FC2F112 DF3E5244
	)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	f1, ki := math.Frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	s := f / (2 + f)
	s2 := s * s
	s4 := s2 * s2
	t1 := mul(s2, L1+mul(s4, L3+mul(s4, L5+mul(s4, L7))))
	t2 := mul(s4, L2+mul(s4, L4+mul(s4, L6)))
	R := t1 + t2
	hfsq := mul(0.5, f) * f
	return mul(k, Ln2Hi) - ((hfsq - (mul(s, hfsq+R) + mul(k, Ln2Lo))) - f)
}

// Exp returns e**x, the base-e exponential of x (math.Exp).
func Exp(x float64) float64 {
	const (
		Ln2Hi     = 6.93147180369123816490e-01
		Ln2Lo     = 1.90821492927058770002e-10
		Log2e     = 1.44269504088896338700e+00
		Overflow  = 7.09782712893383973096e+02
		Underflow = -7.45133219101941108420e+02
		NearZero  = 1.0 / (1 << 28) // 2**-28
	)
	switch {
	case math.IsNaN(x):
		return x
	case x > Overflow:
		return math.Inf(1)
	case x < Underflow:
		return 0
	case -NearZero < x && x < NearZero:
		return 1 + x
	}
	var k int
	switch {
	case x < 0:
		k = int(mul(Log2e, x) - 0.5)
	case x > 0:
		k = int(mul(Log2e, x) + 0.5)
	}
	hi := x - mul(float64(k), Ln2Hi)
	lo := float64(k) * Ln2Lo
	return expmulti(hi, lo, k)
}

// expmulti returns e**r × 2**k where r = hi - lo and |r| ≤ ln(2)/2.
func expmulti(hi, lo float64, k int) float64 {
	const (
		P1 = 1.66666666666666657415e-01  // 0x3FC55555; 0x55555555
		P2 = -2.77777777770155933842e-03 // 0xBF66C16C; 0x16BEBD93
		P3 = 6.61375632143793436117e-05  // 0x3F11566A; 0xAF25DE2C
		P4 = -1.65339022054652515390e-06 // 0xBEBBBD41; 0xC5D26BF1
		P5 = 4.13813679705723846039e-08  // 0x3E663769; 0x72BEA4D0
	)
	r := hi - lo
	t := r * r
	c := r - mul(t, P1+mul(t, P2+mul(t, P3+mul(t, P4+mul(t, P5)))))
	y := 1 - ((lo - mul(r, c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}

// Pow returns x**y (math.Pow, with this package's Exp and Log).
func Pow(x, y float64) float64 {
	switch {
	case y == 0 || x == 1:
		return 1
	case y == 1:
		return x
	case math.IsNaN(x) || math.IsNaN(y):
		return math.NaN()
	case x == 0:
		switch {
		case y < 0:
			if math.Signbit(x) && isOddInt(y) {
				return math.Inf(-1)
			}
			return math.Inf(1)
		case y > 0:
			if math.Signbit(x) && isOddInt(y) {
				return x
			}
			return 0
		}
	case math.IsInf(y, 0):
		switch {
		case x == -1:
			return 1
		case (math.Abs(x) < 1) == math.IsInf(y, 1):
			return 0
		default:
			return math.Inf(1)
		}
	case math.IsInf(x, 0):
		if math.IsInf(x, -1) {
			return Pow(1/x, -y) // Pow(-0, -y)
		}
		switch {
		case y < 0:
			return 0
		case y > 0:
			return math.Inf(1)
		}
	case y == 0.5:
		return math.Sqrt(x)
	case y == -0.5:
		return 1 / math.Sqrt(x)
	}
	yi, yf := math.Modf(math.Abs(y))
	if yf != 0 && x < 0 {
		return math.NaN()
	}
	if yi >= 1<<63 {
		// yi is a large even int that will lead to overflow (or
		// underflow to 0) for all x except -1 (x == 1 was handled).
		switch {
		case x == -1:
			return 1
		case (math.Abs(x) < 1) == (y > 0):
			return 0
		default:
			return math.Inf(1)
		}
	}
	// ans = a1 * 2**ae (= 1 for now).
	a1 := 1.0
	ae := 0
	// ans *= x**yf
	if yf != 0 {
		if yf > 0.5 {
			yf--
			yi++
		}
		a1 = Exp(yf * Log(x))
	}
	// ans *= x**yi by repeated squaring, tracking the exponent separately
	// to avoid overflow.
	x1, xe := math.Frexp(x)
	for i := int64(yi); i != 0; i >>= 1 {
		if xe < -1<<12 || 1<<12 < xe {
			// Catastrophic overflow: let Ldexp handle it.
			ae += xe
			break
		}
		if i&1 == 1 {
			a1 *= x1
			ae += xe
		}
		x1 = mul(x1, x1)
		xe <<= 1
		if x1 < .5 {
			x1 += x1
			xe--
		}
	}
	// ans = a1 * 2**ae; if y < 0 { ans = 1 / ans }
	if y < 0 {
		a1 = 1 / a1
		ae = -ae
	}
	return math.Ldexp(a1, ae)
}

// isOddInt reports whether x is an odd integer.
func isOddInt(x float64) bool {
	if math.Abs(x) >= (1 << 53) {
		return false
	}
	xi, xf := math.Modf(x)
	return xf == 0 && int64(xi)&1 == 1
}
