package image

import "strconv"

// Limits of an image, checked by Validate.
const (
	// MaxFrame is the largest frame (registers of one function).
	MaxFrame = 1 << 16
)

// ValidationError reports an image whose parts do not fit together.
type ValidationError struct {
	Where string // "func 3 (fib) pc 7", "type 12", …
	Msg   string
}

func (e *ValidationError) Error() string { return "image: " + e.Where + ": " + e.Msg }

// Validate checks that every index in img is in range and that every
// instruction's operands fit its function: registers inside the frame
// (argument windows included), jump targets inside the code, constants,
// types, functions, primitives, topics and instance slots of the right
// kind. Code always ends with a jump or a return, so execution never runs
// off the end. It does not prove the code type-correct: the interpreter
// still guards its own invariants.
func (img *Image) Validate() error {
	v := validator{img: img}
	v.run()
	return v.err
}

type validator struct {
	img *Image
	err error
}

func (v *validator) fail(where, msg string) {
	if v.err == nil {
		v.err = &ValidationError{Where: where, Msg: msg}
	}
}

func (v *validator) typeOK(t TypeRef) bool { return t >= 0 && int(t) < len(v.img.Types) }

// valueType reports whether t can be the type of a stored value (not void).
func (v *validator) valueType(t TypeRef) bool { return v.typeOK(t) && t != TVoid }

func (v *validator) in(i, n int) bool { return i >= 0 && i < n }

func itoa(i int) string { return strconv.Itoa(i) }

// run checks the tables in an order where each check may rely on the
// ones before it, and stops at the first error (later checks index the
// tables that earlier ones vouched for).
func (v *validator) run() {
	img := v.img
	if len(img.Types) < NumBasic {
		v.fail("types", "missing basic types")
		return
	}
	steps := []func(){
		func() {
			for i := range img.Types {
				v.typ(i, &img.Types[i])
			}
		},
		func() {
			for i := range img.Consts {
				v.konst(i, &img.Consts[i])
			}
		},
		func() {
			for i, t := range img.Topics {
				w := "topic " + itoa(i)
				if !v.typeOK(t.Type) || img.Types[t.Type].Kind != KindStruct {
					v.fail(w, "payload is not a struct type")
				}
				for _, s := range t.Subscribers {
					if !v.in(s, len(img.Instances)) {
						v.fail(w, "bad subscriber")
					}
				}
			}
		},
		func() {
			for i, p := range img.Prims {
				for _, t := range p.Params {
					if !v.valueType(t) {
						v.fail("prim "+itoa(i), "bad parameter type")
					}
				}
				if !v.typeOK(p.Result) {
					v.fail("prim "+itoa(i), "bad result type")
				}
			}
		},
		func() {
			for i, c := range img.Consumers {
				if c.Kind > ConsumerIngress {
					v.fail("consumer "+itoa(i), "bad kind")
				}
				for _, in := range c.Instances {
					if !v.in(in, len(img.Instances)) {
						v.fail("consumer "+itoa(i), "bad instance")
					}
				}
			}
			for i, in := range img.Ingress {
				if !v.in(in.Topic, len(img.Topics)) || !v.in(in.Consumer, len(img.Consumers)) {
					v.fail("ingress "+itoa(i), "bad topic or consumer")
				}
			}
			for i, x := range img.Exports {
				if !v.in(x.Topic, len(img.Topics)) {
					v.fail("export "+itoa(i), "bad topic")
				}
			}
		},
		func() {
			for i := range img.Loci {
				v.locus(i, &img.Loci[i])
			}
		},
		func() {
			for i, in := range img.Instances {
				w := "instance " + itoa(i)
				switch {
				case !v.in(in.Locus, len(img.Loci)):
					v.fail(w, "bad locus")
				case !v.in(in.Spawn, len(img.Funcs)):
					v.fail(w, "bad spawn function")
				case img.Funcs[in.Spawn].Kind != FuncSpawn || img.Funcs[in.Spawn].Locus != in.Locus:
					v.fail(w, "spawn function of another kind or locus")
				case in.Placement > PlacePool:
					v.fail(w, "bad placement")
				case !v.in(in.Consumer, len(img.Consumers)):
					v.fail(w, "bad consumer")
				}
			}
		},
		func() {
			for i := range img.Funcs {
				if v.fn(i, &img.Funcs[i]); v.err != nil {
					return
				}
			}
		},
	}
	for _, step := range steps {
		if step(); v.err != nil {
			return
		}
	}
}

