package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/host"
)

// runs is how many times each racing program is recorded and replayed
// (the stress requirement: at least 50 recordings, every one identical).
const runs = 50

// racingSrc has two pinned publishers and a pool publisher racing into a
// pool of workers, a pinned worker and a main-bus sink, whose output
// depends on the order it sees messages in.
const racingSrc = `
topic Job { from: string, n: int }
topic Done { worker: int, job: int, r: int }

locus Pub(name: string, count: int) {
    on start { for i in 0..count { publish Job { from: name, n: i }; } }
}

locus Worker(slot: int) {
    var handled: int = 0;
    on Job(j) {
        if (j.n + len(j.from)) % 2 != slot { return; }
        handled += 1;
        publish Done { worker: slot, job: j.n, r: std::rand::next_int(1000) };
    }
}

locus Sink {
    var sum: int = 0;
    var seen: int = 0;
    on Done(d) {
        seen += 1;
        sum = (sum * 31 + d.job * 7 + d.r + d.worker) % 1000003;
        if seen % 10 == 0 { print("sink " + str(seen) + " " + str(sum)); }
    }
    on Job(j) { sum = (sum * 17 + j.n + len(j.from)) % 1000003; }
}

locus Auditor {
    var last: int = 0;
    on Done(d) { last = d.r; if d.r == 999 { std::io::eprintln("rare " + str(d.job)); } }
}

main {
    spawn Pub("alpha", 40) as pa on pinned;
    spawn Pub("beta", 40) as pb on pinned;
    spawn Pub("gamma", 40) as pc on pool("pubs");
    spawn Worker(0) as w0 on pool("workers");
    spawn Worker(1) as w1 on pool("workers");
    spawn Worker(0) as w2 on pinned;
    spawn Sink;
    spawn Auditor on pool("workers");
}
`

func TestReplayRacingPublishers(t *testing.T) {
	p := compileProgram(t, racingSrc)
	outputs := map[string]bool{}
	for i := range runs {
		rec := record(t, p, host.Options{}, artifact.EnvWithheld)
		outputs[rec.stdout] = true
		rp := replayRun(t, rec.art, p, replay.Options{})
		if rp.report.Diverged() || !rp.stats.Clean() {
			t.Fatalf("run %d: replay diverged:\n%s", i, rp.explain())
		}
		if rp.stdout != rec.stdout || rp.stderr != rec.stderr {
			t.Fatalf("run %d: output differs:\n%s\nrecorded:\n%s", i, rp.stdout, rec.stdout)
		}
		if !equalInts(rp.res.Handled, rec.res.Handled) {
			t.Fatalf("run %d: handled %v, recorded %v", i, rp.res.Handled, rec.res.Handled)
		}
	}
	t.Logf("%d recordings, %d distinct outputs", runs, len(outputs))
}

// trapSrc traps on a pinned consumer at its 58th delivery while the main
// bus and a pool go on handling the same stream.
const trapSrc = `
topic Tick { n: int }
locus Source { on start { for i in 0..300 { publish Tick { n: i }; } } }
locus Counter {
    var seen: int = 0;
    on Tick(t) { seen += 1; if t.n % 100 == 0 { print("counter " + str(t.n)); } }
}
locus Fragile {
    on Tick(t) { if t.n == 57 { let z = t.n - 57; print(str(10 / z)); } }
}
locus Logger {
    var last: int = 0;
    on Tick(t) { last = t.n; }
}
main {
    spawn Source on pinned;
    spawn Counter;
    spawn Fragile on pinned;
    spawn Logger on pool("logs");
}
`

