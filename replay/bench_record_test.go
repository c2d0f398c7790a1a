package replay_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// The benchmarks in this file put a recorded run beside an unrecorded one
// and a replay beside the recorded run, on both engines. Each iteration
// runs every variant once, in turn, so that the variants compared share
// the machine's load, and reports per variant the median over the
// iterations of
//
//	VARIANT-ms    wall time of the run
//	VARIANT-cpums CPU time of the process during the run (every goroutine)
//
// and ratios of those medians. ns/op is a whole iteration: not a figure
// to quote. Use a fixed iteration count:
//
//	go test ./replay -run XXX -bench RecordingOverhead -benchtime 5x

// benchMsgsSrc is 200,000 messages on the main bus: a chain in which each
// delivery publishes the next message. It is the program of
// cmd/hale/cli/testdata/bench/msgs.hl.
const benchMsgsSrc = `
const N: int = 200000;
topic Tick { n: int, note: string }
locus Counter {
    var count: int = 0;
    on start { publish Tick { n: 1, note: "tick" }; }
    on Tick(t) {
        count += 1;
        if t.n < N { publish Tick { n: t.n + 1, note: t.note }; }
        if count == N { print("handled " + str(count)); }
    }
}
main { spawn Counter; }
`

// benchMsgsRandSrc is benchMsgsSrc with a journaled call (a random
// number) in every handler (msgs_rand.hl).
const benchMsgsRandSrc = `
const N: int = 200000;
topic Tick { n: int, note: string }
locus Counter {
    var count: int = 0;
    var sum: int = 0;
    on start { publish Tick { n: 1, note: "tick" }; }
    on Tick(t) {
        count += 1;
        sum += std::rand::next_int(100);
        if t.n < N { publish Tick { n: t.n + 1, note: t.note }; }
        if count == N { print("handled " + str(count)); }
    }
}
main { spawn Counter; }
`

// benchSleepSrc sleeps twenty times 50 ms, 1 s in all (sleep.hl).
const benchSleepSrc = `
topic Tick { n: int }
locus Sleeper {
    on start { publish Tick { n: 1 }; }
    on Tick(t) {
        std::time::sleep_ms(50);
        if t.n < 20 { publish Tick { n: t.n + 1 }; } else { print("slept 20 times"); }
    }
}
main { spawn Sleeper; }
`

var benchMsgPrograms = []struct{ name, src string }{
	{"msgs", benchMsgsSrc},
	{"msgs_rand", benchMsgsRandSrc},
}

var benchEngines = []host.EngineKind{host.EngineNative, host.EngineWasm}

// benchVariant is one way of running the program in a side-by-side benchmark;
// it returns an error only when something really failed.
type benchVariant struct {
	name string
	run  func() error
}

// benchSideBySide runs the variants once per iteration, rotating which goes
// first, and reports the median wall and CPU time of each. It returns the
// wall medians by name.
func benchSideBySide(b *testing.B, vs []benchVariant) map[string]time.Duration {
	b.Helper()
	wall, _ := benchSideBySideCPU(b, vs)
	return wall
}

// benchSideBySideCPU is benchSideBySide returning the CPU medians too.
func benchSideBySideCPU(b *testing.B, vs []benchVariant) (wall, cpu map[string]time.Duration) {
	b.Helper()
	walls := map[string][]time.Duration{}
	cpus := map[string][]time.Duration{}
	i := 0
	for b.Loop() {
		// Rotate the order unless a variant depends on the one before
		// it (a replay needs its recording): those keep their order.
		order := slices.Clone(vs)
		if len(vs) == 2 && !benchDependent(vs) && i%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		i++
		for _, v := range order {
			b.StopTimer()
			runtime.GC() // every run starts without the garbage of the last
			b.StartTimer()
			cpu := benchCPU()
			start := time.Now()
			err := v.run()
			wall := time.Since(start)
			cpu = benchCPU() - cpu
			if err != nil {
				b.Fatalf("%s: %v", v.name, err)
			}
			walls[v.name] = append(walls[v.name], wall)
			cpus[v.name] = append(cpus[v.name], cpu)
		}
	}
	wall, cpu = map[string]time.Duration{}, map[string]time.Duration{}
	for _, v := range vs {
		wall[v.name] = benchMedian(walls[v.name])
		cpu[v.name] = benchMedian(cpus[v.name])
		b.ReportMetric(benchMS(wall[v.name]), v.name+"-ms")
		b.ReportMetric(benchMS(cpu[v.name]), v.name+"-cpums")
	}
	return wall, cpu
}