func (v *validator) typ(i int, t *Type) {
	w := "type " + itoa(i)
	if i < NumBasic {
		if t.Kind != Kind(i) {
			v.fail(w, "basic type out of place")
		}
		return
	}
	// Unnamed types refer to lower indices, so they cannot form a cycle
	// that no struct or enum breaks.
	lower := func(r TypeRef) bool { return r >= 0 && int(r) < i && r != TVoid }
	switch t.Kind {
	case KindList:
		if !lower(t.Elem) {
			v.fail(w, "bad list element type")
		}
	case KindMap:
		if !lower(t.Key) || !lower(t.Elem) {
			v.fail(w, "bad map type")
			return
		}
		if k := v.img.Types[t.Key].Kind; k != KindInt && k != KindString && k != KindBool {
			v.fail(w, "map key must be int, string or bool")
		}
	case KindStruct:
		for _, f := range t.Fields {
			if !v.valueType(f.Type) {
				v.fail(w, "bad field type")
			}
		}
		if len(t.Variants) > 0 {
			v.fail(w, "struct with variants")
		}
	case KindEnum:
		for _, vr := range t.Variants {
			for _, f := range vr.Fields {
				if !v.valueType(f) {
					v.fail(w, "bad variant value type")
				}
			}
		}
		if len(t.Fields) > 0 || len(t.Variants) == 0 {
			v.fail(w, "bad enum")
		}
	default:
		v.fail(w, "basic kind after the basic types")
	}
}

func (v *validator) konst(i int, k *Const) {
	w := "const " + itoa(i)
	switch k.Kind {
	case KindInt, KindFloat, KindString, KindBytes:
	case KindBool:
		if k.Int != 0 && k.Int != 1 {
			v.fail(w, "bad bool")
		}
	case KindEnum:
		if !v.typeOK(k.Type) || v.img.Types[k.Type].Kind != KindEnum || !v.in(k.Variant, len(v.img.Types[k.Type].Variants)) {
			v.fail(w, "bad enum variant")
		}
	default:
		v.fail(w, "bad kind")
	}
}

func (v *validator) locus(i int, l *Locus) {
	w := "locus " + itoa(i)
	img := v.img
	if l.NumSlots < 0 || l.NumSlots > MaxFrame {
		v.fail(w, "bad slot count")
		return
	}
	for _, vars := range [][]Var{l.Params, l.State} {
		for _, x := range vars {
			if !v.valueType(x.Type) || !v.in(x.Slot, l.NumSlots) {
				v.fail(w, "bad variable "+x.Name)
			}
		}
	}
	fnOf := func(f int, kind FuncKind) bool {
		return v.in(f, len(img.Funcs)) && img.Funcs[f].Kind == kind && img.Funcs[f].Locus == i
	}
	if !fnOf(l.Init, FuncInit) {
		v.fail(w, "bad init function")
	}
	if l.Start != -1 && !fnOf(l.Start, FuncStart) {
		v.fail(w, "bad start handler")
	}
	for _, h := range l.Handlers {
		if !v.in(h.Topic, len(img.Topics)) || !fnOf(h.Func, FuncHandler) || img.Funcs[h.Func].Topic != h.Topic {
			v.fail(w, "bad handler")
		}
		if h.Guard != -1 && (!fnOf(h.Guard, FuncGuard) || img.Funcs[h.Guard].NumParams != 1+len(l.Params) || img.Funcs[h.Guard].Result != TBool) {
			v.fail(w, "bad guard")
		}
	}
	for _, f := range l.Fns {
		if !fnOf(f, FuncLocusFn) {
			v.fail(w, "bad locus fn")
		}
	}
	if l.Budget < 0 {
		v.fail(w, "negative budget")
	}
}

