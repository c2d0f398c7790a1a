package vm

import (
	"math"
	"strconv"

	"github.com/hale-lang/hale/vm/value"
)

// DefaultMemoryLimit is the memory limit of a machine's data unless its
// host sets another (SetMemoryLimit): 256 MiB, well below a machine's
// memory, and enough that a program that runs out reaches it in seconds
// rather than minutes.
const DefaultMemoryLimit = 256 << 20

// The memory limit bounds the data one machine (one consumer) holds: the
// values reachable from its instances' state and its registers, as
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

// minAllowance is the least that is charged between two measures, so that
// a program with little data does not measure often.
const minAllowance = 8 << 20

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
// the next one: as much as the data measured (so that measuring costs a
// constant share of the work that allocates), at least minAllowance and,
// near the limit, a sixteenth of the limit, so that the data can outgrow
// the limit by at most that much before it is caught.
func (mem *memory) nextAllowance() int64 {
	if mem.limit == 0 {
		return math.MaxInt64
	}
	a := max(mem.live, minAllowance)
	if room := mem.limit - mem.live; a > room {
		a = max(room, mem.limit/16)
	}
	return a
}

// charge adds the cost of a value just made; checkMemory decides.
func (m *Machine) charge(n int64) { m.mem.charged += n }

// overAllowance reports whether the charges call for a measure.
func (m *Machine) overAllowance() bool { return m.mem.charged > m.mem.allowance }

// measure counts the data the machine holds and returns an "out of
// memory" error when it is over the limit. It is kept out of the dispatch
// loop.
//
//go:noinline
func (m *Machine) measure() error {
	mem := &m.mem
	mem.charged = 0
	if mem.limit == 0 {
		mem.allowance = math.MaxInt64
		return nil
	}
	s := &mem.sizer
	s.Begin(mem.limit)
	for i := range m.insts {
		s.Add(m.insts[i].slots)
	}
	s.Add(m.stack[:min(m.high, len(m.stack))])
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
