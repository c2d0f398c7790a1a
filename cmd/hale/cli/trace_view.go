package cli

import (
	"bufio"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/hale-lang/hale/internal/termsafe"
	"github.com/hale-lang/hale/replay/timeline"
)

// newTraceViewCmd is `hale trace view`: the timeline of a recording, as
// a self-contained HTML page and/or Chrome Trace Event JSON for Perfetto.
func newTraceViewCmd(e env) *cobra.Command {
	var htmlOut, perfettoOut string
	view := &cobra.Command{
		Use:   "view run.halerec (--html out.html | --perfetto out.json)",
		Short: "Draw a recording's timeline as an HTML page or Perfetto JSON",
		Long: "View draws the timeline of a recording: a lane per consumer, a box per delivery,\n" +
			"an arrow from each publish to each of its deliveries, traps and exits marked.\n" +
			"--html writes one self-contained page (the first " + fmt.Sprint(timeline.HTMLLimit) + " deliveries);\n" +
			"--perfetto writes Chrome Trace Event JSON (open it at ui.perfetto.dev).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if htmlOut == "" && perfettoOut == "" {
				return exitf(ExitUsage, "trace view: name an output with --html out.html or --perfetto out.json")
			}
			ins := []input{{what: "the artifact", path: args[0]}}
			for _, o := range []struct{ flag, path string }{{"--html", htmlOut}, {"--perfetto", perfettoOut}} {
				if o.path == "" {
					continue
				}
				if err := refuseOverwrite(o.flag, o.path, ins); err != nil {
					return err
				}
			}
			if htmlOut != "" && htmlOut == perfettoOut {
				return exitf(ExitUsage, "--html and --perfetto both name %s", htmlOut)
			}
			a, problem, err := salvageArtifact(args[0])
			if err != nil {
				return err
			}
			tl := timeline.Build(a, artifactDecoder(a))
			note := ""
			if problem != nil {
				note = fmt.Sprintf("%s: %s (the timeline shows the entries before the damage)", args[0], problem)
				fmt.Fprintf(e.stderr, "hale: %s\n", termsafe.String(note))
			}
			if htmlOut != "" {
				if err := writeFileWith(htmlOut, func(w *bufio.Writer) error { return tl.WriteHTML(w, args[0], note) }); err != nil {
					return err
				}
				if msg := tl.LimitMessage(); msg != "" {
					fmt.Fprintf(e.stderr, "hale: %s: %s\n", termsafe.String(htmlOut), msg)
				}
			}
			if perfettoOut != "" {
				if err := writeFileWith(perfettoOut, func(w *bufio.Writer) error { return tl.WritePerfetto(w, args[0]) }); err != nil {
					return err
				}
			}
			return nil
		},
	}
	view.Flags().StringVar(&htmlOut, "html", "", "write the timeline as one self-contained HTML page to this file")
	view.Flags().StringVar(&perfettoOut, "perfetto", "", "write the timeline as Chrome Trace Event JSON (for Perfetto) to this file")
	return view
}

// writeFileWith creates path and fills it through write; a failure is
// exit 1 naming the path.
func writeFileWith(path string, write func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return exitf(ExitFailure, "cannot write %s: %v", path, err)
	}
	w := bufio.NewWriter(f)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return exitf(ExitFailure, "cannot write %s: %v", path, err)
	}
	return nil
}
