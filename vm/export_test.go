package vm

// SetInitBudget caps the steps of m's Init runs, so that fuzzed images end.
func SetInitBudget(m *Machine, n int64) { m.initBudget = n }

// PayloadLocal exposes onlyReadsFields.
var PayloadLocal = onlyReadsFields
