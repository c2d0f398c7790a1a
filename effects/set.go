package effects

import (
	"sort"
	"strings"

	"github.com/hale-lang/hale/stdlib"
)

// Set is an immutable set of effect names ("io", "net",
// "publish(OrderPlaced)"), kept sorted and deduplicated. The zero value is
// the empty set: pure.
type Set struct {
	names []string
}

// NewSet returns the set of the given effects.
func NewSet(effects ...stdlib.Effect) Set {
	names := make([]string, 0, len(effects))
	for _, e := range effects {
		names = append(names, string(e))
	}
	return setOf(names)
}

// setOf sorts and deduplicates names in place and wraps them.
func setOf(names []string) Set {
	if len(names) == 0 {
		return Set{}
	}
	sort.Strings(names)
	out := names[:1]
	for _, n := range names[1:] {
		if n != out[len(out)-1] {
			out = append(out, n)
		}
	}
	return Set{names: out}
}

// Has reports whether e is in the set.
func (s Set) Has(e stdlib.Effect) bool {
	i := sort.SearchStrings(s.names, string(e))
	return i < len(s.names) && s.names[i] == string(e)
}

// Len returns the number of effects in the set.
func (s Set) Len() int { return len(s.names) }

// Pure reports whether the set is empty.
func (s Set) Pure() bool { return len(s.names) == 0 }

// Slice returns the effect names in sorted order (a fresh slice, never nil).
func (s Set) Slice() []string {
	return append(make([]string, 0, len(s.names)), s.names...)
}

// Union returns the effects in s or t.
func (s Set) Union(t Set) Set {
	if len(t.names) == 0 {
		return s
	}
	if len(s.names) == 0 {
		return t
	}
	return setOf(append(s.Slice(), t.names...))
}

// Equal reports whether s and t hold the same effects.
func (s Set) Equal(t Set) bool {
	if len(s.names) != len(t.names) {
		return false
	}
	for i := range s.names {
		if s.names[i] != t.names[i] {
			return false
		}
	}
	return true
}

// String formats the set as "{io, publish(OrderPlaced), time}", or "{}"
// when it is pure.
func (s Set) String() string {
	return "{" + strings.Join(s.names, ", ") + "}"
}

// Topics returns the topics of the set's publish(T) effects, sorted.
func (s Set) Topics() []string {
	var out []string
	for _, n := range s.names {
		if t, ok := stdlib.Effect(n).Topic(); ok {
			out = append(out, t)
		}
	}
	return out
}

// nondeterministic returns the set's effects that a @deterministic fn may
// not reach, sorted.
func (s Set) nondeterministic() []string {
	var out []string
	for _, n := range s.names {
		if stdlib.Nondeterministic(stdlib.Effect(n)) {
			out = append(out, n)
		}
	}
	return out
}
