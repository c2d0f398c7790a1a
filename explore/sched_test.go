package explore

import (
	"context"
	"testing"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/vm/host"
)

func compileFile(t testing.TB, path string) *hale.Compiled {
	t.Helper()
	c, err := hale.CompileFile(path, hale.BuildOptions{})
	if err != nil {
		t.Fatalf("compile %s: %v", path, err)
	}
	return c
}

func newSched(t testing.TB, path string, kind host.EngineKind, cfg Config) *Scheduler {
	t.Helper()
	cfg.Engine = kind
	s, err := NewScheduler(context.Background(), compileFile(t, path).Image, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestOrderingBugFoundByPCT(t *testing.T) {
	s := newSched(t, "testdata/ordering.hl", host.EngineNative, Config{})
	rep, err := Search(context.Background(), s, SearchOptions{Strategy: StrategyPCT, Schedules: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failures) != 1 {
		t.Fatalf("failures: %d", len(rep.Failures))
	}
	f := rep.Failures[0]
	t.Logf("first %d count %d sig %q steps %d→%d", f.FirstSchedule, f.Count, f.Failure.Signature(), len(f.First.Steps), len(f.Shrunk.Steps))
}
