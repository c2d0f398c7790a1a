package vm

import (
	"math"
	"unsafe"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm/value"
)

// Guards of one shape, the commonest (`on Token(t) if t.to == id`), are
// evaluated without the dispatch loop: a guard whose whole code is
//
//	field  rX, r0, F     ; a field of the payload
//	eq.int rY, rA, rB    ; compared with a parameter (or itself)
//	ret    rY
//
// writes the same registers, returns the same bool and counts the same
// three steps as the interpreter would; it cannot trap, so only a budget
// with fewer than three steps left runs it through the loop (which then
// traps at the exact step), and so does a machine with a debugger, whose
// breaks are patched into the code the loop runs. A ring of 100 such
// guards per publish spent nearly all its time entering and leaving the
// loop.

// fieldEqGuard is a guard of that shape; ok is false for any other.
type fieldEqGuard struct {
	ok         bool
	field      int32 // F
	x, y, a, b int32 // the registers
}

// fieldEqOn is false only in tests that compare the fast path with the
// dispatch loop.
var fieldEqOn = true

// fieldEqSteps is the steps a fieldEqGuard takes.
const fieldEqSteps = 3

// fieldEqShape returns fn's shape (see fieldEqGuard).
func fieldEqShape(f *image.Func) fieldEqGuard {
	c := f.Code
	if f.Kind != image.FuncGuard || len(c) != 3 || c[0].Op != image.OpField || c[1].Op != image.OpEqInt || c[2].Op != image.OpRet {
		return fieldEqGuard{}
	}
	g := fieldEqGuard{ok: true, field: c[0].C, x: c[0].A, y: c[1].A, a: c[1].B, b: c[1].C}
	// The payload is r0 and the parameters r1…: the compared registers
	// must hold the field or an int or bool parameter (the checker typed
	// eq.int's operands; a parameter register is one of them).
	operand := func(r int32) bool { return r == g.x || r >= 1 && int(r) < f.NumParams }
	if c[0].B != 0 || g.x < 1 || int(g.x) >= f.FrameSize || g.y < 0 || int(g.y) >= f.FrameSize ||
		!operand(g.a) || !operand(g.b) || c[2].A != g.y {
		return fieldEqGuard{}
	}
	return g
}

// fieldEq returns the shape of guard function fn, working the shapes of
// every function out on first use.
func (m *Machine) fieldEq(fn int) fieldEqGuard {
	if !fieldEqOn {
		return fieldEqGuard{}
	}
	if m.fieldEqs == nil {
		m.fieldEqs = make([]fieldEqGuard, len(m.img.Funcs))
		for i := range m.img.Funcs {
			m.fieldEqs[i] = fieldEqShape(&m.img.Funcs[i])
		}
	}
	return m.fieldEqs[fn]
}

// runFieldEq runs guard g on the frame at base (the payload and the
// parameters in place) as the interpreter would, and returns its result.
func (m *Machine) runFieldEq(g fieldEqGuard, base int) bool {
	return m.runFieldEqOn(g, base, m.stack[base].AsStruct().Field(int(g.field)))
}

// runFieldEqOn is runFieldEq with the payload's field f: register 0 is
// not read, and ends holding the result.
func (m *Machine) runFieldEqOn(g fieldEqGuard, base int, f value.Value) bool {
	regs := m.stack[base:]
	regs[g.x] = f
	r := value.Bool(regs[g.a].AsInt() == regs[g.b].AsInt())
	regs[g.y] = r
	regs[0] = r
	return r.AsBool()
}

