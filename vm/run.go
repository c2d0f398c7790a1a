package vm

import (
	"errors"
	"math"
	"unsafe"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm/value"
)

// exec runs function fn with its frame at the bottom of the value stack (a
// handler's payload already in register 0) until it returns, executing at
// most budget instructions. state is the running instance's slots.
//
// This is the interpreter's one dispatch loop. The current frame lives in
// locals (ip, regs, steps); a call saves the caller's resume address on
// m.frames and switches the locals to the callee's frame, whose registers
// start at the caller's argument window, so no arguments are copied and no
// Go call is made per Hale call. The common operations are cases of the
// loop's switch; the rarer ones, and every slow path (traps, builtins,
// primitives, publishing), are method calls out of the loop.
func (m *Machine) exec(fn int, state []value.Value, budget int64) error {
	return m.execAt(fn, state, budget, 0, 0)
}

// execAt is exec with the entry frame's register 0 at stack index base,
// above floor frames that stay as they are: a guard runs so, nested in
// the publishing handler's run (guard.go). It returns when the entry
// frame returns, leaving its result in register base.
func (m *Machine) execAt(fn int, state []value.Value, budget int64, floor, base int) error {
	entry := &m.funcs[fn]
	if base+entry.frameSize > len(m.stack) && !m.grow(base+entry.frameSize) {
		return &Trap{Kind: KindStack, Message: msgStack}
	}
	m.high = max(m.high, base+entry.frameSize)
	m.frames = append(m.frames[:floor], frame{fn: int32(fn), base: int32(base)})
	m.tries = m.tries[:0]
	m.tierHold = 0
	// The steps are counted down in slices of at most PollSteps: rest is
	// what the budget allows after the current slice. Between slices the
	// host is polled, so that even a handler that never ends can be
	// interrupted.
	first := min(budget, PollSteps)
	var (
		ip    = entry.codePtr() // the next instruction
		regs  = m.regs(base)    // the current frame's register 0
		steps = first
		rest  = budget - first
		err   error
	)
	for {
		in := (*image.Instr)(ip)
		ip = unsafe.Add(ip, instrSize)
		steps--
		if steps < 0 {
			if rest == 0 {
				m.steps = budget
				return m.fail(ip, KindBudget, msgBudget) // never caught
			}
			if err := m.poll(ip); err != nil {
				m.steps = budget - rest - steps
				return err
			}
			next := min(rest, PollSteps)
			rest -= next
			steps += next
		}
	dispatch:
		switch in.Op {
		case image.OpMove:
			*reg(regs, in.A) = *reg(regs, in.B)
		case image.OpLoadK:
			*reg(regs, in.A) = m.consts[in.B]
		case image.OpLoadInt:
			*reg(regs, in.A) = value.Int(int64(in.B))
		case image.OpLoadState:
			*reg(regs, in.A) = state[in.B]
		case image.OpStoreState:
			state[in.A] = *reg(regs, in.B)

		case image.OpAddInt:
			a, b := (*reg(regs, in.B)).AsInt(), (*reg(regs, in.C)).AsInt()
			s := a + b
			if (s^a)&(s^b) < 0 {
				if ip, regs, err = m.raise(ip, m.fail(ip, KindArith, msgOverflow)); err != nil {
					return err
				}
				continue
			}
			*reg(regs, in.A) = value.Int(s)
		case image.OpSubInt:
			a, b := (*reg(regs, in.B)).AsInt(), (*reg(regs, in.C)).AsInt()
			s := a - b
			if (a^b)&(s^a) < 0 {
				if ip, regs, err = m.raise(ip, m.fail(ip, KindArith, msgOverflow)); err != nil {
					return err
				}
				continue
			}
			*reg(regs, in.A) = value.Int(s)
		case image.OpAddIntK:
			a, b := (*reg(regs, in.B)).AsInt(), int64(in.C)
			s := a + b
			if (s^a)&(s^b) < 0 {
				if ip, regs, err = m.raise(ip, m.fail(ip, KindArith, msgOverflow)); err != nil {
					return err
				}
				continue
			}
			*reg(regs, in.A) = value.Int(s)
		case image.OpEqInt:
			*reg(regs, in.A) = value.Bool((*reg(regs, in.B)).AsInt() == (*reg(regs, in.C)).AsInt())
		case image.OpNeInt:
			*reg(regs, in.A) = value.Bool((*reg(regs, in.B)).AsInt() != (*reg(regs, in.C)).AsInt())
		case image.OpLtInt:
			*reg(regs, in.A) = value.Bool((*reg(regs, in.B)).AsInt() < (*reg(regs, in.C)).AsInt())
		case image.OpLeInt:
			*reg(regs, in.A) = value.Bool((*reg(regs, in.B)).AsInt() <= (*reg(regs, in.C)).AsInt())
		case image.OpJump:
			ip = jump(ip, in.C)
		case image.OpJumpT:
			if (*reg(regs, in.A)).AsBool() {
				ip = jump(ip, in.C)
			}
		case image.OpJumpF:
			if !(*reg(regs, in.A)).AsBool() {
				ip = jump(ip, in.C)
			}
		case image.OpJLtInt:
			if (*reg(regs, in.A)).AsInt() < (*reg(regs, in.B)).AsInt() {
				ip = jump(ip, in.C)
			}
		case image.OpJLeInt:
			if (*reg(regs, in.A)).AsInt() <= (*reg(regs, in.B)).AsInt() {
				ip = jump(ip, in.C)
			}
		case image.OpJEqInt:
			if (*reg(regs, in.A)).AsInt() == (*reg(regs, in.B)).AsInt() {
				ip = jump(ip, in.C)
			}
		case image.OpJNeInt:
			if (*reg(regs, in.A)).AsInt() != (*reg(regs, in.B)).AsInt() {
				ip = jump(ip, in.C)
			}
		case image.OpJLtIntK:
			if (*reg(regs, in.A)).AsInt() < int64(in.B) {
				ip = jump(ip, in.C)
			}
		case image.OpJLeIntK:
			if (*reg(regs, in.A)).AsInt() <= int64(in.B) {
				ip = jump(ip, in.C)
			}
		case image.OpJGtIntK:
			if (*reg(regs, in.A)).AsInt() > int64(in.B) {
				ip = jump(ip, in.C)
			}
		case image.OpJGeIntK:
			if (*reg(regs, in.A)).AsInt() >= int64(in.B) {
				ip = jump(ip, in.C)
			}
		case image.OpJEqIntK:
			if (*reg(regs, in.A)).AsInt() == int64(in.B) {
				ip = jump(ip, in.C)
			}
		case image.OpJNeIntK:
			if (*reg(regs, in.A)).AsInt() != int64(in.B) {
				ip = jump(ip, in.C)
			}
		case image.OpLoopRange:
			i := (*reg(regs, in.A)).AsInt() + 1
			*reg(regs, in.A) = value.Int(i)
			if i < (*reg(regs, in.B)).AsInt() {
				ip = jump(ip, in.C)
			}

		case image.OpCall:
			callee := &m.funcs[in.B]
			if callee.tier {
				used, ok, err := m.tierCallOp(in, regs, ip, steps+rest)
				if err != nil {
					m.steps = budget - rest - steps
					return err
				}
				if ok {
					total := steps + rest - used
					steps = min(total, PollSteps)
					rest = total - steps
					continue
				}
			}
			caller := &m.frames[len(m.frames)-1]
			nb := int(caller.base) + int(in.A)
			top := nb + callee.frameSize
			if top > m.high {
				if top > len(m.stack) && !m.grow(top) {
					return m.fail(ip, KindStack, msgStack)
				}
				m.high = top
			}
			if len(m.frames) >= MaxDepth {
				return m.fail(ip, KindStack, msgStack)
			}
			caller.ip = ip
			m.frames = append(m.frames, frame{fn: in.B, base: int32(nb)})
			ip, regs = callee.codePtr(), m.regs(nb)
		case image.OpRet:
			*(*value.Value)(regs) = *reg(regs, in.A) // register 0 of the callee is register A of the caller's call
			n := len(m.frames) - 1
			m.frames = m.frames[:n]
			if n == floor {
				m.steps = budget - rest - steps
				return nil
			}
			fr := &m.frames[n-1]
			ip, regs = fr.ip, m.regs(int(fr.base))
		case image.OpRetVoid:
			*(*value.Value)(regs) = value.Value{}
			n := len(m.frames) - 1
			m.frames = m.frames[:n]
			if n == floor {
				m.steps = budget - rest - steps
				return nil
			}
			fr := &m.frames[n-1]
			ip, regs = fr.ip, m.regs(int(fr.base))
		case image.OpIndexList:
			l, i := (*reg(regs, in.B)).AsList(), (*reg(regs, in.C)).AsInt()
			if uint64(i) >= uint64(l.Len()) {
				if ip, regs, err = m.raise(ip, m.fail(ip, KindIndex, indexMsg(i, l.Len(), "list"))); err != nil {
					return err
				}
				continue
			}
			*reg(regs, in.A) = l.At(int(i))
		case image.OpField:
			*reg(regs, in.A) = (*reg(regs, in.B)).AsStruct().Field(int(in.C))
		case image.OpPublish, image.OpPublishAfter:
			if len(m.guards[in.A]) == 0 {
				if err := m.publishOp(in, regs); err != nil {
					if ip, regs, err = m.raise(ip, m.failErr(ip, err)); err != nil {
						return err
					}
				}
				continue
			}
			// A guarded topic: its guards run here, on this consumer,
			// and their steps count toward this run's budget.
			used, err := m.publishGuarded(in, regs, ip, steps+rest)
			total := steps + rest - used
			steps = min(total, PollSteps)
			rest = total - steps
			regs = m.regs(int(m.frames[len(m.frames)-1].base)) // the guards may have grown the stack
			if err != nil {
				if ip, regs, err = m.raise(ip, err); err != nil {
					return err
				}
			}
		case image.OpForList:
			l, i := (*reg(regs, in.B)).AsList(), (*reg(regs, in.B+1)).AsInt()
			if int(i) < l.Len() { // the list cannot change while iterated
				*reg(regs, in.A) = l.At(int(i))
				*reg(regs, in.B+1) = value.Int(i + 1)
				ip = jump(ip, in.C)
			}
		case opRegion:
			// The header of a compiled loop (tier.go): the loop runs
			// there unless the tier is off for it, from the header on
			// (counted here already). A region given up on is
			// passed here, without a call: the loop header runs once
			// an iteration.
			if m.regions[in.A].off {
				in = &m.regionOrig[in.A]
				goto dispatch
			}
			next, nregs, used, err := m.regionOp(in.A, regs, ip, steps+rest+1)
			if err != nil {
				m.steps = budget - rest - steps
				return err
			}
			if next != nil {
				// A call that stayed within the slice goes on with
				// it; one that passed its end starts a new one,
				// polling first as the slice's end would have unless
				// the call polled itself (compiled code polls when it
				// has taken its first PollSteps). So a loop whose
				// region returns often (at each batch of publishes)
				// still polls about every PollSteps.
				ip, regs = next, nregs // regs: a trap in place caught by a caller's try
				if used <= steps+1 {
					steps += 1 - used
					continue
				}
				total := steps + rest + 1 - used
				if used <= PollSteps {
					if err := m.poll(ip); err != nil {
						m.steps = budget - total
						return err
					}
				}
				steps = min(total, PollSteps)
				rest = total - steps
				continue
			}
			in = &m.regionOrig[in.A]
			goto dispatch
		case opBreak:
			// A debugger's break (debug.go): the host is told, then the
			// original instruction runs, uncounted a second time.
			if in, err = m.breakAt(ip, budget-rest-steps); err != nil {
				m.steps = budget - rest - steps
				return err
			}
			goto dispatch
		default:
			if ip, err = m.cold(in, regs, ip); err != nil {
				if ip, regs, err = m.raise(ip, err); err != nil {
					return err
				}
			}
		}
	}
}

