package tier

import (
	"strconv"

	"github.com/hale-lang/hale/codegen/image"
)

// Handlers compiled whole. A topic handler of scalars (its payload's
// fields, the state it reads and writes, the topics it publishes are all
// ints, floats and bools; it calls only compiled functions of scalars)
// is compiled as one export that the wasm engine's host calls for a
// delivery instead of the guest's deliver: it decodes the payload from
// its canonical encoding, reads and writes the instance's state slots in
// the guest's memory, counts its steps as the interpreter does and
// appends each publish to the guest's publish batch with the bytes the
// guest would append. Whenever the interpreter might do anything else
// (a payload that is not canonical, a state slot of an unexpected kind, a
// batch without room, the budget or a poll slice running out, an
// arithmetic trap, a compiled callee that stops), it returns having
// written nothing: the state is written back and the batch's length set
// only at its end, so a fall-back leaves no trace, and the host runs the
// delivery through the guest as before.
//
// A handler export takes HandlerParams i64 parameters, in this order:
// the address of the instance's slots (a []value.Value's data), of the
// payload and its length, of the guest's batch (a []byte's header: data,
// length, capacity, 8 bytes each), of the batch box (two uint32: the
// batch's address and length), of the machine's memory charge counter
// (int64), the charge the delivery adds to it (the payload's length
// and its struct's shallow size), the address of the machine's guard
// tables (vm.Machine.GuardTables, whose word 1 is the address of the
// memory allowance), and the batch's length to append from: 0 for a
// delivery on its own (the guest's deliver empties the batch first), the
// length the previous delivery left in a run (HandlerManyExport). It
// returns 0 with GlobalStop 0 when the handler ran to its end. The host
// sets GlobalFuel and GlobalGiven to the steps it may take (at most one
// poll slice: a refill always refuses), GlobalDepth to 1, GlobalHeight to
// the handler's frame size and an empty undo log, as for a call.
//
// The memory measure. The interpreter charges a delivery's payload when
// it decodes it, before the handler's first step, and measures (when the
// charges since the last measure pass the allowance) after each
// instruction it runs outside its dispatch loop's own cases
// (InterpreterInline lists those): so a handler that runs such an
// instruction, or calls a function that may, measures in its own run
// whenever its delivery's charge took the machine past the allowance.
// Compiled code cannot measure (it would need the interpreter's frames),
// so a handler compiled whole hands the delivery back at each such
// instruction when the charges (the machine's, the delivery's and its
// guarded publishes') pass the allowance, and the interpreter then
// measures where it always does.

// HandlerParams is the number of parameters of a handler export.
const HandlerParams = 9

// Handler is a topic handler compiled whole (PlanHandlers).
type Handler struct {
	Func, Locus, Topic int
	// Fields are the kinds of the payload's fields.
	Fields []image.Kind
	// Slots are the state slots the handler reads or writes, ascending,
	// and SlotKinds their kinds.
	Slots     []int
	SlotKinds []image.Kind
	// Publishes: the handler has a publish (it needs the guest's batch).
	Publishes bool
	// Guards are the guarded topics it publishes with a compiled form
	// (see guarded publishes, below), by topic.
	Guards map[int32]GuardPub
	// Stop[pc] is set for the instructions compiled as a fall-back: any
	// the handler's compiled form cannot run (a print, a primitive, a
	// string or a list, a publish of a guarded topic…). A path that
	// reaches one hands the delivery back to the guest.
	Stop []bool
}

// HandlerExport returns the export name of p.Handlers[i].
func HandlerExport(i int) string { return "d" + strconv.Itoa(i) }

// InterpreterInline are the opcodes that the interpreter's dispatch loop
// (vm's execAt) runs as cases of its own switch, after which it never
// measures memory; after every other instruction it runs (cold's), it
// measures when the charges pass the allowance. A test in package vm
// keeps the list equal to execAt's cases.
var InterpreterInline = map[image.Op]bool{
	image.OpMove: true, image.OpLoadK: true, image.OpLoadInt: true, image.OpLoadState: true, image.OpStoreState: true,
	image.OpAddInt: true, image.OpSubInt: true, image.OpAddIntK: true,
	image.OpEqInt: true, image.OpNeInt: true, image.OpLtInt: true, image.OpLeInt: true,
	image.OpJump: true, image.OpJumpT: true, image.OpJumpF: true,
	image.OpJLtInt: true, image.OpJLeInt: true, image.OpJEqInt: true, image.OpJNeInt: true,
	image.OpJLtIntK: true, image.OpJLeIntK: true, image.OpJGtIntK: true, image.OpJGeIntK: true,
	image.OpJEqIntK: true, image.OpJNeIntK: true, image.OpLoopRange: true,
	image.OpCall: true, image.OpRet: true, image.OpRetVoid: true, image.OpIndexList: true, image.OpField: true,
	image.OpPublish: true, image.OpPublishAfter: true, image.OpForList: true,
}

// measures reports whether the interpreter may measure memory while it
// runs in (see "The memory measure" above): after an instruction its
// loop does not run itself, or inside a call (the callee's own
// instructions; a compiled callee, which keeps its registers in wasm
// locals, is handed back at such a point only when compiled code
// reaches it from a handler).
func measures(in image.Instr) bool {
	return !InterpreterInline[in.Op] || in.Op == image.OpCall
}

// BatchFlush and CanonicalNaN are vm/guest/abi.BatchFlush (a batch that
// reaches it is handed over at once, which compiled code leaves to the
// guest) and vm/value.CanonicalNaN (the encoding of every NaN); a test
// keeps them equal.
const (
	BatchFlush   = 16 << 10
	CanonicalNaN = 0x7ff8000000000000
)

