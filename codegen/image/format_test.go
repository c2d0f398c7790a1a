package image

import "testing"

// TestFormatLayout checks that a layout gives back its specs, negative
// ones included, and that FormatParts accepts only layouts.
func TestFormatLayout(t *testing.T) {
	specs := []int64{-1, 0, 21479030816, 1<<62 + 5, -1}
	layout := FormatLayout(specs)
	n, ok := FormatParts(Const{Kind: KindString, Str: layout})
	if !ok || n != len(specs) {
		t.Fatalf("FormatParts = %d, %v; want %d, true", n, ok, len(specs))
	}
	for i, want := range specs {
		if got := FormatSpec(layout, i); got != want {
			t.Errorf("FormatSpec(%d) = %d, want %d", i, got, want)
		}
	}
	for _, k := range []Const{
		{Kind: KindString, Str: ""},
		{Kind: KindString, Str: "1234567"},
		{Kind: KindBytes, Str: FormatLayout([]int64{-1})},
		{Kind: KindInt, Int: 8},
	} {
		if _, ok := FormatParts(k); ok {
			t.Errorf("FormatParts(%+v) accepted a constant that is not a layout", k)
		}
	}
}
