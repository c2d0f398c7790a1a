package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/sir"
	"github.com/hale-lang/hale/vm/host"
)

func init() { commands = append(commands, newReplayCmd) }

// replayFlags are the flags of `hale replay`.
type replayFlags struct {
	diff, asJSON, unverified, allowLive, quiet bool
	at, output, engine                         string
	holdTimeout                                time.Duration
	env                                        []string
}

func newReplayCmd(e env) *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay run.halerec app.hl [--diff] [--at COORD] [--json] [flags]",
		Short: "Re-run a recorded execution and report the first divergence",
		Long: "Replay gives a recording's decisions (inputs, results, per-consumer delivery order)\n" +
			"back to the program and reports whether the two runs are identical. Exit codes:\n" +
			"0 identical, 1 diverged, 2 refused (damaged or foreign artifact, changed program)\n" +
			"or usage error.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(e, f, args[0], args[1])
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.diff, "diff", false, "record the replay and compare both artifacts entry by entry, per consumer")
	fl.StringVar(&f.at, "at", "", "stop just before delivery COORD (C:N, or a bare index N in file order) and show it")
	fl.BoolVar(&f.asJSON, "json", false, "print the report (or the --at view) as one JSON object on stdout")
	fl.BoolVar(&f.unverified, "unverified", false, "admit a recording whose build digest or shape hash differs, as an experiment")
	fl.BoolVar(&f.allowLive, "allow-live-effects", false, "perform fs.write and net calls for real (still compared)")
	fl.DurationVar(&f.holdTimeout, "hold-timeout", replay.DefaultHoldTimeout, "how long a consumer holds early deliveries waiting for the recorded one")
	fl.StringArrayVar(&f.env, "env", nil, "supply a withheld environment value as NAME=VALUE (repeatable)")
	fl.BoolVar(&f.quiet, "quiet", false, "do not print the program's output again (it is still compared)")
	fl.StringVarP(&f.output, "output", "o", "", "write the replay's own recording to this file")
	fl.StringVar(&f.engine, "engine", defaultEngine(e), "interpreter engine: wasm or native; default $HALE_ENGINE, else wasm")
	return cmd
}

