package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/replay/artifact"
)

func init() { commands = append(commands, newVersionCmd) }

func newVersionCmd(e env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the toolchain, artifact format, Go and wazero versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(e.stdout, "hale %s\n", hale.Version)
			fmt.Fprintf(e.stdout, "artifact format %d\n", artifact.FormatVersion)
			fmt.Fprintf(e.stdout, "go %s\n", runtime.Version())
			fmt.Fprintf(e.stdout, "wazero %s\n", hale.WazeroVersion())
			return nil
		},
	}
}
