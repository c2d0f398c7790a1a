//go:build linux || darwin || netbsd || openbsd

package host

import "golang.org/x/sys/unix"

// mapNoReserve asks the kernel not to reserve swap for a guest memory's
// mapping, most of which is never touched.
const mapNoReserve = unix.MAP_NORESERVE