func runReplay(e env, f replayFlags, artifactPath, programPath string) error {
	kind, err := host.ParseEngine(f.engine)
	if err != nil {
		return exitf(ExitUsage, "%v", err)
	}
	host.Prepare(kind)
	envValues := map[string]string{}
	for _, kv := range f.env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return exitf(ExitUsage, "--env %q: want NAME=VALUE", kv)
		}
		envValues[name] = value
	}
	if f.holdTimeout <= 0 {
		return exitf(ExitUsage, "--hold-timeout must be positive, got %s", f.holdTimeout)
	}
	refuse := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if f.asJSON {
			_ = artifact.RefusedReport(errors.New(msg)).WriteJSON(e.stdout)
		}
		return exitf(ExitUsage, "refused: %s", msg)
	}

	// The identity check needs the toolchain's digest (about 10 ms of
	// hashing), and admission reads the whole artifact (about 20 ms for
	// 400,000 entries): both run while the program compiles. Refusals
	// keep their order: an unreadable file, then the program, then the
	// artifact's own checks.
	go hale.ToolchainDigest()
	data, err := os.ReadFile(artifactPath)
	if err != nil {
		return refuse("cannot read artifact: %v", err)
	}
	type indexed struct {
		art *artifact.Artifact
		err error
	}
	index := make(chan indexed, 1)
	go func() {
		art, err := artifact.Index(data)
		index <- indexed{art, err}
	}()
	c, err := compile(e, programPath)
	if err != nil {
		return refuse("%s does not compile (see the errors above)", programPath)
	}
	if names := asyncIOInstances(c.sir); len(names) > 0 {
		return refuse("the program has async_io instances (%s), whose delivery order is not recorded", strings.Join(names, ", "))
	}
	want := artifact.Identity{BuildDigest: c.buildDigest(), ShapeHash: c.shapeHash()}
	ix := <-index
	art, adm, err := artifact.AdmitIndexed(ix.art, ix.err, want, f.unverified)
	if err != nil {
		if f.asJSON {
			_ = artifact.RefusedReport(err).WriteJSON(e.stdout)
		}
		msg := err.Error()
		var re *artifact.RefusalError
		if errors.As(err, &re) && re.Kind == artifact.RefusedIdentity && !strings.Contains(msg, "--unverified") {
			msg += "; replay it anyway with --unverified"
		}
		return exitf(ExitUsage, "%s: %s", artifactPath, msg)
	}
	if adm != nil && adm.Warning != "" {
		fmt.Fprintln(e.stderr, adm.Warning)
	}

	opts := replay.Options{
		HoldTimeout:      f.holdTimeout,
		Env:              envValues,
		Quiet:            f.quiet || f.asJSON,
		AllowLiveEffects: f.allowLive,
	}
	if f.at != "" {
		target, err := artifact.ParseCoordinate(f.at)
		if err != nil {
			return exitf(ExitUsage, "--at: %v", err)
		}
		ref, err := art.Resolve(target)
		if err != nil {
			return exitf(ExitUsage, "--at: %v", err)
		}
		at := ref.At
		opts.At = &at
		if !f.asJSON && isTerminal(e.stdout) && isTerminal(e.stdin) {
			opts.Inspect = newInspector(e)
		}
	}

	img, err := c.image()
	if err != nil {
		return err
	}
	stdout := e.stdout
	switch {
	case f.asJSON:
		stdout = io.Discard
	case opts.At != nil && opts.Inspect == nil:
		// stdout is for the one JSON object of the --at view: what the
		// program prints again goes to stderr.
		stdout = e.stderr
	}
	// With --diff (or -o) the replay records itself, with the recording's
	// env policy whatever the environment says, and the two artifacts are
	// compared entry by entry. Without, the replayer's own account decides
	// (misses, timeouts, unconsumed inputs, unexpected deliveries, changed
	// output or trap), which costs no second recording; only when it finds
	// a divergence is the replay run again, silently and recorded, so that
	// the report can show both sides of the first one. With live effects
	// the one pass is recorded, since a second would perform them again.
	record := f.diff || f.output != "" || f.allowLive
	first, err := replayPass(e, c, img, art, kind, opts, record, f.output, stdout, e.stderr)
	if err != nil {
		return err
	}
	defer first.cleanup()
	r, res, replayPath := first.r, first.res, first.path
	var seen *replay.Finding // what the pass the user saw found first
	if !record && opts.At == nil && opts.Inspect == nil {
		if stats := r.Stats(); !stats.Clean() {
			seen = &stats.Findings[0]
			quiet := opts
			quiet.Quiet = true
			again, err := replayPass(e, c, img, art, kind, quiet, true, "", io.Discard, io.Discard)
			if err != nil {
				return err
			}
			defer again.cleanup()
			r, replayPath = again.r, again.path
		}
	}

	if opts.At != nil && opts.Inspect == nil {
		if view := r.At(); view != nil {
			return writeJSON(e.stdout, view)
		}
	}
	if opts.Inspect != nil && res.Verdict == host.VerdictHalted {
		return nil // `quit` in the inspector
	}

	stats := r.Stats()
	var rep *artifact.Report
	if replayPath != "" {
		again, err := os.ReadFile(replayPath)
		if err != nil {
			return exitf(ExitFailure, "cannot read the replay's recording: %v", err)
		}
		replayed, err := artifact.Index(again)
		if err != nil {
			return exitf(ExitFailure, "the replay's recording is damaged: %v", err)
		}
		rep = artifact.Differ{Decode: chainDecoders(replay.ProgramDecoder(c.sir), artifactDecoder(art))}.Diff(art, replayed)
	} else {
		rep = &artifact.Report{Verdict: artifact.ReportIdentical, Consumers: stats.Consumers,
			Deliveries: stats.Deliveries, JournalCalls: stats.JournalCalls,
			JournalMisses: stats.JournalMisses, Unconsumed: stats.Unconsumed, Unexpected: stats.Unexpected}
	}
	stats.Apply(rep)
	if seen != nil {
		// Consumers that diverge at the same moment can do so in another
		// order in the second pass; report first what the first pass,
		// whose output and trap the user saw, found first.
		rep.Prefer(seen.Kind, seen.At)
	}
	for _, d := range rep.Divergences {
		if d.Position == "" && d.Handler != nil {
			d.Position = handlerPosition(c.sir, d.Handler)
		}
		if d.Position == "" && !d.End && !d.Startup {
			d.Position = recordedHandlerPosition(c.sir, art, d.At)
		}
	}
	if f.asJSON {
		return finishReport(rep, rep.WriteJSON(e.stdout))
	}
	if err := rep.WriteText(e.stderr); err != nil {
		return err
	}
	if f.diff && len(rep.Divergences) > 1 {
		fmt.Fprintf(e.stderr, "further divergences (each other consumer's first, then the ending):\n")
		for _, d := range rep.Divergences[1:] {
			fmt.Fprintf(e.stderr, "%s\n", d.Sentence)
			if d.Position != "" {
				fmt.Fprintf(e.stderr, "  at %s\n", d.Position)
			}
		}
	}
	return finishReport(rep, nil)
}