// Rings of such guards are indexed. A topic whose subscribers are many
// instances of one locus, each with `on T(t) if t.f == id`, has every
// publish compare one field with N parameters; the index answers with
// one lookup. A run is a contiguous stretch (in main order, the order of
// the guard bits) of at least minGuardRun guarded subscribers with the
// same guard function of the fieldEq shape, all of whose parameters are
// immutable values (numbers, bools, strings, bytes: guardParamValues
// shares them). Each guard of a run compares the field with one of its
// parameters, or compares two constants (its parameters, or the field
// with itself): its result is "field == k" or a constant, so a run is a
// map from k to the bits whose guard holds for that field value, plus
// the bits that hold whatever the field.
//
// An indexed run does everything the loop does, once for all its
// guards where the result is the same: the payload is decoded once
// (as the loop does for a payload of scalar fields), the stack grows
// (or traps) at the run's first guard, the steps (fieldEqSteps a guard)
// and the memory charges are added up, and the registers are left as
// the run's last guard leaves them (the same function writes the same
// registers each time, so the last one's values are all that remain;
// the memory limit's measure reads them). None of this can trap part-way
// (a fieldEq guard neither traps nor measures), so only the budget is
// checked: with fewer steps left than the run takes, its guards go
// through the loop one by one, which traps at the exact guard and step.
// A machine with a debugger never uses the index (breaks are patched
// into the code the loop runs), nor one with fieldEqOn false.

// minGuardRun is the fewest guards an index covers.
const minGuardRun = 4

// guardIndexOn is false only in tests that compare the index with the
// guards run one by one.
var guardIndexOn = true

// guardRun is one indexed run of a topic's guarded subscribers.
type guardRun struct {
	lo, hi int          // the subscribers subs[lo:hi]
	fe     fieldEqGuard // their guard's shape
	size   int          // its frame size
	local  bool         // it is payloadLocal
	last   []value.Value
	// byKey[k] are the bits (indices into subs) whose guard holds when
	// the field's int is k; always are those whose guard always holds.
	// When the keys are few and close together (ids 0…N-1), dense[k-min]
	// holds byKey[k] and byKey is nil.
	byKey  map[int64][]int32
	dense  [][]int32
	min    int64
	always []int32
	// charge is what the loop charges to the memory account per guard
	// besides the payload's bytes: the decoded struct's shallow size.
	charge int64
}

// holding returns the bits of r's guards that hold, besides always,
// when the field's int is k.
func (r *guardRun) holding(k int64) []int32 {
	if r.byKey == nil {
		if i := uint64(k - r.min); i < uint64(len(r.dense)) {
			return r.dense[i]
		}
		return nil
	}
	return r.byKey[k]
}

// guardIndex returns topic's indexed runs, sorted, making them on first
// use after SetGuardParams.
func (m *Machine) guardIndex(topic int) []guardRun {
	if m.guardIdx == nil {
		m.guardIdx = make([][]guardRun, len(m.img.Topics))
		m.guardIdxMade = make([]bool, len(m.img.Topics))
	}
	if !m.guardIdxMade[topic] {
		m.guardIdx[topic] = m.indexGuards(topic, m.guards[topic])
		m.guardIdxMade[topic] = true
		m.guardTable(topic)
	}
	return m.guardIdx[topic]
}

// indexGuards finds the runs of topic's subs.
func (m *Machine) indexGuards(topic int, subs []GuardSub) []guardRun {
	var runs []guardRun
	for lo := 0; lo < len(subs); {
		hi := lo + 1
		if m.indexable(subs[lo]) {
			for hi < len(subs) && subs[hi].Guard == subs[lo].Guard && m.indexable(subs[hi]) {
				hi++
			}
			if hi-lo >= minGuardRun {
				runs = append(runs, m.makeRun(topic, subs, lo, hi))
			}
		}
		lo = hi
	}
	return runs
}

// indexable reports whether sub's guard has the fieldEq shape and its
// parameters are shared immutable values, as many as the guard reads.
func (m *Machine) indexable(sub GuardSub) bool {
	fe := m.fieldEq(sub.Guard)
	if !fe.ok {
		return false
	}
	if _, err := m.guardParamValues(sub.Inst); err != nil || sub.Inst >= len(m.guardArgs) || m.guardArgs[sub.Inst] == nil {
		return false
	}
	n := len(m.guardArgs[sub.Inst])
	return n == m.img.Funcs[sub.Guard].NumParams-1 && 1+n <= m.funcs[sub.Guard].frameSize
}

