package cli

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/explore"
	"github.com/hale-lang/hale/internal/termsafe"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

func init() { commands = append(commands, newTestCmd) }

// testFlags are the flags of `hale test`.
type testFlags struct {
	schedules       int
	strategy        string
	depth           int
	seed            uint64
	seedSet         bool
	timeBudget      time.Duration
	maxSteps        int
	maxHandlerSteps int64
	fixtures, out   string
	inputs          string // --inputs run.halerec
	asJSON, strict  bool
	engine          string
}

func newTestCmd(e env) *cobra.Command {
	var f testFlags
	cmd := &cobra.Command{
		Use:   "test app.hl [--schedules N] [--strategy random|pct|pos] [--seed S] [flags]",
		Short: "Search schedules of a program for failures and write each as a .replay bundle",
		Long: "Test runs the program under N schedules of the deterministic scheduler (one thread,\n" +
			"one handler run per step, virtual time, seeded randomness, inputs from --fixtures),\n" +
			"shrinks every distinct failure and writes it to --out as <signature>.replay.\n" +
			"Exit codes: 0 no failure, 1 a failure (or the program does not compile), 2 usage error.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.seedSet = cmd.Flags().Changed("seed")
			return runTest(e, f, args[0], false)
		},
	}
	testFlagSet(cmd, &f, e)
	cmd.Flags().StringVar(&f.inputs, "inputs", "", "serve inputs from a recording: the n-th call with a given primitive and arguments gets the n-th recorded result")
	return cmd
}

func init() { commands = append(commands, newExploreCmd) }

func newExploreCmd(e env) *cobra.Command {
	var f testFlags
	cmd := &cobra.Command{
		Use:   "explore run.halerec app.hl [the flags of hale test]",
		Short: "Search the schedules around a recorded run for failures",
		Long: "Explore starts the search from a real recording: schedule 0 follows the recorded order,\n" +
			"the others follow a prefix of it and then the strategy. Inputs are served from the\n" +
			"recording. Output, bundles and exit codes as for hale test.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.seedSet = cmd.Flags().Changed("seed")
			f.inputs = args[0]
			return runTest(e, f, args[1], true)
		},
	}
	testFlagSet(cmd, &f, e)
	return cmd
}

// testFlagSet adds the flags hale test and hale explore share.
func testFlagSet(cmd *cobra.Command, f *testFlags, e env) {
	fl := cmd.Flags()
	fl.IntVar(&f.schedules, "schedules", 100, "number of schedules to run")
	fl.StringVar(&f.strategy, "strategy", explore.StrategyPCT, "search strategy: random, pct or pos")
	fl.IntVar(&f.depth, "depth", explore.DefaultDepth, "pct's depth: the number of priority change points plus one")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of the search: schedule i uses seed+i (default: random, printed)")
	fl.DurationVar(&f.timeBudget, "time-budget", 0, "stop starting schedules after this long (default: no limit)")
	fl.IntVar(&f.maxSteps, "max-steps", explore.DefaultMaxSteps, "steps after which a run is a livelock")
	fl.Int64Var(&f.maxHandlerSteps, "max-handler-steps", explore.DefaultMaxHandlerSteps, "interpreter steps one handler run may take (checked every 262,144 steps)")
	fl.StringVar(&f.fixtures, "fixtures", "", "folder of inputs: env, args, stdin, fs/, http.json")
	fl.StringVar(&f.out, "out", "hale-failures", "folder the failures' .replay bundles are written to")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as one JSON object on stdout")
	fl.BoolVar(&f.strict, "strict", false, "a regression bundle whose steps had to be skipped fails too")
	fl.StringVar(&f.engine, "engine", defaultEngine(e), "interpreter engine: wasm or native; default $HALE_ENGINE, else wasm")
}

// testReport is the --json output of hale test.
type testReport struct {
	Schedules int           `json:"schedules"`
	Strategy  string        `json:"strategy"`
	Seed      uint64        `json:"seed"`
	Failures  []testFailure `json:"failures"`
	Seconds   float64       `json:"seconds"`
	// Regressions is present only when tests/replays/ holds bundles.
	Regressions []testRegression `json:"regressions,omitempty"`
}

type testRegression struct {
	Bundle  string `json:"bundle"`
	Failed  bool   `json:"failed"`
	Skipped int    `json:"skipped"`
	Reason  string `json:"reason,omitempty"`
}

