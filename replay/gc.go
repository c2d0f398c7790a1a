package replay

import (
	"os"
	"runtime/debug"
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

var gcHold struct {
	sync.Mutex
	n     int // replays holding the percent low
	saved int // the percent before the first of them
}

// LowerGC lowers the garbage collector's percent (debug.SetGCPercent)
// for the replay of art, so that the heap grows by about gcHeadroom
// over the recording's memory rather than by the recording's size, and
// returns the function that restores it once the replay is over. It
// does nothing when the environment sets GOGC (the user's choice), when
// the percent is not the default 100, or when the recording is small;
// replays that overlap share one lowering, restored by the last.
func LowerGC(art *artifact.Artifact) (restore func()) {
	resident := art.Resident()
	if os.Getenv("GOGC") != "" || resident <= gcHeadroom {
		return func() {}
	}
	percent := max(minGCPercent, int(100*gcHeadroom/resident))
	gcHold.Lock()
	defer gcHold.Unlock()
	if gcHold.n == 0 {
		prev := debug.SetGCPercent(percent)
		if prev != 100 {
			debug.SetGCPercent(prev)
			return func() {}
		}
		gcHold.saved = prev
	}
	gcHold.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			gcHold.Lock()
			defer gcHold.Unlock()
			if gcHold.n--; gcHold.n == 0 {
				debug.SetGCPercent(gcHold.saved)
			}
		})
	}
}
