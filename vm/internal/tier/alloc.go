package tier

import "github.com/hale-lang/hale/codegen/image"

// Allocation in compiled code: the arena (docs/design.md §7,
// "binary-trees").
//
// A compiled function may make enum values (new.enum) whose values are
// ints, floats, bools or enums, and return an enum. It makes them in an
// arena: a bump-allocated range of the guest's memory that the guest
// owns and Go's collector does not scan, laid out exactly as the
// interpreter lays out its own (a Value, then the enumObj header, then
// the values), so that compiled readers and the guest read either alike.
// Enum values are immutable, so a copy cannot be told from the original:
// when an arena value reaches the interpreter (a compiled function called
// by it returns one), the guest copies it into Go's heap, and when
// control is back in the interpreter nothing refers to the arena, which
// starts empty at the next call. A region (a loop compiled on its own)
// keeps arena values in its locals only between a call that returns one
// and the compiled calls that read it: at its loop headers no register
// it wrote holds anything but a scalar (regionFlow's write-back rule),
// so each header empties the arena again, and a loop that makes a tree
// per iteration uses the room of one tree.
//
// Each new.enum charges the memory account exactly what the interpreter
// charges. When the charge calls for a measure (the interpreter would
// measure right after it), or the arena is full, compiled code hands the
// call back with StopAlloc: a function called by the interpreter is run
// again by the interpreter (the guest restores the charge counter; the
// function made nothing but values), and a region leaves at the call,
// with the charge counter and the steps as they were before it, so that
// the interpreter runs the call and measures where it always does.
//
// Compiled code reaches the arena and the accounts through the alloc
// global: the address of the guest's allocation block, whose words
// (Alloc… offsets) the guest sets before each call.
const (
	AllocPtr       = 0  // the arena's next free byte
	AllocEnd       = 8  // the arena's end
	AllocBase      = 16 // the arena's start (a region's header resets AllocPtr to it)
	AllocCharged   = 24 // the address of the machine's charge counter (int64)
	AllocAllowance = 32 // the address of its allowance (int64)
	AllocConsts    = 40 // the address of the machine's constants ([]Value's data)
	AllocFull      = 48 // set to 1 by compiled code when the arena was full
	AllocBack      = 56 // set to 1 by a region that left at a call handed back (allocReturn)
	AllocSize      = 64 // the block's size
)

// GlobalAlloc is the global that holds the allocation block's address.
const GlobalAlloc = "alloc"

// StopAlloc is the stop global's value when compiled code hands a call
// back because a measure is due or the arena is full; any other reason
// stops with 1.
const StopAlloc = 2

// The value layout compiled allocation writes (vm/value; a test in
// package vm keeps them equal): an enum's Value, its enumObj header
// (type, first value's address, count, Sizer mark), then its values.
const (
	enumTyp        = 0
	enumMark       = 24
	enumHeaderSize = 32
	kindEnum       = int64(image.KindEnum)
)

// ArenaNodeSize is the arena bytes a variant of n values takes: its Value,
// its header and its values.
func ArenaNodeSize(n int) int64 { return valueSize + enumHeaderSize + valueSize*int64(n) }

// ArenaCharge is what the interpreter charges a variant of n values
// (vm/value.SizeObjectHeader + n * vm/value.SizeSlot).
func ArenaCharge(n int) int64 { return enumHeaderSize + valueSize*int64(n) }

// isEnum reports whether t is an enum type of img.
func isEnum(img *image.Image, t image.TypeRef) bool {
	return t >= 0 && int(t) < len(img.Types) && img.Types[t].Kind == image.KindEnum
}

// unitVariant reports whether constant k is a variant without values:
// compiled code loads it as the address of the constant's Value.
func unitVariant(img *image.Image, k image.Const) bool {
	if !isEnum(img, k.Type) {
		return false
	}
	vs := img.Types[k.Type].Variants
	return k.Variant >= 0 && k.Variant < len(vs) && len(vs[k.Variant].Fields) == 0
}

// arenaVariant reports whether new.enum with constant c has a compiled
// form: a variant with values, each an int, a float, a bool or an enum
// (a string or a container would put a Go heap pointer made by compiled
// code where the collector must see it).
func arenaVariant(img *image.Image, c int32) bool {
	if c < 0 || int(c) >= len(img.Consts) {
		return false
	}
	k := img.Consts[c]
	if k.Kind != image.KindEnum || !isEnum(img, k.Type) {
		return false
	}
	vs := img.Types[k.Type].Variants
	if k.Variant < 0 || k.Variant >= len(vs) || len(vs[k.Variant].Fields) == 0 || len(vs[k.Variant].Fields) > 64 {
		return false
	}
	for _, ft := range vs[k.Variant].Fields {
		if !scalarType(ft) && !isEnum(img, ft) {
			return false
		}
	}
	return true
}

