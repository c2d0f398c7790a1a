// Package hale holds the identity of the Hale toolchain: its version and
// the embedded copy of its own module files (go.mod, go.sum) from which
// dependency versions are read.
package hale

import (
	_ "embed"
	"strings"

	"github.com/hale-lang/hale/replay/artifact"
)

// Version is the toolchain version printed by `hale version` and stamped
// into every artifact.
const Version = "0.1.0"

// ArtifactFormatVersion is the recording format this toolchain writes and
// the newest it reads.
const ArtifactFormatVersion = artifact.FormatVersion

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
