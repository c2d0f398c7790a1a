package tier

import (
	"slices"
	"strconv"

	"github.com/hale-lang/hale/codegen/image"
)

// A region is a loop of a function the interpreter runs (a handler, or a
// fn that is not compiled whole), compiled on its own: the instructions
// from a loop header (the target of a backward jump) to the last
// backward jump to it. The interpreter, arriving at the header, calls
// the region, which runs on the frame's registers (it reads them from the
// guest's memory) and returns the pc where the interpreter continues,
// having written the registers it changed into an out buffer the guest
// copies back. It leaves:
//
//   - at a jump out of the loop, or when the loop ends;
//   - at an instruction it has no compiled form for and cannot run in
//     place (a primitive, a print, a publish but batchedPublish's, a
//     call of an interpreted function, a return, a for loop over a list
//     beginning or ending): a side exit, where the interpreter executes
//     that instruction and goes on;
//   - at a loop header inside it (its own included), when its undo log
//     is past half full or the host refilled its fuel: a commit point.
//     The writes before it are then exactly what interpreting would have
//     done, so the interpreter drops the log and, arriving at the
//     header, calls the region again: a region's log stays bounded
//     however long the loop runs, and a fall-back re-runs at most what
//     followed the last commit.
//
// An instruction with no compiled form that stays in the frame (building
// a list, a struct, an enum or a string, reading a string or a container
// out of a list or a struct, push, a pure builtin: inPlaceOp) is run *in
// place*: compiled code writes its registers back (into the frame
// itself when the slot holds a scalar of the same kind, else to the out
// buffer), drops its undo log and calls the interpreter guest's export
// GuestStep(StepArg(pc, n), steps) for the batch of n consecutive
// in-place instructions from pc, which applies the out buffer to the
// frame and, for each instruction in turn, notes the commit (the
// interpreter resumes after it with its steps if the call falls back
// later) and executes it with the interpreter's own code; it answers 0
// to go on (compiled code then reloads the registers the batch wrote)
// or non-zero to stop (a trap, kept pending by the guest, or a call it
// did not expect, which ends the run).
//
// The out buffer is count n, then n pairs (register | kind<<32, bits);
// kind is Int, Bool or Float, or 0 for a register to leave as it is.
type Region struct {
	Func   int
	Header int // the loop header: where the interpreter calls it
	End    int // the last backward jump to Header
	// Publishes: the loop holds a publish, which the region compiles
	// (or exits at), so in-place batches do not weigh against it (vm's
	// bound on batches).
	Publishes bool
	// temps are the types of the function's temporaries on entry to
	// the header (tempTypes), nil when it has none.
	temps []image.TypeRef
}

// RegionExport returns the export name of region r.
func RegionExport(r int) string { return "r" + strconv.Itoa(r) }

// MaxRegionOut is the most registers a region writes back: the out
// buffer holds 1+2*MaxRegionOut words.
const MaxRegionOut = 256

// maxRegionLen bounds a region's instructions.
const maxRegionLen = 1 << 12

// typeEntry is a register's type where the region knows nothing of it
// (a temporary, a slot of another type than a scalar or a container):
// compiled code may read its bits as a scalar, as the interpreter does,
// but never as a container.
const typeEntry image.TypeRef = -3

// regionInfo is what the compiler needs of a region: which instructions
// are exits, the kinds of its memory accesses, the registers it reads
// at entry and with which kind check, and the registers to write back at
// each exit.
type regionInfo struct {
	Region
	exit    []bool // by pc - Header: leaves the region there
	inplace []bool // by pc - Header: runs in place (GuestStep)
	// types[pc - Header] is the type of the register an in-place
	// instruction writes (see inPlaceDest), which compiled code reloads.
	types   []image.TypeRef
	headers []bool // by pc - Header: a commit point
	kinds   []image.Kind
	// in are the registers loaded at entry: check is the kind their
	// Value must have (0: none, the bits are read as they are).
	in []regionIn
	// out[pc] are the registers written back when the region leaves at
	// pc (inside it or not), with their kinds.
	out map[int][]regionOut
	// dirty numbers the registers that may be dirty (typeDirty): their
	// flags are locals of compiled code.
	dirty map[int32]int
	// publishes: some publish is compiled (regionPublish).
	publishes bool
	// fast[pc - Header]: an in-place instruction that compiled code
	// runs itself when it can (fastInPlace), trying its step otherwise;
	// anyFast: some is.
	fast    []bool
	anyFast bool
	// allocAt[pc - Header]: a compiled call of an allocating function,
	// which leaves the region at pc when compiled code hands it back
	// (alloc.go); nil when there is none.
	allocAt []bool
}

// kindDirty is the kind of a dirty register in regionOut: written back
// as an int when its flag is set, else left as it is.
const kindDirty image.Kind = 255

type regionIn struct {
	reg   int32
	kind  Kind // Int, Bool, Float: its bits; List, Struct: its pointer; Enum: its address
	check bool // the Value's kind must match, or the region is not entered
}

type regionOut struct {
	reg  int32
	kind image.Kind
}

// regionOps are the opcodes a region compiles (with types that allow it,
// see regionFlow); every other one is a side exit.
func regionOp(img *image.Image, p *Plan, in image.Instr) bool {
	switch in.Op {
	case image.OpLoadK:
		switch img.Consts[in.B].Kind {
		case image.KindInt, image.KindBool, image.KindFloat:
			return true
		}
		return false
	case image.OpCallB:
		return builtins[image.Builtin(in.B)]
	case image.OpCall:
		return p.Compiled[in.B]
	case image.OpRet, image.OpRetVoid, image.OpIterList, image.OpIterEnd:
		return false
	case image.OpPublish:
		return batchedPublish(img, in)
	}
	return simpleOps[in.Op] || memOps[in.Op]
}

// batchedPublish reports whether publish in may be compiled in a region:
// its topic has no guards (the interpreter then only appends its record
// to the guest's batch) and its payload is all scalars (see
// regionPublish).
func batchedPublish(img *image.Image, in image.Instr) bool {
	if in.A < 0 || int(in.A) >= len(img.Topics) {
		return false
	}
	if _, ok := scalarStruct(img, img.Topics[in.A].Type); !ok {
		return false
	}
	for i := range img.Loci {
		for _, h := range img.Loci[i].Handlers {
			if h.Topic == int(in.A) && h.Guard >= 0 {
				return false
			}
		}
	}
	return true
}

// InPlaceCount returns how many instructions p's regions run in place
// (tests and measurements).
func InPlaceCount(img *image.Image, p *Plan) int {
	n := 0
	for _, r := range p.Regions {
		if info, ok := analyzeRegion(img, p, r); ok {
			for _, in := range info.inplace {
				if in {
					n++
				}
			}
		}
	}
	return n
}

// InPlaceBatches returns how many batches of two or more in-place
// instructions p's regions run (each one call of the guest's step) and
// the longest (tests and measurements).
func InPlaceBatches(img *image.Image, p *Plan) (n, longest int) {
	for _, r := range p.Regions {
		info, ok := analyzeRegion(img, p, r)
		if !ok {
			continue
		}
		for _, b := range batches(img, info) {
			if b[1] > 1 {
				n++
				longest = max(longest, b[1])
			}
		}
	}
	return n, longest
}

// batches returns region rg's batches as (first pc, count): runs of
// consecutive in-place instructions, none but the first a jump target,
// at most MaxBatch long.
func batches(img *image.Image, rg *regionInfo) [][2]int {
	code := img.Funcs[rg.Func].Code
	target := make([]bool, rg.End-rg.Header+1)
	for pc := rg.Header; pc <= rg.End; pc++ {
		if in := code[pc]; isJump(in.Op) && int(in.C) >= rg.Header && int(in.C) <= rg.End {
			target[int(in.C)-rg.Header] = true
		}
	}
	var out [][2]int
	for pc := rg.Header; pc <= rg.End; pc++ {
		if !rg.inplace[pc-rg.Header] {
			continue
		}
		n := len(out)
		if n > 0 && out[n-1][0]+out[n-1][1] == pc && !target[pc-rg.Header] && out[n-1][1] < MaxBatch {
			out[n-1][1]++
		} else {
			out = append(out, [2]int{pc, 1})
		}
	}
	return out
}

// InPlaceOp reports whether in may run in place in a region (see
// inPlaceOp): the guest checks it before it runs one. It is a table
// look-up (the guest checks every instruction of a batch).
func InPlaceOp(in *image.Instr) bool {
	return inPlaceOps[in.Op] && (in.Op != image.OpCallB || image.Builtin(in.B) != image.BuiltinPrint)
}

