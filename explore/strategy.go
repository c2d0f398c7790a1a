package explore

import (
	"fmt"
	mrand "math/rand/v2"

	"github.com/hale-lang/hale/vm/host"
)

// Strategies of hale test (docs/testing.md).
const (
	StrategyRandom = "random"
	StrategyPCT    = "pct"
	StrategyPOS    = "pos"
)

// DefaultDepth is pct's default depth D.
const DefaultDepth = 3

// strategy makes the chooser of each schedule of a search; it may learn
// from earlier runs (pct learns the number of steps).
type strategy interface {
	schedule(seed uint64) chooser
	done(o *Outcome)
}

func newStrategy(name string, depth int) (strategy, error) {
	switch name {
	case StrategyRandom:
		return randomStrategy{}, nil
	case StrategyPCT, "":
		if depth < 1 {
			return nil, fmt.Errorf("--depth must be at least 1, got %d", depth)
		}
		return &pctStrategy{depth: depth, steps: 64}, nil
	case StrategyPOS:
		return posStrategy{}, nil
	}
	return nil, fmt.Errorf("unknown strategy %q (want random, pct or pos)", name)
}

// schedRand is a schedule's stream of scheduling choices, separate from
// the program's own streams.
func schedRand(seed uint64) *mrand.Rand {
	return mrand.New(mrand.NewChaCha8(streamSeed(seed, "schedule")))
}

// random picks uniformly among the choices.
type randomStrategy struct{}

func (randomStrategy) schedule(seed uint64) chooser { return &randomChooser{rng: schedRand(seed)} }
func (randomStrategy) done(*Outcome)                {}

type randomChooser struct{ rng *mrand.Rand }

func (r *randomChooser) choose(_ int, choices []choice) int { return r.rng.IntN(len(choices)) }
func (r *randomChooser) ran(int, choice)                    {}

// pct gives every consumer a random priority (D and up), runs the
// highest-priority consumer that has a delivery, and at D−1 random steps
// (within the number of steps earlier runs took) lowers the running
// consumer below every other (to 1, 2, …). Which producer's delivery the
// consumer takes is chosen uniformly.
type pctStrategy struct {
	depth int
	steps int // the most steps a run of this search has taken
}

func (p *pctStrategy) schedule(seed uint64) chooser {
	rng := schedRand(seed)
	c := &pctChooser{rng: rng, prio: map[int]int{}, depth: p.depth, change: map[int]int{}}
	for j := 1; j < p.depth; j++ {
		// distinct change points in [0, steps)
		for tries := 0; tries < 16; tries++ {
			at := rng.IntN(max(p.steps, 1))
			if _, dup := c.change[at]; !dup {
				c.change[at] = j
				break
			}
		}
	}
	return c
}

func (p *pctStrategy) done(o *Outcome) { p.steps = max(p.steps, len(o.Steps)) }

type pctChooser struct {
	rng    *mrand.Rand
	depth  int
	prio   map[int]int // consumer → priority; assigned on first sight
	next   int         // consumers seen
	change map[int]int // step → the priority the running consumer drops to
}

func (p *pctChooser) priority(c int) int {
	pr, ok := p.prio[c]
	if !ok {
		// A random place among the consumers seen so far, all above the
		// change priorities: insert at a uniform rank.
		p.next++
		rank := p.rng.IntN(p.next)
		for k, v := range p.prio {
			if v >= p.depth && v-p.depth >= rank {
				p.prio[k] = v + 1
			}
		}
		pr = p.depth + rank
		p.prio[c] = pr
	}
	return pr
}

func (p *pctChooser) best(choices []choice) int {
	top, topPrio := -1, -1
	for _, ch := range choices {
		if pr := p.priority(ch.consumer); pr > topPrio {
			top, topPrio = ch.consumer, pr
		}
	}
	return top
}

func (p *pctChooser) choose(step int, choices []choice) int {
	c := p.best(choices)
	if j, ok := p.change[step]; ok {
		p.prio[c] = p.depth - j // below every initial priority
		c = p.best(choices)
	}
	var mine []int
	for i, ch := range choices {
		if ch.consumer == c {
			mine = append(mine, i)
		}
	}
	return mine[p.rng.IntN(len(mine))]
}

func (p *pctChooser) ran(int, choice) {}

// pos gives every pending delivery a random priority when it is first
// seen, runs the highest, and then gives a fresh priority to every
// pending delivery that raced with it (the same target consumer).
type posStrategy struct{}

func (posStrategy) schedule(seed uint64) chooser {
	return &posChooser{rng: schedRand(seed), prio: map[posKey]float64{}}
}
func (posStrategy) done(*Outcome) {}

type posKey struct {
	consumer, target int
	start            bool
	msg              host.MessageID
}

type posChooser struct {
	rng  *mrand.Rand
	prio map[posKey]float64
	last []choice
}

func keyOf(ch choice) posKey {
	return posKey{ch.consumer, ch.d.Target, ch.d.IsStart(), ch.d.Message}
}

func (p *posChooser) choose(_ int, choices []choice) int {
	best, bestPrio := 0, -1.0
	for i, ch := range choices {
		k := keyOf(ch)
		pr, ok := p.prio[k]
		if !ok {
			pr = p.rng.Float64()
			p.prio[k] = pr
		}
		if pr > bestPrio {
			best, bestPrio = i, pr
		}
	}
	p.last = choices
	return best
}

func (p *posChooser) ran(_ int, c choice) {
	delete(p.prio, keyOf(c))
	for _, ch := range p.last {
		if ch.consumer == c.consumer && keyOf(ch) != keyOf(c) {
			p.prio[keyOf(ch)] = p.rng.Float64()
		}
	}
}

// follow runs a given schedule. A step that names no available choice
// is, when strict, the end of the run with Drift set; otherwise it is
// skipped and the oldest pending delivery runs instead. A nil step, and
// every step past the schedule's end, runs the oldest pending delivery;
// with stopAtEnd the run ends there instead.
type follow struct {
	steps     []*Step
	strict    bool
	stopAtEnd bool
	skipped   int
	drift     string
}

func (f *follow) choose(step int, choices []choice) int {
	if step >= len(f.steps) {
		if f.stopAtEnd {
			return -1
		}
		return oldest(choices)
	}
	want := f.steps[step]
	if want == nil {
		return oldest(choices)
	}
	for i, ch := range choices {
		if want.same(&ch.d, ch.consumer) {
			return i
		}
	}
	if f.strict {
		if f.drift == "" {
			f.drift = fmt.Sprintf("step %d is not possible: consumer %d has no deliverable message %s", step, want.Consumer, want.message())
		}
		return -1
	}
	f.skipped++
	return oldest(choices)
}

func (f *follow) ran(int, choice) {}
