package dap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hale-lang/hale/replay/debug"
)

// Debugger is what the server drives: the methods of replay/debug's
// Session. The server is written against this interface so that its
// protocol handling can be tested with a small fake (server_test.go).
type Debugger interface {
	CanStepBack() bool
	Threads() []Thread
	SetLineBreakpoints(file string, lines []int) []Breakpoint
	SetFunctionBreakpoints(names []string) []Breakpoint
	SetTrapBreakpoints(on bool)
	Start() (Stop, error)
	Continue() (Stop, error)
	Next(thread int) (Stop, error)
	StepIn(thread int) (Stop, error)
	StepOut(thread int) (Stop, error)
	StepBack(thread int) (Stop, error)
	ReverseContinue() (Stop, error)
	Pause()
	Stack(thread int) ([]Frame, error)
	Scopes(frameID int) ([]Scope, error)
	Variables(ref int) ([]Variable, error)
	Evaluate(frameID int, expr string) (Variable, error)
	Instances() []string
	State(instance string) (json.RawMessage, error)
	Close() error
}

// LaunchFunc starts a debug session; the server calls it for `launch`.
type LaunchFunc func(ctx context.Context, cfg Config) (Debugger, error)

// The session's value types are replay/debug's.
type (
	Config     = debug.Config
	Thread     = debug.Thread
	Breakpoint = debug.Breakpoint
	Stop       = debug.Stop
	Frame      = debug.Frame
	Scope      = debug.Scope
	Variable   = debug.Variable
)

// LaunchSession launches a replay/debug session: the LaunchFunc of
// `hale dap`.
func LaunchSession(ctx context.Context, cfg Config) (Debugger, error) {
	s, err := debug.Launch(ctx, cfg)
	var refused *debug.IdentityError
	if errors.As(err, &refused) {
		return nil, fmt.Errorf("%w; set \"unverified\": true in the launch configuration to debug it anyway", err)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// A *debug.Session is a Debugger.
var _ Debugger = (*debug.Session)(nil)
