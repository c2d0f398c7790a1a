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

// Structs and enum variants count a header and a slot per value, each
// object once however many references lead to it: a tree whose nodes
// share their children counts each node once.
func TestSizerObjects(t *testing.T) {
	leaf := NewEnum(exprT, 0, []Value{Int(1)})                      // 32 + 24
	pair := NewStruct(pairT, []Value{leaf, leaf})                   // 32 + 2*24
	add := NewEnum(exprT, 1, []Value{pair})                         // 32 + 24
	top := NewStruct(pairT, []Value{add, add})                      // 32 + 2*24
	nums := NewStruct(orderT, []Value{Int(1), Int(2), Str("abcd")}) // 32 + 3*24 + 4
	var s Sizer
	s.Begin(1 << 20)
	s.Add([]Value{top, top, nums, NewEnum(exprT, 3, nil)})
	want := int64(32+24) + (32 + 2*24) + (32 + 24) + (32 + 2*24) + (32 + 3*24 + 4)
	if s.Total() != want {
		t.Errorf("total %d, want %d", s.Total(), want)
	}
	for _, c := range []struct {
		v    Value
		want int64
	}{{leaf, 32 + 24}, {pair, 32 + 2*24}, {nums, 32 + 3*24}, {NewEnum(exprT, 3, nil), 0}, {NewStruct(emptyT, nil), 32}} {
		if got := ShallowSize(c.v); got != c.want {
			t.Errorf("ShallowSize(%v) = %d, want %d", c.v, got, c.want)
		}
	}
}
