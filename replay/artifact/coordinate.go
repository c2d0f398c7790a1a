package artifact

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Target is a parsed coordinate, as `hale replay --at` takes it: either
// C:N, consumer C's delivery number N, or (Bare) a plain N, the Nth
// delivery of the artifact in file order. Both count from 0.
type Target struct {
	Bare     bool
	Consumer uint32 // C; 0 when Bare
	N        uint64
}

// String returns the target as written: "C:N", or "N" when bare.
func (t Target) String() string {
	if t.Bare {
		return strconv.FormatUint(t.N, 10)
	}
	return Coordinate{t.Consumer, t.N}.String()
}

// ParseCoordinate parses "C:N" or a bare "N". Both numbers are decimal
// digits only: no sign, no spaces, no other separators.
func ParseCoordinate(s string) (Target, error) {
	bad := func(detail string) (Target, error) {
		return Target{}, fmt.Errorf("bad coordinate %q: %s", s, detail)
	}
	const want = "want C:N or N"
	c, n, pair := strings.Cut(s, ":")
	if !digits(c) || (pair && !digits(n)) {
		return bad(want)
	}
	if !pair {
		v, err := strconv.ParseUint(c, 10, 64)
		if err != nil {
			return bad("delivery number " + c + " is too large")
		}
		return Target{Bare: true, N: v}, nil
	}
	id, err := strconv.ParseUint(c, 10, 64)
	if err != nil || id > math.MaxUint32 {
		return bad("consumer " + c + " is too large")
	}
	v, err := strconv.ParseUint(n, 10, 64)
	if err != nil {
		return bad("delivery number " + n + " is too large")
	}
	return Target{Consumer: uint32(id), N: v}, nil
}

// digits reports whether s is a non-empty run of ASCII decimal digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Resolve finds the delivery entry a target names, and its C:N. A C:N
// target needs consumer C in the artifact (in its consumer table or as
// the consumer of an entry) and N below the number of deliveries C
// handled; a bare N needs N below the artifact's number of deliveries.
func (a *Artifact) Resolve(t Target) (DeliveryRef, error) {
	if a == nil {
		return DeliveryRef{}, errors.New("no artifact to resolve a coordinate in")
	}
	refs := a.Deliveries()
	if t.Bare {
		if t.N >= uint64(len(refs)) {
			return DeliveryRef{}, fmt.Errorf("coordinate %s is past the end: the recording has %s",
				t, plural(uint64(len(refs)), "delivery", "deliveries"))
		}
		return refs[t.N], nil
	}
	var handled uint64
	for _, r := range refs {
		if r.At.Consumer != t.Consumer {
			continue
		}
		if r.At.N == t.N {
			return r, nil
		}
		handled++
	}
	if handled == 0 && !a.hasConsumer(t.Consumer) {
		return DeliveryRef{}, fmt.Errorf("coordinate %s names no consumer: the recording has no consumer %d", t, t.Consumer)
	}
	return DeliveryRef{}, fmt.Errorf("coordinate %s is past the end: consumer %d handled %s",
		t, t.Consumer, plural(handled, "delivery", "deliveries"))
}

// hasConsumer reports whether id is in the consumer table or stamps an entry.
func (a *Artifact) hasConsumer(id uint32) bool {
	for _, c := range a.Header.Consumers {
		if c.ID == id {
			return true
		}
	}
	for i := range a.Len() {
		if c, _, _ := a.head(i); c == id {
			return true
		}
	}
	return false
}

// plural writes n and the noun that agrees with it.
func plural(n uint64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatUint(n, 10) + " " + many
}