// inPlaceOps marks the opcodes inPlaceOp accepts (OpCallB for some of
// its builtins).
var inPlaceOps = func() (t [256]bool) {
	for op := range t {
		in := image.Instr{Op: image.Op(op)}
		if op == int(image.OpCallB) {
			in.B = int32(image.BuiltinPrint) + 1
		}
		t[op] = inPlaceOp(in)
	}
	return t
}()

// inPlaceOp reports whether in may run in place in a region: it has no
// compiled form (or its operands' types do not allow one), it stays in
// the frame (no call of interpreted code, no return, no jump, nothing
// through the host) and writes at most register inPlaceDest. The guest
// executes it with the interpreter's own code (vm.Machine.TierStep).
func inPlaceOp(in image.Instr) bool {
	switch in.Op {
	case image.OpMove, image.OpLoadK, image.OpRemFloat,
		image.OpConcatStr, image.OpConcatBytes, image.OpConcatList,
		image.OpEq, image.OpNe, image.OpEqStr, image.OpNeStr, image.OpLtStr, image.OpLeStr,
		image.OpFormat, image.OpNewList, image.OpNewMap, image.OpEmptyMap, image.OpNewStruct, image.OpNewEnum,
		image.OpIndexList, image.OpIndexMap, image.OpIndexStr, image.OpSetIndexList, image.OpSetIndexMap,
		image.OpField, image.OpSetField, image.OpEnumField,
		image.OpLenList, image.OpLenMap, image.OpLenStr, image.OpPush:
		return true
	case image.OpCallB:
		// Every builtin but print is pure (the others' failures are
		// traps).
		return image.Builtin(in.B) != image.BuiltinPrint
	}
	return false
}

// inPlaceDest is the register an in-place instruction writes, or -1.
func inPlaceDest(in image.Instr) int32 {
	switch in.Op {
	case image.OpPush, image.OpSetIndexList, image.OpSetIndexMap, image.OpSetField:
		return -1
	}
	return in.A
}

// findRegions appends to p.Regions the loops of f that compile.
func findRegions(img *image.Image, p *Plan, fi int) {
	f := &img.Funcs[fi]
	n := len(f.Code)
	if n == 0 || n*f.FrameSize > maxAccessWork || f.NumSlots > len(f.Locals) || f.NumSlots > f.FrameSize {
		return
	}
	end := make([]int, n)
	for i := range end {
		end[i] = -1
	}
	for pc, in := range f.Code {
		if isJump(in.Op) && int(in.C) <= pc && in.C >= 0 {
			end[in.C] = max(end[in.C], pc)
		}
	}
	work := 0 // the analysis's work on f so far, bounded as access's
	var temps [][]image.TypeRef
	for h := range n {
		if end[h] < 0 || end[h]-h+1 > maxRegionLen {
			continue
		}
		if work += (end[h] - h + 1) * f.FrameSize; work > 4*maxAccessWork {
			return
		}
		if temps == nil {
			temps = tempTypes(img, f)
		}
		r := Region{Func: fi, Header: h, End: end[h]}
		if h < len(temps) {
			r.temps = temps[h]
		}
		if _, ok := analyzeRegion(img, p, r); ok {
			r.Publishes = slices.ContainsFunc(f.Code[h:end[h]+1], func(in image.Instr) bool {
				return in.Op == image.OpPublish || in.Op == image.OpPublishAfter
			})
			p.Regions = append(p.Regions, r)
		}
	}
}

func scalarType(t image.TypeRef) bool {
	return t == image.TInt || t == image.TFloat || t == image.TBool
}

// kindOfScalar returns the kind of scalar type t.
func kindOfScalar(t image.TypeRef) image.Kind {
	switch t {
	case image.TInt:
		return image.KindInt
	case image.TFloat:
		return image.KindFloat
	}
	return image.KindBool
}

// regionState is what the analysis knows before an instruction: each
// register's type (typeEntry, typeConflict, or a TypeRef), whether the
// region may have written it, and the variants an enum may hold.
type regionState struct {
	types    []image.TypeRef
	written  []bool
	variants []uint64
}

func (s *regionState) clone() *regionState {
	return &regionState{append([]image.TypeRef(nil), s.types...), append([]bool(nil), s.written...), append([]uint64(nil), s.variants...)}
}

// typeScalarMix is a register written with different scalar types on
// different paths. A correct image never reads it before writing it
// again (every read has one type), so it is written back with its bits
// as an int: a scalar of any kind costs nothing to the memory measure.
const typeScalarMix image.TypeRef = -4

func mixable(t image.TypeRef) bool { return scalarType(t) || t == typeScalarMix }

// typeDirty is a register written (with a scalar) on some paths only,
// holding on the others a value of another kind that the frame holds
// (an in-place instruction's string or container): a correct image does
// not read it before writing it again, but the frame must get the bits
// that compiled code wrote, and keep its value on the other paths.
// Compiled code keeps a flag for it (set when it writes it, cleared when
// an in-place instruction commits), and writes it back, as an int, only
// when the flag is set.
const typeDirty image.TypeRef = -5

// join merges o into s and reports whether s changed: an entry type
// gives way to any other (a register the region has not written on a
// path holds, on that path, whatever the interpreter left: only a value
// of its declared type can be read later), two different scalar types
// mix, a scalar written on one path and a value the region did not
// write on the other is dirty, other different types conflict.
func (s *regionState) join(o *regionState) bool {
	changed := false
	for r := range s.types {
		a, b := s.types[r], o.types[r]
		aw, bw := s.written[r], o.written[r]
		t := a
		switch {
		case a == typeDirty || b == typeDirty:
			t = typeDirty
		case aw && !bw && mixable(a) && b != typeEntry && !mixable(b),
			bw && !aw && mixable(b) && a != typeEntry && !mixable(a):
			t = typeDirty
		case a == b, b == typeEntry:
		case a == typeEntry:
			t = b
		case a == typeConflict || b == typeConflict:
			t = typeConflict
		case mixable(a) && mixable(b):
			t = typeScalarMix
		default:
			t = typeConflict
		}
		if t != a {
			s.types[r], changed = t, true
		}
		if bw && !aw {
			s.written[r], changed = true, true
		}
		if u := s.variants[r] | o.variants[r]; u != s.variants[r] {
			s.variants[r], changed = u, true
		}
	}
	return changed
}

// analyzeRegion decides region r's exits and types. An instruction whose
// operands' types do not allow its compiled form becomes an exit and the
// analysis starts again; it fails when the header itself is an exit, or
// a register to write back has no one scalar type.
func analyzeRegion(img *image.Image, p *Plan, r Region) (*regionInfo, bool) {
	// A call of a function that returns an enum or allocates (alloc.go)
	// is compiled when the region still compiles with it; else the
	// region is analysed again with every such call a side exit, as
	// before functions allocated.
	if info, ok := analyzeRegionWith(img, p, r, true); ok {
		return info, true
	}
	return analyzeRegionWith(img, p, r, false)
}

// analyzeRegionWith is analyzeRegion, with the calls of allocating
// functions and of functions returning an enum compiled when allocCalls
// is set, else side exits.
func analyzeRegionWith(img *image.Image, p *Plan, r Region, allocCalls bool) (*regionInfo, bool) {
	f := &img.Funcs[r.Func]
	lo, hi := r.Header, r.End
	size := hi - lo + 1
	exit, inplace := make([]bool, size), make([]bool, size)
	// Compiled stores of pointers (fastInPlace) must not be undone after
	// a call into the guest that does not commit: no region that may
	// call the guest's math has them.
	fastOK := !reachesMath(img, p, r.Func, lo, hi, map[int]bool{})
	for pc := lo; pc <= hi; pc++ {
		in := f.Code[pc]
		if !regionOp(img, p, in) || !allocCalls && arenaCall(img, p, in) {
			if inPlaceOp(in) {
				inplace[pc-lo] = true
			} else {
				exit[pc-lo] = true
			}
		}
	}
	for tries := 0; tries <= min(2*size, 64); tries++ {
		if exit[0] {
			return nil, false
		}
		var allocs []bool
		if allocCalls {
			allocs = p.Allocs
		}
		info, bad := regionFlow(img, f, r, exit, inplace, fastOK, allocs)
		if bad == -2 {
			return nil, false
		}
		if bad >= 0 {
			// An instruction whose operands' types do not allow its
			// compiled form runs in place if it can; one that cannot
			// be run in place (its registers would not write back)
			// is an exit.
			if !inplace[bad-lo] && inPlaceOp(f.Code[bad]) {
				inplace[bad-lo] = true
			} else {
				inplace[bad-lo], exit[bad-lo] = false, true
			}
			continue
		}
		info.exit, info.inplace = exit, inplace
		for pc := lo; pc <= hi; pc++ {
			if in := f.Code[pc]; allocCalls && !exit[pc-lo] && in.Op == image.OpCall && p.Allocs[in.B] {
				if info.allocAt == nil {
					info.allocAt = make([]bool, size)
				}
				info.allocAt[pc-lo] = true
			}
		}
		return info, true
	}
	return nil, false
}

