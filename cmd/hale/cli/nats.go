package cli

import (
	"crypto/rand"
	"encoding/binary"
	"time"

	"github.com/hale-lang/hale/vm/host/natsbus"
)

// natsBus is the bus of a run or a live replay of a program with nats
// bindings or exports: $HALE_NATS_RECONNECT (a Go duration, e.g. 30s)
// sets how long a lost connection is retried (docs/distributed.md).
func natsBus(e env) (*natsbus.Bus, error) {
	opts := natsbus.Options{Stderr: e.stderr}
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
