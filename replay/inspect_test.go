package replay_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// twoPinnedSrc has two consumers (pinned A and B) busy at the same time,
// so that a stop on one races with the other's deliveries.
const twoPinnedSrc = `
topic Job { n: int }

locus Feeder {
    on start { for i in 0..12 { publish Job { n: i }; } }
}

fn weigh(n: int) -> int { return n * 2; }

locus A {
    var sum: int = 0;
    on Job(j) { sum += j.n; }
}

locus B {
    var sum: int = 0;
    on Job(j) {
        sum += weigh(j.n);
    }
}

main {
    spawn Feeder;
    spawn A on pinned;
    spawn B on pinned;
}
`

// inspectRun replays rec with an inspector that answers each stop with
// the next of actions (then continue), and returns the stops'
// coordinates. Each stop takes a moment, as a person's would, so that
// the other consumers reach their next deliveries meanwhile.
func inspectRun(t *testing.T, rec *recording, p *program, at artifact.Coordinate, actions []replay.InspectAction, breaks ...string) []artifact.Coordinate {
	t.Helper()
	var stops []artifact.Coordinate
	inspect := func(in *replay.Inspection) replay.InspectAction {
		if len(stops) == 0 {
			for _, b := range breaks {
				if _, err := in.Break(b); err != nil {
					t.Errorf("break %s: %v", b, err)
				}
			}
		}
		stops = append(stops, in.Coordinate())
		time.Sleep(2 * time.Millisecond)
		if len(stops) <= len(actions) {
			return actions[len(stops)-1]
		}
		return replay.InspectContinue
	}
	if _, err := session(t, rec.art, p, replay.SessionOptions{Options: replay.Options{At: &at, Quiet: true, Inspect: inspect}}); err != nil {
		t.Fatal(err)
	}
	return stops
}

// TestInspectNextStaysOnItsConsumer: after a `step` lands on a consumer,
// `next` stops only on that consumer, every time (a stop another
// consumer had queued during the `step` stop used to be shown).
func TestInspectNextStaysOnItsConsumer(t *testing.T) {
	p := compileProgram(t, twoPinnedSrc)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	at := artifact.Coordinate{Consumer: 1, N: 1}
	for try := range 15 {
		stops := inspectRun(t, rec, p, at, []replay.InspectAction{replay.InspectStep, replay.InspectNext, replay.InspectNext, replay.InspectNext, replay.InspectNext})
		if len(stops) != 6 {
			t.Fatalf("try %d: %d stops %v, want 6", try, len(stops), stops)
		}
		for _, s := range stops[2:] {
			if s.Consumer != stops[1].Consumer {
				t.Fatalf("try %d: `next` from %v left its consumer: stops %v", try, stops[1], stops)
			}
		}
	}
}

// TestInspectQuitOnce: `quit` ends the run at once, even at a `step`
// stop while other consumers wait at their next deliveries.
func TestInspectQuitOnce(t *testing.T) {
	p := compileProgram(t, twoPinnedSrc)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	at := artifact.Coordinate{Consumer: 1, N: 1}
	for try := range 15 {
		stops := inspectRun(t, rec, p, at, []replay.InspectAction{replay.InspectStep, replay.InspectHalt, replay.InspectHalt})
		if len(stops) != 2 {
			t.Fatalf("try %d: quit took %d stops %v, want 2", try, len(stops), stops)
		}
	}
}

// TestInspectBreak: a breakpoint on a handler, a fn or a line stops
// before the deliveries whose handler is, calls or contains it, and
// nowhere else.
func TestInspectBreak(t *testing.T) {
	p := compileProgram(t, twoPinnedSrc)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	at := artifact.Coordinate{Consumer: 0, N: 0} // before anything is published
	for _, spec := range []string{"B.on Job", "weigh", "17"} {
		stops := inspectRun(t, rec, p, at, nil, spec)
		// The At stop on the Feeder, then B's twelve deliveries.
		if len(stops) != 13 {
			t.Fatalf("break %s: %d stops %v, want 13", spec, len(stops), stops)
		}
		for _, s := range stops[1:] {
			if s.Consumer != 2 {
				t.Fatalf("break %s stopped on consumer %d: %v", spec, s.Consumer, stops)
			}
		}
	}
	for spec, want := range map[string]string{"nosuch": "no handler or fn named nosuch", "3": "is in no handler", "0": "not a line number"} {
		var got error
		inspect := func(in *replay.Inspection) replay.InspectAction {
			_, got = in.Break(spec)
			return replay.InspectHalt
		}
		if _, err := session(t, rec.art, p, replay.SessionOptions{Options: replay.Options{At: &at, Quiet: true, Inspect: inspect}}); err != nil {
			t.Fatal(err)
		}
		if got == nil || !strings.Contains(got.Error(), want) {
			t.Errorf("break %s: %v, want %q", spec, got, want)
		}
	}
}
