package vm

import (
	"math"
	"math/bits"
	"strconv"
	"sync"
	"unsafe"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm/value"
)

// DefaultMemoryLimit is the memory limit of a machine's data unless its
// host sets another (SetMemoryLimit): 256 MiB, well below a machine's
// memory, and enough that a program that runs out reaches it in seconds
// rather than minutes.
const DefaultMemoryLimit = 256 << 20

// The memory limit bounds the data one machine (one consumer) holds: the
// values reachable from its instances' state, its queued payloads and the
// registers live where each frame of the running handler stands, as
// value.Sizer counts them (a measure of the program's values, the same on
// every engine, not the bytes the Go runtime happens to use). The machine
// does not measure after every allocation: each operation that makes a
// value charges the value's shallow size, and when the charges since the
// last measure exceed an allowance, it measures. Past the limit the
// operation that charged last traps with "out of memory". Everything
// involved (charges, allowance, measure) depends only on the program and
// its inputs, so the trap comes at the same step on every engine, long
// before the Go runtime would run out.
type memory struct {
	limit     int64 // 0: no limit
	live      int64 // the data measured last
	charged   int64 // charged since the last measure
	allowance int64 // measure when charged exceeds it
	sizer     value.Sizer
}

// SetMemoryLimit sets the limit, in bytes, of the data the machine holds
// (see DefaultMemoryLimit); 0 or less means no limit.
func (m *Machine) SetMemoryLimit(limit int64) {
	m.mem.limit = max(limit, 0)
	m.mem.charged = 0
	m.mem.allowance = m.mem.nextAllowance()
}

// MemoryLimit returns the limit SetMemoryLimit set.
func (m *Machine) MemoryLimit() int64 { return m.mem.limit }

// MemoryCounters returns what the machine has charged since its last
// measure and the allowance that calls for the next: the engines'
// differential tests compare them after every delivery.
func (m *Machine) MemoryCounters() (charged, allowance int64) {
	return m.mem.charged, m.mem.allowance
}

// nextAllowance is what may be charged after a measure of mem.live before
// the next one: what could take the data past the limit (the data can
// only grow by what is charged, so until then it cannot be over it) and,
// near the limit, a sixteenth of the limit, so that measuring costs a
// bounded share of the work that allocates while the data can outgrow
// the limit by at most that much before it is caught. Far from the limit
// a program measures seldom: binary-trees, whose data is a few MiB
// under a limit of 256 MiB, measured every 8 MiB it allocated.
func (mem *memory) nextAllowance() int64 {
	if mem.limit == 0 {
		return math.MaxInt64
	}
	return max(mem.limit-mem.live, mem.limit/16)
}

// charge adds the cost of a value just made; checkMemory decides.
func (m *Machine) charge(n int64) { m.mem.charged += n }

// overAllowance reports whether the charges call for a measure.
func (m *Machine) overAllowance() bool { return m.mem.charged > m.mem.allowance }

// measure counts the data the machine holds and returns an "out of
// memory" error when it is over the limit. ip is where the top frame
// goes on: just after the instruction that charged last. It is kept out of
// the dispatch loop.
//
//go:noinline
func (m *Machine) measure(ip unsafe.Pointer) error {
	mem := &m.mem
	mem.charged = 0
	m.tierWasted, m.tierHoldMeasure = 0, false
	if mem.limit == 0 {
		mem.allowance = math.MaxInt64
		return nil
	}
	s := &mem.sizer
	s.Begin(mem.limit)
	for i := range m.insts {
		s.Add(m.insts[i].slots)
	}
	m.addFrames(s, ip)
	for _, p := range m.payloads {
		if p != nil {
			s.Add(p.Fields())
		}
	}
	mem.live = s.Total()
	mem.allowance = mem.nextAllowance()
	if s.Over() {
		return trapErr(KindMemory, outOfMemoryMsg(mem.limit))
	}
	return nil
}

// outOfMemoryMsg is the trap message of data over limit bytes.
func outOfMemoryMsg(limit int64) string {
	return "out of memory: the consumer's data outgrew its limit of " + FormatBytes(limit)
}

// FormatBytes writes a byte count as the memory limit is written: in GiB,
// MiB or KiB when it is a whole number of them, else in bytes.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// addFrames adds to s the registers each frame holds: those live after
// the instruction where it stands (image.LiveAfter). For the top frame
// that is the instruction that charged, just before ip, with the register
// it wrote; for a frame below it, the call or guarded publish it waits
// in, with the registers that instruction reads, but not a callee's
// frame, which starts at the call's A and is counted as the callee's. A
// slot that holds a value its frame no longer reads does not count, nor
// does one above the frames (a returned call's), so the count does not
// depend on whether an earlier call ran interpreted or compiled.
func (m *Machine) addFrames(s *value.Sizer, ip unsafe.Pointer) {
	var reads []image.Window
	for i := range m.frames {
		f := &m.frames[i]
		fc := &m.funcs[f.fn]
		regs := m.stack[f.base : int(f.base)+fc.frameSize]
		at := f.ip
		if i == len(m.frames)-1 {
			at = ip
		}
		pc := -1
		if at != nil {
			pc = pcOf(fc.codePtr(), at) - 1
		}
		if pc < 0 || pc >= len(fc.code) {
			// where the frame stands is not known: all of it counts
			s.Add(regs)
			continue
		}
		c := fc.fn.Code[pc] // the image's own instruction (absolute targets)
		set := append(m.liveSet[:0], m.live.of(int(f.fn)).After(pc)...)
		if i == len(m.frames)-1 {
			if w := image.Writes(m.img, c); w.N > 0 {
				setBit(set, int(w.Base))
			}
		} else {
			reads = image.Reads(m.img, c, reads[:0])
			for _, w := range reads {
				for r := w.Base; r < w.Base+w.N; r++ {
					setBit(set, int(r))
				}
			}
		}
		m.liveSet = set
		top := len(regs)
		if i < len(m.frames)-1 && c.Op == image.OpCall {
			top = int(c.A) // the callee's frame starts here
		}
		for w, word := range set {
			for word != 0 {
				r := w*64 + bits.TrailingZeros64(word)
				word &= word - 1
				if r < top {
					s.Add(regs[r : r+1])
				}
			}
		}
	}
}

func setBit(set []uint64, r int) {
	if r >= 0 && r/64 < len(set) {
		set[r/64] |= 1 << (r % 64)
	}
}

// liveTable holds each function's registers live after each instruction,
// computed when a measure first needs them (measures are rare, and most
// functions never see one). Siblings share it, so each function's entry
// is made once.
type liveTable struct {
	img *image.Image
	fns []liveFunc
}

type liveFunc struct {
	once sync.Once
	live *image.Live
}

func newLiveTable(img *image.Image) *liveTable {
	return &liveTable{img: img, fns: make([]liveFunc, len(img.Funcs))}
}

func (t *liveTable) of(fn int) *image.Live {
	e := &t.fns[fn]
	e.once.Do(func() { e.live = image.LiveAfter(t.img, &t.img.Funcs[fn]) })
	return e.live
}
