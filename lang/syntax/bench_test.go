package syntax

import (
	"fmt"
	"strings"
	"testing"
)

// benchProgram builds a program of about n lines exercising every construct.
func benchProgram(n int) string {
	var b strings.Builder
	b.WriteString("import \"lib/util.hl\";\n\nconst LIMIT: int = 1_000;\ntopic Tick { n: int, label: string }\nenum Shape { Dot, Circle(float), Rect(float, float) }\n\n")
	lines := 0
	for i := 0; lines < n-4-27; i++ {
		lines = strings.Count(b.String(), "\n")
		fmt.Fprintf(&b, `@deterministic
fn area_%d(s: Shape, xs: [int], m: {string: [int]}) -> float {
    var total: float = 0.0;
    for i in 0..(len(xs) %% 7) * 20 { total += float(xs[i]) * 1.5e-3; }
    for k, v in m { if has(m, k) && len(v) > 0 || !false { total -= 2.0; } else if k == "x\n" { break; } else { continue; } }
    match s {
        Shape::Dot => { return 0.0; },
        Shape::Circle(r) => { return 3.14159 * r * r; },
        Shape::Rect(w, h) => { return w * h; },
    }
}

locus Worker_%d(id: int) {
    var seen: {int: bool} = {};
    var log: [string] = [];
    on start { print("worker " + str(id)); }
    on Tick(t) {
        seen[t.n] = true;
        push(log, t.label);
        let p = Point { x: t.n, y: -t.n + 0xff };
        while p.x < LIMIT { p.x *= 2; }
        publish Tick { n: t.n + 1, label: std::time::now_ms() };
    }
    fn report() -> string { return join(log, ", ") + b"\x00" ; }
}

`, i, i)
	}
	b.WriteString("main {\n    spawn Worker_0(1) as w on pool(\"workers\");\n    bind stdin to Tick;\n}\n")
	return b.String()
}

func TestBenchProgramParses(t *testing.T) {
	src := benchProgram(500)
	if lines := strings.Count(src, "\n"); lines < 480 || lines > 540 {
		t.Errorf("bench program has %d lines", lines)
	}
	mustParse(t, src)
}

func BenchmarkParse500Lines(b *testing.B) {
	src := []byte(benchProgram(500))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, errs := Parse("bench.hl", src); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