// regionFlow runs the forward analysis of a region with the exits given.
// It returns the pc of an instruction that must become an exit (its
// types do not allow its compiled form), -2 when the region does not
// compile, or -1 and what the compiler needs.
//
// allocs (nil: no call allocates) are the functions whose calls leave the
// region at the call when compiled code hands it back (alloc.go): the
// registers written so far must write back there, as at an exit.
func regionFlow(img *image.Image, f *image.Func, r Region, exit, inplace []bool, fastOK bool, allocs []bool) (*regionInfo, int) {
	lo, hi := r.Header, r.End
	size, regs := hi-lo+1, f.FrameSize
	typeOf := func(t image.TypeRef) *image.Type {
		if t < 0 || int(t) >= len(img.Types) {
			return nil
		}
		return &img.Types[t]
	}
	start := &regionState{types: make([]image.TypeRef, regs), written: make([]bool, regs), variants: make([]uint64, regs)}
	for i := range regs {
		start.types[i] = typeEntry
		start.variants[i] = anyVariant
		t := typeConflict
		switch {
		case i < f.NumSlots:
			t = f.Locals[i].Type
		case i-f.NumSlots < len(r.temps):
			t = r.temps[i-f.NumSlots]
		}
		if tt := typeOf(t); tt != nil {
			switch {
			case scalarType(t), tt.Kind == image.KindList, tt.Kind == image.KindStruct, tt.Kind == image.KindEnum:
				start.types[i] = t
			}
		}
	}
	states := make([]*regionState, size)
	outside := map[int]*regionState{} // the states at the pcs the region leaves to
	states[0] = start.clone()
	kinds := make([]image.Kind, size)
	work := []int{lo}
	queued := make([]bool, size)
	queued[0] = true
	headers := make([]bool, size)
	targets := make([]bool, size) // jump targets
	for pc := lo; pc <= hi; pc++ {
		in := f.Code[pc]
		if isJump(in.Op) && int(in.C) >= lo && int(in.C) <= hi {
			targets[int(in.C)-lo] = true
			if int(in.C) <= pc {
				headers[int(in.C)-lo] = true
			}
		}
	}
	reads := make([][]int32, size) // registers each compiled instruction reads
	types := make([]image.TypeRef, size)
	fast := make([]bool, size)
	for len(work) > 0 {
		pc := work[len(work)-1]
		work = work[:len(work)-1]
		queued[pc-lo] = false
		if exit[pc-lo] {
			continue
		}
		st := states[pc-lo].clone()
		t := st.types
		in := f.Code[pc]
		list := func(r int32) *image.Type { return typeOfKind(img, t[r], image.KindList) }
		strct := func(r int32) *image.Type { return typeOfKind(img, t[r], image.KindStruct) }
		// elem is the scalar type of an element or a field, or bad.
		elem := func(et image.TypeRef) bool { return scalarType(et) }
		write := func(r int32, ty image.TypeRef) {
			t[r] = ty
			st.written[r] = true
			st.variants[r] = anyVariant
		}
		var rd []int32
		if inplace[pc-lo] {
			// The guest runs it on the frame, after every register
			// written so far is written back: none is written from
			// then on, and compiled code reloads the one it writes (it
			// reads none of the others' locals: the guest reads the
			// frame).
			rt := inPlaceType(img, f, in, t, st.variants, typeOf)
			moved := anyVariant
			if in.Op == image.OpMove {
				moved = st.variants[in.B]
			}
			// An instruction compiled code may run itself
			// (fastInPlace) writes nothing back when it does: the
			// registers written so far
			// stay written (its step, when it falls to one, writes
			// them back, and later exits write them again from the
			// same locals), and it reads its index from its local.
			fast[pc-lo] = fastOK && fastInPlace(img, in, t)
			if fast[pc-lo] {
				if in.Op == image.OpIndexList {
					rd = []int32{in.C}
				}
			} else {
				clear(st.written)
			}
			if d := inPlaceDest(in); d >= 0 {
				if int(d) >= regs {
					return nil, -2
				}
				t[d] = rt
				st.written[d] = false
				st.variants[d] = moved
				types[pc-lo] = rt
			}
		} else {
			switch in.Op {
			case image.OpNop:
			case image.OpMove:
				if !scalarType(t[in.B]) && !moveToCall(img, f, r, exit, inplace, targets, pc, t[in.B], allocs) {
					return nil, pc
				}
				rd = []int32{in.B}
				write(in.A, t[in.B])
			case image.OpLoadK:
				switch img.Consts[in.B].Kind {
				case image.KindInt:
					write(in.A, image.TInt)
				case image.KindFloat:
					write(in.A, image.TFloat)
				default:
					write(in.A, image.TBool)
				}
			case image.OpLoadInt:
				write(in.A, image.TInt)
			case image.OpAddInt, image.OpSubInt, image.OpMulInt, image.OpDivInt, image.OpRemInt,
				image.OpAndInt, image.OpOrInt, image.OpXorInt, image.OpShlInt, image.OpShrInt:
				rd = []int32{in.B, in.C}
				write(in.A, image.TInt)
			case image.OpAddIntK, image.OpNegInt, image.OpNotInt:
				rd = []int32{in.B}
				write(in.A, image.TInt)
			case image.OpAddFloat, image.OpSubFloat, image.OpMulFloat, image.OpDivFloat:
				rd = []int32{in.B, in.C}
				write(in.A, image.TFloat)
			case image.OpNegFloat:
				rd = []int32{in.B}
				write(in.A, image.TFloat)
			case image.OpNot:
				rd = []int32{in.B}
				write(in.A, image.TBool)
			case image.OpEqInt, image.OpNeInt, image.OpLtInt, image.OpLeInt,
				image.OpEqFloat, image.OpNeFloat, image.OpLtFloat, image.OpLeFloat:
				rd = []int32{in.B, in.C}
				write(in.A, image.TBool)
			case image.OpJump:
			case image.OpJumpT, image.OpJumpF, image.OpJLtIntK, image.OpJLeIntK, image.OpJGtIntK, image.OpJGeIntK,
				image.OpJEqIntK, image.OpJNeIntK:
				rd = []int32{in.A}
			case image.OpJLtInt, image.OpJLeInt, image.OpJEqInt, image.OpJNeInt:
				rd = []int32{in.A, in.B}
			case image.OpLoopRange:
				rd = []int32{in.A, in.B}
				write(in.A, image.TInt)
			case image.OpCall:
				callee := &img.Funcs[in.B]
				for i := range callee.NumParams {
					a := in.A + int32(i)
					if int(a) >= regs {
						return nil, -2
					}
					pt := callee.Locals[i].Type
					if !scalarType(pt) && t[a] != pt {
						return nil, pc // a container of another (or no known) type
					}
					rd = append(rd, a)
				}
				if callee.Result != image.TVoid {
					write(in.A, callee.Result)
				}
			case image.OpCallB:
				b := image.Builtin(in.B)
				guestMath, binary := MathBuiltin(b)
				switch {
				case b == image.BuiltinAbsInt || b == image.BuiltinFloatOfInt || b == image.BuiltinAbsFloat ||
					b == image.BuiltinSqrt || b == image.BuiltinFloor || b == image.BuiltinCeil || b == image.BuiltinAssert,
					guestMath && !binary:
					rd = []int32{in.C}
				default:
					if int(in.C)+1 >= regs {
						return nil, -2
					}
					rd = []int32{in.C, in.C + 1}
				}
				switch b {
				case image.BuiltinAbsInt, image.BuiltinMinInt, image.BuiltinMaxInt:
					write(in.A, image.TInt)
				case image.BuiltinAssert:
					// Its result (none) is left as it was: nothing reads it.
				default:
					write(in.A, image.TFloat)
				}
			case image.OpIndexList, image.OpForList:
				l := list(in.B)
				if l == nil || !elem(l.Elem) {
					return nil, pc
				}
				kinds[pc-lo] = kindOfScalar(l.Elem)
				if in.Op == image.OpForList {
					if int(in.B)+1 >= regs {
						return nil, -2
					}
					rd = []int32{in.B, in.B + 1}
					write(in.A, l.Elem)
					write(in.B+1, image.TInt)
				} else {
					rd = []int32{in.B, in.C}
					write(in.A, l.Elem)
				}
			case image.OpSetIndexList:
				l := list(in.A)
				if l == nil || !elem(l.Elem) {
					return nil, pc
				}
				kinds[pc-lo] = kindOfScalar(l.Elem)
				rd = []int32{in.A, in.B, in.C}
			case image.OpField, image.OpSetField:
				sr, fi := in.B, in.C
				if in.Op == image.OpSetField {
					sr, fi = in.A, in.B
				}
				s := strct(sr)
				if s == nil || fi < 0 || int(fi) >= len(s.Fields) || !elem(s.Fields[fi].Type) {
					return nil, pc
				}
				kinds[pc-lo] = kindOfScalar(s.Fields[fi].Type)
				if in.Op == image.OpField {
					rd = []int32{in.B}
					write(in.A, s.Fields[fi].Type)
				} else {
					rd = []int32{in.A, in.C}
				}
			case image.OpLenList:
				if list(in.B) == nil {
					return nil, pc
				}
				rd = []int32{in.B}
				write(in.A, image.TInt)
			case image.OpPublish:
				// Each field's register holds a scalar of the field's
				// kind, as the record encodes it. Not at the header:
				// leaving there for want of room would re-enter the
				// region at once (the guest hands the batch over
				// first, but only when it batches).
				if pc == lo {
					return nil, pc
				}
				ks, _ := scalarStruct(img, img.Topics[in.A].Type)
				for i, k := range ks {
					a := in.B + int32(i)
					if a < 0 || int(a) >= regs {
						return nil, -2
					}
					if !scalarType(t[a]) || kindOfScalar(t[a]) != k {
						return nil, pc
					}
					rd = append(rd, a)
				}
			case image.OpJNeVariant:
				if e := typeOf(t[in.A]); e == nil || e.Kind != image.KindEnum {
					return nil, pc
				}
				rd = []int32{in.A}
			case image.OpEnumField:
				e := typeOf(t[in.B])
				if e == nil || e.Kind != image.KindEnum || in.C < 0 {
					return nil, pc
				}
				ft, one := enumFieldType(e, st.variants[in.B], in.C)
				if !one {
					return nil, pc
				}
				if !elem(ft) {
					return nil, pc
				}
				kinds[pc-lo] = kindOfScalar(ft)
				rd = []int32{in.B}
				write(in.A, ft)
			default:
				return nil, -2
			}
		}
		reads[pc-lo] = rd
		// Successors.
		var succ [2]int
		ns := 0
		switch {
		case in.Op == image.OpJump:
			succ[0], ns = int(in.C), 1
		case isJump(in.Op):
			succ[0], succ[1], ns = int(in.C), pc+1, 2
		default:
			succ[0], ns = pc+1, 1
		}
		for _, s := range succ[:ns] {
			if s < 0 || s >= len(f.Code)+1 {
				return nil, -2
			}
			o := st
			if in.Op == image.OpJNeVariant && int(in.C) != pc+1 && in.B >= 0 && in.B < 64 {
				o = st.clone()
				if s == pc+1 {
					o.variants[in.A] &= 1 << in.B
				} else {
					o.variants[in.A] &^= 1 << in.B
				}
			}
			if s < lo || s > hi {
				if old := outside[s]; old == nil {
					outside[s] = o.clone()
				} else {
					old.join(o)
				}
				continue
			}
			if states[s-lo] == nil {
				states[s-lo] = o.clone()
			} else if !states[s-lo].join(o) {
				continue
			}
			if !queued[s-lo] {
				queued[s-lo] = true
				work = append(work, s)
			}
		}
	}
	info := &regionInfo{Region: r, headers: headers, kinds: kinds, types: types, fast: fast, out: map[int][]regionOut{}}
	for pc := lo; pc <= hi; pc++ {
		info.anyFast = info.anyFast || fast[pc-lo] && inplace[pc-lo] && states[pc-lo] != nil
	}
	// The registers to write back at each exit: those the region may
	// have written on the way, each with one scalar type.
	outs := func(pc int, st *regionState) bool {
		var o []regionOut
		for reg, w := range st.written {
			if !w {
				continue
			}
			k := image.KindInt
			switch {
			case st.types[reg] == typeDirty:
				k = kindDirty
			case scalarType(st.types[reg]):
				k = kindOfScalar(st.types[reg])
			case !mixable(st.types[reg]):
				return false
			}
			o = append(o, regionOut{int32(reg), k})
		}
		if len(o) > MaxRegionOut {
			return false
		}
		info.out[pc] = o
		return true
	}
	for pc := lo; pc <= hi; pc++ {
		info.publishes = info.publishes || f.Code[pc].Op == image.OpPublish && !exit[pc-lo]
	}
	for pc := lo; pc <= hi; pc++ {
		st := states[pc-lo]
		if st == nil {
			continue
		}
		// A compiled publish leaves the region there when the batch has
		// no room (regionPubRoom).
		pub := f.Code[pc].Op == image.OpPublish && !exit[pc-lo]
		// A call that allocates leaves the region there when compiled
		// code hands it back (a measure is due, or the arena is full).
		alloc := allocs != nil && f.Code[pc].Op == image.OpCall && allocs[f.Code[pc].B] && !exit[pc-lo]
		if (exit[pc-lo] || headers[pc-lo] || inplace[pc-lo] || pub || alloc) && !outs(pc, st) {
			if exit[pc-lo] || pc == lo {
				return nil, -2
			}
			return nil, pc // a commit point or an in-place instruction here would not write back: make it an exit
		}
	}
	for pc, st := range outside {
		if !outs(pc, st) {
			return nil, -2
		}
	}
	// The registers that may be dirty, each with its flag (a local of
	// compiled code); a for loop's registers are written when it jumps
	// only, so one never is.
	info.dirty = map[int32]int{}
	for _, o := range info.out {
		for _, x := range o {
			if _, ok := info.dirty[x.reg]; !ok && x.kind == kindDirty {
				info.dirty[x.reg] = len(info.dirty)
			}
		}
	}
	for pc := lo; pc <= hi; pc++ {
		if in := f.Code[pc]; states[pc-lo] != nil && !exit[pc-lo] && !inplace[pc-lo] &&
			(in.Op == image.OpForList || in.Op == image.OpLoopRange) {
			if _, ok := info.dirty[in.A]; ok {
				return nil, -2
			}
			if _, ok := info.dirty[in.B+1]; ok && in.Op == image.OpForList {
				return nil, -2
			}
		}
	}
	// The registers read before the region writes them, found backwards
	// (an exit reads nothing: the interpreter goes on with the
	// registers as they are, or as written back).
	live := make([][]bool, size)
	for i := range live {
		live[i] = make([]bool, regs)
	}
	for changed := true; changed; {
		changed = false
		for pc := hi; pc >= lo; pc-- {
			if states[pc-lo] == nil || exit[pc-lo] {
				continue
			}
			in := f.Code[pc]
			next := make([]bool, regs)
			succ := []int{pc + 1}
			switch {
			case in.Op == image.OpJump:
				succ = []int{int(in.C)}
			case isJump(in.Op):
				succ = append(succ, int(in.C))
			}
			for _, s := range succ {
				if s >= lo && s <= hi {
					for reg, l := range live[s-lo] {
						next[reg] = next[reg] || l
					}
				}
			}
			// Written registers are dead above (a for loop writes its
			// element and index only when it jumps: keep them; an
			// in-place instruction's is reloaded).
			if inplace[pc-lo] {
				if d := inPlaceDest(in); d >= 0 {
					next[d] = false
				}
			} else if w := writes(img, in); w >= 0 && in.Op != image.OpForList && !(in.Op == image.OpCallB && image.Builtin(in.B) == image.BuiltinAssert) &&
				!(in.Op == image.OpCall && img.Funcs[in.B].Result == image.TVoid) {
				next[w] = false
			}
			for _, reg := range reads[pc-lo] {
				next[reg] = true
			}
			for reg := range next {
				if next[reg] != live[pc-lo][reg] {
					live[pc-lo] = next
					changed = true
					break
				}
			}
		}
	}
	// Load at entry every register the region reads or writes back (a
	// register written on one path only is written back with its entry
	// bits on the other). A live container must be of its kind.
	used := make([]bool, regs)
	for _, rd := range reads {
		for _, reg := range rd {
			used[reg] = true
		}
	}
	for _, o := range info.out {
		for _, x := range o {
			used[x.reg] = true
		}
	}
	for reg := range regs {
		if !used[reg] {
			continue
		}
		t := start.types[reg]
		in := regionIn{reg: int32(reg), kind: Int}
		if tt := typeOf(t); tt != nil {
			switch tt.Kind {
			case image.KindList:
				in.kind, in.check = List, true
			case image.KindStruct:
				in.kind, in.check = Struct, true
			case image.KindEnum:
				in.kind, in.check = Enum, true
			}
		}
		if (in.kind == List || in.kind == Struct) && !live[0][reg] {
			// Written (by compiled code or in place) before it is
			// read on every path: what the frame holds at entry does
			// not matter (a list the loop creates in place, not yet
			// created at the first entry).
			continue
		}
		if !in.check && live[0][reg] && scalarType(t) {
			in.check = true
			switch t {
			case image.TFloat:
				in.kind = Float
			case image.TBool:
				in.kind = Bool
			}
		}
		info.in = append(info.in, in)
	}
	return info, -1
}

