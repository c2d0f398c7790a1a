package host

import (
	mathbits "math/bits"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
)

// Router decides which instances get a message: the routing decision of
// one publish, which the runtime makes when the publish happens and which
// a scheduler stepping deliveries one at a time can make the same way.
//
// A topic's subscribers, in main order, are ordinary (each gets every
// message whose guard holds for it) or members of the topic's work group
// (`on T(x) shared`). Of the members whose guard holds, in main order,
// message number k of a producer (its k-th publish of the topic, counting
// from 0 and counting every one) goes to member k mod m, or to none when
// m is 0. The choice depends only on the program, the guard bits and k,
// so a replay makes it again; it is not load-aware.
type Router struct {
	topics []topicRoute
}

type topicRoute struct {
	subs  []routeSub // in main order
	bytes int        // guard-bit bytes a publish carries
	// shared: some subscriber is a member of the work group. byBit,
	// when every subscriber has a guard and none is a member, is the
	// instance of each guard bit: the targets are the set bits' (a ring
	// of guarded instances needs no walk of all of them).
	shared bool
	byBit  []int
}

// index sets tr's shared and byBit from its subscribers.
func (tr *topicRoute) index() {
	tr.shared, tr.byBit = false, nil
	inOrder := len(tr.subs) > 0
	byBit := make([]int, len(tr.subs))
	for i, s := range tr.subs {
		tr.shared = tr.shared || s.shared
		inOrder = inOrder && s.bit == i // guarded, bit i
		byBit[i] = s.inst
	}
	if inOrder && !tr.shared {
		tr.byBit = byBit
	}
}

type routeSub struct {
	inst   int
	bit    int // index of its guard bit, -1 without a guard
	shared bool
}

// NewRouter prepares the routing of img's topics.
func NewRouter(img *image.Image) *Router {
	rt := &Router{topics: make([]topicRoute, len(img.Topics))}
	for t := range img.Topics {
		tr := &rt.topics[t]
		bit := 0
		for _, inst := range img.Topics[t].Subscribers {
			s := routeSub{inst: inst, bit: -1}
			l := &img.Loci[img.Instances[inst].Locus]
			for _, h := range l.Handlers {
				if h.Topic != t {
					continue
				}
				s.shared = h.Shared
				if h.Guard >= 0 {
					s.bit = bit
					bit++
				}
			}
			tr.subs = append(tr.subs, s)
		}
		tr.bytes = vm.GuardBits(bit)
		tr.index()
	}
	return rt
}

// GuardBytes returns the number of bytes of guard bits that a publish of
// topic carries (0 when no subscriber has a guard).
func (rt *Router) GuardBytes(topic int) int { return rt.topics[topic].bytes }

// Route appends to dst the instances that get a message on topic, in
// main order, given the publish's guard bits (vm.GuardedSubscribers
// order) and k, the number of messages on topic the producer published
// before this one.
func (rt *Router) Route(dst []int, topic int, bits []byte, k uint64) []int {
	tr := &rt.topics[topic]
	if tr.byBit != nil {
		for i, b := range bits {
			for ; b != 0; b &= b - 1 {
				if j := i*8 + mathbits.TrailingZeros8(b); j < len(tr.byBit) {
					dst = append(dst, tr.byBit[j])
				}
			}
		}
		return dst
	}
	holds := func(s routeSub) bool {
		return s.bit < 0 || s.bit/8 < len(bits) && bits[s.bit/8]>>(s.bit%8)&1 != 0
	}
	m := 0
	for _, s := range tr.subs {
		if s.shared && holds(s) {
			m++
		}
	}
	pick := -1
	if m > 0 {
		pick = int(k % uint64(m))
	}
	member := 0
	for _, s := range tr.subs {
		if !holds(s) {
			continue
		}
		if s.shared {
			if member != pick {
				member++
				continue
			}
			member++
		}
		dst = append(dst, s.inst)
	}
	return dst
}