func (v *validator) fn(i int, f *Func) {
	img := v.img
	w := "func " + itoa(i) + " (" + f.Name + ")"
	if f.Kind >= numFuncKinds {
		v.fail(w, "bad kind")
		return
	}
	if f.Kind == FuncFn {
		if f.Locus != -1 {
			v.fail(w, "top-level fn with a locus")
		}
	} else if !v.in(f.Locus, len(img.Loci)) {
		v.fail(w, "bad locus")
		return
	}
	if f.Kind == FuncHandler {
		if !v.in(f.Topic, len(img.Topics)) || f.NumParams != 1 {
			v.fail(w, "bad handler")
		}
	} else if f.Topic != -1 {
		v.fail(w, "topic on a function that is not a handler")
	}
	if f.Kind == FuncGuard {
		// A guard runs with no instance: it may not touch instance slots.
		for _, in := range f.Code {
			if in.Op == OpLoadState || in.Op == OpStoreState {
				v.fail(w, "a guard reads or writes an instance slot")
				return
			}
		}
	}
	if (f.Kind == FuncStart || f.Kind == FuncInit || f.Kind == FuncSpawn) && f.NumParams != 0 {
		v.fail(w, "parameters on a function that takes none")
	}
	if f.NumParams < 0 || f.NumParams > f.NumSlots || f.NumSlots > f.FrameSize || f.FrameSize > MaxFrame {
		v.fail(w, "bad frame")
		return
	}
	if !v.typeOK(f.Result) {
		v.fail(w, "bad result type")
	}
	for _, l := range f.Locals {
		if !v.typeOK(l.Type) {
			v.fail(w, "bad local type")
		}
		if l.Start < 0 || int(l.Start) > len(f.Code) {
			v.fail(w, "bad local start")
		}
	}
	if len(f.Code) == 0 || !f.Code[len(f.Code)-1].Op.Terminal() {
		v.fail(w, "code does not end with a jump or return")
		return
	}
	for pc := range f.Code {
		if v.instr(w, f, pc); v.err != nil {
			return
		}
	}
	if d := f.Decl; !v.in(int(d.File), len(img.Files)) && !(d.File == 0 && d.Line == 0) || d.Line < 0 || d.Col < 0 {
		v.fail(w, "bad declaration position")
		return
	}
	for j, p := range f.Pos {
		if (j == 0 && p.PC != 0) || (j > 0 && p.PC <= f.Pos[j-1].PC) || int(p.PC) >= len(f.Code) {
			v.fail(w, "bad position table")
			return
		}
		if !v.in(int(p.File), len(img.Files)) && !(p.File == 0 && p.Line == 0) || p.Line < 0 || p.Col < 0 {
			v.fail(w, "bad position")
			return
		}
	}
	for j, p := range f.Stmts {
		if (j > 0 && p.PC <= f.Stmts[j-1].PC) || p.PC < 0 || int(p.PC) >= len(f.Code) {
			v.fail(w, "bad statement table")
			return
		}
		if !v.in(int(p.File), len(img.Files)) && !(p.File == 0 && p.Line == 0) || p.Line < 0 || p.Col < 0 {
			v.fail(w, "bad statement position")
			return
		}
	}
}