// makesEnums reports whether f has a new.enum.
func makesEnums(f *image.Func) bool {
	for _, in := range f.Code {
		if in.Op == image.OpNewEnum {
			return true
		}
	}
	return false
}

// arenaCall reports whether in calls a compiled function that allocates
// or returns an enum: a region compiles it only when its analysis allows
// (analyzeRegion).
func arenaCall(img *image.Image, p *Plan, in image.Instr) bool {
	return in.Op == image.OpCall && p.Compiled[in.B] && (p.Allocs[in.B] || p.Result[in.B] == Enum)
}

// allocBlock pushes the allocation block's address (i32).
func (w *buffer) allocBlock() {
	w.op(opGlobalGet)
	w.u32(globalAlloc)
	w.op(opI32WrapI64)
}

// stopWith hands the call back with stop code c (see stop).
func (w *buffer) stopWith(c int64) {
	w.i64Const(c)
	w.op(opGlobalSet)
	w.u32(globalStop)
	w.i64Const(0)
	w.op(opReturn)
}

// loadUnit loads unit variant constant k as the address of the machine's
// constant Value (m.consts[k]).
func (w *buffer) loadUnit(k int32) {
	w.allocBlock()
	w.mem(opI64Load, AllocConsts)
	w.i64Const(int64(k) * valueSize)
	w.op(opI64Add)
}

// newEnum compiles new.enum in: it bumps the arena (handing the call back
// when it is full), writes the Value, the header and the values (each
// from its register: a scalar's kind and bits, an enum's Value copied
// from the address its register holds), charges the account as the
// interpreter does and hands the call back when that calls for a
// measure. It leaves the new Value's address on the stack. addr is an
// i32 local, t1 and t2 i64 locals, all free here.
func (w *buffer) newEnum(img *image.Image, in image.Instr, reg func(int32) uint32, addr, t1, t2 uint32) {
	k := img.Consts[in.C]
	fields := img.Types[k.Type].Variants[k.Variant].Fields
	n := len(fields)
	local := func(op byte, l uint32) { w.op(op); w.u32(l) }
	// p = ptr; ptr += size, or stop when past the end.
	w.allocBlock()
	w.mem(opI64Load, AllocPtr)
	local(opLocalTee, t1)
	w.i64Const(ArenaNodeSize(n))
	w.op(opI64Add)
	local(opLocalTee, t2)
	w.allocBlock()
	w.mem(opI64Load, AllocEnd)
	w.op(opI64GtU)
	w.op(opIf)
	w.byte(0x40)
	w.allocBlock()
	w.i64Const(1)
	w.mem(opI64Store, AllocFull)
	w.stopWith(StopAlloc)
	w.op(opEnd)
	w.allocBlock()
	local(opLocalGet, t2)
	w.mem(opI64Store, AllocPtr)
	local(opLocalGet, t1)
	w.op(opI32WrapI64)
	local(opLocalSet, addr)
	store := func(at uint32, value func()) {
		local(opLocalGet, addr)
		value()
		w.mem(opI64Store, at)
	}
	konst := func(v int64) func() { return func() { w.i64Const(v) } }
	hdr := uint32(valueSize)             // the header's offset
	vals := hdr + uint32(enumHeaderSize) // the values' offset
	store(valueKind, konst(kindEnum))    // the Value
	store(valueBits, konst(int64(uint64(k.Variant)|enumBoxed)))
	store(valuePtr, func() { local(opLocalGet, t1); w.i64Const(int64(hdr)); w.op(opI64Add) })
	store(hdr+enumTyp, func() { // the enum's *Type, as its constant's Value holds it
		w.allocBlock()
		w.mem(opI64Load, AllocConsts)
		w.op(opI32WrapI64)
		w.mem(opI64Load, uint32(in.C)*valueSize+valuePtr)
	})
	store(hdr+enumVals, func() { local(opLocalGet, t1); w.i64Const(int64(vals)); w.op(opI64Add) })
	store(hdr+enumLen, konst(int64(n)))
	store(hdr+enumMark, konst(0))
	for i, ft := range fields {
		at := vals + uint32(i)*valueSize
		r := in.B + int32(i)
		if isEnum(img, ft) {
			// Copy the Value at the register's address.
			for _, off := range []uint32{valueKind, valueBits, valuePtr} {
				local(opLocalGet, addr)
				local(opLocalGet, reg(r))
				w.op(opI32WrapI64)
				w.mem(opI64Load, off)
				w.mem(opI64Store, at+off)
			}
			continue
		}
		store(at+valueKind, konst(int64(kindOfScalar(ft))))
		store(at+valueBits, func() {
			local(opLocalGet, reg(r))
			if ft == image.TBool {
				w.i64Const(0) // as value.Bool makes it: 0 or 1
				w.op(opI64Ne)
				w.op(opI64ExtendI32U)
			}
		})
		store(at+valuePtr, konst(0))
	}
	// charged += the charge; a measure is due past the allowance.
	w.allocBlock()
	w.mem(opI64Load, AllocCharged)
	w.op(opI32WrapI64)
	local(opLocalTee, addr)
	local(opLocalGet, addr)
	w.mem(opI64Load, 0)
	w.i64Const(ArenaCharge(n))
	w.op(opI64Add)
	local(opLocalTee, t2)
	w.mem(opI64Store, 0)
	local(opLocalGet, t2)
	w.allocBlock()
	w.mem(opI64Load, AllocAllowance)
	w.op(opI32WrapI64)
	w.mem(opI64Load, 0)
	w.op(opI64GtS)
	w.op(opIf)
	w.byte(0x40)
	w.stopWith(StopAlloc)
	w.op(opEnd)
	local(opLocalGet, t1)
}

