package vm

import (
	"errors"
	"math"
	"strconv"
	"unsafe"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm/internal/tier"
	"github.com/hale-lang/hale/vm/value"
)

// Limits of one machine. A call deeper than MaxDepth frames, or one whose
// frame would take the value stack past MaxStack registers, traps with
// "stack overflow".
const (
	MaxDepth = 100_000
	MaxStack = 1 << 21
)

// Machine runs one program image for the instances a consumer hosts. It is
// not safe for concurrent use: one machine belongs to one consumer's
// goroutine (or wasm instance). Every instance of the image has its slots
// in every machine, but a machine only touches the instances it is asked
// to Init and Deliver to.
type Machine struct {
	img    *image.Image
	host   Host
	types  []*value.Type
	consts []value.Value
	funcs  []funcCode
	prims  []primCode
	insts  []instance
	// handlers[locus][topic] is the function handling topic, or -1.
	handlers [][]int32

	stack  []value.Value // registers of every active frame
	frames []frame
	iters  []value.Value // containers of the active for loops, innermost last
	// fmtText and fmtPart are format's scratch buffers, reused so that a
	// call allocates only its result.
	fmtText, fmtPart []byte
	buf              []byte   // scratch: encoded arguments and payloads
	text             []byte   // scratch: str() of a printed value
	high             int      // registers used since the last finish
	steps            int64    // steps used by the last run
	tries            []tryRec // the active tries, innermost last
	// initBudget caps Init's steps: none in a real run (state initialisers
	// are not counted), set by the fuzz tests so that they end.
	initBudget int64
	busy       bool

	// The second tier (EnableTier): tierCall is nil when it is off.
	tierCall TierCaller
	tierPlan *tier.Plan
	tierBuf  []byte
	tierLog  []uint64 // the undo log of compiled code's writes (tier.GlobalLog)
	// tierAllocs: some compiled function allocates in the arena
	// (tierarena.go), so tier calls hand compiled code the allocation
	// block.
	tierAllocs bool
	// regionOrig[i] is the instruction at region i's header, which
	// holds opRegion (shared with siblings, like the code); regions are
	// this machine's probes of them, regionOut their out buffer.
	regionOrig []image.Instr
	regions    []regionProbe
	regionOut  []uint64
	rcall      regionCall // the region call under way (TierStep)

	// payloads[topic] is the struct reused for the payloads of the topic's
	// payloadLocal handlers.
	payloads []*value.Struct
	// scalarPays[topic] describes payloads[topic] for
	// decodeScalarPayload (deliver.go); made on first use.
	scalarPays []scalarPayload
	// tierHold, when not 0, is the frame count of a call whose tier
	// call fell back: calls deeper than it are interpreted.
	tierHold int
	// tierWasted counts the steps of tier calls handed back for a
	// measure or for room (TierMeasure) since the last measure, and
	// tierHoldMeasure, once they pass tierWastedMax, has every call
	// interpreted until the next measure or until tierRetryCharge more
	// has been charged (tierHoldCharged: the charges when it began);
	// tierSkipOnce: a region left at a call that compiled code handed
	// back, which the interpreter runs without trying it again.
	tierHoldMeasure bool
	tierSkipOnce    bool
	tierWasted      int64
	tierHoldCharged int64
	// listPool: empty lists for compiled code's `[]` (tier.go), made
	// with the machine's region buffers.
	listPool *listPool

	mem     memory     // the memory limit's accounting (memory.go)
	live    *liveTable // which registers a measure counts (memory.go), shared with siblings
	liveSet []uint64   // a frame's registers to count, reused by measures

	// Guards (guard.go): guards[topic] are the topic's guarded
	// subscribers in main order; guardParams[inst] is inst's parameter
	// tuple (SetGuardParams). The rest are scratch reused by publishes.
	guards      [][]GuardSub
	guardParams [][]byte
	guardBits   []byte
	guardTries  []tryRec
	pubBuf      []byte
	// guardArgs[inst] caches inst's decoded parameters when they are all
	// immutable (numbers, bools, strings, bytes): sharing them is then
	// the same as copying. guardPayloads[topic] is the struct reused for
	// the payloads of payloadLocal guards.
	guardArgs     [][]value.Value
	guardPayloads []*value.Struct
	fieldEqs      []fieldEqGuard // by function, made on first use (guardfast.go)
	// guardIdx[topic] are the topic's indexed runs of guards, made on
	// first use (guardIdxMade[topic]) after SetGuardParams (guardfast.go).
	guardIdx     [][]guardRun
	guardIdxMade []bool
	// guardTabs, guardTab and guardTabBits are the guard tables that
	// handlers compiled whole read (guardfast.go), made on first use.
	guardTabs    []uint64
	guardTab     [][]uint64
	guardTabBits [][]byte

	dbg *debugger // armed breaks (debug.go); nil without a debugger

	// variants[k] is what OpNewEnum needs of enum constant k, taken
	// from it once (zero for other constants). It is last so that the
	// fields the dispatch loop reads keep their offsets.
	variants []variantCtor

	// tail lets s = s + t append in place (value.Tail).
	tail value.Tail
}

