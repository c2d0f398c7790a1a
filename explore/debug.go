package explore

import (
	"context"
	"errors"
	"io"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/vm/host"
)

// DebugHooks let a debugger (package replay/debug) watch a run of the
// deterministic scheduler: the run is the one the scheduler makes anyway
// (the same order, the same world), so a stop is the same every time.
type DebugHooks struct {
	// Started is called once the run's stepper exists, before start-up:
	// the debugger reads states and arms breaks through it.
	Started func(st *host.Stepper)
	// Before is called before every delivery (consumer c's n-th, d); an
	// error halts the run there.
	Before func(c, n int, d *host.Delivery) error
	// Break serves the machines' breaks (host.Options.Debug).
	Break func(c int, info []byte) ([]byte, error)
	// Poll is called at each poll of a long handler run of consumer c
	// (host.Options.DebugPoll): a non-nil answer is a break spec to arm.
	Poll func(c int) []byte
	// Stdout receives what the program prints (nil discards).
	Stdout io.Writer
}

// DebugRecording runs the recording's merged order (the one a bundle
// made from it would carry) under h, with its inputs.
func (s *Scheduler) DebugRecording(ctx context.Context, r *Recording, h *DebugHooks) (*Outcome, error) {
	steps := make([]*Step, len(r.steps))
	for i := range r.steps {
		steps[i] = &r.steps[i]
	}
	return s.debugRun(ctx, 0, &follow{steps: steps, strict: true, stopAtEnd: true}, r.replayInputs(), h)
}

// DebugBundle runs the bundle's schedule under h with its inputs; c is
// the program (the bundle's own sources, or a fixed program).
func (s *Scheduler) DebugBundle(ctx context.Context, b *Bundle, c *hale.Compiled, h *DebugHooks) (*Outcome, error) {
	steps, err := b.steps(c.Image)
	if err != nil {
		return nil, err
	}
	return s.debugRun(ctx, b.Seed, &follow{steps: steps, strict: true, stopAtEnd: true}, b.inputs(), h)
}

// DebugSeed runs schedule seed of the random strategy under h, with the
// fixtures and the world's streams from seed.
func (s *Scheduler) DebugSeed(ctx context.Context, seed uint64, h *DebugHooks) (*Outcome, error) {
	strat, err := newStrategy("random", DefaultDepth)
	if err != nil {
		return nil, err
	}
	return s.debugRun(ctx, seed, strat.schedule(seed), nil, h)
}

func (s *Scheduler) debugRun(ctx context.Context, seed uint64, ch chooser, in *replayInputs, h *DebugHooks) (*Outcome, error) {
	if h == nil {
		return nil, errors.New("debug: no hooks")
	}
	s.hooks = h
	defer func() { s.hooks = nil }()
	return s.run(ctx, seed, ch, in)
}
