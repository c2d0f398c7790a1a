package vm

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"unsafe"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm/internal/fmath"
	"github.com/hale-lang/hale/vm/internal/tier"
	"github.com/hale-lang/hale/vm/value"
)

// TierCaller runs a function of the second tier (package vm/internal/tier)
// in the host. args are the call (see EnableTier); the answer is either
// TierDone followed by the result's 8 bytes (little-endian) and the steps
// the call took (uvarint), or TierFallback, which asks the interpreter to
// run the call itself. An error ends the handler run as a poll's error
// does (the run was interrupted).
type TierCaller func(args []byte) ([]byte, error)

// First byte of a TierCaller's answer. A TierFallback may be followed by
// TierLogFull: compiled code stopped because the undo log was full, or
// by TierBreaks and a break spec: a poll of the host answered breaks to
// arm (a debugger pausing the run), which the machine arms before it
// interprets; a
// region's TierDone answer may end with it: the region committed with
// its log past half full. A TierFallback followed by TierMeasure is a
// call compiled code handed back where a measure falls due or its arena
// was full (tier.StopAlloc), not where the interpreter may trap; the
// steps the call took follow (uvarint).
const (
	TierDone     byte = 0
	TierFallback byte = 1
	TierLogFull  byte = 2
	TierBreaks   byte = 3
	TierMeasure  byte = 4
)

// The undo log's size in entries of 16 bytes: it starts small, doubles
// whenever compiled code fills it, and a function that fills the largest
// is interpreted from then on.
const (
	tierLogFirst = 512
	tierLogMax   = 1 << 18
)

// EnableTier makes the machine call the tier's entry functions through
// call instead of interpreting them. A tier call's arguments are: the
// function index (uvarint), the steps the run may still take (uvarint),
// the Hale frames active (uvarint), the registers in use below the
// callee's frame (uvarint), the address and the size in bytes of the
// undo log (uvarint each; see tier.GlobalLog), the address of the
// allocation block (uvarint, 0 for none; tier.GlobalAlloc), then each parameter as 8
// little-endian bytes (see tier.Kind: a list or a struct as its address,
// an enum as its register's, which compiled code reads in the guest's
// memory). Only the wasm engine enables it: the native interpreter is
// already as fast as compiled wasm would be.
func (m *Machine) EnableTier(call TierCaller) {
	p := tier.NewPlan(m.img)
	if !p.HasEntries() {
		return
	}
	m.tierCall = call
	m.tierPlan = p
	m.tierAllocs = slices.Contains(p.Allocs, true)
	for f := range m.funcs {
		m.funcs[f].tier = p.Entry[f]
		if p.Entry[f] && m.tierLog == nil && slices.ContainsFunc(p.Params[f], tier.Kind.ReachesMemory) {
			m.tierLog = make([]uint64, 2*tierLogFirst)
		}
	}
	if len(p.Regions) > 0 {
		// Each region's header becomes opRegion (its operand A the
		// region), the original kept aside: the dispatch loop pays
		// nothing for it elsewhere.
		m.regionOrig = make([]image.Instr, len(p.Regions))
		for i, r := range p.Regions {
			code := m.funcs[r.Func].code
			m.regionOrig[i] = code[r.Header]
			code[r.Header] = image.Instr{Op: opRegion, A: int32(i)}
		}
		m.newRegionState()
	}
}

// newRegionState gives the machine its own region probes (its undo log
// and out buffer are made at its first region call: a machine per
// consumer, many never run a loop).
func (m *Machine) newRegionState() {
	m.regions = make([]regionProbe, len(m.tierPlan.Regions))
	for i, r := range m.tierPlan.Regions {
		m.regions[i].publishes = r.Publishes
	}
}

// opRegion is the machine's own opcode at the header of a compiled loop
// (tier.Region): operand A is the region.
const opRegion = image.Op(image.NumOps + 1)

