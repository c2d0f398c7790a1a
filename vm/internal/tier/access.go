package tier

import "github.com/hale-lang/hale/codegen/image"

// Compiled code reaches lists, structs and enums where the interpreter
// keeps them: in the wasm guest's linear memory, whose every Go pointer
// is an address. A register holds a list or a struct as its address, and
// an enum as the address of a Value holding it (a register of the
// calling interpreter frame, an element, a field or an enum's value),
// which nothing changes during a call: compiled code writes only scalars,
// and no interpreter code runs. These are the offsets of vm/value's layout (value.Layout…; a
// test in package vm keeps them equal).
const (
	valueSize   = 24
	valueKind   = 0
	valueBits   = 8
	valuePtr    = 16
	listData    = 0 // List.elems: data pointer, then length
	listLen     = 8
	listCap     = 16
	listIter    = 24 // List.iter (int32), then List.mark
	structField = 8  // Struct.fields: data pointer, then length
	structLen   = 16
	enumVals    = 8 // enumObj.vals: data pointer, then length
	enumLen     = 16
	enumBoxed   = 1 << 63
)

// memOps are the opcodes that read or write lists and structs.
var memOps = map[image.Op]bool{
	image.OpIndexList: true, image.OpSetIndexList: true, image.OpField: true, image.OpSetField: true,
	image.OpLenList: true, image.OpIterList: true, image.OpForList: true, image.OpIterEnd: true,
	image.OpJNeVariant: true, image.OpEnumField: true,
}

