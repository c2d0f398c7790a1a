package natsbus

import (
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/zeebo/blake3"

	"github.com/hale-lang/hale/codegen/image"
)

// TypeHash is the hash of a payload type sent in the Hale-Topic header:
// the first 16 hex digits of the BLAKE3-256 of the type's canonical
// description (TypeDescription). Two builds agree on it exactly when
// their payload types have the same names, fields, variants and element
// types, recursively, so a message of another shape is refused rather
// than decoded wrongly.
func TypeHash(img *image.Image, t image.TypeRef) string {
	sum := blake3.Sum256([]byte(TypeDescription(img, t)))
	return hex.EncodeToString(sum[:8])
}

// TypeDescription writes a type structurally: `int`, `[T]`, `{K: V}`,
// `struct Name { f: T, … }`, `enum Name { V(T, …), … }`; a named type
// met again inside itself is written `@Name`.
func TypeDescription(img *image.Image, t image.TypeRef) string {
	var b strings.Builder
	describe(&b, img, t, map[image.TypeRef]bool{})
	return b.String()
}

func describe(b *strings.Builder, img *image.Image, t image.TypeRef, open map[image.TypeRef]bool) {
	if int(t) < 0 || int(t) >= len(img.Types) {
		b.WriteString("?" + strconv.Itoa(int(t)))
		return
	}
	switch t {
	case image.TVoid:
		b.WriteString("void")
		return
	case image.TInt:
		b.WriteString("int")
		return
	case image.TFloat:
		b.WriteString("float")
		return
	case image.TBool:
		b.WriteString("bool")
		return
	case image.TString:
		b.WriteString("string")
		return
	case image.TBytes:
		b.WriteString("bytes")
		return
	}
	ty := &img.Types[t]
	switch ty.Kind {
	case image.KindList:
		b.WriteByte('[')
		describe(b, img, ty.Elem, open)
		b.WriteByte(']')
		return
	case image.KindMap:
		b.WriteByte('{')
		describe(b, img, ty.Key, open)
		b.WriteString(": ")
		describe(b, img, ty.Elem, open)
		b.WriteByte('}')
		return
	}
	if open[t] {
		b.WriteString("@" + ty.Name)
		return
	}
	open[t] = true
	defer delete(open, t)
	if ty.Kind == image.KindEnum {
		b.WriteString("enum " + ty.Name + " {")
		for i, v := range ty.Variants {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(" " + v.Name)
			if len(v.Fields) > 0 {
				b.WriteByte('(')
				for k, f := range v.Fields {
					if k > 0 {
						b.WriteString(", ")
					}
					describe(b, img, f, open)
				}
				b.WriteByte(')')
			}
		}
		b.WriteString(" }")
		return
	}
	b.WriteString("struct " + ty.Name + " {")
	for i, f := range ty.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(" " + f.Name + ": ")
		describe(b, img, f.Type, open)
	}
	b.WriteString(" }")
}
