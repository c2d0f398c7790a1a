package dap

import (
	"context"
	"encoding/json"
	"io"

	"github.com/hale-lang/hale/vm/host"
)

// Debugger is what the server drives: the methods of replay/debug's
// Session. The server is written against this interface so that its
// protocol handling can be tested with a small fake.
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

// Config says what to debug (replay/debug's Config).
type Config struct {
	Program, Recording, Bundle string
	Seed                       uint64
	Fixtures, Inputs           string
	Args                       []string
	Engine                     host.EngineKind
	StopOnEntry                bool
	StopAt                     string
	Output                     io.Writer
}

// Thread is a consumer: ID = consumer id + 1.
type Thread struct {
	ID   int
	Name string
}

// Breakpoint is the answer to a breakpoint request.
type Breakpoint struct {
	ID       int
	Verified bool
	Line     int
	Message  string
}

// Stop is where a resume call ended.
type Stop struct {
	Reason      string
	Thread      int
	Description string
	Coordinate  string
	Ended       bool
	ExitCode    int
	Verdict     string
}

// Frame is a Hale frame at the current stop.
type Frame struct {
	ID        int
	Name      string
	File      string
	Line, Col int
}

// Scope is a frame's variable group: Locals, State or Message.
type Scope struct {
	Name string
	Ref  int
}

// Variable is a value shown to the client; Ref > 0 expands.
type Variable struct {
	Name, Value, Type string
	Ref               int
}
