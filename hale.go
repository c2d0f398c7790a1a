// Package hale holds the identity of the Hale toolchain (its version, the
// toolchain and build digests, and the embedded copy of its own module
// files from which dependency versions are read) and the one compile
// entry point, Compile, that the command line and every test harness
// call: load, check, effects, SIR, image and digests, once (the build
// digest on first use, since only recording and replay need it).
package hale

import (
	_ "embed"
	"strings"
)

// Version is the toolchain version printed by `hale version` and stamped
// into every artifact.
const Version = "0.1.0"

//go:embed go.mod
var goMod string

// WazeroVersion returns the wazero version the toolchain was built with,
// as required in go.mod.
func WazeroVersion() string { return requiredVersion("github.com/tetratelabs/wazero") }

func requiredVersion(module string) string {
	for _, line := range strings.Split(goMod, "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == module {
			return f[1]
		}
	}
	return "unknown"
}
