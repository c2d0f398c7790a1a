// Package cli is the hale command line: cobra commands that parse flags,
// call the toolchain packages and print. It holds no logic a test would
// want on its own; errors are printed in one place (Main) and mapped to
// the documented exit codes.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/hale-lang/hale/internal/termsafe"
)

// Exit codes shared by every command (docs/cli.md).
const (
	ExitOK        = 0
	ExitFailure   = 1 // compile error; replay diverged; trace verify found a problem
	ExitUsage     = 2 // bad flags or arguments; replay refused
	ExitTrap      = 3 // the program trapped
	ExitRecording = 4 // the recording could not be written completely

	ExitInterrupted = 130 // stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report it)
)

// exitError carries an exit code and an optional message to Main. An
// empty message means the command already printed what it had to say.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// silentExit ends the command with a code and no further message.
func silentExit(code int) error { return &exitError{code: code} }

// env abstracts the process environment so tests can run the CLI in-process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// Main runs hale with os.Args and returns the process exit code.
func Main() int {
	return Run(os.Args[1:], env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
}

// Run runs hale with the given arguments and environment.
func Run(args []string, e env) (code int) {
	defer func() {
		// A Go stack trace must never reach a user; report the bug plainly.
		if r := recover(); r != nil {
			fmt.Fprintf(e.stderr, "hale: internal error: %v\nplease report this with the program that caused it\n", r)
			code = ExitFailure
		}
	}()
	root := newRoot(e)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var xe *exitError
	if errors.As(err, &xe) {
		if xe.msg != "" {
			fmt.Fprintf(e.stderr, "hale: %s\n", termsafe.Lines(xe.msg))
		}
		return xe.code
	}
	// Everything cobra reports itself (unknown command or flag, wrong
	// argument count) is a usage error.
	fmt.Fprintf(e.stderr, "hale: %s\n", termsafe.Lines(err.Error()))
	fmt.Fprintf(e.stderr, "Run 'hale --help' for usage.\n")
	return ExitUsage
}

func newRoot(e env) *cobra.Command {
	root := &cobra.Command{
		Use:           "hale",
		Short:         "Hale: an agent language whose runs can be recorded and replayed",
		Long:          "Hale checks, builds, runs, records and replays programs written in the Hale agent language.\nSet LOTUS_OBS_RECORD=run.halerec to record a run; replay it with 'hale replay run.halerec app.hl --diff'.",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exitf(ExitUsage, "%s\nRun '%s --help' for usage.", err, c.CommandPath())
	})
	for _, add := range commands {
		root.AddCommand(add(e))
	}
	return root
}

// commands lists the constructors of every subcommand; each file of this
// package adds its own in an init function.
var commands []func(env) *cobra.Command

// RunWith runs hale in-process with the given arguments, streams and
// environment lookup, and returns the exit code (for tests that drive the
// real command without a subprocess).
func RunWith(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	return Run(args, env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv})
}
