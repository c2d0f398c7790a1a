package value

import (
	"strings"
	"testing"
)

// The Sizer counts each container once however many references lead to
// it, terminates on a list that contains itself, counts a long string
// held twice once and a short one at each place, and stops at its limit.
func TestSizer(t *testing.T) {
	inner := NewList([]Value{Int(1), Int(2)})          // 32 + 2*24
	outer := NewList([]Value{inner, inner, inner})     // 32 + 3*24, inner once
	long := Str(strings.Repeat("x", SizeLongString))   // counted once
	short := Str("abc")                                // counted at each place
	strs := NewList([]Value{long, long, short, short}) // 32 + 4*24
	self := NewList(nil)                               // 32 + 1*24 after the push
	if err := self.AsList().Push(self); err != nil {
		t.Fatal(err)
	}
	var s Sizer
	s.Begin(1 << 20)
	s.Add([]Value{outer, strs, self, inner})
	want := int64(32+2*24) + (32 + 3*24) + (32 + 4*24 + SizeLongString + 2*3) + (32 + 24)
	if s.Total() != want || s.Over() {
		t.Errorf("total %d (over %v), want %d", s.Total(), s.Over(), want)
	}
	// A second measure counts everything again.
	s.Begin(1 << 20)
	s.Add([]Value{outer})
	if s.Total() != (32+2*24)+(32+3*24) {
		t.Errorf("second measure: %d", s.Total())
	}
	s.Begin(100)
	s.Add([]Value{outer, strs})
	if !s.Over() {
		t.Errorf("over a limit of 100 with %d", s.Total())
	}
}