func TestReplayTrapStopsEveryConsumerAtItsRecordedPoint(t *testing.T) {
	p := compileProgram(t, trapSrc)
	for i := range runs {
		rec := record(t, p, host.Options{}, artifact.EnvWithheld)
		if rec.res.Verdict != host.VerdictTrap {
			t.Fatalf("recorded verdict %s", rec.res.Verdict)
		}
		rp := replayRun(t, rec.art, p, replay.Options{})
		if rp.report.Diverged() || !rp.stats.Clean() {
			t.Fatalf("run %d: replay diverged:\n%s", i, rp.explain())
		}
		if !equalInts(rp.res.Handled, rec.res.Handled) {
			t.Fatalf("run %d: handled %v, recorded %v", i, rp.res.Handled, rec.res.Handled)
		}
		if rp.res.Verdict != host.VerdictTrap || rp.stderr != rec.stderr {
			t.Fatalf("run %d: verdict %s, stderr %q, recorded %q", i, rp.res.Verdict, rp.stderr, rec.stderr)
		}
		if i == 0 {
			t.Logf("handled per consumer: %v; report: %s", rec.res.Handled, strings.TrimSpace(rec.stderr))
		}
	}
}

const exitSrc = `
topic Tick { n: int }
locus Source { on start { for i in 0..200 { publish Tick { n: i }; } } }
locus Quitter {
    on Tick(t) { if t.n == 40 { print("bye"); std::process::exit(5); print("still here"); } }
}
locus Counter {
    var seen: int = 0;
    on Tick(t) { seen += 1; if t.n % 25 == 0 { print("at " + str(t.n)); } }
}
main { spawn Source on pinned; spawn Quitter on pinned; spawn Counter as c1; spawn Counter as c2 on pool("p"); }
`

func TestReplayExit(t *testing.T) {
	p := compileProgram(t, exitSrc)
	for i := range 10 {
		rec := record(t, p, host.Options{}, artifact.EnvWithheld)
		if rec.res.Verdict != host.VerdictExit || rec.res.Code != 5 {
			t.Fatalf("recorded %s %d", rec.res.Verdict, rec.res.Code)
		}
		rp := replayRun(t, rec.art, p, replay.Options{})
		if rp.report.Diverged() || !rp.stats.Clean() {
			t.Fatalf("run %d: replay diverged:\n%s", i, rp.explain())
		}
		// Two consumers print: lines interleave differently, each
		// consumer's lines are the same.
		if rp.res.Code != 5 || !equalInts(rp.res.Handled, rec.res.Handled) || sortedLines(rp.stdout) != sortedLines(rec.stdout) {
			t.Fatalf("run %d: code %d handled %v (recorded %v)\n%s", i, rp.res.Code, rp.res.Handled, rec.res.Handled, rp.stdout)
		}
	}
}

const envSrc = `
locus A {
    on start {
        let s = std::os::env("HIDDEN_SECRET", "none");
        let home = std::os::env("NOT_SET_ANYWHERE", "default");
        print("secret has " + str(len(s)) + " bytes, home " + home);
    }
}
main { spawn A; }
`

func TestReplayEnvWithheld(t *testing.T) {
	p := compileProgram(t, envSrc)
	const secret = "correct-horse-battery"
	lookup := func(name string) (string, bool) {
		if name == "HIDDEN_SECRET" {
			return secret, true
		}
		return "", false
	}
	rec := record(t, p, host.Options{LookupEnv: lookup}, artifact.EnvWithheld)
	if bytes.Contains(rec.data, []byte(secret)) {
		t.Fatal("the withheld secret is in the artifact")
	}
	if !bytes.Contains(rec.data, []byte("HIDDEN_SECRET")) {
		t.Fatal("the variable's name is not in the artifact")
	}

	// Not supplied: a named missing input, the program traps.
	rp := replayRun(t, rec.art, p, replay.Options{})
	if d := rp.report.First(); d == nil || d.Kind != artifact.MissingInput || rp.stats.MissingInputs != 1 {
		t.Fatalf("without --env:\n%s", rp.explain())
	}
	if !strings.Contains(rp.stderr, "trap: replay: missing input HIDDEN_SECRET") {
		t.Errorf("stderr %q", rp.stderr)
	}

	// Supplied with the recorded length: identical, the value need not
	// be the same. A variable that was unset is withheld too (its
	// default's length), and needs supplying like any other.
	rp = replayRun(t, rec.art, p, replay.Options{Env: map[string]string{
		"HIDDEN_SECRET": strings.Repeat("x", len(secret)), "NOT_SET_ANYWHERE": "default"}})
	if rp.report.Diverged() || !rp.stats.Clean() || rp.stdout != rec.stdout {
		t.Fatalf("with --env:\n%s", rp.explain())
	}

	// Another length: a divergence.
	rp = replayRun(t, rec.art, p, replay.Options{Env: map[string]string{"HIDDEN_SECRET": "short", "NOT_SET_ANYWHERE": "default"}})
	if d := rp.report.First(); d == nil || d.Kind != artifact.MissingInput {
		t.Fatalf("with a wrong --env:\n%s", rp.explain())
	}

	// Recorded with values: the secret is in the artifact and the replay
	// needs nothing.
	full := record(t, p, host.Options{LookupEnv: lookup}, artifact.EnvFull)
	if !bytes.Contains(full.data, []byte(secret)) {
		t.Fatal("the full recording lacks the value")
	}
	rp = replayRun(t, full.art, p, replay.Options{})
	if rp.report.Diverged() || !rp.stats.Clean() {
		t.Fatalf("full policy:\n%s", rp.explain())
	}
	if rp.art.Header.EnvPolicy != artifact.EnvFull {
		t.Errorf("the replay was recorded with policy %s", rp.art.Header.EnvPolicy)
	}
}

