package tier

import (
	"errors"
	"math"
	"slices"
	"strconv"

	"github.com/hale-lang/hale/codegen/image"
)

// The module's interface with its host. The module imports
// ImportModule.ImportRefill(fuel i64) -> i64, which the compiled code
// calls when its fuel runs below zero: it returns the fuel refilled (at
// least zero), or a negative number to stop the call (the budget is used
// up, or the run was interrupted), and, when a region runs an
// instruction in place (region.go), GuestModule.GuestStep(arg i64, steps
// i64) -> i64, the interpreter guest's own export, which runs the batch
// of consecutive instructions arg names (StepArg: the first pc and the
// count) of the region's function on the frame, steps being those the
// call has taken up to and including the batch's last (GlobalGiven less
// GlobalFuel): 0 to go on, anything else to stop, and, when compiled
// code calls one of std::math's functions the guest computes
// (MathBuiltin), GuestModule.GuestMath(builtin i64, x i64, y i64) -> i64,
// the guest's export that runs the interpreter's own function on those
// bits (y is 0 for a function of one). The module exports each entry function
// f as Export(f), taking its parameters as i64 and returning its result as
// an i64 (see Kind), and three mutable i64 globals the host sets before a
// call: GlobalFuel (steps the code may take before asking for more),
// GlobalGiven (the steps handed out so far, fuel included: the host
// keeps it so at every refill),
// GlobalDepth (Hale frames already active), GlobalHeight (registers
// already in use on the interpreter's value stack), GlobalStop (0), and
// GlobalLog and GlobalLogEnd: the undo log, and GlobalLogBase, where the
// log starts (a region resets GlobalLog to it when it commits in place).
//
// The undo log makes writes safe to hand back: before compiled code
// overwrites 8 bytes of guest memory (a list element's or a struct
// field's bits, a list's for-loop count), it appends their address and
// old contents, 8 bytes each, at GlobalLog in guest memory and advances
// it; it stops when GlobalLog would pass GlobalLogEnd (the last address
// an entry may start at). When the call is handed back, the host writes
// the old contents back, last entry first, so that the interpreter runs
// the call again from the same memory.
//
// Compiled code never executes a wasm trap: when it must hand the call
// back to the interpreter, it sets GlobalStop to 1 and returns, and every
// caller returns at once when it finds GlobalStop set after a call. (A
// wasm trap would do, but wazero builds a stack trace for it: a trap
// 100,000 frames deep took 0.17 s where returning takes 0.04 s.) The host
// reads GlobalStop after the call.
const (
	ImportModule  = "hale_tier"
	ImportRefill  = "refill"
	GlobalFuel    = "fuel"
	GlobalDepth   = "depth"
	GlobalHeight  = "height"
	GlobalStop    = "stop"
	GlobalLog     = "log"
	GlobalLogEnd  = "log_end"
	GlobalCommit  = "commit"
	GlobalGiven   = "given"
	GlobalLogBase = "log_base"
	GuestModule   = "hale_guest"
	GuestMemory   = "memory"
	GuestStep     = "hale_step"
	GuestMath     = "hale_math"
)

// Export returns the export name of compiled function f.
func Export(f int) string { return "f" + strconv.Itoa(f) }

// Limits: compiled code stops (and the interpreter runs the call) before
// reaching the interpreter's own limits (vm.MaxDepth, vm.MaxStack; a test
// keeps them equal).
const (
	MaxDepth = 100_000
	MaxStack = 1 << 21
)

