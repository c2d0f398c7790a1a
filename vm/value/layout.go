package value

import "unsafe"

// The memory layout of values, lists and structs, for the second tier
// (vm/internal/tier): inside the wasm guest its compiled code reads and
// writes them in the guest's linear memory, where a pointer is an
// address. A test in package vm keeps the tier's copies of these offsets
// equal to them.
const (
	LayoutValueSize   = unsafe.Sizeof(Value{})
	LayoutValueKind   = unsafe.Offsetof(Value{}.k)
	LayoutValueBits   = unsafe.Offsetof(Value{}.n)
	LayoutValuePtr    = unsafe.Offsetof(Value{}.p)
	LayoutListElems   = unsafe.Offsetof(List{}.elems) // the slice's data pointer, then its length
	LayoutListIter    = unsafe.Offsetof(List{}.iter)
	LayoutStructField = unsafe.Offsetof(Struct{}.f)  // the first field's address, then the count (as a slice's data pointer and length)
	LayoutEnumVals    = unsafe.Offsetof(enumObj{}.v) // the first value's address, then the count
	LayoutEnumType    = unsafe.Offsetof(enumObj{}.typ)
	LayoutEnumMark    = unsafe.Offsetof(enumObj{}.mark)
	LayoutEnumHeader  = unsafe.Sizeof(enumObj{}) // a variant's values follow its header (obj1, obj2)
	LayoutEnumFirst   = unsafe.Offsetof(obj2[enumObj]{}.a)
	// LayoutKindEnum is an enum Value's kind byte.
	LayoutKindEnum = uintptr(KindEnum)
	// LayoutKindList is a list Value's kind byte.
	LayoutKindList = uintptr(KindList)
	// LayoutEnumBoxed is the bit of an enum Value's bits that marks a
	// variant with values (its pointer is then to their object).
	LayoutEnumBoxed = enumBoxed
)

// Addr returns the address of the list or struct that v refers to (for
// the second tier, which is handed it as a linear-memory address), or 0
// for any other kind.
func (v Value) Addr() uintptr {
	if v.k != KindList && v.k != KindStruct {
		return 0
	}
	return uintptr(v.p)
}
