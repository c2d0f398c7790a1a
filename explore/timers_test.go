package explore

import (
	"context"
	"strings"
	"testing"

	"github.com/hale-lang/hale/vm/host"
)

// TestTimersOnVirtualTime: a timer fires when nothing else can run, at
// its due time on the virtual clock; a sleep past its due time lets it
// race with the reply, and the search finds the timeout.
func TestTimersOnVirtualTime(t *testing.T) {
	for _, kind := range []host.EngineKind{host.EngineNative, host.EngineWasm} {
		s := newSched(t, "testdata/timeout.hl", kind, Config{})
		rep, err := Search(context.Background(), s, SearchOptions{Strategy: StrategyRandom, Schedules: 30, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Failures) != 0 {
			t.Fatalf("%v: a fast server timed out: %+v", kind, rep.Failures[0].Failure)
		}
		o, err := s.RunSchedule(context.Background(), StrategyRandom, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := printed(t, o); got != "reply at 1767225600000\ntimeout at 1767225600100\n" {
			t.Errorf("%v: output %q", kind, got)
		}

		path := t.TempDir() + "/slow.hl"
		src := compileFile(t, "testdata/timeout.hl").Program.Source("timeout.hl")
		writeFile(t, path, strings.Replace(string(src), "const SLOW: int = 0;", "const SLOW: int = 250;", 1))
		slow := newSched(t, path, kind, Config{})
		rep, err = Search(context.Background(), slow, SearchOptions{Strategy: StrategyRandom, Schedules: 30, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Failures) != 1 || rep.Failures[0].Failure.Message != "timed out before the reply" {
			t.Fatalf("%v: the slow server's timeout was not found: %+v", kind, rep.Failures)
		}
		// Its bundle reproduces: virtual time and the timer are re-run.
		b, err := slow.NewBundle(compileFile(t, path), StrategyRandom, rep.Failures[0].Shrunk)
		if err != nil {
			t.Fatal(err)
		}
		v, err := Verify(context.Background(), b, kind)
		if err != nil || !v.Reproduced {
			t.Fatalf("%v: the timeout's bundle does not verify: %v %q", kind, err, v.Drift)
		}
	}
}

// TestPeriodicTimerIsNotALivelock: a run that keeps a timer pending is
// cut at --max-steps without failing.
func TestPeriodicTimerIsNotALivelock(t *testing.T) {
	path := t.TempDir() + "/tick.hl"
	writeFile(t, path, `topic Tick { n: int }
locus Clock { on start { publish Tick { n: 0 } after 10; } on Tick(t) { publish Tick { n: t.n + 1 } after 10; } }
main { spawn Clock on pinned; }`)
	s := newSched(t, path, host.EngineNative, Config{MaxSteps: 50})
	o, err := s.RunSchedule(context.Background(), StrategyPCT, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if o.Failure != nil || !o.Cut || len(o.Steps) != 50 {
		t.Fatalf("failure %+v, cut %v, %d steps", o.Failure, o.Cut, len(o.Steps))
	}
}