// benchDependent reports whether the variants must run in the given order.
func benchDependent(vs []benchVariant) bool {
	for _, v := range vs {
		if v.name != "plain" && v.name != "rec" {
			return true
		}
	}
	return false
}

func benchMedian(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func benchMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchCPU returns the process's user and system CPU time.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchCheckRun turns a run's outcome into an error unless it ended quiescent.
func benchCheckRun(res host.Result, err error) error {
	if err != nil {
		return err
	}
	if res.Code != 0 {
		return fmt.Errorf("run ended %s with code %d", res.Verdict, res.Code)
	}
	return nil
}

// benchPlainRun runs p unrecorded, as `hale run` does without LOTUS_OBS_RECORD.
func benchPlainRun(p *program, kind host.EngineKind) error {
	return benchCheckRun(host.Run(context.Background(), p.img, host.Options{Engine: kind, Stdout: io.Discard}))
}

// benchRecordedRun runs p recorded to path, wired as `hale run` does with
// LOTUS_OBS_RECORD: a Recorder writing the file, wrapped in a
// RecordingJournal installed as the run's Journal, closed after the run.
func benchRecordedRun(p *program, kind host.EngineKind, path string) error {
	info := identity
	info.EnvPolicy = artifact.EnvWithheld
	h, err := replay.NewHeader(p.img, info)
	if err != nil {
		return err
	}
	rec, err := artifact.Create(path, h, artifact.Options{})
	if err != nil {
		return err
	}
	j := replay.NewRecordingJournal(rec, p.img, artifact.EnvWithheld)
	runErr := benchCheckRun(host.Run(context.Background(), p.img, host.Options{Engine: kind, Stdout: io.Discard, Journal: j}))
	if err := j.Close(); err != nil {
		return err
	}
	return runErr
}

// benchReplayFrom replays the artifact at path. Without full it does what
// `hale replay --quiet` does: it reads and admits the artifact and
// replays it, the replayer judging the run. With full it does what `hale
// replay --quiet --diff` adds: the replay also records itself to a file,
// which is read back and compared with the recording entry by entry.
func benchReplayFrom(p *program, kind host.EngineKind, path string, full bool) error {
	data, err := artifact.ReadFile(path)
	if err != nil {
		return err
	}
	art, err := admitData(data, artifact.Identity{BuildDigest: identity.BuildDigest, ShapeHash: identity.ShapeHash})
	if err != nil {
		return err
	}
	ro := replay.Options{Quiet: true}
	again := path + ".replayed"
	if full {
		h, err := replay.ReplayHeader(art, p.img, identity)
		if err != nil {
			return err
		}
		if ro.Record, err = artifact.Create(again, h, artifact.Options{}); err != nil {
			return err
		}
	}
	defer replay.LowerGC(art)() // as replay.Run does
	r := replay.NewReplayer(art, p.img, ro)
	opts := host.Options{Engine: kind, Stdout: io.Discard}
	r.Install(&opts)
	runErr := benchCheckRun(host.Run(context.Background(), p.img, opts))
	stats := r.Stats()
	if full {
		if err := r.Recording().Close(); err != nil {
			return err
		}
		data, err := os.ReadFile(again)
		if err != nil {
			return err
		}
		replayed, err := artifact.Index(data) // as hale replay --diff reads it
		if err != nil {
			return err
		}
		rep := artifact.Differ{Decode: replay.ProgramDecoder(p.img)}.Diff(art, replayed)
		stats.Apply(rep)
		if rep.Diverged() {
			return fmt.Errorf("replay diverged: %+v", rep.Divergences[0])
		}
	}
	if runErr != nil {
		return runErr
	}
	if !stats.Clean() {
		return fmt.Errorf("replay diverged: %+v", stats.Findings[0])
	}
	return nil
}

// BenchmarkRecordingOverhead runs each message-heavy program unrecorded
// (plain) and recorded (rec) and reports rec/plain (wall) and
// rec/plain-cpu, then the artifact's size and what its entries cost
// (see reportArtifact).
func BenchmarkRecordingOverhead(b *testing.B) {
	for _, bp := range benchMsgPrograms {
		p := compileProgram(b, bp.src)
		for _, kind := range benchEngines {
			b.Run(bp.name+"/"+kind.String(), func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "run.halerec")
				m := benchSideBySide(b, []benchVariant{
					{"plain", func() error { return benchPlainRun(p, kind) }},
					{"rec", func() error { return benchRecordedRun(p, kind, path) }},
				})
				b.ReportMetric(float64(m["rec"])/float64(m["plain"]), "rec/plain")
				b.ReportMetric(200000/m["plain"].Seconds(), "plain-msgs/s")
				b.ReportMetric(200000/m["rec"].Seconds(), "rec-msgs/s")
				reportArtifact(b, path)
			})
		}
	}
}

