//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package host

import "github.com/tetratelabs/wazero/experimental"

// reserveMemory has no mapping to offer here: guest memories are slices.
func reserveMemory(max uint64) experimental.LinearMemory { return nil }