// makeRun indexes subs[lo:hi] of topic, which are indexable with one
// guard.
func (m *Machine) makeRun(topic int, subs []GuardSub, lo, hi int) guardRun {
	g := subs[lo].Guard
	r := guardRun{lo: lo, hi: hi, fe: m.fieldEq(g), size: m.funcs[g].frameSize, local: m.funcs[g].payloadLocal,
		last:   m.guardArgs[subs[hi-1].Inst],
		byKey:  map[int64][]int32{},
		charge: value.SizeObjectHeader + value.SizeSlot*int64(len(m.PayloadType(topic).Fields))}
	for i := lo; i < hi; i++ {
		pvs := m.guardArgs[subs[i].Inst]
		// operand: a parameter's value, or ok false for the field.
		operand := func(reg int32) (value.Value, bool) {
			if reg == r.fe.x {
				return value.Value{}, false
			}
			return pvs[reg-1], true
		}
		a, aParam := operand(r.fe.a)
		b, bParam := operand(r.fe.b)
		switch {
		case !aParam && !bParam: // the field with itself
			r.always = append(r.always, int32(i))
		case aParam && bParam:
			if a.AsInt() == b.AsInt() {
				r.always = append(r.always, int32(i))
			}
		case aParam:
			r.byKey[a.AsInt()] = append(r.byKey[a.AsInt()], int32(i))
		default:
			r.byKey[b.AsInt()] = append(r.byKey[b.AsInt()], int32(i))
		}
	}
	if len(r.byKey) > 0 {
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for k := range r.byKey {
			lo, hi = min(lo, k), max(hi, k)
		}
		if uint64(hi-lo) < uint64(2*len(r.byKey)+16) {
			r.dense, r.min = make([][]int32, hi-lo+1), lo
			for k, bs := range r.byKey {
				r.dense[k-lo] = bs
			}
			r.byKey = nil
		}
	}
	return r
}

// evalRun evaluates run r of topic's guards as the loop would (see
// above), on the field f of the payload of size bytes, with the frame at
// base, setting the bits whose guard holds. It returns false, having
// done nothing, when the stack cannot grow to the frame (the loop traps
// there).
func (m *Machine) evalRun(r *guardRun, base, size int, f value.Value, bits []byte) bool {
	if base+r.size > len(m.stack) && !m.grow(base+r.size) {
		return false
	}
	m.high = max(m.high, base+r.size)
	n := int64(r.hi - r.lo)
	m.charge(n * (int64(size) + r.charge))
	// The registers as the run's last guard leaves them.
	regs := m.stack[base:]
	for i, v := range r.last {
		regs[1+i] = v
	}
	m.runFieldEqOn(r.fe, base, f)
	for _, b := range r.holding(f.AsInt()) {
		bits[b/8] |= 1 << (b % 8)
	}
	for _, b := range r.always {
		bits[b/8] |= 1 << (b % 8)
	}
	return true
}

// Guard tables for handlers compiled whole (vm/internal/tier, handler.go).
// A handler that the wasm engine's host runs without the interpreter may
// publish a guarded topic whose guards are one indexed run with dense
// keys: the case evalGuards answers with one lookup. The compiled code
// cannot call into the machine, so the machine lays the lookup's answer
// out as plain words and bytes in its memory, which the compiled code
// reads:
//
//	guardTabs: [0] the address of m.stack (a slice header: its length at
//	           +8), [1] the address of the memory allowance, then one word
//	           per topic: the address of its table, or 0
//	a table:   see the gt… offsets; its bits hold, for each key k from
//	           min on, the guard bytes a publish whose field is k sends,
//	           then the bytes for any other key (the run's always bits)
//
// A table is valid only while the index it was made from is the one
// evalGuards uses: SetGuardParams and a debugger clear its valid word
// (the words stay where they are: compiled code may still read them),
// and the next indexing rewrites it. Anything else (no table, valid 0, a
// count or a field other than the compiled code expects, a key out of
// an int64 the table covers…) makes the compiled handler hand the
// delivery back to the interpreter.

