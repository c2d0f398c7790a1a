package tier

import (
	"testing"

	"github.com/hale-lang/hale/codegen/image"
)

// TestForInRegion: the loop of `for x in xs` over instance state in a
// handler is a region whose for.list compiles (codegen keeps the list in
// a temporary, whose type the region learns from tempTypes): before, it
// left the region at every step, and after 32 such calls the loop was
// interpreted.
func TestForInRegion(t *testing.T) {
	img := compile(t, `
locus Main {
    var items: [int] = [];
    on start {
        for i in 0..100 { push(items, i); }
        var s = 0;
        for x in items { s += x; }
        print(s);
    }
}
main { spawn Main; }
`)
	p := NewPlan(img)
	found := false
	for _, r := range p.Regions {
		f := &img.Funcs[r.Func]
		if f.Code[r.End].Op != image.OpForList {
			continue
		}
		found = true
		info, ok := analyzeRegion(img, p, r)
		if !ok {
			t.Fatalf("the for loop's region (pc %d-%d) does not analyse", r.Header, r.End)
		}
		for i, e := range info.exit {
			if e {
				t.Errorf("pc %d (%s) leaves the region", r.Header+i, f.Code[r.Header+i].Op)
			}
		}
	}
	if !found {
		t.Fatal("no region ends with for.list")
	}
}

// tempImage is an image whose function 0 has the code given: slot 0 an
// int, temporaries 1 to 3; function 1 returns a [float] (type 6), and the
// constants are an int (0) and an error's Option (1, of enum type 7).
func tempImage(code ...image.Instr) (*image.Image, *image.Func) {
	img := &image.Image{Types: []image.Type{
		{Kind: image.KindVoid}, {Kind: image.KindInt}, {Kind: image.KindFloat}, {Kind: image.KindBool},
		{Kind: image.KindString}, {Kind: image.KindBytes},
		{Kind: image.KindList, Elem: image.TFloat}, {Kind: image.KindEnum},
	}}
	img.Consts = []image.Const{{Kind: image.KindInt, Int: 1}, {Kind: image.KindEnum, Type: 7}}
	img.Funcs = []image.Func{{
		Kind: image.FuncFn, Locus: -1, NumParams: 1, NumSlots: 1, FrameSize: 4, Result: image.TVoid,
		Locals: []image.Local{{Name: "n", Type: image.TInt}},
		Code:   code,
	}, {
		Kind: image.FuncFn, Locus: -1, FrameSize: 1, Result: 6,
		Code: []image.Instr{{Op: image.OpNewList, A: 0}, {Op: image.OpRet}},
	}}
	return img, &img.Funcs[0]
}

// TestTempTypes: what the analysis knows of the temporaries at a pc is
// what every path to it wrote last; paths that disagree, a call's frame,
// and a try's catch target leave a temporary unknown.
func TestTempTypes(t *testing.T) {
	const floats, option = image.TypeRef(6), image.TypeRef(7)
	unknown := typeConflict
	for _, c := range []struct {
		name string
		code []image.Instr
		pc   int
		want [3]image.TypeRef // of temporaries 1 to 3
	}{
		{"entry", []image.Instr{{Op: image.OpRetVoid}}, 0, [3]image.TypeRef{unknown, unknown, unknown}},
		{"loads", []image.Instr{
			{Op: image.OpLoadInt, A: 1, B: 3},
			{Op: image.OpLoadK, A: 2, B: 0},
			{Op: image.OpRetVoid},
		}, 2, [3]image.TypeRef{image.TInt, image.TInt, unknown}},
		{"a move of a slot", []image.Instr{
			{Op: image.OpMove, A: 2, B: 0},
			{Op: image.OpRetVoid},
		}, 1, [3]image.TypeRef{unknown, image.TInt, unknown}},
		{"paths that agree", []image.Instr{
			{Op: image.OpJumpT, A: 0, C: 3},
			{Op: image.OpLoadInt, A: 1, B: 1},
			{Op: image.OpJump, C: 4},
			{Op: image.OpLoadInt, A: 1, B: 2},
			{Op: image.OpRetVoid},
		}, 4, [3]image.TypeRef{image.TInt, unknown, unknown}},
		{"paths that disagree", []image.Instr{
			{Op: image.OpJumpT, A: 0, C: 3},
			{Op: image.OpLoadInt, A: 1, B: 1},
			{Op: image.OpJump, C: 4},
			{Op: image.OpLoadK, A: 1, B: 1}, // an enum
			{Op: image.OpRetVoid},
		}, 4, [3]image.TypeRef{unknown, unknown, unknown}},
		{"a path that does not write", []image.Instr{
			{Op: image.OpJumpT, A: 0, C: 2},
			{Op: image.OpLoadInt, A: 1, B: 1},
			{Op: image.OpRetVoid},
		}, 2, [3]image.TypeRef{unknown, unknown, unknown}},
		{"a call's frame and result", []image.Instr{
			{Op: image.OpLoadInt, A: 3, B: 1},
			{Op: image.OpCall, A: 1, B: 1},
			{Op: image.OpRetVoid},
		}, 2, [3]image.TypeRef{floats, unknown, unknown}},
		{"a for loop over a list", []image.Instr{
			{Op: image.OpCall, A: 1, B: 1},
			{Op: image.OpIterList, A: 1},
			{Op: image.OpJump, C: 4},
			{Op: image.OpNop}, // the loop's header
			{Op: image.OpForList, A: 3, B: 1, C: 3},
			{Op: image.OpRetVoid},
		}, 3, [3]image.TypeRef{floats, image.TInt, image.TFloat}},
		{"a catch target", []image.Instr{
			{Op: image.OpLoadInt, A: 2, B: 1},
			{Op: image.OpTry, A: 1, B: 1, C: 3},
			{Op: image.OpRetVoid},
			{Op: image.OpRetVoid},
		}, 3, [3]image.TypeRef{option, unknown, unknown}},
		{"a loop that changes a type", []image.Instr{
			{Op: image.OpLoadInt, A: 1, B: 1},
			{Op: image.OpJumpT, A: 0, C: 4}, // the header
			{Op: image.OpLoadK, A: 1, B: 1},
			{Op: image.OpJump, C: 1},
			{Op: image.OpRetVoid},
		}, 1, [3]image.TypeRef{unknown, unknown, unknown}},
	} {
		t.Run(c.name, func(t *testing.T) {
			img, f := tempImage(c.code...)
			got := tempTypes(img, f)
			if len(got[c.pc]) != 3 || [3]image.TypeRef(got[c.pc]) != c.want {
				t.Fatalf("temporaries at pc %d: %v, want %v", c.pc, got[c.pc], c.want)
			}
		})
	}
}
