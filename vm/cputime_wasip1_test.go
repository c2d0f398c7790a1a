package vm_test

import "time"

// cpuTime is zero under wasip1, which has no getrusage: the benchmarks'
// cpu-ns/op reads 0 there and ns/op is the measure (run the package's
// benchmarks compiled to wasm to see what the guest pays; docs/performance.md).
func cpuTime() time.Duration { return 0 }
