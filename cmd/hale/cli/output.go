package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/hale-lang/hale/internal/termsafe"
	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
)

// writeJSON prints v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(termsafe.JSONWriter(w))
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// artifactDecoder returns the value decoder for an artifact's payloads,
// arguments and results, built from the type table in its header; nil
// when the artifact carries none.
func artifactDecoder(a *artifact.Artifact) artifact.ValueDecoder {
	d, err := replay.NewValueDecoder(&a.Header)
	if err != nil {
		return nil
	}
	return d
}

// count formats n with the singular or plural noun: "1 entry", "3 entries".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// interruptContext returns a context canceled by the first SIGINT or
// SIGTERM: the run stops after the handlers that are running and a
// recording is finished properly. The signal handling is then given back,
// so a second Ctrl-C ends hale at once (a handler in an endless loop does
// not look at the context).
func interruptContext() (context.Context, func()) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