// funcCode is a function ready to run. Its code is a copy of the image's
// in which every jump target (operand C of a jump) is relative to the
// instruction after the jump.
type funcCode struct {
	code      []image.Instr
	frameSize int
	fn        *image.Func
	tier      bool // called through the second tier (EnableTier)
	// tierCalls and tierSteps count the function's tier calls and their
	// steps, until the tier decides to keep it (see tierProbeCalls).
	tierCalls int
	tierSteps int64
	tierWaste int64 // steps of its calls handed back for a measure or for room
	// payloadLocal: a handler that only reads fields of its payload
	// (register 0), so no reference to the payload outlives its run.
	payloadLocal bool
}

// variantCtor is an enum variant as OpNewEnum makes it: its type, its
// index, the number of values it carries and the size a new one is
// charged (value.ShallowSize of it).
type variantCtor struct {
	t    *value.Type
	vi   int
	n    int
	size int64
}

type primCode struct {
	id     uint16
	name   string
	nargs  int
	result *value.Type
	// withPos: the call's source position goes to the host after the
	// arguments, as one more string (std::process::exit, whose journal
	// entry records where the program exited).
	withPos bool
}

// ExitPrimitive is the primitive whose gateway arguments are its exit
// code and then the source position of the call.
const ExitPrimitive = "std::process::exit"

// instance is one instance's slots: its parameters then its state.
type instance struct {
	locus  int
	slots  []value.Value
	inited bool
}

// frame is an active call: its function (an index of m.funcs), the offset
// of its register 0 on the stack and, when it is the caller of another
// frame (or trapped), the address of the instruction after the call (or
// after the trapping instruction). It holds one pointer, so pushing a
// frame costs one write barrier check.
type frame struct {
	ip   unsafe.Pointer
	base int32 // MaxStack fits
	fn   int32
}

// New prepares a machine for img, which it validates. The host serves
// every primitive call, publish and print; it is called only from within
// Init and Deliver, on the caller's goroutine.
func New(img *image.Image, host Host) (*Machine, error) {
	if img == nil {
		return nil, errors.New("vm: no image")
	}
	if host == nil {
		return nil, errors.New("vm: no host")
	}
	if err := img.Validate(); err != nil {
		return nil, err
	}
	m := &Machine{
		img:        img,
		host:       host,
		types:      Types(img),
		stack:      make([]value.Value, 256),
		initBudget: math.MaxInt64,
	}
	m.SetMemoryLimit(DefaultMemoryLimit)
	m.consts = make([]value.Value, len(img.Consts))
	m.variants = make([]variantCtor, len(img.Consts))
	for i, k := range img.Consts {
		m.consts[i] = m.constValue(k)
		if k.Kind == image.KindEnum {
			t := m.types[k.Type]
			n := len(t.Variants[k.Variant].Fields)
			m.variants[i] = variantCtor{t: t, vi: k.Variant, n: n}
			if n > 0 {
				m.variants[i].size = value.SizeObjectHeader + value.SizeSlot*int64(n)
			}
		}
	}
	m.funcs = make([]funcCode, len(img.Funcs))
	for i := range img.Funcs {
		f := &img.Funcs[i]
		m.funcs[i] = funcCode{code: relativeJumps(f.Code), frameSize: f.FrameSize, fn: f,
			payloadLocal: (f.Kind == image.FuncHandler || f.Kind == image.FuncGuard) && onlyReadsFields(f.Code)}
	}
	m.live = newLiveTable(img)
	m.prims = make([]primCode, len(img.Prims))
	for i, p := range img.Prims {
		m.prims[i] = primCode{id: p.ID, name: p.Name, nargs: len(p.Params), result: m.types[p.Result], withPos: p.Name == ExitPrimitive}
	}
	m.handlers = make([][]int32, len(img.Loci))
	for i := range img.Loci {
		h := make([]int32, len(img.Topics))
		for t := range h {
			h[t] = -1
		}
		for _, hr := range img.Loci[i].Handlers {
			h[hr.Topic] = int32(hr.Func)
		}
		m.handlers[i] = h
	}
	m.payloads = make([]*value.Struct, len(img.Topics))
	m.guards = make([][]GuardSub, len(img.Topics))
	for t := range img.Topics {
		m.guards[t] = GuardedSubscribers(img, t)
	}
	m.insts = make([]instance, len(img.Instances))
	for i, in := range img.Instances {
		m.insts[i].locus = in.Locus
	}
	return m, nil
}

