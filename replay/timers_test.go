package replay_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// longTimerSrc waits 5 s on a timer, with a shorter one and an immediate
// message before it.
const longTimerSrc = `
topic Tick { n: int }
locus Clock {
    on start {
        publish Tick { n: 5000 } after 5_000;
        publish Tick { n: 50 } after 50;
        publish Tick { n: 0 };
    }
    on Tick(t) { print("tick " + str(t.n)); }
}
main { spawn Clock; }
`

// TestReplayTimerSkipsDelay records a program with a 5 s timer: the
// artifact holds each publish's delay_ms, and a replay, which skips the
// delays, takes well under 5 s and matches the recording on both engines.
func TestReplayTimerSkipsDelay(t *testing.T) {
	if testing.Short() {
		t.Skip("records a 5 s wait")
	}
	p := compileProgram(t, longTimerSrc)
	start := time.Now()
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	if took := time.Since(start); took < 5*time.Second {
		t.Fatalf("the recording took %v, less than its timer", took)
	}
	if rec.stdout != "tick 0\ntick 50\ntick 5000\n" {
		t.Fatalf("recorded %q", rec.stdout)
	}
	var delays []string
	for i := range rec.art.Entries {
		if x, ok := rec.art.Entries[i].Body.(artifact.Publish); ok {
			delays = append(delays, fmt.Sprintf("%s:%d", x.Message, x.DelayMS))
		}
	}
	if got := strings.Join(delays, " "); got != "0:0:5000 0:1:50 0:2:0" {
		t.Errorf("recorded publishes (message:delay_ms) %s", got)
	}
	for _, e := range engines() {
		onEngine(e, func() {
			start := time.Now()
			rp := replayRun(t, rec.art, p, replay.Options{})
			took := time.Since(start)
			if rp.report.Diverged() || !rp.stats.Clean() {
				t.Fatalf("%v: replay diverged:\n%s", e, rp.explain())
			}
			if rp.stdout != rec.stdout {
				t.Errorf("%v: replay printed %q", e, rp.stdout)
			}
			if took > 2500*time.Millisecond {
				t.Errorf("%v: the replay took %v: it waited for the timer", e, took)
			}
		})
	}
}

// racingTimersSrc: three pinned producers race each other to the tally,
// each with immediate messages and timers. Within one handler a
// producer's timers have the same delay, so they are due in publish
// order (equal due times go by sequence), and the tally must see them so;
// its immediate messages keep publish order too.
const racingTimersSrc = `
topic Go { round: int }
topic Mark { from: int, k: int, delayed: bool }
locus Producer(id: int) {
    on Go(g) {
        for k in 0..4 {
            publish Mark { from: id, k: k, delayed: true } after 2 + id;
            publish Mark { from: id, k: k, delayed: false };
        }
    }
}
locus Starter {
    on start { publish Go { round: 0 }; }
}
locus Tally {
    var seen: [string] = [];
    var last_delayed: {int: int} = {};
    var last_now: {int: int} = {};
    on Mark(m) {
        if m.delayed {
            if has(last_delayed, m.from) { assert(m.k > last_delayed[m.from], "timers out of due order"); }
            last_delayed[m.from] = m.k;
        } else {
            if has(last_now, m.from) { assert(m.k > last_now[m.from], "immediate messages out of order"); }
            last_now[m.from] = m.k;
        }
        push(seen, str(m.from) + (if_delayed(m.delayed)) + str(m.k));
        if len(seen) == 24 { print(join(seen, " ")); }
    }
    fn if_delayed(d: bool) -> string {
        if d { return "d"; }
        return "i";
    }
}
main {
    spawn Starter;
    for i in 0..3 { spawn Producer(i) as producers[i] on pinned; }
    spawn Tally;
}
`

// TestReplayRacingTimers: 50 recordings of racing pinned publishers with
// timers; each keeps the per-producer order (due time then sequence
// among timers, publish order among immediate messages) and replays
// identically.
func TestReplayRacingTimers(t *testing.T) {
	p := compileProgram(t, racingTimersSrc)
	n := runs
	if raceBuild || testing.Short() {
		n = 5
	}
	orders := map[string]bool{}
	for i := range n {
		rec := record(t, p, host.Options{}, artifact.EnvWithheld)
		if rec.res.Verdict != host.VerdictQuiescent || strings.Count(rec.stdout, " ") != 23 {
			t.Fatalf("recording %d: %s, stdout %q, stderr %q", i, rec.res.Verdict, rec.stdout, rec.stderr)
		}
		orders[rec.stdout] = true
		rp := replayRun(t, rec.art, p, replay.Options{})
		if rp.report.Diverged() || !rp.stats.Clean() {
			t.Fatalf("recording %d: replay diverged:\n%s", i, rp.explain())
		}
		if rp.stdout != rec.stdout {
			t.Fatalf("recording %d: replay printed %q, recorded %q", i, rp.stdout, rec.stdout)
		}
	}
	t.Logf("%d recordings, %d distinct orders", n, len(orders))
}

