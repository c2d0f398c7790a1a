package tier

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hale-lang/hale/codegen/image"
)

// reaches is the definition inCycles implements, by brute force: fn can
// reach itself through calls between kept functions.
func reaches(keep []bool, callees [][]int32, fn int32) bool {
	seen := make([]bool, len(keep))
	work := []int32{fn}
	for len(work) > 0 {
		f := work[len(work)-1]
		work = work[:len(work)-1]
		for _, c := range callees[f] {
			if !keep[c] {
				continue
			}
			if c == fn {
				return true
			}
			if !seen[c] {
				seen[c] = true
				work = append(work, c)
			}
		}
	}
	return false
}

// TestInCyclesMatchesReachability compares inCycles with the brute-force
// definition on random call graphs of every density.
func TestInCyclesMatchesReachability(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 2000 {
		n := 1 + rng.IntN(12)
		keep := make([]bool, n)
		callees := make([][]int32, n)
		for i := range n {
			keep[i] = rng.IntN(5) != 0
			for range rng.IntN(4) {
				callees[i] = append(callees[i], int32(rng.IntN(n)))
			}
		}
		got := inCycles(keep, callees)
		for i := range n {
			want := keep[i] && reaches(keep, callees, int32(i))
			if got[i] != want {
				t.Fatalf("round %d: function %d of %v (kept %v): in a cycle %v, want %v", round, i, callees, keep, got[i], want)
			}
		}
	}
}

// chainImage is an image of n scalar functions, each calling the next,
// the last one looping.
func chainImage(n int) *image.Image {
	img := &image.Image{Types: []image.Type{{Kind: image.KindVoid}, {Kind: image.KindInt}}}
	for i := range n {
		f := image.Func{Kind: image.FuncFn, Result: image.TInt, FrameSize: 1}
		if i+1 < n {
			f.Code = []image.Instr{{Op: image.OpCall, A: 0, B: int32(i + 1)}, {Op: image.OpRet}}
		} else {
			f.Code = []image.Instr{{Op: image.OpJump, C: 0}}
		}
		img.Funcs = append(img.Funcs, f)
	}
	return img
}

// TestPlanLinear: planning a chain of 200,000 functions takes time linear
// in their number (the plan used to walk the call graph once per
// function, hours for the million functions of a huge source), and every
// function of the chain is an entry, since it reaches the loop.
func TestPlanLinear(t *testing.T) {
	img := chainImage(200_000)
	start := time.Now()
	p := NewPlan(img)
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("NewPlan took %v", d)
	}
	for i := range img.Funcs {
		if !p.Compiled[i] || !p.Entry[i] {
			t.Fatalf("function %d: compiled %v entry %v, want both", i, p.Compiled[i], p.Entry[i])
		}
	}
}

// TestRegions checks which loops of regionSrc are regions, and where
// they leave.
func TestRegions(t *testing.T) {
	img := compile(t, regionSrc)
	p := NewPlan(img)
	byFunc := map[string]int{}
	for _, r := range p.Regions {
		byFunc[img.Funcs[r.Func].Name]++
		info, ok := analyzeRegion(img, p, r)
		if !ok || info.exit[0] {
			t.Fatalf("region %+v does not analyse", r)
		}
		// Every exit instruction has no compiled form in a region, or
		// operands whose types do not allow one.
		f := &img.Funcs[r.Func]
		for i, e := range info.exit {
			if in := f.Code[r.Header+i]; e && regionOp(img, p, in) && in.Op != image.OpMove && in.Op != image.OpIndexList &&
				in.Op != image.OpField && in.Op != image.OpEnumField && in.Op != image.OpCall && in.Op != image.OpForList {
				t.Errorf("%s pc %d (%s) is an exit", f.Name, r.Header+i, in.Op)
			}
		}
	}
	if byFunc["Main.on start"] < 2 || byFunc["walk"] < 1 {
		t.Fatalf("regions by function: %v; want the handler's two loops and walk's outer one", byFunc)
	}
	if _, err := Compile(img, p); err != nil {
		t.Fatal(err)
	}
}