const ingressSrc = `
topic Line { text: string }
topic Word { w: string }
locus Splitter { on Line(l) { for w in split(l.text, " ") { publish Word { w: w }; } } }
locus Counter {
    var counts: {string: int} = {};
    on Word(w) {
        if has(counts, w.w) { counts[w.w] += 1; } else { counts[w.w] = 1; }
        print(w.w + " " + str(counts[w.w]));
    }
}
main { spawn Splitter on pinned; spawn Counter; bind stdin to Line; }
`

func TestReplayIngress(t *testing.T) {
	p := compileProgram(t, ingressSrc)
	rec := record(t, p, host.Options{Stdin: strings.NewReader("a b a\r\nc a\n\nlast b")}, artifact.EnvWithheld)
	if rec.stdout != "a 1\nb 1\na 2\nc 1\na 3\n 1\nlast 1\nb 2\n" {
		t.Fatalf("recorded %q", rec.stdout)
	}
	rp := replayRun(t, rec.art, p, replay.Options{})
	if rp.report.Diverged() || !rp.stats.Clean() || rp.stdout != rec.stdout {
		t.Fatalf("replay:\n%s\n%q", rp.explain(), rp.stdout)
	}
}

func TestReplayChangedProgramDiverges(t *testing.T) {
	const v1 = `
topic T { n: int }
locus A {
    on start { publish T { n: 1 }; publish T { n: 2 }; }
    on T(t) { let now = std::time::now_ms(); print("tick " + str(t.n)); }
}
main { spawn A; }
`
	rec := record(t, compileProgram(t, v1), host.Options{}, artifact.EnvWithheld)

	// Another call in the second handler run: a journal miss there.
	v2 := strings.Replace(v1, "let now = std::time::now_ms();", "let now = if_first(t.n);", 1) + `
fn if_first(n: int) -> int { if n == 1 { return std::time::now_ms(); } return std::rand::next_int(10); }
`
	rp := replayRun(t, rec.art, compileProgram(t, v2), replay.Options{})
	d := rp.report.First()
	if d == nil || d.Kind != artifact.JournalMiss || d.At != (artifact.Coordinate{Consumer: 0, N: 2}) {
		t.Fatalf("first divergence:\n%s", rp.explain())
	}
	want := "trap: replay: journal miss: consumer 0 call #0 expected std::time::now_ms(), got std::rand::next_int(10)"
	if !strings.HasPrefix(rp.stderr, want) {
		t.Errorf("stderr %q\nwant %q", rp.stderr, want)
	}
	if !strings.Contains(d.Sentence, "std::time::now_ms() in the recording, but std::rand::next_int(10) in the replay") || d.Position == "" {
		t.Errorf("divergence %+v", d)
	}
	if rp.stats.JournalMisses != 1 || rp.res.Verdict != host.VerdictTrap {
		t.Errorf("stats %+v, verdict %s", rp.stats, rp.res.Verdict)
	}

	// Another payload: the first divergence is the publish.
	v3 := strings.Replace(v1, "publish T { n: 2 }", "publish T { n: 3 }", 1)
	rp = replayRun(t, rec.art, compileProgram(t, v3), replay.Options{})
	if d := rp.report.First(); d == nil || d.Kind != artifact.ChangedPayload || d.At != (artifact.Coordinate{Consumer: 0, N: 0}) {
		t.Fatalf("payload change:\n%s", rp.explain())
	}

	// Another output: compared, not trapped.
	v4 := strings.Replace(v1, `"tick "`, `"tock "`, 1)
	rp = replayRun(t, rec.art, compileProgram(t, v4), replay.Options{Quiet: true})
	if d := rp.report.First(); d == nil || d.Kind != artifact.ChangedOutput || rp.res.Verdict != host.VerdictQuiescent || rp.stdout != "" {
		t.Fatalf("output change:\n%s", rp.explain())
	}
}

