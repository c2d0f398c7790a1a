package vm

import (
	"encoding/binary"
	"errors"
	"strconv"
	"unsafe"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm/value"
)

// Guarded subscriptions (`on T(x) if g`). A guard is a FuncGuard function
// of the payload and copies of the subscriber's locus parameters. The
// publisher evaluates every guard of the topic, in main order, when its
// publish statement runs, nested in its own handler run (so the guards'
// steps count toward its budget, and a trapping guard traps the publish
// before the host hears of it). The result goes to the host with the
// payload: one bit per guarded subscriber (GuardedSubscribers), set when
// the guard holds. The host decides the deliveries from those bits.
//
// A guard reads the subscriber's parameters, which live on the
// subscriber's consumer: after start-up the host gathers them
// (Machine.Params) and gives every machine the table
// (Machine.SetGuardParams). Parameters never change, so the table is the
// parameters "as they were at the end of start-up".

// GuardSub is one subscriber of a topic whose handler has a guard.
type GuardSub struct {
	Inst  int // the subscribing instance
	Guard int // its locus's guard function for the topic
}

// GuardedSubscribers returns the subscribers of topic whose handler has a
// guard, in main order: the order of the guard bits of a publish.
func GuardedSubscribers(img *image.Image, topic int) []GuardSub {
	if topic < 0 || topic >= len(img.Topics) {
		return nil
	}
	var subs []GuardSub
	for _, inst := range img.Topics[topic].Subscribers {
		l := &img.Loci[img.Instances[inst].Locus]
		for _, h := range l.Handlers {
			if h.Topic == topic && h.Guard >= 0 {
				subs = append(subs, GuardSub{Inst: inst, Guard: h.Guard})
			}
		}
	}
	return subs
}

// HasGuards reports whether any handler of img has a guard.
func HasGuards(img *image.Image) bool {
	for i := range img.Loci {
		for _, h := range img.Loci[i].Handlers {
			if h.Guard >= 0 {
				return true
			}
		}
	}
	return false
}

// GuardBits is the number of bytes of guard bits a publish of topic
// carries: one bit per guarded subscriber, lowest bit first.
func GuardBits(n int) int { return (n + 7) / 8 }

// Params returns the canonical tuple of instance inst's locus parameters,
// for the table SetGuardParams takes.
func (m *Machine) Params(inst int) ([]byte, error) {
	return m.slotTuple(inst, func(l *image.Locus) []image.Var { return l.Params })
}

// SetGuardParams gives the machine every instance's parameter tuple (as
// Params returns it; nil for an instance no guard needs), which guards
// read. The machine keeps the table.
func (m *Machine) SetGuardParams(table [][]byte) error {
	if len(table) != len(m.insts) {
		return errors.New("vm: parameter table of " + strconv.Itoa(len(table)) + " instances, want " + strconv.Itoa(len(m.insts)))
	}
	m.guardParams = table
	m.guardArgs = make([][]value.Value, len(table))
	m.guardIdx, m.guardIdxMade = nil, nil // indexed afresh on first use
	m.invalidGuardTables()
	return nil
}

// publishOp publishes a topic without guards: uvarint(topic) then the
// canonical struct.
func (m *Machine) publishOp(in *image.Instr, regs unsafe.Pointer) error {
	fields := window(regs, in.B, len(m.types[m.img.Topics[in.A].Type].Fields))
	if in.Op == image.OpPublishAfter {
		return m.publishAfter(int(in.A), fields, (*reg(regs, in.C)).AsInt())
	}
	return m.publish(int(in.A), fields)
}

// publishGuarded publishes a topic with guards from a handler run with
// budget steps left: it encodes the payload, runs the guards above the
// current frames and sends uvarint(topic), the guard bits and the payload.
// It returns the steps the guards used and a trap (with its stack) or a
// failed publish.
func (m *Machine) publishGuarded(in *image.Instr, regs, ip unsafe.Pointer, budget int64) (int64, error) {
	topic := int(in.A)
	m.frames[len(m.frames)-1].ip = ip
	var delay int64 // a timer's delay (OpPublishAfter), checked before the guards run
	if in.Op == image.OpPublishAfter {
		if delay = (*reg(regs, in.C)).AsInt(); delay < 0 {
			return 0, m.failErr(ip, negativeDelay(delay))
		}
	}
	fields := window(regs, in.B, len(m.types[m.img.Topics[topic].Type].Fields))
	payload := append(m.pubBuf[:0], byte(value.KindStruct))
	payload, err := value.EncodeTuple(payload, fields)
	m.pubBuf = payload
	if err != nil {
		return 0, m.failErr(ip, trapErr(KindArg, err.Error()))
	}
	bits, used, err := m.evalGuards(topic, payload, fields, budget)
	if err != nil {
		return used, err
	}
	buf := binary.AppendUvarint(m.buf[:0], uint64(topic))
	id := PrimPublish
	if delay > 0 {
		id = PrimPublishAfter
		buf = binary.AppendUvarint(buf, uint64(delay))
	}
	buf = append(buf, bits...)
	buf = append(buf, payload...)
	m.buf = buf
	if _, err := m.host.Prim(id, buf); err != nil {
		return used, m.failErr(ip, err)
	}
	return used, nil
}