// allocSave keeps, before the segment of a region's call of an
// allocating function is charged, the steps taken (in t1) and the charge
// counter (in t2), which allocReturn restores when the call hands back.
func (w *buffer) allocSave(t1, t2 uint32) {
	w.stepsTaken()
	w.op(opLocalSet)
	w.u32(t1)
	w.allocBlock()
	w.mem(opI64Load, AllocCharged)
	w.op(opI32WrapI64)
	w.mem(opI64Load, 0)
	w.op(opLocalSet)
	w.u32(t2)
}

// allocReturn follows a region's call of an allocating function at pc:
// when the callee handed the call back for want of a measure or of room
// (StopAlloc), the region goes on as if it had not called: the stop is
// cleared, the charge counter and the steps are as allocSave kept them,
// and the region leaves at the call, which the interpreter runs (the
// block's AllocBack, 1 + the steps the call took, tells the guest so,
// which then does not try the call compiled again).
func (w *buffer) allocReturn(rg *regionInfo, pc int, t1, t2 uint32) {
	w.op(opGlobalGet)
	w.u32(globalStop)
	w.i64Const(StopAlloc)
	w.op(opI64Eq)
	w.op(opIf)
	w.byte(0x40)
	w.i64Const(0)
	w.op(opGlobalSet)
	w.u32(globalStop)
	w.allocBlock()
	w.mem(opI64Load, AllocCharged)
	w.op(opI32WrapI64)
	w.op(opLocalGet)
	w.u32(t2)
	w.mem(opI64Store, 0)
	// AllocBack: 1 + the steps the call took before it handed back.
	w.allocBlock()
	w.stepsTaken()
	w.op(opLocalGet)
	w.u32(t1)
	w.op(opI64Sub)
	w.i64Const(1)
	w.op(opI64Add)
	w.mem(opI64Store, AllocBack)
	w.op(opGlobalGet)
	w.u32(globalGiven)
	w.op(opLocalGet)
	w.u32(t1)
	w.op(opI64Sub)
	w.op(opGlobalSet)
	w.u32(globalFuel)
	w.regionExit(rg, pc)
	w.op(opEnd)
}

// stepsTaken pushes the steps the call has taken (the steps handed out
// less the fuel left).
func (w *buffer) stepsTaken() {
	w.op(opGlobalGet)
	w.u32(globalGiven)
	w.op(opGlobalGet)
	w.u32(globalFuel)
	w.op(opI64Sub)
}

// arenaReset empties the arena at a region's loop header, where no
// register the region wrote holds an enum (see above).
func (w *buffer) arenaReset() {
	w.allocBlock()
	w.allocBlock()
	w.mem(opI64Load, AllocBase)
	w.mem(opI64Store, AllocPtr)
}