// relativeJumps returns a copy of code whose jump targets are relative to
// the instruction after the jump. The copy has one spare instruction at
// the end, never executed (validated code ends in a jump or return): the
// dispatch loop advances ip before it executes an instruction, and the
// spare keeps that pointer inside the allocation, as the race detector's
// pointer checks require.
func relativeJumps(code []image.Instr) []image.Instr {
	out := make([]image.Instr, len(code), len(code)+1)
	for pc, in := range code {
		if in.Op.IsJump() {
			in.C -= int32(pc + 1)
		}
		out[pc] = in
	}
	return out[:len(code):cap(out)]
}

func (m *Machine) constValue(k image.Const) value.Value {
	switch k.Kind {
	case image.KindInt:
		return value.Int(k.Int)
	case image.KindFloat:
		return value.Float(k.Float)
	case image.KindBool:
		return value.Bool(k.Int != 0)
	case image.KindString:
		return value.Str(k.Str)
	case image.KindBytes:
		return value.BytesOf(k.Str)
	case image.KindEnum:
		// For a variant with values this is only the descriptor NewEnum
		// reads (type and variant); the code never loads it.
		return value.NewEnum(m.types[k.Type], k.Variant, nil)
	}
	return value.Value{}
}

// Types returns the runtime descriptor of every type of img's type table,
// indexed by image.TypeRef. Struct and enum descriptors are built once, so
// recursive types point at themselves. img must be valid (Validate).
func Types(img *image.Image) []*value.Type {
	basic := [...]*value.Type{value.VoidType, value.IntType, value.FloatType, value.BoolType, value.StringType, value.BytesType}
	ts := make([]*value.Type, len(img.Types))
	for i := range ts {
		if i < len(basic) {
			ts[i] = basic[i]
		} else {
			ts[i] = &value.Type{Kind: value.Kind(img.Types[i].Kind)}
		}
	}
	for i := len(basic); i < len(ts); i++ {
		it, t := &img.Types[i], ts[i]
		t.Name = it.Name
		switch it.Kind {
		case image.KindList:
			t.Elem = ts[it.Elem]
		case image.KindMap:
			t.Key, t.Elem = ts[it.Key], ts[it.Elem]
		case image.KindStruct:
			t.Fields = make([]value.Field, len(it.Fields))
			for j, f := range it.Fields {
				t.Fields[j] = value.Field{Name: f.Name, Type: ts[f.Type]}
			}
		case image.KindEnum:
			t.Variants = make([]value.Variant, len(it.Variants))
			for j, v := range it.Variants {
				vt := value.Variant{Name: v.Name}
				for _, f := range v.Fields {
					vt.Fields = append(vt.Fields, ts[f])
				}
				t.Variants[j] = vt
			}
		}
	}
	return ts
}

// Image returns the image the machine runs.
func (m *Machine) Image() *image.Image { return m.img }

// Type returns the runtime descriptor of image type t (nil when out of
// range), to decode payloads and results with package value.
func (m *Machine) Type(t image.TypeRef) *value.Type {
	if t < 0 || int(t) >= len(m.types) {
		return nil
	}
	return m.types[t]
}

// PayloadType returns the descriptor of topic's payload struct.
func (m *Machine) PayloadType(topic int) *value.Type {
	if topic < 0 || topic >= len(m.img.Topics) {
		return nil
	}
	return m.types[m.img.Topics[topic].Type]
}

// StateTypes returns the types of inst's state variables in declaration
// order: the tuple State encodes.
func (m *Machine) StateTypes(inst int) []*value.Type {
	if inst < 0 || inst >= len(m.img.Instances) {
		return nil
	}
	l := &m.img.Loci[m.img.Instances[inst].Locus]
	ts := make([]*value.Type, len(l.State))
	for i, v := range l.State {
		ts[i] = m.types[v.Type]
	}
	return ts
}

// Steps returns the number of steps the last Init or Deliver executed.
func (m *Machine) Steps() int64 { return m.steps }