// regionProbe is a machine's account of one region: off once the tier
// has given up on it, and its calls' steps and fall-backs.
type regionProbe struct {
	off       bool
	calls     int
	steps     int64
	fallbacks int
	waste     int64 // steps of calls inside it handed back for a measure or for room
	// batches counts the batches its calls ran in place (TierStep), and
	// inPlace their instructions.
	batches, inPlace int64
	// publishes (tier.Region.Publishes): compiled code publishes at a
	// fraction of the interpreter's cost (a step that saves far more
	// than a step's time), so batches do not count against it.
	publishes bool
}

// A region that falls back this many times (for any reason but a full
// undo log) is interpreted from then on: a loop that keeps trapping
// under a try, or stopping where compiled code is unsure, would run
// twice.
const regionMaxFallbacks = 4

// A region whose compiled code runs fewer than regionMinCompiled steps
// for each batch of instructions it has run in place (once it has run
// regionBatchProbe batches) is interpreted from then on. A batch is a
// call from compiled code into the guest and back, which costs about
// as much as interpreting nine steps (performance.md §5.36), so a loop
// of a few steps around a concatenation or a map's lookup ran slower
// compiled than interpreted (`s = s + "ab"` 20,000 times: 15 ms, 9.8
// interpreted). The counts are the run's own, so the choice is the same
// in every run of the program; it changes no result, only where the
// steps run.
const (
	regionMinCompiled = 12
	regionBatchProbe  = 64
)

// regionOp runs region i for the frame at regs, whose header instruction
// the loop has just counted: budget is the steps left with it. It returns
// the address to continue at, the registers to continue with (another
// frame's when an instruction run in place trapped and a caller's try
// caught it) and the steps taken from the header on, or a nil address to
// interpret the header's instruction. It is kept out of the dispatch
// loop.
//
//go:noinline
func (m *Machine) regionOp(i int32, regs unsafe.Pointer, ip unsafe.Pointer, budget int64) (next, nregs unsafe.Pointer, used int64, err error) {
	next, used, _, trap, err := m.callRegion(i, regs, ip, budget)
	if err != nil || trap == nil {
		return next, regs, used, err
	}
	// The instruction run in place at the last commit trapped: raised as
	// the dispatch loop raises a trap of cold (the frame's ip is set).
	next, nregs, err = m.raise(next, trap)
	return next, nregs, used, err
}

// regionCall is the machine's account of the region call under way, for
// the instructions it runs in place (TierStep): the frame, the steps the
// call may take, and the last commit: the pc after the instruction run
// in place (-1: none yet), the steps taken up to it, and its trap, kept
// pending until the call has returned.
type regionCall struct {
	active bool
	probe  *regionProbe
	fc     *funcCode
	regs   unsafe.Pointer
	budget int64
	pc     int
	used   int64
	trap   error
	// charged is the memory account's charge counter at the last
	// commit (or the call's start): a fall-back restores it, undoing
	// what compiled allocation charged after it.
	charged int64
	// bad: a step the guest did not expect (compiled code and the
	// guest disagree): the run ends with an error, as for a malformed
	// answer, since compiled code may have stored registers into the
	// frame already (tier's regionOut).
	bad bool
}

// stepping is the machine whose region call is under way: the guest
// runs one handler at a time, and a region's step is entered only from
// inside its call.
var stepping *Machine