// finishReport maps a report to the exit code: 0 identical, 1 diverged.
func finishReport(rep *artifact.Report, err error) error {
	if err != nil {
		return err
	}
	if rep.Diverged() {
		return silentExit(ExitFailure)
	}
	return nil
}

// chainDecoders decodes with the first decoder that can: the program's
// own types first, then the recording's (a changed program may no longer
// call a primitive the recording shows).
func chainDecoders(ds ...artifact.ValueDecoder) artifact.ValueDecoder {
	return func(field, hint string, data []byte) (any, bool) {
		for _, d := range ds {
			if d == nil {
				continue
			}
			if v, ok := d(field, hint, data); ok {
				return v, true
			}
		}
		return nil, false
	}
}

// pass is one run of a replay.
type pass struct {
	r       *replay.Replayer
	res     host.Result
	path    string // the replay's own recording; "" when not recorded
	cleanup func()
}

// replayPass runs the program once under a Replayer for art; with record
// it records the replay to output (or to a temporary file).
func replayPass(e env, c *compiled, img *image.Image, art *artifact.Artifact, kind host.EngineKind,
	opts replay.Options, record bool, output string, stdout, stderr io.Writer) (*pass, error) {
	p := &pass{path: output, cleanup: func() {}}
	if record {
		if p.path == "" {
			tmp, err := os.MkdirTemp("", "hale-replay-")
			if err != nil {
				return nil, exitf(ExitFailure, "cannot create a temporary folder: %v", err)
			}
			p.cleanup = func() { os.RemoveAll(tmp) }
			p.path = filepath.Join(tmp, "replayed.halerec")
		}
		header, err := replay.ReplayHeader(art, c.sir, replay.HeaderInfo{
			HaleVersion: hale.Version,
			BuildDigest: c.buildDigest(),
			ShapeHash:   c.shapeHash(),
		})
		if err != nil {
			p.cleanup()
			return nil, exitf(ExitFailure, "cannot record the replay: %v", err)
		}
		rec, err := artifact.Create(p.path, header, artifact.Options{})
		if err != nil {
			p.cleanup()
			if output != "" {
				// A place the replay cannot be written to is a bad
				// argument, not a divergence.
				return nil, exitf(ExitUsage, "-o %s: cannot record the replay: %v", output, err)
			}
			return nil, exitf(ExitFailure, "cannot record the replay: %v", err)
		}
		opts.Record = rec
	}
	p.r = replay.NewReplayer(art, c.sir, opts)
	hopts := host.Options{Engine: kind, Stdout: stdout, Stderr: stderr}
	p.r.Install(&hopts)
	ctx, stop := interruptContext()
	defer stop()
	res, runErr := host.Run(ctx, c.sir, img, hopts)
	p.res = res
	if rj := p.r.Recording(); rj != nil {
		if err := rj.Close(); err != nil && runErr == nil {
			p.cleanup()
			return nil, exitf(ExitFailure, "cannot record the replay: %v", err)
		}
	}
	if errors.Is(runErr, context.Canceled) {
		p.cleanup()
		return nil, exitf(ExitInterrupted, "interrupted")
	}
	if runErr != nil {
		p.cleanup()
		return nil, exitf(ExitFailure, "replay failed: %v", runErr)
	}
	return p, nil
}

