package host

import (
	"encoding/binary"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"

	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/internal/tier"
	"github.com/hale-lang/hale/vm/value"
)

// Handlers compiled whole (tier.PlanHandlers): on the wasm engine, a
// delivery to one of them is one call of its export in the tier's
// module, made here, without entering the guest. The export answers
// "fall back" having written nothing whenever the interpreter might do
// anything it does not (see package tier), and the delivery then goes
// through the guest's deliver from its start, as before. So the fast
// path changes no output, trap, step count or recording: the journal
// stamped the delivery before Deliver was called, and the publishes
// reach the host from the guest's batch as the guest's own would.

// disableFast turns the handlers compiled whole off (tests compare runs
// with and without them; benchmarks measure them).
var disableFast bool

// fastAnswered and fastFellBack count the deliveries a compiled handler
// ran and handed back, for tests.
var fastAnswered, fastFellBack atomic.Int64

// inRuns counts the deliveries compiled handlers ran in runs
// (deliverRun), for tests.
var inRuns atomic.Int64

// tierHandler is one handler compiled whole, in a tier instance.
type tierHandler struct {
	fn        api.Function
	many      api.Function // the run export (tier.HandlerManyExport)
	h         *tier.Handler
	frameSize int
	budget    int64 // the locus's @budget, or the most
	charge    int64 // the payload struct's shallow size (value.ShallowSize)
	// calls and fellBack count its calls; off is set when most of them
	// fall back (running twice would cost more than it saves).
	calls, fellBack int
	off             bool
}

// fastFallbacks: after this many calls, a handler that fell back on more
// than a quarter of them is run by the guest from then on.
const fastFallbacks = 16

// handlerTable returns, by locus, the index + 1 in p.plan.Handlers of
// the handler of each topic (0: none; nil for a locus without any).
func handlerTable(p *wasmProgram) [][]int32 {
	t := make([][]int32, len(p.img.Loci))
	for i, h := range p.plan.Handlers {
		if t[h.Locus] == nil {
			t[h.Locus] = make([]int32, len(p.img.Topics))
		}
		t[h.Locus][h.Topic] = int32(i + 1)
	}
	return t
}

// newTierHandlers finds t's handler exports.
func (t *tierInstance) newTierHandlers(p *wasmProgram) bool {
	if p.plan == nil || len(p.plan.Handlers) == 0 {
		return true
	}
	t.handlers = make([]tierHandler, len(p.plan.Handlers))
	for i := range p.plan.Handlers {
		h := &p.plan.Handlers[i]
		fn, many := t.mod.ExportedFunction(tier.HandlerExport(i)), t.mod.ExportedFunction(tier.HandlerManyExport(i))
		if fn == nil || many == nil {
			return false
		}
		budget := int64(1<<63 - 1)
		if b := p.img.Loci[h.Locus].Budget; b > 0 {
			budget = b
		}
		t.handlers[i] = tierHandler{fn: fn, many: many, h: h, frameSize: p.img.Funcs[h.Func].FrameSize, budget: budget,
			charge: value.SizeObjectHeader + value.SizeSlot*int64(len(h.Fields))}
	}
	t.hstack = make([]uint64, tier.HandlerParams)
	t.mstack = make([]uint64, tier.ManyParams)
	return true
}

// fastInst is what an engine knows of an instance for compiled handlers:
// the addresses the guest's fastinfo answered (its slots, the memory
// charge counter, the batch and the box, the machine's guard tables), and the topics whose payload
// struct the machine has made (a compiled handler runs only then, so
// that the machine measures the same data as without it).
type fastInst struct {
	known                 bool
	slots, charged, batch uint64
	box, guards           uint64
	ready                 []bool // by topic
}

