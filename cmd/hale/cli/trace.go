package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/hale-lang/hale/explore"
	"github.com/hale-lang/hale/internal/termsafe"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

func init() { commands = append(commands, newTraceCmd) }

func newTraceCmd(e env) *cobra.Command {
	trace := &cobra.Command{
		Use:   "trace",
		Short: "Inspect a recorded artifact (summary, dump, verify, view, link)",
		Long: "Trace looks inside a recording (.halerec) without running anything: summary\n" +
			"counts what it holds, dump prints every entry as JSON, verify checks it, view\n" +
			"draws its timeline (HTML or Perfetto JSON).",
		// Without this, cobra answers `hale trace bogus` with the help
		// text and exit 0.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for \"hale trace\" (summary, dump, verify, view, link)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	var asJSON bool
	summary := &cobra.Command{
		Use:   "summary [--json] run.halerec",
		Short: "Summarise an artifact: versions, hashes, consumers, counts per kind",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, problem, err := salvageArtifact(args[0])
			if err != nil {
				return err
			}
			s := artifact.Summarize(a, problem)
			if asJSON {
				return writeJSON(e.stdout, s)
			}
			return s.WriteText(e.stdout)
		},
	}
	summary.Flags().BoolVar(&asJSON, "json", false, "print the summary as one JSON object")

	dump := &cobra.Command{
		Use:   "dump run.halerec",
		Short: "Print every entry as one JSON object per line, in file order",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, problem, err := salvageArtifact(args[0])
			if err != nil {
				return err
			}
			if err := artifact.Dump(e.stdout, a, artifactDecoder(a)); err != nil {
				return err
			}
			if problem != nil {
				fmt.Fprintf(e.stderr, "hale: %s: %s (the entries above are those before the damage)\n", termsafe.String(args[0]), termsafe.String(problem.Error()))
			}
			return nil
		},
	}

	verify := &cobra.Command{
		Use:   "verify run.halerec",
		Short: "Check an artifact's self-consistency; exit 0 when consistent, 1 otherwise",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return exitf(ExitFailure, "cannot read artifact: %v", err)
			}
			if err := artifact.Verify(data); err != nil {
				return exitf(ExitFailure, "%s: inconsistent: %v", args[0], err)
			}
			a, _ := artifact.Decode(data)
			fmt.Fprintf(e.stdout, "%s: consistent: %s, %s\n", termsafe.String(args[0]),
				count(a.Len(), "entry", "entries"), count(len(a.Header.Consumers), "consumer", "consumers"))
			return nil
		},
	}
	var bundleOut, bundleEngine string
	bundle := &cobra.Command{
		Use:   "bundle run.halerec app.hl -o x.replay",
		Short: "Turn a recording that ended in a failure into a .replay bundle, and verify it",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return traceBundle(e, args[0], args[1], bundleOut, bundleEngine)
		},
	}
	bundle.Flags().StringVarP(&bundleOut, "output", "o", "", "the bundle file to write (required)")
	bundle.Flags().StringVar(&bundleEngine, "engine", defaultEngine(e), "interpreter engine of the check: wasm or native; default $HALE_ENGINE, else wasm")
	trace.AddCommand(summary, dump, verify, newTraceViewCmd(e), bundle, newTraceLinkCmd(e))
	return trace
}

// traceBundle writes the bundle of a recorded failure, then verifies it:
// exit 0 when it reproduces, 1 (the bundle still written) when it does
// not, 2 when the recording is refused.
func traceBundle(e env, artifactPath, programPath, out, engine string) error {
	if out == "" {
		return exitf(ExitUsage, "trace bundle: -o x.replay is required")
	}
	kind, err := host.ParseEngine(engine)
	if err != nil {
		return exitf(ExitUsage, "%v", err)
	}
	c, art, err := admit(e, replayFlags{}, artifactPath, programPath)
	if err != nil {
		return err
	}
	ins := append([]input{{what: "the recording", path: artifactPath}}, sourceInputs(programPath, c)...)
	if err := refuseOverwrite("-o", out, ins); err != nil {
		return err
	}
	b, err := explore.FromRecording(art, c)
	if err != nil {
		return exitf(ExitFailure, "%s: %v", artifactPath, err)
	}
	f, err := os.Create(out)
	if err != nil {
		return exitf(ExitFailure, "-o: %v", err)
	}
	err = b.Encode(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return exitf(ExitFailure, "writing %s: %v", out, err)
	}
	ctx, stop := interruptContext()
	defer stop()
	v, err := explore.Verify(ctx, b, kind)
	if err != nil {
		return exitf(ExitFailure, "%v", err)
	}
	fmt.Fprintf(e.stderr, "wrote %s: %s, %d steps\n", termsafe.String(out), termsafe.String(b.Failure.Kind+": "+b.Failure.Message), len(b.Schedule))
	if !v.Reproduced {
		fmt.Fprintf(e.stderr, "the bundle does not reproduce the recorded failure: %s\n", termsafe.String(v.Drift))
		return silentExit(ExitFailure)
	}
	fmt.Fprintf(e.stderr, "verified: it reproduces at %s\n", b.Failure.Coordinate)
	return nil
}

// salvageArtifact reads what it can of an artifact: a truncated or damaged
// file still yields the entries before the damage (problem says what is
// wrong); only a file that is unreadable or not an artifact at all is an
// error.
func salvageArtifact(path string) (*artifact.Artifact, error, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, exitf(ExitFailure, "cannot read artifact: %v", err)
	}
	a, problem := artifact.Salvage(data)
	if a == nil {
		return nil, nil, exitf(ExitFailure, "%s: %v", path, problem)
	}
	return a, problem, nil
}