const effectsSrc = `
locus A {
    on start {
        let before = std::fs::read_text("in.txt");
        std::fs::write_text("out.txt", "copy of " + before);
        std::time::sleep_ms(400);
        print("copied " + str(len(before)) + " bytes; exists " + str(std::fs::exists("out.txt")));
    }
}
main { spawn A; }
`

func TestReplayEffectsAreVirtual(t *testing.T) {
	p := compileProgram(t, effectsSrc)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := record(t, p, host.Options{Dir: dir}, artifact.EnvWithheld)
	if rec.stdout != "copied 5 bytes; exists true\n" {
		t.Fatalf("recorded %q %q", rec.stdout, rec.stderr)
	}

	// The replay reads nothing, writes nothing and does not sleep.
	empty := t.TempDir()
	start := time.Now()
	rp := replayWith(t, rec.art, p, replay.Options{}, host.Options{Dir: empty})
	if rp.report.Diverged() || !rp.stats.Clean() || rp.stdout != rec.stdout {
		t.Fatalf("replay:\n%s", rp.explain())
	}
	if d := time.Since(start); d > 300*time.Millisecond {
		t.Errorf("the replay took %v: the sleep was not skipped", d)
	}
	if _, err := os.Stat(filepath.Join(empty, "out.txt")); err == nil {
		t.Error("the virtual write reached the disk")
	}

	// With live effects the write happens (and is compared).
	rp = replayWith(t, rec.art, p, replay.Options{AllowLiveEffects: true}, host.Options{Dir: empty})
	if rp.report.Diverged() || !rp.stats.Clean() {
		t.Fatalf("live effects:\n%s", rp.explain())
	}
	if b, err := os.ReadFile(filepath.Join(empty, "out.txt")); err != nil || string(b) != "copy of hello" {
		t.Errorf("live write: %q, %v", b, err)
	}
}

func TestReplayAt(t *testing.T) {
	p := compileProgram(t, basicSrc)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	rp := replayRun(t, rec.art, p, replay.Options{At: &artifact.Coordinate{Consumer: 1, N: 3}})
	if rp.res.Verdict != host.VerdictHalted || rp.at == nil {
		t.Fatalf("verdict %s, view %v", rp.res.Verdict, rp.at)
	}
	v, err := json.Marshal(rp.at)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Coordinate string
		Pending    struct{ Target, Message, Topic string }
		State      map[string]int
		Recent     []struct{ Coordinate string }
	}
	if err := json.Unmarshal(v, &got); err != nil {
		t.Fatal(err)
	}
	if got.Coordinate != "1:3" || got.Pending.Target != "Adder" || got.Pending.Message != "0:3" || got.Pending.Topic != "Tick" ||
		got.State["seen"] != 3 || len(got.Recent) != 3 || got.Recent[2].Coordinate != "1:2" {
		t.Errorf("view %s", v)
	}
	if !strings.Contains(string(v), `"state":{"sum":`) {
		t.Errorf("state not by name in declaration order: %s", v)
	}
}