func (m *Machine) instanceErr(inst int) error {
	if inst < 0 || inst >= len(m.insts) {
		return errors.New("vm: no instance " + strconv.Itoa(inst))
	}
	if m.busy {
		return errors.New("vm: machine is already running")
	}
	return nil
}

// Init prepares instance inst: it evaluates the instance's spawn
// arguments into its parameter slots, then runs its locus's state
// initialisers. Neither is step counted. A trap is returned as a *Trap.
// Init may be called again to start the instance afresh.
func (m *Machine) Init(inst int) (err error) {
	if err := m.instanceErr(inst); err != nil {
		return err
	}
	in := &m.insts[inst]
	l := &m.img.Loci[in.locus]
	in.slots = make([]value.Value, l.NumSlots)
	m.charge(value.SizeSlot * int64(l.NumSlots))
	in.inited = false
	m.busy = true
	defer m.finish(&err)
	m.steps = 0
	if m.dbg != nil {
		m.dbg.inst = inst
	}
	if err := m.exec(m.img.Instances[inst].Spawn, in.slots, m.initBudget); err != nil {
		return err
	}
	if err := m.exec(l.Init, in.slots, m.initBudget); err != nil {
		return err
	}
	in.inited = true
	return nil
}

// Deliver runs one handler of instance inst to completion: its `on start`
// when handler is HandlerStart, otherwise its handler for topic handler,
// with payload (the canonical encoding of the topic's payload struct)
// decoded into the handler's parameter. Within the handler run at most
// the locus's @budget steps execute. A trap is returned as a *Trap; any
// other error (unknown instance, no such handler, a payload that does not
// decode) means the caller is at fault, and nothing ran.
func (m *Machine) Deliver(inst int, handler int, payload []byte) (err error) {
	if inst < 0 || inst >= len(m.insts) || m.busy {
		return m.instanceErr(inst)
	}
	in := &m.insts[inst]
	if !in.inited {
		return errors.New("vm: instance " + m.img.Instances[inst].Name + " is not initialised")
	}
	l := &m.img.Loci[in.locus]
	var fn int
	if handler == HandlerStart {
		if l.Start < 0 {
			return errors.New("vm: " + l.Name + " has no on start")
		}
		fn = l.Start
	} else {
		if handler < 0 || handler >= len(m.img.Topics) || m.handlers[in.locus][handler] < 0 {
			return errors.New("vm: " + l.Name + " does not handle topic " + strconv.Itoa(handler))
		}
		fn = int(m.handlers[in.locus][handler])
		// No reference to the payload of a payloadLocal handler outlives
		// its run: decode it into the topic's reused struct, by
		// decodeScalarPayload when it can (it also sets register 0).
		if !m.funcs[fn].payloadLocal || !m.decodeScalarPayload(handler, payload) {
			var v value.Value
			var err error
			if m.funcs[fn].payloadLocal {
				v, err = value.DecodeStructInto(payload, m.PayloadType(handler), m.payloads[handler])
				if err == nil {
					m.payloads[handler] = v.AsStruct()
					m.keepPayload(handler, v)
				}
			} else {
				v, err = value.Decode(payload, m.PayloadType(handler))
			}
			if err != nil {
				return errors.New("vm: payload of " + m.img.Topics[handler].Name + ": " + err.Error())
			}
			m.stack[0] = v
			m.charge(int64(len(payload)) + value.ShallowSize(v))
		}
	}
	budget := int64(math.MaxInt64)
	if l.Budget > 0 {
		budget = l.Budget
	}
	m.busy = true
	defer m.finish(&err)
	if m.dbg != nil {
		m.dbg.inst = inst
	}
	return m.exec(fn, in.slots, budget)
}

// State returns the canonical encoding of the tuple of inst's state
// variables, in declaration order (not its parameters): the bytes that
// StateTypes decodes.
func (m *Machine) State(inst int) ([]byte, error) {
	return m.slotTuple(inst, func(l *image.Locus) []image.Var { return l.State })
}

// slotTuple encodes, as a tuple, the slots of an initialised instance
// that vars picks from its locus (its state or its parameters).
func (m *Machine) slotTuple(inst int, vars func(*image.Locus) []image.Var) ([]byte, error) {
	if err := m.instanceErr(inst); err != nil {
		return nil, err
	}
	in := &m.insts[inst]
	if !in.inited {
		return nil, errors.New("vm: instance " + m.img.Instances[inst].Name + " is not initialised")
	}
	picked := vars(&m.img.Loci[in.locus])
	vs := make([]value.Value, len(picked))
	for i, v := range picked {
		vs[i] = in.slots[v.Slot]
	}
	b, err := value.EncodeTuple(nil, vs)
	if err != nil {
		// No partial tuple: the wasm engine's guest returns none.
		return nil, err
	}
	return b, nil
}