// BenchmarkReplaySpeed records each message-heavy program (rec) and
// replays that recording: replay as `hale replay` does (artifact read,
// admitted and replayed), replay-full as `hale replay --diff` does (the
// replay also recording itself, then the two artifacts compared).
// Ratios: replay/rec and replay-full/rec.
func BenchmarkReplaySpeed(b *testing.B) {
	for _, bp := range benchMsgPrograms {
		p := compileProgram(b, bp.src)
		for _, kind := range benchEngines {
			b.Run(bp.name+"/"+kind.String(), func(b *testing.B) {
				benchReplayBeside(b, p, kind)
			})
		}
	}
}

// BenchmarkReplaySleep records a program that sleeps 1 s in all and
// replays it; the replay skips the sleeps.
func BenchmarkReplaySleep(b *testing.B) {
	p := compileProgram(b, benchSleepSrc)
	for _, kind := range benchEngines {
		b.Run(kind.String(), func(b *testing.B) { benchReplayBeside(b, p, kind) })
	}
}

func benchReplayBeside(b *testing.B, p *program, kind host.EngineKind) {
	path := filepath.Join(b.TempDir(), "run.halerec")
	m := benchSideBySide(b, []benchVariant{
		{"rec", func() error { return benchRecordedRun(p, kind, path) }},
		{"replay", func() error { return benchReplayFrom(p, kind, path, false) }},
		{"replay-full", func() error { return benchReplayFrom(p, kind, path, true) }},
	})
	b.ReportMetric(float64(m["replay"])/float64(m["rec"]), "replay/rec")
	b.ReportMetric(float64(m["replay-full"])/float64(m["rec"]), "replay-full/rec")
}

// benchCounter counts the bytes written through it.
type benchCounter struct{ n int }