// PlanHandlers adds to p.Handlers the topic handlers of img that compile
// whole: those that only read fields of their payload (a struct of
// ints, floats and bools) and have a path from their entry to their
// return that runs no instruction compiled as a fall-back (Handler.Stop). p must be img's plan (NewPlan); only the host calls it (the
// guest never needs to know which handlers the host runs itself).
func PlanHandlers(img *image.Image, p *Plan) {
	p.Handlers = p.Handlers[:0]
	guarded := make([]bool, len(img.Topics))
	for i := range img.Loci {
		for _, h := range img.Loci[i].Handlers {
			if h.Guard >= 0 && h.Topic >= 0 && h.Topic < len(img.Topics) {
				guarded[h.Topic] = true
			}
		}
	}
	for f := range img.Funcs {
		if h, ok := planHandler(img, p, f, guarded); ok {
			p.Handlers = append(p.Handlers, h)
		}
	}
}

// scalarStruct returns the kinds of the fields of struct type t when they
// are all ints, floats and bools and fewer than 128.
func scalarStruct(img *image.Image, t image.TypeRef) ([]image.Kind, bool) {
	st := typeOfKind(img, t, image.KindStruct)
	if st == nil || len(st.Fields) >= 0x80 {
		return nil, false
	}
	ks := make([]image.Kind, len(st.Fields))
	for i, fl := range st.Fields {
		k, ok := scalar(img, fl.Type)
		if !ok {
			return nil, false
		}
		ks[i] = valueKindOf(k)
	}
	return ks, true
}

// maxHandlerFrame bounds the registers of a handler compiled whole (they
// are wasm locals).
const maxHandlerFrame = 1 << 12

func planHandler(img *image.Image, p *Plan, f int, guarded []bool) (Handler, bool) {
	fn := &img.Funcs[f]
	if fn.Kind != image.FuncHandler || fn.Locus < 0 || fn.Locus >= len(img.Loci) || fn.Topic < 0 || fn.Topic >= len(img.Topics) ||
		fn.NumParams != 1 || fn.FrameSize < 1 || fn.FrameSize > maxHandlerFrame || len(fn.Code) == 0 || fn.Result != image.TVoid {
		return Handler{}, false
	}
	h := Handler{Func: f, Locus: fn.Locus, Topic: fn.Topic}
	var ok bool
	if h.Fields, ok = scalarStruct(img, img.Topics[fn.Topic].Type); !ok {
		return Handler{}, false
	}
	l := &img.Loci[fn.Locus]
	slotKind := map[int]image.Kind{}
	for _, vars := range [][]image.Var{l.Params, l.State} {
		for _, v := range vars {
			if k, ok := scalar(img, v.Type); ok && v.Slot >= 0 && v.Slot < l.NumSlots {
				slotKind[v.Slot] = valueKindOf(k)
			}
		}
	}
	used := map[int]bool{}
	useSlot := func(s int32) bool {
		if _, ok := slotKind[int(s)]; !ok {
			return false
		}
		used[int(s)] = true
		return true
	}
	h.Stop = make([]bool, len(fn.Code))
	calls := false
	for _, in := range fn.Code {
		calls = calls || in.Op == image.OpCall
	}
	for pc, in := range fn.Code {
		// Register 0 (the payload) is only read by field reads: the
		// interpreter then decodes it into the topic's reused struct.
		info, known := image.OpInfo(in.Op)
		if !known || info.A == image.Reg && in.A == 0 || info.C == image.Reg && in.C == 0 ||
			info.B == image.Reg && in.B == 0 && in.Op != image.OpField {
			return Handler{}, false
		}
		if in.Op == image.OpPublish && in.A >= 0 && int(in.A) < len(img.Topics) && guarded[in.A] {
			gp, ok := guardPub(img, fn, in)
			if !ok || calls {
				h.Stop[pc] = true
				continue
			}
			if h.Guards == nil {
				h.Guards = map[int32]GuardPub{}
			}
			h.Guards[in.A] = gp
			h.Publishes = true
			continue
		}
		if !handlerOp(img, p, fn, in, h.Fields, guarded, useSlot) {
			h.Stop[pc] = true
		} else if in.Op == image.OpPublish {
			h.Publishes = true
		}
	}
	if !completes(fn.Code, h.Stop) {
		return Handler{}, false
	}
	for s := range l.NumSlots {
		if used[s] {
			h.Slots = append(h.Slots, s)
			h.SlotKinds = append(h.SlotKinds, slotKind[s])
		}
	}
	return h, true
}

// completes reports whether a return is reachable from pc 0 without
// running an instruction stop marks.
func completes(code []image.Instr, stop []bool) bool {
	seen := make([]bool, len(code))
	work := []int{0}
	seen[0] = true
	for len(work) > 0 {
		pc := work[len(work)-1]
		work = work[:len(work)-1]
		in := code[pc]
		if stop[pc] {
			continue
		}
		if in.Op == image.OpRetVoid {
			return true
		}
		var succ []int
		switch {
		case in.Op == image.OpJump:
			succ = []int{int(in.C)}
		case isJump(in.Op):
			succ = []int{int(in.C), pc + 1}
		default:
			succ = []int{pc + 1}
		}
		for _, s := range succ {
			if s >= 0 && s < len(code) && !seen[s] {
				seen[s] = true
				work = append(work, s)
			}
		}
	}
	return false
}

