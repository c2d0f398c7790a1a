package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hale-lang/hale/vm/host"
)

// fingerprint is everything observable about a run, as a bundle writes it.
func fingerprint(t *testing.T, s *Scheduler, o *Outcome) string {
	t.Helper()
	ins, outs := wireCalls(s.img, o.inputs, o.outputs)
	v := map[string]any{"schedule": wireSchedule(s.img, o.Steps), "inputs": ins, "outputs": outs, "verdict": o.Verdict, "code": o.Code}
	if o.Failure != nil {
		v["failure"] = wireFailure(o.Failure)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSameSeedSameRunOnBothEngines: a seed fixes the schedule and
// everything the program sees, run after run and engine after engine.
func TestSameSeedSameRunOnBothEngines(t *testing.T) {
	fx, err := LoadFixtures("testdata/fixtures")
	if err != nil {
		t.Fatal(err)
	}
	for _, prog := range []string{"testdata/ordering.hl", "testdata/noisy.hl", "testdata/world.hl"} {
		native := newSched(t, prog, host.EngineNative, Config{Fixtures: fx})
		wasm := newSched(t, prog, host.EngineWasm, Config{Fixtures: fx})
		for _, strategy := range []string{StrategyRandom, StrategyPCT, StrategyPOS} {
			distinct := map[string]bool{}
			for seed := uint64(0); seed < 6; seed++ {
				var prints []string
				for _, s := range []*Scheduler{native, native, wasm, wasm} {
					o, err := s.RunSchedule(context.Background(), strategy, 0, seed)
					if err != nil {
						t.Fatal(err)
					}
					prints = append(prints, fingerprint(t, s, o))
				}
				for i := 1; i < len(prints); i++ {
					if prints[i] != prints[0] {
						t.Fatalf("%s %s seed %d: run %d differs:\n%s\n%s", prog, strategy, seed, i, prints[0], prints[i])
					}
				}
				distinct[prints[0]] = true
			}
			if prog == "testdata/noisy.hl" && len(distinct) < 2 {
				t.Errorf("%s %s: six seeds gave one schedule", prog, strategy)
			}
		}
	}
}

// reportJSON is a search's report without its time.
func reportJSON(t *testing.T, s *Scheduler, rep *Report) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s %d\n", rep.Schedules, rep.Strategy, rep.Seed)
	for _, f := range rep.Failures {
		fmt.Fprintf(&b, "%q first %d count %d\n%s\n", f.Failure.Signature(), f.FirstSchedule, f.Count, fingerprint(t, s, f.Shrunk))
	}
	return b.String()
}

func TestSearchIsDeterministicOnBothEngines(t *testing.T) {
	var reports []string
	for _, kind := range []host.EngineKind{host.EngineNative, host.EngineNative, host.EngineWasm} {
		s := newSched(t, "testdata/noisy.hl", kind, Config{})
		rep, err := Search(context.Background(), s, SearchOptions{Strategy: StrategyRandom, Schedules: 30, Seed: 99})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Failures) == 0 {
			t.Fatal("no failure found in noisy.hl")
		}
		reports = append(reports, reportJSON(t, s, rep))
	}
	for i := 1; i < len(reports); i++ {
		if reports[i] != reports[0] {
			t.Fatalf("search %d differs:\n%s\n%s", i, reports[0], reports[i])
		}
	}
}

// schedulesToFind returns the number of schedules a search from seed
// needed to find the planted bug (0: not within limit).
func schedulesToFind(t *testing.T, s *Scheduler, strategy string, seed uint64, limit int) int {
	t.Helper()
	strat, err := newStrategy(strategy, DefaultDepth)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < limit; i++ {
		o, err := s.run(context.Background(), seed+uint64(i), strat.schedule(seed+uint64(i)), nil)
		if err != nil {
			t.Fatal(err)
		}
		strat.done(o)
		if o.Failure != nil {
			return i + 1
		}
	}
	return 0
}