func TestReplayOnWasm(t *testing.T) {
	if testing.Short() {
		t.Skip("wasm engine: slow to start")
	}
	saved := engine
	engine = host.EngineWasm
	defer func() { engine = saved }()
	p := compileProgram(t, racingSrc)
	for i := range 3 {
		rec := record(t, p, host.Options{}, artifact.EnvWithheld)
		rp := replayRun(t, rec.art, p, replay.Options{})
		if rp.report.Diverged() || !rp.stats.Clean() || rp.stdout != rec.stdout {
			t.Fatalf("run %d: replay diverged:\n%s", i, rp.explain())
		}
	}
}

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReplayOrderTimeout(t *testing.T) {
	const v1 = `
topic X { n: int }
topic Nobody { n: int }
locus P1 { on start { publish X { n: 1 }; } }
locus P2 { on start { publish X { n: 2 }; } }
locus B { on X(x) { print("got " + str(x.n)); } }
main { spawn P1 on pinned; spawn P2 on pinned; spawn B on pinned; }
`
	rec := record(t, compileProgram(t, v1), host.Options{}, artifact.EnvWithheld)
	// P1's message becomes 1:1: B's recorded 1:0 never comes.
	v2 := strings.Replace(v1, "publish X { n: 1 };", "publish Nobody { n: 0 }; publish X { n: 1 };", 1)
	start := time.Now()
	rp := replayRun(t, rec.art, compileProgram(t, v2), replay.Options{HoldTimeout: 100 * time.Millisecond})
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the replay took %v", d)
	}
	if rp.stats.OrderTimeouts != 1 || rp.report.OrderTimeouts != 1 || !rp.report.Diverged() {
		t.Fatalf("order timeouts %d:\n%s", rp.stats.OrderTimeouts, rp.explain())
	}
	if rp.res.Verdict != host.VerdictQuiescent || sortedLines(rp.stdout) != "\ngot 1\ngot 2" {
		t.Errorf("verdict %s, stdout %q", rp.res.Verdict, rp.stdout)
	}
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errors.New("no space left on device")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestRecordingFailureHaltsTheRun(t *testing.T) {
	p := compileProgram(t, benchSrc)
	h, err := replay.NewHeader(p.img, identity)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := artifact.New(&failingWriter{n: 4096}, h, artifact.Options{Buffer: 16})
	if err != nil {
		t.Fatal(err)
	}
	j := replay.NewRecordingJournal(rec, p.img, artifact.EnvWithheld)
	res, err := host.Run(context.Background(), p.img, host.Options{Journal: j, Engine: engine})
	if err != nil {
		t.Fatal(err)
	}
	// Which consumer meets the failure first is a race: one about to
	// start a delivery halts the run; one inside a handler meets it at
	// its next journaled call, which traps uncatchably (kind record).
	// Either way the run stops and names the cause.
	switch {
	case res.Verdict == host.VerdictHalted && res.Halt != nil && strings.Contains(res.Halt.Error(), "no space left on device"):
	case res.Verdict == host.VerdictTrap && res.Trap != nil && res.Trap.Trap.Kind == vm.KindRecord &&
		strings.Contains(res.Trap.Trap.Message, "no space left on device"):
	default:
		t.Errorf("verdict %s, halt %v, trap %+v", res.Verdict, res.Halt, res.Trap)
	}
	if j.Err() == nil || j.Close() == nil {
		t.Error("the failure was not reported")
	}
	total := 0
	for _, n := range res.Handled {
		total += n
	}
	if total >= 30000 {
		t.Errorf("the run went on to the end (%d deliveries)", total)
	}
}

func TestReplayIngressTrap(t *testing.T) {
	const src = `
topic Line { text: string }
locus Echo {
    var n: int = 0;
    on Line(l) { n += 1; if n == 300 { assert(false, "line 300: " + l.text); } }
}
locus Tally { var n: int = 0; on Line(l) { n += len(l.text); } }
main { spawn Echo; spawn Tally on pinned; bind stdin to Line; }
`
	p := compileProgram(t, src)
	var in strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&in, "line %d\n", i)
	}
	for i := range runs {
		rec := record(t, p, host.Options{Stdin: strings.NewReader(in.String())}, artifact.EnvWithheld)
		if rec.res.Verdict != host.VerdictTrap {
			t.Fatalf("recorded %s", rec.res.Verdict)
		}
		rp := replayRun(t, rec.art, p, replay.Options{})
		if rp.report.Diverged() || !rp.stats.Clean() || !equalInts(rp.res.Handled, rec.res.Handled) {
			t.Fatalf("run %d: handled %v, recorded %v\n%s", i, rp.res.Handled, rec.res.Handled, rp.explain())
		}
		if i < 5 {
			t.Logf("handled %v", rec.res.Handled)
		}
	}
}