// Compile returns the WebAssembly module of p's compiled functions, or nil
// when p has no entry. img must be valid and p its plan.
func Compile(img *image.Image, p *Plan) ([]byte, error) {
	if !p.HasEntries() {
		return nil, nil
	}
	if len(p.Compiled) != len(img.Funcs) {
		return nil, errors.New("tier: plan does not match image")
	}
	// Regions: analysed again (NewPlan kept only those that compile).
	regions := make([]*regionInfo, len(p.Regions))
	step := false // some region runs an instruction in place
	for i, r := range p.Regions {
		info, ok := analyzeRegion(img, p, r)
		if !ok {
			return nil, errors.New("tier: " + img.Funcs[r.Func].Name + ": region does not compile")
		}
		regions[i] = info
		step = step || slices.Contains(info.inplace, true)
	}
	// Function indices: the imports are 0 (refill), then the guest's step
	// and its math, each when imported; compiled functions follow in
	// image order.
	imports := uint32(1)
	if step {
		imports++
	}
	funcMath := imports
	usesMath := callsMath(img, p)
	if usesMath {
		imports++
	}
	index := make([]uint32, len(img.Funcs))
	var funcs []int
	kinds := make([][]image.Kind, len(img.Funcs))
	memory := false
	for f, ok := range p.Compiled {
		if ok {
			index[f] = imports + uint32(len(funcs))
			funcs = append(funcs, f)
			if usesMemory(img, &img.Funcs[f]) {
				k, ok := access(img, &img.Funcs[f])
				if !ok {
					return nil, errors.New("tier: " + img.Funcs[f].Name + ": list and struct access not compiled")
				}
				kinds[f], memory = k, true
			}
		}
	}
	memory = memory || len(regions) > 0 || len(p.Handlers) > 0
	// Types: 0 is refill's (i64) -> i64; type 1+n is n i64 parameters to
	// one i64 result.
	maxParams := 2
	for _, f := range funcs {
		maxParams = max(maxParams, img.Funcs[f].NumParams)
	}
	if len(p.Handlers) > 0 {
		maxParams = max(maxParams, HandlerParams, ManyParams)
	}
	if usesMath {
		maxParams = max(maxParams, 3)
	}
	var mod buffer
	mod.bytes([]byte("\x00asm\x01\x00\x00\x00"))

	var sec buffer
	sec.u32(uint32(maxParams + 2))
	for n := -1; n <= maxParams; n++ {
		np := n
		if n < 0 {
			np = 1
		}
		sec.byte(0x60)
		sec.u32(uint32(np))
		for range np {
			sec.byte(typeI64)
		}
		sec.u32(1)
		sec.byte(typeI64)
	}
	mod.section(1, &sec)

	sec.reset()
	nimp := imports
	if memory {
		nimp++
	}
	sec.u32(nimp)
	sec.name(ImportModule)
	sec.name(ImportRefill)
	sec.byte(0x00) // func
	sec.u32(0)
	if step {
		sec.name(GuestModule)
		sec.name(GuestStep)
		sec.byte(0x00) // func
		sec.u32(1 + 2) // (pc, steps) -> i64
	}
	if usesMath {
		sec.name(GuestModule)
		sec.name(GuestMath)
		sec.byte(0x00) // func
		sec.u32(1 + 3) // (builtin, x, y) -> i64
	}
	if memory {
		sec.name(GuestModule)
		sec.name(GuestMemory)
		sec.byte(0x02) // memory
		sec.byte(0x00) // no maximum
		sec.u32(0)
	}
	mod.section(2, &sec)

	sec.reset()
	sec.u32(uint32(len(funcs) + len(regions) + 2*len(p.Handlers)))
	for _, f := range funcs {
		sec.u32(uint32(1 + img.Funcs[f].NumParams))
	}
	for range regions {
		sec.u32(1 + 2) // (regs, out) -> pc
	}
	for range p.Handlers {
		sec.u32(1 + HandlerParams)
	}
	for range p.Handlers {
		sec.u32(1 + ManyParams)
	}
	mod.section(3, &sec)

	sec.reset()
	sec.u32(numGlobals)
	for range numGlobals {
		sec.byte(typeI64)
		sec.byte(0x01) // mutable
		sec.byte(opI64Const)
		sec.s64(0)
		sec.byte(opEnd)
	}
	mod.section(6, &sec)

	sec.reset()
	var entries []int
	for _, f := range funcs {
		if p.Entry[f] {
			entries = append(entries, f)
		}
	}
	globals := []string{GlobalFuel, GlobalDepth, GlobalHeight, GlobalStop, GlobalLog, GlobalLogEnd, GlobalCommit, GlobalGiven, GlobalLogBase, GlobalAlloc}
	sec.u32(uint32(len(entries) + len(regions) + 2*len(p.Handlers) + len(globals)))
	for _, f := range entries {
		sec.name(Export(f))
		sec.byte(0x00)
		sec.u32(index[f])
	}
	for i := range regions {
		sec.name(RegionExport(i))
		sec.byte(0x00)
		sec.u32(imports + uint32(len(funcs)+i))
	}
	handler0 := imports + uint32(len(funcs)+len(regions)) // d0's function index
	for i := range p.Handlers {
		sec.name(HandlerExport(i))
		sec.byte(0x00)
		sec.u32(handler0 + uint32(i))
	}
	for i := range p.Handlers {
		sec.name(HandlerManyExport(i))
		sec.byte(0x00)
		sec.u32(handler0 + uint32(len(p.Handlers)+i))
	}
	for g, name := range globals {
		sec.name(name)
		sec.byte(0x03)
		sec.u32(uint32(g))
	}
	mod.section(7, &sec)

	sec.reset()
	sec.u32(uint32(len(funcs) + len(regions) + 2*len(p.Handlers)))
	body := buffer{funcMath: funcMath, allocs: p.Allocs}
	for _, f := range funcs {
		body.reset()
		if err := compileFunc(&body, img, &img.Funcs[f], index, kinds[f], nil); err != nil {
			return nil, err
		}
		sec.u32(uint32(len(body.b)))
		sec.bytes(body.b)
	}
	for _, rg := range regions {
		body.reset()
		if err := compileFunc(&body, img, &img.Funcs[rg.Func], index, nil, rg); err != nil {
			return nil, err
		}
		sec.u32(uint32(len(body.b)))
		sec.bytes(body.b)
	}
	for i := range p.Handlers {
		body.reset()
		body.hnd = newHandlerGen(img, &p.Handlers[i])
		err := compileFunc(&body, img, &img.Funcs[p.Handlers[i].Func], index, nil, nil)
		body.hnd = nil
		if err != nil {
			return nil, err
		}
		sec.u32(uint32(len(body.b)))
		sec.bytes(body.b)
	}
	for i := range p.Handlers {
		body.reset()
		compileMany(&body, handler0+uint32(i))
		sec.u32(uint32(len(body.b)))
		sec.bytes(body.b)
	}
	mod.section(10, &sec)
	return mod.b, nil
}

// Global indices.
const (
	globalFuel = iota
	globalDepth
	globalHeight
	globalStop
	globalLog
	globalLogEnd
	globalCommit
	globalGiven
	globalLogBase
	globalAlloc
	numGlobals
)