func (v *validator) instr(w string, f *Func, pc int) {
	img := v.img
	in := f.Code[pc]
	info, ok := OpInfo(in.Op)
	w += " pc " + itoa(pc)
	if !ok {
		v.fail(w, "bad opcode")
		return
	}
	frame := int64(f.FrameSize)
	// window checks that registers base … base+n-1 are in the frame.
	window := func(base int32, n int) bool {
		return base >= 0 && int64(base)+int64(n) <= frame
	}
	ops := [3]int32{in.A, in.B, in.C}
	for j, kind := range [3]Operand{info.A, info.B, info.C} {
		x := ops[j]
		good := true
		switch kind {
		case None:
			good = x == 0
		case Reg:
			good = x >= 0 && int64(x) < frame
		case Imm:
		case KIdx:
			good = v.in(int(x), len(img.Consts))
		case TypeIdx:
			good = v.typeOK(TypeRef(x))
		case FuncIdx:
			good = v.in(int(x), len(img.Funcs))
		case PrimIdx:
			good = v.in(int(x), len(img.Prims))
		case TopicIx:
			good = v.in(int(x), len(img.Topics))
		case BuiltIx:
			good = x > 0 && x < int32(NumBuiltins)
		case Slot:
			good = f.Locus >= 0 && v.in(int(x), img.Loci[f.Locus].NumSlots)
		case Target:
			good = v.in(int(x), len(f.Code))
		case Count:
			good = x >= 0
		case KeyKind:
			good = x == int32(KindInt) || x == int32(KindString) || x == int32(KindBool)
		}
		if !good {
			v.fail(w, in.Op.String()+": bad operand "+string("ABC"[j]))
			return
		}
	}
	good := true
	switch in.Op {
	case OpCall:
		callee := &img.Funcs[in.B]
		switch callee.Kind {
		case FuncFn:
		case FuncLocusFn:
			good = callee.Locus == f.Locus
		default:
			good = false
		}
		good = good && window(in.A, max(callee.NumParams, 1))
	case OpCallB:
		good = window(in.C, Builtin(in.B).Arity())
	case OpCallPrim:
		good = window(in.C, len(img.Prims[in.B].Params))
	case OpNewList:
		good = window(in.B, int(in.C))
	case OpFormat:
		n, ok := FormatParts(img.Consts[in.C])
		good = ok && window(in.B, n)
	case OpNewMap:
		good = in.C > 0 && window(in.B, 2*int(in.C))
	case OpNewStruct:
		t := &img.Types[in.C]
		good = t.Kind == KindStruct && window(in.B, len(t.Fields))
	case OpNewEnum:
		k := &img.Consts[in.C]
		good = k.Kind == KindEnum && window(in.B, len(img.Types[k.Type].Variants[k.Variant].Fields))
	case OpTry:
		// the failure variant carries one Error struct
		k := &img.Consts[in.B]
		good = k.Kind == KindEnum
		if good {
			fs := img.Types[k.Type].Variants[k.Variant].Fields
			good = len(fs) == 1 && v.typeOK(fs[0]) && img.Types[fs[0]].Kind == KindStruct && len(img.Types[fs[0]].Fields) == 2
			for i := 0; good && i < 2; i++ {
				ft := img.Types[fs[0]].Fields[i].Type
				good = v.typeOK(ft) && img.Types[ft].Kind == KindString
			}
		}
	case OpTryEnd:
		k := &img.Consts[in.B]
		good = k.Kind == KindEnum && len(img.Types[k.Type].Variants[k.Variant].Fields) <= 1
	case OpJNeStrK:
		good = img.Consts[in.B].Kind == KindString || img.Consts[in.B].Kind == KindBytes
	case OpPublish, OpPublishAfter:
		good = window(in.B, len(img.Types[img.Topics[in.A].Type].Fields))
	case OpIterList, OpIterMap, OpIterEnd:
		good = window(in.A, 2)
	case OpForList, OpForMap, OpForMapVal:
		good = window(in.B, 2)
	}
	if !good {
		v.fail(w, in.Op.String()+": operands do not fit")
	}
}