func TestReplayAcrossEngines(t *testing.T) {
	if testing.Short() || raceBuild {
		t.Skip("needs both engines")
	}
	saved := engine
	defer func() { engine = saved }()
	p := compileProgram(t, trapSrc)
	engine = host.EngineNative
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	engine = host.EngineWasm
	rp := replayRun(t, rec.art, p, replay.Options{})
	if rp.report.Diverged() || !rp.stats.Clean() || !equalInts(rp.res.Handled, rec.res.Handled) {
		t.Fatalf("native recording replayed on wasm:\n%s", rp.explain())
	}
}

func TestReplayStartupTrap(t *testing.T) {
	const src = `
locus A { var n: int = int("twelve"); on start { print("never"); } }
main { spawn A; }
`
	p := compileProgram(t, src)
	rec := record(t, p, host.Options{}, artifact.EnvWithheld)
	if rec.res.Verdict != host.VerdictTrap || !strings.Contains(rec.stderr, "at start-up") {
		t.Fatalf("recorded %s %q", rec.res.Verdict, rec.stderr)
	}
	rp := replayRun(t, rec.art, p, replay.Options{})
	if rp.report.Diverged() || !rp.stats.Clean() || rp.stderr != rec.stderr {
		t.Fatalf("replay:\n%s\n%q", rp.explain(), rp.stderr)
	}
}

// TestReplayCanceledRun replays runs interrupted by Ctrl-C: one inside a
// handler that never ends, one between handlers. Each replay stops where
// the recording did and is identical, without hanging on the endless
// handler.
func TestReplayCanceledRun(t *testing.T) {
	for _, c := range []struct{ name, src string }{
		{"inside a handler", `
locus M { on start { print("spinning"); var i = 0; while true { i += 1; } } }
main { spawn M; }
`},
		{"inside a state initialiser", `
fn spin() -> int { var i = 0; while true { i += 1; } return 0; }
locus L { var x: int = spin(); on start { print("never"); } }
main { spawn L; }
`},
		{"one consumer spinning, another busy", `
topic Tick { n: int }
locus Spin { var i: int = 0; on start { while true { i += 1; } } }
locus Chain {
    on start { publish Tick { n: 0 }; }
    on Tick(t) { var k = 0; while k < 100000 { k += 1; } print(str(t.n)); publish Tick { n: t.n + 1 }; }
}
main { spawn Spin on pinned; spawn Chain; }
`},
		{"between handlers", `
topic Tick { n: int }
locus M {
    on start { publish Tick { n: 0 }; }
    on Tick(t) { std::time::sleep_ms(20); print(str(t.n)); publish Tick { n: t.n + 1 }; }
}
main { spawn M; }
`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := compileProgram(t, c.src)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(150*time.Millisecond, cancel)
			rec := recordCtx(t, ctx, p, host.Options{}, artifact.EnvWithheld)
			if rec.art.Trailer.Verdict != artifact.VerdictCanceled || rec.art.Trailer.ExitCode != host.ExitCanceled {
				t.Fatalf("recorded %s (%d), want canceled (130)", rec.art.Trailer.Verdict, rec.art.Trailer.ExitCode)
			}
			done := make(chan *replayed, 1)
			go func() { done <- replayRun(t, rec.art, p, replay.Options{}) }()
			select {
			case rp := <-done:
				if !rp.stats.Clean() || rp.report.Diverged() {
					t.Errorf("diverged: %+v %+v", rp.stats.Findings, rp.report.Divergences)
				}
				if rp.stdout != rec.stdout {
					t.Errorf("replay printed %q, the recording %q", rp.stdout, rec.stdout)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the replay did not stop")
			}
		})
	}
}

