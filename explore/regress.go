package explore

import (
	"context"
	"fmt"
)

// Regression is a kept bundle run against the current program.
type Regression struct {
	Failed  bool     // the bundle's signature recurred (or, strict, steps were skipped)
	Skipped int      // steps that named no pending delivery and were skipped
	Failure *Failure // how the run failed, if it did
	Reason  string   // why it failed
}

// RunRegression runs the current program under a bundle's schedule
// (docs/testing.md): a step naming a delivery that is not pending, or an
// instance the program no longer has, is skipped and the oldest pending
// delivery runs instead; after the schedule the oldest pending delivery
// runs until the run ends. Inputs come from the bundle's transcript, and
// what it cannot answer from the fixtures and the bundle's seed. The
// bundle fails only if its failure's signature recurs; with strict,
// skipped steps fail it too.
func (s *Scheduler) RunRegression(ctx context.Context, b *Bundle, strict bool) (*Regression, error) {
	byName := map[string]int{}
	for i, in := range s.img.Instances {
		byName[in.Name] = i
	}
	steps := make([]*Step, len(b.Schedule))
	for i, ws := range b.Schedule {
		msg, start, _ := parseMessage(ws.Message)
		t, ok := byName[ws.Target]
		if !ok {
			t = -1 // matches nothing: skipped
		}
		steps[i] = &Step{Consumer: ws.Consumer, Target: t, Start: start, Message: msg}
	}
	in := b.inputs()
	in.fallback = true
	f := &follow{steps: steps}
	o, err := s.run(ctx, b.Seed, f, in)
	if err != nil {
		return nil, err
	}
	r := &Regression{Skipped: f.skipped, Failure: o.Failure}
	switch {
	case o.Failure != nil && o.Failure.Signature() == b.Failure.Signature():
		r.Failed, r.Reason = true, fmt.Sprintf("fails again: %s", describe(b.Failure))
	case strict && f.skipped > 0:
		r.Failed, r.Reason = true, fmt.Sprintf("%d of %d steps were skipped (--strict)", f.skipped, len(steps))
	}
	return r, nil
}