// handlerOp reports whether in, an instruction of handler fn whose
// payload fields are fields, has a compiled form; useSlot notes a state
// slot it uses and reports whether that slot is a scalar.
func handlerOp(img *image.Image, p *Plan, fn *image.Func, in image.Instr, fields []image.Kind, guarded []bool, useSlot func(int32) bool) bool {
	switch in.Op {
	case image.OpField:
		return in.B == 0 && in.C >= 0 && int(in.C) < len(fields)
	case image.OpLoadState:
		return useSlot(in.B)
	case image.OpStoreState:
		return useSlot(in.A)
	case image.OpPublish:
		ks, ok := scalarStruct(img, img.Topics[in.A].Type)
		return ok && !guarded[in.A] && int(in.B)+len(ks) <= fn.FrameSize
	case image.OpRetVoid:
		return true
	case image.OpRet:
		return false
	case image.OpCall:
		// A handler compiled whole has no allocation block (alloc.go).
		if !p.Compiled[in.B] || p.Allocs[in.B] || p.Result[in.B] == Enum {
			return false
		}
		for _, k := range p.Params[in.B] {
			if k != Int && k != Bool && k != Float {
				return false
			}
		}
		return true
	case image.OpLoadK:
		// A string is loaded as 0: only an instruction compiled
		// as a fall-back reads it.
		switch img.Consts[in.B].Kind {
		case image.KindInt, image.KindBool, image.KindFloat, image.KindString:
			return true
		}
		return false
	case image.OpCallB:
		_, ok := builtins[image.Builtin(in.B)]
		return ok
	}
	return simpleOps[in.Op]
}

// handlerGen writes the parts of a handler export that compileFunc
// leaves to it (buffer.hnd): its locals, its prologue (decoding the
// payload, loading the state it uses), the instructions that touch the
// payload, the state and the batch, and its return.
type handlerGen struct {
	img *image.Image
	h   *Handler
	// Locals: pos (the batch's new length), bcap (its capacity), u (a
	// scratch i64), then a local per payload field and per slot; bptr
	// (the batch's data) and cur (a byte cursor), i32.
	pos, bcap, u, field0, slot0 uint32
	bptr, cur                   uint32
	// For guarded publishes: high (the interpreter's stack height, where
	// the guards' frame would start), gcharge (their memory charges), i64;
	// hdr (the topic's guard table) and src (its bits for the key), i32.
	high, gcharge, hdr, src uint32
	// left (i64): the allowance less the charges at the handler's
	// entry (the machine's and the delivery's), when it measures.
	left    uint32
	measure bool // some instruction it compiles may measure (measures)
	slotIx  map[int32]uint32
	written []bool // by slot: the handler stores it
}

// The handler export's parameters (locals 0…HandlerParams-1).
const (
	hpSlots = iota
	hpPayload
	hpLen
	hpBatch
	hpBox
	hpCharged
	hpCharge
	hpGuards
	hpPos
)

func newHandlerGen(img *image.Image, h *Handler) *handlerGen {
	g := &handlerGen{img: img, h: h, slotIx: map[int32]uint32{}, written: make([]bool, len(h.Slots))}
	for i, s := range h.Slots {
		g.slotIx[int32(s)] = uint32(i)
	}
	for pc, in := range img.Funcs[h.Func].Code {
		if in.Op == image.OpStoreState && !h.Stop[pc] {
			g.written[g.slotIx[in.A]] = true
		}
		g.measure = g.measure || !h.Stop[pc] && measures(in)
	}
	return g
}

// Opcodes only handlers use.
const (
	opI32GtU    = 0x4B
	opI32GeU    = 0x4F
	opI32Sub    = 0x6B
	opI32And    = 0x71
	opI64ShrU   = 0x88
	opI32Store8 = 0x3A
)

// declare adds the handler's locals, from local next on, to the local
// groups whose count byte is at w.b[groups].
func (g *handlerGen) declare(w *buffer, groups int, next uint32) {
	w.b[groups] += 2
	n64 := 6 + uint32(len(g.h.Fields)+len(g.h.Slots))
	w.u32(n64)
	w.byte(typeI64)
	w.u32(4)
	w.byte(typeI32)
	g.pos, g.bcap, g.u = next, next+1, next+2
	g.field0 = next + 3
	g.slot0 = g.field0 + uint32(len(g.h.Fields))
	g.high, g.gcharge = g.slot0+uint32(len(g.h.Slots)), g.slot0+uint32(len(g.h.Slots))+1
	g.left = g.gcharge + 1
	g.bptr, g.cur, g.hdr, g.src = next+n64, next+n64+1, next+n64+2, next+n64+3
}

func (w *buffer) lget(l uint32) { w.op(opLocalGet); w.u32(l) }
func (w *buffer) lset(l uint32) { w.op(opLocalSet); w.u32(l) }

// byteAt pushes the byte at cur + off (i32).
func (g *handlerGen) byteAt(w *buffer, off uint32) {
	w.lget(g.cur)
	w.mem(opI32Load8U, off)
}