// TestInterruptStopsASleepLoopAtOnce interrupts a handler that sleeps in a
// loop: the sleep in progress is cut short and the handler ends at its
// next call, which neither runs nor is journaled. Before, every sleep
// after the interrupt returned at once and the loop ran on to the next
// poll: two seconds and 1.4 million recorded sleeps. The replay is
// identical, and a replay interrupted in turn stops as fast.
func TestInterruptStopsASleepLoopAtOnce(t *testing.T) {
	saved := engine
	defer func() { engine = saved }()
	kinds := []host.EngineKind{host.EngineNative, host.EngineWasm}
	if raceBuild {
		kinds = kinds[1:]
	}
	p := compileProgram(t, `
locus M { on start { print("sleeping"); while true { std::time::sleep_ms(1000); } } }
main { spawn M; }
`)
	for _, kind := range kinds {
		t.Run(kind.String(), func(t *testing.T) {
			engine = kind
			ctx, cancel := context.WithCancel(context.Background())
			clock := &interruptingClock{cancel: cancel}
			rec := recordCtx(t, ctx, p, host.Options{Clock: clock}, artifact.EnvWithheld)
			if took := time.Since(clock.canceledAt); clock.canceledAt.IsZero() || took > time.Second {
				t.Errorf("the run took %v to stop after the interrupt", took)
			}
			if rec.res.Verdict != host.VerdictCanceled || rec.res.Code != host.ExitCanceled ||
				rec.art.Trailer.Verdict != artifact.VerdictCanceled || rec.art.Trailer.ExitCode != host.ExitCanceled {
				t.Fatalf("recorded %s (%d), trailer %s (%d), want canceled (130)",
					rec.res.Verdict, rec.res.Code, rec.art.Trailer.Verdict, rec.art.Trailer.ExitCode)
			}
			sleeps := 0
			for i := range rec.art.Len() {
				if inv, ok := rec.art.Entry(i).Body.(artifact.Invocation); ok && inv.Primitive == "std::time::sleep_ms" {
					sleeps++
				}
			}
			// The one sleep in progress at the interrupt, and none after.
			if sleeps != 1 {
				t.Errorf("%d sleeps recorded, want the one the interrupt cut short", sleeps)
			}
			rp := replayRun(t, rec.art, p, replay.Options{})
			if rp.report.Diverged() || !rp.stats.Clean() || rp.stdout != rec.stdout {
				t.Fatalf("replay:\n%s\n%q", rp.explain(), rp.stdout)
			}
		})
	}
}

// interruptingClock is the system clock, except that the first sleep
// cancels the run 50 ms after it began: the interrupt comes while the
// program sleeps, whatever the engine's start-up time.
type interruptingClock struct {
	once       sync.Once
	cancel     context.CancelFunc
	canceledAt time.Time // written before cancel, read after the run
}

func (c *interruptingClock) Now() time.Time { return time.Now() }

