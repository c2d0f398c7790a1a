package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/hale-lang/hale/internal/termsafe"
	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
)

// inspectorCommands lists the inspector's commands, short forms in
// parentheses, for `help` and for an unknown command.
const inspectorCommands = "commands: state [instance], msg, where, step (s), next (n), continue (c), break (b) LINE|Locus.on Topic|fn, back, quit (q)"

// inspector is the interactive inspector of `hale replay --at` on a
// terminal: at each stop it shows the stop, then reads commands until
// one resumes or ends the run. It lives across the replays `back`
// starts, and keeps its breakpoints and its line history over them.
type inspector struct {
	e     env
	lines lineReader
	// stops are the coordinates of this replay's stops, in order.
	stops []artifact.Coordinate
	// breaks are the breakpoints set, re-set at the first stop of a
	// replay `back` starts.
	breaks []string
	// backTo is the stop `back` asked for: the run is ended and replayed
	// from the start up to it.
	backTo *artifact.Coordinate

	mu    sync.Mutex
	muted bool // a replay `back` started has not reached its stop yet (its breakpoints are not set)
}

// newInspector returns the inspector reading e.stdin: with line editing
// and history when it is a terminal, plain lines otherwise.
func newInspector(e env) *inspector {
	ins := &inspector{e: e}
	if f, ok := e.stdin.(*os.File); ok && isTerminal(f) {
		ins.lines = newTermLines(f, e.stdout)
	} else {
		ins.lines = &plainLines{in: bufio.NewScanner(e.stdin), out: e.stdout}
	}
	return ins
}

// replaying tells the inspector a replay `back` asked for starts.
func (ins *inspector) replaying() {
	ins.mu.Lock()
	ins.muted = true
	ins.mu.Unlock()
}

// gate returns w, silent while a replay `back` started has not reached
// its stop.
func (ins *inspector) gate(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	return &gatedWriter{ins: ins, w: w}
}

// gatedWriter is what gate returns.
type gatedWriter struct {
	ins *inspector
	w   io.Writer
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.ins.mu.Lock()
	muted := g.ins.muted
	g.ins.mu.Unlock()
	if muted {
		return len(p), nil
	}
	return g.w.Write(p)
}

// inspect is the replay's Inspect: it handles one stop.
func (ins *inspector) inspect(in *replay.Inspection) replay.InspectAction {
	out := ins.e.stdout
	show := func(v any) { _ = writeJSON(out, v) }
	// The names come from the artifact, which may be forged.
	esc := termsafe.String
	ins.mu.Lock()
	rerun := ins.muted
	ins.muted = false
	ins.mu.Unlock()
	if rerun {
		for _, spec := range ins.breaks {
			_, _ = in.Break(spec) // it was accepted before, on the same program
		}
	}
	ins.stops = append(ins.stops, in.Coordinate())
	fmt.Fprintf(out, "stopped before delivery %s (target %s, message %s", esc(in.View.Coordinate), esc(in.View.Pending.Target), esc(in.View.Pending.Message))
	if in.View.Pending.Topic != "" {
		fmt.Fprintf(out, ", topic %s", esc(in.View.Pending.Topic))
	}
	fmt.Fprintln(out, ")")
	for {
		line, err := ins.lines.ReadLine("(hale) ")
		if err != nil {
			// End of input (Ctrl-D) is quit.
			fmt.Fprintln(out)
			return replay.InspectHalt
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		arg := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), fields[0]))
		switch fields[0] {
		case "state":
			st, err := in.State(arg)
			if err != nil {
				fmt.Fprintf(out, "error: %s (instances here: %s)\n", esc(err.Error()), esc(strings.Join(in.Instances(), ", ")))
				continue
			}
			fmt.Fprintln(out, string(termsafe.JSON(st)))
		case "msg":
			show(in.View.Pending)
		case "where":
			show(in.View)
		case "step", "s":
			return replay.InspectStep
		case "next", "n":
			return replay.InspectNext
		case "continue", "c":
			return replay.InspectContinue
		case "break", "b":
			if arg == "" {
				if len(ins.breaks) == 0 {
					fmt.Fprintln(out, "no breakpoints (break LINE|Locus.on Topic|fn sets one)")
				}
				for _, b := range ins.breaks {
					fmt.Fprintf(out, "breakpoint %s\n", esc(b))
				}
				continue
			}
			handlers, err := in.Break(arg)
			if err != nil {
				fmt.Fprintf(out, "error: %s\n", esc(err.Error()))
				continue
			}
			ins.breaks = append(ins.breaks, arg)
			fmt.Fprintf(out, "breakpoint %s: stops before the deliveries to %s\n", esc(arg), esc(strings.Join(handlers, ", ")))
		case "back":
			if len(ins.stops) < 2 {
				fmt.Fprintln(out, "error: no earlier stop to go back to")
				continue
			}
			prev := ins.stops[len(ins.stops)-2]
			ins.stops = ins.stops[:len(ins.stops)-2]
			ins.backTo = &prev
			fmt.Fprintf(out, "replaying from the start to %s\n", prev)
			return replay.InspectHalt
		case "quit", "q":
			return replay.InspectHalt
		case "help", "h", "?":
			fmt.Fprintln(out, inspectorCommands)
		default:
			fmt.Fprintf(out, "unknown command %q; %s\n", esc(fields[0]), inspectorCommands)
		}
	}
}

// lineReader reads the inspector's commands.
type lineReader interface {
	// ReadLine shows prompt and returns the next line, io.EOF at the end
	// of input.
	ReadLine(prompt string) (string, error)
}

// plainLines reads lines from a stream that is not a terminal.
type plainLines struct {
	in  *bufio.Scanner
	out io.Writer
}

func (p *plainLines) ReadLine(prompt string) (string, error) {
	fmt.Fprint(p.out, prompt)
	if !p.in.Scan() {
		if err := p.in.Err(); err != nil {
			return "", err
		}
		return "", io.EOF
	}
	return p.in.Text(), nil
}

// termLines reads lines on a terminal with golang.org/x/term's line
// editor: cursor keys, Home/End, Ctrl-A/E/K/U/W, and the history of
// the session's commands on Up and Down. The terminal is in raw mode
// only while a line is read, so that what the program prints in
// between shows as usual. Ctrl-D on an empty line and Ctrl-C end the
// input.
type termLines struct {
	fd int
	t  *term.Terminal
}

func newTermLines(in *os.File, out io.Writer) *termLines {
	return &termLines{fd: int(in.Fd()), t: term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, out}, "")}
}

func (tl *termLines) ReadLine(prompt string) (string, error) {
	old, err := term.MakeRaw(tl.fd)
	if err != nil {
		return "", fmt.Errorf("terminal: %w", err)
	}
	defer func() { _ = term.Restore(tl.fd, old) }()
	tl.t.SetPrompt(prompt)
	line, err := tl.t.ReadLine()
	if errors.Is(err, io.EOF) {
		return "", io.EOF
	}
	return line, err
}
