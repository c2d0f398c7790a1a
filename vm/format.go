package vm

import (
	"math"
	"strconv"
	"unsafe"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/lang/format"
	"github.com/hale-lang/hale/vm/value"
)

// formatParts builds the text of a format call: parts[i] laid out by the
// spec of part i of layout (image.FormatLayout), in one allocation.
func (m *Machine) formatParts(parts []value.Value, layout string) value.Value {
	buf := m.fmtText[:0]
	for i, v := range parts {
		spec := image.FormatSpec(layout, i)
		if spec < 0 {
			buf = value.AppendFormat(buf, v)
			continue
		}
		m.fmtPart, buf = appendFormatted(buf, m.fmtPart[:0], v, format.Unpack(spec))
	}
	if cap(buf) <= maxScratch {
		m.fmtText = buf
	}
	return value.Str(string(buf))
}

// maxScratch bounds the scratch buffers a machine keeps between calls.
const maxScratch = 1 << 16

// appendFormatted appends v laid out by a placeholder's spec: an int in
// decimal, hex or binary (a negative number keeps its sign: -ff); a float
// with a precision in fixed decimals rounded correctly (strconv's 'f'
// form), without one as str prints it; NaN and the infinities as str
// prints them whatever the precision, padded with spaces under a zero
// flag; any other value as its str form. Then padded to the width.
//
// tmp is scratch space for the body; appendFormatted returns it (grown)
// beside buf.
func appendFormatted(buf, tmp []byte, v value.Value, spec format.Spec) (tmpOut, bufOut []byte) {
	var body []byte
	number := false
	switch v.Kind() {
	case value.KindString:
		return tmp, spec.Pad(buf, v.AsStr(), false)
	case value.KindInt:
		body = strconv.AppendInt(tmp, v.AsInt(), spec.Base())
		number = true
	case value.KindFloat:
		f := v.AsFloat()
		number = !math.IsNaN(f) && !math.IsInf(f, 0)
		if number && spec.Precision >= 0 {
			body = strconv.AppendFloat(tmp, f, 'f', spec.Precision, 64)
		} else {
			body = value.AppendFloat(tmp, f)
		}
	default:
		body = value.AppendFormat(tmp, v)
	}
	if cap(body) > maxScratch {
		return tmp, spec.Pad(buf, bytesView(body), number)
	}
	return body, spec.Pad(buf, bytesView(body), number)
}

// bytesView reads b as a string without copying it; the string must not
// outlive b's next change.
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