// TierStep runs in place the batch of instructions that arg names
// (tier.StepArg: the first pc and the count, consecutive instructions of
// the function of the region call under way; tier.GuestStep), used the
// steps the call has taken up to the batch's last instruction included:
// it writes the registers compiled code wrote back (the out buffer) into
// the frame, and for each instruction in turn commits (a fall-back from
// then on resumes the interpreter after it with the steps taken up to
// it; compiled code has dropped its undo log) and executes it with the
// interpreter's own code, memory charges and measures included. It
// returns 0 for compiled code to go on, or 1 for it to stop: a trap
// (pending, raised at its instruction when the call has returned, the
// instructions before it committed), or a call it does not expect (then
// nothing is committed and the run ends with errTierAnswer: compiled
// code may have stored scalars into the frame before the call). It does not recover from a panic (only a bug
// in the interpreter would panic here): a deferred recovery cost a third
// of a step's time in the guest, and the panic ends the guest as one in
// an export's own code does.
func TierStep(arg, used int64) int64 {
	m := stepping
	if m == nil || !m.rcall.active {
		return 1
	}
	rc := &m.rcall
	pc, n, ok := tier.SplitStepArg(arg)
	code := rc.fc.code
	if !ok || pc+n > len(code) || used-int64(n-1) <= rc.used || used > rc.budget {
		rc.bad = true
		return 1
	}
	rc.probe.batches++
	rc.probe.inPlace += int64(n)
	batch := code[pc : pc+n]
	for j := range batch {
		in := &batch[j]
		if in.Op == opRegion {
			in = &m.regionOrig[in.A]
		}
		if !tier.InPlaceOp(in) {
			rc.bad = true
			return 1
		}
	}
	if m.regionOut[0] != 0 {
		// Compiled code left registers to store with Go code.
		if !m.regionOutOK(rc.fc) {
			rc.bad = true
			return 1
		}
		m.applyRegionOut(rc.regs)
	}
	ip := unsafe.Add(rc.fc.codePtr(), uintptr(pc)*instrSize)
	regs := rc.regs
	for j := range batch {
		in := &batch[j]
		if in.Op == opRegion {
			in = &m.regionOrig[in.A]
		}
		ip = unsafe.Add(ip, instrSize)
		rc.pc, rc.used = pc+j+1, used-int64(n-1-j)
		// The instructions the dispatch loop executes itself, as it
		// does, and push with cold's statements, its charge and
		// measure included; every other with cold.
		var err error
		switch in.Op {
		case image.OpMove:
			*reg(regs, in.A) = *reg(regs, in.B)
		case image.OpLoadK:
			*reg(regs, in.A) = m.consts[in.B]
		case image.OpIndexList:
			l, i := (*reg(regs, in.B)).AsList(), (*reg(regs, in.C)).AsInt()
			if uint64(i) >= uint64(l.Len()) {
				err = m.fail(ip, KindIndex, indexMsg(i, l.Len(), "list"))
				break
			}
			*reg(regs, in.A) = l.At(int(i))
		case image.OpField:
			*reg(regs, in.A) = (*reg(regs, in.B)).AsStruct().Field(int(in.C))
		case image.OpPush:
			if (*reg(regs, in.A)).AsList().Push(*reg(regs, in.B)) != nil {
				err = m.fail(ip, KindState, msgListIter)
				break
			}
			m.charge(value.SizeSlot)
			if m.overAllowance() {
				if e := m.measure(ip); e != nil {
					err = m.failErr(ip, e)
				}
			}
		default:
			_, err = m.cold(in, regs, ip)
		}
		if err != nil {
			rc.trap = err
			rc.charged = m.mem.charged
			return 1
		}
	}
	rc.charged = m.mem.charged
	if m.listPool != nil && m.listPool.n == 0 {
		// Compiled code took the pool's last list (what it did is
		// committed now): refill it for the rest of the call.
		m.listPool.fill()
	}
	if rc.probe.batchBound(used) {
		// The loop runs faster interpreted: stop the call here, where
		// everything is committed (a fall-back without a trap), and
		// interpret the region from now on.
		rc.probe.off = true
		return 1
	}
	return 0
}

// listPool holds fresh empty lists for compiled code to take for `[]`
// (tier.RegionOutPool): n of them, the last on top. Its layout is the
// tier's (TestListPoolLayout). A list taken is referred to by the
// frame only; the pool's slot keeps pointing at it (harmless: the list
// stays alive a little longer) until fill overwrites the slot with a
// new list, so no list is given twice.
type listPool struct {
	n int64
	p [tier.ListPoolSize]*value.List
}

// fill tops the pool up with fresh lists and returns its address, for
// the out buffer.
func (lp *listPool) fill() uint64 {
	for i := lp.n; i < tier.ListPoolSize; i++ {
		lp.p[i] = value.NewPushable()
	}
	lp.n = tier.ListPoolSize
	return uint64(uintptr(unsafe.Pointer(lp)))
}

