package host

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// formatCases are calls of format with the text they must give; each is
// run on both engines.
var formatCases = []struct{ call, want string }{
	// {} is str(v), strings unquoted; text and braces around it.
	{`format("{} has {} left", "bob", 3)`, "bob has 3 left"},
	{`format("{{}} {{{}}} }}{{", 7)`, "{} {7} }{"},
	{`format("")`, ""},
	{`format("plain")`, "plain"},
	{`format("{}", "only")`, "only"},
	{`format("{}|{}|{}|{}", 2.0, true, b"a\x00", -0.0)`, `2.0|true|b"a\x00"|-0.0`},
	{`format("{} {} {}", [1, 2], ["a"], {"k": [1.5]})`, `[1, 2] ["a"] {"k": [1.5]}`},
	{`format("{} / {}", P { x: 1, s: "q" }, E::B("z"))`, `P { x: 1, s: "q" } / E::B("z")`},
	{`format("{:}", 5)`, "5"},
	// Width and default alignment: numbers right, other values left.
	{`format("[{:6}][{:6}][{:6}][{:6}]", 42, 1.5, "ab", true)`, "[    42][   1.5][ab    ][true  ]"},
	{`format("[{:8}]", [1, 2])`, "[[1, 2]  ]"},
	{`format("[{:2}][{:1}]", 12345, "long")`, "[12345][long]"},
	// Explicit align and fill.
	{`format("[{:<6}][{:>6}][{:^6}][{:^7}]", 42, "ab", "ab", "ab")`, "[42    ][    ab][  ab  ][  ab   ]"},
	{`format("[{:*<6}][{:->6}][{:.^7}][{:é^5}]", 1, 2, "mid", 3)`, "[1*****][-----2][..mid..][éé3éé]"},
	{`format("[{:0>4}][{:<<3}][{:>>3}][{:^^3}]", 7, 1, 2, 3)`, "[0007][1<<][>>2][^3^]"},
	{`format("[{:_>12}]", P { x: 1, s: "" })`, `[P { x: 1, s: "" }]`},
	{`format("[{:#^12}]", [true])`, "[###[true]###]"},
	// Width counts code points.
	{`format("[{:5}][{:>5}][{:^6}]", "日本", "é", "ñü")`, "[日本   ][    é][  ñü  ]"},
	{`format("[{:x<4}]", "🙂")`, "[🙂xxx]"},
	// Zero padding after the sign; it overrides fill and align.
	{`format("[{:05}][{:05}][{:05}][{:03}]", 42, -42, 0, -12345)`, "[00042][-0042][00000][-12345]"},
	{`format("[{:08.2}][{:08.2}][{:07}][{:06}]", 3.14159, -3.14159, -1.5, 0.25)`, "[00003.14][-0003.14][-0001.5][000.25]"},
	{`format("[{:*<06}][{:^06}]", -7, 2.5)`, "[-00007][0002.5]"},
	{`format("[{:0}][{:00}]", 5, 6)`, "[5][6]"},
	// Precision: fixed decimals, correctly rounded.
	{`format("{:.2} {:.0} {:.3} {:.1}", 3.14159, 2.5, -0.0005, 0.05)`, "3.14 2 -0.001 0.1"},
	{`format("{:.2} {:.2} {:.1}", 2.675, 0.125, 0.25)`, "2.67 0.12 0.2"},
	{`format("{:.0} {:.20}", 1e21, 0.1)`, "1000000000000000000000 0.10000000000000000555"},
	{`format("{:.2} {:.4}", -0.0, 1e-7)`, "-0.00 0.0000"},
	{`format("[{:>10.3}][{:<10.1}][{:*^9.2}]", 2.0 / 3.0, 9.99, 1.005)`, "[     0.667][10.0      ][**1.00***]"},
	// Hex and binary, signs kept.
	{`format("{:x} {:x} {:x} {:b} {:b} {:b}", 255, -255, 0, 5, -5, 0)`, "ff -ff 0 101 -101 0"},
	{`format("{:x}", -9223372036854775807 - 1)`, "-8000000000000000"},
	{`format("[{:08x}][{:08b}][{:-^8x}][{:>6b}]", -255, 5, 255, 2)`, "[-00000ff][00000101][---ff---][    10]"},
	// NaN and infinities print as str prints them; zero padding turns to spaces.
	{`format("{} {:.2} {:.2} {:.0}", n, n, i, -i)`, "NaN NaN inf -inf"},
	{`format("[{:6}][{:<6}][{:^7.3}][{:06}][{:07.1}]", n, i, -i, n, -i)`, "[   NaN][inf   ][ -inf  ][   NaN][   -inf]"},
}

// formatProgram prints every case's call, one per line.
func formatProgram() string {
	var b strings.Builder
	b.WriteString("type P { x: int, s: string }\nenum E { A, B(string) }\n")
	b.WriteString("locus T {\n    on start {\n        let n = 0.0 / 0.0; let i = 1.0 / 0.0;\n")
	for _, c := range formatCases {
		b.WriteString("        print(" + c.call + ");\n")
	}
	b.WriteString("    }\n}\nmain { spawn T; }\n")
	return b.String()
}

// TestEnginesFormat runs every feature of format on both engines.
func TestEnginesFormat(t *testing.T) {
	var want strings.Builder
	for _, c := range formatCases {
		want.WriteString(c.want + "\n")
	}
	runEngineCases(t, []engineCase{{name: "features", src: formatProgram(), stdout: want.String()}})
}

// TestEnginesFormatPrecision compares {:.N} with strconv's 'f' form over
// many floats and precisions, computed in the program from ints so that
// no literal is read twice.
func TestEnginesFormatPrecision(t *testing.T) {
	var src, want strings.Builder
	src.WriteString("locus T {\n    on start {\n")
	for i := 1; i <= 60; i++ {
		num, den := int64(i*i*7919-123456), int64(i*13+1)
		p := i % 12
		f := float64(num) / float64(den) * math.Pow(10, float64(i%9-4))
		src.WriteString("        print(format(\"{:." + strconv.Itoa(p) + "}\", float(" + strconv.FormatInt(num, 10) +
			") / float(" + strconv.FormatInt(den, 10) + ") * std::math::pow(10.0, float(" + strconv.Itoa(i%9-4) + "))));\n")
		want.WriteString(strconv.FormatFloat(f, 'f', p, 64) + "\n")
	}
	src.WriteString("    }\n}\nmain { spawn T; }\n")
	runEngineCases(t, []engineCase{{name: "precision", src: src.String(), stdout: want.String()}})
}