// prologue decodes the payload into the field locals (stopping on
// anything but its canonical encoding, as the guest's scalar decoder
// would hand it to the general one) and loads the state slots.
func (g *handlerGen) prologue(w *buffer) {
	n := len(g.h.Fields)
	// cur = payload; u = payload + len (the end, as i64).
	w.lget(hpPayload)
	w.op(opI32WrapI64)
	w.lset(g.cur)
	w.lget(hpPayload)
	w.lget(hpLen)
	w.op(opI64Add)
	w.lset(g.u)
	// len >= 2, the struct's tag and its count.
	w.lget(hpLen)
	w.i64Const(2)
	w.op(opI64LtS)
	w.stopIf()
	g.byteAt(w, 0)
	w.i32Const(int32(image.KindStruct))
	w.op(opI32Ne)
	g.byteAt(w, 1)
	w.i32Const(int32(n))
	w.op(opI32Ne)
	w.op(opI32Or)
	w.stopIf()
	g.advance(w, 2)
	for i, k := range g.h.Fields {
		field := g.field0 + uint32(i)
		// At least the tag and one byte: cur + 2 <= end.
		g.room(w, 2)
		g.byteAt(w, 0)
		w.i32Const(int32(k))
		w.op(opI32Ne)
		w.stopIf()
		g.advance(w, 1)
		switch k {
		case image.KindInt:
			g.uvarint(w, field)
			// Zigzag: (x >> 1) ^ -(x & 1).
			w.lget(field)
			w.i64Const(1)
			w.op(opI64ShrU)
			w.i64Const(0)
			w.lget(field)
			w.i64Const(1)
			w.op(opI64And)
			w.op(opI64Sub)
			w.op(opI64Xor)
			w.lset(field)
		case image.KindFloat:
			g.room(w, 8)
			w.lget(g.cur)
			w.mem(opI64Load, 0)
			w.lset(field)
			// A NaN other than the canonical one is not canonical.
			w.lget(field)
			w.op(opF64ReinterpretI64)
			w.lget(field)
			w.op(opF64ReinterpretI64)
			w.op(opF64Ne)
			w.lget(field)
			w.i64Const(CanonicalNaN)
			w.op(opI64Ne)
			w.op(opI32And)
			w.stopIf()
			g.advance(w, 8)
		default: // bool
			g.byteAt(w, 0)
			w.i32Const(1)
			w.op(opI32GtU)
			w.stopIf()
			g.byteAt(w, 0)
			w.op(opI64ExtendI32U)
			w.lset(field)
			g.advance(w, 1)
		}
	}
	// Nothing after the last field.
	w.lget(g.cur)
	w.op(opI64ExtendI32U)
	w.lget(g.u)
	w.op(opI64Ne)
	w.stopIf()
	// The state: each slot must hold its kind (it always does).
	for i, s := range g.h.Slots {
		g.slotAddr(w, s)
		w.mem(opI32Load8U, valueKind)
		w.i32Const(int32(g.h.SlotKinds[i]))
		w.op(opI32Ne)
		w.stopIf()
		g.slotAddr(w, s)
		w.mem(opI64Load, valueBits)
		w.lset(g.slot0 + uint32(i))
	}
	w.lget(hpPos)
	w.lset(g.pos)
	if g.measure {
		// left = allowance - (charged + charge): negative when a
		// measure would fall due at the next instruction that
		// measures. Neither changes during the run (only the guards'
		// charges add to it, in gcharge).
		w.lget(hpGuards)
		w.op(opI32WrapI64)
		w.mem(opI64Load, 8)
		w.op(opI32WrapI64)
		w.mem(opI64Load, 0)
		w.lget(hpCharged)
		w.op(opI32WrapI64)
		w.mem(opI64Load, 0)
		w.lget(hpCharge)
		w.op(opI64Add)
		w.op(opI64Sub)
		w.lset(g.left)
	}
	if len(g.h.Guards) > 0 {
		w.i64Const(int64(g.img.Funcs[g.h.Func].FrameSize))
		w.lset(g.high)
		w.i64Const(0)
		w.lset(g.gcharge)
	}
	if g.h.Publishes {
		w.lget(hpBatch)
		w.op(opI32WrapI64)
		w.mem(opI64Load, 0)
		w.op(opI32WrapI64)
		w.lset(g.bptr)
		w.lget(hpBatch)
		w.op(opI32WrapI64)
		w.mem(opI64Load, 16)
		w.lset(g.bcap)
	}
}

// slotAddr pushes the address (i32) of slot s.
func (g *handlerGen) slotAddr(w *buffer, s int) {
	w.lget(hpSlots)
	w.op(opI32WrapI64)
	w.i32Const(int32(s * valueSize))
	w.op(opI32Add)
}

// advance adds d to cur.
func (g *handlerGen) advance(w *buffer, d int32) {
	w.lget(g.cur)
	w.i32Const(d)
	w.op(opI32Add)
	w.lset(g.cur)
}

// room stops unless d more bytes of the payload follow cur.
func (g *handlerGen) room(w *buffer, d int64) {
	w.lget(g.cur)
	w.op(opI64ExtendI32U)
	w.i64Const(d)
	w.op(opI64Add)
	w.lget(g.u)
	w.op(opI64GtU)
	w.stopIf()
}

// uvarint decodes a minimal LEB128 varint of at most 64 bits at cur into
// local x, advancing cur, and stops on anything else (canonicalUvarint in
// package vm). It uses bcap as the shift and pos as the byte count: the
// prologue sets both afterwards.
func (g *handlerGen) uvarint(w *buffer, x uint32) {
	shift, i := g.bcap, g.pos
	w.i64Const(0)
	w.lset(x)
	w.i64Const(0)
	w.lset(shift)
	w.i64Const(0)
	w.lset(i)
	w.op(opBlock)
	w.byte(0x40)
	w.op(opLoop)
	w.byte(0x40)
	// A byte must follow.
	g.room(w, 1)
	w.op(opBlock) // a continuation byte: br 0 to the end of this block
	w.byte(0x40)
	g.byteAt(w, 0)
	w.i32Const(0x80)
	w.op(opI32GeU)
	w.op(opBrIf)
	w.u32(0)
	// The last byte: not 0 after the first, at most 1 as the tenth.
	g.byteAt(w, 0)
	w.op(opI32Eqz)
	w.lget(i)
	w.i64Const(0)
	w.op(opI64GtS)
	w.op(opI32And)
	g.byteAt(w, 0)
	w.i32Const(1)
	w.op(opI32GtU)
	w.lget(i)
	w.i64Const(9)
	w.op(opI64Eq)
	w.op(opI32And)
	w.op(opI32Or)
	w.stopIf()
	w.lget(x)
	g.byteAt(w, 0)
	w.op(opI64ExtendI32U)
	w.lget(shift)
	w.op(opI64Shl)
	w.op(opI64Or)
	w.lset(x)
	g.advance(w, 1)
	w.op(opBr)
	w.u32(2) // out of the loop and the outer block
	w.op(opEnd)
	// A continuation byte: not the tenth.
	w.lget(i)
	w.i64Const(9)
	w.op(opI64Eq)
	w.stopIf()
	w.lget(x)
	g.byteAt(w, 0)
	w.i32Const(0x7f)
	w.op(opI32And)
	w.op(opI64ExtendI32U)
	w.lget(shift)
	w.op(opI64Shl)
	w.op(opI64Or)
	w.lset(x)
	w.lget(shift)
	w.i64Const(7)
	w.op(opI64Add)
	w.lset(shift)
	w.lget(i)
	w.i64Const(1)
	w.op(opI64Add)
	w.lset(i)
	g.advance(w, 1)
	w.op(opBr)
	w.u32(0) // the loop
	w.op(opEnd)
	w.op(opEnd)
}

