package tier

import (
	"testing"

	"github.com/hale-lang/hale/vm/value"
)

// TestLayout keeps the offsets compiled code reads and writes equal to
// vm/value's layout, which is the same in the wasm guest (a Go pointer and
// an int are 8 bytes there too).
func TestLayout(t *testing.T) {
	for _, c := range []struct {
		name      string
		tier, val uintptr
	}{
		{"value size", valueSize, value.LayoutValueSize},
		{"value kind", valueKind, value.LayoutValueKind},
		{"value bits", valueBits, value.LayoutValueBits},
		{"value pointer", valuePtr, value.LayoutValuePtr},
		{"list data", listData, value.LayoutListElems},
		{"list length", listLen, value.LayoutListElems + 8},
		{"list capacity", listCap, value.LayoutListElems + 16},
		{"push charge", PushCharge, value.SizeSlot},
		{"list iter", listIter, value.LayoutListIter},
		{"struct fields", structField, value.LayoutStructField},
		{"struct length", structLen, value.LayoutStructField + 8},
		{"enum values", enumVals, value.LayoutEnumVals},
		{"enum length", enumLen, value.LayoutEnumVals + 8},
		{"enum boxed bit", enumBoxed, uintptr(value.LayoutEnumBoxed)},
		{"enum type", enumTyp, value.LayoutEnumType},
		{"enum mark", enumMark, value.LayoutEnumMark},
		{"enum header", enumHeaderSize, value.LayoutEnumHeader},
		{"enum first value", enumHeaderSize, value.LayoutEnumFirst},
		{"enum kind", uintptr(kindEnum), value.LayoutKindEnum},
		{"list kind", uintptr(kindList), value.LayoutKindList},
		{"new list charge", NewListCharge, value.SizeListHeader},
		{"enum charge of 2", uintptr(ArenaCharge(2)), uintptr(value.SizeObjectHeader + 2*value.SizeSlot)},
	} {
		if c.tier != c.val {
			t.Errorf("%s: the tier uses offset %d, vm/value has %d", c.name, c.tier, c.val)
		}
	}
}
