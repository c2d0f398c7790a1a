package host

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
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

// lateJournal is a logJournal that stamps late (LateJournal), as the
// recorder does.
type lateJournal struct{ *logJournal }

func (lateJournal) StampsLate() bool { return true }

// quietCases add to the many cases runs of deliveries to handlers
// compiled whole that publish nothing: a counter (on the main bus and
// pinned), one that hands a delivery back in the middle of a run (a
// print), and one whose Retrieve publishes after a run of increments.
var quietCases = append(slices.Clone(manyCases), []struct{ name, src string }{
	{"counting", `
topic Incr { by: int }
topic Retrieve { n: int }
topic Total { count: int }
locus Producer {
    on start { for i in 0..700 { publish Incr { by: i % 5 }; } publish Retrieve { n: 700 }; }
    on Total(t) { print("counted " + str(t.count)); }
}
locus Counter {
    var count: int = 0;
    on Incr(m) { count += m.by; }
    on Retrieve(r) { publish Total { count: count }; }
}
main { spawn Producer; spawn Counter on pinned; }
`},
	{"counting-main", `
topic Incr { by: int }
topic Retrieve { n: int }
locus Producer { on start { for i in 0..700 { publish Incr { by: i % 7 }; } publish Retrieve { n: 700 }; } }
locus Counter {
    var count: int = 0;
    on Incr(m) { count += m.by; }
    on Retrieve(r) { print("counted " + str(count) + " of " + str(r.n)); }
}
main { spawn Producer; spawn Counter; }
`},
	{"handback", `
topic Incr { by: int }
locus Producer { on start { for i in 0..700 { publish Incr { by: 1 }; } } }
locus Counter {
    var count: int = 0;
    on Incr(m) { count += m.by; if count % 97 == 0 { print(str(count)); } }
}
main { spawn Producer; spawn Counter on pinned; }
`},
}...)

// frontRuns is a RunOrder that gives every consumer its pending
// deliveries in arrival order, as many at once as it may.
type frontRuns struct{}

func (frontRuns) Next(c int, pending []Delivery) (int, time.Duration) { return 0, 0 }

func (frontRuns) NextRun(c int, pending []Delivery, most int) (int, int, time.Duration) {
	return 0, min(len(pending), most), 0
}

// TestJournaledQuietRuns runs each quiet case with a journal that stamps
// late, on both engines, with the consumers taking their pending
// deliveries at once and running runs of them in one engine call, under
// an Order that gives runs (frontRuns, as the replayer does), and one at
// a time (noMany): every consumer's events, the output, the trap
// report, the exit code and the verdict must be the same; on the wasm
// engine the counters' runs must have gone in one call each (quietRan),
// and with noQuiet none.
func TestJournaledQuietRuns(t *testing.T) {
	for _, c := range quietCases {
		t.Run(c.name, func(t *testing.T) {
			img := compileAll(t, c.src)
			for _, kind := range []EngineKind{EngineNative, EngineWasm} {
				type run struct {
					o     outcome
					j     *logJournal
					quiet int64
				}
				var runs []run
				for _, mode := range []string{"one", "taken", "quiet", "ordered"} {
					j := newLogJournal(img)
					before := quietRan.Load()
					noMany, noQuiet = mode == "one", mode == "taken"
					opts := Options{Engine: kind, Journal: lateJournal{j}}
					if mode == "ordered" {
						opts.Order = frontRuns{}
					}
					o := runWith(t, img, opts)
					noMany, noQuiet = false, false
					if o.err != nil {
						t.Fatal(o.err)
					}
					if len(j.problems) > 0 {
						t.Fatalf("%s (%s): %s", kind, mode, strings.Join(j.problems, "\n"))
					}
					runs = append(runs, run{o, j, quietRan.Load() - before})
				}
				one := runs[0]
				for m, r := range runs[1:] {
					if m == 2 && strings.HasPrefix(c.name, "exit") {
						// frontRuns gives past the exit, and a given
						// delivery runs (loopRuns): not comparable.
						continue
					}
					a, b := r.o, one.o
					if a.stdout != b.stdout || a.stderr != b.stderr || a.res.Code != b.res.Code || a.res.Verdict != b.res.Verdict {
						t.Errorf("%s: runs in one call\n%s%s(%d %s)\none at a time\n%s%s(%d %s)", kind,
							a.stdout, a.stderr, a.res.Code, a.res.Verdict, b.stdout, b.stderr, b.res.Code, b.res.Verdict)
					}
					for cons, evs := range one.j.per {
						if got := r.j.per[cons]; !slices.Equal(got, evs) {
							t.Errorf("%s: consumer %d's events differ: %d against %d one at a time\n%s", kind, cons, len(got), len(evs), firstDiff(got, evs))
						}
					}
					if len(r.j.per) != len(one.j.per) {
						t.Errorf("%s: %d consumers with events, %d one at a time", kind, len(r.j.per), len(one.j.per))
					}
				}
				if runs[0].quiet != 0 || runs[1].quiet != 0 {
					t.Errorf("%s: %d and %d deliveries in quiet runs with noMany and noQuiet", kind, runs[0].quiet, runs[1].quiet)
				}
				wantQuiet := kind == EngineWasm && strings.HasPrefix(c.name, "counting")
				for _, r := range runs[2:] {
					if wantQuiet && r.quiet == 0 {
						t.Errorf("%s: a journal that stamps late ran no deliveries in quiet runs", kind)
					}
					if kind == EngineNative && r.quiet != 0 {
						t.Errorf("native: %d deliveries in quiet runs", r.quiet)
					}
				}
				t.Logf("%s: %d and %d (ordered) deliveries in quiet runs", kind, runs[2].quiet, runs[3].quiet)
			}
		})
	}
}

