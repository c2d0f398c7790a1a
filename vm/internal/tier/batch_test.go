package tier

import (
	"strings"
	"testing"

	"github.com/hale-lang/hale/codegen/image"
)

// TestStepArg checks the encoding of a batch in the guest step's first
// argument, and that the guest refuses what StepArg never makes.
func TestStepArg(t *testing.T) {
	for _, c := range [][2]int{{0, 1}, {7, 3}, {4095, MaxBatch}, {1 << 31, 2}} {
		pc, n, ok := SplitStepArg(StepArg(c[0], c[1]))
		if !ok || pc != c[0] || n != c[1] {
			t.Errorf("StepArg(%d, %d): split to %d, %d, %v", c[0], c[1], pc, n, ok)
		}
	}
	for _, a := range []int64{-1, -1 << 63, int64(MaxBatch) << 32, 1 << 62} {
		if _, _, ok := SplitStepArg(a); ok {
			t.Errorf("SplitStepArg(%#x) accepted", a)
		}
	}
}

// TestRegionBatches checks which in-place instructions share a call of
// the guest's step: fasta's push(line, table.chars[i]) is one batch of
// three (the field, the element, the push), a jump target starts a new
// batch, and every instruction InPlaceOp accepts as a table is the one
// inPlaceOp accepts.
func TestRegionBatches(t *testing.T) {
	img := compile(t, `
type Frequencies { chars: [string], probs: [float] }
fn pick(table: Frequencies, n: int) -> int {
    var line: [string] = [];
    var lines = 0;
    for j in 0..n {
        var i = 0;
        while i < 3 && j % 5 > i { i += 1; }
        push(line, table.chars[i]);
        if len(line) == 60 { lines += len(join(line, "")); line = []; }
    }
    return lines;
}
locus Main {
    on start {
        let f = Frequencies { chars: ["a", "c", "g", "t"], probs: [0.1, 0.2, 0.3, 0.4] };
        print(pick(f, 1000));
    }
}
main { spawn Main; }
`)
	p := NewPlan(img)
	n, longest := InPlaceBatches(img, p)
	if n == 0 || longest < 3 {
		t.Fatalf("%d batches, the longest %d", n, longest)
	}
	for _, r := range p.Regions {
		info, ok := analyzeRegion(img, p, r)
		if !ok {
			t.Fatal("a region of the plan does not analyse")
		}
		code := img.Funcs[r.Func].Code
		for _, b := range batches(img, info) {
			for pc := b[0]; pc < b[0]+b[1]; pc++ {
				if !info.inplace[pc-r.Header] {
					t.Fatalf("pc %d of batch %v does not run in place", pc, b)
				}
				if pc > b[0] {
					for q := r.Header; q <= r.End; q++ {
						if in := code[q]; isJump(in.Op) && int(in.C) == pc {
							t.Fatalf("batch %v spans jump target %d", b, pc)
						}
					}
				}
			}
		}
	}
	if bin, err := Compile(img, p); err != nil || bin == nil {
		t.Fatalf("compile: %v", err)
	}
	for op := range image.NumOps + 2 {
		for _, b := range []int32{0, int32(image.BuiltinPrint), int32(image.BuiltinPrint) + 1} {
			in := image.Instr{Op: image.Op(op), B: b}
			if InPlaceOp(&in) != inPlaceOp(in) {
				t.Errorf("InPlaceOp(%v) = %v, inPlaceOp %v", in, InPlaceOp(&in), inPlaceOp(in))
			}
		}
	}
}

// TestRegionFast checks which in-place instructions compiled code runs
// itself when it can (fastInPlace): fasta's field reads of lists, its
// element and its push; and that no region that may call the guest's
// math (a compiled callee's included) has any: compiled pointer stores
// are undone only when no guest call came between.
func TestRegionFast(t *testing.T) {
	const src = `
type Frequencies { chars: [string], probs: [float] }
type Random { seed: int }
fn next(g: Random) -> float {
    g.seed = (g.seed * 3877 + 29573) % 139968;
    return MATH(float(g.seed) / 139968.0);
}
fn pick(table: Frequencies, n: int, g: Random) -> int {
    var line: [string] = [];
    var lines = 0;
    for j in 0..n {
        let r = next(g);
        var i = 0;
        while i < 3 && r > table.probs[i] { i += 1; }
        push(line, table.chars[i]);
        if len(line) == 60 { lines += len(join(line, "")); line = []; }
    }
    return lines;
}
locus Main {
    on start {
        let f = Frequencies { chars: ["a", "c", "g", "t"], probs: [0.1, 0.2, 0.3, 0.4] };
        print(pick(f, 1000, Random { seed: 42 }));
    }
}
main { spawn Main; }
`
	for _, c := range []struct {
		math string
		fast int
	}{
		// The for loop's region: table.probs, table.chars, the
		// element, the push, the new line (`[]`, from the guest's
		// list pool); the while loop's: table.probs.
		{"", 6},
		{"std::math::sqrt", 6}, // compiled inline, no call of the guest
		{"std::math::sin", 1},  // only the while loop's region
	} {
		img := compile(t, strings.Replace(src, "MATH", c.math, 1))
		p := NewPlan(img)
		if n := FastInPlaceCount(img, p); n != c.fast {
			t.Errorf("with %q: %d in-place instructions compiled, want %d", c.math, n, c.fast)
		}
		if bin, err := Compile(img, p); err != nil || bin == nil {
			t.Fatalf("compile: %v", err)
		}
	}
}