// op writes the instructions handlerGen owns and reports whether in was
// one.
func (g *handlerGen) op(w *buffer, pc int, in image.Instr) bool {
	if g.h.Stop[pc] {
		w.stop()
		return true
	}
	if measures(in) {
		// The interpreter would measure here (in a call: maybe):
		// hand the delivery back when the charges pass the allowance.
		if len(g.h.Guards) > 0 {
			w.lget(g.gcharge)
			w.lget(g.left)
			w.op(opI64GtS)
		} else {
			w.lget(g.left)
			w.i64Const(0)
			w.op(opI64LtS)
		}
		w.stopIf()
	}
	switch in.Op {
	case image.OpField:
		w.lget(g.field0 + uint32(in.C))
		w.lset(w.reg(in.A))
	case image.OpLoadState:
		w.lget(g.slot0 + g.slotIx[in.B])
		w.lset(w.reg(in.A))
	case image.OpStoreState:
		w.lget(w.reg(in.B))
		w.lset(g.slot0 + g.slotIx[in.A])
	case image.OpPublish:
		g.publish(w, in)
	case image.OpRetVoid:
		g.epilogue(w)
	default:
		return false
	}
	return true
}

// uvarintLen is the length of v's uvarint.
func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// putByte stores byte c at cur + off.
func (g *handlerGen) putByte(w *buffer, off uint32, c int32) {
	w.lget(g.cur)
	w.i32Const(c)
	w.mem(opI32Store8, off)
}

// publish appends the batch record of a publish of topic in.A with
// fields R[B]… (record), and stops unless it surely fits (noRoom).
func (g *handlerGen) publish(w *buffer, in image.Instr) {
	g.noRoom(w, in)
	w.stopIf()
	g.record(w, in)
}

// guardPub returns how publish in reads its guard bits from the guest's
// guard table, whether it does (only in a handler compiled whole: a
// region's publishes are of unguarded topics) and the bits' byte count.
func (g *handlerGen) guardPub(in image.Instr) (GuardPub, bool, int) {
	if g.h == nil {
		return GuardPub{}, false, 0
	}
	gp, ok := g.h.Guards[in.A]
	if !ok {
		return GuardPub{}, false, 0
	}
	return gp, true, (gp.Subs + 7) / 8
}

// noRoom pushes (i32) whether the record of publish in might not fit in
// the batch's capacity or might bring the batch to BatchFlush, where the
// guest would hand it over.
func (g *handlerGen) noRoom(w *buffer, in image.Instr) {
	ks, _ := scalarStruct(g.img, g.img.Topics[in.A].Type)
	gp, guarded, nb := g.guardPub(in)
	if guarded {
		g.guards(w, in, gp, nb)
	}
	most := 4 + uvarintLen(uint64(in.A)) + nb + 2
	for _, k := range ks {
		switch k {
		case image.KindInt:
			most += 11
		case image.KindFloat:
			most += 9
		default:
			most += 2
		}
	}
	w.lget(g.pos)
	w.i64Const(int64(most))
	w.op(opI64Add)
	w.i64Const(BatchFlush)
	w.op(opI64GeS)
	w.lget(g.pos)
	w.i64Const(int64(most))
	w.op(opI64Add)
	w.lget(g.bcap)
	w.op(opI64GtS)
	w.op(opI32Or)
}

