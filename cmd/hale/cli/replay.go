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
	"github.com/hale-lang/hale/internal/termsafe"
	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/replay/timeline"
	"github.com/hale-lang/hale/vm/host"
)

func init() { commands = append(commands, newReplayCmd) }

// replayFlags are the flags of `hale replay`.
type replayFlags struct {
	diff, asJSON, unverified, allowLive, quiet bool
	verify, inspect                            bool
	at, output, engine, view                   string
	holdTimeout                                time.Duration
	env                                        []string
}

func newReplayCmd(e env) *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay run.halerec app.hl [--diff] [--at COORD] [--json] [flags]\n  hale replay x.replay [app.hl] [--verify] [--json]",
		Short: "Re-run a recorded execution and report the first divergence",
		Long: "Replay gives a recording's decisions (inputs, results, per-consumer delivery order)\n" +
			"back to the program and reports whether the two runs are identical. Exit codes:\n" +
			"0 identical, 1 diverged, 2 refused (damaged or foreign artifact, changed program)\n" +
			"or usage error.\n" +
			"Given a .replay bundle (written by hale test), it re-executes the bundle's embedded sources\n" +
			"(or app.hl) under the bundle's schedule and inputs: exit 0 when the failure reproduces\n" +
			"exactly, 1 with the drift named when it does not, 2 when the bundle is refused.",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.HasSuffix(args[0], ".replay") {
				return runBundle(e, f, args)
			}
			if len(args) != 2 {
				return exitf(ExitUsage, "accepts 2 arg(s), received %d: a recording and a program (hale replay run.halerec app.hl), or a .replay bundle\nRun 'hale replay --help' for usage.", len(args))
			}
			if f.verify {
				return exitf(ExitUsage, "--verify is for a .replay bundle")
			}
			return runReplay(e, f, args[0], args[1])
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.verify, "verify", false, "with a .replay bundle: check that its failure reproduces exactly, printing only the verdict")
	fl.BoolVar(&f.diff, "diff", false, "record the replay and compare both artifacts entry by entry, per consumer")
	fl.StringVar(&f.at, "at", "", "stop just before delivery COORD (C:N, or a bare index N in file order) and show it")
	fl.BoolVar(&f.inspect, "inspect", false, "with --at: open the inspector even without a terminal, reading commands as plain lines from stdin")
	fl.BoolVar(&f.asJSON, "json", false, "print the report (or the --at view) as one JSON object on stdout")
	fl.BoolVar(&f.unverified, "unverified", false, "admit a recording whose build digest or shape hash differs, as an experiment")
	fl.BoolVar(&f.allowLive, "allow-live-effects", false, "perform fs.write and net calls for real (still compared)")
	fl.DurationVar(&f.holdTimeout, "hold-timeout", replay.DefaultHoldTimeout, "how long a consumer holds early deliveries waiting for the recorded one")
	fl.StringArrayVar(&f.env, "env", nil, "supply a withheld environment value as NAME=VALUE (repeatable)")
	fl.BoolVar(&f.quiet, "quiet", false, "do not print the program's output again (it is still compared)")
	fl.StringVarP(&f.output, "output", "o", "", "write the replay's own recording to this file")
	fl.StringVar(&f.view, "view", "", "with --diff: draw both runs' timelines, the first divergence marked, as one HTML page")
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
	if f.view != "" && !f.diff {
		return exitf(ExitUsage, "--view draws the --diff of the two runs: add --diff")
	}
	if f.view != "" && f.at != "" {
		return exitf(ExitUsage, "--view and --at do not go together: --at stops the replay before it ends")
	}
	if f.holdTimeout <= 0 {
		return exitf(ExitUsage, "--hold-timeout must be positive, got %s", f.holdTimeout)
	}
	if f.inspect && (f.at == "" || f.asJSON || f.diff) {
		return exitf(ExitUsage, "--inspect goes with --at, without --json or --diff")
	}
	// The start-up's memory (the recording, its index, the replayer's
	// tables) stays live: no collection while it is allocated, until
	// the program is about to run (SessionOptions.Started).
	startup := func() {}
	if fi, err := os.Stat(artifactPath); err == nil && fi.Mode().IsRegular() {
		startup = replay.HoldGC(fi.Size())
		defer startup()
	}
	c, art, err := admit(e, f, artifactPath, programPath)
	if err != nil {
		return err
	}
	if f.at != "" && !f.asJSON && !f.diff && (f.inspect || isTerminal(e.stdout) && isTerminal(e.stdin)) {
		startup()
		at, err := resolveAt(art, f.at)
		if err != nil {
			return err
		}
		return runInspector(e, f, kind, artifactPath, programPath, at)
	}
	opts := replay.SessionOptions{
		Options: replay.Options{
			HoldTimeout:      f.holdTimeout,
			Env:              envValues,
			Quiet:            f.quiet || f.asJSON,
			AllowLiveEffects: f.allowLive,
		},
		Info:   identity(c),
		Engine: kind,
		Stdout: e.stdout,
		Stderr: e.stderr,
		Record: f.diff,
		Output: f.output,
		// The hold ends when the tables are built and the engine has
		// loaded (whose start-up, on wasm, may still be going on).
		Started: func() { go func() { host.WaitPrepared(kind); startup() }() },
	}
	if f.allowLive && host.HasNATS(c.Image) {
		bus, err := natsBus(e)
		if err != nil {
			return err
		}
		opts.LiveBus = bus
	}
	if f.view != "" && f.output == "" {
		// The page needs the replay's own recording, which the session
		// otherwise keeps to itself.
		tmp, err := os.MkdirTemp("", "hale-view-")
		if err != nil {
			return exitf(ExitFailure, "--view: %v", err)
		}
		defer os.RemoveAll(tmp)
		opts.Output = filepath.Join(tmp, "replayed.halerec")
	}
	if err := stopAt(e, f, art, &opts); err != nil {
		return err
	}
	ctx, stop := interruptContext()
	defer stop()
	s, err := replay.Run(ctx, art, c.Image, opts)
	switch {
	case errors.Is(err, context.Canceled):
		return exitf(ExitInterrupted, "interrupted")
	case errors.Is(err, replay.ErrOutput):
		return exitf(ExitUsage, "-o %s: %v", f.output, err)
	case err != nil:
		return exitf(ExitFailure, "%v", err)
	case s.View != nil:
		return writeJSON(e.stdout, s.View)
	}
	if f.view != "" {
		if err := writeDiffView(f.view, artifactPath, art, opts.Output, s.Report); err != nil {
			return err
		}
	}
	return printReport(e, f, s.Report)
}

