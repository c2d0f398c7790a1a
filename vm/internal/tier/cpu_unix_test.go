//go:build unix

package tier

import "syscall"

// cpuTime is the process's user and system time in nanoseconds.
func cpuTime() int64 {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &r) != nil {
		return 0
	}
	return r.Utime.Nano() + r.Stime.Nano()
}
