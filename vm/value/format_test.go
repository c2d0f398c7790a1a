package value

import (
	"math"
	"strconv"
	"testing"
)

func TestAppendFloat(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{-1, "-1.0"},
		{0.1, "0.1"},
		{-0.1, "-0.1"},
		{2.5, "2.5"},
		{100, "100.0"},
		{123456.789, "123456.789"},
		{0.0001, "0.0001"},
		{0.00012, "0.00012"},
		{0.00001, "1e-05"},
		{1.5e-5, "1.5e-05"},
		{1e-7, "1e-07"},
		{-1e-7, "-1e-07"},
		{1e20, "100000000000000000000.0"},
		{1.23e20, "123000000000000000000.0"},
		{123456789012345678901, "123456789012345680000.0"},
		{1e21, "1e+21"},
		{1.5e21, "1.5e+21"},
		{-1e21, "-1e+21"},
		{1e300, "1e+300"},
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{1.0 / 3, "0.3333333333333333"},
		{2.0 / 3 * 1e10, "6666666666.666667"},
		{9007199254740993, "9007199254740992.0"},
		{math.Float64frombits(0x3fd3333333333334), "0.30000000000000004"}, // 0.1 + 0.2 at run time
		{math.NaN(), "NaN"},
		{math.Float64frombits(0xfff8000000000123), "NaN"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
	} {
		got := string(AppendFloat(nil, c.f))
		if got != c.want {
			t.Errorf("AppendFloat(%v) = %s, want %s", c.f, got, c.want)
			continue
		}
		// every finite form reads back as the same float
		if !math.IsNaN(c.f) && !math.IsInf(c.f, 0) {
			back, err := strconv.ParseFloat(got, 64)
			if err != nil || math.Float64bits(back) != math.Float64bits(c.f) {
				t.Errorf("%s reads back as %v (%v)", got, back, err)
			}
		}
	}
}

// TestAppendFloatRoundTrip checks the shortest round-trip property over a
// deterministic spread of bit patterns.
func TestAppendFloatRoundTrip(t *testing.T) {
	x := uint64(0x9e3779b97f4a7c15)
	for range 20000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		f := math.Float64frombits(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := string(AppendFloat(nil, f))
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(back) != x {
			t.Fatalf("%x: %s reads back as %v (%v)", x, s, back, err)
		}
		short := strconv.FormatFloat(f, 'g', -1, 64)
		if len(trimForm(s)) != len(trimForm(short)) {
			t.Fatalf("%x: %s is not as short as %s", x, s, short)
		}
	}
}

// trimForm returns the significant digits of a formatted float.
func trimForm(s string) string {
	var d []byte
	for i := 0; i < len(s) && s[i] != 'e'; i++ {
		if s[i] >= '0' && s[i] <= '9' {
			d = append(d, s[i])
		}
	}
	for len(d) > 1 && d[0] == '0' {
		d = d[1:]
	}
	for len(d) > 1 && d[len(d)-1] == '0' {
		d = d[:len(d)-1]
	}
	return string(d)
}

func TestFormat(t *testing.T) {
	big := make([]Value, 12)
	for i := range big {
		big[i] = Int(int64(i))
	}
	for _, c := range []struct {
		v    Value
		want string
	}{
		{Str("plain \"text\"\n"), "plain \"text\"\n"},
		{Str(""), ""},
		{Int(0), "0"},
		{Int(-42), "-42"},
		{Int(math.MinInt64), "-9223372036854775808"},
		{Float(1), "1.0"},
		{Float(math.NaN()), "NaN"},
		{Bool(true), "true"},
		{Bool(false), "false"},
		{BytesOf("ab\x00"), `b"ab\x00"`},
		{BytesOf("\"\\\n\x7f\xff ~"), `b"\"\\\x0a\x7f\xff ~"`},
		{BytesOf(""), `b""`},
		{list(), "[]"},
		{list(Int(1), Int(2)), "[1, 2]"},
		{list(Float(1), Float(-0.5)), "[1.0, -0.5]"},
		{NewList(big), "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]"},
		{list(Str("a"), Str("")), `["a", ""]`},
		{list(Str("q\"b\\s\n\t\r")), `["q\"b\\s\n\t\r"]`},
		{list(Str("\x1b[0m\x00\x7f\u0085é😀")), `["\u{1b}[0m\u{0}\u{7f}\u{85}é😀"]`},
		{list(Str("bad\xffutf8")), "[\"bad\xffutf8\"]"},
		{list(list(), list(Int(1))), "[[], [1]]"},
		{list(BytesOf("x")), `[b"x"]`},
		{strMap(), "{}"},
		{strMap("a", Int(1)), `{"a": 1}`},
		{strMap("b", Int(1), "a", list(Int(2))), `{"b": 1, "a": [2]}`},
		{intMap(Int(2), Str("x"), Int(-1), Str("y")), `{2: "x", -1: "y"}`},
		{intMap(Bool(true), Float(1)), `{true: 1.0}`},
		{NewStruct(pointT, []Value{Int(1), Int(2)}), "Point { x: 1, y: 2 }"},
		{NewStruct(emptyT, nil), "Empty {}"},
		{NewStruct(orderT, []Value{Int(1), Int(2), Str("hi")}), `Order { id: 1, amount: 2, note: "hi" }`},
		{NewEnum(verdictT, 0, nil), "Verdict::Accept"},
		{NewEnum(verdictT, 1, []Value{Str("late")}), `Verdict::Reject("late")`},
		{NewEnum(shapeT, 1, []Value{Float(1), Float(2.5)}), "Shape::Rect(1.0, 2.5)"},
		{list(NewEnum(verdictT, 0, nil)), "[Verdict::Accept]"},
		{node("a", node("b"), node("c")), `Node { name: "a", kids: [Node { name: "b", kids: [] }, Node { name: "c", kids: [] }] }`},
		{Value{}, "()"},
	} {
		if got := Format(c.v); got != c.want {
			t.Errorf("Format = %s\n          want %s", got, c.want)
		}
		if got := string(AppendFormat([]byte("x"), c.v)); got != "x"+c.want {
			t.Errorf("AppendFormat = %s, want x%s", got, c.want)
		}
	}
}

func TestFormatDoesNotAllocateForScalars(t *testing.T) {
	buf := make([]byte, 0, 64)
	for _, v := range []Value{Int(-12345), Float(1.5e-7), Float(123.25), Bool(true), Str("x")} {
		if n := testing.AllocsPerRun(100, func() { buf = AppendFormat(buf[:0], v) }); n != 0 {
			t.Errorf("AppendFormat(%v) allocates %v times", v, n)
		}
	}
}
