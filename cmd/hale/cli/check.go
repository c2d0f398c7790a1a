package cli

import (
	"github.com/spf13/cobra"
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
			"With --effects it lists every fn and handler with its inferred effect set.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && !showEffects {
				return exitf(ExitUsage, "--json needs --effects")
			}
			c, err := compile(e, args[0])
			if err != nil {
				return err
			}
			if !showEffects {
				return nil
			}
			if asJSON {
				return c.Effects.WriteJSON(e.stdout)
			}
			return c.Effects.WriteText(e.stdout)
		},
	}
	cmd.Flags().BoolVar(&showEffects, "effects", false, "list every fn and handler with its inferred effect set")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --effects: print the list as JSON")
	return cmd
}