// regionOutOK reports whether the out buffer names registers of the
// frame of fc only.
func (m *Machine) regionOutOK(fc *funcCode) bool {
	out := m.regionOut
	if out[0] > tier.MaxRegionOut {
		return false
	}
	for j := range int(out[0]) {
		if int(uint32(out[1+2*j])) >= fc.frameSize {
			return false
		}
	}
	return true
}

// applyRegionOut stores the registers of the out buffer (checked by
// regionOutOK) into the frame at regs, with Go code: Go's write barrier
// sees every register store.
func (m *Machine) applyRegionOut(regs unsafe.Pointer) {
	out := m.regionOut
	for j := range int(out[0]) {
		key, bits := out[1+2*j], out[2+2*j]
		var v value.Value
		switch image.Kind(key >> 32) {
		case 0:
			continue // a register compiled code did not write (tier.kindDirty)
		case image.KindInt:
			v = value.Int(int64(bits))
		case image.KindFloat:
			v = value.Float(math.Float64frombits(bits))
		default:
			v = value.Bool(bits != 0)
		}
		*reg(regs, int32(uint32(key))) = v
	}
	out[0] = 0
}

// callRegion calls region i (see regionOp). After a fall-back, next is
// the address after the last instruction run in place, if any, and used
// the steps taken up to it (the writes before it are kept); trap is
// that instruction's trap, to raise.
func (m *Machine) callRegion(i int32, regs unsafe.Pointer, ip unsafe.Pointer, budget int64) (next unsafe.Pointer, used int64, ok bool, trap, err error) {
	pr := &m.regions[i]
	if pr.off || m.overAllowance() || m.tierHeld() {
		// Over the allowance, a measure is due after the next
		// instruction that measures (memory.go), which compiled code
		// does not do: the loop is interpreted until it has measured.
		return nil, 0, false, nil, nil
	}
	if m.dbg != nil && len(m.dbg.patched) > 0 {
		return nil, 0, false, nil, nil // the tier is off while breaks are armed
	}
	if m.tierHold != 0 && len(m.frames) > m.tierHold {
		return nil, 0, false, nil, nil
	}
	if m.regionOut == nil {
		m.regionOut = make([]uint64, tier.RegionOutWords)
		m.listPool = new(listPool)
		if m.tierLog == nil {
			m.tierLog = make([]uint64, 2*tierLogFirst)
		}
	}
	fr := &m.frames[len(m.frames)-1]
	fc := &m.funcs[fr.fn]
	b := m.tierBuf[:0]
	b = binary.AppendUvarint(b, uint64(len(m.funcs))+uint64(i))
	b = binary.AppendUvarint(b, uint64(budget))
	b = binary.AppendUvarint(b, uint64(len(m.frames)))
	b = binary.AppendUvarint(b, uint64(fr.base)+uint64(fc.frameSize))
	b = binary.AppendUvarint(b, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(m.tierLog)))))
	b = binary.AppendUvarint(b, uint64(8*len(m.tierLog)))
	b = binary.AppendUvarint(b, m.allocBlock())
	b = binary.LittleEndian.AppendUint64(b, uint64(uintptr(regs)))
	b = binary.LittleEndian.AppendUint64(b, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(m.regionOut)))))
	m.tierBuf = b
	m.regionOut[0] = 0
	m.regionOut[tier.RegionOutBatch], m.regionOut[tier.RegionOutBatch+1] = tierBatch[0], tierBatch[1]
	// Compiled code's own field, element and push copies (tier's
	// regionFast): the guest's write barrier flag, and where the
	// machine counts its charges.
	m.regionOut[tier.RegionOutWB] = tierWB
	m.regionOut[tier.RegionOutCharge] = uint64(uintptr(unsafe.Pointer(&m.mem.charged)))
	m.regionOut[tier.RegionOutAllow] = uint64(uintptr(unsafe.Pointer(&m.mem.allowance)))
	m.regionOut[tier.RegionOutPool] = m.listPool.fill()
	m.rcall = regionCall{active: true, probe: pr, fc: fc, regs: regs, budget: budget, pc: -1, charged: m.mem.charged}
	stepping = m
	res, err := m.tierCall(b)
	stepping = nil
	rc := m.rcall
	m.rcall = regionCall{}
	if m.tierAllocs {
		m.arenaAfterCall()
	}
	if back := tierArena.block[tier.AllocBack/8]; m.tierAllocs && back != 0 {
		// The region left at a call that compiled code handed back;
		// back is 1 + the steps the call had taken. A region whose
		// calls are handed back for more than half the steps it
		// finishes is interpreted from then on.
		tierArena.block[tier.AllocBack/8] = 0
		m.tierSkipOnce = true
		pr.waste += int64(min(back-1, math.MaxInt32))
		if pr.waste > tierWastedMax && pr.waste > pr.steps/2 {
			pr.off = true
		}
	}
	// Where the interpreter goes on when the call falls back: after the
	// last instruction run in place (committed), or the header.
	var resume unsafe.Pointer
	if rc.pc >= 0 {
		resume = unsafe.Add(fc.codePtr(), uintptr(rc.pc)*instrSize)
		fr.ip = resume
	} else {
		fr.ip = ip
	}
	if err != nil {
		return nil, 0, false, nil, err
	}
	if len(res) == 0 || rc.bad {
		return nil, 0, false, nil, errTierAnswer
	}
	if res[0] == TierFallback {
		// What compiled calls charged since the last commit is undone
		// with the rest (tierarena.go).
		m.mem.charged = rc.charged
		if rc.trap == nil && (len(res) < 2 || res[1] != TierBreaks) {
			if len(res) > 1 && res[1] == TierLogFull {
				if len(m.tierLog) >= 2*tierLogMax {
					pr.off = true
				} else {
					m.tierLog = make([]uint64, max(2*tierLogFirst, 2*len(m.tierLog)))
				}
			} else if pr.fallbacks++; pr.fallbacks >= regionMaxFallbacks {
				pr.off = true
			}
		} else if rc.trap != nil {
			if pr.fallbacks++; pr.fallbacks >= regionMaxFallbacks {
				pr.off = true
			}
		}
		if len(res) > 1 && res[1] == TierBreaks {
			if err := m.SetBreaks(res[2:]); err != nil {
				return nil, 0, false, nil, err
			}
		}
		if rc.pc < 0 {
			return nil, 0, false, nil, nil
		}
		m.regionSteps(pr, rc.used)
		return resume, rc.used, false, rc.trap, nil
	}
	fr.ip = ip
	if rc.trap != nil || res[0] != TierDone || len(res) < 10 {
		return nil, 0, false, nil, errTierAnswer
	}
	pc := binary.LittleEndian.Uint64(res[1:9])
	steps, n := binary.Uvarint(res[9:])
	if n <= 0 || steps > uint64(budget) || pc >= uint64(len(fc.code)) || !m.regionOutOK(fc) {
		return nil, 0, false, nil, errTierAnswer
	}
	if len(res) > 9+n && res[9+n] == TierLogFull && len(m.tierLog) < 2*tierLogMax {
		// It committed because its log was half full: the writes are
		// kept, so a larger log is free to take.
		m.tierLog = make([]uint64, 2*len(m.tierLog))
	}
	m.applyRegionOut(regs)
	m.regionSteps(pr, int64(steps))
	return unsafe.Add(fc.codePtr(), uintptr(pc)*instrSize), int64(steps), true, nil, nil
}

