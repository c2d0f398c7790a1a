package tier

import "github.com/hale-lang/hale/codegen/image"

// A region's analysis starts at its loop header knowing the declared type
// of every slot (a parameter or a local: what it holds is always of that
// type), but not what the function's temporaries hold there. Codegen
// keeps some values of a loop in temporaries, above all the list of
// `for x in xs`, which for.list reads at the loop's end: without its type
// that instruction would leave the region at every step. tempTypes finds
// the temporaries' types at each instruction from the whole function, so
// the region knows them at its header.

// tempTypes returns, for each pc of f, the types its temporaries (the
// registers from f.NumSlots on; index r-f.NumSlots) hold before the
// instruction on every path from the function's entry: the type, when
// every path last wrote a value of that one type (as far as this
// analysis tells: most instructions' results are left unknown), else
// typeConflict. A pc never reached is nil. A try's catch target is
// reached from anywhere inside the try, so every temporary is unknown
// there. It takes time in the size of f's code and frame.
func tempTypes(img *image.Image, f *image.Func) [][]image.TypeRef {
	n, nt := len(f.Code), f.FrameSize-f.NumSlots
	if n == 0 || nt <= 0 {
		return nil
	}
	typeOf := func(t image.TypeRef) *image.Type {
		if t < 0 || int(t) >= len(img.Types) {
			return nil
		}
		return &img.Types[t]
	}
	var state []image.TypeRef // the locus's instance slots, for loadstate
	if f.Locus >= 0 && f.Locus < len(img.Loci) {
		l := &img.Loci[f.Locus]
		state = make([]image.TypeRef, l.NumSlots)
		for i := range state {
			state[i] = typeConflict
		}
		for _, vs := range [][]image.Var{l.Params, l.State} {
			for _, v := range vs {
				if v.Slot >= 0 && v.Slot < len(state) {
					state[v.Slot] = v.Type
				}
			}
		}
	}
	conflict := func() []image.TypeRef {
		c := make([]image.TypeRef, nt)
		for i := range c {
			c[i] = typeConflict
		}
		return c
	}
	at := make([][]image.TypeRef, n)
	at[0] = conflict() // a temporary holds nothing yet: of no type
	full := make([]image.TypeRef, f.FrameSize)
	for i := range f.NumSlots {
		full[i] = typeConflict
		if i < len(f.Locals) {
			full[i] = f.Locals[i].Type
		}
	}
	variants := make([]uint64, f.FrameSize)
	for i := range variants {
		variants[i] = anyVariant
	}
	work, queued := []int{0}, make([]bool, n)
	queued[0] = true
	// merge joins ts into the types before pc, queueing pc when they
	// change.
	merge := func(pc int, ts []image.TypeRef) {
		if pc < 0 || pc >= n {
			return
		}
		changed := false
		if at[pc] == nil {
			at[pc], changed = append([]image.TypeRef(nil), ts...), true
		} else {
			for i, t := range ts {
				if at[pc][i] != t && at[pc][i] != typeConflict {
					at[pc][i], changed = typeConflict, true
				}
			}
		}
		if changed && !queued[pc] {
			queued[pc] = true
			work = append(work, pc)
		}
	}
	out := make([]image.TypeRef, nt)
	for len(work) > 0 {
		pc := work[len(work)-1]
		work = work[:len(work)-1]
		queued[pc] = false
		in := f.Code[pc]
		copy(full[f.NumSlots:], at[pc])
		copy(out, at[pc])
		set := func(r int32, t image.TypeRef) {
			if int(r) >= f.NumSlots && int(r) < f.FrameSize {
				if typeOf(t) == nil || t == image.TVoid {
					t = typeConflict
				}
				out[int(r)-f.NumSlots] = t
			}
		}
		w := image.Writes(img, in)
		if in.Op == image.OpCall {
			// The callee's frame starts at A, and the frames of the
			// calls it makes above it.
			w.N = int32(f.FrameSize) - w.Base
		}
		for r := w.Base; r < w.Base+w.N; r++ {
			set(r, typeConflict)
		}
		switch in.Op {
		case image.OpCall:
			if in.B >= 0 && int(in.B) < len(img.Funcs) {
				set(in.A, img.Funcs[in.B].Result)
			}
		case image.OpIterList:
			set(in.A+1, image.TInt)
		case image.OpForList:
			// The element, and the index it advances (an int).
			if tt := typeOf(full[in.B]); tt != nil && tt.Kind == image.KindList {
				set(in.A, tt.Elem)
			}
			set(in.B+1, image.TInt)
		case image.OpForMap, image.OpForMapVal:
			set(in.B+1, typeConflict)
		case image.OpLoadState:
			if in.B >= 0 && int(in.B) < len(state) {
				set(in.A, state[in.B])
			}
		case image.OpLoadInt, image.OpAddInt, image.OpSubInt, image.OpMulInt, image.OpDivInt,
			image.OpRemInt, image.OpAddIntK, image.OpAndInt, image.OpOrInt, image.OpXorInt,
			image.OpShlInt, image.OpShrInt:
			set(in.A, image.TInt)
		default:
			if w.N == 1 && w.Base == in.A {
				set(in.A, inPlaceType(img, f, in, full, variants, typeOf))
			}
		}
		if in.Op == image.OpTry {
			// The catch target: reached from any instruction before the
			// try's end, its temporaries unknown; R[A] the error.
			c := conflict()
			if int(in.A) >= f.NumSlots && int(in.A) < f.FrameSize && in.B >= 0 && int(in.B) < len(img.Consts) {
				if t := img.Consts[in.B].Type; typeOf(t) != nil {
					c[int(in.A)-f.NumSlots] = t
				}
			}
			merge(int(in.C), c)
			merge(pc+1, out)
			continue
		}
		if !in.Op.Terminal() {
			merge(pc+1, out)
		}
		if in.Op.IsJump() {
			merge(int(in.C), out)
		}
	}
	return at
}
