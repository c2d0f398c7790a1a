package tier

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/hale-lang/hale/codegen/image"
)

// regionSrc has loops in a handler and in a function that is not
// compiled whole, with side exits (strings, push, print, a struct
// literal, a return, a for loop over a list), nested, reading and
// writing lists, structs and enums.
const regionSrc = `
type P { a: int, b: float }
enum E { A(int), B(float), C }
fn walk(xs: [int], p: P, e: E) -> int {
    var s = 0;
    var t = "";
    for i in 0..len(xs) {
        xs[i] = xs[i] + i;
        p.a = p.a + xs[i];
        if i == 7 { t = t + "x"; push(xs, i); }
        match e { E::A(v) => { s += v; }, E::B(f) => { p.b = p.b + f; }, E::C => { s -= 1; } }
        for y in xs { s += y; }
        if s > 1000000 { return s; }
    }
    return s + len(t);
}
locus Main {
    on start {
        var xs: [int] = [1, 2, 3];
        var p = P { a: 1, b: 0.5 };
        var k = 0;
        while k < 100 {
            var j = 0;
            while j < k { xs[j % 3] = xs[j % 3] * 2 + j; j += 1; }
            if k % 10 == 0 { print(k); p = P { a: k, b: 1.0 }; }
            k += 1;
        }
        print(walk(xs, p, E::A(3)));
    }
}
main { spawn Main; }
`

// inPlaceSrc has loops whose regions run instructions in place: string
// elements, concatenation, push onto lists the loop reads, struct and
// list literals, join and slice, a temporary that holds an int on one
// path and a string on another (a dirty register).
const inPlaceSrc = `
type Pt { a: int, b: float }
type Table { chars: [string], probs: [float] }
fn pick(t: Table, r: float) -> int {
    var i = 0;
    while i < len(t.probs) - 1 && r >= t.probs[i] { i += 1; }
    return i;
}
fn line(t: Table, n: int) -> string {
    var out: [string] = [];
    var ps: [Pt] = [];
    var r = 0.0;
    for j in 0..n {
        r = r + 0.37;
        if r >= 1.0 { r = r - 1.0; }
        push(out, t.chars[pick(t, r)]);
        ps = [Pt { a: j, b: r }];
        push(ps, Pt { a: ps[0].a + len(out), b: 0.5 });
        if len(out) % 7 == 0 { push(out, slice(join(out, ""), 0, 2)); }
    }
    return join(out, "") + str(len(ps));
}
locus Main {
    on start {
        let t = Table { chars: ["a", "c", "g", "t"], probs: [0.3, 0.5, 0.8, 1.0] };
        var s = "";
        var xs: [int] = [1, 2];
        for k in 0..4 { s = s + line(t, 40); push(xs, xs[k] + len(s)); }
        print(s);
        print(xs);
    }
}
main { spawn Main; }
`

// TestInPlacePlanned: the loops of inPlaceSrc are regions that run
// instructions in place, and compile.
func TestInPlacePlanned(t *testing.T) {
	img := compile(t, inPlaceSrc)
	p := NewPlan(img)
	line := funcIndex(t, img, "line")
	found := false
	for _, r := range p.Regions {
		if info, ok := analyzeRegion(img, p, r); ok && r.Func == line && slices.Contains(info.inplace, true) && len(info.dirty) > 0 &&
			!slices.Contains(info.exit, true) {
			found = true
		}
	}
	if !found || InPlaceCount(img, p) == 0 {
		t.Fatalf("line's loop is no region running instructions in place with a dirty register and no exit (%d regions)", len(p.Regions))
	}
	if _, err := Compile(img, p); err != nil {
		t.Fatal(err)
	}
}

// FuzzCompile compiles the tier of every image Unmarshal accepts: the
// module must be one wazero accepts (a plan the compiler cannot compile,
// or a module that does not validate, would silently leave the program
// to the interpreter), and neither step may panic.
func FuzzCompile(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "..", "codegen", "testdata", "*.hl"))
	// The Benchmarks Game ports: functions over lists of floats and ints
	// and lists of structs.
	bench, _ := filepath.Glob(filepath.Join("..", "..", "..", "cmd", "hale", "cli", "testdata", "bench", "*.hl"))
	paths = append(paths, bench...)
	srcs := []string{fibSrc, regionSrc, inPlaceSrc}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		srcs = append(srcs, string(b))
	}
	for _, src := range srcs {
		data, err := compile(f, src).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := image.Unmarshal(data)
		if err != nil {
			return
		}
		p := NewPlan(img)
		bin, err := Compile(img, p)
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		if bin == nil {
			if p.HasEntries() {
				t.Fatal("a plan with entries compiled to nothing")
			}
			return
		}
		mod, err := rt.CompileModule(ctx, bin)
		if err != nil {
			t.Fatalf("the module does not validate: %v", err)
		}
		mod.Close(ctx)
	})
}

// TestFastaRegion: fasta's random_fasta loops are regions with no exit
// inside (their strings, push and join run in place), and the move of
// the generator into next_random's window is compiled (moveToCall).
func TestFastaRegion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "cmd", "hale", "cli", "testdata", "bench", "fasta.hl"))
	if err != nil {
		t.Fatal(err)
	}
	img := compile(t, string(b))
	p := NewPlan(img)
	fi, next := funcIndex(t, img, "random_fasta"), funcIndex(t, img, "next_random")
	code := img.Funcs[fi].Code
	moves := 0
	for _, r := range p.Regions {
		if r.Func != fi {
			continue
		}
		info, ok := analyzeRegion(img, p, r)
		if !ok {
			t.Fatalf("region %v does not compile", r)
		}
		for pc := r.Header; pc <= r.End; pc++ {
			in := code[pc]
			if in.Op == image.OpPush && !info.inplace[pc-r.Header] {
				t.Errorf("region %v: push at %d does not run in place", r, pc)
			}
			if in.Op == image.OpMove && pc+2 <= r.End && code[pc+2].Op == image.OpCall && code[pc+2].B == int32(next) && code[pc+2].A == in.A {
				moves++
				if info.inplace[pc-r.Header] || info.exit[pc-r.Header] {
					t.Errorf("region %v: the move at %d into next_random's window is not compiled", r, pc)
				}
			}
			if info.exit[pc-r.Header] && in.Op != image.OpForList { // the for loop over table.probs (a temporary) exits
				t.Errorf("region %v: exit at %d (%v)", r, pc, in.Op)
			}
		}
	}
	if moves == 0 {
		t.Fatal("no move into next_random's window in a region")
	}
}