// record appends at bptr + pos the batch record of a publish of topic
// in.A with fields R[B]… (noRoom has checked that it fits): its length
// (4 bytes), uvarint(topic), the struct's tag, its count and each
// field's tag and bytes, as vm's publish and appendScalarTuple, then
// abi.AppendBatchRecord, would; pos moves past it.
func (g *handlerGen) record(w *buffer, in image.Instr) {
	ks, _ := scalarStruct(g.img, g.img.Topics[in.A].Type)
	gp, guarded, nb := g.guardPub(in)
	// cur = bptr + pos + 4
	w.lget(g.bptr)
	w.lget(g.pos)
	w.op(opI32WrapI64)
	w.op(opI32Add)
	w.i32Const(4)
	w.op(opI32Add)
	w.lset(g.cur)
	off := uint32(0)
	for v := uint64(in.A); ; v >>= 7 {
		if v >= 0x80 {
			g.putByte(w, off, int32(v&0x7f|0x80))
			off++
			continue
		}
		g.putByte(w, off, int32(v))
		off++
		break
	}
	if guarded {
		g.copyBits(w, off, nb)
		off += uint32(nb)
	}
	head := off // the payload starts at cur + head
	g.putByte(w, off, int32(image.KindStruct))
	g.putByte(w, off+1, int32(len(ks)))
	g.advance(w, int32(off+2))
	for i, k := range ks {
		r := in.B + int32(i)
		g.putByte(w, 0, int32(k))
		g.advance(w, 1)
		switch k {
		case image.KindInt:
			// Zigzag, then LEB128.
			w.lget(w.reg(r))
			w.i64Const(1)
			w.op(opI64Shl)
			w.lget(w.reg(r))
			w.i64Const(63)
			w.op(opI64ShrS)
			w.op(opI64Xor)
			w.lset(g.u)
			w.op(opBlock)
			w.byte(0x40)
			w.op(opLoop)
			w.byte(0x40)
			w.lget(g.u)
			w.i64Const(0x80)
			w.op(opI64LtU)
			w.op(opBrIf)
			w.u32(1)
			w.lget(g.cur)
			w.lget(g.u)
			w.op(opI32WrapI64)
			w.i32Const(0x80)
			w.op(opI32Or)
			w.mem(opI32Store8, 0)
			g.advance(w, 1)
			w.lget(g.u)
			w.i64Const(7)
			w.op(opI64ShrU)
			w.lset(g.u)
			w.op(opBr)
			w.u32(0)
			w.op(opEnd)
			w.op(opEnd)
			w.lget(g.cur)
			w.lget(g.u)
			w.op(opI32WrapI64)
			w.mem(opI32Store8, 0)
			g.advance(w, 1)
		case image.KindFloat:
			// Every NaN as the canonical one.
			w.lget(g.cur)
			w.i64Const(CanonicalNaN)
			w.lget(w.reg(r))
			w.lget(w.reg(r))
			w.op(opF64ReinterpretI64)
			w.lget(w.reg(r))
			w.op(opF64ReinterpretI64)
			w.op(opF64Ne)
			w.op(opSelect)
			w.mem(opI64Store, 0)
			g.advance(w, 8)
		default:
			w.lget(g.cur)
			w.lget(w.reg(r))
			w.op(opI32WrapI64)
			w.mem(opI32Store8, 0)
			g.advance(w, 1)
		}
	}
	if guarded {
		// gcharge += subs × the payload's length + the run's charge.
		w.lget(g.gcharge)
		w.lget(g.cur)
		w.lget(g.bptr)
		w.op(opI32Sub)
		w.op(opI64ExtendI32U)
		w.lget(g.pos)
		w.op(opI64Sub)
		w.i64Const(int64(4 + head))
		w.op(opI64Sub)
		w.i64Const(int64(gp.Subs))
		w.op(opI64Mul)
		w.op(opI64Add)
		g.hdrWord(w, gtCharge)
		w.op(opI64Add)
		w.lset(g.gcharge)
	}
	// The record's length, then pos past it.
	w.lget(g.bptr)
	w.lget(g.pos)
	w.op(opI32WrapI64)
	w.op(opI32Add)
	w.lget(g.cur)
	w.lget(g.bptr)
	w.lget(g.pos)
	w.op(opI32WrapI64)
	w.op(opI32Add)
	w.op(opI32Sub)
	w.i32Const(4)
	w.op(opI32Sub)
	w.mem(opI32Store, 0)
	w.lget(g.cur)
	w.lget(g.bptr)
	w.op(opI32Sub)
	w.op(opI64ExtendI32U)
	w.lset(g.pos)
}

// epilogue commits the run: the state written back, the batch's length
// (and the box) set to what the handler appended (the guest's deliver
// empties the batch first: so does this), the memory charge added, and
// returns 0.
func (g *handlerGen) epilogue(w *buffer) {
	if len(g.h.Guards) > 0 {
		// After a guarded publish, a measure falling due in this run
		// (charged past the allowance) is the interpreter's to make: it
		// would see the guards' registers.
		w.lget(g.gcharge)
		w.i64Const(0)
		w.op(opI64Ne)
		w.lget(hpCharged)
		w.op(opI32WrapI64)
		w.mem(opI64Load, 0)
		w.lget(hpCharge)
		w.op(opI64Add)
		w.lget(g.gcharge)
		w.op(opI64Add)
		w.lget(hpGuards)
		w.op(opI32WrapI64)
		w.mem(opI64Load, 8)
		w.op(opI32WrapI64)
		w.mem(opI64Load, 0)
		w.op(opI64GtS)
		w.op(opI32And)
		w.stopIf()
	}
	for i, s := range g.h.Slots {
		if !g.written[i] {
			continue
		}
		g.slotAddr(w, s)
		w.lget(g.slot0 + uint32(i))
		w.mem(opI64Store, valueBits)
	}
	// The batch's length, and the box's address and length.
	w.lget(hpBatch)
	w.op(opI32WrapI64)
	w.lget(g.pos)
	w.mem(opI64Store, 8)
	if g.h.Publishes {
		w.lget(hpBox)
		w.op(opI32WrapI64)
		w.lget(g.bptr)
		w.mem(opI32Store, 0)
	}
	w.lget(hpBox)
	w.op(opI32WrapI64)
	w.lget(g.pos)
	w.op(opI32WrapI64)
	w.mem(opI32Store, 4)
	// The memory charge.
	w.lget(hpCharged)
	w.op(opI32WrapI64)
	w.lget(hpCharged)
	w.op(opI32WrapI64)
	w.mem(opI64Load, 0)
	w.lget(hpCharge)
	w.op(opI64Add)
	if len(g.h.Guards) > 0 {
		w.lget(g.gcharge)
		w.op(opI64Add)
	}
	w.mem(opI64Store, 0)
	w.i64Const(0)
	w.op(opReturn)
}