// raise handles trap err of the innermost frame, stopped at ip: inside a
// try that catches it, the run resumes at the try (the address and
// registers to go on with are returned); otherwise err is returned, and
// ends the run. It is kept out of the dispatch loop, whose shape it leaves
// alone: a caught trap continues the loop like any instruction.
//
//go:noinline
func (m *Machine) raise(ip unsafe.Pointer, err error) (unsafe.Pointer, unsafe.Pointer, error) {
	if t, ok := err.(*Trap); ok && Catchable(t.Kind) && m.catchable() {
		ip, regs := m.catch(t)
		return ip, regs, nil
	}
	return ip, nil, err
}

// tryRec is an active try (OpTry): the frames and for loops active when
// it began, the register that receives its outcome, the constant of its
// failure variant and the address it resumes at after a trap.
type tryRec struct {
	frames, iters int32
	dst, k        int32
	target        unsafe.Pointer
}

// catchable drops the tries whose frame has returned (only a malformed
// image leaves one) and reports whether a try is active.
func (m *Machine) catchable() bool {
	for n := len(m.tries); n > 0 && int(m.tries[n-1].frames) > len(m.frames); n-- {
		m.tries = m.tries[:n-1]
	}
	return len(m.tries) > 0
}

// catch resumes after trap t at the innermost try: it drops the frames
// and ends the for loops begun inside it, stores the failure (Err or Some
// of Error { kind, message }) in the try's register and returns the
// address and registers to go on with. It is kept out of the dispatch
// loop.
//
//go:noinline
func (m *Machine) catch(t *Trap) (ip, regs unsafe.Pointer) {
	r := m.tries[len(m.tries)-1]
	m.tries = m.tries[:len(m.tries)-1]
	m.frames = m.frames[:r.frames]
	m.endIters(int(r.iters))
	if m.tierHold > int(r.frames) {
		m.tierHold = 0 // the call that fell back from the tier is gone
	}
	regs = m.regs(int(m.frames[r.frames-1].base))
	k := m.consts[r.k]
	et, vi := k.EnumType(), k.Variant()
	e := value.NewStruct(et.Variants[vi].Fields[0], []value.Value{value.Str(t.Kind), value.Str(t.Message)})
	*reg(regs, r.dst) = value.NewEnum(et, vi, []value.Value{e})
	return r.target, regs
}