// regionSteps counts a call of region pr that took steps: as for
// functions, a region whose calls are short on average is interpreted
// from then on, decided from steps.
func (m *Machine) regionSteps(pr *regionProbe, steps int64) {
	pr.calls++
	pr.steps += steps
	if pr.calls == tierProbeCalls && pr.steps < tierProbeCalls*tierMinSteps {
		pr.off = true
	}
	if pr.batchBound(0) {
		pr.off = true
	}
}

// batchBound reports whether region pr, its call under way having taken
// used steps, runs too few steps compiled for each batch it runs in
// place (regionMinCompiled).
func (pr *regionProbe) batchBound(used int64) bool {
	return pr.batches >= regionBatchProbe && !pr.publishes && pr.steps+used-pr.inPlace < regionMinCompiled*pr.batches
}

// tierBatch holds the addresses of the guest's publish batch (a []byte's
// header) and of its box, which a region's compiled publishes append to
// (tier.RegionOutBatch), or zeros when the guest does not batch.
var tierBatch [2]uint64

// SetTierBatch tells the machines of the guest that their publishes join
// the batch whose []byte header is at pubs and whose box (its address
// and length, two uint32) is at box, both kept current by the guest's
// gateway: a region's compiled publishes append to it (tier.Region).
// Only the wasm guest calls it, when it turns batches on.
func SetTierBatch(pubs, box unsafe.Pointer) {
	tierBatch = [2]uint64{uint64(uintptr(pubs)), uint64(uintptr(box))}
}

