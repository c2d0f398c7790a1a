package replay_test

import (
	"strings"
	"testing"

	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// spawnLoopSrc: 60 pool workers and 4 pinned ones from spawn loops; the
// pinned workers race each other and the pool for the tally's queue.
const spawnLoopSrc = `const N: int = 60;
topic Job { n: int }
topic Done { id: int, n: int }
locus Boss { on start { for k in 0..N + 4 { publish Job { n: k }; } } }
locus Worker(id: int, scale: int) {
    var handled: int = 0;
    on Job(j) { handled += 1; if j.n == id { publish Done { id: id, n: j.n * scale }; } }
}
locus Tally {
    var order: [int] = [];
    on Done(d) {
        push(order, d.id);
        if len(order) == N + 4 { print("done " + str(order)); }
    }
}
main {
    spawn Boss;
    for i in 0..N { spawn Worker(i, i) as workers[i] on pool("w"); }
    for g in 0..2 {
        for k in 0..2 { spawn Worker(N + g * 2 + k, 1000) as solo[g][k] on pinned; }
    }
    spawn Tally;
}
`

// TestReplaySpawnLoop records a program whose instances come from spawn
// loops (the tally prints the order the racing workers reached it in,
// 50 recordings): the consumer table holds the bracketed names exactly as written,
// every recording replays identically, and --at names the target with
// its brackets.
func TestReplaySpawnLoop(t *testing.T) {
	p := compileProgram(t, spawnLoopSrc)
	n := runs
	if raceBuild || testing.Short() {
		n = 5 // the race detector makes each recording several times slower
	}
	for i := range n {
		rec := record(t, p, host.Options{}, artifact.EnvWithheld)
		if !strings.HasPrefix(rec.stdout, "done [") || strings.Count(rec.stdout, ",") != 63 {
			t.Fatalf("recorded %q", rec.stdout)
		}
		var names []string
		for _, c := range rec.art.Header.Consumers {
			names = append(names, c.Kind+":"+c.Name+"="+strings.Join(c.Instances, ","))
		}
		table := strings.Join(names, " ")
		for _, want := range []string{
			"pool:w=workers[0],workers[1],",
			",workers[59] ",
			"pinned:solo[0][0]=solo[0][0] pinned:solo[0][1]=solo[0][1] pinned:solo[1][0]=solo[1][0] pinned:solo[1][1]=solo[1][1]",
		} {
			if !strings.Contains(table, want) {
				t.Fatalf("consumer table lacks %q:\n%s", want, table)
			}
		}
		rp := replayRun(t, rec.art, p, replay.Options{})
		if rp.report.Diverged() || !rp.stats.Clean() || !equalInts(rp.res.Handled, rec.res.Handled) || rp.stdout != rec.stdout {
			t.Fatalf("run %d: replay differs:\n%s", i, rp.explain())
		}
	}

	// --at on a pinned worker's second delivery (its start is none: it
	// has no on start, so N=1 is the second Job).
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	var solo uint32
	for _, c := range rec.art.Header.Consumers {
		if c.Name == "solo[1][0]" {
			solo = c.ID
		}
	}
	rp := replayRun(t, rec.art, p, replay.Options{At: &artifact.Coordinate{Consumer: solo, N: 1}})
	if rp.at == nil || rp.at.Pending.Target != "solo[1][0]" || len(rp.at.Recent) != 1 || rp.at.Recent[0].Target != "solo[1][0]" {
		t.Fatalf("--at view %+v", rp.at)
	}
	if !strings.Contains(string(rp.at.State), `"handled":1`) {
		t.Errorf("state %s", rp.at.State)
	}
}

// manyPinnedSrc: 40 pinned workers race for the tally's queue. On the
// wasm engine, with more pinned consumers than host shares guests among,
// the recorded run puts several workers in each guest; the replay (which
// orders deliveries) gives each its own.
const manyPinnedSrc = `const N: int = 40;
topic Job { n: int }
topic Done { id: int, n: int }
locus Boss { on start { for k in 0..N { publish Job { n: k }; } } }
locus Worker(id: int) {
    var seen: int = 0;
    on Job(j) { seen += j.n; if j.n == id { publish Done { id: id, n: seen }; } }
}
locus Tally {
    var order: [int] = [];
    on Done(d) {
        push(order, d.id * 10000 + d.n);
        if len(order) == N { print("done " + str(order)); }
    }
}
main {
    spawn Boss;
    for i in 0..N { spawn Worker(i) as workers[i] on pinned; }
    spawn Tally;
}
`

// TestReplayManyPinned: recordings of a run whose pinned consumers share
// guests replay identically, on both engines.
func TestReplayManyPinned(t *testing.T) {
	p := compileProgram(t, manyPinnedSrc)
	for _, engine := range []host.EngineKind{host.EngineWasm, host.EngineNative} {
		for i := range 3 {
			rec := record(t, p, host.Options{Engine: engine}, artifact.EnvWithheld)
			if !strings.HasPrefix(rec.stdout, "done [") || strings.Count(rec.stdout, ",") != 39 {
				t.Fatalf("%v: recorded %q", engine, rec.stdout)
			}
			rp := replayRun(t, rec.art, p, replay.Options{})
			if rp.report.Diverged() || !rp.stats.Clean() || !equalInts(rp.res.Handled, rec.res.Handled) || rp.stdout != rec.stdout {
				t.Fatalf("%v run %d: replay differs:\n%s", engine, i, rp.explain())
			}
		}
	}
}
