package replay

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"

	"github.com/hale-lang/hale/replay/artifact"
)

// A replay holds the recording's bytes, its index and the replayer's
// tables for the whole run: tens of megabytes without pointers that the
// garbage collector counts as live heap. With GOGC's default of 100 the
// heap may then grow by as much again before a collection, so the
// program's garbage, which a recorded run recycles within a few
// megabytes, is spread over that much fresh memory, each page a page
// fault. LowerGC keeps the headroom about what the program alone would
// have.

// gcHeadroom is the heap growth LowerGC allows over the recording's
// memory: about what a message-heavy program's recorded run uses.
const gcHeadroom = 8 << 20

// minGCPercent bounds how far LowerGC lowers the percent, so that a very
// large recording does not make every few allocations a collection.
const minGCPercent = 25

// A replay's start-up (reading the recording, indexing and checking
// it, building the replayer's tables) allocates that memory in a few
// large pieces that all stay live. With the default percent each of them
// starts a collection that finds nothing to free; on the wasm engine
// those collections run beside the engine's own start-up and delay it.
// HoldGC raises the percent for that while, so that the collector waits
// for the memory the start-up is expected to take.

// startupBytes is the memory HoldGC lets a replay's start-up allocate
// for a recording of size bytes: the bytes, their index (32 bytes an
// entry, about 1.2 times the size), the replayer's tables and the
// compiled program, with room to spare.
func startupBytes(size int64) int64 { return 3*size + 2*gcHeadroom }

// gcHold is the percent's state while replays hold it: lowered by a
// running replay (LowerGC), raised by one starting (HoldGC). A start-up's
// hold takes precedence (the engine may still be loading when the
// replay's run begins); the percent goes back to saved when nothing
// holds it.
var gcHold struct {
	sync.Mutex
	n      int // running replays holding the percent low
	low    int // the percent they hold
	up     int // starting replays holding it high
	high   int // the percent they hold
	saved  int // the percent before the first hold
	active bool
}

// holdLocked starts a hold (under gcHold's lock): it reports false,
// changing nothing, when the percent is not the default 100 (someone
// else's choice) and nothing holds it yet.
func holdLocked() bool {
	if gcHold.active {
		return true
	}
	prev := debug.SetGCPercent(100)
	if prev != 100 {
		debug.SetGCPercent(prev)
		return false
	}
	gcHold.active, gcHold.saved = true, prev
	return true
}

// applyLocked sets the percent that the holds call for.
func applyLocked() {
	switch {
	case gcHold.up > 0:
		debug.SetGCPercent(gcHold.high)
	case gcHold.n > 0:
		debug.SetGCPercent(gcHold.low)
	default:
		debug.SetGCPercent(gcHold.saved)
		gcHold.active = false
	}
}

// release returns the function that ends a hold once, however often it
// is called: drop is run under gcHold's lock.
func release(drop func()) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			gcHold.Lock()
			defer gcHold.Unlock()
			drop()
			applyLocked()
		})
	}
}

// LowerGC lowers the garbage collector's percent (debug.SetGCPercent)
// for the replay of art, so that the heap grows by about gcHeadroom
// over the recording's memory rather than by the recording's size, and
// returns the function that restores it once the replay is over. It
// does nothing when the environment sets GOGC (the user's choice), when
// the percent is not the default 100, or when the recording is small;
// replays that overlap share one lowering, restored by the last. A
// HoldGC still in effect takes precedence; the lowering applies when it
// ends.
func LowerGC(art *artifact.Artifact) (restore func()) {
	resident := art.Resident()
	if os.Getenv("GOGC") != "" || resident <= gcHeadroom {
		return func() {}
	}
	percent := max(minGCPercent, int(100*gcHeadroom/resident))
	gcHold.Lock()
	defer gcHold.Unlock()
	if !holdLocked() {
		return func() {}
	}
	if gcHold.n == 0 {
		gcHold.low = percent
	}
	gcHold.n++
	applyLocked()
	return release(func() { gcHold.n-- })
}

// HoldGC raises the garbage collector's percent while a replay of a
// recording of size bytes starts, so that the heap may grow by the
// memory the start-up keeps (startupBytes) before a collection, and
// returns the function that ends the hold; call it when the replay's
// start-up is over, its tables built and its engine loaded (LowerGC then
// sets the percent for the run). It does
// nothing when the environment sets GOGC, when the percent is not the
// default 100, or when the recording is small. The hold is bounded: a
// start-up that allocates more than expected is collected as usual.
func HoldGC(size int64) (done func()) {
	if os.Getenv("GOGC") != "" || size <= gcHeadroom {
		return func() {}
	}
	// The heap's goal is about the live heap times (1 + percent/100),
	// and at least 4 MiB times percent/100 before the first collection.
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	live := int64(4 << 20)
	if sample[0].Value.Kind() == metrics.KindUint64 {
		live = max(live, int64(sample[0].Value.Uint64()))
	}
	percent := int(min(100+100*startupBytes(size)/live, math.MaxInt32))
	gcHold.Lock()
	defer gcHold.Unlock()
	if !holdLocked() {
		return func() {}
	}
	if gcHold.up == 0 || percent > gcHold.high {
		gcHold.high = percent
	}
	gcHold.up++
	applyLocked()
	return release(func() { gcHold.up-- })
}