// poll asks the host whether the run goes on, between two slices of
// PollSteps steps; an error from the host ends the handler run with that
// error, which is not a trap. An answer is a break spec to arm (a
// debugger pausing a long run). It is kept out of the dispatch loop.
//
//go:noinline
func (m *Machine) poll(ip unsafe.Pointer) error {
	m.frames[len(m.frames)-1].ip = ip
	spec, err := m.host.Prim(PrimPoll, nil)
	if err == nil && len(spec) > 0 {
		err = m.SetBreaks(spec)
	}
	return err
}

// fail records where the innermost frame stopped (ip is one past the
// trapping instruction) and returns the trap. It is kept out of the
// dispatch loop.
//
//go:noinline
func (m *Machine) fail(ip unsafe.Pointer, kind, msg string) error {
	m.frames[len(m.frames)-1].ip = ip
	return m.trap(kind, msg)
}

// failErr is fail for an error from a builtin, a primitive or a publish
// (which may have crossed the host gateway): its kind is the one it
// carries (see TrapError); a host error wrapped by Uncatchable (the
// recording failed) is KindRecord, and any other KindHost. Neither of
// those is caught. An interruption (ErrInterrupted) is returned as it is:
// it ends the run, not as a trap.
//
//go:noinline
func (m *Machine) failErr(ip unsafe.Pointer, err error) error {
	if errors.Is(err, ErrInterrupted) {
		// an interruption ends the run as it is, not as a trap
		m.frames[len(m.frames)-1].ip = ip
		return err
	}
	kind := KindHost
	var k interface{ TrapKind() string }
	switch {
	case errors.Is(err, ErrUncatchable):
		kind = KindRecord
	case errors.As(err, &k):
		kind = k.TrapKind()
	}
	return m.fail(ip, kind, err.Error())
}

