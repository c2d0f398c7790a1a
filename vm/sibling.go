package vm

import (
	"math"

	"github.com/hale-lang/hale/vm/value"
)

// Sibling returns a new machine for m's image whose primitive calls go to
// host. It is what New(img, host) would return, with m's memory limit
// and, when m has the second tier on, the tier on with the same caller,
// but without New's work in the size of the image (validating it,
// preparing every function's code, building the type, handler and guard
// tables), which it shares with m: those tables are read-only once made.
// Everything a run changes is the sibling's own: instances, registers,
// memory account, guard parameters, scratch buffers and, with the tier
// on, the tier's per-function probes (which start afresh).
//
// A host that runs many consumers makes their machines this way: an image
// grows with its instances (a spawn function each), so making one machine
// per consumer with New costs the square of the instance count. m and its
// siblings may run on different goroutines. A machine that shares its
// code with siblings must not arm breaks (SetBreaks patches the code):
// hosts that debug make no siblings.
func (m *Machine) Sibling(host Host) *Machine {
	s := &Machine{
		img:        m.img,
		host:       host,
		types:      m.types,
		variants:   m.variants,
		prims:      m.prims,
		handlers:   m.handlers,
		guards:     m.guards,
		live:       m.live,
		stack:      make([]value.Value, 256),
		initBudget: math.MaxInt64,
		tierCall:   m.tierCall,
		tierPlan:   m.tierPlan,
		tierAllocs: m.tierAllocs,
	}
	s.consts = make([]value.Value, len(m.img.Consts))
	for i, k := range m.img.Consts {
		s.consts[i] = s.constValue(k)
	}
	s.funcs = m.funcs // written only by the tier's probes (tier.go)
	if m.tierCall != nil {
		s.funcs = make([]funcCode, len(m.funcs))
		for i, f := range m.funcs {
			s.funcs[i] = funcCode{code: f.code, frameSize: f.frameSize, fn: f.fn, tier: m.tierPlan.Entry[i], payloadLocal: f.payloadLocal}
		}
	}
	if m.tierLog != nil {
		s.tierLog = make([]uint64, 2*tierLogFirst) // as EnableTier makes it
	}
	if m.regions != nil {
		s.regionOrig = m.regionOrig
		s.newRegionState()
	}
	s.payloads = make([]*value.Struct, len(m.img.Topics))
	s.insts = make([]instance, len(m.insts))
	for i := range m.insts {
		s.insts[i].locus = m.insts[i].locus
	}
	s.SetMemoryLimit(m.mem.limit)
	return s
}