func median(xs []int) int {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestPlantedOrderingBug: pct finds the planted bug of ordering.hl
// within 20 schedules for at least 18 of 20 seeds (docs/testing.md has
// the table); uniform random needs far more.
func TestPlantedOrderingBug(t *testing.T) {
	s := newSched(t, "testdata/ordering.hl", host.EngineNative, Config{})
	const seeds, pctLimit, randomLimit = 20, 20, 100
	var pct, random []int
	pctFound := 0
	for k := uint64(0); k < seeds; k++ {
		n := schedulesToFind(t, s, StrategyPCT, k*1000, pctLimit)
		if n > 0 {
			pctFound++
		} else {
			n = pctLimit + 1
		}
		pct = append(pct, n)
		r := schedulesToFind(t, s, StrategyRandom, k*1000, randomLimit)
		if r == 0 {
			r = randomLimit + 1
		}
		random = append(random, r)
	}
	t.Logf("pct: found for %d of %d seeds within %d schedules, median %d; random: median %d (limit %d)", pctFound, seeds, pctLimit, median(pct), median(random), randomLimit)
	if pctFound < 18 {
		t.Errorf("pct found the planted bug for only %d of %d seeds within %d schedules", pctFound, seeds, pctLimit)
	}
	if median(random) <= median(pct) {
		t.Errorf("random (median %d) is not slower than pct (median %d)", median(random), median(pct))
	}
}

func TestPOSFindsPlantedBug(t *testing.T) {
	s := newSched(t, "testdata/ordering.hl", host.EngineNative, Config{})
	found := 0
	for k := uint64(0); k < 10; k++ {
		if schedulesToFind(t, s, StrategyPOS, k*1000, 100) > 0 {
			found++
		}
	}
	if found < 8 {
		t.Errorf("pos found the planted bug for %d of 10 seeds within 100 schedules", found)
	}
}

// TestShrinkKeepsSignatureAndNeverLengthens shrinks the failures of many
// random schedules of noisy.hl.
func TestShrinkKeepsSignatureAndNeverLengthens(t *testing.T) {
	s := newSched(t, "testdata/noisy.hl", host.EngineNative, Config{})
	shrunk, total, before, after := 0, 0, 0, 0
	for seed := uint64(0); seed < 40 && total < 8; seed++ {
		o, err := s.RunSchedule(context.Background(), StrategyRandom, 0, seed)
		if err != nil {
			t.Fatal(err)
		}
		if o.Failure == nil {
			continue
		}
		total++
		r, err := s.Shrink(context.Background(), o, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Failure == nil || r.Failure.Signature() != o.Failure.Signature() {
			t.Fatalf("seed %d: shrinking changed the failure %+v to %+v", seed, o.Failure, r.Failure)
		}
		if len(r.Steps) > len(o.Steps) {
			t.Fatalf("seed %d: shrinking lengthened %d steps to %d", seed, len(o.Steps), len(r.Steps))
		}
		if len(r.Steps) < len(o.Steps) {
			shrunk++
		}
		before += len(o.Steps)
		after += len(r.Steps)
		// The shrunk schedule replays strictly to the same failure.
		steps := make([]*Step, len(r.Steps))
		for i := range r.Steps {
			steps[i] = &r.Steps[i]
		}
		f := &follow{steps: steps, strict: true, stopAtEnd: true}
		again, err := s.run(context.Background(), r.Seed, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		if f.drift != "" || fingerprint(t, s, again) != fingerprint(t, s, r) {
			t.Fatalf("seed %d: the shrunk schedule does not replay (%s)", seed, f.drift)
		}
	}
	if total < 4 {
		t.Fatalf("only %d failing schedules among 40", total)
	}
	t.Logf("%d failures, %d shrunk, %d steps before, %d after", total, shrunk, before, after)
	if shrunk == 0 {
		t.Error("no failing schedule got shorter")
	}
}

func TestLimitsAndExit(t *testing.T) {
	for _, tc := range []struct {
		name, src, kind, message string
		cfg                      Config
	}{
		{"livelock", `topic P { n: int }
locus A { on start { publish P { n: 0 }; } on P(p) { publish P { n: p.n + 1 }; } }
main { spawn A on pinned; }`, "livelock", "more than 50 steps (--max-steps)", Config{MaxSteps: 50}},
		{"handler budget", `locus A { on start { var i = 0; while true { i += 1; } } }
main { spawn A on pinned; }`, "budget", "handler passed 1000 steps (--max-handler-steps)", Config{MaxHandlerSteps: 1000}},
		{"exit", `locus A { on start { std::process::exit(4); } }
main { spawn A on pinned; }`, "exit", "exit code 4", Config{}},
		{"trap", `locus A { var xs: [int] = []; on start { print(str(xs[3])); } }
main { spawn A on pinned; }`, "index", "", Config{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := t.TempDir() + "/app.hl"
			writeFile(t, path, tc.src)
			for _, kind := range []host.EngineKind{host.EngineNative, host.EngineWasm} {
				s := newSched(t, path, kind, tc.cfg)
				o, err := s.RunSchedule(context.Background(), StrategyRandom, 0, 1)
				if err != nil {
					t.Fatal(err)
				}
				if o.Failure == nil || o.Failure.Kind != tc.kind || (tc.message != "" && o.Failure.Message != tc.message) {
					t.Fatalf("%v: failure %+v, want kind %s message %q", kind, o.Failure, tc.kind, tc.message)
				}
				if o.Failure.Coordinate == "" {
					t.Errorf("%v: no coordinate", kind)
				}
			}
		})
	}
}

func TestPassingProgramHasNoFailure(t *testing.T) {
	path := t.TempDir() + "/app.hl"
	writeFile(t, path, `topic P { n: int }
locus A { on start { publish P { n: 1 }; } }
locus B { var got: int = 0; on P(p) { got += p.n; std::process::exit(0); } }
main { spawn A on pinned; spawn B on pinned; }`)
	s := newSched(t, path, host.EngineNative, Config{})
	rep, err := Search(context.Background(), s, SearchOptions{Schedules: 10, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Schedules != 10 || len(rep.Failures) != 0 {
		t.Fatalf("report %+v", rep)
	}
}

// TestStrategyTable prints the table of docs/testing.md §3: the median
// number of schedules each strategy needs to find each planted bug, over
// 20 seeds. It runs only with HALE_EXPLORE_TABLE=1 (random needs many).
func TestStrategyTable(t *testing.T) {
	if os.Getenv("HALE_EXPLORE_TABLE") == "" {
		t.Skip("set HALE_EXPLORE_TABLE=1 to print the strategy table")
	}
	for _, prog := range []string{"testdata/ordering.hl", "testdata/noisy.hl"} {
		s := newSched(t, prog, host.EngineNative, Config{})
		for _, strategy := range []string{StrategyPCT, StrategyPOS, StrategyRandom} {
			const limit = 20000
			var ns []int
			found := 0
			for k := uint64(0); k < 20; k++ {
				n := schedulesToFind(t, s, strategy, k*100000, limit)
				if n == 0 {
					n = limit + 1
				} else {
					found++
				}
				ns = append(ns, n)
			}
			slices.Sort(ns)
			t.Logf("%s %s: found for %d of 20 seeds, median %d, max %d", prog, strategy, found, median(ns), ns[len(ns)-1])
		}
	}
}

// slowChoices lists the choices by scanning every queue, as the
// definition says; the scheduler's cached listing must agree with it.
func slowChoices(st *host.Stepper, execs []int) []choice {
	var out []choice
	for _, c := range execs {
		pending := st.Pending(c)
		if len(pending) == 0 {
			continue
		}
		if pending[0].IsStart() {
			out = append(out, choice{consumer: c, pick: 0, d: pending[0]})
			continue
		}
		first := len(out)
		for i := range pending {
			seen := false
			for _, ch := range out[first:] {
				seen = seen || ch.d.Message.Producer == pending[i].Message.Producer
			}
			if !seen {
				out = append(out, choice{consumer: c, pick: i, d: pending[i]})
			}
		}
	}
	return out
}

func TestCachedChoicesMatchTheDefinition(t *testing.T) {
	steps := 0
	checkChoices = func(st *host.Stepper, execs []int, got []choice) {
		steps++
		want := slowChoices(st, execs)
		if len(got) != len(want) {
			t.Fatalf("step %d: %d choices, want %d", steps, len(got), len(want))
		}
		for i := range want {
			if got[i].consumer != want[i].consumer || got[i].pick != want[i].pick {
				t.Fatalf("step %d: choice %d is %d/%d, want %d/%d", steps, i, got[i].consumer, got[i].pick, want[i].consumer, want[i].pick)
			}
		}
	}
	defer func() { checkChoices = nil }()
	for _, prog := range []string{"testdata/thousand.hl", "testdata/noisy.hl", "testdata/ordering.hl", "../examples/bank.hl"} {
		s := newSched(t, prog, host.EngineNative, Config{})
		for _, strategy := range []string{StrategyRandom, StrategyPCT, StrategyPOS} {
			for seed := uint64(0); seed < 3; seed++ {
				if _, err := s.RunSchedule(context.Background(), strategy, 0, seed); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if steps < 5000 {
		t.Fatalf("only %d steps checked", steps)
	}
}
