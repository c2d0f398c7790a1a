package cli

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hale-lang/hale/internal/termsafe"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host/natsbus"
)

// natsBus is the bus of a run or a live replay of a program with nats
// bindings or exports: $HALE_NATS_RECONNECT (a Go duration, e.g. 30s)
// sets how long a lost connection is retried (docs/distributed.md).
func natsBus(e env) (*natsbus.Bus, error) {
	opts := natsbus.Options{Stderr: e.stderr, LookupEnv: func(name string) (string, bool) {
		v := e.getenv(name)
		return v, v != ""
	}}
	if v := e.getenv("HALE_NATS_RECONNECT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, exitf(ExitUsage, "HALE_NATS_RECONNECT: want a positive duration such as 30s, got %q", v)
		}
		opts.ReconnectWindow = d
	}
	return natsbus.New(opts), nil
}

// newProcessID returns a random, non-zero 64-bit process id.
func newProcessID() uint64 {
	var b [8]byte
	for {
		rand.Read(b[:]) // never fails (crypto/rand)
		if id := binary.LittleEndian.Uint64(b[:]); id != 0 {
			return id
		}
	}
}

// newTraceLinkCmd is `hale trace link a.halerec b.halerec [more…]
// [--json]` (docs/distributed.md).
func newTraceLinkCmd(e env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "link [--json] a.halerec b.halerec [more.halerec...]",
		Short: "Match the nats messages one recording sent with those the others received",
		Long: "Link reads the recordings of processes that exchanged topics through NATS and\n" +
			"matches each message one of them sent (a nats output) with the recordings that\n" +
			"received it (ingress entries), by its Nats-Msg-Id; it lists the messages sent\n" +
			"that none of them received and those received from elsewhere.",
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			arts := make([]*artifact.Artifact, len(args))
			for i, path := range args {
				a, problem, err := salvageArtifact(path)
				if err != nil {
					return err
				}
				if problem != nil {
					fmt.Fprintf(e.stderr, "hale: %s: %s (linking the entries before the damage)\n", termsafe.String(path), termsafe.String(problem.Error()))
				}
				arts[i] = a
			}
			rep := artifact.Link(arts, args)
			if asJSON {
				return writeJSON(e.stdout, rep)
			}
			return rep.WriteText(e.stdout)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	return cmd
}
