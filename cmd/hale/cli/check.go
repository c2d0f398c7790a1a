package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/effects"
	"github.com/hale-lang/hale/lang/diag"
)

func init() { commands = append(commands, newCheckCmd) }

func newCheckCmd(e env) *cobra.Command {
	var showEffects, asJSON bool
	cmd := &cobra.Command{
		Use:   "check [--effects] [--json] app.hl",
		Short: "Parse, type-check and analyse a program",
		Long: "Check parses the program and everything it imports, type-checks it and infers effects.\n" +
			"It prints nothing and exits 0 when the program is valid; otherwise it prints every\n" +
			"diagnostic as file:line:col: message [code] with the source line and a caret, and exits 1.\n" +
			"Warnings (codes W…) are printed the same way but do not change the exit code.\n" +
			"With --effects it lists every fn and handler with its inferred effect set.\n" +
			"With --json it prints the diagnostics as a JSON array instead (with --effects, the\n" +
			"effects object with the diagnostics under \"diagnostics\"); the exit code is the same.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return checkJSON(e, args[0], showEffects)
			}
			c, err := compile(e, args[0])
			if err != nil {
				return err
			}
			if len(c.Program.Warnings) > 0 {
				fmt.Fprint(e.stderr, diag.Render(c.Program.Warnings, c.Program.Source))
			}
			if !showEffects {
				return nil
			}
			return c.Effects.WriteText(e.stdout)
		},
	}
	cmd.Flags().BoolVar(&showEffects, "effects", false, "list every fn and handler with its inferred effect set")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the diagnostics (and with --effects the effect sets) as JSON")
	return cmd
}

// jsonDiagnostic is one diagnostic of `hale check --json`.
type jsonDiagnostic struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Col      int      `json:"col"`
	EndLine  int      `json:"end_line"`
	EndCol   int      `json:"end_col"`
	Severity string   `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Hints    []string `json:"hints"`
}

// checkJSON runs the front end as check does and prints every diagnostic
// as JSON on stdout: an array, or with effects the effects object with
// the array under "diagnostics" (and no entries when the program has
// errors). It exits 1 when there is an error, as check does.
func checkJSON(e env, path string, withEffects bool) error {
	list, fx, err := diagnose(path)
	if err != nil {
		return exitf(ExitFailure, "%v", err)
	}
	out := []jsonDiagnostic{}
	for _, d := range list.Sort() {
		from, to := d.Span()
		hints := d.Hints
		if hints == nil {
			hints = []string{}
		}
		out = append(out, jsonDiagnostic{
			File: from.File, Line: from.Line, Col: from.Col, EndLine: to.Line, EndCol: to.Col,
			Severity: d.Severity.String(), Code: string(d.Code), Message: d.Msg, Hints: hints,
		})
	}
	var enc bytes.Buffer
	je := json.NewEncoder(&enc)
	je.SetEscapeHTML(false) // messages quote operators: "<<", "&"
	if err := je.Encode(out); err != nil {
		return err
	}
	ds := bytes.TrimSpace(enc.Bytes())
	if !withEffects {
		_, err := fmt.Fprintf(e.stdout, "%s\n", ds)
		return checkExit(list, err)
	}
	// The effects object as --effects --json prints it, with the
	// diagnostics added as its last key.
	obj := []byte(`{"entries":[]}`)
	if fx != nil {
		var buf bytes.Buffer
		if err := fx.WriteJSON(&buf); err != nil {
			return err
		}
		obj = bytes.TrimSpace(buf.Bytes())
	}
	obj = append(obj[:len(obj)-1], `,"diagnostics":`...)
	obj = append(append(obj, ds...), "}\n"...)
	_, err = e.stdout.Write(obj)
	return checkExit(list, err)
}

// checkExit is check's exit: 1 when the list holds an error.
func checkExit(list diag.List, err error) error {
	if err != nil {
		return err
	}
	if list.HasErrors() {
		return silentExit(ExitFailure)
	}
	return nil
}

// diagnose compiles the program at path and returns every diagnostic on
// the way (the warnings of a program that compiled, or the errors of the
// phase that failed), with the effects when the program has no error. err
// is a failure that is not a diagnostic.
func diagnose(path string) (diag.List, *effects.Info, error) {
	c, err := hale.CompileFile(path, hale.BuildOptions{})
	if err != nil {
		l, err := asDiagnostics(err)
		return l, nil, err
	}
	return c.Program.Warnings, c.Effects, nil
}

func asDiagnostics(err error) (diag.List, error) {
	var list diag.List
	if errors.As(err, &list) {
		return list, nil
	}
	var one *diag.Error
	if errors.As(err, &one) {
		return diag.List{one}, nil
	}
	return nil, err
}
