package host

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hale-lang/hale/vm"
)

// TestRouterRoute checks the routing rule on its own: ordinary
// subscribers whose guard holds, and member k mod m of the members whose
// guard holds, in main order.
func TestRouterRoute(t *testing.T) {
	img := compileAll(t, `topic Job { n: int }
locus Plain { on Job(j) { } }
locus Picky { on Job(j) if j.n > 0 { } }
locus Member { on Job(j) shared { } }
locus PickyMember { on Job(j) if j.n > 0 shared { } }
main {
    spawn Member as m0;
    spawn Plain as plain;
    spawn PickyMember as pm1;
    spawn Picky as picky;
    spawn Member as m2;
}
`)
	rt := NewRouter(img)
	if got := rt.GuardBytes(0); got != 1 {
		t.Fatalf("guard bytes %d, want 1", got)
	}
	// Guard bits in main order of the guarded subscribers: pm1 (bit 0),
	// picky (bit 1).
	for _, c := range []struct {
		bits []byte
		k    uint64
		want string
	}{
		{[]byte{3}, 0, "[0 1 3]"}, // members m0, pm1, m2: k 0 -> m0
		{[]byte{3}, 1, "[1 2 3]"}, // -> pm1
		{[]byte{3}, 2, "[1 3 4]"}, // -> m2
		{[]byte{3}, 3, "[0 1 3]"}, // wraps around
		{[]byte{0}, 0, "[0 1]"},   // pm1 and picky fail: members m0, m2
		{[]byte{0}, 1, "[1 4]"},
		{[]byte{2}, 5, "[1 3 4]"}, // only picky holds among the guards: 5 mod 2 -> m2
	} {
		if got := fmt.Sprint(rt.Route(nil, 0, c.bits, c.k)); got != c.want {
			t.Errorf("bits %08b k %d: %s, want %s", c.bits[0], c.k, got, c.want)
		}
	}
}

// routeLoop is Route's rule written out plainly, walking every
// subscriber: what the shortcut for rings of guarded subscribers must
// give.
func routeLoop(tr *topicRoute, bits []byte, k uint64) []int {
	holds := func(s routeSub) bool {
		return s.bit < 0 || s.bit/8 < len(bits) && bits[s.bit/8]>>(s.bit%8)&1 != 0
	}
	var members []int
	var out []int
	for _, s := range tr.subs {
		if s.shared && holds(s) {
			members = append(members, s.inst)
		}
	}
	for _, s := range tr.subs {
		if !holds(s) {
			continue
		}
		if s.shared && s.inst != members[int(k%uint64(len(members)))] {
			continue
		}
		out = append(out, s.inst)
	}
	return out
}

// TestRouterRouteRandom: on random topics (guarded, unguarded and
// shared subscribers, or rings of guarded ones only, which Route answers
// from the set bits) and random guard bits, including bits past the
// last subscriber, Route is the rule.
func TestRouterRouteRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 1))
	rings := 0
	for range 2000 {
		n := r.IntN(40)
		ring := r.IntN(2) == 0
		tr := topicRoute{}
		bit := 0
		for i := range n {
			s := routeSub{inst: 3*i + r.IntN(3), bit: -1}
			if ring || r.IntN(3) > 0 {
				s.bit = bit
				bit++
			}
			s.shared = !ring && r.IntN(4) == 0
			tr.subs = append(tr.subs, s)
		}
		tr.bytes = vm.GuardBits(bit)
		tr.index()
		if ring && n > 0 {
			if tr.byBit == nil {
				t.Fatalf("a ring of %d guarded subscribers is not indexed", n)
			}
			rings++
		}
		rt := &Router{topics: []topicRoute{tr}}
		for range 5 {
			bits := make([]byte, tr.bytes)
			for i := range bits {
				bits[i] = byte(r.IntN(256)) // padding bits too
			}
			k := r.Uint64N(100)
			got, want := rt.Route(nil, 0, bits, k), routeLoop(&tr, bits, k)
			if !slices.Equal(got, want) {
				t.Fatalf("subs %v bits %08b k %d: %v, want %v", tr.subs, bits, k, got, want)
			}
		}
	}
	if rings == 0 {
		t.Fatal("no ring")
	}
}
