package vm

import (
	"os/exec"
	"strings"
	"testing"
)

// forbidden are the packages that read time, randomness, the environment,
// files or the network (os covers the environment and files), which the
// interpreter must not reach: inside the wasm guest every such input has
// to cross the host gateway.
var forbidden = []string{"os", "time", "syscall", "net", "math/rand", "math/rand/v2", "crypto/rand"}

// deps returns the dependency closure of a package.
func deps(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	set := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		set[d] = true
	}
	return set
}

// TestNoWorldInDependencies proves that neither the interpreter nor the
// image package it reads can reach the world.
func TestNoWorldInDependencies(t *testing.T) {
	// The check can fail: fmt reaches os.
	if !deps(t, "fmt")["os"] {
		t.Fatal("go list -deps fmt does not list os: the check below would prove nothing")
	}
	for _, pkg := range []string{".", "../codegen/image"} {
		d := deps(t, pkg)
		if pkg == "." && !d["github.com/hale-lang/hale/vm/value"] {
			t.Fatalf("go list -deps ./vm does not list vm/value")
		}
		for _, f := range forbidden {
			if d[f] {
				t.Errorf("%s depends on %s", pkg, f)
			}
		}
	}
}