type testFailure struct {
	Signature     string `json:"signature"`
	Kind          string `json:"kind"`
	Message       string `json:"message"`
	Position      string `json:"position"`
	FirstSchedule int    `json:"first_schedule"`
	Count         int    `json:"count"`
	Bundle        string `json:"bundle"`
}

func runTest(e env, f testFlags, path string, fromRecording bool) error {
	kind, err := host.ParseEngine(f.engine)
	if err != nil {
		return exitf(ExitUsage, "%v", err)
	}
	switch {
	case f.schedules <= 0:
		return exitf(ExitUsage, "--schedules must be positive, got %d", f.schedules)
	case f.depth <= 0:
		return exitf(ExitUsage, "--depth must be positive, got %d", f.depth)
	case f.maxSteps <= 0:
		return exitf(ExitUsage, "--max-steps must be positive, got %d", f.maxSteps)
	case f.maxHandlerSteps <= 0:
		return exitf(ExitUsage, "--max-handler-steps must be positive, got %d", f.maxHandlerSteps)
	case f.timeBudget < 0:
		return exitf(ExitUsage, "--time-budget must not be negative, got %s", f.timeBudget)
	case f.strategy != explore.StrategyRandom && f.strategy != explore.StrategyPCT && f.strategy != explore.StrategyPOS:
		return exitf(ExitUsage, "unknown strategy %q (want random, pct or pos)", f.strategy)
	}
	var fx *explore.Fixtures
	if f.fixtures != "" {
		if fx, err = explore.LoadFixtures(f.fixtures); err != nil {
			return exitf(ExitUsage, "%v", err)
		}
	}
	if !f.seedSet {
		var b [8]byte
		_, _ = crand.Read(b[:])
		f.seed = binary.LittleEndian.Uint64(b[:]) % 1_000_000_000 // short enough to type again
	}
	host.Prepare(kind)
	var c *hale.Compiled
	var recording *explore.Recording
	if f.inputs != "" {
		var art *artifact.Artifact
		if c, art, err = admit(e, replayFlags{}, f.inputs, path); err != nil {
			return err
		}
		if recording, err = explore.ReadRecording(art, c.Image); err != nil {
			return exitf(ExitUsage, "%s: %v", f.inputs, err)
		}
	} else if c, err = compile(e, path); err != nil {
		return err
	}
	ctx, stop := interruptContext()
	defer stop()
	s, err := explore.NewScheduler(ctx, c.Image, explore.Config{Engine: kind, MaxSteps: f.maxSteps, MaxHandlerSteps: f.maxHandlerSteps, Fixtures: fx, Recording: recording})
	if err != nil {
		return exitf(ExitFailure, "%v", err)
	}
	defer s.Close()
	regressions, err := loadRegressions(path)
	if err != nil {
		return err
	}
	opts := explore.SearchOptions{Strategy: f.strategy, Depth: f.depth, Schedules: f.schedules, Seed: f.seed, TimeBudget: f.timeBudget, FromRecording: fromRecording}
	bar := !f.asJSON && isTerminal(e.stderr)
	if bar {
		opts.Progress = func(done, total int) { progress(e, done, total) }
	}
	rep, err := explore.Search(ctx, s, opts)
	if bar {
		fmt.Fprint(e.stderr, "\r\033[K")
	}
	switch {
	case errors.Is(err, context.Canceled):
		return exitf(ExitInterrupted, "interrupted")
	case err != nil:
		return exitf(ExitFailure, "%v", err)
	}
	if fromRecording && rep.RecordedSkipped > 0 {
		fmt.Fprintf(e.stderr, "hale: note: schedule 0 could not follow %d of the recording's %d steps\n", rep.RecordedSkipped, recording.Steps())
	}
	out := testReport{Schedules: rep.Schedules, Strategy: rep.Strategy, Seed: rep.Seed, Failures: []testFailure{}, Seconds: rep.Elapsed.Seconds()}
	for _, found := range rep.Failures {
		file, err := writeBundle(s, c, f, found)
		if err != nil {
			return exitf(ExitFailure, "%v", err)
		}
		ff := found.Failure
		out.Failures = append(out.Failures, testFailure{Signature: ff.Signature(), Kind: ff.Kind, Message: ff.Message, Position: ff.Position,
			FirstSchedule: found.FirstSchedule, Count: found.Count, Bundle: file})
	}
	failed := len(out.Failures) > 0
	for _, kept := range regressions {
		r, err := s.RunRegression(ctx, kept.bundle, f.strict)
		switch {
		case errors.Is(err, context.Canceled):
			return exitf(ExitInterrupted, "interrupted")
		case err != nil:
			return exitf(ExitFailure, "%s: %v", kept.path, err)
		}
		out.Regressions = append(out.Regressions, testRegression{Bundle: kept.path, Failed: r.Failed, Skipped: r.Skipped, Reason: r.Reason})
		failed = failed || r.Failed
	}
	if f.asJSON {
		if err := writeJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		name := "hale test"
		if fromRecording {
			name = "hale explore"
		}
		printTestSummary(e, name, rep, out)
	}
	if failed {
		return silentExit(ExitFailure)
	}
	return nil
}