// moveToCall reports whether the move at pc of a list or a struct of type
// ty only hands it to a compiled call: the call's first argument, in the
// same straight run of compiled instructions, which overwrites it with
// its scalar result. Compiled code then copies the address between its
// locals, and the frame, which holds the result after the call as
// interpreting leaves it, is never written back in between (no exit, no
// commit, no instruction in place), so it need not see the move: a
// call of a compiled function taking a struct or a list (fasta's
// next_random(g, …)) costs no trip into the guest.
//
// A call of an allocating function (allocs) may leave the region at the
// call, where the frame must hold the argument: never.
func moveToCall(img *image.Image, f *image.Func, r Region, exit, inplace, targets []bool, pc int, ty image.TypeRef, allocs []bool) bool {
	if typeOfKind(img, ty, image.KindList) == nil && typeOfKind(img, ty, image.KindStruct) == nil {
		return false
	}
	a := f.Code[pc].A
	for q := pc + 1; q <= r.End; q++ {
		in := f.Code[q]
		if targets[q-r.Header] || exit[q-r.Header] || inplace[q-r.Header] || isJump(in.Op) {
			return false
		}
		if in.Op == image.OpCall {
			callee := &img.Funcs[in.B]
			return in.A == a && callee.NumParams > 0 && callee.Locals[0].Type == ty && scalarType(callee.Result) &&
				!(allocs != nil && allocs[in.B])
		}
		if w := writes(img, in); w == a || in.Op == image.OpRet || in.Op == image.OpRetVoid {
			return false
		}
		// Anything reading a as a scalar is no correct code; the
		// instructions a run may hold are scalar ones.
	}
	return false
}

