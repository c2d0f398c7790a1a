package explore

import (
	"context"
	"strings"
	"testing"

	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm/host"
)

// printed returns a run's printed lines, stderr ones prefixed "!".
func printed(t *testing.T, o *Outcome) string {
	t.Helper()
	_, outs := wireCalls(nil, nil, o.outputs)
	var b strings.Builder
	for _, w := range outs {
		switch w.Kind {
		case "stdout":
			b.WriteString(*w.Text + "\n")
		case "stderr":
			b.WriteString("!" + *w.Text + "\n")
		}
	}
	return b.String()
}

func TestWorldWithFixtures(t *testing.T) {
	fx, err := LoadFixtures("testdata/fixtures")
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []host.EngineKind{host.EngineNative, host.EngineWasm} {
		s := newSched(t, "testdata/world.hl", kind, Config{Fixtures: fx})
		o, err := s.RunSchedule(context.Background(), StrategyRandom, 0, 7)
		if err != nil {
			t.Fatal(err)
		}
		if o.Failure != nil {
			t.Fatalf("%v: failed: %+v", kind, o.Failure)
		}
		got := printed(t, o)
		for _, want := range []string{
			"now 1767225600000\n",
			"later 1767225601500 mono 1500000000\n",
			"entropy 8\n",
			"env test none\n",
			"args 2\n",
			"exists true\n",
			"read payload\n",
			"wrote hello\n",
			"http 200 first\n",
			"http failed: timeout\n",
			"line alpha\nline beta\n",
			"!go 1\n",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("%v: output lacks %q:\n%s", kind, want, got)
			}
		}
	}
}

func TestWorldWithoutFixtures(t *testing.T) {
	s := newSched(t, "testdata/world.hl", host.EngineNative, Config{})
	o, err := s.RunSchedule(context.Background(), StrategyRandom, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	got := printed(t, o)
	for _, want := range []string{"env default none\n", "args 0\n", "exists false\n", "read failed: io\n", "http failed: io\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "line ") {
		t.Errorf("stdin is not empty without fixtures:\n%s", got)
	}
}

func TestSeededRandomnessDependsOnTheSeedOnly(t *testing.T) {
	s := newSched(t, "testdata/world.hl", host.EngineNative, Config{})
	run := func(seed uint64) string {
		o, err := s.RunSchedule(context.Background(), StrategyRandom, 0, seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(printed(t, o), "\n") {
			if strings.HasPrefix(line, "rand ") {
				return line
			}
		}
		t.Fatal("no rand line")
		return ""
	}
	if a, b := run(5), run(5); a != b {
		t.Errorf("seed 5 gave %q then %q", a, b)
	}
	differ := false
	for seed := uint64(6); seed < 12 && !differ; seed++ {
		differ = run(seed) != run(5)
	}
	if !differ {
		t.Error("seeds 5 to 11 all gave the same random numbers")
	}
}

// TestWorldServesEveryPrimitive: every primitive that is an input or a
// virtualised call has an answer under the scheduler (a new one must be
// added to answer and to served).
func TestWorldServesEveryPrimitive(t *testing.T) {
	listed := map[string]bool{}
	for _, name := range served {
		listed[name] = true
	}
	for _, p := range stdlib.All() {
		if p.Journal != stdlib.Input && p.Journal != stdlib.Virtual {
			continue
		}
		if !listed[p.Name] {
			t.Errorf("%s is not served by the deterministic scheduler", p.Name)
		}
		delete(listed, p.Name)
	}
	for name := range listed {
		t.Errorf("served lists %s, which is not an input or virtualised primitive", name)
	}
	// And answer really answers them (arguments that decode are not needed
	// to tell "unknown" from a bad argument).
	w := newWorld(nil, 1, 0)
	for _, name := range served {
		if _, err := w.answer(name, nil); err != nil && strings.Contains(err.Error(), "does not serve") {
			t.Errorf("answer does not serve %s", name)
		}
	}
}