// funcStep is the function index of the guest's step (GuestStep).
const funcStep = 1

// callsMath reports whether any code Compile compiles (a compiled
// function, a region's function, a handler compiled whole) calls one of
// std::math's functions that the guest computes (MathBuiltin), so that
// the module imports GuestMath only then.
func callsMath(img *image.Image, p *Plan) bool {
	calls := func(f int) bool {
		for _, in := range img.Funcs[f].Code {
			if in.Op == image.OpCallB {
				if ok, _ := MathBuiltin(image.Builtin(in.B)); ok {
					return true
				}
			}
		}
		return false
	}
	for f, ok := range p.Compiled {
		if ok && calls(f) {
			return true
		}
	}
	for _, r := range p.Regions {
		if calls(r.Func) {
			return true
		}
	}
	for _, h := range p.Handlers {
		if calls(h.Func) {
			return true
		}
	}
	return false
}

// compileFunc writes the body of one function. Its registers are its
// first locals (the parameters, then FrameSize-NumParams more), followed
// by the block selector pc and an address (i32) and three i64
// temporaries. kinds are access's findings (nil when f reads no list or
// struct).
//
// The code is cut into segments at every jump target and after every
// jump, call and return; a segment runs straight through, so it is
// charged its instruction count when it starts. Segment k sits right
// after the end of block k, inside blocks k+1…: a forward jump to segment
// j is a br out of block j, and a backward jump sets pc and goes back to
// the loop around all blocks, whose br_table dispatches on pc. A function
// with no backward jump has no loop and no table.
func compileFunc(w *buffer, img *image.Image, f *image.Func, index []uint32, kinds []image.Kind, rg *regionInfo) error {
	code := f.Code
	// A function's code is all of it; a region's, its loop (lo..hi)
	// then one segment per pc it leaves to (exits, in the order of
	// outs), each writing back the registers and returning that pc.
	lo, hi := 0, len(code)-1
	if rg != nil {
		lo, hi = rg.Header, rg.End
	}
	var outs []int // a region's pcs outside it that it leaves to
	if rg != nil {
		if _, ok := rg.out[hi+1]; ok {
			outs = append(outs, hi+1) // the fall-through past the end comes first
		}
		for pc := range rg.out {
			if (pc < lo || pc > hi) && pc != hi+1 {
				outs = append(outs, pc)
			}
		}
		slices.Sort(outs[min(1, len(outs)):])
		if len(outs) > 0 && outs[0] != hi+1 {
			slices.Sort(outs)
		}
	}
	isExit := func(pc int) bool { return rg != nil && rg.exit[pc-lo] }
	isHeader := func(pc int) bool { return rg != nil && rg.headers[pc-lo] }
	isInPlace := func(pc int) bool { return rg != nil && rg.inplace[pc-lo] }
	isAllocCall := func(pc int) bool { return rg != nil && rg.allocAt != nil && rg.allocAt[pc-lo] }
	kindAt := func(pc int) image.Kind {
		if rg != nil {
			return rg.kinds[pc-lo]
		}
		return kinds[pc]
	}
	leader := make([]bool, len(code)+1)
	leader[lo] = true
	back := rg != nil
	// A region's batches: consecutive in-place instructions, run in
	// one call of the guest's step. batchAt[pc] is the count of the
	// batch starting at pc, batchEnd[pc] whether it is a batch's last.
	batchAt, batchEnd := map[int]int{}, map[int]bool{}
	if rg != nil {
		for _, b := range batches(img, rg) {
			batchAt[b[0]] = b[1]
			batchEnd[b[0]+b[1]-1] = true
		}
	}
	for pc := lo; pc <= hi; pc++ {
		in := code[pc]
		switch {
		case isExit(pc):
			leader[pc] = true
			leader[pc+1] = true
		case rg != nil && in.Op == image.OpPublish:
			// It may leave the region, before its segment is charged.
			leader[pc] = true
		case isAllocCall(pc):
			// It may leave the region (alloc.go), before its segment
			// is charged.
			leader[pc] = true
			leader[pc+1] = true
		case isInPlace(pc):
			// A batch ends its segment: the steps the guest is handed
			// are those charged up to the batch's last instruction.
			if batchEnd[pc] {
				leader[pc+1] = true
			}
		case isJump(in.Op):
			if int(in.C) >= lo && int(in.C) <= hi {
				leader[in.C] = true
			}
			leader[pc+1] = true
			if int(in.C) <= pc {
				back = true
			}
		case in.Op == image.OpCall, in.Op == image.OpRet, in.Op == image.OpRetVoid:
			leader[pc+1] = true
		}
	}
	seg := map[int]int{} // pc -> its segment (a region's outside pcs included)
	var starts []int     // segment -> its first pc
	for pc := lo; pc <= hi; pc++ {
		if leader[pc] {
			starts = append(starts, pc)
		}
		seg[pc] = len(starts) - 1
	}
	starts = append(starts, hi+1) // so that segment k ends at starts[k+1]
	nseg := len(starts) - 1
	for _, pc := range outs {
		seg[pc] = nseg
		nseg++
	}

	regs := uint32(f.FrameSize)
	w.off, w.rb = 0, nil
	if rg != nil {
		w.off = 2
	} else if w.hnd != nil {
		w.off = HandlerParams
	}
	pcLocal, addr := regs+w.off, regs+w.off+1
	t0, t1, t2 := regs+w.off+2, regs+w.off+3, regs+w.off+4
	w.outAt, w.outN, w.outKey = addr, t0, t1

	// Locals beyond the parameters.
	groups := len(w.b) // the byte of the count of local groups (< 128)
	if extra := f.FrameSize - f.NumParams; rg != nil || w.hnd != nil {
		w.u32(3)
		w.u32(regs)
		w.byte(typeI64)
	} else if extra > 0 {
		w.u32(3)
		w.u32(uint32(extra))
		w.byte(typeI64)
	} else {
		w.u32(2)
	}
	w.u32(2)
	w.byte(typeI32)
	w.u32(3)
	w.byte(typeI64)
	if rg != nil && len(rg.dirty) > 0 {
		// A flag per register that may be dirty (typeDirty).
		w.b[groups] += 1
		w.u32(uint32(len(rg.dirty)))
		w.byte(typeI32)
		w.dirtyBase = t2 + 1
	}
	if rg != nil && rg.publishes {
		w.regionBatchLocals(img, groups, t2+1+uint32(len(rg.dirty)))
	}
	if rg != nil && rg.anyFast {
		// regionFast's four addresses.
		w.b[groups] += 1
		w.u32(4)
		w.byte(typeI32)
		w.fastL = t2 + 1 + uint32(len(rg.dirty))
		if rg.publishes {
			w.fastL += 7
		}
	}
	if w.hnd != nil {
		w.hnd.declare(w, groups, t2+1)
	}

	if w.hnd != nil {
		w.hnd.prologue(w)
	} else if rg == nil {
		// Prologue: count the frame, and stop when the interpreter would
		// run out of frames or registers.
		w.globalAdd(globalDepth, 1)
		w.globalAdd(globalHeight, int64(f.FrameSize))
		w.op(opGlobalGet)
		w.u32(globalDepth)
		w.i64Const(MaxDepth - 1)
		w.op(opI64GeS)
		w.op(opGlobalGet)
		w.u32(globalHeight)
		w.i64Const(MaxStack)
		w.op(opI64GtS)
		w.op(opI32Or)
		w.stopIf()
	} else {
		w.regionEntry(rg)
	}

	// Open the loop (when needed) and the blocks: block nseg-1 outermost.
	if back {
		w.op(opLoop)
		w.byte(0x40)
	}
	first := 1
	if back {
		first = 0
	}
	for k := nseg - 1; k >= first; k-- {
		w.op(opBlock)
		w.byte(0x40)
	}
	if back {
		w.op(opLocalGet)
		w.u32(pcLocal)
		w.op(opBrTable)
		w.u32(uint32(nseg))
		for k := range nseg {
			w.u32(uint32(k))
		}
		w.u32(0)
		w.op(opEnd) // block 0: segment 0 follows
	}

	// branch goes from inside segment cur's code (with extra ifs open) to
	// the start of segment j.
	cur := 0
	branch := func(j int, extra uint32) {
		if j > cur {
			w.op(opBr)
			w.u32(uint32(j-cur-1) + extra)
			return
		}
		w.i32Const(int32(j))
		w.op(opLocalSet)
		w.u32(pcLocal)
		w.op(opBr)
		w.u32(uint32(nseg-1-cur) + extra)
	}
	// cond consumes an i32 condition: if it holds, go to segment j.
	cond := func(j int) {
		if j > cur {
			w.op(opBrIf)
			w.u32(uint32(j - cur - 1))
			return
		}
		w.op(opIf)
		w.byte(0x40)
		branch(j, 1)
		w.op(opEnd)
	}
	get := func(r int32) { w.op(opLocalGet); w.u32(w.reg(r)) }
	set := func(r int32) { w.op(opLocalSet); w.u32(w.reg(r)) }
	getF := func(r int32) { get(r); w.op(opF64ReinterpretI64) }
	setF := func(r int32) { w.op(opI64ReinterpretF64); set(r) }
	local := func(op byte, l uint32) { w.op(op); w.u32(l) }

	for pc := lo; pc <= hi; pc++ {
		in := code[pc]
		if leader[pc] {
			cur = seg[pc]
			if pc > lo {
				// Close the block whose end starts this segment.
				w.op(opEnd)
			}
			if isHeader(pc) {
				w.regionCommit(rg, pc)
				if rg.allocAt != nil {
					w.arenaReset()
				}
			}
			if isExit(pc) {
				w.regionExit(rg, pc)
				continue
			}
			if rg != nil && in.Op == image.OpPublish {
				w.regionPubRoom(rg, pc, in)
			}
			if isAllocCall(pc) {
				w.allocSave(t1, t2)
			}
			w.charge(int64(starts[cur+1] - pc))
		}
		if isInPlace(pc) {
			// The first of a batch runs it.
			if n := batchAt[pc]; n > 0 {
				w.regionFast(img, rg, pc, code[pc:pc+n])
			}
			continue
		}
		if w.hnd != nil && w.hnd.op(w, pc, in) {
			continue
		}
		if rg != nil && in.Op == image.OpPublish {
			w.regionPublish(in)
			continue
		}
		if rg != nil && len(rg.dirty) > 0 {
			// Compiled code writes a register that may be dirty: its
			// flag is set (before: the write may branch; a stop before
			// it writes hands the call back anyway). A void call and
			// assert leave their register as it was.
			if d := writes(img, in); d >= 0 && !(in.Op == image.OpCall && img.Funcs[in.B].Result == image.TVoid) &&
				!(in.Op == image.OpCallB && image.Builtin(in.B) == image.BuiltinAssert) && !isAllocCall(pc) {
				if k, ok := rg.dirty[d]; ok {
					w.i32Const(1)
					w.op(opLocalSet)
					w.u32(w.dirtyBase + uint32(k))
				}
			}
		}
		switch in.Op {
		case image.OpNop:
		case image.OpMove:
			get(in.B)
			set(in.A)
		case image.OpNewEnum:
			w.newEnum(img, in, w.reg, addr, t1, t2)
			set(in.A)
		case image.OpLoadK:
			k := img.Consts[in.B]
			if k.Kind == image.KindEnum {
				w.loadUnit(in.B)
				set(in.A)
				break
			}
			if k.Kind == image.KindFloat {
				w.i64Const(int64(math.Float64bits(k.Float)))
			} else {
				w.i64Const(k.Int)
			}
			set(in.A)
		case image.OpLoadInt:
			w.i64Const(int64(in.B))
			set(in.A)

		case image.OpAddInt, image.OpSubInt, image.OpAddIntK:
			get(in.B)
			local(opLocalSet, t0)
			if in.Op == image.OpAddIntK {
				w.i64Const(int64(in.C))
			} else {
				get(in.C)
			}
			local(opLocalSet, t1)
			local(opLocalGet, t0)
			local(opLocalGet, t1)
			if in.Op == image.OpSubInt {
				w.op(opI64Sub)
				local(opLocalSet, t2)
				// (a^b)&(s^a) < 0
				local(opLocalGet, t0)
				local(opLocalGet, t1)
				w.op(opI64Xor)
				local(opLocalGet, t2)
				local(opLocalGet, t0)
				w.op(opI64Xor)
				w.op(opI64And)
			} else {
				w.op(opI64Add)
				local(opLocalTee, t2)
				// (s^a)&(s^b) < 0
				local(opLocalGet, t0)
				w.op(opI64Xor)
				local(opLocalGet, t2)
				local(opLocalGet, t1)
				w.op(opI64Xor)
				w.op(opI64And)
			}
			w.i64Const(0)
			w.op(opI64LtS)
			w.stopIf()
			local(opLocalGet, t2)
			set(in.A)
		case image.OpMulInt:
			get(in.B)
			local(opLocalTee, t0)
			get(in.C)
			local(opLocalTee, t1)
			w.op(opI64Mul)
			local(opLocalSet, t2)
			// Two factors in -2^31..2^31-1 cannot overflow: checked
			// with adds and compares, it spares the common product the
			// division below. Each x + 2^31, taken unsigned, is under
			// 2^32 exactly when x is in that range (a sum that wraps is
			// not).
			local(opLocalGet, t0)
			w.i64Const(1 << 31)
			w.op(opI64Add)
			local(opLocalGet, t1)
			w.i64Const(1 << 31)
			w.op(opI64Add)
			w.op(opI64Or)
			w.i64Const(32)
			w.op(opI64ShrU)
			w.op(opI64Eqz)
			w.op(opI32Eqz)
			w.op(opIf)
			w.byte(0x40)
			// Overflowed: for a == -1, when b is MinInt64 (s/a would
			// trap); for any other a != 0, when s/a != b.
			local(opLocalGet, t0)
			w.i64Const(-1)
			w.op(opI64Eq)
			w.op(opIf)
			w.byte(0x40)
			local(opLocalGet, t1)
			w.i64Const(math.MinInt64)
			w.op(opI64Eq)
			w.stopIf()
			w.op(opElse)
			local(opLocalGet, t0)
			w.op(opI64Eqz)
			w.op(opI32Eqz)
			w.op(opIf)
			w.byte(0x40)
			local(opLocalGet, t2)
			local(opLocalGet, t0)
			w.op(opI64DivS)
			local(opLocalGet, t1)
			w.op(opI64Ne)
			w.stopIf()
			w.op(opEnd)
			w.op(opEnd)
			w.op(opEnd)
			local(opLocalGet, t2)
			set(in.A)
		case image.OpDivInt, image.OpRemInt:
			// The interpreter traps on a zero divisor, and on
			// MinInt64 / -1 and MinInt64 % -1: stop on a divisor of 0
			// or -1 (x / -1 is rare enough to leave to the
			// interpreter).
			get(in.C)
			w.i64Const(1)
			w.op(opI64Add)
			w.i64Const(1)
			w.op(opI64LeU)
			w.stopIf()
			get(in.B)
			get(in.C)
			if in.Op == image.OpDivInt {
				w.op(opI64DivS)
			} else {
				w.op(opI64RemS)
			}
			set(in.A)
		case image.OpNegInt:
			get(in.B)
			w.i64Const(math.MinInt64)
			w.op(opI64Eq)
			w.stopIf()
			w.i64Const(0)
			get(in.B)
			w.op(opI64Sub)
			set(in.A)

		case image.OpAndInt, image.OpOrInt, image.OpXorInt:
			get(in.B)
			get(in.C)
			w.op(wasmOp(in.Op))
			set(in.A)
		case image.OpShlInt, image.OpShrInt:
			// A count outside 0..63 traps in the interpreter (wasm
			// would take it modulo 64): stop and let it run the call.
			get(in.C)
			w.i64Const(63)
			w.op(opI64GtU)
			w.stopIf()
			get(in.B)
			get(in.C)
			w.op(wasmOp(in.Op))
			set(in.A)
		case image.OpNotInt:
			get(in.B)
			w.i64Const(-1)
			w.op(opI64Xor)
			set(in.A)

		case image.OpAddFloat, image.OpSubFloat, image.OpMulFloat, image.OpDivFloat:
			getF(in.B)
			getF(in.C)
			w.op(wasmOp(in.Op))
			setF(in.A)
		case image.OpNegFloat:
			getF(in.B)
			w.op(opF64Neg)
			setF(in.A)
		case image.OpNot:
			get(in.B)
			w.op(opI64Eqz)
			w.op(opI64ExtendI32U)
			set(in.A)

		case image.OpEqInt, image.OpNeInt, image.OpLtInt, image.OpLeInt:
			get(in.B)
			get(in.C)
			w.op(wasmOp(in.Op))
			w.op(opI64ExtendI32U)
			set(in.A)
		case image.OpEqFloat, image.OpNeFloat, image.OpLtFloat, image.OpLeFloat:
			getF(in.B)
			getF(in.C)
			w.op(wasmOp(in.Op))
			w.op(opI64ExtendI32U)
			set(in.A)

		case image.OpJump:
			branch(seg[int(in.C)], 0)
		case image.OpJumpT:
			get(in.A)
			w.op(opI64Eqz)
			w.op(opI32Eqz)
			cond(seg[int(in.C)])
		case image.OpJumpF:
			get(in.A)
			w.op(opI64Eqz)
			cond(seg[int(in.C)])
		case image.OpJLtInt, image.OpJLeInt, image.OpJEqInt, image.OpJNeInt:
			get(in.A)
			get(in.B)
			w.op(wasmOp(in.Op))
			cond(seg[int(in.C)])
		case image.OpJLtIntK, image.OpJLeIntK, image.OpJGtIntK, image.OpJGeIntK, image.OpJEqIntK, image.OpJNeIntK:
			get(in.A)
			w.i64Const(int64(in.B))
			w.op(wasmOp(in.Op))
			cond(seg[int(in.C)])
		case image.OpLoopRange:
			get(in.A)
			w.i64Const(1)
			w.op(opI64Add)
			w.op(opLocalTee)
			w.u32(w.reg(in.A))
			get(in.B)
			w.op(opI64LtS)
			cond(seg[int(in.C)])

		case image.OpCall:
			callee := &img.Funcs[in.B]
			for i := range callee.NumParams {
				get(in.A + int32(i))
			}
			w.op(opCall)
			w.u32(index[in.B])
			if isAllocCall(pc) {
				// Nothing is written before it is known that the
				// call did not hand back (alloc.go).
				local(opLocalSet, t0)
				w.allocReturn(rg, pc, t1, t2)
				w.returnIfStopped()
				if callee.Result != image.TVoid {
					local(opLocalGet, t0)
					set(in.A)
					if k, ok := rg.dirty[in.A]; ok {
						w.i32Const(1)
						w.op(opLocalSet)
						w.u32(w.dirtyBase + uint32(k))
					}
				}
				break
			}
			if rg != nil && callee.Result == image.TVoid {
				w.op(opDrop) // a region leaves R[A] as it was (nothing reads it)
			} else {
				set(in.A)
			}
			w.returnIfStopped()
		case image.OpRet, image.OpRetVoid: // never in a region (an exit)
			w.globalAdd(globalDepth, -1)
			w.globalAdd(globalHeight, -int64(f.FrameSize))
			if in.Op == image.OpRet {
				get(in.A)
			} else {
				w.i64Const(0)
			}
			w.op(opReturn)
		case image.OpCallB:
			compileBuiltin(w, image.Builtin(in.B), in.A, in.C, t0, t1)

		case image.OpLenList:
			get(in.B)
			w.op(opI32WrapI64)
			w.mem(opI64Load, listLen)
			set(in.A)
		case image.OpIndexList:
			w.elemAddr(in.B, in.C, addr)
			w.loadValue(addr, kindAt(pc))
			set(in.A)
		case image.OpForList:
			// if R[B+1] < len(R[B]) { R[A] = R[B][R[B+1]]; R[B+1]++; jump C }
			get(in.B + 1)
			get(in.B)
			w.op(opI32WrapI64)
			w.mem(opI64Load, listLen)
			w.op(opI64LtS)
			w.op(opIf)
			w.byte(0x40)
			w.elemAddr(in.B, in.B+1, addr)
			w.loadValue(addr, kindAt(pc))
			set(in.A)
			get(in.B + 1)
			w.i64Const(1)
			w.op(opI64Add)
			set(in.B + 1)
			branch(seg[int(in.C)], 1)
			w.op(opEnd)
		case image.OpSetIndexList:
			// The interpreter refuses to change a list a for loop
			// iterates over, and an index out of range.
			get(in.A)
			w.op(opI32WrapI64)
			w.mem(opI32Load, listIter)
			w.stopIf()
			w.elemAddr(in.A, in.B, addr)
			w.storeBits(addr, kindAt(pc), in.C)
		case image.OpField, image.OpSetField:
			r, fi := in.B, in.C
			if in.Op == image.OpSetField {
				r, fi = in.A, in.B
			}
			// A field the struct does not have (only a malformed image
			// asks for one) stops, where the interpreter would fail.
			get(r)
			w.op(opI32WrapI64)
			w.mem(opI64Load, structLen)
			w.i64Const(int64(fi))
			w.op(opI64LeU)
			w.stopIf()
			get(r)
			w.op(opI32WrapI64)
			w.mem(opI32Load, structField)
			w.i32Const(fi * valueSize)
			w.op(opI32Add)
			local(opLocalSet, addr)
			if in.Op == image.OpField {
				w.loadValue(addr, kindAt(pc))
				set(in.A)
			} else {
				w.storeBits(addr, kindAt(pc), in.C)
			}
		case image.OpJNeVariant:
			get(in.A)
			w.op(opI32WrapI64)
			w.mem(opI64Load, valueBits)
			w.i64Const(enumBoxed - 1)
			w.op(opI64And)
			w.i64Const(int64(in.B))
			w.op(opI64Ne)
			cond(seg[int(in.C)])
		case image.OpEnumField:
			// A unit variant carries no values, and an index past them
			// stops (the interpreter would fail).
			get(in.B)
			w.op(opI32WrapI64)
			w.mem(opI64Load, valueBits)
			w.i64Const(0)
			w.op(opI64GeS) // the boxed bit is the sign bit
			w.stopIf()
			get(in.B)
			w.op(opI32WrapI64)
			w.mem(opI32Load, valuePtr)
			local(opLocalTee, addr)
			w.mem(opI64Load, enumLen)
			w.i64Const(int64(in.C))
			w.op(opI64LeU)
			w.stopIf()
			local(opLocalGet, addr)
			w.mem(opI32Load, enumVals)
			w.i32Const(in.C * valueSize)
			w.op(opI32Add)
			local(opLocalSet, addr)
			w.loadValue(addr, kindAt(pc))
			set(in.A)
		case image.OpIterList, image.OpIterEnd:
			// The list's for-loop count, as BeginIter and EndIter.
			get(in.A)
			w.op(opI32WrapI64)
			local(opLocalSet, addr)
			w.logWrite(addr, listIter)
			local(opLocalGet, addr)
			local(opLocalGet, addr)
			w.mem(opI32Load, listIter)
			if in.Op == image.OpIterList {
				w.i32Const(1)
			} else {
				w.i32Const(-1)
			}
			w.op(opI32Add)
			w.mem(opI32Store, listIter)
			if in.Op == image.OpIterList {
				w.i64Const(0)
				set(in.A + 1)
			}
		default:
			return errors.New("tier: " + f.Name + ": no compiled form for " + in.Op.String())
		}
	}
	// A region's exits to pcs outside it.
	for _, pc := range outs {
		w.op(opEnd)
		w.regionExit(rg, pc)
	}
	// The last instruction of valid code does not fall through, but wasm
	// wants every path to end with a result.
	if back {
		w.op(opEnd) // the loop
	}
	w.stop()
	w.op(opEnd)
	return nil
}

