package vm

import (
	"encoding/binary"
	"errors"
	"unsafe"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm/value"
)

// This file is the machine's side of a debugger: breaks by patching.
//
// SetBreaks replaces the instruction at each pc where the run should stop
// with opBreak (the original is kept aside), so a run without a debugger,
// or with a debugger but no breakpoint in the code it runs, executes
// exactly the instructions it would otherwise: the dispatch loop pays
// nothing. When the loop reaches opBreak it calls the host through the
// gateway (PrimBreak) with everything a debugger shows (BreakInfo): the
// host blocks there until the user resumes, never re-entering the
// machine, and answers with the breaks to arm from then on (a new spec,
// or nothing to keep them). The loop then executes the original
// instruction; a break is not a step, so @budget counts are unchanged.
//
// While any break is armed the second tier is off: a function with a
// breakpoint (or any function while stepping) runs in the interpreter.

// PrimBreak is the gateway id of a break: args are an encoded BreakInfo,
// the answer an encoded break spec (EncodeBreakSpec) or nothing. Like
// PrimPoll it is not a primitive and is never journaled.
const PrimBreak uint16 = 0xFFFE

// opBreak is the machine's own opcode, one past the image's table (an
// image cannot contain it: Validate rejects unknown opcodes).
const opBreak = image.Op(image.NumOps)

// BreakSpec says where a machine stops: at every statement start of every
// function (Step), at the pcs listed, and at a trap (Traps).
type BreakSpec struct {
	Step  bool
	Traps bool
	At    []BreakPC
}

// BreakPC is a pc of a function (an index of the image's Funcs).
type BreakPC struct{ Fn, PC int }

// EncodeBreakSpec encodes s for SetBreaks and for a PrimBreak answer.
func EncodeBreakSpec(s BreakSpec) []byte {
	var flags byte
	if s.Step {
		flags |= 1
	}
	if s.Traps {
		flags |= 2
	}
	b := []byte{flags}
	b = binary.AppendUvarint(b, uint64(len(s.At)))
	for _, at := range s.At {
		b = binary.AppendUvarint(b, uint64(at.Fn))
		b = binary.AppendUvarint(b, uint64(at.PC))
	}
	return b
}

func decodeBreakSpec(b []byte) (BreakSpec, error) {
	var s BreakSpec
	bad := errors.New("vm: bad break spec")
	if len(b) == 0 {
		return s, bad
	}
	s.Step, s.Traps = b[0]&1 != 0, b[0]&2 != 0
	r := breakReader{b: b[1:]}
	n := r.uint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		fn, pc := r.uint(), r.uint()
		s.At = append(s.At, BreakPC{int(fn), int(pc)})
	}
	if r.err != nil {
		return BreakSpec{}, bad
	}
	return s, nil
}

// debugger is a machine's armed breaks.
type debugger struct {
	traps bool
	// patched are the pcs holding opBreak, with their original
	// instructions.
	patched map[BreakPC]image.Instr
	// tierWas keeps the functions' tier flags while breaks are armed.
	tierWas []bool
	cur     image.Instr // the original instruction the loop executes after a break
	inst    int         // the instance running
	buf     []byte
}

// SetBreaks arms the breaks of an encoded spec (EncodeBreakSpec), in
// place of those armed before; an empty spec disarms them all. Pcs
// outside a function's code are ignored.
func (m *Machine) SetBreaks(spec []byte) error {
	var s BreakSpec
	if len(spec) > 0 {
		var err error
		if s, err = decodeBreakSpec(spec); err != nil {
			return err
		}
	}
	m.setBreaks(s)
	return nil
}

func (m *Machine) setBreaks(s BreakSpec) {
	d := m.dbg
	if d == nil {
		if !s.Step && !s.Traps && len(s.At) == 0 {
			return
		}
		d = &debugger{patched: map[BreakPC]image.Instr{}, inst: -1}
		m.dbg = d
		m.invalidGuardTables() // the guards run through the loop now
	}
	for at, in := range d.patched {
		m.funcs[at.Fn].code[at.PC] = in
	}
	clear(d.patched)
	d.traps = s.Traps
	patch := func(fn, pc int) {
		code := m.funcs[fn].code
		if fn < 0 || pc < 0 || pc >= len(code) {
			return
		}
		at := BreakPC{fn, pc}
		if _, ok := d.patched[at]; ok {
			return
		}
		d.patched[at] = code[pc]
		code[pc].Op = opBreak
	}
	if s.Step {
		for fn := range m.funcs {
			for _, st := range m.funcs[fn].fn.Stmts {
				patch(fn, int(st.PC))
			}
		}
	}
	for _, at := range s.At {
		if at.Fn >= 0 && at.Fn < len(m.funcs) {
			patch(at.Fn, at.PC)
		}
	}
	// The second tier runs no breaks: it is off while any is armed.
	switch {
	case len(d.patched) > 0 && d.tierWas == nil:
		d.tierWas = make([]bool, len(m.funcs))
		for i := range m.funcs {
			d.tierWas[i], m.funcs[i].tier = m.funcs[i].tier, false
		}
	case len(d.patched) == 0 && d.tierWas != nil:
		for i := range m.funcs {
			m.funcs[i].tier = d.tierWas[i]
		}
		d.tierWas = nil
	}
}

// Break reasons of a BreakInfo.
const (
	BreakStatement = 0 // an armed pc is about to run
	BreakTrap      = 1 // a trap ends the run (the frames are the trapping ones)
)

