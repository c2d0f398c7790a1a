package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/explore"
	"github.com/hale-lang/hale/internal/termsafe"
	"github.com/hale-lang/hale/vm/host"
)

// bundleReport is the --json output of hale replay x.replay.
type bundleReport struct {
	Bundle     string              `json:"bundle"`
	Reproduced bool                `json:"reproduced"`
	Refused    *string             `json:"refused"`
	Drift      *string             `json:"drift"`
	Note       *string             `json:"note"`
	Changed    []string            `json:"changed_sources"`
	Failure    explore.WireFailure `json:"failure"`
}

// runBundle re-executes a .replay bundle: its embedded sources, or the
// program args[1] when given.
func runBundle(e env, f replayFlags, args []string) error {
	path := args[0]
	rep := bundleReport{Bundle: path, Changed: []string{}, Failure: explore.WireFailure{Stack: []string{}}}
	refused := func(msg string) error {
		if f.asJSON {
			rep.Refused = &msg
			_ = writeJSON(e.stdout, rep)
		}
		return exitf(ExitUsage, "refused: %s: %s", path, msg)
	}
	switch {
	case f.at != "" && f.verify:
		return exitf(ExitUsage, "--at and --verify do not go together")
	case f.diff || f.output != "" || f.unverified || f.allowLive || len(f.env) > 0:
		return exitf(ExitUsage, "a .replay bundle takes only --verify, --json, --quiet and --engine")
	}
	kind, err := host.ParseEngine(f.engine)
	if err != nil {
		return exitf(ExitUsage, "%v", err)
	}
	host.Prepare(kind)
	data, err := os.ReadFile(path)
	if err != nil {
		return refused(fmt.Sprintf("cannot read the bundle: %v", err))
	}
	b, err := explore.DecodeBundle(data)
	if err != nil {
		return refused(strings.TrimPrefix(err.Error(), "refused: "))
	}
	rep.Failure = b.Failure
	ctx, stop := interruptContext()
	defer stop()
	var program *hale.Compiled
	if len(args) == 2 {
		if program, err = compile(e, args[1]); err != nil {
			return err
		}
	}
	if f.at != "" {
		c, n, err := b.ParseAt(f.at)
		if err != nil {
			return exitf(ExitUsage, "%v", err)
		}
		view, err := explore.At(ctx, b, program, kind, c, n)
		switch {
		case errors.Is(err, context.Canceled):
			return exitf(ExitInterrupted, "interrupted")
		case err != nil:
			return exitf(ExitFailure, "%v", err)
		}
		return writeJSON(e.stdout, view)
	}
	var v *explore.Verification
	if program != nil {
		c := program
		rep.Changed = b.ChangedSources(c)
		for _, p := range rep.Changed {
			fmt.Fprintf(e.stderr, "source %s differs from the bundle's\n", termsafe.String(p))
		}
		v, err = explore.VerifyProgram(ctx, b, c, kind)
	} else {
		v, err = explore.Verify(ctx, b, kind)
	}
	switch {
	case errors.Is(err, context.Canceled):
		return exitf(ExitInterrupted, "interrupted")
	case err != nil:
		return exitf(ExitFailure, "%v", err)
	}
	rep.Reproduced = v.Reproduced
	if v.Drift != "" {
		rep.Drift = &v.Drift
	}
	if v.Note != "" {
		rep.Note = &v.Note
	}
	if f.asJSON {
		if err := writeJSON(e.stdout, rep); err != nil {
			return err
		}
	} else {
		if !f.verify && !f.quiet && v.Outcome != nil {
			for _, o := range v.Printed() {
				w := e.stdout
				if o.Kind == "stderr" {
					w = e.stderr
				}
				fmt.Fprintln(w, termsafe.String(*o.Text))
			}
		}
		if v.Note != "" {
			fmt.Fprintln(e.stderr, termsafe.String(v.Note))
		}
		want := b.Failure
		at := ""
		if want.Position != "" {
			at = " at " + want.Position
		}
		where := "at start-up"
		if want.Coordinate != "" {
			where = "delivery " + want.Coordinate
		}
		if v.Reproduced {
			fmt.Fprintf(e.stderr, "reproduced: %s: %s%s, %s after %d steps\n", want.Kind, termsafe.String(want.Message), at, where, len(b.Schedule))
		} else {
			fmt.Fprintf(e.stderr, "not reproduced: %s\n", termsafe.String(v.Drift))
		}
	}
	if !v.Reproduced {
		return silentExit(ExitFailure)
	}
	return nil
}