// The loop addresses instructions and registers with unsafe pointer
// arithmetic instead of bounds-checked slices, which cuts the cost of a
// dispatch by about a third. It is safe because New validates the image:
// every register operand is inside its function's frame (argument windows
// included), every jump target inside its code (New makes targets relative
// to the next instruction, so a jump needs no code address), every code
// ends with a jump or a return, and the frame of every active function
// lies inside m.stack. FuzzRun runs mutated images to hold this.
const (
	instrSize = unsafe.Sizeof(image.Instr{})
	valueSize = unsafe.Sizeof(value.Value{})
)

// reg returns register i of the frame whose register 0 is at regs.
func reg(regs unsafe.Pointer, i int32) *value.Value {
	return (*value.Value)(unsafe.Add(regs, uintptr(i)*valueSize))
}

// window returns registers i … i+n-1 of the frame at regs.
func window(regs unsafe.Pointer, i int32, n int) []value.Value {
	return unsafe.Slice(reg(regs, i), n)
}

// jump returns the address d instructions after ip (d < 0: before).
func jump(ip unsafe.Pointer, d int32) unsafe.Pointer {
	return unsafe.Add(ip, int(d)*int(instrSize))
}

// pcOf returns the pc of the instruction at ip in the code at code.
func pcOf(code, ip unsafe.Pointer) int {
	return int((uintptr(ip) - uintptr(code)) / instrSize)
}