func (w *benchCounter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// reportArtifact reports the artifact's size and entry count, and for
// delivery, publish and invocation entries their mean encoded size
// (B/KIND) and the mean framing beside the content (frame/KIND): the
// bytes that are not the text of strings or the content of byte strings
// (kind, length, consumer, seq, length prefixes, identities, flags), as
// in TestFramingOverhead.
func reportArtifact(b *testing.B, path string) {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	a, err := artifact.Decode(data)
	if err != nil {
		b.Fatal(err)
	}
	// Each entry's exact encoded size: re-encode it alone and count.
	var cw benchCounter
	w, err := artifact.NewWriter(&cw, &a.Header)
	if err != nil {
		b.Fatal(err)
	}
	type sum struct{ n, bytes, content int }
	sums := map[artifact.Kind]*sum{}
	for _, e := range a.Entries {
		before := cw.n
		if err := w.WriteEntry(e); err != nil {
			b.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		k := e.Body.Kind()
		if sums[k] == nil {
			sums[k] = &sum{}
		}
		s := sums[k]
		s.n++
		s.bytes += cw.n - before
		s.content += benchEntryContent(e.Body)
	}
	b.ReportMetric(float64(len(data)), "artifact-bytes")
	b.ReportMetric(float64(len(a.Entries)), "entries")
	for _, k := range []artifact.Kind{artifact.KindDelivery, artifact.KindPublish, artifact.KindInvocation} {
		s := sums[k]
		if s == nil {
			continue
		}
		b.ReportMetric(float64(s.bytes)/float64(s.n), "B/"+k.String())
		b.ReportMetric(float64(s.bytes-s.content)/float64(s.n), "frame/"+k.String())
	}
}

// benchEntryContent is the content of an entry's strings and byte strings.
func benchEntryContent(body artifact.Body) int {
	switch x := body.(type) {
	case artifact.Invocation:
		return len(x.Primitive) + len(x.Args) + len(x.Result) + len(x.Message)
	case artifact.Publish:
		return len(x.Topic) + len(x.Payload)
	case artifact.Delivery:
		return len(x.Target) + len(x.Topic)
	case artifact.Output:
		return len(x.Channel) + len(x.Primitive) + len(x.Args) + len(x.Result) + len(x.Message)
	}
	return 0
}

// BenchmarkReplaySetup measures what a replay does before the program
// starts, on the recording of msgs.hl (400,000 entries): admission (the
// artifact indexed and checked) and the replayer built from it.
func BenchmarkReplaySetup(b *testing.B) {
	p := compileProgram(b, benchMsgsSrc)
	path := filepath.Join(b.TempDir(), "run.halerec")
	if err := benchRecordedRun(p, host.EngineNative, path); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	id := artifact.Identity{BuildDigest: identity.BuildDigest, ShapeHash: identity.ShapeHash}
	art, err := admitData(data, id)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("admit", func(b *testing.B) {
		for b.Loop() {
			if _, err := admitData(data, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The consistency checks alone, which admission runs after decoding.
	b.Run("verify", func(b *testing.B) {
		for b.Loop() {
			if err := art.Verify(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("replayer", func(b *testing.B) {
		for b.Loop() {
			replay.NewReplayer(art, p.img, replay.Options{Quiet: true})
		}
	})
}

// admitData is replay admission of the artifact bytes data.
func admitData(data []byte, want artifact.Identity) (*artifact.Artifact, error) {
	a, err := artifact.Index(data)
	a, _, err = artifact.AdmitIndexed(a, err, want, false)
	return a, err
}

// benchSavina are the Savina ports of cmd/hale/cli's benchmarks
// (testdata/bench).
var benchSavina = []string{"pingpong", "counting", "threadring", "forkjoin"}

// BenchmarkSavinaRecordingInProcess runs each Savina port unrecorded
// (plain) and recorded (rec) inside the test process, side by side, as
// BenchmarkRecordingOverhead does, so that -cpuprofile shows what the
// recorder costs (cmd/hale/cli's BenchmarkSavinaRecording runs the CLI in
// child processes, which a profile of the test does not see):
//
//	go test ./replay -run XXX -bench SavinaRecordingInProcess -benchtime 3x
//	go test ./replay -run XXX -bench 'SavinaRecordingInProcess/counting/native' -benchtime 5x -cpuprofile cpu.out
func BenchmarkSavinaRecordingInProcess(b *testing.B) {
	for _, name := range benchSavina {
		src, err := os.ReadFile(filepath.Join("..", "cmd", "hale", "cli", "testdata", "bench", name+".hl"))
		if err != nil {
			b.Fatal(err)
		}
		p := compileProgram(b, string(src))
		for _, kind := range benchEngines {
			b.Run(name+"/"+kind.String(), func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "run.halerec")
				m, cpu := benchSideBySideCPU(b, []benchVariant{
					{"plain", func() error { return benchPlainRun(p, kind) }},
					{"rec", func() error { return benchRecordedRun(p, kind, path) }},
				})
				b.ReportMetric(float64(m["rec"])/float64(m["plain"]), "rec/plain")
				b.ReportMetric(float64(cpu["rec"])/float64(cpu["plain"]), "rec/plain-cpu")
			})
		}
	}
}

// BenchmarkReplayInProcess records each program once (msgs, msgs_rand and
// the Savina port counting) and replays that recording in every
// iteration, as `hale replay --quiet` does (read, admit, replay, judge),
// so that -cpuprofile shows the replay alone:
//
//	go test ./replay -run XXX -bench 'ReplayInProcess/msgs/native' -benchtime 10x -cpuprofile cpu.out
func BenchmarkReplayInProcess(b *testing.B) {
	progs := slices.Clone(benchMsgPrograms)
	src, err := os.ReadFile(filepath.Join("..", "cmd", "hale", "cli", "testdata", "bench", "counting.hl"))
	if err != nil {
		b.Fatal(err)
	}
	progs = append(progs, struct{ name, src string }{"counting", string(src)})
	for _, bp := range progs {
		p := compileProgram(b, bp.src)
		for _, kind := range benchEngines {
			b.Run(bp.name+"/"+kind.String(), func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "run.halerec")
				if err := benchRecordedRun(p, kind, path); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for b.Loop() {
					if err := benchReplayFrom(p, kind, path, false); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