// evalGuards runs the guards of topic's guarded subscribers on payload,
// in main order, each on its own copy of the payload and of the
// subscriber's parameters, with at most budget steps in all. The frames
// active when it is called stay below the guards' (a trap's stack shows
// both); the tries active then do not catch a guard's trap, which is the
// publish's. It returns the guard bits and the steps used. A run of
// guards that the index covers (guardfast.go) is evaluated with one
// lookup when the budget allows all of its steps, leaving everything as
// the loop would. fields, when not nil, are the values payload encodes
// (a publish's registers), from which an indexed run reads its field
// without decoding the payload.
func (m *Machine) evalGuards(topic int, payload []byte, fields []value.Value, budget int64) ([]byte, int64, error) {
	subs := m.guards[topic]
	nb := GuardBits(len(subs))
	if cap(m.guardBits) < nb {
		m.guardBits = make([]byte, nb)
	}
	bits := m.guardBits[:nb]
	clear(bits)
	// A topic whose guards are one indexed run, from a publish whose
	// field is in its registers: nothing the loop would set aside
	// (frames, tries, for loops) is touched.
	if guardIndexOn && fieldEqOn && m.dbg == nil && fields != nil && len(subs) >= minGuardRun {
		if runs := m.guardIndex(topic); len(runs) == 1 && runs[0].lo == 0 && runs[0].hi == len(subs) &&
			budget >= fieldEqSteps*int64(len(subs)) && intOrBool(fields[runs[0].fe.field]) {
			if !m.evalRun(&runs[0], m.high, len(payload), fields[runs[0].fe.field], bits) {
				return nil, 0, m.trap(KindStack, msgStack)
			}
			return bits, fieldEqSteps * int64(len(subs)), nil
		}
	}
	floor, iters := len(m.frames), len(m.iters)
	tries, hold := m.tries, m.tierHold
	m.tries = m.guardTries[:0]
	defer func() {
		m.guardTries = m.tries[:0]
		m.tries, m.tierHold = tries, hold
		m.frames = m.frames[:floor]
		m.endIters(iters)
	}()
	base := m.high
	pt := m.PayloadType(topic)
	var used int64
	if m.guardPayloads == nil {
		m.guardPayloads = make([]*value.Struct, len(m.img.Topics))
	}
	// A payload of scalar fields only is decoded once for all the
	// payloadLocal guards: they read its fields and nothing can change
	// them (a list field could be changed through a call).
	shareLocal, decoded := scalarFields(pt), false
	var local value.Value
	// decode gives a guard its payload: for a payloadLocal guard (no
	// reference to the payload outlives it) decoded into the topic's
	// reused struct, whose fields are still fresh; otherwise a new value.
	decode := func(payloadLocal bool) (value.Value, error) {
		var v value.Value
		var err error
		if !payloadLocal {
			v, err = value.Decode(payload, pt)
		} else if !shareLocal || !decoded {
			if v, err = value.DecodeStructInto(payload, pt, m.guardPayloads[topic]); err == nil {
				local, decoded = v, true
				m.guardPayloads[topic] = v.AsStruct()
			}
		} else {
			v = local
		}
		if err != nil {
			return v, errors.New("vm: payload of " + m.img.Topics[topic].Name + ": " + err.Error())
		}
		return v, nil
	}
	// The indexed runs of subs (guardfast.go), next the first not passed.
	var runs []guardRun
	if guardIndexOn && fieldEqOn && m.dbg == nil && len(subs) >= minGuardRun {
		runs = m.guardIndex(topic)
	}
	next := 0
	for i := 0; i < len(subs); i++ {
		g := subs[i]
		var pv value.Value
		var err error
		for next < len(runs) && runs[next].lo < i {
			next++
		}
		if next < len(runs) && runs[next].lo == i && budget-used >= fieldEqSteps*int64(runs[next].hi-i) {
			r := &runs[next]
			// The field the run compares: an int or bool of the
			// publish's registers is what decoding the payload gives
			// (the loop's decoded struct is not kept: a guard's result
			// replaces it in register 0); otherwise decode as the loop.
			var f value.Value
			if fields != nil && intOrBool(fields[r.fe.field]) {
				f = fields[r.fe.field]
			} else {
				if pv, err = decode(r.local); err != nil {
					return nil, used, err
				}
				f = pv.AsStruct().Field(int(r.fe.field))
			}
			if !m.evalRun(r, base, len(payload), f, bits) {
				return nil, used, m.trap(KindStack, msgStack)
			}
			used += int64(r.hi-r.lo) * fieldEqSteps
			i = r.hi - 1
			continue
		}
		if pv, err = decode(m.funcs[g.Guard].payloadLocal); err != nil {
			return nil, used, err
		}
		pvs, err := m.guardParamValues(g.Inst)
		if err != nil {
			return nil, used, err
		}
		size := m.funcs[g.Guard].frameSize
		if base+size > len(m.stack) && !m.grow(base+size) {
			return nil, used, m.trap(KindStack, msgStack)
		}
		m.high = max(m.high, base+size)
		m.stack[base] = pv
		copy(m.stack[base+1:], pvs)
		m.charge(int64(len(payload)) + value.ShallowSize(pv))
		if fe := m.fieldEq(g.Guard); fe.ok && budget-used >= fieldEqSteps && m.dbg == nil {
			used += fieldEqSteps
			if m.runFieldEq(fe, base) {
				bits[i/8] |= 1 << (i % 8)
			}
			continue
		}
		m.steps = 0
		err = m.execAt(g.Guard, nil, budget-used, floor, base)
		used += m.steps
		if err != nil {
			return nil, used, err
		}
		if m.stack[base].AsBool() {
			bits[i/8] |= 1 << (i % 8)
		}
	}
	return bits, used, nil
}