// tierWB is the address of the guest's Go runtime's write barrier flag
// (runtime.writeBarrier.enabled), or 0: a region's compiled code stores a
// Value holding a pointer (a field or an element copied into the frame,
// a push into a list's spare capacity) only while the flag is 0, and
// without it never (tier.RegionOutWB).
var tierWB uint64

// SetTierWriteBarrier tells the machines of the guest where its Go
// runtime's write barrier flag is (runtime.writeBarrier, whose first
// byte is set while the collector marks). Only the wasm guest calls it:
// its Go code runs only while compiled code is not running or inside the
// guest calls compiled code makes, so the flag compiled code reads
// stays as it read it until its next call of the guest.
func SetTierWriteBarrier(p unsafe.Pointer) { tierWB = uint64(uintptr(p)) }

// callTier runs callee fn, whose frame starts at register a of the frame
// at regs (stack index base), through the tier, with at most budget
// steps. ok is false when the interpreter must run the call instead.
func (m *Machine) callTier(fn, a int32, regs unsafe.Pointer, base int, budget int64) (used int64, ok bool, wasted int64, err error) {
	for {
		var again bool
		used, ok, wasted, again, err = m.callTierOnce(fn, a, regs, base, budget)
		if !again {
			return used, ok, wasted, err
		}
		// Compiled code filled the undo log, which has grown: the call
		// runs compiled again from its start (its writes were undone,
		// nothing of it was kept). Interpreting it instead would cost
		// ten times the compiled call (spectral-norm at 1,000 ran
		// eight times slower so), where the log doubles at each try,
		// so all the tries cost at most twice the one that finishes.
	}
}