// inPlaceType is the type of the register in-place instruction in
// writes, as far as the region relies on it: what the instruction
// gives (a struct literal its type, an element its list's element type,
// a string a string), else the register's declared type when it is a
// typed slot, else typeConflict (compiled code may not use it).
func inPlaceType(img *image.Image, f *image.Func, in image.Instr, t []image.TypeRef, variants []uint64, typeOf func(image.TypeRef) *image.Type) image.TypeRef {
	known := func(r image.TypeRef) bool { return r >= 0 && int(r) < len(img.Types) && r != image.TVoid }
	var rt image.TypeRef = typeConflict
	switch in.Op {
	case image.OpMove:
		rt = t[in.B]
	case image.OpLoadK:
		switch img.Consts[in.B].Kind {
		case image.KindInt:
			rt = image.TInt
		case image.KindFloat:
			rt = image.TFloat
		case image.KindBool:
			rt = image.TBool
		case image.KindString:
			rt = image.TString
		case image.KindBytes:
			rt = image.TBytes
		case image.KindEnum:
			rt = img.Consts[in.B].Type
		}
	case image.OpRemFloat:
		rt = image.TFloat
	case image.OpEq, image.OpNe, image.OpEqStr, image.OpNeStr, image.OpLtStr, image.OpLeStr:
		rt = image.TBool
	case image.OpLenList, image.OpLenMap, image.OpLenStr, image.OpIndexStr:
		rt = image.TInt
	case image.OpConcatStr, image.OpFormat:
		rt = image.TString
	case image.OpConcatBytes:
		rt = image.TBytes
	case image.OpConcatList:
		if tt := typeOf(t[in.B]); tt != nil && tt.Kind == image.KindList && t[in.B] == t[in.C] {
			rt = t[in.B]
		}
	case image.OpNewStruct:
		if tt := typeOf(image.TypeRef(in.C)); tt != nil && tt.Kind == image.KindStruct {
			rt = image.TypeRef(in.C)
		}
	case image.OpIndexList:
		if tt := typeOf(t[in.B]); tt != nil && tt.Kind == image.KindList {
			rt = tt.Elem
		}
	case image.OpIndexMap:
		if tt := typeOf(t[in.B]); tt != nil && tt.Kind == image.KindMap {
			rt = tt.Elem
		}
	case image.OpField:
		if tt := typeOf(t[in.B]); tt != nil && tt.Kind == image.KindStruct && in.C >= 0 && int(in.C) < len(tt.Fields) {
			rt = tt.Fields[in.C].Type
		}
	case image.OpEnumField:
		if tt := typeOf(t[in.B]); tt != nil && tt.Kind == image.KindEnum && in.C >= 0 {
			if ft, one := enumFieldType(tt, variants[in.B], in.C); one {
				rt = ft
			}
		}
	}
	if !known(rt) && int(in.A) < f.NumSlots && in.A >= 0 {
		d := f.Locals[in.A].Type
		if tt := typeOf(d); tt != nil && (scalarType(d) || tt.Kind == image.KindList || tt.Kind == image.KindStruct || tt.Kind == image.KindEnum) {
			rt = d
		}
	}
	if !known(rt) {
		return typeConflict
	}
	return rt
}

// valueKindOf is the vm/value kind byte of a register kind.
func valueKindOf(k Kind) image.Kind {
	switch k {
	case Bool:
		return image.KindBool
	case Float:
		return image.KindFloat
	case List:
		return image.KindList
	case Struct:
		return image.KindStruct
	case Enum:
		return image.KindEnum
	}
	return image.KindInt
}

// regionEntry loads a region's registers from the interpreter's frame
// (parameter 0 is the address of its register 0) and stops, before any
// step, when one the region relies on is not of its kind.
func (w *buffer) regionEntry(rg *regionInfo) {
	if rg.publishes {
		w.regionBatchEntry()
	}
	base := func() { w.op(opLocalGet); w.u32(0); w.op(opI32WrapI64) }
	for _, in := range rg.in {
		at := uint32(in.reg) * valueSize
		if in.check {
			base()
			w.mem(opI32Load8U, at+valueKind)
			w.i32Const(int32(valueKindOf(in.kind)))
			w.op(opI32Ne)
			w.stopIf()
		}
		switch in.kind {
		case List, Struct:
			base()
			w.mem(opI64Load, at+valuePtr)
			w.op(opLocalTee)
			w.u32(w.reg(in.reg))
			w.op(opI64Eqz)
			w.stopIf()
		case Enum:
			w.op(opLocalGet)
			w.u32(0)
			w.i64Const(int64(at))
			w.op(opI64Add)
			w.op(opLocalSet)
			w.u32(w.reg(in.reg))
		default:
			base()
			w.mem(opI64Load, at+valueBits)
			w.op(opLocalSet)
			w.u32(w.reg(in.reg))
		}
	}
}

// regionCommit leaves the region at header pc, before charging it, when
// the undo log is past the commit mark (half full, or 0 once the host
// has refilled the fuel).
func (w *buffer) regionCommit(rg *regionInfo, pc int) {
	w.op(opGlobalGet)
	w.u32(globalLog)
	w.op(opGlobalGet)
	w.u32(globalCommit)
	w.op(opI64GtU)
	w.op(opIf)
	w.byte(0x40)
	w.regionExit(rg, pc)
	w.op(opEnd)
}

// regionExit writes the out buffer (parameter 1) for leaving at pc and
// returns pc.
func (w *buffer) regionExit(rg *regionInfo, pc int) {
	w.regionOut(rg, pc)
	w.i64Const(int64(pc))
	w.op(opReturn)
}

// MaxBatch bounds the in-place instructions of one batch: consecutive
// instructions of a straight run (none a jump target) that all run in
// place are handed to the guest's step in one call.
const MaxBatch = 64

// StepArg is the guest step's first argument for the batch of n
// in-place instructions from pc: pc in the low 32 bits, n-1 above.
func StepArg(pc, n int) int64 { return int64(pc) | int64(n-1)<<32 }

// SplitStepArg returns the first pc and the count of a step's first
// argument, or ok false when it names no batch StepArg makes.
func SplitStepArg(a int64) (pc, n int, ok bool) {
	if a < 0 || a>>32 >= MaxBatch {
		return 0, 0, false
	}
	return int(a & 0xffffffff), int(a>>32) + 1, true
}

