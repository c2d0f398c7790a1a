package value

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTailModel concatenates at random among values made so far (so
// chains grow, branch from older prefixes, take themselves, meet empty
// strings) and checks every value, old ones included, against Go's own
// concatenation: an append in place must never change what a value
// shows.
func TestTailModel(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		var tail Tail
		vals := []Value{Str(""), Str("a"), Str("xyz")}
		want := []string{"", "a", "xyz"}
		for step := range 3000 {
			i := len(vals) - 1 - r.IntN(min(len(vals), 4)) // mostly the newest: chains
			if r.IntN(8) == 0 {
				i = r.IntN(len(vals))
			}
			j := r.IntN(len(vals))
			if r.IntN(3) == 0 {
				j = r.IntN(3) // a short piece
			}
			v := tail.Concat(vals[i], vals[j])
			if v.Kind() != KindString || v.AsStr() != want[i]+want[j] {
				t.Fatalf("seed %d step %d: %q + %q = %q", seed, step, want[i], want[j], v.AsStr())
			}
			vals, want = append(vals, v), append(want, want[i]+want[j])
			if len(want[len(want)-1]) > 1<<16 {
				vals, want = vals[:3], want[:3] // keep the test quick
			}
		}
		for k := range vals {
			if vals[k].AsStr() != want[k] {
				t.Fatalf("seed %d: value %d changed: %q, want %q", seed, k, vals[k].AsStr(), want[k])
			}
		}
	}
}

// TestTailChain checks what a chain costs: appending 10,000 pieces
// allocates about log2 times, not once a piece, and keeps bytes' kind.
func TestTailChain(t *testing.T) {
	var tail Tail
	allocs := testing.AllocsPerRun(10, func() {
		s := BytesOf("")
		for range 10000 {
			s = tail.Concat(s, BytesOf("ab"))
		}
		if s.Kind() != KindBytes || s.AsStr() != strings.Repeat("ab", 10000) {
			t.Fatalf("chain of bytes: %v %d bytes", s.Kind(), len(s.AsStr()))
		}
	})
	if allocs > 20 {
		t.Errorf("%v allocations for a chain of 10,000 appends, want about 10", allocs)
	}
	// A prefix taken from the chain and extended elsewhere is copied:
	// the chain's later bytes stay.
	a := tail.Concat(Str("hello"), Str(", "))
	b := tail.Concat(a, Str("world"))
	c := tail.Concat(a, Str("there"))
	if b.AsStr() != "hello, world" || c.AsStr() != "hello, there" || a.AsStr() != "hello, " {
		t.Errorf("got %q %q %q", a.AsStr(), b.AsStr(), c.AsStr())
	}
}
