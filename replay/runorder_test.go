package replay_test

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// runsOrder is the replayer as the run's Order, counting the deliveries
// it gave in runs of more than one.
type runsOrder struct {
	r    *replay.Replayer
	runs *atomic.Int64
}

func (o runsOrder) Next(c int, pending []host.Delivery) (int, time.Duration) {
	return o.r.Next(c, pending)
}

func (o runsOrder) NextRun(c int, pending []host.Delivery, most int) (int, int, time.Duration) {
	pick, count, wait := o.r.NextRun(c, pending, most)
	if count > 1 {
		o.runs.Add(int64(count))
	}
	return pick, count, wait
}

// nextOnly is the replayer as an Order that gives one delivery at a
// time (it hides NextRun).
type nextOnly struct{ r *replay.Replayer }

func (o nextOnly) Next(c int, pending []host.Delivery) (int, time.Duration) {
	return o.r.Next(c, pending)
}

// replayOrdered replays art as replayWith does, with the replayer's
// Order wrapped by wrap; it returns the replay's own recording, its
// output and the replayer's stats.
func replayOrdered(t *testing.T, art *artifact.Artifact, p *program, wrap func(*replay.Replayer) host.Order) ([]byte, string, replay.Stats, host.Result) {
	t.Helper()
	h, err := replay.ReplayHeader(art, p.img, p.info())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rec, err := artifact.New(&buf, h, artifact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := replay.NewReplayer(art, p.img, replay.Options{Record: rec})
	var stdout, stderr bytes.Buffer
	opts := host.Options{Stdout: &stdout, Stderr: &stderr, Engine: engine}
	r.Install(&opts)
	opts.Order = wrap(r)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := host.Run(ctx, p.img, opts)
	if err != nil {
		t.Fatalf("replay run: %v", err)
	}
	if err := r.Recording().Close(); err != nil {
		t.Fatal(err)
	}
	again, err := artifact.Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	stats := r.Stats()
	stats.Apply(artifact.Differ{Decode: replay.ProgramDecoder(p.img)}.Diff(art, again))
	return buf.Bytes(), stdout.String() + stderr.String(), stats, res
}

// runOrderCases: a main-bus chain (each delivery publishes the next, as
// msgs.hl), a pinned counter, a trap on one consumer while another has
// deliveries queued, a consumer fed by two producers on threads of their
// own (the recorded order is seldom the replay's arrival order, so the
// replayer holds and looks past the window of pending deliveries it is
// shown first), an exit with thousands of deliveries queued behind it,
// and an exit in the middle of a queue.
var runOrderCases = []struct{ name, src, want string }{
	{"chain", `
topic Tick { n: int, note: string }
locus Counter {
    var count: int = 0;
    on start { publish Tick { n: 1, note: "tick" }; }
    on Tick(t) {
        count += 1;
        if t.n < 3000 { publish Tick { n: t.n + 1, note: t.note }; }
        if count % 1000 == 0 { print("handled " + str(count)); }
    }
}
main { spawn Counter; }
`, "handled 3000"},
	{"counting", `
topic Incr { by: int }
topic Retrieve { n: int }
topic Total { count: int }
locus Producer {
    on start { for i in 0..2000 { publish Incr { by: i % 3 }; } publish Retrieve { n: 2000 }; }
    on Total(t) { print("counted " + str(t.count)); }
}
locus Counter {
    var count: int = 0;
    on Incr(m) { count += m.by; }
    on Retrieve(r) { publish Total { count: count }; }
}
main { spawn Producer on pinned; spawn Counter on pinned; }
`, "counted 1999"},
	{"trap", `
topic A { n: int }
topic B { n: int }
locus Src { on start { for i in 0..400 { publish A { n: i }; publish B { n: i }; } } }
locus Sink { var s: int = 0; on A(a) { s += 10 / (300 - a.n); } }
locus Other { var s: int = 0; on B(b) { s += b.n; if b.n % 100 == 0 { print("other " + str(b.n)); } } }
main { spawn Src; spawn Sink on pinned; spawn Other; }
`, ""},
	{"two-producers", `
topic A { n: int }
topic B { n: int }
locus SrcA { on start { for i in 0..3000 { publish A { n: i }; } } }
locus SrcB { on start { for i in 0..3000 { publish B { n: i }; } } }
locus Sink {
    var c: int = 0;
    var last: int = 0;
    on A(a) { c += 1; last = (last * 3 + a.n) % 1000003; if c == 6000 { print("sink " + str(last)); } }
    on B(b) { c += 1; last = (last * 5 + b.n) % 1000003; if c == 6000 { print("sink " + str(last)); } }
}
main { spawn SrcA on pinned; spawn SrcB on pinned; spawn Sink on pinned; }
`, "sink "},
	{"exit-deep", `
topic A { n: int }
locus Src { on start { for i in 0..5000 { publish A { n: i }; } } }
locus Sink {
    var c: int = 0;
    on A(a) { c += 1; if c == 100 { std::process::exit(5); } }
}
main { spawn Src on pinned; spawn Sink on pinned; }
`, ""},
	{"exit", `
topic A { n: int }
locus Src { on start { for i in 0..500 { publish A { n: i }; } } }
locus Sink {
    var c: int = 0;
    on A(a) { c += 1; if c % 50 == 0 { print(str(c)); } if c == 250 { std::process::exit(3); } }
}
main { spawn Src; spawn Sink; }
`, "250"},
}

// entriesByConsumer is byConsumer of an artifact with its header's
// creation time set aside.
func entriesByConsumer(t *testing.T, data []byte) []byte {
	t.Helper()
	a, err := artifact.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	a.Header.Created = 0
	out, err := artifact.Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	return byConsumer(t, out)
}

// TestReplayGivesRuns replays recordings of the run-order cases on each
// engine with the replayer giving runs of deliveries (NextRun) and one
// at a time (Next only): both replays are clean, print what the
// recording printed, and record the same artifact; the counter, the
// trap's and the exit's queues are given runs (the chain never has more
// than one delivery pending).
func TestReplayGivesRuns(t *testing.T) {
	for _, c := range runOrderCases {
		t.Run(c.name, func(t *testing.T) {
			p := compileProgram(t, c.src)
			for _, e := range engines() {
				onEngine(e, func() {
					rc := record(t, p, host.Options{}, artifact.EnvWithheld)
					if !strings.Contains(rc.stdout, c.want) {
						t.Fatalf("%v: recorded output %q, want %q", e, rc.stdout, c.want)
					}
					var runs atomic.Int64
					withRuns, outRuns, statsRuns, resRuns := replayOrdered(t, rc.art, p, func(r *replay.Replayer) host.Order { return runsOrder{r, &runs} })
					one, outOne, statsOne, resOne := replayOrdered(t, rc.art, p, func(r *replay.Replayer) host.Order { return nextOnly{r} })
					for _, s := range []replay.Stats{statsRuns, statsOne} {
						if !s.Clean() {
							t.Fatalf("%v: replay not clean: %+v", e, s.Findings)
						}
					}
					want := rc.stdout + rc.stderr
					if outRuns != want || outOne != want {
						t.Errorf("%v: replays printed %q (runs) and %q (one at a time), the recording %q", e, outRuns, outOne, want)
					}
					if resRuns.Verdict != rc.res.Verdict || resOne.Verdict != rc.res.Verdict || resRuns.Code != rc.res.Code {
						t.Errorf("%v: verdicts %s %s, recorded %s", e, resRuns.Verdict, resOne.Verdict, rc.res.Verdict)
					}
					if a, b := entriesByConsumer(t, withRuns), entriesByConsumer(t, one); !bytes.Equal(a, b) {
						t.Errorf("%v: the replays' recordings differ (%d and %d bytes of entries)", e, len(a), len(b))
					}
					if (c.name == "counting" || c.name == "exit") && runs.Load() == 0 {
						t.Errorf("%v: no deliveries given in runs", e)
					}
					t.Logf("%v: %d deliveries given in runs", e, runs.Load())
				})
			}
		})
	}
}