// callTierOnce is one try of callTier: again reports that compiled code
// filled the undo log and the log has grown, to try once more.
func (m *Machine) callTierOnce(fn, a int32, regs unsafe.Pointer, base int, budget int64) (used int64, ok bool, wasted int64, again bool, err error) {
	p := m.tierPlan
	b := m.tierBuf[:0]
	b = binary.AppendUvarint(b, uint64(fn))
	b = binary.AppendUvarint(b, uint64(budget))
	b = binary.AppendUvarint(b, uint64(len(m.frames)))
	b = binary.AppendUvarint(b, uint64(base)+uint64(a))
	b = binary.AppendUvarint(b, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(m.tierLog)))))
	b = binary.AppendUvarint(b, uint64(8*len(m.tierLog)))
	b = binary.AppendUvarint(b, m.allocBlock())
	for i, k := range p.Params[fn] {
		v := *reg(regs, a+int32(i))
		var bits uint64
		switch k {
		case tier.Enum:
			// The address of the register: nothing changes it during
			// the call.
			if v.Kind() != value.KindEnum {
				return 0, false, -1, false, nil
			}
			bits = uint64(uintptr(unsafe.Pointer(reg(regs, a+int32(i)))))
		case tier.List, tier.Struct:
			// Compiled code trusts the kind of what it is handed.
			if (k == tier.List) != (v.Kind() == value.KindList) {
				return 0, false, -1, false, nil
			}
			if bits = uint64(v.Addr()); bits == 0 {
				return 0, false, -1, false, nil
			}
		case tier.Int:
			bits = uint64(v.AsInt())
		case tier.Bool:
			if v.AsBool() {
				bits = 1
			}
		case tier.Float:
			bits = math.Float64bits(v.AsFloat())
		}
		b = binary.LittleEndian.AppendUint64(b, bits)
	}
	m.tierBuf = b
	charged := m.mem.charged
	res, err := m.tierCall(b)
	if m.tierAllocs && !m.arenaAfterCall() {
		m.funcs[fn].tier = false // its values outgrow the largest arena
	}
	if err != nil {
		return 0, false, -1, false, err
	}
	if len(res) == 0 {
		return 0, false, -1, false, errTierAnswer
	}
	if res[0] == TierFallback {
		// The interpreter runs the call again: what compiled code
		// charged is undone (tierarena.go).
		m.mem.charged = charged
		if len(res) > 1 && res[1] == TierBreaks {
			return 0, false, -1, false, m.SetBreaks(res[2:])
		}
		if len(res) > 1 && res[1] == TierLogFull {
			if len(m.tierLog) >= 2*tierLogMax {
				// Taken off the tier: the interpreter runs it, its
				// loops compiled as regions (which keep their writes
				// at their headers), and its calls still compiled, as
				// after a hand-back (wasted 0), not a trap.
				m.funcs[fn].tier = false
				return 0, false, 0, false, nil
			}
			m.tierLog = make([]uint64, max(2*tierLogFirst, 2*len(m.tierLog)))
			again = true
		}
		if len(res) > 1 && res[1] == TierMeasure {
			steps, n := binary.Uvarint(res[2:])
			if n <= 0 {
				return 0, false, -1, false, errTierAnswer
			}
			return 0, false, int64(min(steps, math.MaxInt32)), false, nil
		}
		return 0, false, -1, again, nil
	}
	if res[0] != TierDone || len(res) < 10 {
		return 0, false, -1, false, errTierAnswer
	}
	bits := binary.LittleEndian.Uint64(res[1:9])
	steps, n := binary.Uvarint(res[9:])
	if n <= 0 || steps > uint64(budget) {
		return 0, false, -1, false, errTierAnswer
	}
	var v value.Value
	switch p.Result[fn] {
	case tier.Int:
		v = value.Int(int64(bits))
	case tier.Bool:
		v = value.Bool(bits != 0)
	case tier.Float:
		v = value.Float(math.Float64frombits(bits))
	case tier.Enum:
		// The address of a Value: the caller's register, a value of
		// an enum, or one made in the arena, which is copied out.
		if v, ok = m.arenaResult(bits); !ok {
			return 0, false, -1, false, errTierAnswer
		}
	}
	*reg(regs, a) = v // a void function's result is the zero Value, as OpRetVoid leaves
	return int64(steps), true, -1, false, nil
}

var errTierAnswer = errors.New("vm: malformed answer from the tier")

// tierWastedMax bounds the steps of calls handed back for a measure (or
// for room) since the last measure: past it, every call is interpreted
// until the next measure. A call handed back is run by the interpreter
// with its inner calls still compiled, each tried again, which costs
// little in a tree (the way down to the allocation that measures is
// its depth, the work tried again at most twice the tree), but would
// cost the square of a deep recursion's depth (a list built by
// recursion, whose allocations come on the way back up).
const tierWastedMax = 1 << 20

// tierRetryCharge is how much is charged, with every call interpreted
// after the calls handed back cost tierWastedMax, before the tier is
// tried again if no measure has come first: measures come seldom far
// from the memory limit (memory.go), and calls handed back for room in
// the arena do not wait for one.
const tierRetryCharge = 8 << 20

// tierHeld reports whether calls are interpreted because calls handed
// back have cost too much (tierWastedMax), ending the hold once
// tierRetryCharge has been charged since it began.
func (m *Machine) tierHeld() bool {
	if !m.tierHoldMeasure {
		return false
	}
	if m.mem.charged-m.tierHoldCharged < tierRetryCharge {
		return true
	}
	m.tierHoldMeasure, m.tierWasted = false, 0
	return false
}

// The tier keeps calling a function through the host only if its first
// tierProbeCalls calls took tierMinSteps steps or more on average.
const (
	tierProbeCalls = 32
	tierMinSteps   = 64
)

