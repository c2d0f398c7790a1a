//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package cli

// isTerminalFd reports false where terminals cannot be told apart from
// other character devices: the --at view is then printed as JSON.
func isTerminalFd(fd uintptr) bool { return false }
