package tier

import "github.com/hale-lang/hale/codegen/image"

// Compiled code reaches lists and structs where the interpreter keeps
// them: in the wasm guest's linear memory, whose every Go pointer is an
// address. These are the offsets of vm/value's layout (value.Layout…; a
// test in package vm keeps them equal).
const (
	valueSize   = 24
	valueKind   = 0
	valueBits   = 8
	valuePtr    = 16
	listData    = 0 // List.elems: data pointer, then length
	listLen     = 8
	listIter    = 24 // List.iter (int32), then List.mark
	structField = 8  // Struct.fields: data pointer, then length
	structLen   = 16
)

// memOps are the opcodes that read or write lists and structs.
var memOps = map[image.Op]bool{
	image.OpIndexList: true, image.OpSetIndexList: true, image.OpField: true, image.OpSetField: true,
	image.OpLenList: true, image.OpIterList: true, image.OpForList: true, image.OpIterEnd: true,
}

// usesMemory reports whether f has an instruction that reads or writes a
// list or a struct.
func usesMemory(f *image.Func) bool {
	for _, in := range f.Code {
		if memOps[in.Op] {
			return true
		}
	}
	return false
}

// Register types in the analysis: an image.TypeRef, or one of these.
const (
	typeUnknown  image.TypeRef = -1 // never written on any path
	typeConflict image.TypeRef = -2 // written with different types on different paths
	typeScalar   image.TypeRef = image.TVoid
)

// maxAccessWork bounds the analysis (instructions × registers): a larger
// function that touches lists or structs is left to the interpreter.
const maxAccessWork = 1 << 20

// flowState is what the analysis knows before an instruction: each
// register's type and the registers of the for loops active, innermost
// last.
type flowState struct {
	types []image.TypeRef
	iters []int32
}