// wasmOp returns the one wasm instruction at the heart of an arithmetic,
// comparison or conditional jump opcode (for jumps, the comparison). It is
// a switch, not a table, so that the guest, which links this package for
// NewPlan, carries none of the compiler.
func wasmOp(op image.Op) byte {
	switch op {
	case image.OpAddFloat:
		return opF64Add
	case image.OpSubFloat:
		return opF64Sub
	case image.OpMulFloat:
		return opF64Mul
	case image.OpDivFloat:
		return opF64Div
	case image.OpEqInt, image.OpJEqInt, image.OpJEqIntK:
		return opI64Eq
	case image.OpNeInt, image.OpJNeInt, image.OpJNeIntK:
		return opI64Ne
	case image.OpLtInt, image.OpJLtInt, image.OpJLtIntK:
		return opI64LtS
	case image.OpLeInt, image.OpJLeInt, image.OpJLeIntK:
		return opI64LeS
	case image.OpJGtIntK:
		return opI64GtS
	case image.OpJGeIntK:
		return opI64GeS
	case image.OpEqFloat:
		return opF64Eq
	case image.OpNeFloat:
		return opF64Ne
	case image.OpLtFloat:
		return opF64Lt
	case image.OpLeFloat:
		return opF64Le
	case image.OpAndInt:
		return opI64And
	case image.OpOrInt:
		return opI64Or
	case image.OpXorInt:
		return opI64Xor
	case image.OpShlInt:
		return opI64Shl
	case image.OpShrInt:
		return opI64ShrS
	}
	panic("tier: no wasm instruction for " + op.String())
}