// BreakInfo is what a break shows: where each active frame is, its
// locals, and the states of the instances the machine has initialised.
type BreakInfo struct {
	Reason      int
	Inst        int   // the running instance (-1: not known)
	Steps       int64 // steps the handler run executed, the instruction at the break included (0 at a trap)
	Frames      []BreakFrame
	TrapKind    string
	TrapMessage string
	Uncatchable bool
	States      [][]byte // by instance: the canonical state tuple, nil when not initialised here
}

// BreakFrame is one active frame, innermost first: its function, the pc
// of its instruction about to run (innermost) or of its active call, and
// its locals (one per Func.Locals entry: the canonical encoding of the
// register, nil when it does not encode).
type BreakFrame struct {
	Fn, PC int
	Locals [][]byte
}

// breakAt serves opBreak at ip (one past it): it calls the host with the
// break's BreakInfo, arms the breaks of its answer and returns the
// original instruction, which the loop then executes. It is kept out of
// the dispatch loop.
//
//go:noinline
func (m *Machine) breakAt(ip unsafe.Pointer, steps int64) (*image.Instr, error) {
	d := m.dbg
	fr := &m.frames[len(m.frames)-1]
	fr.ip = ip
	fc := &m.funcs[fr.fn]
	pc := pcOf(fc.codePtr(), ip) - 1
	d.cur = d.patched[BreakPC{int(fr.fn), pc}]
	if err := m.callBreak(BreakStatement, steps, nil); err != nil {
		return nil, err
	}
	return &d.cur, nil
}

// trapStop shows trap t to the debugger before the run ends, when trap
// stops are armed: the frames are still the trapping ones.
func (m *Machine) trapStop(t *Trap) {
	if m.dbg == nil || !m.dbg.traps || len(m.frames) == 0 {
		return
	}
	_ = m.callBreak(BreakTrap, 0, t) // the run ends with t whatever the host says
}

func (m *Machine) callBreak(reason int, steps int64, t *Trap) error {
	d := m.dbg
	b := append(d.buf[:0], byte(reason))
	b = binary.AppendVarint(b, int64(d.inst))
	b = binary.AppendVarint(b, steps)
	if t != nil {
		b = appendBreakStr(b, t.Kind)
		b = appendBreakStr(b, t.Message)
		if t.Uncatchable {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(m.frames)))
	for i := len(m.frames) - 1; i >= 0; i-- {
		fr := &m.frames[i]
		fc := &m.funcs[fr.fn]
		pc := 0
		if fr.ip != nil {
			pc = pcOf(fc.codePtr(), fr.ip) - 1
		}
		b = binary.AppendUvarint(b, uint64(fr.fn))
		b = binary.AppendUvarint(b, uint64(pc))
		b = binary.AppendUvarint(b, uint64(len(fc.fn.Locals)))
		for r := range fc.fn.Locals {
			var enc []byte
			if int(fr.base)+r < len(m.stack) {
				enc, _ = value.Encode(nil, m.stack[int(fr.base)+r])
			}
			b = appendBreakBytes(b, enc)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(m.insts)))
	for i := range m.insts {
		var st []byte
		if m.insts[i].inited {
			st, _ = m.stateTuple(i)
		}
		b = appendBreakBytes(b, st)
	}
	d.buf = b
	ans, err := m.host.Prim(PrimBreak, b)
	if err != nil {
		return err
	}
	if len(ans) > 0 {
		s, err := decodeBreakSpec(ans)
		if err != nil {
			return err
		}
		cur := d.cur
		m.setBreaks(s)
		d.cur = cur
	}
	return nil
}

// stateTuple is State without the busy check: a break reads the states
// while a handler runs.
func (m *Machine) stateTuple(inst int) ([]byte, error) {
	in := &m.insts[inst]
	l := &m.img.Loci[in.locus]
	vs := make([]value.Value, len(l.State))
	for i, v := range l.State {
		vs[i] = in.slots[v.Slot]
	}
	return value.EncodeTuple(nil, vs)
}

func appendBreakStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendBreakBytes appends b as a length+1 prefixed field (0: nil).
func appendBreakBytes(b, v []byte) []byte {
	if v == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(v))+1)
	return append(b, v...)
}

// DecodeBreakInfo decodes the args of a PrimBreak call.
func DecodeBreakInfo(b []byte) (*BreakInfo, error) {
	if len(b) == 0 {
		return nil, errors.New("vm: empty break info")
	}
	bi := &BreakInfo{Reason: int(b[0])}
	r := breakReader{b: b[1:]}
	bi.Inst = int(r.int())
	bi.Steps = r.int()
	if bi.Reason == BreakTrap {
		bi.TrapKind = r.str()
		bi.TrapMessage = r.str()
		bi.Uncatchable = r.byte() == 1
	}
	n := r.uint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		f := BreakFrame{Fn: int(r.uint()), PC: int(r.uint())}
		nl := r.uint()
		for j := uint64(0); j < nl && r.err == nil; j++ {
			f.Locals = append(f.Locals, r.bytes())
		}
		bi.Frames = append(bi.Frames, f)
	}
	ni := r.uint()
	for i := uint64(0); i < ni && r.err == nil; i++ {
		bi.States = append(bi.States, r.bytes())
	}
	if r.err != nil {
		return nil, r.err
	}
	return bi, nil
}

type breakReader struct {
	b   []byte
	err error
}

func (r *breakReader) fail() { r.err, r.b = errors.New("vm: bad break info"), nil }

func (r *breakReader) uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *breakReader) int() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *breakReader) byte() byte {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *breakReader) take(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *breakReader) str() string { return string(r.take(r.uint())) }

func (r *breakReader) bytes() []byte {
	n := r.uint()
	if n == 0 {
		return nil
	}
	return append([]byte(nil), r.take(n-1)...)
}
