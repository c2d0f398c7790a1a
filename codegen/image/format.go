package image

import "encoding/binary"

// FormatLayout encodes the specs of a format call's parts as the string
// constant that OpFormat reads: one little-endian int64 per part, negative
// for str(part), else a placeholder spec packed by package lang/format.
// The interpreter reads a spec with one load: nothing is parsed at run
// time.
func FormatLayout(specs []int64) string {
	b := make([]byte, 0, 8*len(specs))
	for _, s := range specs {
		b = binary.LittleEndian.AppendUint64(b, uint64(s))
	}
	return string(b)
}

// FormatParts returns the number of parts of a format layout constant,
// and false when k is not one.
func FormatParts(k Const) (int, bool) {
	if k.Kind != KindString || len(k.Str) == 0 || len(k.Str)%8 != 0 {
		return 0, false
	}
	return len(k.Str) / 8, true
}

// FormatSpec returns the spec of part i of a format layout.
func FormatSpec(layout string, i int) int64 {
	b := layout[8*i : 8*i+8]
	return int64(uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56)
}