// The words of a topic's guard table.
const (
	gtValid  = iota // 1 when the rest may be used
	gtSubs          // the topic's guarded subscribers: the run covers them all
	gtField         // the payload field the guards compare
	gtMin           // the first key of the table
	gtKeys          // the keys from gtMin on
	gtSize          // the guards' frame size
	gtCharge        // the run's memory charge besides the payload's bytes
	gtBits          // the address of the bits: (gtKeys+1) × GuardBits(gtSubs) bytes
	gtWords
)

// guardTabMost bounds a table's bits: more (thousands of subscribers
// with dense keys) and the compiled code hands such publishes back.
const guardTabMost = 256 << 10

// GuardTables returns the address of the machine's guard tables (see
// above), making them on first use.
func (m *Machine) GuardTables() uintptr {
	if m.guardTabs == nil {
		m.guardTabs = make([]uint64, 2+len(m.img.Topics))
		m.guardTab = make([][]uint64, len(m.img.Topics))
		m.guardTabBits = make([][]byte, len(m.img.Topics))
		m.guardTabs[0] = uint64(uintptr(unsafe.Pointer(&m.stack)))
		m.guardTabs[1] = uint64(uintptr(unsafe.Pointer(&m.mem.allowance)))
		for t := range m.img.Topics {
			if m.guardIdxMade != nil && m.guardIdxMade[t] {
				m.guardTable(t)
			}
		}
	}
	return uintptr(unsafe.Pointer(&m.guardTabs[0]))
}

// invalidGuardTables clears the valid word of every guard table.
func (m *Machine) invalidGuardTables() {
	for _, tab := range m.guardTab {
		if tab != nil {
			tab[gtValid] = 0
		}
	}
}

// guardTable writes topic's guard table from its index (made), when the
// machine has guard tables and the index is the one lookup evalGuards
// answers with.
func (m *Machine) guardTable(topic int) {
	if m.guardTabs == nil {
		return
	}
	tab := m.guardTab[topic]
	if tab != nil {
		tab[gtValid] = 0
	}
	subs := m.guards[topic]
	runs := m.guardIdx[topic]
	if !guardIndexOn || !fieldEqOn || m.dbg != nil || len(subs) < minGuardRun || len(runs) != 1 ||
		runs[0].lo != 0 || runs[0].hi != len(subs) || runs[0].byKey != nil {
		return
	}
	r := &runs[0]
	fs := m.PayloadType(topic).Fields
	if r.fe.field < 0 || int(r.fe.field) >= len(fs) || fs[r.fe.field].Type.Kind != value.KindInt && fs[r.fe.field].Type.Kind != value.KindBool {
		return
	}
	nb := GuardBits(len(subs))
	if (len(r.dense)+1)*nb > guardTabMost {
		return
	}
	bits := make([]byte, (len(r.dense)+1)*nb)
	set := func(at []byte, bs []int32) {
		for _, b := range bs {
			at[b/8] |= 1 << (b % 8)
		}
	}
	for k := range len(r.dense) + 1 {
		at := bits[k*nb : (k+1)*nb]
		if k < len(r.dense) {
			set(at, r.dense[k])
		}
		set(at, r.always)
	}
	if tab == nil {
		tab = make([]uint64, gtWords)
		m.guardTab[topic] = tab
		m.guardTabs[2+topic] = uint64(uintptr(unsafe.Pointer(&tab[0])))
	}
	m.guardTabBits[topic] = bits // kept alive while the table points to it
	n := int64(len(subs))
	tab[gtSubs], tab[gtField], tab[gtMin], tab[gtKeys] = uint64(n), uint64(r.fe.field), uint64(r.min), uint64(len(r.dense))
	tab[gtSize], tab[gtCharge] = uint64(r.size), uint64(n*r.charge)
	tab[gtBits] = 0
	if len(bits) > 0 {
		tab[gtBits] = uint64(uintptr(unsafe.Pointer(&bits[0])))
	}
	tab[gtValid] = 1
}