// finish ends a run: it turns a Go panic (a broken invariant; a valid
// image compiled from a checked program never causes one) into a trap,
// ends the for loops a trap left open, and clears the registers so that
// they keep no garbage alive.
func (m *Machine) finish(err *error) {
	if r := recover(); r != nil {
		msg := "internal error"
		switch r := r.(type) {
		case error:
			msg += ": " + r.Error()
		case string:
			msg += ": " + r
		}
		if n := len(m.frames); n > 0 {
			m.frames[n-1].ip = nil // where it stopped is unknown
		}
		*err = m.trap(KindInternal, msg)
	}
	if m.dbg != nil {
		if t, ok := (*err).(*Trap); ok {
			m.trapStop(t) // the frames and registers are still the trapping ones
		}
	}
	if len(m.iters) > 0 {
		m.endIters(0)
	}
	m.tries = m.tries[:0]
	clearRegs(m.stack[:min(m.high, len(m.stack))])
	m.high = 0
	m.frames = m.frames[:0]
	m.busy = false
}

// clearRegs clears registers. A handler uses a few, and in the wasm
// guest clearing them one by one costs less than clear's calls
// (memclrHasPointers and its write barrier check) for up to 16.
func clearRegs(regs []value.Value) {
	if len(regs) > 16 {
		clear(regs)
		return
	}
	for i := 0; i < len(regs); i++ {
		regs[i] = value.Value{}
	}
}

// endIters ends the for loops above depth n of the iteration stack.
func (m *Machine) endIters(n int) {
	for i := len(m.iters) - 1; i >= n; i-- {
		switch v := m.iters[i]; v.Kind() {
		case value.KindList:
			v.AsList().EndIter()
		case value.KindMap:
			v.AsMap().EndIter()
		}
		m.iters[i] = value.Value{}
	}
	m.iters = m.iters[:min(n, len(m.iters))]
}

// trap builds a *Trap whose stack is the active frames, innermost first,
// each at the position of its instruction before ip: the trapping one in
// the innermost frame, the active call in the others. A stack deeper than
// maxTrapFrames keeps its innermost frames and ends with a frame whose
// Func says how many were left out.
func (m *Machine) trap(kind, msg string) *Trap {
	n := len(m.frames)
	t := &Trap{Kind: kind, Message: msg, Stack: make([]Frame, 0, min(n, maxTrapFrames+1)), Uncatchable: !Catchable(kind)}
	for i := n - 1; i >= 0 && i >= n-maxTrapFrames; i-- {
		fr := &m.frames[i]
		pos := ""
		if fr.ip != nil {
			fc := &m.funcs[fr.fn]
			pos = m.posString(fc.fn.PosAt(pcOf(fc.codePtr(), fr.ip) - 1))
		}
		t.Stack = append(t.Stack, Frame{Func: m.img.Funcs[fr.fn].Name, Pos: pos})
	}
	if n > maxTrapFrames {
		t.Stack = append(t.Stack, Frame{Func: "(" + strconv.Itoa(n-maxTrapFrames) + " more frames)"})
	}
	return t
}

const maxTrapFrames = 100

func (m *Machine) posString(p image.Pos) string {
	if p.Line == 0 || int(p.File) >= len(m.img.Files) {
		return ""
	}
	return m.img.Files[p.File] + ":" + strconv.Itoa(int(p.Line)) + ":" + strconv.Itoa(int(p.Col))
}

// grow makes the value stack hold at least n registers. It is kept out of
// the dispatch loop.
//
//go:noinline
func (m *Machine) grow(n int) bool {
	if n > MaxStack {
		return false
	}
	size := max(2*len(m.stack), n)
	size = min(size, MaxStack)
	s := make([]value.Value, size)
	copy(s, m.stack)
	m.stack = s
	return true
}

// onlyReadsFields reports whether code uses register 0 only as the struct
// whose field an OpField reads: then no reference to the value in it can
// outlive the run (windows of registers, such as call arguments, start at
// an operand, so one that covers register 0 names it).
func onlyReadsFields(code []image.Instr) bool {
	for _, in := range code {
		info, _ := image.OpInfo(in.Op)
		if info.A == image.Reg && in.A == 0 {
			return false
		}
		if info.B == image.Reg && in.B == 0 && in.Op != image.OpField {
			return false
		}
		if info.C == image.Reg && in.C == 0 {
			return false
		}
	}
	return true
}
