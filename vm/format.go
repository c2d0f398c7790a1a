package vm

import (
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/hale-lang/hale/lang/format"
	"github.com/hale-lang/hale/vm/value"
)

// formatInt lays out i by a placeholder's spec: decimal, hex or binary
// (a negative number keeps its sign: -ff), padded to the width.
func formatInt(i int64, spec format.Spec) string {
	var digits [72]byte
	body := strconv.AppendInt(digits[:0], i, spec.Base())
	if len(body) >= spec.Width {
		return string(body)
	}
	var out [80]byte
	return string(spec.Pad(out[:0], bytesView(body), true))
}

// formatFloat lays out f by a placeholder's spec: with a precision, fixed
// decimals rounded correctly (strconv's 'f' form); without, as str prints
// it. NaN and the infinities print as str prints them whatever the
// precision, and a zero flag pads them with spaces.
func formatFloat(f float64, spec format.Spec) string {
	var digits [64]byte
	var body []byte
	finite := !math.IsNaN(f) && !math.IsInf(f, 0)
	if finite && spec.Precision >= 0 {
		body = strconv.AppendFloat(digits[:0], f, 'f', spec.Precision, 64)
	} else {
		body = value.AppendFloat(digits[:0], f)
	}
	if len(body) >= spec.Width {
		return string(body)
	}
	var out [80]byte
	return string(spec.Pad(out[:0], bytesView(body), finite))
}

// bytesView reads b as a string without copying it; the string must not
// outlive b's next change.
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// concatStrs joins the strings of parts in one allocation.
func concatStrs(parts []value.Value) value.Value {
	n := 0
	for _, p := range parts {
		n += len(p.AsStr())
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range parts {
		b.WriteString(p.AsStr())
	}
	return value.Str(b.String())
}
