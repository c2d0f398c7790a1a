package vm_test

import (
	"testing"

	"github.com/hale-lang/hale/vm"
)

// FuzzBreakDecoders feeds any bytes to the two break decoders: the info a
// PrimBreak call carries to the host (DecodeBreakInfo) and a break spec
// armed in a machine (SetBreaks, whose pcs may name any function and
// pc). Neither may panic, and a spec that was armed must disarm.
func FuzzBreakDecoders(f *testing.F) {
	img := compile(f, debugProg)
	f.Add(vm.EncodeBreakSpec(vm.BreakSpec{Step: true, Traps: true, At: []vm.BreakPC{{Fn: 0, PC: 1}, {Fn: 99, PC: 7}}}))
	f.Add([]byte{0, 1, 2, 3})
	f.Add([]byte{byte(vm.BreakTrap), 0, 0, 3, 'b', 'u', 'g', 0, 1, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = vm.DecodeBreakInfo(b)
		m, err := vm.New(img, nopHost{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.SetBreaks(b); err != nil {
			return
		}
		if err := m.SetBreaks(nil); err != nil {
			t.Fatalf("disarming: %v", err)
		}
	})
}
