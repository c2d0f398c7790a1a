//go:build !unix

package tier

// cpuTime is unknown here: the benchmark's cpu-ns/call reads 0.
func cpuTime() int64 { return 0 }
