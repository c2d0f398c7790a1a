// Package tier is the interpreter's second tier: it compiles the hot,
// effect-free, scalar functions of a program image to one WebAssembly
// module, which the wasm engine's host runs under wazero beside the
// interpreter guest.
//
// The Go compiler's WebAssembly output is slow at interpreting (every
// taken branch of the dispatch loop goes through one br_table), so a
// recursive or looping function of ints, floats and bools runs many times
// faster as its own wasm code. The tier keeps every observable of the
// interpreter:
//
//   - Steps: each compiled function counts the same steps as the
//     interpreter, one per bytecode instruction, charged a straight-line
//     run of instructions at a time from a fuel counter the host refills
//     (and polls between refills, as the interpreter does every
//     vm.PollSteps steps).
//   - Traps: compiled code never reports a trap. Whenever the interpreter
//     would trap (overflow, division by zero, a budget run out, a stack
//     too deep), and whenever it is unsure, compiled code stops with a
//     wasm trap, and the interpreter runs the call again from its start.
//     The function is pure, so running it again is unobservable, and the
//     interpreter then traps with its exact message, position and stack.
//
// Plan decides which functions are compiled; both the guest (which calls
// them through the host) and the host (which compiles them) compute it
// from the same image, so they agree on it without a protocol.
//
// The package is pure: it imports nothing that reads time, randomness,
// the environment, files or the network, because the interpreter embeds
// it in the wasm guest.
package tier

import (
	"slices"

	"github.com/hale-lang/hale/codegen/image"
)

// Kind is how a value is carried in a compiled function's i64 registers:
// an int as itself, a bool as 0 or 1, a float as its IEEE bits, a list or
// a struct as its address in the guest's linear memory, an enum as the
// address of a value holding it (see access). Void is the result kind of
// a function without one (carried as 0). A result is never a list or a
// struct; an enum result is the address of a Value that the function
// made in the arena (alloc.go) or was handed.
type Kind uint8

// Kinds.
const (
	Int Kind = iota
	Bool
	Float
	Void
	List
	Struct
	Enum
)

// ReachesMemory reports whether a value of kind k is carried as an
// address in the guest's memory (a list, a struct, an enum), through
// which compiled code may write to it.
func (k Kind) ReachesMemory() bool { return k == List || k == Struct || k == Enum }

// Plan says which functions of an image are compiled.
type Plan struct {
	// Compiled[f] is set for every function in the module.
	Compiled []bool
	// Entry[f] is set for the compiled functions the interpreter calls
	// through the host: those that loop or recurse, or call one that
	// does. A call of a short straight-line function costs less
	// interpreted than a trip through the host.
	Entry []bool
	// Params[f] and Result[f] are the kinds of a compiled function's
	// parameters and result.
	Params [][]Kind
	Result []Kind
	// Allocs[f] is set for the compiled functions that make enum values
	// in the arena (new.enum) or call one that does (alloc.go).
	Allocs []bool
	// Regions are the loops compiled on their own in the functions
	// the interpreter runs (see Region), by function and header.
	Regions []Region
	// Handlers are the topic handlers compiled whole, which the host
	// runs itself (PlanHandlers, handler.go; the guest's plan has none).
	Handlers []Handler
}

// HasEntries reports whether the plan compiles anything worth calling.
func (p *Plan) HasEntries() bool {
	if len(p.Regions) > 0 || len(p.Handlers) > 0 {
		return true
	}
	for _, e := range p.Entry {
		if e {
			return true
		}
	}
	return false
}

