package explore

import (
	"context"
	"time"
)

// SearchOptions configures a search (hale test).
type SearchOptions struct {
	Strategy   string // random, pct (default) or pos
	Depth      int    // pct's depth; 0: DefaultDepth
	Schedules  int    // schedules to run; 0: 100
	Seed       uint64 // schedule i uses Seed+i
	TimeBudget time.Duration
	// ShrinkRuns bounds the runs spent shrinking each failure; 0: 500.
	ShrinkRuns int
	// Progress, when set, is called after each schedule.
	Progress func(done, total int)
	// FromRecording (hale explore): schedule 0 follows the recording's
	// merged order (Config.Recording); schedule i > 0 follows a prefix of
	// it of random length, then the strategy.
	FromRecording bool
}

// Found is one distinct failure of a search.
type Found struct {
	Failure       *Failure // the shrunk run's failure (same signature as the first)
	FirstSchedule int      // the index of the schedule that found it
	Count         int      // schedules that failed with this signature
	Shrunk        *Outcome // the shrunk run, written as the bundle
	First         *Outcome // the run that found it
}

// Report is the result of a search.
type Report struct {
	Schedules int // schedules run
	Strategy  string
	Seed      uint64
	Failures  []*Found // in order of discovery
	Elapsed   time.Duration
	// RecordedSkipped (hale explore) is the number of steps of the
	// recorded order that schedule 0 could not follow.
	RecordedSkipped int
}

// perturb is schedule i of a search from a recording: the recorded order
// (i = 0), or a prefix of it of random length and then the strategy's
// choices.
func (s *Scheduler) perturb(i int, seed uint64, then chooser) chooser {
	rec := s.cfg.Recording.steps
	n := len(rec)
	if i > 0 {
		n = schedRand(seed ^ 0x5eed).IntN(len(rec) + 1)
	}
	steps := make([]*Step, n)
	for k := range steps {
		steps[k] = &rec[k]
	}
	return &prefixChooser{f: &follow{steps: steps}, n: n, then: then}
}

// prefixChooser follows a schedule for its first n steps, then defers to
// another chooser.
type prefixChooser struct {
	f    *follow
	n    int
	then chooser
}

func (p *prefixChooser) choose(step int, choices []choice) int {
	if step < p.n {
		return p.f.choose(step, choices)
	}
	return p.then.choose(step, choices)
}

func (p *prefixChooser) ran(step int, c choice) {
	if step >= p.n {
		p.then.ran(step, c)
	}
}

// Search runs the program under opts.Schedules schedules (or until the
// time budget is spent) and shrinks every distinct failure.
func Search(ctx context.Context, s *Scheduler, opts SearchOptions) (*Report, error) {
	if opts.Strategy == "" {
		opts.Strategy = StrategyPCT
	}
	if opts.Depth == 0 {
		opts.Depth = DefaultDepth
	}
	if opts.Schedules <= 0 {
		opts.Schedules = 100
	}
	strat, err := newStrategy(opts.Strategy, opts.Depth)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	rep := &Report{Strategy: opts.Strategy, Seed: opts.Seed}
	bySig := map[string]*Found{}
	for i := 0; i < opts.Schedules; i++ {
		if opts.TimeBudget > 0 && time.Since(start) >= opts.TimeBudget {
			break
		}
		seed := opts.Seed + uint64(i)
		ch := strat.schedule(seed)
		if opts.FromRecording && s.cfg.Recording != nil {
			ch = s.perturb(i, seed, ch)
		}
		o, err := s.run(ctx, seed, ch, nil)
		if err != nil {
			return nil, err
		}
		if i == 0 && opts.FromRecording {
			rep.RecordedSkipped = o.Skipped
		}
		strat.done(o)
		rep.Schedules++
		if opts.Progress != nil {
			opts.Progress(i+1, opts.Schedules)
		}
		if o.Failure == nil {
			continue
		}
		sig := o.Failure.Signature()
		if f := bySig[sig]; f != nil {
			f.Count++
			continue
		}
		f := &Found{Failure: o.Failure, FirstSchedule: i, Count: 1, First: o}
		bySig[sig] = f
		rep.Failures = append(rep.Failures, f)
	}
	for _, f := range rep.Failures {
		shrunk, err := s.Shrink(ctx, f.First, opts.ShrinkRuns)
		if err != nil {
			return nil, err
		}
		f.Shrunk, f.Failure = shrunk, shrunk.Failure
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// RunSchedule runs schedule i of a search from seed with the given
// strategy, as Search runs it (without pct's learning from earlier runs:
// pct then assumes 64 steps).
func (s *Scheduler) RunSchedule(ctx context.Context, strategy string, depth int, seed uint64) (*Outcome, error) {
	if depth == 0 {
		depth = DefaultDepth
	}
	strat, err := newStrategy(strategy, depth)
	if err != nil {
		return nil, err
	}
	return s.run(ctx, seed, strat.schedule(seed), nil)
}

// Shrink makes a failing run's schedule smaller while it fails with the
// same signature (docs/testing.md): it drops steps from the end (the rest
// runs the oldest pending delivery), resets single steps to the oldest
// pending delivery, and removes single steps. A candidate is kept only if
// it fails with the same signature in no more steps, so the result is
// never longer than o. At most maxRuns candidate runs (0: 500).
func (s *Scheduler) Shrink(ctx context.Context, o *Outcome, maxRuns int) (*Outcome, error) {
	if o.Failure == nil {
		return o, nil
	}
	if maxRuns <= 0 {
		maxRuns = 500
	}
	sig := o.Failure.Signature()
	best := o
	runs := 0
	try := func(steps []*Step) (bool, error) {
		if runs >= maxRuns {
			return false, nil
		}
		runs++
		out, err := s.run(ctx, best.Seed, &follow{steps: steps}, nil)
		if err != nil {
			return false, err
		}
		if out.Failure == nil || out.Failure.Signature() != sig || len(out.Steps) > len(best.Steps) {
			return false, nil
		}
		best = out
		return true, nil
	}
	explicit := func(steps []Step) []*Step {
		out := make([]*Step, len(steps))
		for i := range steps {
			out[i] = &steps[i]
		}
		return out
	}
	cur := explicit(best.Steps)
	// Drop steps from the end: the shortest kept prefix of 0, 1, 2, 4, …
	for p := 0; p < len(cur); p = max(p*2, p+1) {
		ok, err := try(cur[:p])
		if err != nil {
			return nil, err
		}
		if ok {
			cur = append(cur[:p:p], make([]*Step, len(best.Steps)-p)...)
			break
		}
	}
	for changed := true; changed && runs < maxRuns; {
		changed = false
		// Reset single steps to the oldest pending delivery.
		for i := 0; i < len(cur) && runs < maxRuns; i++ {
			if cur[i] == nil {
				continue
			}
			cand := append(append([]*Step{}, cur[:i]...), nil)
			cand = append(cand, cur[i+1:]...)
			ok, err := try(cand)
			if err != nil {
				return nil, err
			}
			if ok {
				cur, changed = cand[:min(len(cand), len(best.Steps))], true
			}
		}
		// Remove single steps.
		for i := 0; i < len(cur) && runs < maxRuns; i++ {
			if cur[i] == nil {
				continue
			}
			cand := append(append([]*Step{}, cur[:i]...), cur[i+1:]...)
			ok, err := try(cand)
			if err != nil {
				return nil, err
			}
			if ok {
				cur, changed = cand[:min(len(cand), len(best.Steps))], true
				i--
			}
		}
	}
	return best, nil
}
