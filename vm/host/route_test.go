package host

import (
	"fmt"
	"testing"
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