// regionStep runs the batch of in-place instructions batch, the first
// at pc: it writes the registers back to the out buffer, drops the undo
// log (the guest commits: everything so far is final), calls the
// guest's step with the batch (StepArg) and the steps taken (charged up
// to the batch's last instruction included: the batch ends its
// segment), stops when it answers non-zero, and reloads the registers
// the batch wrote (each from its last writer in the batch). Nothing
// else compiled code holds is cached about a container: a list's length
// and elements, a struct's fields are read from memory at every access.
func (w *buffer) regionStep(img *image.Image, rg *regionInfo, pc int, batch []image.Instr) {
	w.regionOut(rg, pc)
	for _, k := range rg.dirty {
		w.i32Const(0)
		w.op(opLocalSet)
		w.u32(w.dirtyBase + uint32(k))
	}
	w.op(opGlobalGet)
	w.u32(globalLogBase)
	w.op(opGlobalSet)
	w.u32(globalLog)
	w.i64Const(StepArg(pc, len(batch)))
	w.stepsTaken()
	w.op(opCall)
	w.u32(funcStep)
	w.op(opI64Eqz)
	w.op(opI32Eqz)
	w.stopIf()
	if rg.publishes {
		w.regionBatchLoad()
	}
	for j, in := range batch {
		d := inPlaceDest(in)
		if d < 0 || slices.ContainsFunc(batch[j+1:], func(l image.Instr) bool { return inPlaceDest(l) == d }) {
			continue // writes nothing, or a later one writes d again
		}
		w.reloadInPlace(img, d, rg.types[pc+j-rg.Header])
	}
}

// reloadInPlace reloads register d, which an in-place instruction wrote
// with type rt, from the frame.
func (w *buffer) reloadInPlace(img *image.Image, d int32, rt image.TypeRef) {
	at := uint32(d) * valueSize
	base := func() { w.op(opLocalGet); w.u32(0); w.op(opI32WrapI64) }
	checkKind := func(k image.Kind) {
		base()
		w.mem(opI32Load8U, at+valueKind)
		w.i32Const(int32(k))
		w.op(opI32Ne)
		w.stopIf()
	}
	var k image.Kind
	if rt >= 0 && int(rt) < len(img.Types) {
		k = img.Types[rt].Kind
	}
	switch {
	case scalarType(rt):
		checkKind(kindOfScalar(rt))
		base()
		w.mem(opI64Load, at+valueBits)
		w.op(opLocalSet)
		w.u32(w.reg(d))
	case k == image.KindList || k == image.KindStruct:
		checkKind(k)
		base()
		w.mem(opI64Load, at+valuePtr)
		w.op(opLocalTee)
		w.u32(w.reg(d))
		w.op(opI64Eqz)
		w.stopIf()
	case k == image.KindEnum:
		checkKind(k)
		w.op(opLocalGet)
		w.u32(0)
		w.i64Const(int64(at))
		w.op(opI64Add)
		w.op(opLocalSet)
		w.u32(w.reg(d))
	default:
		// A string, a map, or a type the region does not rely on: its
		// bits, as the interpreter would read them as a scalar.
		base()
		w.mem(opI64Load, at+valueBits)
		w.op(opLocalSet)
		w.u32(w.reg(d))
	}
}

// regionOut writes back the registers written at pc. A register whose
// frame slot already holds a scalar of its kind is stored there
// directly (its bits: the slot holds no pointer before or after, so no
// write of the guest's Go code is bypassed, no write barrier owed); any
// other goes into the out buffer (parameter 1) for the guest to store
// with Go code: a count, then (register | kind<<32, bits) pairs. The
// frame then holds what the guest would have stored, so a commit or an
// exit is as exact as before, and a step whose registers all stay
// scalars of one kind hands the guest an empty buffer. The buffer's
// cursor is the address local (w.outAt) and its count the temporary
// w.outN, both free between instructions.
func (w *buffer) regionOut(rg *regionInfo, pc int) {
	if rg.publishes {
		w.regionBatchCommit()
	}
	out := func() { w.op(opLocalGet); w.u32(1); w.op(opI32WrapI64) }
	o := rg.out[pc]
	if len(o) == 0 {
		out()
		w.i64Const(0)
		w.mem(opI64Store, 0)
		return
	}
	local := func(op byte, l uint32) { w.op(op); w.u32(l) }
	out()
	w.i32Const(8)
	w.op(opI32Add)
	local(opLocalSet, w.outAt)
	w.i64Const(0)
	local(opLocalSet, w.outN)
	// add appends the register's entry, its key on the stack.
	add := func(r int32) {
		local(opLocalSet, w.outKey)
		local(opLocalGet, w.outAt)
		local(opLocalGet, w.outKey)
		w.mem(opI64Store, 0)
		local(opLocalGet, w.outAt)
		local(opLocalGet, w.reg(r))
		w.mem(opI64Store, 8)
		local(opLocalGet, w.outAt)
		w.i32Const(16)
		w.op(opI32Add)
		local(opLocalSet, w.outAt)
		local(opLocalGet, w.outN)
		w.i64Const(1)
		w.op(opI64Add)
		local(opLocalSet, w.outN)
	}
	for _, x := range o {
		if x.kind == kindDirty {
			// An int when its flag is set, else kind 0: left as it is.
			w.op(opLocalGet)
			w.u32(w.dirtyBase + uint32(rg.dirty[x.reg]))
			w.op(opI64ExtendI32U)
			w.i64Const(32)
			w.op(opI64Shl)
			w.i64Const(int64(x.reg))
			w.op(opI64Or)
			add(x.reg)
			continue
		}
		at := uint32(x.reg) * valueSize
		local(opLocalGet, 0)
		w.op(opI32WrapI64)
		w.mem(opI32Load8U, at+valueKind)
		w.i32Const(int32(x.kind))
		w.op(opI32Ne)
		w.op(opIf)
		w.byte(0x40)
		w.i64Const(int64(x.reg) | int64(x.kind)<<32)
		add(x.reg)
		w.op(opElse)
		local(opLocalGet, 0)
		w.op(opI32WrapI64)
		local(opLocalGet, w.reg(x.reg))
		if x.kind == image.KindBool {
			w.i64Const(0) // as value.Bool makes it: 0 or 1
			w.op(opI64Ne)
			w.op(opI64ExtendI32U)
		}
		w.mem(opI64Store, at+valueBits)
		w.op(opEnd)
	}
	out()
	local(opLocalGet, w.outN)
	w.mem(opI64Store, 0)
}

// A region's publishes. A publish of a topic without guards whose
// payload is all scalars (batchedPublish) only appends its record to the
// guest's publish batch when the interpreter runs it: compiled code
// appends the same bytes itself, with the emitter of handlers compiled
// whole (handlerGen.record), at the batch's end, which it keeps in a
// local. The batch's length (its []byte header's, and the box's: the
// guest's gateway keeps both) is written only where the region commits
// (regionOut: an exit, a commit point, a step in place), so a fall-back,
// which re-runs from the last commit, leaves the records appended since
// past the batch's end, where the interpreter's own publishes overwrite
// them. Where the record might not fit in the batch's capacity or might
// bring it to BatchFlush (the guest would then hand it to the host), and
// in a guest that does not batch (RegionOutBatch holds 0), the region
// leaves at the publish and the interpreter runs it.

// RegionOutBatch is the word of the out buffer that holds the address of
// the guest's publish batch (a []byte's header) and, in the next word,
// of its box (two uint32: the batch's address and length), or 0 when
// the guest does not batch; three more words follow (RegionOutWB): the
// out buffer is RegionOutWords words.
const (
	RegionOutBatch = 1 + 2*MaxRegionOut
	RegionOutWords = RegionOutBatch + 6
)

// regionBatch is a region's batch state in compiled code: the record
// emitter's locals (pub) and the addresses of the batch's header and
// box (i32 locals).
type regionBatch struct {
	pub      *handlerGen
	hdr, box uint32
}

// regionBatchLocals declares the batch's locals of a region that
// publishes, from local next on, in the local groups whose count byte is
// at w.b[groups].
func (w *buffer) regionBatchLocals(img *image.Image, groups int, next uint32) {
	w.b[groups] += 2
	w.u32(3)
	w.byte(typeI64)
	w.u32(4)
	w.byte(typeI32)
	w.rb = &regionBatch{
		pub: &handlerGen{img: img, pos: next, bcap: next + 1, u: next + 2, bptr: next + 3, cur: next + 4},
		hdr: next + 5, box: next + 6,
	}
}

