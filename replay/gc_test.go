package replay_test

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// TestLowerGC: the percent is lowered for a large recording while any
// replay holds it, restored by the last, never below the floor, and left
// alone for a small recording, a decoded one and under the user's GOGC.
func TestLowerGC(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set")
	}
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	percent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }

	small := recordedArtifact(t, 10)
	done := replay.LowerGC(small)
	if p := percent(); p != 100 {
		t.Fatalf("a small recording lowered the percent to %d", p)
	}
	done()

	large := recordedArtifact(t, 120000)
	if large.Resident() <= 8<<20 {
		t.Fatalf("the large recording holds %d bytes, want more than 8 MiB", large.Resident())
	}
	done1 := replay.LowerGC(large)
	p := percent()
	if p >= 100 || p < 25 {
		t.Fatalf("the percent is %d during a large replay", p)
	}
	done2 := replay.LowerGC(large)
	done1()
	done1() // a second call restores nothing
	if q := percent(); q != p {
		t.Fatalf("the percent is %d while a replay still holds it, want %d", q, p)
	}
	done2()
	if q := percent(); q != 100 {
		t.Fatalf("the percent is %d after the last replay, want 100", q)
	}

	debug.SetGCPercent(50) // not the default: someone else's choice
	replay.LowerGC(large)()
	if q := percent(); q != 50 {
		t.Fatalf("the percent is %d, want the 50 it was", q)
	}
	debug.SetGCPercent(100)

	t.Setenv("GOGC", "100")
	done = replay.LowerGC(large)
	if q := percent(); q != 100 {
		t.Fatalf("with GOGC set the percent became %d", q)
	}
	done()
}

// recordedArtifact records, natively, a chain of n messages (the program
// of BenchmarkRecordingOverhead) and admits the recording.
func recordedArtifact(t *testing.T, n int) *artifact.Artifact {
	t.Helper()
	src := strings.Replace(benchMsgsSrc, "const N: int = 200000;", "const N: int = "+strconv.Itoa(n)+";", 1)
	p := compileProgram(t, src)
	path := filepath.Join(t.TempDir(), "run.halerec")
	if err := benchRecordedRun(p, host.EngineNative, path); err != nil {
		t.Fatal(err)
	}
	data, err := artifact.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := admitData(data, artifact.Identity{BuildDigest: identity.BuildDigest, ShapeHash: identity.ShapeHash})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestHoldGC: a start-up's hold raises the percent so that allocating
// the memory a replay's start-up keeps starts no collection; it takes
// precedence over a running replay's LowerGC, which applies once the
// hold ends; the percent goes back to
// 100 when neither holds it, and is left alone for a small recording,
// under the user's GOGC or another percent.
func TestHoldGC(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set")
	}
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	percent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }

	if done := replay.HoldGC(1 << 20); percent() != 100 {
		t.Fatalf("a small recording raised the percent to %d", percent())
	} else {
		done()
	}

	const size = 16 << 20
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	done := replay.HoldGC(size)
	held := percent()
	if held <= 100 {
		t.Fatalf("the percent is %d during a start-up's hold", held)
	}
	// What a start-up keeps: the recording's bytes, its index, tables.
	var keep [][]byte
	for range 3 * size / (1 << 20) {
		keep = append(keep, make([]byte, 1<<20))
	}
	runtime.ReadMemStats(&after)
	if after.NumGC != before.NumGC {
		t.Errorf("%d collections while the start-up allocated %d MiB under the hold", after.NumGC-before.NumGC, 3*size>>20)
	}
	runtime.KeepAlive(keep)

	large := recordedArtifact(t, 120000)
	restore := replay.LowerGC(large)
	if p := percent(); p != held {
		t.Errorf("the percent is %d with a replay running during a hold, want the hold's %d", p, held)
	}
	done()
	done() // a second call ends nothing
	if p := percent(); p >= 100 {
		t.Errorf("the percent is %d after the hold ended with a replay running, want it lowered", p)
	}
	restore()
	if p := percent(); p != 100 {
		t.Fatalf("the percent is %d after the replay and the hold, want 100", p)
	}

	// The hold ends before the replay: LowerGC then lowers from 100.
	done = replay.HoldGC(size)
	done()
	restore = replay.LowerGC(large)
	if p := percent(); p >= 100 {
		t.Errorf("the percent is %d during a replay after a hold", p)
	}
	restore()

	debug.SetGCPercent(50)
	replay.HoldGC(size)()
	if p := percent(); p != 50 {
		t.Fatalf("the percent is %d, want the 50 it was", p)
	}
	debug.SetGCPercent(100)

	t.Setenv("GOGC", "100")
	done = replay.HoldGC(size)
	if p := percent(); p != 100 {
		t.Fatalf("with GOGC set the percent became %d", p)
	}
	done()
}