// access finds, for each instruction of f that reads or writes a list
// element or a struct field, the kind of that element or field (0 for
// every other instruction), by following register types from the
// parameters along every path. It reports false when an access is not
// compiled: a container whose type differs between paths, an element
// that is not an int, a float, a bool, a list or a struct, a write of
// anything but an int, a float or a bool (compiled code never stores a
// pointer: the guest's garbage collector would not see it), or for loops
// that do not nest (which the interpreter's iter.end would end
// differently).
func access(img *image.Image, f *image.Func) ([]image.Kind, bool) {
	n, regs := len(f.Code), f.FrameSize
	if n == 0 || n*regs > maxAccessWork || f.NumParams > len(f.Locals) {
		return nil, false
	}
	kinds := make([]image.Kind, n)
	in := make([]*flowState, n)
	start := &flowState{types: make([]image.TypeRef, regs)}
	for r := range start.types {
		start.types[r] = typeUnknown
	}
	for p := range f.NumParams {
		start.types[p] = f.Locals[p].Type
	}
	in[0] = start
	work := []int{0}
	queued := make([]bool, n)
	queued[0] = true
	typeOf := func(t image.TypeRef) *image.Type {
		if t < 0 || int(t) >= len(img.Types) {
			return nil
		}
		return &img.Types[t]
	}
	elemKind := func(t image.TypeRef, store bool) (image.Kind, bool) {
		tt := typeOf(t)
		if tt == nil {
			return 0, false
		}
		switch tt.Kind {
		case image.KindInt, image.KindFloat, image.KindBool:
			return tt.Kind, true
		case image.KindList, image.KindStruct:
			return tt.Kind, !store
		}
		return 0, false
	}
	for len(work) > 0 {
		pc := work[len(work)-1]
		work = work[:len(work)-1]
		queued[pc] = false
		st := &flowState{types: append([]image.TypeRef(nil), in[pc].types...), iters: append([]int32(nil), in[pc].iters...)}
		t := st.types
		ins := f.Code[pc]
		list := func(r int32) *image.Type {
			if tt := typeOf(t[r]); tt != nil && tt.Kind == image.KindList {
				return tt
			}
			return nil
		}
		strct := func(r int32) *image.Type {
			if tt := typeOf(t[r]); tt != nil && tt.Kind == image.KindStruct {
				return tt
			}
			return nil
		}
		ok := true
		switch ins.Op {
		case image.OpMove:
			t[ins.A] = t[ins.B]
		case image.OpIndexList, image.OpForList:
			l := list(ins.B)
			if l == nil {
				return nil, false
			}
			kinds[pc], ok = elemKind(l.Elem, false)
			t[ins.A] = l.Elem
			if ins.Op == image.OpForList {
				t[ins.B+1] = typeScalar
			}
		case image.OpSetIndexList:
			l := list(ins.A)
			if l == nil {
				return nil, false
			}
			kinds[pc], ok = elemKind(l.Elem, true)
		case image.OpField, image.OpSetField:
			r, fi := ins.B, ins.C
			if ins.Op == image.OpSetField {
				r, fi = ins.A, ins.B
			}
			s := strct(r)
			if s == nil || fi < 0 || int(fi) >= len(s.Fields) {
				return nil, false
			}
			kinds[pc], ok = elemKind(s.Fields[fi].Type, ins.Op == image.OpSetField)
			if ins.Op == image.OpField {
				t[ins.A] = s.Fields[fi].Type
			}
		case image.OpLenList:
			if list(ins.B) == nil {
				return nil, false
			}
			t[ins.A] = typeScalar
		case image.OpIterList:
			if list(ins.A) == nil {
				return nil, false
			}
			st.iters = append(st.iters, ins.A)
			t[ins.A+1] = typeScalar
		case image.OpIterEnd:
			if list(ins.A) == nil || len(st.iters) == 0 || st.iters[len(st.iters)-1] != ins.A {
				return nil, false
			}
			st.iters = st.iters[:len(st.iters)-1]
		case image.OpRet, image.OpRetVoid:
			if len(st.iters) != 0 {
				return nil, false
			}
		case image.OpCall:
			callee := &img.Funcs[ins.B]
			for r := int(ins.A); r < min(regs, int(ins.A)+callee.FrameSize); r++ {
				t[r] = typeUnknown
			}
			t[ins.A] = typeScalar
		case image.OpNop, image.OpJump, image.OpJumpT, image.OpJumpF,
			image.OpJLtInt, image.OpJLeInt, image.OpJEqInt, image.OpJNeInt,
			image.OpJLtIntK, image.OpJLeIntK, image.OpJGtIntK, image.OpJGeIntK,
			image.OpJEqIntK, image.OpJNeIntK:
		default:
			// Every other compiled instruction writes a scalar to R[A].
			t[ins.A] = typeScalar
		}
		if !ok {
			return nil, false
		}
		// Successors.
		var succ [2]int
		ns := 0
		switch {
		case ins.Op == image.OpRet || ins.Op == image.OpRetVoid:
		case ins.Op == image.OpJump:
			succ[0], ns = int(ins.C), 1
		case isJump(ins.Op) || ins.Op == image.OpForList:
			succ[0], succ[1], ns = int(ins.C), pc+1, 2
		default:
			succ[0], ns = pc+1, 1
		}
		for _, s := range succ[:ns] {
			if s < 0 || s >= n {
				return nil, false
			}
			changed := false
			if in[s] == nil {
				in[s] = &flowState{types: append([]image.TypeRef(nil), t...), iters: append([]int32(nil), st.iters...)}
				changed = true
			} else {
				old := in[s]
				if len(old.iters) != len(st.iters) {
					return nil, false
				}
				for i := range old.iters {
					if old.iters[i] != st.iters[i] {
						return nil, false
					}
				}
				for r := range old.types {
					if old.types[r] != t[r] && old.types[r] != typeConflict {
						old.types[r] = typeConflict
						changed = true
					}
				}
			}
			if changed && !queued[s] {
				queued[s] = true
				work = append(work, s)
			}
		}
	}
	return kinds, true
}