// wasmBuiltinOp returns the wasm instruction of a float builtin.
func wasmBuiltinOp(b image.Builtin) byte {
	switch b {
	case image.BuiltinAbsFloat:
		return opF64Abs
	case image.BuiltinSqrt:
		return opF64Sqrt
	case image.BuiltinFloor:
		return opF64Floor
	}
	return opF64Ceil
}

// compileBuiltin writes R[a] = builtin b(R[c], R[c+1]).
func compileBuiltin(w *buffer, b image.Builtin, a, c int32, t0, t1 uint32) {
	get := func(r int32) { w.op(opLocalGet); w.u32(w.reg(r)) }
	switch b {
	case image.BuiltinAbsInt:
		get(c)
		w.i64Const(math.MinInt64)
		w.op(opI64Eq)
		w.stopIf()
		get(c)
		w.op(opLocalSet)
		w.u32(t0)
		// (x ^ (x>>63)) - (x>>63)
		w.op(opLocalGet)
		w.u32(t0)
		w.op(opLocalGet)
		w.u32(t0)
		w.i64Const(63)
		w.op(opI64ShrS)
		w.op(opLocalTee)
		w.u32(t1)
		w.op(opI64Xor)
		w.op(opLocalGet)
		w.u32(t1)
		w.op(opI64Sub)
	case image.BuiltinMinInt, image.BuiltinMaxInt:
		get(c)
		get(c + 1)
		get(c)
		get(c + 1)
		if b == image.BuiltinMinInt {
			w.op(opI64LtS)
		} else {
			w.op(opI64GtS)
		}
		w.op(opSelect)
	case image.BuiltinFloatOfInt:
		get(c)
		w.op(opF64ConvertI64S)
		w.op(opI64ReinterpretF64)
	case image.BuiltinAssert:
		// A failed assert traps: the interpreter runs the call. The
		// result (void) is 0.
		get(c)
		w.op(opI64Eqz)
		w.stopIf()
		w.i64Const(0)
	case image.BuiltinAbsFloat, image.BuiltinSqrt, image.BuiltinFloor, image.BuiltinCeil:
		get(c)
		w.op(opF64ReinterpretI64)
		w.op(wasmBuiltinOp(b))
		w.op(opI64ReinterpretF64)
	default:
		// std::math's others: the guest's own function (GuestMath).
		_, binary := MathBuiltin(b)
		w.i64Const(int64(b))
		get(c)
		if binary {
			get(c + 1)
		} else {
			w.i64Const(0)
		}
		w.op(opCall)
		w.u32(w.funcMath)
	}
	w.op(opLocalSet)
	w.u32(w.reg(a))
}

