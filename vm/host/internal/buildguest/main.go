// Command buildguest builds the interpreter guest (package vm/guest) for
// wasip1/wasm as a reactor and writes it to the path given as its
// argument. `go generate ./vm/host` runs it to refresh vm/host/guest.wasm,
// and the freshness test runs it into a temporary folder and compares.
//
// The build is reproducible: -trimpath removes file system paths,
// -buildvcs=false keeps version control state out, -buildid= empties the
// build ID, and the environment that changes code generation (GOFLAGS,
// GOWASM, GOEXPERIMENT, CGO_ENABLED) is fixed rather than inherited. Only
// the Go toolchain version remains, which is written to PATH.goversion
// next to the module so that the freshness test knows which toolchain can
// reproduce it.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// guestPkg is the guest's import path.
const guestPkg = "github.com/hale-lang/hale/vm/guest"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: buildguest OUT.wasm")
		os.Exit(2)
	}
	out := os.Args[1]
	cmd := exec.Command("go", "build",
		"-buildmode=c-shared", "-trimpath", "-buildvcs=false", "-ldflags=-buildid= -X=runtime.godebugDefault="+guestGODEBUG,
		"-o", out, guestPkg)
	cmd.Env = append(filteredEnv(),
		"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0",
		"GOFLAGS=", "GOWASM=", "GOEXPERIMENT=")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "buildguest:", err)
		os.Exit(1)
	}
	version, err := goVersion()
	if err != nil {
		fmt.Fprintln(os.Stderr, "buildguest:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(out+".goversion", []byte(version+"\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "buildguest:", err)
		os.Exit(1)
	}
}

// filteredEnv is the environment without the variables this command sets.
func filteredEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "GOOS", "GOARCH", "CGO_ENABLED", "GOFLAGS", "GOWASM", "GOEXPERIMENT":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// goVersion is the version of the go command that builds the guest (which
// may differ from the one that built this program).
func goVersion() (string, error) {
	b, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return runtime.Version(), nil
	}
	return strings.TrimSpace(string(b)), nil
}

// guestGODEBUG is compiled into the guest as its default GODEBUG (the
// guest gets no environment). gcstoptheworld=1 makes every collection
// stop the world. The guest has one thread and nothing preempts it, so
// the concurrent collector's background marking runs only when the guest
// yields, which a long handler never does: a cycle that starts in a
// handler keeps the write barrier on, and the interpreter 2 to 10 times
// slower, until it ends. Stop-the-world collections do the same marking
// at once and leave the barrier off.
const guestGODEBUG = "gcstoptheworld=1"