// NewPlan decides which functions of img the tier compiles: the top-level
// and locus-private functions whose parameters are ints, floats, bools,
// lists or structs, whose result is an int, a float, a bool or none,
// whose every instruction has a compiled form (scalar arithmetic and
// comparisons, jumps, loops over ranges and lists, a few pure builtins,
// scalar constants, reading list elements and struct fields, writing
// scalar ones; see access) and whose every callee is compiled too.
// img must be valid (image.Validate).
func NewPlan(img *image.Image) *Plan {
	n := len(img.Funcs)
	p := &Plan{
		Compiled: make([]bool, n),
		Entry:    make([]bool, n),
		Params:   make([][]Kind, n),
		Result:   make([]Kind, n),
		Allocs:   make([]bool, n),
	}
	for i := range img.Funcs {
		f := &img.Funcs[i]
		if f.Kind != image.FuncFn && f.Kind != image.FuncLocusFn {
			continue
		}
		res, ok := scalar(img, f.Result)
		if f.Result == image.TVoid {
			res, ok = Void, true
		} else if isEnum(img, f.Result) {
			res, ok = Enum, true
		}
		if !ok || f.NumParams > len(f.Locals) || f.NumParams > f.FrameSize {
			continue
		}
		params := make([]Kind, f.NumParams)
		for j := range params {
			if params[j], ok = paramKind(img, f.Locals[j].Type); !ok {
				break
			}
		}
		if !ok || !codeSupported(img, f) {
			continue
		}
		p.Compiled[i], p.Params[i], p.Result[i] = true, params, res
	}
	// The passes below walk the call graph with worklists, so that the plan
	// takes time linear in the size of the image, even with a million
	// functions in one long call chain.
	callees := make([][]int32, n)
	callers := make([][]int32, n)
	for i := range img.Funcs {
		for _, in := range img.Funcs[i].Code {
			if in.Op == image.OpCall {
				callees[i] = append(callees[i], in.B)
				callers[in.B] = append(callers[in.B], int32(i))
			}
		}
	}
	// A function calling one that is not compiled is not compiled either.
	var work []int32
	for i := range n {
		if !p.Compiled[i] {
			work = append(work, int32(i))
		}
	}
	for len(work) > 0 {
		f := work[len(work)-1]
		work = work[:len(work)-1]
		for _, c := range callers[f] {
			if p.Compiled[c] {
				p.Compiled[c] = false
				work = append(work, c)
			}
		}
	}
	// Allocating functions: those with a new.enum, and their callers.
	for i := range n {
		if p.Compiled[i] && makesEnums(&img.Funcs[i]) {
			p.Allocs[i] = true
			work = append(work, int32(i))
		}
	}
	spreadToCallers(work, callers, p.Compiled, p.Allocs)
	// Entries: compiled functions with a backward jump, in a call cycle,
	// or calling an entry.
	cyclic := inCycles(p.Compiled, callees)
	work = work[:0]
	for i := range img.Funcs {
		if p.Compiled[i] && (loops(&img.Funcs[i]) || cyclic[i]) {
			p.Entry[i] = true
			work = append(work, int32(i))
		}
	}
	spreadToCallers(work, callers, p.Compiled, p.Entry)
	// Regions: the loops of every function not compiled whole, and of
	// the entries handed lists, structs or enums, which the interpreter
	// runs when a call writes more than the largest undo log holds
	// (vm's tierLogMax): their loops keep their writes at each header,
	// as a region does, where a compiled call cannot.
	for i := range img.Funcs {
		if !p.Compiled[i] || p.Entry[i] && slices.ContainsFunc(p.Params[i], Kind.ReachesMemory) {
			findRegions(img, p, i)
		}
	}
	return p
}

// spreadToCallers sets set[c] for every compiled function c that calls,
// directly or not, one of the functions in work (whose set is already
// set), through compiled callers.
func spreadToCallers(work []int32, callers [][]int32, compiled, set []bool) {
	for len(work) > 0 {
		f := work[len(work)-1]
		work = work[:len(work)-1]
		for _, c := range callers[f] {
			if compiled[c] && !set[c] {
				set[c] = true
				work = append(work, c)
			}
		}
	}
}

func scalar(img *image.Image, t image.TypeRef) (Kind, bool) {
	if t < 0 || int(t) >= len(img.Types) {
		return 0, false
	}
	switch img.Types[t].Kind {
	case image.KindInt:
		return Int, true
	case image.KindBool:
		return Bool, true
	case image.KindFloat:
		return Float, true
	}
	return 0, false
}

