package vm

import "github.com/hale-lang/hale/codegen/image"

// SetInitBudget caps the steps of m's Init runs, so that fuzzed images end.
func SetInitBudget(m *Machine, n int64) { m.initBudget = n }

// PayloadLocal exposes onlyReadsFields.
var PayloadLocal = onlyReadsFields

// FieldEqShape reports whether f is a guard that runs without the
// dispatch loop (guardfast.go).
func FieldEqShape(f *image.Func) bool { return fieldEqShape(f).ok }

// SetFieldEq turns the guards' fast path on or off (on by default).
func SetFieldEq(on bool) { fieldEqOn = on }

// SetGuardIndex turns the index of guard runs on or off (on by default).
func SetGuardIndex(on bool) { guardIndexOn = on }

// GuardRuns returns the lengths of topic's indexed runs of guards (made
// on first use).
func GuardRuns(m *Machine, topic int) []int {
	var ns []int
	for _, r := range m.guardIndex(topic) {
		ns = append(ns, r.hi-r.lo)
	}
	return ns
}

// MinGuardRun is minGuardRun.
const MinGuardRun = minGuardRun

// MemCharged returns what m has charged to its memory account since it
// last measured.
func MemCharged(m *Machine) int64 { return m.mem.charged }

// FieldEqSteps is fieldEqSteps.
const FieldEqSteps = fieldEqSteps

// GuardTableWords are the offsets of a guard table's words, in the
// order of tier's gt… constants, and their count.
var GuardTableWords = []int{gtValid, gtSubs, gtField, gtMin, gtKeys, gtSize, gtCharge, gtBits, gtWords}

// GuardTable returns topic's guard table (GuardTables) and its bits.
func GuardTable(m *Machine, topic int) (words []uint64, bits []byte) {
	m.GuardTables()
	return m.guardTab[topic], m.guardTabBits[topic]
}

// ArenaLargest exposes arenaLargest.
func ArenaLargest(m *Machine) int { return m.arenaLargest() }