// fastOn reports whether e may run compiled handlers at all: a guest
// with them, and no debugger (whose breaks a compiled handler would not
// stop at).
func (e *wasmEngine) fastOn() bool {
	if e.fastMode == 0 {
		e.fastMode = 2
		h := e.host
		if p, ok := h.(*hostProxy); ok {
			h = p.h
		}
		c, isConsumer := h.(*consumer)
		if !disableFast && e.g.tier != nil && len(e.g.tier.handlers) > 0 && !e.breaksSet &&
			(!isConsumer || c.r.opts.Debug == nil && c.r.opts.DebugPoll == nil) {
			e.fastMode = 1
		}
	}
	return e.fastMode == 1
}

// forgetFast drops what e knows of inst (Init makes its slots afresh),
// or of every instance (inst < 0: a reload).
func (e *wasmEngine) forgetFast(inst int) {
	if inst < 0 {
		e.fast, e.fastMode, e.breaksSet = nil, 0, false
		return
	}
	if i := inst - e.fastLo; i >= 0 && i < len(e.fast) {
		e.fast[i] = fastInst{}
	}
}

// fastFor returns what e knows of inst. e.fast covers only the span of
// instance numbers e has run handlers of (from e.fastLo), not every
// instance of the program: a thousand pinned engines, each a table of
// the program's thousand instances, held 64 MB.
func (e *wasmEngine) fastFor(inst int) *fastInst {
	if i := inst - e.fastLo; i >= 0 && i < len(e.fast) {
		return &e.fast[i]
	}
	lo, hi := inst, inst+1
	if n := len(e.fast); n > 0 {
		lo, hi = min(lo, e.fastLo), max(hi, e.fastLo+n)
		// Grow by at least the table's length toward inst, so a run over
		// instances in order copies each entry O(1) times: growing by one
		// made 10,000 main-bus instances quadratic (0.3 → 2.2 s of CPU).
		if inst >= e.fastLo {
			hi = max(hi, e.fastLo+2*n)
		} else {
			lo = max(0, min(lo, e.fastLo-n))
		}
	}
	grown := make([]fastInst, hi-lo)
	if len(e.fast) > 0 {
		copy(grown[e.fastLo-lo:], e.fast)
	}
	e.fast, e.fastLo = grown, lo
	return &e.fast[inst-lo]
}

// deliverFast runs a delivery whose payload is in the guest's input
// buffer through a compiled handler, if it has one: ran reports whether
// it did (err is then the delivery's: a publish's interruption); when it
// did not, nothing happened and the guest must run it. e holds the guest.
func (e *wasmEngine) deliverFast(inst, topic int, n int) (ran bool, err error) {
	g := e.g
	t := g.tier
	// fastHandler's body, kept here: the call cost a chain's delivery
	// a few per cent.
	p := g.prog
	if inst < 0 || inst >= len(p.img.Instances) || topic < 0 || topic >= len(p.img.Topics) {
		return false, nil
	}
	byTopic := p.handlers[p.img.Instances[inst].Locus]
	if byTopic == nil || byTopic[topic] == 0 {
		return false, nil
	}
	th := &t.handlers[byTopic[topic]-1]
	if th.off || th.h.Publishes && g.box == 0 {
		return false, nil
	}
	fi := e.fastFor(inst)
	if !fi.known || !fi.ready[topic] {
		if !e.askFast(inst, topic, fi) {
			return false, nil
		}
	}
	s := t.hstack
	s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8] = fi.slots, uint64(g.inPtr), uint64(n), fi.batch, fi.box, fi.charged, uint64(int64(n)+th.charge), fi.guards, 0
	th.calls++
	if !t.callHandler(th) {
		fastFellBack.Add(1)

		if th.fellBack++; th.calls >= fastFallbacks && th.fellBack*4 > th.calls {
			th.off = true
		}
		return false, nil
	}
	fastAnswered.Add(1)
	return true, g.publishLeft(e, nil)
}

