package explore

import (
	"context"
	"testing"

	"github.com/hale-lang/hale/vm/host"
)

// TestGuardsUnderTheScheduler: guards route at publish time, also for
// stdin lines, identically on both engines; a guarded handler's failure
// is found and its bundle verifies.
func TestGuardsUnderTheScheduler(t *testing.T) {
	fx := &Fixtures{Stdin: []string{"x", "yy", "xx", "zzz"}}
	var prints []string
	for _, kind := range []host.EngineKind{host.EngineNative, host.EngineWasm} {
		s := newSched(t, "testdata/guards.hl", kind, Config{Fixtures: fx})
		o, err := s.RunSchedule(context.Background(), StrategyRandom, 0, 4)
		if err != nil {
			t.Fatal(err)
		}
		prints = append(prints, fingerprint(t, s, o))
		if o.Failure == nil || o.Failure.Message != "a line of two x" {
			t.Fatalf("%v: failure %+v", kind, o.Failure)
		}
		// r1 gets "x", r2 gets "yy" and "xx"; "zzz" goes to nobody.
		deliveries := map[string]int{}
		for _, st := range o.Steps {
			deliveries[s.img.Instances[st.Target].Name]++
		}
		if deliveries["r1"] > 1 || deliveries["r2"] > 2 {
			t.Errorf("%v: guards let through %v", kind, deliveries)
		}
		b, err := s.NewBundle(compileFile(t, "testdata/guards.hl"), StrategyRandom, o)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := Verify(context.Background(), b, kind); err != nil || !v.Reproduced {
			t.Fatalf("%v: the bundle does not verify: %v %+v", kind, err, v)
		}
	}
	if prints[0] != prints[1] {
		t.Fatalf("the engines differ:\n%s\n%s", prints[0], prints[1])
	}
}