// paramKind is scalar's kind, or List or Struct.
func paramKind(img *image.Image, t image.TypeRef) (Kind, bool) {
	if k, ok := scalar(img, t); ok {
		return k, true
	}
	if t >= 0 && int(t) < len(img.Types) {
		switch img.Types[t].Kind {
		case image.KindList:
			return List, true
		case image.KindStruct:
			return Struct, true
		case image.KindEnum:
			return Enum, true
		}
	}
	return 0, false
}

// codeSupported reports whether every instruction of f has a compiled
// form.
func codeSupported(img *image.Image, f *image.Func) bool {
	if len(f.Code) == 0 {
		return false
	}
	if usesMemory(img, f) {
		if _, ok := access(img, f); !ok {
			return false
		}
	}
	for _, in := range f.Code {
		switch in.Op {
		case image.OpLoadK:
			// A string constant is loaded as 0: no compiled operation
			// reads a string but assert, which only shows its message
			// when it fails, and then the interpreter runs the call.
			switch k := img.Consts[in.B]; k.Kind {
			case image.KindInt, image.KindBool, image.KindFloat, image.KindString:
			case image.KindEnum:
				// A unit variant: the address of the constant's Value
				// (alloc.go).
				if !unitVariant(img, k) {
					return false
				}
			default:
				return false
			}
		case image.OpCallB:
			if _, ok := builtins[image.Builtin(in.B)]; !ok {
				return false
			}
		case image.OpNewEnum:
			if !arenaVariant(img, in.C) {
				return false
			}
		default:
			if !simpleOps[in.Op] && !memOps[in.Op] {
				return false
			}
		}
	}
	return true
}

// simpleOps are the opcodes compiled without looking at their operands'
// constants or builtins.
var simpleOps = map[image.Op]bool{
	image.OpNop: true, image.OpMove: true, image.OpLoadInt: true,
	image.OpAddInt: true, image.OpSubInt: true, image.OpMulInt: true, image.OpDivInt: true,
	image.OpRemInt: true, image.OpAddIntK: true, image.OpNegInt: true,
	image.OpAddFloat: true, image.OpSubFloat: true, image.OpMulFloat: true, image.OpDivFloat: true,
	image.OpNegFloat: true, image.OpNot: true,
	image.OpAndInt: true, image.OpOrInt: true, image.OpXorInt: true,
	image.OpShlInt: true, image.OpShrInt: true, image.OpNotInt: true,
	image.OpEqInt: true, image.OpNeInt: true, image.OpLtInt: true, image.OpLeInt: true,
	image.OpEqFloat: true, image.OpNeFloat: true, image.OpLtFloat: true, image.OpLeFloat: true,
	image.OpJump: true, image.OpJumpT: true, image.OpJumpF: true,
	image.OpJLtInt: true, image.OpJLeInt: true, image.OpJEqInt: true, image.OpJNeInt: true,
	image.OpJLtIntK: true, image.OpJLeIntK: true, image.OpJGtIntK: true, image.OpJGeIntK: true,
	image.OpJEqIntK: true, image.OpJNeIntK: true, image.OpLoopRange: true,
	image.OpCall: true, image.OpRet: true, image.OpRetVoid: true,
}

// builtins are the pure builtins with a compiled form.
var builtins = map[image.Builtin]bool{
	image.BuiltinAbsInt: true, image.BuiltinMinInt: true, image.BuiltinMaxInt: true,
	image.BuiltinFloatOfInt: true, image.BuiltinAbsFloat: true,
	image.BuiltinSqrt: true, image.BuiltinFloor: true, image.BuiltinCeil: true,
	image.BuiltinAssert: true,
	// std::math's others, called in the guest (GuestMath).
	image.BuiltinPow: true, image.BuiltinLog: true, image.BuiltinExp: true,
	image.BuiltinSin: true, image.BuiltinCos: true, image.BuiltinTan: true,
	image.BuiltinAsin: true, image.BuiltinAcos: true, image.BuiltinAtan: true,
	image.BuiltinAtan2: true, image.BuiltinHypot: true,
}

