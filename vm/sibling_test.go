package vm_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

const siblingSrc = `
const N: int = 3;
topic Add { n: int }
locus Cell(id: int) {
    var total: int = 0;
    var xs: [int] = [];
    on Add(a) {
        total += a.n * (id + 1);
        push(xs, total);
        print(str(id) + " " + str(total));
    }
}
main {
    for i in 0..N { spawn Cell(i) as cells[i]; }
}
`

// A sibling is the machine New would make: a field that New sets and
// Sibling forgets (or the reverse) fails this.
func TestSiblingIsLikeNew(t *testing.T) {
	img := compile(t, siblingSrc)
	h := &fakeHost{}
	m, err := vm.New(img, h)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := vm.New(img, h)
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Sibling(h); !reflect.DeepEqual(s, fresh) {
		t.Errorf("a sibling differs from a new machine:\n%+v\n%+v", s, fresh)
	}
	m.SetMemoryLimit(3 << 20)
	if got := m.Sibling(h).MemoryLimit(); got != 3<<20 {
		t.Errorf("sibling's memory limit %d, want m's", got)
	}
}

// A machine and its sibling share nothing a run changes: each has its
// own instances, state and memory account.
func TestSiblingRunsApart(t *testing.T) {
	img := compile(t, siblingSrc)
	addPayload := func(n int64) []byte {
		b := []byte{byte(value.KindStruct), 1}
		b, _ = value.Encode(b, value.Int(n))
		return b
	}
	ha, hb := &fakeHost{}, &fakeHost{}
	a, err := vm.New(img, ha)
	if err != nil {
		t.Fatal(err)
	}
	b := a.Sibling(hb)
	for i := range 3 {
		if err := a.Init(i); err != nil {
			t.Fatal(err)
		}
		if err := b.Init(i); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := a.Deliver(1, 0, addPayload(5)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Deliver(1, 0, addPayload(7)); err != nil {
		t.Fatal(err)
	}
	if got, want := ha.out.String(), "1 10\n1 20\n"; got != want {
		t.Errorf("machine printed %q, want %q", got, want)
	}
	if got, want := hb.out.String(), "1 14\n"; got != want {
		t.Errorf("sibling printed %q, want %q (its own state, its own host)", got, want)
	}
	sa, _ := a.State(1)
	sb, _ := b.State(1)
	if reflect.DeepEqual(sa, sb) {
		t.Errorf("machine and sibling have the same state %x", sa)
	}

	// The sibling's memory account is its own: a small limit on it traps
	// its run, not the machine's.
	b.SetMemoryLimit(1 << 20)
	big := compile(t, oomSrc)
	ma, err := vm.New(big, &pollHost{})
	if err != nil {
		t.Fatal(err)
	}
	mb := ma.Sibling(&pollHost{})
	mb.SetMemoryLimit(1 << 20)
	if err := mb.Init(0); err != nil {
		t.Fatal(err)
	}
	var tr *vm.Trap
	if err := mb.Deliver(0, vm.HandlerStart, nil); !errors.As(err, &tr) || !strings.Contains(tr.Message, "limit of 1 MiB") {
		t.Errorf("sibling with a 1 MiB limit: %v", err)
	}
	if ma.MemoryLimit() != vm.DefaultMemoryLimit {
		t.Errorf("the machine's limit changed to %d", ma.MemoryLimit())
	}
}
