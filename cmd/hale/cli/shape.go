package cli

import (
	"github.com/spf13/cobra"

	"github.com/hale-lang/hale/sir"
)

func init() { commands = append(commands, newShapeCmd) }

func newShapeCmd(e env) *cobra.Command {
	var asJSON, asDot bool
	cmd := &cobra.Command{
		Use:   "shape [--json|--dot] app.hl",
		Short: "Print the program's shape graph and its hash",
		Long: "Shape prints the structural graph of the program (loci, instances, topics, subscriptions,\n" +
			"publish edges, the call graph, effects and placement) and its BLAKE3 shape hash, the\n" +
			"hash a recording is admitted against. Formatting, comments and declaration order\n" +
			"never change it.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && asDot {
				return exitf(ExitUsage, "--json and --dot cannot be used together")
			}
			c, err := compile(e, args[0])
			if err != nil {
				return err
			}
			shape := sir.BuildShape(c.SIR)
			switch {
			case asJSON:
				return shape.WriteJSON(e.stdout)
			case asDot:
				return shape.WriteDot(e.stdout)
			}
			return shape.WriteText(e.stdout)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the graph as one JSON object")
	cmd.Flags().BoolVar(&asDot, "dot", false, "print a Graphviz digraph of instances and topics")
	return cmd
}