// regs returns the address of stack register i.
func (m *Machine) regs(i int) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(unsafe.SliceData(m.stack)), uintptr(i)*valueSize)
}

func (f *funcCode) codePtr() unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(f.code)) }

// mulInt multiplies two ints, reporting false on overflow.
func mulInt(a, b int64) (int64, bool) {
	const half = 1 << 31
	if uint64(a+half) < 2*half && uint64(b+half) < 2*half {
		return a * b, true // both fit in 32 bits: the product fits in 64
	}
	p := a * b
	if a != 0 && (p/a != b || (a == -1 && b == math.MinInt64)) {
		return 0, false
	}
	return p, true
}

// newMap builds a map from key, value register pairs (at least one).
func newMap(pairs []value.Value) value.Value {
	v := value.NewMap(pairs[0].Kind(), len(pairs)/2)
	mp := v.AsMap()
	for i := 0; i+1 < len(pairs); i += 2 {
		_ = mp.Set(pairs[i], pairs[i+1]) // a new map is not iterated
	}
	return v
}

// cold executes the rarer operations (those that allocate, call out, or
// work on floats, strings and maps) out of the dispatch loop. Keeping the
// loop function small pays in the wasm port, where each branch of a Go
// function goes through the function's one jump table and a large
// function spills more. It returns the address of the next instruction.
//
//go:noinline
func (m *Machine) cold(in *image.Instr, regs, ip unsafe.Pointer) (unsafe.Pointer, error) {
	switch in.Op {
	case image.OpNop:

	case image.OpMulInt:
		p, ok := mulInt((*reg(regs, in.B)).AsInt(), (*reg(regs, in.C)).AsInt())
		if !ok {
			return ip, m.fail(ip, KindArith, msgOverflow)
		}
		*reg(regs, in.A) = value.Int(p)
	case image.OpDivInt:
		a, b := (*reg(regs, in.B)).AsInt(), (*reg(regs, in.C)).AsInt()
		if b == 0 {
			return ip, m.fail(ip, KindArith, msgDivZero)
		}
		if b == -1 && a == math.MinInt64 {
			return ip, m.fail(ip, KindArith, msgOverflow)
		}
		*reg(regs, in.A) = value.Int(a / b)
	case image.OpRemInt:
		a, b := (*reg(regs, in.B)).AsInt(), (*reg(regs, in.C)).AsInt()
		if b == 0 {
			return ip, m.fail(ip, KindArith, msgDivZero)
		}
		if b == -1 && a == math.MinInt64 {
			return ip, m.fail(ip, KindArith, msgOverflow)
		}
		*reg(regs, in.A) = value.Int(a % b)
	case image.OpNegInt:
		a := (*reg(regs, in.B)).AsInt()
		if a == math.MinInt64 {
			return ip, m.fail(ip, KindArith, msgOverflow)
		}
		*reg(regs, in.A) = value.Int(-a)

	case image.OpAddFloat:
		*reg(regs, in.A) = value.Float((*reg(regs, in.B)).AsFloat() + (*reg(regs, in.C)).AsFloat())
	case image.OpSubFloat:
		*reg(regs, in.A) = value.Float((*reg(regs, in.B)).AsFloat() - (*reg(regs, in.C)).AsFloat())
	case image.OpMulFloat:
		*reg(regs, in.A) = value.Float((*reg(regs, in.B)).AsFloat() * (*reg(regs, in.C)).AsFloat())
	case image.OpDivFloat:
		*reg(regs, in.A) = value.Float((*reg(regs, in.B)).AsFloat() / (*reg(regs, in.C)).AsFloat())
	case image.OpRemFloat:
		*reg(regs, in.A) = value.Float(math.Mod((*reg(regs, in.B)).AsFloat(), (*reg(regs, in.C)).AsFloat()))
	case image.OpNegFloat:
		*reg(regs, in.A) = value.Float(-(*reg(regs, in.B)).AsFloat())
	case image.OpNot:
		*reg(regs, in.A) = value.Bool(!(*reg(regs, in.B)).AsBool())

	case image.OpAndInt:
		*reg(regs, in.A) = value.Int((*reg(regs, in.B)).AsInt() & (*reg(regs, in.C)).AsInt())
	case image.OpOrInt:
		*reg(regs, in.A) = value.Int((*reg(regs, in.B)).AsInt() | (*reg(regs, in.C)).AsInt())
	case image.OpXorInt:
		*reg(regs, in.A) = value.Int((*reg(regs, in.B)).AsInt() ^ (*reg(regs, in.C)).AsInt())
	case image.OpShlInt, image.OpShrInt:
		a, n := (*reg(regs, in.B)).AsInt(), (*reg(regs, in.C)).AsInt()
		if uint64(n) > 63 {
			return ip, m.fail(ip, KindArith, shiftMsg(n))
		}
		if in.Op == image.OpShlInt {
			*reg(regs, in.A) = value.Int(a << n)
		} else {
			*reg(regs, in.A) = value.Int(a >> n)
		}
	case image.OpNotInt:
		*reg(regs, in.A) = value.Int(^(*reg(regs, in.B)).AsInt())

	case image.OpConcatStr, image.OpConcatBytes:
		// The checker gives both operands the result's kind.
		v := m.tail.Concat(*reg(regs, in.B), *reg(regs, in.C))
		*reg(regs, in.A) = v
		m.charge(int64(v.ByteLen()))
	case image.OpConcatList:
		*reg(regs, in.A) = value.Concat((*reg(regs, in.B)).AsList(), (*reg(regs, in.C)).AsList())
		m.charge(value.ShallowSize(*reg(regs, in.A)))

	case image.OpEq, image.OpNe:
		eq, err := value.Equal(*reg(regs, in.B), *reg(regs, in.C))
		if err != nil {
			return ip, m.fail(ip, KindArg, err.Error())
		}
		*reg(regs, in.A) = value.Bool(eq == (in.Op == image.OpEq))
	case image.OpEqFloat:
		*reg(regs, in.A) = value.Bool((*reg(regs, in.B)).AsFloat() == (*reg(regs, in.C)).AsFloat())
	case image.OpNeFloat:
		*reg(regs, in.A) = value.Bool((*reg(regs, in.B)).AsFloat() != (*reg(regs, in.C)).AsFloat())
	case image.OpEqStr:
		*reg(regs, in.A) = value.Bool((*reg(regs, in.B)).AsStr() == (*reg(regs, in.C)).AsStr())
	case image.OpNeStr:
		*reg(regs, in.A) = value.Bool((*reg(regs, in.B)).AsStr() != (*reg(regs, in.C)).AsStr())
	case image.OpLtFloat:
		*reg(regs, in.A) = value.Bool((*reg(regs, in.B)).AsFloat() < (*reg(regs, in.C)).AsFloat())
	case image.OpLeFloat:
		*reg(regs, in.A) = value.Bool((*reg(regs, in.B)).AsFloat() <= (*reg(regs, in.C)).AsFloat())
	case image.OpLtStr:
		*reg(regs, in.A) = value.Bool((*reg(regs, in.B)).AsStr() < (*reg(regs, in.C)).AsStr())
	case image.OpLeStr:
		*reg(regs, in.A) = value.Bool((*reg(regs, in.B)).AsStr() <= (*reg(regs, in.C)).AsStr())

	case image.OpJNeStrK:
		if (*reg(regs, in.A)).AsStr() != m.consts[in.B].AsStr() {
			ip = jump(ip, in.C)
		}
	case image.OpJNeVariant:
		if (*reg(regs, in.A)).Variant() != int(in.B) {
			ip = jump(ip, in.C)
		}
	case image.OpEnumField:
		*reg(regs, in.A) = (*reg(regs, in.B)).Payload()[in.C]
	case image.OpCallB:
		v, err := m.builtin(image.Builtin(in.B), window(regs, in.C, image.Builtin(in.B).Arity()))
		if err != nil {
			return ip, m.failErr(ip, err)
		}
		*reg(regs, in.A) = v
		m.charge(builtinCost(image.Builtin(in.B), v))
	case image.OpCallPrim:
		p := &m.prims[in.B]
		v, err := m.callPrim(p, window(regs, in.C, p.nargs), ip)
		if err != nil {
			return ip, m.failErr(ip, err)
		}
		*reg(regs, in.A) = v

	case image.OpFormat:
		layout := m.consts[in.C].AsStr()
		*reg(regs, in.A) = m.formatParts(window(regs, in.B, len(layout)/8), layout)
	case image.OpNewList:
		*reg(regs, in.A) = value.NewList(window(regs, in.B, int(in.C)))
		m.charge(value.SizeListHeader + value.SizeSlot*int64(in.C))
	case image.OpNewMap:
		*reg(regs, in.A) = newMap(window(regs, in.B, 2*int(in.C)))
		m.charge(value.SizeMapHeader + value.SizeMapEntry*int64(in.C))
	case image.OpEmptyMap:
		*reg(regs, in.A) = value.NewMap(value.Kind(in.B), 0)
		m.charge(value.SizeMapHeader)
	case image.OpNewStruct:
		t := m.types[in.C]
		*reg(regs, in.A) = value.NewStruct(t, window(regs, in.B, len(t.Fields)))
		m.charge(value.SizeObjectHeader + value.SizeSlot*int64(len(t.Fields)))
	case image.OpNewEnum:
		c := &m.variants[in.C]
		if c.n == 2 { // a node of a tree, a pair
			*reg(regs, in.A) = value.NewEnum2(c.t, c.vi, reg(regs, in.B), reg(regs, in.B+1))
		} else {
			*reg(regs, in.A) = value.NewEnum(c.t, c.vi, window(regs, in.B, c.n))
		}
		m.charge(c.size)

	case image.OpIndexMap:
		v, ok := (*reg(regs, in.B)).AsMap().Get(*reg(regs, in.C))
		if !ok {
			return ip, m.fail(ip, KindIndex, keyMsg(*reg(regs, in.C)))
		}
		*reg(regs, in.A) = v
	case image.OpIndexStr:
		s, i := (*reg(regs, in.B)).AsStr(), (*reg(regs, in.C)).AsInt()
		if uint64(i) >= uint64(len(s)) {
			return ip, m.fail(ip, KindIndex, indexMsg(i, len(s), (*reg(regs, in.B)).Kind().String()))
		}
		*reg(regs, in.A) = value.Int(int64(s[i]))
	case image.OpSetIndexList:
		l, i := (*reg(regs, in.A)).AsList(), (*reg(regs, in.B)).AsInt()
		if err := l.Set(int(i), *reg(regs, in.C)); err != nil {
			if err == value.ErrIterating {
				return ip, m.fail(ip, KindState, msgListIter)
			}
			return ip, m.fail(ip, KindIndex, indexMsg(i, l.Len(), "list"))
		}
	case image.OpSetIndexMap:
		if err := (*reg(regs, in.A)).AsMap().Set(*reg(regs, in.B), *reg(regs, in.C)); err != nil {
			return ip, m.fail(ip, KindState, msgMapIter)
		}
		m.charge(value.SizeMapEntry)
	case image.OpSetField:
		(*reg(regs, in.A)).AsStruct().SetField(int(in.B), *reg(regs, in.C))
	case image.OpLenList:
		*reg(regs, in.A) = value.Int(int64((*reg(regs, in.B)).AsList().Len()))
	case image.OpLenMap:
		*reg(regs, in.A) = value.Int(int64((*reg(regs, in.B)).AsMap().Len()))
	case image.OpLenStr:
		*reg(regs, in.A) = value.Int(int64(len((*reg(regs, in.B)).AsStr())))
	case image.OpPush:
		if err := (*reg(regs, in.A)).AsList().Push(*reg(regs, in.B)); err != nil {
			return ip, m.fail(ip, KindState, msgListIter)
		}
		m.charge(value.SizeSlot)

	case image.OpIterList:
		(*reg(regs, in.A)).AsList().BeginIter()
		m.iters = append(m.iters, *reg(regs, in.A))
		*reg(regs, in.A+1) = value.Int(0)
	case image.OpIterMap:
		(*reg(regs, in.A)).AsMap().BeginIter()
		m.iters = append(m.iters, *reg(regs, in.A))
		*reg(regs, in.A+1) = value.Int(0)
	case image.OpForMap:
		mp, i := (*reg(regs, in.B)).AsMap(), (*reg(regs, in.B+1)).AsInt()
		if int(i) < mp.Len() {
			*reg(regs, in.A) = mp.KeyAt(int(i))
			*reg(regs, in.B+1) = value.Int(i + 1)
			ip = jump(ip, in.C)
		}
	case image.OpForMapVal:
		*reg(regs, in.A) = (*reg(regs, in.B)).AsMap().ValueAt(int((*reg(regs, in.B+1)).AsInt()) - 1)
	case image.OpIterEnd:
		m.endIters(len(m.iters) - 1)

	case image.OpTry:
		m.tries = append(m.tries, tryRec{frames: int32(len(m.frames)), iters: int32(len(m.iters)),
			dst: in.A, k: in.B, target: jump(ip, in.C)})
	case image.OpTryEnd:
		if len(m.tries) == 0 {
			return ip, m.fail(ip, KindInternal, "internal error: try.end without try")
		}
		m.tries = m.tries[:len(m.tries)-1]
		k := m.consts[in.B]
		if t, vi := k.EnumType(), k.Variant(); len(t.Variants[vi].Fields) == 1 {
			*reg(regs, in.A) = value.NewEnum(t, vi, window(regs, in.A, 1))
		} else {
			*reg(regs, in.A) = k
		}
	case image.OpTryDrop:
		if int(in.A) > len(m.tries) {
			return ip, m.fail(ip, KindInternal, "internal error: try.drop without try")
		}
		m.tries = m.tries[:len(m.tries)-int(in.A)]

	default:
		return ip, m.fail(ip, KindInternal, "internal error: bad opcode "+in.Op.String())
	}
	if m.overAllowance() {
		if err := m.measure(ip); err != nil {
			return ip, m.failErr(ip, err)
		}
	}
	return ip, nil
}
