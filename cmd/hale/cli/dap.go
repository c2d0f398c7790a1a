package cli

import (
	"fmt"
	"net"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hale-lang/hale/cmd/hale/internal/dap"
	"github.com/hale-lang/hale/vm/host"
)

func init() { commands = append(commands, newDapCmd) }

func newDapCmd(e env) *cobra.Command {
	var listen, engine string
	cmd := &cobra.Command{
		Use:   "dap [--listen 127.0.0.1:0]",
		Short: "Serve the Debug Adapter Protocol (for VS Code and other editors) on stdio or TCP",
		Long: "hale dap is a debug adapter: an editor launches it and speaks the Debug Adapter Protocol\n" +
			"on its stdin and stdout to debug a program, a recording or a bundle (docs/debugging.md).\n" +
			"With --listen it serves TCP instead, each connection its own session, and prints\n" +
			"'listening on ADDR' once it listens.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, err := host.ParseEngine(engine)
			if err != nil {
				return exitf(ExitUsage, "%v", err)
			}
			opts := dap.Options{Launch: dap.LaunchSession, Engine: kind}
			if listen == "" {
				// On stdio a signal ends hale as usual: the editor that
				// started it has gone.
				if err := dap.Serve(cmd.Context(), e.stdin, e.stdout, opts); err != nil {
					return exitf(ExitFailure, "dap: %v", err)
				}
				return nil
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return exitf(ExitUsage, "dap: cannot listen on %s: %v", listen, err)
			}
			fmt.Fprintf(e.stdout, "listening on %s\n", l.Addr())
			if err := dap.ServeListener(ctx, l, opts); err != nil {
				return exitf(ExitFailure, "dap: %v", err)
			}
			if ctx.Err() != nil {
				return silentExit(ExitInterrupted)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "serve TCP on this address (e.g. 127.0.0.1:0) instead of stdio")
	cmd.Flags().StringVar(&engine, "engine", defaultEngine(e), "engine for launches that name none: wasm or native; default $HALE_ENGINE, else wasm")
	return cmd
}
