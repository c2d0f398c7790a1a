package host

import (
	"slices"
	"strings"
	"testing"
)

// TestJournaledTakesMany runs each many case with a journal that logs
// every event, on both engines, with the consumers taking their pending
// deliveries at once (loopTaken) and one at a time (noMany): every
// consumer's events, the output, the trap report, the exit code and the
// verdict must be the same, and taking at once must have happened.
func TestJournaledTakesMany(t *testing.T) {
	for _, c := range manyCases {
		t.Run(c.name, func(t *testing.T) {
			img := compileAll(t, c.src)
			for _, kind := range []EngineKind{EngineNative, EngineWasm} {
				type run struct {
					o   outcome
					j   *logJournal
					got int64
				}
				var runs []run
				for _, off := range []bool{true, false} {
					j := newLogJournal(img)
					before := takenAtOnce.Load()
					noMany = off
					o := runWith(t, img, Options{Engine: kind, Journal: j})
					noMany = false
					if o.err != nil {
						t.Fatal(o.err)
					}
					if len(j.problems) > 0 {
						t.Fatalf("%s (one at a time %v): %s", kind, off, strings.Join(j.problems, "\n"))
					}
					runs = append(runs, run{o, j, takenAtOnce.Load() - before})
				}
				one, many := runs[0], runs[1]
				if one.got != 0 {
					t.Errorf("%s: %d deliveries taken at once with noMany", kind, one.got)
				}
				if many.got == 0 {
					t.Errorf("%s: a journaled run took no deliveries at once", kind)
				}
				a, b := many.o, one.o
				if a.stdout != b.stdout || a.stderr != b.stderr || a.res.Code != b.res.Code || a.res.Verdict != b.res.Verdict {
					t.Errorf("%s: taken at once\n%s%s(%d %s)\none at a time\n%s%s(%d %s)", kind,
						a.stdout, a.stderr, a.res.Code, a.res.Verdict, b.stdout, b.stderr, b.res.Code, b.res.Verdict)
				}
				for cons, evs := range one.j.per {
					if !slices.Equal(many.j.per[cons], evs) {
						t.Errorf("%s: consumer %d's events differ: %d taken at once, %d one at a time", kind, cons, len(many.j.per[cons]), len(evs))
					}
				}
				if len(many.j.per) != len(one.j.per) {
					t.Errorf("%s: %d consumers with events, %d one at a time", kind, len(many.j.per), len(one.j.per))
				}
			}
		})
	}
}