// MathBuiltin reports whether compiled code computes builtin b by calling
// the guest (GuestMath): the float functions of std::math whose bits
// only the interpreter's own code (vm/internal/fmath) is trusted to give.
// binary reports whether b takes two arguments.
func MathBuiltin(b image.Builtin) (ok, binary bool) {
	switch b {
	case image.BuiltinPow, image.BuiltinAtan2, image.BuiltinHypot:
		return true, true
	case image.BuiltinLog, image.BuiltinExp, image.BuiltinSin, image.BuiltinCos, image.BuiltinTan,
		image.BuiltinAsin, image.BuiltinAcos, image.BuiltinAtan:
		return true, false
	}
	return false, false
}

// isJump reports whether op may transfer control to its operand C.
func isJump(op image.Op) bool {
	switch op {
	case image.OpJump, image.OpJumpT, image.OpJumpF,
		image.OpJLtInt, image.OpJLeInt, image.OpJEqInt, image.OpJNeInt,
		image.OpJLtIntK, image.OpJLeIntK, image.OpJGtIntK, image.OpJGeIntK,
		image.OpJEqIntK, image.OpJNeIntK, image.OpLoopRange, image.OpForList, image.OpJNeVariant:
		return true
	}
	return false
}

func loops(f *image.Func) bool {
	for pc, in := range f.Code {
		if isJump(in.Op) && int(in.C) <= pc {
			return true
		}
	}
	return false
}

// inCycles reports, for each function in the subgraph of the call graph
// that keep selects, whether it can reach itself through calls within
// that subgraph: whether it calls itself or its strongly connected
// component has more than one function. It is Tarjan's algorithm, run
// with an explicit stack so that a long call chain cannot overflow the
// goroutine's.
func inCycles(keep []bool, callees [][]int32) []bool {
	n := len(keep)
	const unvisited = -1
	index := make([]int32, n) // discovery order, or unvisited
	low := make([]int32, n)
	onStack := make([]bool, n)
	cyclic := make([]bool, n)
	for i := range index {
		index[i] = unvisited
	}
	var stack []int32 // Tarjan's stack of the current components
	type frame struct {
		fn   int32
		next int // index into callees[fn] of the next edge to follow
	}
	var frames []frame
	var counter int32
	for root := range n {
		if !keep[root] || index[root] != unvisited {
			continue
		}
		frames = append(frames, frame{fn: int32(root)})
		index[root], low[root] = counter, counter
		counter++
		stack = append(stack, int32(root))
		onStack[root] = true
		for len(frames) > 0 {
			top := &frames[len(frames)-1]
			v := top.fn
			if top.next < len(callees[v]) {
				w := callees[v][top.next]
				top.next++
				switch {
				case w == v:
					cyclic[v] = true
				case !keep[w]:
				case index[w] == unvisited:
					index[w], low[w] = counter, counter
					counter++
					stack = append(stack, w)
					onStack[w] = true
					frames = append(frames, frame{fn: w})
				case onStack[w]:
					low[v] = min(low[v], index[w])
				}
				continue
			}
			frames = frames[:len(frames)-1]
			if len(frames) > 0 {
				parent := frames[len(frames)-1].fn
				low[parent] = min(low[parent], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			// v is the root of a component: pop it.
			size := 0
			for i := len(stack) - 1; ; i-- {
				if stack[i] == v {
					size = len(stack) - i
					break
				}
			}
			members := stack[len(stack)-size:]
			stack = stack[:len(stack)-size]
			for _, w := range members {
				onStack[w] = false
				if size > 1 {
					cyclic[w] = true
				}
			}
		}
	}
	return cyclic
}