// intOrBool reports whether v is an int or a bool: a value that decoding
// its encoding gives back exactly.
func intOrBool(v value.Value) bool {
	return v.Kind() == value.KindInt || v.Kind() == value.KindBool
}

// scalarFields reports whether every field of struct type t is an int,
// float, bool, string or bytes: values no code can change.
func scalarFields(t *value.Type) bool {
	for _, f := range t.Fields {
		switch f.Type.Kind {
		case value.KindInt, value.KindFloat, value.KindBool, value.KindString, value.KindBytes:
		default:
			return false
		}
	}
	return true
}

// guardParamValues returns the values of inst's parameters for one guard
// evaluation: a fresh copy, or the cached values when they are all
// immutable.
func (m *Machine) guardParamValues(inst int) ([]value.Value, error) {
	if inst < len(m.guardArgs) && m.guardArgs[inst] != nil {
		return m.guardArgs[inst], nil
	}
	if inst >= len(m.guardParams) || m.guardParams[inst] == nil {
		return nil, errors.New("vm: no parameters of instance " + m.img.Instances[inst].Name + " for its guard")
	}
	ts := m.paramTypes(inst)
	vs, err := value.DecodeTuple(m.guardParams[inst], ts)
	if err != nil {
		return nil, errors.New("vm: parameters of " + m.img.Instances[inst].Name + ": " + err.Error())
	}
	for _, t := range ts {
		switch t.Kind {
		case value.KindInt, value.KindFloat, value.KindBool, value.KindString, value.KindBytes:
		default:
			return vs, nil // a list, map, struct or enum: copied each time
		}
	}
	m.guardArgs[inst] = vs
	return vs, nil
}

// paramTypes returns the types of inst's locus parameters, in order.
func (m *Machine) paramTypes(inst int) []*value.Type {
	l := &m.img.Loci[m.img.Instances[inst].Locus]
	ts := make([]*value.Type, len(l.Params))
	for i, v := range l.Params {
		ts[i] = m.types[v.Type]
	}
	return ts
}

// Guards evaluates the guards of topic on payload as a run of its own
// (for a publish that no handler makes: an ingress line), without a step
// budget, and returns the guard bits. A trap is returned as a *Trap.
func (m *Machine) Guards(topic int, payload []byte) (bits []byte, err error) {
	if topic < 0 || topic >= len(m.img.Topics) {
		return nil, errors.New("vm: no topic " + strconv.Itoa(topic))
	}
	if m.busy {
		return nil, errors.New("vm: machine is already running")
	}
	m.busy = true
	defer m.finish(&err)
	b, _, err := m.evalGuards(topic, payload, nil, m.initBudget)
	return append([]byte(nil), b...), err
}