// Guarded publishes. A publish of a topic whose subscribers guard their
// handlers (`on T(t) if t.f == id`) runs the guards in the publisher's
// run (vm/guard.go), and the guest answers the commonest case, a ring of
// guards of one shape that one index covers, with one lookup
// (vm/guardfast.go). The guest lays that lookup's answers out as a plain
// table (vm.Machine.GuardTables): for each key of a dense range, the
// guard bytes a publish sends. A handler compiled whole publishes such a
// topic by reading the table: it takes the guards' steps (GuardSteps
// each) from its fuel, checks that the table is valid and is the one it
// was compiled for (the count of subscribers, the field compared), that
// the interpreter's stack already has room for the guards' frame above
// the handler's (the interpreter would grow it), looks the field's value
// up (a key outside the range gets the bytes of the guards that always
// hold), and appends uvarint(topic), the guard bytes and the payload, as
// publishGuarded sends them. It adds the guards' memory charges (per
// guard, the payload's length and the decoded struct's size) to the
// delivery's, and at its end hands back instead when those charges take
// the machine past its allowance: the interpreter would measure in this
// run, seeing the registers the guards left. Anything else (no table, a
// table made invalid by new parameters or a debugger, fuel short of the
// guards' steps) hands the delivery back, and the interpreter runs the
// guards as before.

// GuardSteps is vm's fieldEqSteps, the steps of one indexed guard; the
// gt… constants are the words of vm's guard table (guardfast.go). A test
// in package vm keeps them equal.
const (
	GuardSteps = 3
	gtValid    = 0
	gtSubs     = 1
	gtField    = 2
	gtMin      = 3
	gtKeys     = 4
	gtSize     = 5
	gtCharge   = 6
	gtBits     = 7
	GuardWords = 8
)

// GuardPub is what a handler compiled whole knows of a guarded topic it
// publishes: the number of its guarded subscribers (of the guard bits)
// and the payload field that the first subscriber's guard reads first.
type GuardPub struct {
	Subs, Field int
}

// maxGuardSubs bounds the guarded subscribers of a topic a compiled
// handler publishes (its guard bytes are copied inline).
const maxGuardSubs = 1 << 12

// guardPub returns what a compiled publish of guarded topic in.A needs,
// or false when it has no compiled form: the topic's fields are not
// scalars, or its first subscriber's guard does not start by reading an
// int or bool field of the payload.
func guardPub(img *image.Image, fn *image.Func, in image.Instr) (GuardPub, bool) {
	ks, ok := scalarStruct(img, img.Topics[in.A].Type)
	if !ok || in.B < 1 || int(in.B)+len(ks) > fn.FrameSize {
		return GuardPub{}, false
	}
	n, guard := 0, -1
	for _, inst := range img.Topics[in.A].Subscribers {
		if inst < 0 || inst >= len(img.Instances) || img.Instances[inst].Locus < 0 || img.Instances[inst].Locus >= len(img.Loci) {
			return GuardPub{}, false
		}
		for _, h := range img.Loci[img.Instances[inst].Locus].Handlers {
			if h.Topic == int(in.A) && h.Guard >= 0 {
				if n++; guard < 0 {
					guard = h.Guard
				}
			}
		}
	}
	if n == 0 || n > maxGuardSubs || guard >= len(img.Funcs) {
		return GuardPub{}, false
	}
	c := img.Funcs[guard].Code
	if len(c) == 0 || c[0].Op != image.OpField || c[0].B != 0 || c[0].C < 0 || int(c[0].C) >= len(ks) ||
		ks[c[0].C] == image.KindFloat {
		return GuardPub{}, false
	}
	return GuardPub{Subs: n, Field: int(c[0].C)}, true
}

// hdrWord pushes word i of the guard table at hdr (i64).
func (g *handlerGen) hdrWord(w *buffer, i int) {
	w.lget(g.hdr)
	w.mem(opI64Load, uint32(8*i))
}

// guards takes the steps of the guards of publish in (topic in.A, fields
// R[B]…), finds the topic's guard table and checks it, makes room for
// the guards' frame, and sets src to the guard bytes (nb of them) for the
// field's value; it stops wherever the interpreter must run the guards.
func (g *handlerGen) guards(w *buffer, in image.Instr, gp GuardPub, nb int) {
	w.charge(int64(GuardSteps * gp.Subs))
	// hdr = the topic's table, from the machine's guard tables.
	w.lget(hpGuards)
	w.op(opI64Eqz)
	w.stopIf()
	w.lget(hpGuards)
	w.op(opI32WrapI64)
	w.mem(opI64Load, uint32(8*(2+in.A)))
	w.op(opI32WrapI64)
	w.lset(g.hdr)
	w.lget(g.hdr)
	w.op(opI32Eqz)
	w.stopIf()
	g.hdrWord(w, gtValid)
	w.i64Const(1)
	w.op(opI64Ne)
	g.hdrWord(w, gtSubs)
	w.i64Const(int64(gp.Subs))
	w.op(opI64Ne)
	w.op(opI32Or)
	g.hdrWord(w, gtField)
	w.i64Const(int64(gp.Field))
	w.op(opI64Ne)
	w.op(opI32Or)
	w.stopIf()
	// The guards' frame, at high: the stack (a slice header at the
	// tables' word 0: its length at +8) must hold it already.
	w.lget(g.high)
	g.hdrWord(w, gtSize)
	w.op(opI64Add)
	w.lset(g.high)
	w.lget(g.high)
	w.lget(hpGuards)
	w.op(opI32WrapI64)
	w.mem(opI64Load, 0)
	w.op(opI32WrapI64)
	w.mem(opI64Load, 8)
	w.op(opI64GtS)
	w.stopIf()
	// src = bits + min(uint(key - min), keys) × nb
	w.lget(w.reg(in.B + int32(gp.Field)))
	g.hdrWord(w, gtMin)
	w.op(opI64Sub)
	w.lset(g.u)
	w.lget(g.u)
	g.hdrWord(w, gtKeys)
	w.lget(g.u)
	g.hdrWord(w, gtKeys)
	w.op(opI64LtU)
	w.op(opSelect)
	w.i64Const(int64(nb))
	w.op(opI64Mul)
	g.hdrWord(w, gtBits)
	w.op(opI64Add)
	w.op(opI32WrapI64)
	w.lset(g.src)
}