// firstDiff describes where two event lists first differ.
func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("at %d: %q against %q", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("one is a prefix of the other (%d, %d)", len(a), len(b))
}

// TestQuietRunHalts halts a journaled run at a delivery in the middle of
// a quiet run (the journal's Deliver fails, as a failed recording's
// does): the run halts with that error and every consumer's events are
// those of a run one delivery at a time.
func TestQuietRunHalts(t *testing.T) {
	img := compileAll(t, quietCases[len(manyCases)].src) // counting
	counter := -1
	for _, inst := range img.Instances {
		if inst.Name == "Counter" {
			counter = inst.Consumer
		}
	}
	if counter < 0 {
		t.Fatal("no Counter")
	}
	halt := errors.New("halt here")
	for _, kind := range []EngineKind{EngineNative, EngineWasm} {
		var per []map[int][]string
		var quiet int64
		for _, one := range []bool{true, false} {
			j := newLogJournal(img)
			j.deliverHook = func(c, n int, _ *Delivery, _ StateReader) error {
				if c == counter && n == 300 {
					return halt
				}
				return nil
			}
			before := quietRan.Load()
			noMany = one
			o := runWith(t, img, Options{Engine: kind, Journal: lateJournal{j}})
			noMany = false
			if o.err != nil {
				t.Fatal(o.err)
			}
			if o.res.Verdict != VerdictHalted || !errors.Is(o.res.Halt, halt) {
				t.Fatalf("%s (one at a time %v): verdict %s, halt %v", kind, one, o.res.Verdict, o.res.Halt)
			}
			if len(j.problems) > 0 {
				t.Fatalf("%s: %s", kind, strings.Join(j.problems, "\n"))
			}
			per = append(per, j.per)
			quiet = quietRan.Load() - before
		}
		if got, want := per[1][counter], per[0][counter]; !slices.Equal(got, want) {
			t.Errorf("%s: the counter's events differ: %s", kind, firstDiff(got, want))
		}
		if kind == EngineWasm && quiet == 0 {
			t.Errorf("wasm: no quiet runs before the halt")
		}
	}
}

// lastOrder is a RunOrder that holds consumer sink until want deliveries
// are pending, then takes the newest first; it notes the most pending
// deliveries it was shown.
type lastOrder struct {
	sink, want int
	most       int
}

func (o *lastOrder) Next(c int, pending []Delivery) (int, time.Duration) {
	pick, _, wait := o.NextRun(c, pending, 1)
	return pick, wait
}

func (o *lastOrder) NextRun(c int, pending []Delivery, most int) (int, int, time.Duration) {
	if c != o.sink {
		return 0, 1, 0
	}
	o.most = max(o.most, len(pending))
	if o.want > 0 && len(pending) < o.want {
		return Hold, 0, 0
	}
	o.want = 0
	return len(pending) - 1, 1, 0
}

// TestRunOrderSeesAllPending holds a consumer under a RunOrder until
// 3,000 deliveries are pending, more than the window it is shown first
// (orderWindow): asked again with all of them when it holds, it sees
// them all, and the consumer then runs the newest first.
func TestRunOrderSeesAllPending(t *testing.T) {
	img := compileAll(t, `
topic A { n: int }
locus Src { on start { for i in 0..3000 { publish A { n: i }; } } }
locus Sink {
    var c: int = 0;
    on A(a) { c += 1; if c == 1 || c == 3000 { print(str(c) + " " + str(a.n)); } }
}
main { spawn Src; spawn Sink on pinned; }
`)
	sink := -1
	for _, in := range img.Instances {
		if in.Name == "Sink" {
			sink = in.Consumer
		}
	}
	for _, kind := range []EngineKind{EngineNative, EngineWasm} {
		o := &lastOrder{sink: sink, want: 3000}
		res := runWith(t, img, Options{Engine: kind, Order: o})
		if res.err != nil {
			t.Fatal(res.err)
		}
		if want := "1 2999\n3000 0\n"; res.stdout != want {
			t.Errorf("%s: output %q, want %q", kind, res.stdout, want)
		}
		if o.most != 3000 || orderWindow >= 3000 {
			t.Errorf("%s: the order saw at most %d pending deliveries (window %d)", kind, o.most, orderWindow)
		}
	}
}
