package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/hale-lang/hale/internal/termsafe"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/replay/debug"
	"github.com/hale-lang/hale/vm/host"
)

// inspectorCommands lists the inspector's commands, short forms in
// parentheses, for `help` and for an unknown command.
const inspectorCommands = "commands: state [instance], msg, where, step (s), next (n), continue (c), break (b) LINE|Locus.on Topic|fn, back, quit (q)"

// inspector is the interactive inspector of `hale replay --at`, on a
// terminal (or with --inspect): a debugging session (package
// replay/debug) over the recording's merged order, so that at every stop
// each other consumer is between deliveries and every instance can be
// shown. It prints each stop, then reads commands until one resumes or
// ends the session.
type inspector struct {
	e     env
	lines lineReader
	s     *debug.Session
	// lines and fns are the breakpoints set, as typed.
	lineBPs []int
	fnBPs   []string
	entry   string // the program's entry file, where LINE breakpoints are
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

// runInspector debugs the recording from its start up to coordinate at,
// then hands the session to the person at the prompt.
func runInspector(e env, f replayFlags, kind host.EngineKind, artifactPath, programPath string, at artifact.Coordinate) error {
	ins := newInspector(e)
	cfg := debug.Config{Program: programPath, Recording: artifactPath, Engine: kind, StopAt: at.String(), Unverified: f.unverified}
	if !f.quiet {
		cfg.Output = e.stdout
	}
	s, err := debug.Launch(context.Background(), cfg)
	var refused *debug.IdentityError
	if errors.As(err, &refused) {
		return exitf(ExitUsage, "%v; replay it anyway with --unverified", err)
	}
	if err != nil {
		return exitf(ExitUsage, "%v", err)
	}
	defer s.Close()
	ins.s, ins.entry = s, programPath
	s.SetTrapBreakpoints(true) // a trap stops, showing its frame, before the run ends
	stop, err := s.Start()
	for {
		if err != nil {
			return exitf(ExitFailure, "%v", err)
		}
		ins.show(stop)
		if stop.Ended {
			return nil
		}
		var quit bool
		stop, quit, err = ins.prompt(stop)
		if quit {
			return nil
		}
	}
}

// show prints where a stop is.
func (ins *inspector) show(stop debug.Stop) {
	out := ins.e.stdout
	esc := termsafe.String
	if stop.Ended {
		fmt.Fprintf(out, "the run ended: %s, exit %d\n", esc(stop.Verdict), stop.ExitCode)
		if stop.Description != "" {
			fmt.Fprintf(out, "  %s\n", esc(stop.Description))
		}
		return
	}
	d, _ := ins.s.Delivery()
	frames, _ := ins.s.Stack(stop.Thread)
	switch {
	case strings.HasPrefix(stop.Description, "before delivery") || len(frames) == 0:
		fmt.Fprintf(out, "stopped before delivery %s (target %s, message %s", esc(d.Coordinate), esc(d.Target), esc(d.Message))
		if d.Topic != "" {
			fmt.Fprintf(out, ", topic %s", esc(d.Topic))
		}
		fmt.Fprintln(out, ")")
	case stop.Reason == "exception":
		fmt.Fprintf(out, "stopped at a trap: %s\n  at %s in %s (delivery %s)\n", esc(strings.TrimPrefix(stop.Description, "trap: ")), ins.pos(frames[0]), esc(frames[0].Name), esc(d.Coordinate))
	default:
		fmt.Fprintf(out, "stopped at %s in %s (delivery %s, %s)\n", ins.pos(frames[0]), esc(frames[0].Name), esc(d.Coordinate), stop.Reason)
	}
}

// pos writes a frame's position relative to the working directory when
// it can.
func (ins *inspector) pos(f debug.Frame) string {
	file := f.File
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, file); err == nil && !strings.HasPrefix(rel, "..") {
			file = rel
		}
	}
	return fmt.Sprintf("%s:%d:%d", termsafe.String(file), f.Line, f.Col)
}

