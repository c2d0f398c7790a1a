package image

// This file says which registers each instruction reads and writes, and
// which registers of a frame are live after each instruction. The memory
// limit's measure counts the values a handler holds as the registers live
// where each of its frames stands (vm/memory.go), not every slot the
// stack ever used, so that what a frame holds depends on the program
// alone: whether an earlier call ran interpreted or compiled, and what it
// left in the slots above its caller, does not change it.

// Window is the registers Base … Base+N-1 of a frame; N is 0 for none.
type Window struct{ Base, N int32 }

// Reads appends to dst the registers in reads and returns it. A window
// whose length depends on the image (a call's arguments, a struct's
// fields) is sized from img, as the validator sizes it; in must be valid.
func Reads(img *Image, in Instr, dst []Window) []Window {
	one := func(r int32) { dst = append(dst, Window{r, 1}) }
	switch in.Op {
	case OpNop, OpLoadK, OpLoadInt, OpLoadState, OpEmptyMap, OpJump,
		OpRetVoid, OpTry, OpTryDrop:
	case OpStoreState:
		one(in.B)
	case OpJumpT, OpJumpF, OpJLtIntK, OpJLeIntK, OpJGtIntK, OpJGeIntK,
		OpJEqIntK, OpJNeIntK, OpJNeStrK, OpJNeVariant, OpRet, OpTryEnd,
		OpIterList, OpIterMap:
		one(in.A)
	case OpIterEnd:
		dst = append(dst, Window{in.A, 2})
	case OpJLtInt, OpJLeInt, OpJEqInt, OpJNeInt, OpLoopRange:
		one(in.A)
		one(in.B)
	case OpSetIndexList, OpSetIndexMap:
		one(in.A)
		one(in.B)
		one(in.C)
	case OpSetField:
		one(in.A)
		one(in.C)
	case OpPush:
		one(in.A)
		one(in.B)
	case OpForList, OpForMap, OpForMapVal:
		dst = append(dst, Window{in.B, 2})
	case OpCall:
		dst = append(dst, Window{in.A, int32(img.Funcs[in.B].NumParams)})
	case OpCallB:
		dst = append(dst, Window{in.C, int32(Builtin(in.B).Arity())})
	case OpCallPrim:
		dst = append(dst, Window{in.C, int32(len(img.Prims[in.B].Params))})
	case OpNewList:
		dst = append(dst, Window{in.B, in.C})
	case OpNewMap:
		dst = append(dst, Window{in.B, 2 * in.C})
	case OpNewStruct:
		dst = append(dst, Window{in.B, int32(len(img.Types[in.C].Fields))})
	case OpNewEnum:
		k := &img.Consts[in.C]
		dst = append(dst, Window{in.B, int32(len(img.Types[k.Type].Variants[k.Variant].Fields))})
	case OpFormat:
		n, _ := FormatParts(img.Consts[in.C])
		dst = append(dst, Window{in.B, int32(n)})
	case OpPublish, OpPublishAfter:
		dst = append(dst, Window{in.B, int32(len(img.Types[img.Topics[in.A].Type].Fields))})
		if in.Op == OpPublishAfter {
			one(in.C)
		}
	default:
		// R[A] = f(R[B]) or f(R[B], R[C]): the operands of kind Reg
		// other than A.
		info, _ := OpInfo(in.Op)
		if info.B == Reg {
			one(in.B)
		}
		if info.C == Reg {
			one(in.C)
		}
	}
	return dst
}

// Writes returns the registers in writes on the way to the next
// instruction (N 0 for none). A call writes its callee's whole frame,
// which starts at its A; a for loop's step also advances its index, which
// it reads too, so only the element is given.
func Writes(img *Image, in Instr) Window {
	switch in.Op {
	case OpNop, OpStoreState, OpJump, OpJumpT, OpJumpF, OpJLtInt, OpJLeInt,
		OpJEqInt, OpJNeInt, OpJLtIntK, OpJLeIntK, OpJGtIntK, OpJGeIntK,
		OpJEqIntK, OpJNeIntK, OpJNeStrK, OpJNeVariant, OpRet, OpRetVoid,
		OpSetIndexList, OpSetIndexMap, OpSetField, OpPush, OpIterEnd,
		OpPublish, OpPublishAfter, OpTry, OpTryDrop:
		return Window{}
	case OpIterList, OpIterMap:
		return Window{in.A + 1, 1}
	case OpCall:
		return Window{in.A, int32(max(img.Funcs[in.B].FrameSize, 1))}
	}
	return Window{in.A, 1}
}

// Live is, for each instruction of a function, the set of its frame's
// registers live after it: read on some path from there before being
// written. A try's catch target counts as one of the try's successors.
type Live struct {
	words int      // uint64 words a set takes
	sets  []uint64 // the set after pc at sets[pc*words:]
}

// LiveAfter returns the registers of f live after each instruction. It
// takes time in the size of f's code and frame; f must be valid.
func LiveAfter(img *Image, f *Func) *Live {
	words := (f.FrameSize + 63) / 64
	n := len(f.Code)
	l := &Live{words: words, sets: make([]uint64, n*words)}
	if words == 0 {
		return l
	}
	in := make([]uint64, n*words) // live before each pc
	var reads []Window
	tmp := make([]uint64, words)
	for changed := true; changed; {
		changed = false
		for pc := n - 1; pc >= 0; pc-- {
			c := f.Code[pc]
			out := l.sets[pc*words : (pc+1)*words]
			// out = ∪ in[succ]
			clear(tmp)
			if !c.Op.Terminal() && pc+1 < n {
				orInto(tmp, in[(pc+1)*words:(pc+2)*words])
			}
			if c.Op.IsJump() && int(c.C) < n {
				orInto(tmp, in[int(c.C)*words:(int(c.C)+1)*words])
			}
			if !equal(out, tmp) {
				copy(out, tmp)
			}
			// in = reads ∪ (out − writes)
			if w := Writes(img, c); w.N > 0 {
				setWindow(tmp, w, false)
			}
			reads = Reads(img, c, reads[:0])
			for _, w := range reads {
				setWindow(tmp, w, true)
			}
			before := in[pc*words : (pc+1)*words]
			if !equal(before, tmp) {
				copy(before, tmp)
				changed = true
			}
		}
	}
	return l
}

// Words returns how many uint64 words a set takes (FrameSize/64, rounded
// up).
func (l *Live) Words() int { return l.words }

// After returns the set of registers live after pc: register r is live
// when bit r%64 of word r/64 is set. The slice is l's own.
func (l *Live) After(pc int) []uint64 { return l.sets[pc*l.words : (pc+1)*l.words] }

func orInto(dst, src []uint64) {
	for i, w := range src {
		dst[i] |= w
	}
}

func equal(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// setWindow sets (or clears) the bits of w in set, ignoring registers
// past the set's end.
func setWindow(set []uint64, w Window, on bool) {
	for r := w.Base; r < w.Base+w.N; r++ {
		if r < 0 || int(r)/64 >= len(set) {
			continue
		}
		if on {
			set[r/64] |= 1 << (r % 64)
		} else {
			set[r/64] &^= 1 << (r % 64)
		}
	}
}