// elemAddr sets local addr to the address of element R[i] of the list
// R[l], and stops when the index is out of range (as the interpreter
// traps).
func (w *buffer) elemAddr(l, i int32, addr uint32) {
	get := func(r int32) { w.op(opLocalGet); w.u32(w.reg(r)) }
	get(i)
	get(l)
	w.op(opI32WrapI64)
	w.mem(opI64Load, listLen)
	w.op(opI64GeU)
	w.stopIf()
	get(l)
	w.op(opI32WrapI64)
	w.mem(opI32Load, listData)
	get(i)
	w.op(opI32WrapI64)
	w.i32Const(valueSize)
	w.op(opI32Mul)
	w.op(opI32Add)
	w.op(opLocalSet)
	w.u32(addr)
}

// loadValue pushes the value at addr as a register holds it: a scalar's
// bits, for a list or a struct its address, for an enum addr itself
// (after checking that the value is of that kind: anything else stops).
func (w *buffer) loadValue(addr uint32, k image.Kind) {
	if k == image.KindEnum {
		w.op(opLocalGet)
		w.u32(addr)
		w.mem(opI32Load8U, valueKind)
		w.i32Const(int32(k))
		w.op(opI32Ne)
		w.stopIf()
		w.op(opLocalGet)
		w.u32(addr)
		w.op(opI64ExtendI32U)
		return
	}
	if k == image.KindList || k == image.KindStruct {
		w.op(opLocalGet)
		w.u32(addr)
		w.mem(opI32Load8U, valueKind)
		w.i32Const(int32(k))
		w.op(opI32Ne)
		w.stopIf()
		w.op(opLocalGet)
		w.u32(addr)
		w.mem(opI64Load, valuePtr)
		return
	}
	w.op(opLocalGet)
	w.u32(addr)
	w.mem(opI64Load, valueBits)
}

