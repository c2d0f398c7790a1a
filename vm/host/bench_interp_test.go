package host

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// The interpreter workloads of vm's BenchmarkFib30, BenchmarkLoop1e6,
// BenchmarkStrings and BenchmarkMaps, run through Run on both engines so
// that the wasm engine (the default) is measured the way `hale run` uses
// it. Each is a fn whose result is checked; the start handler calls it N
// times, N being b.N, so the run's start-up is paid once per measurement.
var interpWorkloads = []struct {
	name, fns string
}{
	{"fib30", `
fn fib(n: int) -> int {
    if n < 2 { return n; }
    return fib(n - 1) + fib(n - 2);
}
fn work() { assert(fib(30) == 832040, "fib"); }`},
	{"loop1e6", `
fn work() {
    var s = 0;
    for i in 0..1000000 { s += i; }
    assert(s == 499999500000, "sum");
}`},
	{"strings", `
fn work() {
    var parts: [string] = [];
    for i in 0..1000 { push(parts, "item" + str(i)); }
    let joined = join(parts, ",");
    let back = split(joined, ",");
    var s = "";
    for p in back { s = s + p; }
    assert(len(back) == 1000, "split");
}`},
	{"mapset", `
fn work() {
    var m: {int: int} = {};
    for i in 0..100000 { m[i] = i * 2; }
    assert(len(m) == 100000, "len");
}`},
	{"mapget", `
fn work() {
    var m: {int: int} = {};
    for i in 0..100 { m[i] = i * 2; }
    var s = 0;
    for i in 0..100000 { s += m[i % 100]; }
    assert(s == 9900000, "sum");
}`},
	{"mapsetsmall", `
fn work() {
    for r in 0..100 {
        var m: {int: int} = {};
        for i in 0..1000 { m[i] = i * 2; }
        assert(len(m) == 1000, "len");
    }
}`},
	{"strcat", `
fn work() {
    var total = 0;
    for i in 0..1000 {
        var s = "";
        for j in 0..20 { s = s + "ab"; }
        total += len(s);
    }
    assert(total == 40000, "total");
}`},
	{"tiercalls", `
fn tiny(n: int) -> int { var s = 0; for i in 0..n { s += i; } return s; }
fn work() {
    // The string keeps work itself interpreted: 10,000 calls of a
    // compiled entry through the host.
    var t = 0;
    var note = "";
    for i in 0..10000 { t += tiny(3); }
    note = note + "done";
    assert(t == 30000, note);
}`},
	{"maps", `
fn work() {
    var m: {int: int} = {};
    for i in 0..100000 { m[i] = i * 2; }
    var s = 0;
    for i in 0..100000 { s += m[i]; }
    assert(s == 9999900000, "sum");
}`},
	{"mapcount", `
fn work() {
    var m: {int: int} = {};
    for i in 0..100000 {
        let k = (i * 7919) % 1000;
        if has(m, k) { m[k] += 1; } else { m[k] = 1; }
    }
    assert(len(m) == 1000, "count");
}`},
}

// BenchmarkEngineInterp compares the engines on the interpreter
// workloads: ns/op is one call of the workload, start-up included once
// per measurement; cpu-ns/op is the process's CPU time for the same,
// steadier than wall time on a shared machine. wasm-notier is the wasm
// engine with its second tier off: the interpreter alone.
func BenchmarkEngineInterp(b *testing.B) {
	for _, w := range interpWorkloads {
		b.Run(w.name, func(b *testing.B) {
			for _, mode := range []string{"wasm", "wasm-notier", "native"} {
				kind := EngineNative
				if mode != "native" {
					kind = EngineWasm
				}
				b.Run(mode, func(b *testing.B) {
					disableTier = mode == "wasm-notier"
					defer func() { disableTier = false }()
					src := fmt.Sprintf("const N: int = %d;\n%s\n"+
						"locus Main { on start { for i in 0..N { work(); } } }\n"+
						"main { spawn Main; }\n", b.N, w.fns)
					img := compileAll(b, src)
					if kind == EngineWasm {
						if _, err := defaultWasm(); err != nil { // compile outside the timing
							b.Fatal(err)
						}
					}
					b.ResetTimer()
					cpu := benchCPUTime()
					res, err := Run(context.Background(), img, Options{Engine: kind})
					cpu = benchCPUTime() - cpu
					b.StopTimer()
					if err != nil || res.Code != 0 {
						b.Fatalf("run: %v %+v", err, res)
					}
					b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
				})
			}
		})
	}
}

// benchCPUTime returns the process's user and system CPU time.
func benchCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