// tierCallOp is the OpCall path of a tier entry, kept out of the dispatch
// loop: it returns the steps the call took, or ok false to interpret it.
//
//go:noinline
func (m *Machine) tierCallOp(in *image.Instr, regs unsafe.Pointer, ip unsafe.Pointer, budget int64) (used int64, ok bool, err error) {
	if m.overAllowance() || m.tierHeld() {
		// A measure is due (see callRegion), or calls handed back for
		// one have cost too much: the interpreter runs the call, which
		// measures where it always does.
		return 0, false, nil
	}
	if m.tierSkipOnce {
		// A region left at this call, which compiled code handed back
		// (tierarena.go): it would be handed back again.
		m.tierSkipOnce = false
		return 0, false, nil
	}
	depth := len(m.frames)
	if m.tierHold != 0 {
		if depth > m.tierHold {
			return 0, false, nil
		}
		m.tierHold = 0 // the call that fell back has returned
	}
	caller := &m.frames[depth-1]
	used, ok, wasted, err := m.callTier(in.B, in.A, regs, int(caller.base), budget)
	if err != nil {
		caller.ip = ip
	}
	if ok {
		// A trip through the host costs about as much as interpreting
		// a few dozen steps: after tierProbeCalls calls, a function
		// whose calls are shorter than that on average is interpreted
		// from then on. Steps are deterministic, so is the choice.
		fc := &m.funcs[in.B]
		fc.tierCalls++
		fc.tierSteps += used
		if fc.tierCalls == tierProbeCalls && fc.tierSteps < tierProbeCalls*tierMinSteps {
			fc.tier = false
		}
	}
	if !ok && err == nil {
		if wasted >= 0 {
			// Handed back where a measure falls due (or for room in
			// the arena), not a trap: the interpreter runs this call,
			// but the calls inside it still use the tier, so that only
			// the frames on the way to the allocation that measures
			// are interpreted (the others' calls finish compiled),
			// until the calls handed back so have cost too much: a
			// function whose calls are handed back for more than half
			// the steps its calls finish is interpreted from then on.
			fc := &m.funcs[in.B]
			fc.tierWaste += wasted
			m.tierWasted += wasted
			if fc.tierWaste > tierWastedMax && fc.tierWaste > fc.tierSteps/2 {
				fc.tier = false
			}
			if m.tierWasted > tierWastedMax {
				m.tierHoldMeasure, m.tierHoldCharged = true, m.mem.charged
			}
		} else {
			// Most likely a trap: every call inside it is interpreted
			// too, or a recursion that fell back at its deepest frame
			// would fall back once per frame.
			m.tierHold = depth
		}
	}
	return used, ok, err
}

// TierMath answers compiled code's call of a float builtin of std::math
// (tier.GuestMath: the builtin's number and its arguments' bits, the
// second 0 for a function of one): the interpreter's own function on the
// same bits, so compiled code gets the interpreter's result exactly.
func TierMath(b, x, y uint64) uint64 {
	return math.Float64bits(mathBuiltin(image.Builtin(b), math.Float64frombits(x), math.Float64frombits(y)))
}

// mathBuiltin computes float builtin b of x (and y, for the functions of
// two): what both the interpreter and compiled code run (TierMath). Only
// the builtins tier.MathBuiltin accepts reach it; any other gives NaN.
func mathBuiltin(b image.Builtin, x, y float64) float64 {
	switch b {
	case image.BuiltinPow:
		return fmath.Pow(x, y)
	case image.BuiltinLog:
		return fmath.Log(x)
	case image.BuiltinExp:
		return fmath.Exp(x)
	case image.BuiltinSin:
		return fmath.Sin(x)
	case image.BuiltinCos:
		return fmath.Cos(x)
	case image.BuiltinTan:
		return fmath.Tan(x)
	case image.BuiltinAsin:
		return fmath.Asin(x)
	case image.BuiltinAcos:
		return fmath.Acos(x)
	case image.BuiltinAtan:
		return fmath.Atan(x)
	case image.BuiltinAtan2:
		return fmath.Atan2(x, y)
	case image.BuiltinHypot:
		return fmath.Hypot(x, y)
	}
	return math.NaN()
}