// recordedHandlerPosition is the source position of the handler that ran
// recorded delivery at; "" when the recording has no such delivery.
func recordedHandlerPosition(p *sir.Program, art *artifact.Artifact, at artifact.Coordinate) string {
	ref, err := art.Resolve(artifact.Target{Consumer: at.Consumer, N: at.N})
	if err != nil {
		return ""
	}
	d, ok := art.Entry(ref.Entry).Body.(artifact.Delivery)
	if !ok {
		return ""
	}
	return handlerPosition(p, &d)
}

// asyncIOInstances names the program's async_io instances, which replay
// refuses: their delivery order is not recorded.
func asyncIOInstances(p *sir.Program) []string {
	var names []string
	for _, inst := range p.Instances {
		if inst.Placement.Kind.String() == "async_io" {
			names = append(names, inst.Name)
		}
	}
	return names
}

// handlerPosition names the source position of the handler a delivery
// runs, as "app.hl:31:9 in Ledger.on OrderPlaced"; "" when the program has
// no such instance or handler.
func handlerPosition(p *sir.Program, d *artifact.Delivery) string {
	for _, inst := range p.Instances {
		if inst.Name != d.Target {
			continue
		}
		locus := p.Loci[inst.Locus]
		fn := -1
		if d.Start {
			fn = locus.Start
		} else {
			for t, topic := range p.Topics {
				if topic.Name == d.Topic {
					fn = locus.HandlerFor(t)
				}
			}
		}
		if fn < 0 {
			return ""
		}
		return p.Funcs[fn].Pos.String() + " in " + p.Funcs[fn].Name
	}
	return ""
}

// isTerminal reports whether a stream is an interactive terminal (not a
// pipe, a file or /dev/null).
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	return ok && isTerminalFd(f.Fd())
}

// newInspector returns the interactive inspector of `hale replay --at` on
// a terminal: it shows the stop, then reads commands until one resumes.
func newInspector(e env) func(*replay.Inspection) replay.InspectAction {
	in := bufio.NewScanner(e.stdin)
	return func(ins *replay.Inspection) replay.InspectAction {
		show := func(v any) { _ = writeJSON(e.stdout, v) }
		fmt.Fprintf(e.stdout, "stopped before delivery %s (target %s, message %s", ins.View.Coordinate, ins.View.Pending.Target, ins.View.Pending.Message)
		if ins.View.Pending.Topic != "" {
			fmt.Fprintf(e.stdout, ", topic %s", ins.View.Pending.Topic)
		}
		fmt.Fprintln(e.stdout, ")")
		for {
			fmt.Fprint(e.stdout, "(hale) ")
			if !in.Scan() {
				return replay.InspectHalt
			}
			fields := strings.Fields(in.Text())
			if len(fields) == 0 {
				continue
			}
			switch fields[0] {
			case "state":
				name := ""
				if len(fields) > 1 {
					name = fields[1]
				}
				st, err := ins.State(name)
				if err != nil {
					fmt.Fprintf(e.stdout, "error: %v (instances here: %s)\n", err, strings.Join(ins.Instances(), ", "))
					continue
				}
				fmt.Fprintln(e.stdout, string(st))
			case "msg":
				show(ins.View.Pending)
			case "where":
				show(ins.View)
			case "step":
				return replay.InspectStep
			case "next":
				return replay.InspectNext
			case "continue", "c":
				return replay.InspectContinue
			case "quit", "q":
				return replay.InspectHalt
			default:
				fmt.Fprintln(e.stdout, "commands: state [instance], msg, where, step, next, continue, quit")
			}
		}
	}
}
