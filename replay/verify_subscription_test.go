package replay_test

import (
	"strings"
	"testing"

	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// TestVerifyChecksSubscriptions: the header's type table lists which
// instance subscribes to which topic, so verify finds a delivery to an
// instance that does not subscribe.
func TestVerifyChecksSubscriptions(t *testing.T) {
	p := compileProgram(t, `
topic Ping { n: int }
locus Src { on start { publish Ping { n: 1 }; } }
locus Sink { on Ping(p) { } }
locus Deaf { var n: int = 0; }
main { spawn Src; spawn Sink; spawn Deaf; }
`)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	art := rec.art
	if err := art.Verify(); err != nil {
		t.Fatalf("a real recording: %v", err)
	}
	for i, e := range art.Entries {
		if d, ok := e.Body.(artifact.Delivery); ok && !d.Start {
			d.Target = "Deaf" // on the same consumer, but not subscribed
			art.Entries[i].Body = d
		}
	}
	err := art.Verify()
	if err == nil || !strings.Contains(err.Error(), "delivery of topic Ping to Deaf, which does not subscribe to it") {
		t.Fatalf("Verify = %v, want a subscription problem", err)
	}
}