// prompt reads commands at a stop until one resumes (the next stop) or
// quits.
func (ins *inspector) prompt(stop debug.Stop) (debug.Stop, bool, error) {
	out := ins.e.stdout
	show := func(v any) { _ = writeJSON(out, v) }
	esc := termsafe.String
	s := ins.s
	for {
		line, err := ins.lines.ReadLine("(hale) ")
		if err != nil {
			// End of input (Ctrl-D) is quit.
			fmt.Fprintln(out)
			return stop, true, nil
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		arg := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), fields[0]))
		switch fields[0] {
		case "state":
			if arg == "" {
				d, _ := s.Delivery()
				arg = d.Target
			}
			st, err := s.State(arg)
			if err != nil {
				fmt.Fprintf(out, "error: %s\n", esc(err.Error()))
				continue
			}
			fmt.Fprintln(out, string(termsafe.JSON(st)))
		case "msg":
			d, _ := s.Delivery()
			show(d.PendingDelivery)
		case "where":
			ins.where(stop)
		case "step", "s":
			st, err := s.StepDelivery()
			return st, false, err
		case "next", "n":
			st, err := s.NextDelivery(stop.Thread)
			return st, false, err
		case "continue", "c":
			st, err := s.Continue()
			return st, false, err
		case "break", "b":
			ins.breakCmd(arg)
		case "back":
			st, err := s.Back()
			if err != nil {
				fmt.Fprintf(out, "error: %s\n", esc(err.Error()))
				continue
			}
			fmt.Fprintf(out, "replaying from the start to %s\n", esc(st.Coordinate))
			return st, false, nil
		case "quit", "q":
			if _, plain := ins.lines.(*plainLines); plain {
				fmt.Fprintln(out) // a terminal echoed the Enter; a script did not
			}
			return stop, true, nil
		case "help", "h", "?":
			fmt.Fprintln(out, inspectorCommands)
		default:
			fmt.Fprintf(out, "unknown command %q; %s\n", esc(fields[0]), inspectorCommands)
		}
	}
}

// where prints the stopped delivery and the Hale stack, innermost first.
func (ins *inspector) where(stop debug.Stop) {
	out := ins.e.stdout
	esc := termsafe.String
	d, _ := ins.s.Delivery()
	frames, _ := ins.s.Stack(stop.Thread)
	state := "in"
	if strings.HasPrefix(stop.Description, "before delivery") {
		state = "before"
	}
	fmt.Fprintf(out, "%s delivery %s (target %s, message %s", state, esc(d.Coordinate), esc(d.Target), esc(d.Message))
	if d.Topic != "" {
		fmt.Fprintf(out, ", topic %s", esc(d.Topic))
	}
	fmt.Fprintln(out, ")")
	for _, f := range frames {
		fmt.Fprintf(out, "  at %s in %s\n", ins.pos(f), esc(f.Name))
	}
}

// breakCmd sets a breakpoint: LINE (of the entry file), `Locus.on Topic`
// or a fn; alone, it lists them.
func (ins *inspector) breakCmd(arg string) {
	out := ins.e.stdout
	esc := termsafe.String
	if arg == "" {
		if len(ins.lineBPs)+len(ins.fnBPs) == 0 {
			fmt.Fprintln(out, "no breakpoints (break LINE|Locus.on Topic|fn sets one)")
		}
		for _, l := range ins.lineBPs {
			fmt.Fprintf(out, "breakpoint %d\n", l)
		}
		for _, f := range ins.fnBPs {
			fmt.Fprintf(out, "breakpoint %s\n", esc(f))
		}
		return
	}
	if line, err := strconv.Atoi(arg); err == nil {
		bps := ins.s.SetLineBreakpoints(ins.entry, append(append([]int(nil), ins.lineBPs...), line))
		if last := bps[len(bps)-1]; !last.Verified {
			ins.s.SetLineBreakpoints(ins.entry, ins.lineBPs)
			fmt.Fprintf(out, "error: break: %s\n", esc(last.Message))
			return
		}
		ins.lineBPs = append(ins.lineBPs, line)
		fmt.Fprintf(out, "breakpoint %d: stops at %s:%d\n", line, esc(filepath.Base(ins.entry)), line)
		return
	}
	bps := ins.s.SetFunctionBreakpoints(append(append([]string(nil), ins.fnBPs...), arg))
	if last := bps[len(bps)-1]; !last.Verified {
		ins.s.SetFunctionBreakpoints(ins.fnBPs)
		fmt.Fprintf(out, "error: break: no handler or fn named %s\n", esc(arg))
		return
	}
	ins.fnBPs = append(ins.fnBPs, arg)
	fmt.Fprintf(out, "breakpoint %s: stops at the entry of %s\n", esc(arg), esc(arg))
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
