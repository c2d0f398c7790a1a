// Package conformance is the executable specification of Hale: txtar
// scripts under testdata/<area>/ run the real hale command (registered in
// TestMain, so scripts see real exit codes) and assert exact output and
// exit codes. Run one area with `go test ./conformance -run TestScripts/replay`;
// rewrite expected output in place with `go test ./conformance -update`.
package conformance

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hale-lang/hale/cmd/hale/cli"
)

var update = flag.Bool("update", false, "rewrite the scripts' expected output files (cmp targets) in place")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"hale": func() { os.Exit(cli.Main()) },
	})
}

func TestScripts(t *testing.T) {
	areas, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, dir := range areas {
		files, _ := filepath.Glob(filepath.Join(dir, "*.txtar"))
		if len(files) == 0 {
			continue
		}
		total += len(files)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			testscript.Run(t, testscript.Params{
				Dir:           dir,
				UpdateScripts: *update,
				Cmds:          map[string]func(ts *testscript.TestScript, neg bool, args []string){"exitcode": cmdExitCode},
				Setup: func(env *testscript.Env) error {
					// Keep the wazero compilation cache inside the test's
					// work folder so scripts never share state.
					env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, ".cache"))
					env.Setenv("HOME", env.WorkDir)
					return nil
				},
			})
		})
	}
	if total == 0 {
		t.Fatal("no conformance scripts found")
	}
}

// cmdExitCode implements `exitcode N command [args...]`: it runs the
// command like exec (so stdout and stderr can be checked afterwards) and
// fails unless it exits with status N.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad status %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}