// regionBatchLoad reads the batch's address, length and capacity from
// its header, at entry and after a step in place (the guest's Go code
// owns the header; in place, nothing publishes, but nothing is assumed).
// Without a batch, its capacity stays 0: every publish leaves the region.
func (w *buffer) regionBatchLoad() {
	rb := w.rb
	w.lget(rb.hdr)
	w.op(opIf)
	w.byte(0x40)
	w.lget(rb.hdr)
	w.mem(opI64Load, 0)
	w.op(opI32WrapI64)
	w.lset(rb.pub.bptr)
	w.lget(rb.hdr)
	w.mem(opI64Load, 8)
	w.lset(rb.pub.pos)
	w.lget(rb.hdr)
	w.mem(opI64Load, 16)
	w.lset(rb.pub.bcap)
	w.op(opEnd)
}

// regionBatchEntry reads the batch's addresses from the out buffer
// (parameter 1) and loads the batch.
func (w *buffer) regionBatchEntry() {
	rb := w.rb
	for i, l := range []uint32{rb.hdr, rb.box} {
		w.lget(1)
		w.op(opI32WrapI64)
		w.mem(opI64Load, uint32(8*(RegionOutBatch+i)))
		w.op(opI32WrapI64)
		w.lset(l)
	}
	// Both or neither.
	w.lget(rb.box)
	w.op(opI32Eqz)
	w.op(opIf)
	w.byte(0x40)
	w.i32Const(0)
	w.lset(rb.hdr)
	w.op(opEnd)
	w.regionBatchLoad()
}

// regionBatchCommit sets the batch's length, in its header and its box,
// to what the region appended: the guest's gateway then hands the
// records over as it does its own.
func (w *buffer) regionBatchCommit() {
	rb := w.rb
	w.lget(rb.hdr)
	w.op(opIf)
	w.byte(0x40)
	w.lget(rb.hdr)
	w.lget(rb.pub.pos)
	w.mem(opI64Store, 8)
	w.lget(rb.box)
	w.lget(rb.pub.bptr)
	w.mem(opI32Store, 0)
	w.lget(rb.box)
	w.lget(rb.pub.pos)
	w.op(opI32WrapI64)
	w.mem(opI32Store, 4)
	w.op(opEnd)
}

// regionPubRoom leaves the region at publish in (at pc, before its
// segment is charged) when its record might not fit (noRoom): the
// interpreter runs it, and hands the batch over when it reaches
// BatchFlush.
func (w *buffer) regionPubRoom(rg *regionInfo, pc int, in image.Instr) {
	w.rb.pub.noRoom(w, in)
	w.op(opIf)
	w.byte(0x40)
	w.regionExit(rg, pc)
	w.op(opEnd)
}

// regionPublish appends the record of publish in (regionPubRoom has
// checked that it fits).
func (w *buffer) regionPublish(in image.Instr) { w.rb.pub.record(w, in) }

// RegionPublishes returns how many publishes p's regions compile (tests
// and measurements): the guest appends them to its batch from compiled
// code when it batches, and leaves each region at them when it does not.
func RegionPublishes(img *image.Image, p *Plan) int {
	n := 0
	for _, r := range p.Regions {
		if info, ok := analyzeRegion(img, p, r); ok {
			for pc := r.Header; pc <= r.End; pc++ {
				if img.Funcs[r.Func].Code[pc].Op == image.OpPublish && !info.exit[pc-r.Header] {
					n++
				}
			}
		}
	}
	return n
}

// Compiled in-place instructions. fasta's letter is three instructions
// run in place (reading `table.chars`, a string out of it, `push`),
// each copying a Value that holds a pointer into the guest's Go heap:
// into a frame register, or into a list's element array. Compiled code
// runs them itself (regionFast) when it can, and only otherwise calls
// the guest's step for them: the field or the element copied into the
// frame as the interpreter copies it, the push stored into the list's
// spare capacity (len < cap, no for loop iterating over it) with its
// length bumped and the interpreter's charge added to the machine's
// count, when that charge does not call for a measure. Every write goes
// into the undo log (a fall-back resumes at the last commit), and none
// is made unless the guest's Go runtime is not marking: its write
// barrier is off (runtime.writeBarrier, whose address the guest hands
// over in the out buffer, RegionOutWB), which nothing can change while
// compiled code runs, since the guest's Go code runs only inside the
// guest calls compiled code makes (a step, which commits first, and the
// guest's math, which no region with such stores may reach). A store
// made while the barrier is off is what Go's own code makes then; the
// pointer stored is read, in the same run of compiled code, from a
// place the guest's heap reaches (the frame, a list, a struct), and Go's
// collector does not move objects. design.md §7 has the argument.

// fastInPlace reports whether in-place instruction in, its operands'
// types t before it, has a compiled form that compiled code runs when
// it can: a field or a list element of a type that is no scalar, read
// from a struct or a list whose type is known, or a push of a value of
// such a type onto a list whose type is known. Those operands are in
// the frame (compiled code holds no such value only in a local), and an
// element's index is an int in its local.
func fastInPlace(img *image.Image, in image.Instr, t []image.TypeRef) bool {
	nonScalar := func(ty image.TypeRef) bool {
		return ty > image.TVoid && int(ty) < len(img.Types) && !scalarType(ty)
	}
	reg := func(r int32) bool { return r >= 0 && int(r) < len(t) }
	switch in.Op {
	case image.OpField:
		if !reg(in.A) || !reg(in.B) {
			return false
		}
		s := typeOfKind(img, t[in.B], image.KindStruct)
		return s != nil && in.C >= 0 && int(in.C) < len(s.Fields) && nonScalar(s.Fields[in.C].Type)
	case image.OpIndexList:
		if !reg(in.A) || !reg(in.B) || !reg(in.C) {
			return false
		}
		l := typeOfKind(img, t[in.B], image.KindList)
		return l != nil && nonScalar(l.Elem) && t[in.C] == image.TInt
	case image.OpPush:
		if !reg(in.A) || !reg(in.B) {
			return false
		}
		return typeOfKind(img, t[in.A], image.KindList) != nil && nonScalar(t[in.B])
	case image.OpNewList:
		return reg(in.A) && in.C == 0
	}
	return false
}

// reachesMath reports whether code lo..hi of function f, or a compiled
// function it calls (transitively), calls the guest's math (GuestMath).
func reachesMath(img *image.Image, p *Plan, f, lo, hi int, seen map[int]bool) bool {
	code := img.Funcs[f].Code
	for pc := max(lo, 0); pc <= hi && pc < len(code); pc++ {
		in := code[pc]
		switch in.Op {
		case image.OpCallB:
			if ok, _ := MathBuiltin(image.Builtin(in.B)); ok {
				return true
			}
		case image.OpCall:
			c := int(in.B)
			if c < 0 || c >= len(img.Funcs) || c >= len(p.Compiled) || !p.Compiled[c] || seen[c] {
				continue
			}
			seen[c] = true
			if reachesMath(img, p, c, 0, len(img.Funcs[c].Code)-1, seen) {
				return true
			}
		}
	}
	return false
}

// FastInPlaceCount returns how many in-place instructions p's regions
// run compiled when they can (tests and measurements).
func FastInPlaceCount(img *image.Image, p *Plan) int {
	n := 0
	for _, r := range p.Regions {
		if info, ok := analyzeRegion(img, p, r); ok {
			for i, f := range info.fast {
				if f && info.inplace[i] {
					n++
				}
			}
		}
	}
	return n
}

// The out buffer's words after the batch's (RegionOutBatch): the
// address of the guest's runtime.writeBarrier (0: compiled code never
// stores a pointer itself), then those of the machine's memory charge
// count and allowance (vm's memory measure: a charge that takes the
// count past the allowance calls for a measure).
const (
	RegionOutWB     = RegionOutBatch + 2
	RegionOutCharge = RegionOutWB + 1
	RegionOutAllow  = RegionOutWB + 2
	RegionOutPool   = RegionOutWB + 3
)

// PushCharge is what the interpreter charges a push (vm/value.SizeSlot),
// NewListCharge what it charges an empty list (value.SizeListHeader).
const (
	PushCharge    = 24
	NewListCharge = 32
)

// The list pool (RegionOutPool, 0 when the guest has none): a count,
// then ListPoolSize pointers to fresh empty lists, which the guest keeps
// (vm's listPool) and refills. Compiled code takes the last of them for
// `[]` (an OpNewList of no elements) instead of calling the guest's step
// for it: a list nothing else refers to, made with room for a few pushes.
const (
	ListPoolSize  = 64
	listPoolCount = 0
	listPoolPtrs  = 8
	kindList      = int64(image.KindList)
)

// maxFastRun bounds the instructions of a batch that regionFast compiles.
const maxFastRun = 8