// storeBits writes register r's bits into the scalar value of kind k at
// addr, logging the old bits first. A value of another kind there (only
// a list or struct still being filled could hold one) stops.
func (w *buffer) storeBits(addr uint32, k image.Kind, r int32) {
	w.op(opLocalGet)
	w.u32(addr)
	w.mem(opI32Load8U, valueKind)
	w.i32Const(int32(k))
	w.op(opI32Ne)
	w.stopIf()
	w.logWrite(addr, valueBits)
	w.op(opLocalGet)
	w.u32(addr)
	w.op(opLocalGet)
	w.u32(w.reg(r))
	w.mem(opI64Store, valueBits)
}

// logWrite appends to the undo log the address addr+off and the 8 bytes
// there, and stops when the log is full.
func (w *buffer) logWrite(addr uint32, off uint32) {
	w.op(opGlobalGet)
	w.u32(globalLog)
	w.op(opGlobalGet)
	w.u32(globalLogEnd)
	w.op(opI64GtU)
	w.stopIf()
	w.op(opGlobalGet)
	w.u32(globalLog)
	w.op(opI32WrapI64)
	w.op(opLocalGet)
	w.u32(addr)
	w.op(opI64ExtendI32U)
	w.i64Const(int64(off))
	w.op(opI64Add)
	w.mem(opI64Store, 0)
	w.op(opGlobalGet)
	w.u32(globalLog)
	w.op(opI32WrapI64)
	w.op(opLocalGet)
	w.u32(addr)
	w.mem(opI64Load, off)
	w.mem(opI64Store, 8)
	w.globalAdd(globalLog, 16)
}