// fastHandler returns the compiled handler that may run a delivery of
// topic to inst, and what e knows of inst, or nil.
func (e *wasmEngine) fastHandler(inst, topic int) (*tierHandler, *fastInst) {
	g := e.g
	p := g.prog
	if inst < 0 || inst >= len(p.img.Instances) || topic < 0 || topic >= len(p.img.Topics) {
		return nil, nil
	}
	byTopic := p.handlers[p.img.Instances[inst].Locus]
	if byTopic == nil || byTopic[topic] == 0 {
		return nil, nil
	}
	th := &g.tier.handlers[byTopic[topic]-1]
	if th.off || th.h.Publishes && g.box == 0 {
		return nil, nil
	}
	fi := e.fastFor(inst)
	if !fi.known || !fi.ready[topic] {
		if !e.askFast(inst, topic, fi) {
			return nil, nil
		}
	}
	return th, fi
}

// deliverRun runs ds, deliveries of one topic to one instance queued one
// after the other, through its compiled handler's run export (see
// tier.HandlerManyExport), in as few calls as the batch allows, and
// returns how many ran: all of them, or fewer when the handler handed
// ds[ran] back (it then wrote nothing of it, and the guest must run it);
// err is a publish's interruption, reported as ds[ran]'s, the last that
// ran. The publishes of the deliveries that ran reach the host after each
// call, in order. e holds the guest; only for a guest that batches
// publishes, with nothing to see a delivery start or end (DeliverMany).
func (e *wasmEngine) deliverRun(ds []Delivery) (ran int, err error) {
	g := e.g
	t := g.tier
	th, fi := e.fastHandler(ds[0].Target, ds[0].Topic)
	if th == nil || g.box == 0 {
		return 0, nil
	}
	for ran < len(ds) {
		list := append(g.list[:0], make([]byte, 8)...) // the progress word
		for _, d := range ds[ran:] {
			list = binary.LittleEndian.AppendUint32(list, uint32(len(d.Payload)))
			list = append(list, d.Payload...)
		}
		g.list = list
		if err := g.write(list); err != nil {
			return ran, err
		}
		fuel := min(th.budget, vm.PollSteps)
		s := t.mstack
		s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9] = fi.slots, uint64(g.inPtr), uint64(len(ds)-ran), fi.batch, fi.box,
			fi.charged, uint64(th.charge), fi.guards, uint64(fuel), uint64(th.frameSize)
		k := t.callMany(th, fuel, len(ds)-ran, g.inPtr)
		th.calls += k
		fastAnswered.Add(int64(k))
		inRuns.Add(int64(k))
		if k > 0 {
			if err := g.publishLeft(e, nil); err != nil {
				return ran + k - 1, err
			}
		}
		ran += k
		if k == 0 {
			// Handed back with an empty batch: the guest runs it.
			fastFellBack.Add(1)
			th.calls++
			if th.fellBack++; th.calls >= fastFallbacks && th.fellBack*4 > th.calls {
				th.off = true
			}
			return ran, nil
		}
		// Handed back after others ran: perhaps only for want of
		// room in the batch, which the host has just emptied; the
		// next call starts with ds[ran] again.
	}
	return ran, nil
}

// callMany calls th's run export with the parameters in t.mstack for a
// list of count deliveries at address list, each with fuel steps, and
// returns how many ran to their end.
func (t *tierInstance) callMany(th *tierHandler, fuel int64, count int, list uint32) int {
	t.budget, t.given, t.err, t.breaks = fuel, fuel, nil, t.breaks[:0]
	if !t.handlerSet {
		t.setHandlerGlobals()
	} else if checkHandlerGlobals {
		t.checkHandlerGlobals()
	}
	err := th.many.CallWithStack(t.ctx, t.mstack)
	k := int(t.mstack[0])
	if err != nil {
		// The progress word counts the deliveries that ended.
		t.depth.Set(0)
		n, _ := t.guest.ReadUint64Le(list)
		k = int(n)
	}
	if k < 0 || k > count {
		k = 0 // not possible: the export counts what it ran
	}
	if err != nil || t.err != nil || k < count {
		// The stop global is set, or its last call's may be: the next
		// call sets them all.
		t.handlerSet = false
	} else {
		t.handlerSet = true
	}
	return k
}

