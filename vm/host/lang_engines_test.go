package host

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hale-lang/hale/vm/internal/fmath"
	"github.com/hale-lang/hale/vm/value"
)

// engineCase is a program run on both real engines: their stdout, stderr
// and exit codes must agree and match the expectations.
type engineCase struct {
	name   string
	src    string
	stdout string
	stderr string // a prefix of stderr ("" for none)
	code   int
}

func runEngineCases(t *testing.T, cases []engineCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := runBothHandled(t, compileAll(t, c.src), Options{}, false)
			if n.stdout != c.stdout || n.res.Code != c.code || !strings.HasPrefix(n.stderr, c.stderr) || c.stderr == "" && n.stderr != "" {
				t.Errorf("got (exit %d):\n%s%s\nwant (exit %d):\n%s%s", n.res.Code, n.stdout, n.stderr, c.code, c.stdout, c.stderr)
			}
		})
	}
}

func startSrc(body string) string {
	return "locus T {\n    on start {\n" + body + "\n    }\n}\nmain { spawn T; }\n"
}

// TestEnginesBitOperators runs every bit operator, ! on ints, the compound
// assignments, the precedence of §10.1 and the shift traps on both engines.
func TestEnginesBitOperators(t *testing.T) {
	runEngineCases(t, []engineCase{
		{name: "operators", src: startSrc(`
            let a = 12; let b = 10; let m = -9223372036854775807 - 1;
            print([a & b, a | b, a ^ b, !a, !0, !-1, !m]);
            print([1 << 0, 1 << 62, 1 << 63, 3 << 63, -1 << 1, m << 1]);
            print([-8 >> 1, -1 >> 63, m >> 63, 1024 >> 10, 7 >> 0, 5 >> 63]);
            print([0xF0 & 0x3C, 0xF0 | 0x0F, 0xFF ^ 0x0F]); print(!true);`),
			stdout: "[8, 14, 6, -13, -1, 0, 9223372036854775807]\n" +
				"[1, 4611686018427387904, -9223372036854775808, -9223372036854775808, -2, 0]\n" +
				"[-4, -1, -1, 1, 7, 0]\n" +
				"[48, 255, 240]\nfalse\n"},
		{name: "precedence", src: startSrc(`
            print(1 | 2 ^ 3 & 4 << 1 + 1);
            print(1 + 2 << 3);
            print(6 & 3 == 2);
            print(1 | 6 < 7);
            print(!1 + 1);
            print(-1 >> 1 * 2);
            print(2 * 3 << 1 ^ 5 | 8 & 12);`),
			// 1 | (2 ^ (3 & (4 << (1 + 1)))) = 3; (1 + 2) << 3; (6 & 3) == 2;
			// (1 | 6) < 7; (!1) + 1; -1 >> (1 * 2);
			// (((2 * 3) << 1) ^ 5) | (8 & 12) = 9 | 8.
			stdout: "3\n24\ntrue\nfalse\n-1\n-1\n9\n"},
		{name: "compound assignments", src: "locus T {\n    var s = 6;\n    on start {\n" + `
            var x = 0xFF;
            x &= 0x0F; print(x);
            x |= 0x30; print(x);
            x ^= 0xFF; print(x);
            x <<= 4; print(x);
            x >>= 2; print(x);
            s <<= 60; print(s);
            s >>= 61; print(s);
            let xs = [1, 2]; xs[0] |= 4; print(xs);` + "\n    }\n}\nmain { spawn T; }\n",
			stdout: "15\n63\n192\n3072\n768\n6917529027641081856\n3\n[5, 2]\n"},
		{name: "shift count 64 traps", src: startSrc(`
            let n = 64;
            print("before");
            print(1 << n);`),
			stdout: "before\n", stderr: "trap: shift count 64 out of range (0 to 63)\n  at app.hl:6:21 in T.on start\n", code: ExitTrap},
		{name: "negative shift count traps", src: startSrc(`
            var x = 8;
            x >>= -1;`),
			stderr: "trap: shift count -1 out of range (0 to 63)\n  at app.hl:5:13 in T.on start\n", code: ExitTrap},
	})
}

