//go:build darwin || freebsd || netbsd || openbsd

package host

// adviseHugePages has no advice to give outside Linux (see
// memory_linux.go).
func adviseHugePages(buf []byte) {}
