package host

import (
	"runtime"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/stdlib"
)

// Sharing guests among pinned consumers (docs/design.md, "Pinned
// instances share guests").
//
// On the wasm engine a guest instance costs about 3.5 MB and several
// milliseconds to start, which a program with a thousand pinned instances
// would pay a thousand times. So pinned consumers beyond the first
// sharedGuests() share a small set of guests: each consumer keeps its own
// queue, goroutine, delivery order and vm.Machine (its instances, memory
// account and registers, in the shared guest), and takes the guest for
// one call at a time. What a consumer sees is unchanged, with two
// exceptions that the policy below rules out:
//
//   - a handler that blocks (sleep_ms, a network call) would hold the
//     guest and stall the consumers that share it, so a consumer whose
//     instances may call a blocking primitive keeps a guest of its own;
//   - a Journal or Order that makes a consumer wait for another one
//     inside a handler (a schedule explorer), or a debugger that stops a
//     handler at a break (Options.Debug), could deadlock two consumers of
//     one guest, so guests are shared only with no Order, no Debug, and
//     no Journal or one that says it never waits (IndependentJournal:
//     the recorder).
//
// async_io consumers, pools and the main bus keep guests of their own.

// IndependentJournal is implemented by a Journal whose calls never wait
// for another consumer to make progress (they may wait for I/O, as a
// recorder writing its artifact does). Only under such a Journal, or
// none, do pinned consumers share guests.
type IndependentJournal interface {
	Journal
	// Independent reports whether the Journal never waits for another
	// consumer.
	Independent() bool
}

// sharedGuests is the number of guests pinned consumers share when there
// are more of them: enough for every core to run one, and a few more so
// that a consumer rarely waits for its guest.
func sharedGuests() int { return max(8, 2*runtime.GOMAXPROCS(0)) }

// guestGroups returns, for each consumer in engines, the index of the
// shared guest it gets, or -1 for a guest of its own, and the number of
// shared guests.
func (r *runner) guestGroups(engines []*consumer) ([]int, int) {
	group := make([]int, len(engines))
	for i := range group {
		group[i] = -1
	}
	if !r.mayShareGuests() {
		return group, 0
	}
	blocking := blockingLoci(r.img)
	var eligible []int
	for i, c := range engines {
		if c.kind != image.ConsumerPinned {
			continue
		}
		ok := true
		for _, inst := range r.img.Consumers[c.id].Instances {
			ok = ok && !blocking[r.img.Instances[inst].Locus]
		}
		if ok {
			eligible = append(eligible, i)
		}
	}
	n := sharedGuests()
	if len(eligible) <= n {
		return group, 0 // a guest each, as without sharing
	}
	for k, i := range eligible {
		group[i] = k % n
	}
	return group, n
}

// mayShareGuests reports whether this run may put several consumers in
// one guest: on the wasm engine, with no Order, no debugger and an
// independent Journal or none.
func (r *runner) mayShareGuests() bool {
	if r.opts.Engine != EngineWasm || r.opts.engine != nil || r.order != nil || r.opts.Debug != nil {
		return false
	}
	if r.journal == nil {
		return true
	}
	j, ok := r.journal.(IndependentJournal)
	return ok && j.Independent()
}

// blockingLoci reports, by locus, whether a handler of the locus may call
// a primitive that blocks for a while (std::time::sleep_ms, the network),
// directly or through the functions it calls.
func blockingLoci(img *image.Image) []bool {
	blockingPrim := make([]bool, len(img.Prims))
	for i, p := range img.Prims {
		sp, ok := stdlib.ByID(p.ID)
		blockingPrim[i] = !ok || sp.Effect == stdlib.Net || sp.Name == "std::time::sleep_ms"
	}
	// mayBlock[f]: f calls a blocking primitive, or a function that
	// may block; found by iterating until nothing changes, which covers
	// recursion.
	mayBlock := make([]bool, len(img.Funcs))
	for changed := true; changed; {
		changed = false
		for f := range img.Funcs {
			if mayBlock[f] {
				continue
			}
			for _, in := range img.Funcs[f].Code {
				yes := false
				switch in.Op {
				case image.OpCallPrim:
					yes = in.B < 0 || int(in.B) >= len(blockingPrim) || blockingPrim[in.B]
				case image.OpCall:
					yes = in.B >= 0 && int(in.B) < len(mayBlock) && mayBlock[in.B]
				}
				if yes {
					mayBlock[f], changed = true, true
					break
				}
			}
		}
	}
	visit := func(f int) bool { return f >= 0 && f < len(mayBlock) && mayBlock[f] }
	loci := make([]bool, len(img.Loci))
	for l, lc := range img.Loci {
		yes := visit(lc.Start)
		for _, h := range lc.Handlers {
			yes = visit(h.Func) || yes
		}
		loci[l] = yes
	}
	return loci
}
