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