func (c *interruptingClock) Sleep(ctx context.Context, d time.Duration) {
	c.once.Do(func() {
		time.AfterFunc(50*time.Millisecond, func() { c.canceledAt = time.Now(); c.cancel() })
	})
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// TestInterruptedReplayStopsAtOnce interrupts a replay (Ctrl-C during
// `hale replay`): a recording of a busy handler that calls a primitive
// now and then, replayed, stops within a second of the interrupt, as
// canceled, rather than at the end of the recording. Both run on the wasm
// engine, whose second tier compiles the loop (the interrupt must reach
// compiled code), so the replay lasts about as long as the 500 ms
// recording and the interrupt 50 ms in finds it running: a native
// recording replayed on wasm can now reach its end first (a replay that
// does stops where the recording did, as quiescent, which is right but
// not what this test is about).
func TestInterruptedReplayStopsAtOnce(t *testing.T) {
	if testing.Short() || raceBuild {
		t.Skip("needs both engines")
	}
	saved := engine
	defer func() { engine = saved }()
	p := compileProgram(t, `
locus M {
    on start {
        std::io::eprintln("started");
        var i = 0;
        while true { i += 1; if i % 10000 == 0 { let t = std::time::now_ms(); } }
    }
}
main { spawn M; }
`)
	engine = host.EngineWasm
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	rec := recordCtx(t, ctx, p, host.Options{}, artifact.EnvWithheld)
	if rec.art.Trailer.Verdict != artifact.VerdictCanceled {
		t.Fatalf("recorded %s", rec.art.Trailer.Verdict)
	}

	h, err := replay.ReplayHeader(rec.art, p.img, p.info())
	if err != nil {
		t.Fatal(err)
	}
	own, err := artifact.New(io.Discard, h, artifact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := replay.NewReplayer(rec.art, p.img, replay.Options{Record: own})
	replayCtx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	var interruptedAt time.Time
	opts := host.Options{Engine: host.EngineWasm, Stderr: writerFunc(func(b []byte) (int, error) {
		// The program has started: interrupt the replay a little later.
		time.AfterFunc(50*time.Millisecond, func() { interruptedAt = time.Now(); interrupt() })
		return len(b), nil
	})}
	r.Install(&opts)
	res, err := host.Run(replayCtx, p.img, opts)
	took := time.Since(interruptedAt)
	if !errors.Is(err, context.Canceled) || res.Verdict != host.VerdictCanceled || res.Code != host.ExitCanceled {
		t.Fatalf("replay: %v %+v", err, res)
	}
	if interruptedAt.IsZero() || took > time.Second {
		t.Errorf("the replay took %v to stop after the interrupt", took)
	}
}

// writerFunc is an io.Writer made of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestOutOfMemoryIsRecordedAndReplayed records a program whose data grows
// without end under a small memory limit, on both engines: the artifact's
// header keeps the limit, the trap "out of memory" is recorded like any
// other, and the replay (on the same engine and on the other one), which
// runs with the recorded limit, traps at the same point: identical.
func TestOutOfMemoryIsRecordedAndReplayed(t *testing.T) {
	saved := engine
	defer func() { engine = saved }()
	kinds := []host.EngineKind{host.EngineNative, host.EngineWasm}
	if raceBuild {
		kinds = kinds[1:]
	}
	p := compileProgram(t, `
locus M { on start { var xs: [[int]] = []; while true { push(xs, [1,2,3,4,5,6,7,8]); } } }
main { spawn M; }
`)
	const limit = 8 << 20
	var traps []artifact.Trap
	for _, kind := range kinds {
		engine = kind
		rec := record(t, p, host.Options{MemoryLimit: limit}, artifact.EnvWithheld)
		if rec.res.Verdict != host.VerdictTrap || rec.res.Code != host.ExitTrap {
			t.Fatalf("%v: recorded %+v", kind, rec.res)
		}
		if rec.art.Header.MemoryLimit != limit {
			t.Errorf("%v: header memory limit %d, want %d", kind, rec.art.Header.MemoryLimit, limit)
		}
		var trap *artifact.Trap
		for i := range rec.art.Len() {
			if tr, ok := rec.art.Entry(i).Body.(artifact.Trap); ok {
				trap = &tr
			}
		}
		if trap == nil || trap.Message != "out of memory: the consumer's data outgrew its limit of 8 MiB" {
			t.Fatalf("%v: recorded trap %+v", kind, trap)
		}
		traps = append(traps, *trap)
		for _, other := range kinds {
			engine = other
			rp := replayRun(t, rec.art, p, replay.Options{})
			if rp.report.Diverged() || !rp.stats.Clean() || rp.stderr != rec.stderr {
				t.Fatalf("%v recording replayed on %v:\n%s\n%q", kind, other, rp.explain(), rp.stderr)
			}
			if rp.art.Header.MemoryLimit != limit {
				t.Errorf("the replay's own recording has memory limit %d", rp.art.Header.MemoryLimit)
			}
		}
	}
	if len(traps) == 2 && (traps[0].Position != traps[1].Position || !slices.Equal(traps[0].Stack, traps[1].Stack)) {
		t.Errorf("native trapped at %s, wasm at %s", traps[0].Position, traps[1].Position)
	}
}