// TestEnginesMath runs std::math on a table of inputs on both engines: the
// results must be the same bits, and those of package fmath (pinned
// there on every machine), printed in full.
func TestEnginesMath(t *testing.T) {
	inputs := []float64{0, -0.0, 1, -1, 0.5, -0.7, 0.66, 2.5, 3.141592653589793, 1e-300, 5e-324, 1e6, 1e22, -1e300, 1e308}
	unary := []struct {
		name string
		f    func(float64) float64
	}{
		{"sin", fmath.Sin}, {"cos", fmath.Cos}, {"tan", fmath.Tan}, {"asin", fmath.Asin},
		{"acos", fmath.Acos}, {"atan", fmath.Atan}, {"log", fmath.Log}, {"exp", fmath.Exp},
	}
	binary := []struct {
		name string
		f    func(float64, float64) float64
	}{{"atan2", fmath.Atan2}, {"hypot", fmath.Hypot}, {"pow", fmath.Pow}}
	lit := func(x float64) string {
		if x == 0 && math.Signbit(x) {
			return "-0.0"
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s
	}
	var body, want strings.Builder
	for _, u := range unary {
		for _, x := range inputs {
			// Bits, not text: str() of a float is shortest-round-trip,
			// so equal text means equal bits, but say it plainly.
			fmt.Fprintf(&body, "print(std::math::%s(%s));\n", u.name, lit(x))
			fmt.Fprintf(&want, "%s\n", floatText(u.f(x)))
		}
	}
	for _, b := range binary {
		for i, x := range inputs {
			y := inputs[(i+5)%len(inputs)]
			fmt.Fprintf(&body, "print(std::math::%s(%s, %s));\n", b.name, lit(x), lit(y))
			fmt.Fprintf(&want, "%s\n", floatText(b.f(x, y)))
		}
	}
	body.WriteString("print([std::math::PI, std::math::E]);\nprint(std::math::PI == 3.141592653589793);\n")
	want.WriteString("[3.141592653589793, 2.718281828459045]\ntrue\n")
	runEngineCases(t, []engineCase{{name: "table", src: startSrc(body.String()), stdout: want.String()}})
}

// floatText is str() of a float, as the interpreter writes it.
func floatText(f float64) string { return value.Format(value.Float(f)) }

// spawnLoopSrc spawns 60 workers on a pool and 4 pinned ones through spawn
// loops; every worker answers its own job, so the tally is the same
// whatever order the consumers run in.
const spawnLoopSrc = `const N: int = 60;
topic Job { n: int }
topic Done { id: int, n: int }
locus Boss { on start { for k in 0..N + 4 { publish Job { n: k }; } } }
locus Worker(id: int, scale: int) {
    on Job(j) { if j.n == id { publish Done { id: id, n: j.n * scale }; } }
}
locus Tally {
    var got: int = 0;
    var sum: int = 0;
    on Done(d) {
        got += 1;
        sum += d.n;
        if got == N + 4 { print("done " + str(got) + " " + str(sum)); }
    }
}
main {
    spawn Boss;
    for i in 0..N { spawn Worker(i, i) as workers[i] on pool("w"); }
    for g in 0..2 {
        for k in 0..2 { spawn Worker(N + g * 2 + k, 1000) as solo[g][k] on pinned; }
    }
    spawn Tally;
}
`

// TestEnginesSpawnLoop runs a spawn loop of 60 workers (and a nested one of
// pinned workers) on both engines.
func TestEnginesSpawnLoop(t *testing.T) {
	// sum of i*i for i < 60, plus 60..63 times 1000.
	runEngineCases(t, []engineCase{{name: "60 workers", src: spawnLoopSrc, stdout: "done 64 316210\n"}})
}

// TestEnginesMapIndex churns maps of int and string keys well past the
// size at which a map gets its hash index (vm/value), deleting and
// re-adding keys, and checks what a program sees of them (lengths, the
// insertion order, values) on both engines against a model of ordered
// maps written here in Go.
func TestEnginesMapIndex(t *testing.T) {
	const src = `
fn churn() {
    var m: {int: int} = {};
    var s: {string: int} = {};
    for i in 0..5000 {
        let k = (i * 7919) % 613;
        if has(m, k) { m[k] += i; } else { m[k] = i; }
        if i % 3 == 0 { delete(m, (i * 31) % 613); }
        let sk = "key" + str(k % 97);
        if has(s, sk) { s[sk] += 1; } else { s[sk] = 1; }
        if i % 5 == 0 { delete(s, "key" + str(i % 89)); }
    }
    var order = 0;
    var sum = 0;
    for k, v in m { order = (order * 31 + k) % 1000000007; sum += v; }
    print(str(len(m)) + " " + str(order) + " " + str(sum));
    order = 0;
    sum = 0;
    for k, v in s { order = (order * 31 + len(k) * 1000 + v) % 1000000007; sum += v; }
    let ks = keys(s);
    print(str(len(s)) + " " + str(order) + " " + str(sum) + " " + ks[0] + " " + ks[len(ks) - 1]);
}
locus T { on start { churn(); } }
main { spawn T; }
`
	m, s := newOrderedModel[int](), newOrderedModel[string]()
	for i := range 5000 {
		k := (i * 7919) % 613
		m.add(k, i)
		if i%3 == 0 {
			m.del((i * 31) % 613)
		}
		s.add("key"+strconv.Itoa(k%97), 1)
		if i%5 == 0 {
			s.del("key" + strconv.Itoa(i%89))
		}
	}
	order, sum := 0, 0
	for _, k := range m.keys {
		order = (order*31 + k) % 1000000007
		sum += m.vals[k]
	}
	want := fmt.Sprintf("%d %d %d\n", len(m.keys), order, sum)
	order, sum = 0, 0
	for _, k := range s.keys {
		order = (order*31 + len(k)*1000 + s.vals[k]) % 1000000007
		sum += s.vals[k]
	}
	want += fmt.Sprintf("%d %d %d %s %s\n", len(s.keys), order, sum, s.keys[0], s.keys[len(s.keys)-1])
	if len(m.keys) <= 8 || len(s.keys) <= 8 {
		t.Fatalf("the maps end with %d and %d keys: too few to have an index", len(m.keys), len(s.keys))
	}
	runEngineCases(t, []engineCase{{name: "churn", src: src, stdout: want}})
}

// TestEnginesStringBuild builds strings and bytes a piece at a time, the
// chains that append in place (value.Tail): prefixes kept and extended
// again later, a string taken twice, two chains in turn, and a chain
// under a memory limit it outgrows, which must trap at the same piece on
// both engines (the limit counts each result's length, as before). The
// expected text is computed here in Go.
func TestEnginesStringBuild(t *testing.T) {
	const src = `
fn build() {
    var s = "";
    var keep: [string] = [];
    for i in 0..3000 {
        s = s + str(i % 10);
        if i % 500 == 0 { push(keep, s); }
    }
    var t = "";
    var u = "";
    for i in 0..200 { t += "ab"; u = u + t; }
    var branched = keep[2] + "!";
    var again = keep[2] + "?";
    var twice = keep[1] + keep[1];
    var b = b"";
    for i in 0..100 { b = b + b"xy"; }
    print(str(len(s)) + " " + keep[1] + " " + str(len(keep[2])));
    print(str(len(u)) + " " + t);
    print(branched + " " + again);
    print(str(len(twice)) + " " + str(len(b)));
}
locus T {
    var total: string = "";
    on start {
        build();
        // outgrows a 1 MiB limit: 2,000 pieces of 1,000 bytes
        var piece = "";
        for i in 0..100 { piece += "zzzzzzzzzz"; }
        for i in 0..2000 { total = total + piece; print(str(i)); }
    }
}
main { spawn T; }
`
	var s strings.Builder
	var keep []string
	for i := range 3000 {
		s.WriteString(strconv.Itoa(i % 10))
		if i%500 == 0 {
			keep = append(keep, s.String())
		}
	}
	var tt, u string
	for range 200 {
		tt += "ab"
		u += tt
	}
	want := fmt.Sprintf("%d %s %d\n%d %s\n%s %s\n%d %d\n", s.Len(), keep[1], len(keep[2]), len(u), tt,
		keep[2]+"!", keep[2]+"?", 2*len(keep[1]), 200)
	n := runBothHandled(t, compileAll(t, src), Options{MemoryLimit: 1 << 20}, false)
	if !strings.HasPrefix(n.stdout, want) {
		t.Fatalf("got:\n%.600s\nwant a start of:\n%.600s", n.stdout, want)
	}
	if !strings.Contains(n.stderr, "out of memory") || n.res.Code == 0 {
		t.Fatalf("want an out-of-memory trap, got exit %d: %s", n.res.Code, n.stderr)
	}
	// The piece it traps at is the memory model's, not the allocator's:
	// some hundreds in, before the 2,000th.
	lines := strings.Split(strings.TrimSpace(strings.TrimPrefix(n.stdout, want)), "\n")
	if last, _ := strconv.Atoi(lines[len(lines)-1]); len(lines) < 100 || last != len(lines)-1 || last > 1990 {
		t.Fatalf("trapped after %d pieces (last printed %q)", len(lines), lines[len(lines)-1])
	}
}

// orderedModel is a Hale map of int values as a test models it: its
// keys in insertion order and a Go map of the values.
type orderedModel[K comparable] struct {
	keys []K
	vals map[K]int
}

func newOrderedModel[K comparable]() *orderedModel[K] {
	return &orderedModel[K]{vals: map[K]int{}}
}

// add adds d to k's value, a new key (valued d) going last.
func (o *orderedModel[K]) add(k K, d int) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] += d
}

// del deletes k, if it is a key.
func (o *orderedModel[K]) del(k K) {
	if _, ok := o.vals[k]; ok {
		delete(o.vals, k)
		o.keys = slices.DeleteFunc(o.keys, func(x K) bool { return x == k })
	}
}