// TestReplayTimerChangedDelay: replaying with a program whose timer has
// another delay than the recorded one is a divergence, with a finding
// that names both delays.
func TestReplayTimerChangedDelay(t *testing.T) {
	src := `
topic Tick { n: int }
locus Clock {
    on start { publish Tick { n: 1 } after DELAY; }
    on Tick(t) { print(t.n); }
}
main { spawn Clock; }
`
	rec := record(t, compileProgram(t, strings.Replace(src, "DELAY", "20", 1)), host.Options{}, artifact.EnvWithheld)
	changed := compileProgram(t, strings.Replace(src, "DELAY", "30", 1))
	rp := replayRun(t, rec.art, changed, replay.Options{})
	if !rp.report.Diverged() {
		t.Fatalf("a changed delay replayed cleanly:\n%s", rp.explain())
	}
	if !strings.Contains(rp.explain(), "after 30 ms, in the recording after 20 ms") {
		t.Errorf("findings do not name the delays:\n%s", rp.explain())
	}
}

// racingGuardedTimersSrc: pinned producers race timers and immediate
// messages into a work group (round-robin per producer, decided at the
// statement) and a guarded tally.
const racingGuardedTimersSrc = `
topic Go { round: int }
topic Job { from: int, k: int }
topic Done { from: int, k: int, by: int }
locus Producer(id: int) {
    on Go(g) {
        for k in 0..6 {
            if k % 2 == 0 { publish Job { from: id, k: k } after 1 + id; } else { publish Job { from: id, k: k }; }
        }
    }
}
locus Starter { on start { publish Go { round: 0 }; } }
locus Worker(slot: int) {
    on Job(j) shared { publish Done { from: j.from, k: j.k, by: slot }; }
}
locus Tally(from: int) {
    var seen: [string] = [];
    on Done(d) if d.from == from {
        push(seen, str(d.k) + "@" + str(d.by));
        if len(seen) == 6 { print(str(from) + ": " + join(seen, " ")); }
    }
}
main {
    spawn Starter;
    for i in 0..3 { spawn Producer(i) as producers[i] on pinned; }
    for w in 0..2 { spawn Worker(w) as workers[w] on pool("w"); }
    for i in 0..3 { spawn Tally(i) as tallies[i]; }
}
`

// TestReplayRacingGuardedTimers: 50 recordings of racing timers into a
// work group and guarded subscribers replay identically; every job went
// to the member its producer's round-robin turn names (even k to worker
// 0: the turns are taken at the statement, timers included).
func TestReplayRacingGuardedTimers(t *testing.T) {
	p := compileProgram(t, racingGuardedTimersSrc)
	n := runs
	if raceBuild || testing.Short() {
		n = 5
	}
	for i := range n {
		rec := record(t, p, host.Options{}, artifact.EnvWithheld)
		if rec.res.Verdict != host.VerdictQuiescent || strings.Count(rec.stdout, "\n") != 3 {
			t.Fatalf("recording %d: %s, stdout %q, stderr %q", i, rec.res.Verdict, rec.stdout, rec.stderr)
		}
		for _, f := range strings.Fields(rec.stdout) {
			if k, by, ok := strings.Cut(f, "@"); ok && (k[0]-'0')%2 != by[0]-'0' {
				t.Fatalf("recording %d: job %s went to worker %s:\n%s", i, k, by, rec.stdout)
			}
		}
		rp := replayRun(t, rec.art, p, replay.Options{})
		if rp.report.Diverged() || !rp.stats.Clean() {
			t.Fatalf("recording %d: replay diverged:\n%s", i, rp.explain())
		}
		if rp.stdout != rec.stdout {
			t.Fatalf("recording %d: replay printed %q, recorded %q", i, rp.stdout, rec.stdout)
		}
	}
}