// regionFast runs batch (the in-place instructions from pc) compiled:
// while compiled code can, each instruction of its leading run that
// fastInPlace allows, and the guest's step for the rest (regionStep)
// from the first it cannot. The fast locals are free between
// instructions: fl (a list or a struct), fs (a source value), fd (a
// destination value), fm (the charge count's address).
func (w *buffer) regionFast(img *image.Image, rg *regionInfo, pc int, batch []image.Instr) {
	// Each compiled instruction carries its own step for the rest of
	// the batch (its registers written back, the batch's reloaded):
	// at most maxFastRun of them, so that a long batch in a region that
	// writes many registers does not make code quadratic in size.
	k := 0
	for k < len(batch) && k < maxFastRun && rg.fast[pc+k-rg.Header] {
		k++
	}
	if k == 0 || !rg.anyFast {
		w.regionStep(img, rg, pc, batch)
		return
	}
	fl, fs, fd, fm := w.fastL, w.fastL+1, w.fastL+2, w.fastL+3
	lget := func(l uint32) { w.op(opLocalGet); w.u32(l) }
	lset := func(l uint32) { w.op(opLocalSet); w.u32(l) }
	ltee := func(l uint32) { w.op(opLocalTee); w.u32(l) }
	out := func(word int) { lget(1); w.op(opI32WrapI64); w.mem(opI64Load, uint32(8*word)); w.op(opI32WrapI64) }
	frame := func(r int32) { lget(0); w.op(opI32WrapI64); w.i32Const(int32(r) * valueSize); w.op(opI32Add) }
	// container sets fl to the address of the list or struct in
	// register r, or leaves (br_if depth) when it holds none.
	container := func(r int32, kind image.Kind, depth uint32) {
		frame(r)
		ltee(fd)
		w.mem(opI32Load8U, valueKind)
		w.i32Const(int32(kind))
		w.op(opI32Ne)
		w.op(opBrIf)
		w.u32(depth)
		lget(fd)
		w.mem(opI32Load, valuePtr)
		ltee(fl)
		w.op(opI32Eqz)
		w.op(opBrIf)
		w.u32(depth)
	}
	// chargeFits sets fm to the address of the machine's charge count
	// and leaves (br_if 0) when there is none, or when charging n would
	// take the count past the allowance: the step then measures.
	chargeFits := func(n int64) {
		out(RegionOutCharge)
		ltee(fm)
		w.op(opI32Eqz)
		w.op(opBrIf)
		w.u32(0)
		lget(fm)
		w.mem(opI64Load, 0)
		w.i64Const(n)
		w.op(opI64Add)
		out(RegionOutAllow)
		w.mem(opI64Load, 0)
		w.op(opI64GtS)
		w.op(opBrIf)
		w.u32(0)
	}
	// addCharge adds n to the charge count at fm, logged first.
	addCharge := func(n int64) {
		w.logWrite(fm, 0)
		lget(fm)
		lget(fm)
		w.mem(opI64Load, 0)
		w.i64Const(n)
		w.op(opI64Add)
		w.mem(opI64Store, 0)
	}
	// copyValue copies the Value at fs to fd, each word logged first.
	copyValue := func() {
		for _, off := range []uint32{0, 8, 16} {
			w.logWrite(fd, off)
			lget(fd)
			lget(fs)
			w.mem(opI64Load, off)
			w.mem(opI64Store, off)
		}
	}
	w.op(opBlock) // done
	w.byte(0x40)
	// The guest's write barrier must be off (and its address known).
	w.op(opBlock)
	w.byte(0x40)
	w.op(opBlock)
	w.byte(0x40)
	out(RegionOutWB)
	ltee(fs)
	w.op(opI32Eqz)
	w.op(opBrIf)
	w.u32(0)
	lget(fs)
	w.mem(opI32Load8U, 0)
	w.op(opBrIf)
	w.u32(0)
	w.op(opBr)
	w.u32(1)
	w.op(opEnd)
	w.regionStep(img, rg, pc, batch)
	w.op(opBr)
	w.u32(1) // done
	w.op(opEnd)
	for j, in := range batch[:k] {
		w.op(opBlock) // ok
		w.byte(0x40)
		w.op(opBlock) // slow: br_if 0 at this level
		w.byte(0x40)
		switch in.Op {
		case image.OpField:
			container(in.B, image.KindStruct, 0)
			// A field the struct does not have: the step fails.
			lget(fl)
			w.mem(opI64Load, structLen)
			w.i64Const(int64(in.C))
			w.op(opI64LeU)
			w.op(opBrIf)
			w.u32(0)
			lget(fl)
			w.mem(opI32Load, structField)
			w.i32Const(in.C * valueSize)
			w.op(opI32Add)
			lset(fs)
			frame(in.A)
			lset(fd)
			copyValue()
		case image.OpIndexList:
			container(in.B, image.KindList, 0)
			// Out of range: the step traps.
			lget(w.reg(in.C))
			lget(fl)
			w.mem(opI64Load, listLen)
			w.op(opI64GeU)
			w.op(opBrIf)
			w.u32(0)
			lget(fl)
			w.mem(opI32Load, listData)
			lget(w.reg(in.C))
			w.op(opI32WrapI64)
			w.i32Const(valueSize)
			w.op(opI32Mul)
			w.op(opI32Add)
			lset(fs)
			frame(in.A)
			lset(fd)
			copyValue()
		case image.OpPush:
			container(in.A, image.KindList, 0)
			// A for loop iterating over it (the step traps), or no
			// spare capacity (the step grows it).
			lget(fl)
			w.mem(opI32Load, listIter)
			w.op(opBrIf)
			w.u32(0)
			lget(fl)
			w.mem(opI64Load, listLen)
			lget(fl)
			w.mem(opI64Load, listCap)
			w.op(opI64GeU)
			w.op(opBrIf)
			w.u32(0)
			chargeFits(PushCharge)
			// The element, then the length, then the charge.
			frame(in.B)
			lset(fs)
			lget(fl)
			w.mem(opI32Load, listData)
			lget(fl)
			w.mem(opI32Load, listLen)
			w.i32Const(valueSize)
			w.op(opI32Mul)
			w.op(opI32Add)
			lset(fd)
			copyValue()
			w.logWrite(fl, listLen)
			lget(fl)
			lget(fl)
			w.mem(opI64Load, listLen)
			w.i64Const(1)
			w.op(opI64Add)
			w.mem(opI64Store, listLen)
			addCharge(PushCharge)
		case image.OpNewList:
			// No pool, or an empty one: the step makes the list (and
			// the guest refills the pool).
			out(RegionOutPool)
			ltee(fl)
			w.op(opI32Eqz)
			w.op(opBrIf)
			w.u32(0)
			lget(fl)
			w.mem(opI64Load, listPoolCount)
			w.op(opI64Eqz)
			w.op(opBrIf)
			w.u32(0)
			chargeFits(NewListCharge)
			// The count less one, then the list it now leaves out
			// (fs: its slot), into the register as a Value, then the
			// charge.
			w.logWrite(fl, listPoolCount)
			lget(fl)
			lget(fl)
			w.mem(opI64Load, listPoolCount)
			w.i64Const(1)
			w.op(opI64Sub)
			w.mem(opI64Store, listPoolCount)
			lget(fl)
			lget(fl)
			w.mem(opI32Load, listPoolCount)
			w.i32Const(8)
			w.op(opI32Mul)
			w.op(opI32Add)
			lset(fs)
			frame(in.A)
			lset(fd)
			for _, off := range []uint32{valueKind, valueBits, valuePtr} {
				w.logWrite(fd, off)
			}
			lget(fd)
			w.i64Const(kindList)
			w.mem(opI64Store, valueKind)
			lget(fd)
			w.i64Const(0)
			w.mem(opI64Store, valueBits)
			lget(fd)
			lget(fs)
			w.mem(opI64Load, listPoolPtrs)
			w.mem(opI64Store, valuePtr)
			addCharge(NewListCharge)
		}
		if d := inPlaceDest(in); d >= 0 {
			if f, ok := rg.dirty[d]; ok {
				// The frame holds it now.
				w.i32Const(0)
				lset(w.dirtyBase + uint32(f))
			}
			w.reloadInPlace(img, d, rg.types[pc+j-rg.Header])
		}
		w.op(opBr)
		w.u32(1) // ok
		w.op(opEnd)
		w.regionStep(img, rg, pc+j, batch[j:])
		w.op(opBr)
		w.u32(1) // done
		w.op(opEnd)
	}
	if k < len(batch) {
		w.regionStep(img, rg, pc+k, batch[k:])
	}
	w.op(opEnd)
}
