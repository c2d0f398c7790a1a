package replay_test

import (
	"strings"
	"testing"

	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// guardedSrc has two pinned publishers and a pool publisher racing into
// guarded workers on a pool and on pinned consumers; a sink on main
// prints in the order it sees their results.
const guardedSrc = `
topic Job { from: string, n: int }
topic Done { worker: int, job: int }

locus Pub(name: string, count: int) {
    on start { for i in 0..count { publish Job { from: name, n: i }; } }
}

locus Worker(slot: int, of: int) {
    on Job(j) if (j.n + len(j.from)) % of == slot {
        publish Done { worker: slot, job: j.n };
    }
}

locus Sink {
    var sum: int = 0;
    var seen: int = 0;
    on Done(d) {
        seen += 1;
        sum = (sum * 31 + d.job * 7 + d.worker) % 1000003;
        if seen % 10 == 0 { print("sink " + str(seen) + " " + str(sum)); }
    }
}

main {
    spawn Pub("alpha", 30) as pa on pinned;
    spawn Pub("beta", 30) as pb on pinned;
    spawn Pub("gamma", 30) as pc on pool("pubs");
    for i in 0..2 { spawn Worker(i, 3) as pool_w[i] on pool("workers"); }
    spawn Worker(2, 3) as solo on pinned;
    spawn Sink;
}
`

// sharedSrc: the same racing publishers feed a work group spread over a
// pool, a pinned consumer and main, with a guard on some members and an
// ordinary subscriber beside the group.
const sharedSrc = `
topic Job { from: string, n: int }
topic Done { worker: int, job: int, from: string }

locus Pub(name: string, count: int) {
    on start { for i in 0..count { publish Job { from: name, n: i }; } }
}

locus Member(id: int) {
    var handled: int = 0;
    on Job(j) shared {
        handled += 1;
        publish Done { worker: id, job: j.n, from: j.from };
    }
}

locus Picky(id: int) {
    on Job(j) if j.n % 2 == 0 shared { publish Done { worker: id, job: j.n, from: j.from }; }
}

locus Audit {
    var count: int = 0;
    on Job(j) { count += 1; }
}

locus Sink {
    var sum: int = 0;
    var seen: int = 0;
    on Done(d) {
        seen += 1;
        sum = (sum * 31 + d.job * 7 + d.worker * 3 + len(d.from)) % 1000003;
        if seen % 10 == 0 { print("sink " + str(seen) + " " + str(sum)); }
    }
}

main {
    spawn Pub("alpha", 30) as pa on pinned;
    spawn Pub("beta", 30) as pb on pinned;
    spawn Pub("gamma", 30) as pc on pool("pubs");
    for i in 0..2 { spawn Member(i) as members[i] on pool("workers"); }
    spawn Picky(10) as picky on pinned;
    spawn Member(20) as lone;
    spawn Audit;
    spawn Sink;
}
`

// recordReplayMany records src runs times (fewer under the race detector)
// and checks that every recording replays identically.
func recordReplayMany(t *testing.T, src string) {
	p := compileProgram(t, src)
	n := runs
	if raceBuild || testing.Short() {
		n = 5
	}
	outputs := map[string]bool{}
	for i := range n {
		rec := record(t, p, host.Options{}, artifact.EnvWithheld)
		if rec.res.Code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, rec.res.Code, rec.stderr)
		}
		outputs[rec.stdout] = true
		rp := replayRun(t, rec.art, p, replay.Options{})
		if rp.report.Diverged() || !rp.stats.Clean() {
			t.Fatalf("run %d: replay diverged:\n%s", i, rp.explain())
		}
		if rp.stdout != rec.stdout || !equalInts(rp.res.Handled, rec.res.Handled) {
			t.Fatalf("run %d: replay differs: handled %v, recorded %v\n%s\nrecorded:\n%s", i, rp.res.Handled, rec.res.Handled, rp.stdout, rec.stdout)
		}
	}
	t.Logf("%d recordings, %d distinct outputs", n, len(outputs))
}

// TestReplayGuardedRacing: guards decide deliveries at publish time, so
// racing recordings replay without entries of their own.
func TestReplayGuardedRacing(t *testing.T) { recordReplayMany(t, guardedSrc) }

// TestReplaySharedRacing: a work group's round-robin is per producer and
// decided at publish time, so racing recordings replay identically.
func TestReplaySharedRacing(t *testing.T) { recordReplayMany(t, sharedSrc) }

// TestReplayRerouteDiverges: a program with the same shape whose guards
// send a message to another instance (the spawn arguments differ) replays
// as a divergence.
func TestReplayRerouteDiverges(t *testing.T) {
	src := `
topic Job { n: int }
locus Worker(slot: int) {
    on Job(j) if j.n % 2 == slot { print("worker " + str(slot) + " job " + str(j.n)); }
}
locus Boss { on start { for i in 0..4 { publish Job { n: i }; } } }
main {
    spawn Boss;
    spawn Worker(0) as even on pinned;
    spawn Worker(1) as odd on pinned;
}
`
	rec := record(t, compileProgram(t, src), host.Options{}, artifact.EnvWithheld)
	swapped := compileProgram(t, strings.Replace(strings.Replace(src, "Worker(0) as even", "Worker(9) as even", 1), "Worker(1) as odd", "Worker(0) as odd", 1))
	rp := replayRun(t, rec.art, swapped, replay.Options{})
	if !rp.report.Diverged() && rp.stats.Clean() {
		t.Fatalf("a rerouted replay did not diverge:\n%s", rp.explain())
	}
	t.Logf("%s", rp.explain())
}