// admit compiles the program and admits the artifact for it: refusals
// are exit 2 (and a refused report with --json).
func admit(e env, f replayFlags, artifactPath, programPath string) (*hale.Compiled, *artifact.Artifact, error) {
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
	data, err := artifact.ReadFile(artifactPath)
	if err != nil {
		return nil, nil, refuse("cannot read artifact: %v", err)
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
		return nil, nil, refuse("%s does not compile (see the errors above)", programPath)
	}
	if f.output != "" {
		ins := append([]input{{what: "the recording being replayed", path: artifactPath}}, sourceInputs(programPath, c)...)
		if err := refuseOverwrite("-o", f.output, ins); err != nil {
			return nil, nil, err
		}
	}
	if f.view != "" {
		ins := append([]input{{what: "the recording being replayed", path: artifactPath}}, sourceInputs(programPath, c)...)
		if err := refuseOverwrite("--view", f.view, ins); err != nil {
			return nil, nil, err
		}
	}
	if err := replay.Replayable(c.Image); err != nil {
		return nil, nil, refuse("%v", err)
	}
	want := artifact.Identity{BuildDigest: c.BuildDigest(), ShapeHash: c.ShapeHash}
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
		return nil, nil, exitf(ExitUsage, "%s: %s", artifactPath, msg)
	}
	if adm != nil && adm.Warning != "" {
		fmt.Fprintln(e.stderr, termsafe.Lines(adm.Warning))
	}
	return c, art, nil
}

// resolveAt is the recorded delivery that --at names (a usage error when
// it names none).
func resolveAt(art *artifact.Artifact, at string) (artifact.Coordinate, error) {
	target, err := artifact.ParseCoordinate(at)
	if err != nil {
		return artifact.Coordinate{}, exitf(ExitUsage, "--at: %v", err)
	}
	ref, err := art.Resolve(target)
	if err != nil {
		return artifact.Coordinate{}, exitf(ExitUsage, "--at: %v", err)
	}
	return ref.At, nil
}

// stopAt resolves --at into opts, with the interactive inspector on a
// terminal, and routes what the program prints again: with --json
// nowhere, and with the --at view (one JSON object on stdout) to stderr.
func stopAt(e env, f replayFlags, art *artifact.Artifact, opts *replay.SessionOptions) error {
	if f.at != "" {
		at, err := resolveAt(art, f.at)
		if err != nil {
			return err
		}
		opts.At = &at
	}
	switch {
	case f.asJSON:
		opts.Stdout = io.Discard
	case opts.At != nil:
		opts.Stdout = e.stderr
	}
	return nil
}

// printReport prints a session's report (as JSON with --json) and maps
// it to the exit code: 0 identical, 1 diverged.
func printReport(e env, f replayFlags, rep *artifact.Report) error {
	if f.asJSON {
		return finishReport(rep, rep.WriteJSON(e.stdout))
	}
	if err := rep.WriteText(e.stderr); err != nil {
		return err
	}
	if f.diff && len(rep.Divergences) > 1 {
		fmt.Fprintf(e.stderr, "further divergences (each other consumer's first, then the ending):\n")
		for _, d := range rep.Divergences[1:] {
			fmt.Fprintf(e.stderr, "%s\n", termsafe.String(d.Sentence))
			if d.Position != "" {
				fmt.Fprintf(e.stderr, "  at %s\n", termsafe.String(d.Position))
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

// isTerminal reports whether a stream is an interactive terminal (not a
// pipe, a file or /dev/null).
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	return ok && isTerminalFd(f.Fd())
}

// writeDiffView writes `--view`: the recording's and the replay's
// timelines on one page, the first divergence marked in both.
func writeDiffView(out, artifactPath string, recorded *artifact.Artifact, replayPath string, rep *artifact.Report) error {
	data, err := artifact.ReadFile(replayPath)
	if err != nil {
		return exitf(ExitFailure, "--view: cannot read the replay's recording: %v", err)
	}
	replayed, problem := artifact.Salvage(data)
	if replayed == nil {
		return exitf(ExitFailure, "--view: the replay's recording: %v", problem)
	}
	d := timeline.Divergence{RecordedEntry: -1, ReplayedEntry: -1}
	if len(rep.Divergences) > 0 {
		first := rep.Divergences[0]
		d = timeline.Divergence{RecordedEntry: first.RecordedEntry, ReplayedEntry: first.ReplayedEntry, Sentence: first.Sentence}
		if !first.End {
			d.At = first.At.String()
		}
	}
	return writeFileWith(out, func(w *bufio.Writer) error {
		return timeline.WriteDiffHTML(w, artifactPath, timeline.Build(recorded, artifactDecoder(recorded)),
			timeline.Build(replayed, artifactDecoder(replayed)), d)
	})
}