// usesMemory reports whether f has an instruction that reads or writes a
// list or a struct, or makes or loads an enum (alloc.go).
func usesMemory(img *image.Image, f *image.Func) bool {
	for _, in := range f.Code {
		if memOps[in.Op] || in.Op == image.OpNewEnum ||
			in.Op == image.OpLoadK && img.Consts[in.B].Kind == image.KindEnum {
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
// register's type, the variants an enum register may hold (a bit per
// variant; all set when nothing is known), and the registers of the for
// loops active, innermost last.
type flowState struct {
	types    []image.TypeRef
	variants []uint64
	iters    []int32
}

// typeOfKind returns type t of img when it is of kind k (a register's
// type in the analyses: a list, a struct…), else nil.
func typeOfKind(img *image.Image, t image.TypeRef, k image.Kind) *image.Type {
	if t < 0 || int(t) >= len(img.Types) || img.Types[t].Kind != k {
		return nil
	}
	return &img.Types[t]
}

// anyVariant is the variant set of a register nothing is known about.
const anyVariant = ^uint64(0)

// access finds, for each instruction of f that reads or writes a list
// element or a struct field, the kind of that element or field (0 for
// every other instruction, and for the values of an enum's variant), by following register types from the
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
	start := &flowState{types: make([]image.TypeRef, regs), variants: make([]uint64, regs)}
	for r := range start.types {
		start.types[r] = typeUnknown
		start.variants[r] = anyVariant
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
		case image.KindList, image.KindStruct, image.KindEnum:
			return tt.Kind, !store
		}
		return 0, false
	}
	for len(work) > 0 {
		pc := work[len(work)-1]
		work = work[:len(work)-1]
		queued[pc] = false
		st := &flowState{types: append([]image.TypeRef(nil), in[pc].types...),
			variants: append([]uint64(nil), in[pc].variants...), iters: append([]int32(nil), in[pc].iters...)}
		t := st.types
		ins := f.Code[pc]
		// The variant known in a register is forgotten when it is
		// written (Move below copies it).
		moved := anyVariant
		if ins.Op == image.OpMove {
			moved = st.variants[ins.B]
		}
		if w := writes(img, ins); w >= 0 {
			for r := w; r < min(int32(regs), w+writesN(img, ins)); r++ {
				st.variants[r] = anyVariant
			}
		}
		list := func(r int32) *image.Type { return typeOfKind(img, t[r], image.KindList) }
		strct := func(r int32) *image.Type { return typeOfKind(img, t[r], image.KindStruct) }
		ok := true
		switch ins.Op {
		case image.OpMove:
			t[ins.A] = t[ins.B]
			st.variants[ins.A] = moved
		case image.OpIndexList, image.OpForList:
			l := list(ins.B)
			if l == nil {
				return nil, false
			}
			kinds[pc], ok = elemKind(l.Elem, false)
			t[ins.A] = l.Elem
			if ins.Op == image.OpForList {
				t[ins.B+1] = typeScalar
				st.variants[ins.B+1] = anyVariant
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
		case image.OpJNeVariant:
			if e := typeOf(t[ins.A]); e == nil || e.Kind != image.KindEnum {
				return nil, false
			}
		case image.OpEnumField:
			// Value C has one type in every variant the register may
			// hold (jne.variant narrows them) that has one, or the
			// field is not compiled.
			e := typeOf(t[ins.B])
			if e == nil || e.Kind != image.KindEnum || ins.C < 0 {
				return nil, false
			}
			ft, one := enumFieldType(e, st.variants[ins.B], ins.C)
			if !one {
				return nil, false
			}
			kinds[pc], ok = elemKind(ft, false)
			t[ins.A] = ft
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
			if isEnum(img, callee.Result) {
				t[ins.A] = callee.Result
			}
		case image.OpNewEnum:
			t[ins.A] = img.Consts[ins.C].Type
		case image.OpLoadK:
			t[ins.A] = typeScalar
			if k := img.Consts[ins.B]; k.Kind == image.KindEnum {
				t[ins.A] = k.Type
			}
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
			variants := st.variants
			if ins.Op == image.OpJNeVariant && int(ins.C) != pc+1 && ins.B >= 0 && ins.B < 64 {
				variants = append([]uint64(nil), st.variants...)
				if s == pc+1 {
					variants[ins.A] &= 1 << ins.B // not taken: R[A] holds variant B
				} else {
					variants[ins.A] &^= 1 << ins.B // taken: any other
				}
			}
			changed := false
			if in[s] == nil {
				in[s] = &flowState{types: append([]image.TypeRef(nil), t...),
					variants: append([]uint64(nil), variants...), iters: append([]int32(nil), st.iters...)}
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
					if u := old.variants[r] | variants[r]; u != old.variants[r] {
						old.variants[r] = u
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

// writes returns the first register instruction in writes, or -1, and
// writesN how many from there (a call may clobber its callee's whole
// frame; a for loop writes its element and its index).
func writes(img *image.Image, in image.Instr) int32 {
	switch in.Op {
	case image.OpNop, image.OpJump, image.OpJumpT, image.OpJumpF,
		image.OpJLtInt, image.OpJLeInt, image.OpJEqInt, image.OpJNeInt,
		image.OpJLtIntK, image.OpJLeIntK, image.OpJGtIntK, image.OpJGeIntK,
		image.OpJEqIntK, image.OpJNeIntK, image.OpJNeVariant,
		image.OpSetIndexList, image.OpSetField, image.OpIterEnd, image.OpRet, image.OpRetVoid,
		image.OpPublish, image.OpPublishAfter:
		return -1
	case image.OpIterList:
		return in.A + 1
	}
	return in.A
}

func writesN(img *image.Image, in image.Instr) int32 {
	switch in.Op {
	case image.OpCall:
		return int32(max(1, img.Funcs[in.B].FrameSize))
	}
	return 1
}

// enumFieldType is the type of value c of enum e in the variants a
// register may hold (bit i of variants for variant i; every variant from
// the 64th on is assumed possible), among those that have a value c. one
// is false when those variants disagree: the value is then not compiled.
func enumFieldType(e *image.Type, variants uint64, c int32) (ft image.TypeRef, one bool) {
	ft = typeUnknown
	for vi, v := range e.Variants {
		if (vi >= 64 || variants&(1<<vi) != 0) && int(c) < len(v.Fields) {
			if ft != typeUnknown && ft != v.Fields[c] {
				return typeUnknown, false
			}
			ft = v.Fields[c]
		}
	}
	return ft, true
}