// copyBits copies the nb guard bytes at src to cur + off.
func (g *handlerGen) copyBits(w *buffer, off uint32, nb int) {
	i := 0
	for ; i+8 <= nb; i += 8 {
		w.lget(g.cur)
		w.lget(g.src)
		w.mem(opI64Load, uint32(i))
		w.mem(opI64Store, off+uint32(i))
	}
	for ; i < nb; i++ {
		w.lget(g.cur)
		w.lget(g.src)
		w.mem(opI32Load8U, uint32(i))
		w.mem(opI32Store8, off+uint32(i))
	}
}

// GuardTableWords are the gt… constants in order, then GuardWords, for
// package vm's test.
var GuardTableWords = []int{gtValid, gtSubs, gtField, gtMin, gtKeys, gtSize, gtCharge, gtBits, GuardWords}

// Runs of deliveries. The host hands a compiled handler a run of
// deliveries to one instance, queued one after the other, in one call of
// the handler's run export (HandlerManyExport), when nothing needs to
// see a delivery start or end (no journal, order or debugger: the
// consumer's loop that hands the guest several deliveries at once). The
// export calls the handler export once per delivery, in order, setting
// before each what the host sets before a call of its own (the fuel and
// given steps of a fresh delivery, the depth and height), and stops at
// the first delivery the handler hands back. So each delivery runs as it
// would on its own: its own steps and budget, its own charge added at
// its end (the next one reads it), its publishes appended after the
// previous one's (the batch's length, which each delivery's end sets, is
// where the next appends). The host publishes the batch after the call,
// in order. A handler that hands back delivery k (a fall-back, or a
// batch that would fill up) has written nothing of it: deliveries 0…k-1
// have ended as they would have one by one, k and those after it have
// not begun.
//
// The run export takes ManyParams i64 parameters: the handler export's
// slots, then the address of the run's list, its count of deliveries, the
// batch, the box, the charge counter, the charge of the payload's struct
// (the export adds each payload's length), the guard tables, the fuel
// of a delivery (the locus's budget, at most a poll slice) and the
// handler's frame size (the height). The list is a progress word (i64,
// the deliveries that have ended, which the export keeps up to date so
// that the host knows them even if the call fails) followed by each
// payload after its length (u32). It returns the deliveries that ended.

// ManyParams is the number of parameters of a run export.
const ManyParams = 10

// HandlerManyExport returns the export name of the run export of
// p.Handlers[i].
func HandlerManyExport(i int) string { return "m" + strconv.Itoa(i) }

// compileMany writes the body of a run export whose handler export is
// function fn.
func compileMany(w *buffer, fn uint32) {
	const (
		slots, list, count, batch, box, charged, charge, guards, fuel, height = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
		j, n, pos, p                                                          = 10, 11, 12, 13
	)
	w.u32(2)
	w.u32(3)
	w.byte(typeI64)
	w.u32(1)
	w.byte(typeI32)
	// p = list + 8, past the progress word (0: the host wrote it).
	w.lget(list)
	w.op(opI32WrapI64)
	w.i32Const(8)
	w.op(opI32Add)
	w.lset(p)
	w.op(opBlock)
	w.byte(0x40)
	w.op(opLoop)
	w.byte(0x40)
	w.lget(j)
	w.lget(count)
	w.op(opI64GeS)
	w.op(opBrIf)
	w.u32(1)
	w.lget(p)
	w.mem(opI32Load, 0)
	w.op(opI64ExtendI32U)
	w.lset(n)
	// What the host sets before a call.
	w.lget(fuel)
	w.op(opGlobalSet)
	w.u32(globalFuel)
	w.lget(fuel)
	w.op(opGlobalSet)
	w.u32(globalGiven)
	w.i64Const(1)
	w.op(opGlobalSet)
	w.u32(globalDepth)
	w.lget(height)
	w.op(opGlobalSet)
	w.u32(globalHeight)
	w.lget(slots)
	w.lget(p)
	w.i32Const(4)
	w.op(opI32Add)
	w.op(opI64ExtendI32U)
	w.lget(n)
	w.lget(batch)
	w.lget(box)
	w.lget(charged)
	w.lget(n)
	w.lget(charge)
	w.op(opI64Add)
	w.lget(guards)
	w.lget(pos)
	w.op(opCall)
	w.u32(fn)
	// Handed back (0 with stop set; anything else is not a handler's
	// end either).
	w.i64Const(0)
	w.op(opI64Ne)
	w.op(opGlobalGet)
	w.u32(globalStop)
	w.i64Const(0)
	w.op(opI64Ne)
	w.op(opI32Or)
	w.op(opBrIf)
	w.u32(1)
	// pos = the batch's length the delivery left; one more ended.
	w.lget(batch)
	w.op(opI32WrapI64)
	w.mem(opI64Load, 8)
	w.lset(pos)
	w.lget(j)
	w.i64Const(1)
	w.op(opI64Add)
	w.lset(j)
	w.lget(list)
	w.op(opI32WrapI64)
	w.lget(j)
	w.mem(opI64Store, 0)
	w.lget(p)
	w.i32Const(4)
	w.op(opI32Add)
	w.lget(n)
	w.op(opI32WrapI64)
	w.op(opI32Add)
	w.lset(p)
	w.op(opBr)
	w.u32(0)
	w.op(opEnd)
	w.op(opEnd)
	w.i64Const(0)
	w.op(opGlobalSet)
	w.u32(globalDepth)
	w.lget(j)
	w.op(opEnd)
}