type keptBundle struct {
	path   string
	bundle *explore.Bundle
}

// loadRegressions reads every bundle in tests/replays/ next to the
// program; a bundle that is refused is a usage error.
func loadRegressions(program string) ([]keptBundle, error) {
	paths, _ := filepath.Glob(filepath.Join(filepath.Dir(program), "tests", "replays", "*.replay"))
	var out []keptBundle
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, exitf(ExitUsage, "refused: %s: %v", p, err)
		}
		b, err := explore.DecodeBundle(data)
		if err != nil {
			return nil, exitf(ExitUsage, "%s: %v", p, err)
		}
		out = append(out, keptBundle{p, b})
	}
	return out, nil
}

func writeBundle(s *explore.Scheduler, c *hale.Compiled, f testFlags, found *explore.Found) (string, error) {
	b, err := s.NewBundle(c, f.strategy, found.Shrunk)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return "", fmt.Errorf("--out: %v", err)
	}
	file := filepath.Join(f.out, explore.BundleName(found.Failure.Signature()))
	w, err := os.Create(file)
	if err != nil {
		return "", fmt.Errorf("--out: %v", err)
	}
	err = b.Encode(w)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("writing %s: %v", file, err)
	}
	return file, nil
}

// progress draws the progress bar on a terminal's stderr.
func progress(e env, done, total int) {
	const width = 30
	n := done * width / total
	fmt.Fprintf(e.stderr, "\r[%s%s] %d/%d schedules", strings.Repeat("#", n), strings.Repeat(".", width-n), done, total)
}

func printTestSummary(e env, name string, rep *explore.Report, out testReport) {
	w := e.stdout
	fmt.Fprintf(w, "%s: %d schedules (%s, seed %d) in %.2fs\n", name, out.Schedules, out.Strategy, out.Seed, out.Seconds)
	if len(out.Regressions) > 0 {
		failing := 0
		for _, r := range out.Regressions {
			if r.Failed {
				failing++
			}
		}
		fmt.Fprintf(w, "regressions: %d bundles, %d failing\n", len(out.Regressions), failing)
		for _, r := range out.Regressions {
			if r.Failed {
				fmt.Fprintf(w, "  %s: %s\n", r.Bundle, termsafe.String(r.Reason))
			}
		}
	}
	if len(rep.Failures) == 0 {
		fmt.Fprintln(w, "no failure")
		return
	}
	if len(rep.Failures) == 1 {
		fmt.Fprintln(w, "1 distinct failure:")
	} else {
		fmt.Fprintf(w, "%d distinct failures:\n", len(rep.Failures))
	}
	for i, found := range rep.Failures {
		ff := found.Failure
		at := ""
		if ff.Position != "" {
			at = " at " + ff.Position
		}
		fmt.Fprintf(w, "  %s: %s%s\n", ff.Kind, termsafe.String(ff.Message), at)
		fmt.Fprintf(w, "    found by schedule %d (seed %d), failed in %d of %d schedules; shrunk from %d to %d steps\n",
			found.FirstSchedule, out.Seed+uint64(found.FirstSchedule), found.Count, out.Schedules, len(found.First.Steps), len(found.Shrunk.Steps))
		fmt.Fprintf(w, "    bundle: %s (hale replay %s --verify)\n", out.Failures[i].Bundle, out.Failures[i].Bundle)
	}
}