// askFast asks the guest (fastinfo) for inst's addresses and whether
// topic's payload struct is made; it reports whether a compiled handler
// may run.
func (e *wasmEngine) askFast(inst, topic int, fi *fastInst) bool {
	g := e.g
	g.stack[0], g.stack[1] = uint64(uint32(inst)), uint64(uint32(topic))
	if err := g.fastInfo.CallWithStack(g.ctx, g.stack[:]); err != nil {
		return false
	}
	at := uint32(g.stack[0])
	if at == 0 {
		return false
	}
	b, ok := g.mem.Read(at, 6*8)
	if !ok {
		return false
	}
	if !fi.known {
		fi.slots = binary.LittleEndian.Uint64(b)
		fi.charged = binary.LittleEndian.Uint64(b[8:])
		fi.batch = binary.LittleEndian.Uint64(b[16:])
		fi.box = binary.LittleEndian.Uint64(b[24:])
		fi.guards = binary.LittleEndian.Uint64(b[40:])
		fi.ready = make([]bool, len(g.prog.img.Topics))
		fi.known = true
	}
	fi.ready[topic] = binary.LittleEndian.Uint64(b[32:]) != 0
	return fi.ready[topic]
}

// callHandler calls compiled handler th with the parameters in
// t.hstack, and reports whether it ran to its end (else it wrote
// nothing).
func (t *tierInstance) callHandler(th *tierHandler) bool {
	fuel := min(th.budget, vm.PollSteps)
	// A refill refuses at once: the handler falls back where the
	// interpreter would poll or run out of budget.
	t.budget, t.given, t.err, t.breaks = fuel, fuel, nil, t.breaks[:0]
	t.fuel.Set(uint64(fuel))
	t.givenG.Set(uint64(fuel))
	t.depth.Set(1)
	t.height.Set(uint64(th.frameSize))
	if !t.handlerSet {
		t.setHandlerGlobals()
	} else if checkHandlerGlobals {
		t.checkHandlerGlobals()
	}
	err := th.fn.CallWithStack(t.ctx, t.hstack)
	t.depth.Set(0)
	if err != nil || t.err != nil || t.stop.Get() != 0 || t.hstack[0] != 0 {
		t.handlerSet = false
		return false
	}
	// A handler that ran to its end left stop at 0 (just read), did not
	// log a write (an empty log stops the first), left log at log_base
	// (a loop commits by setting it so), and compiled code sets none of
	// the others (a refill sets commit to 0): the next call need not set
	// them again, which was half of a delivery's global sets. Any other
	// tier call (tierInstance.call) sets them for itself and clears
	// handlerSet.
	t.handlerSet = true
	return true
}

// setHandlerGlobals sets the globals callHandler does not set at every
// call: no stop, and an empty undo log (log past log_end stops the first
// logged write).
func (t *tierInstance) setHandlerGlobals() {
	t.stop.Set(0)
	t.logEnd.Set(0)
	t.log.Set(1)
	t.logBase.Set(1)
	t.commit.Set(0)
	t.handlerSet = true
}

// checkHandlerGlobals turns on a check (tests) that the globals
// callHandler did not set hold what setHandlerGlobals would set.
var checkHandlerGlobals bool

// handlerGlobalsWrong counts the calls checkHandlerGlobals found wrong.
var handlerGlobalsWrong atomic.Int64

func (t *tierInstance) checkHandlerGlobals() {
	if t.stop.Get() != 0 || t.logEnd.Get() != 0 || t.log.Get() != 1 || t.logBase.Get() != 1 || t.commit.Get() != 0 {
		handlerGlobalsWrong.Add(1)
		t.setHandlerGlobals()
	}
}
