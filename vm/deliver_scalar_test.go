package vm_test

import (
	"math"
	"testing"

	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

// TestDeliverScalarPayloads delivers payloads of int, float and bool
// fields one after another, which from the second on take the scalar
// decoder (deliver.go), checks the state after each, and checks that a
// payload the scalar decoder refuses gets the general decoder's error,
// after which deliveries go on as before.
func TestDeliverScalarPayloads(t *testing.T) {
	img := compile(t, `
topic T { n: int, x: float, b: bool }
locus L {
    var total: int = 0;
    var fsum: float = 0.0;
    var trues: int = 0;
    on T(m) { total += m.n; fsum += m.x; if m.b { trues += 1; } }
}
main { spawn L; }
`)
	m, err := vm.New(img, &fakeHost{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Init(0); err != nil {
		t.Fatal(err)
	}
	typ := m.PayloadType(0)
	enc := func(n int64, x float64, b bool) []byte {
		p, err := value.Encode(nil, value.NewStruct(typ, []value.Value{value.Int(n), value.Float(x), value.Bool(b)}))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	state := func() string {
		t.Helper()
		st, err := m.State(0)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := value.DecodeTuple(st, m.StateTypes(0))
		if err != nil {
			t.Fatal(err)
		}
		return value.Format(vs[0]) + " " + value.Format(vs[1]) + " " + value.Format(vs[2])
	}
	var total int64
	var fsum float64
	trues := 0
	for i, p := range []struct {
		n int64
		x float64
		b bool
	}{{1, 0.5, true}, {-200, 1.25, false}, {math.MaxInt64 / 4, -2, true}, {63, 0, true}, {-64, 1e10, false}} {
		if err := m.Deliver(0, 0, enc(p.n, p.x, p.b)); err != nil {
			t.Fatalf("delivery %d: %v", i, err)
		}
		total += p.n
		fsum += p.x
		if p.b {
			trues++
		}
		want := value.Format(value.Int(total)) + " " + value.Format(value.Float(fsum)) + " " + value.Format(value.Int(int64(trues)))
		if got := state(); got != want {
			t.Fatalf("after delivery %d: state %s, want %s", i, got, want)
		}
	}
	good := enc(5, 0.25, true)
	nonMinimal := append([]byte{good[0], good[1], good[2], good[3] | 0x80, 0}, good[4:]...)
	for _, bad := range [][]byte{
		append(append([]byte(nil), good...), 0), // trailing byte
		good[:len(good)-1],                      // truncated
		nonMinimal,                              // a varint with a trailing zero byte
		{byte(value.KindStruct), 2},             // too few fields
	} {
		_, want := value.Decode(bad, typ)
		if want == nil {
			t.Fatalf("%x decodes", bad)
		}
		before := state()
		err := m.Deliver(0, 0, bad)
		if err == nil || err.Error() != "vm: payload of T: "+want.Error() {
			t.Errorf("payload %x: %v, want the general decoder's %v", bad, err, want)
		}
		if got := state(); got != before {
			t.Errorf("payload %x changed the state: %s, was %s", bad, got, before)
		}
	}
	if err := m.Deliver(0, 0, good); err != nil {
		t.Fatal(err)
	}
}

// TestDeliverPayloadAllocs checks that a payloadLocal handler's delivery
// allocates nothing from the second on, whether its payload takes the
// scalar decoder or (with a string that repeats) the general one.
func TestDeliverPayloadAllocs(t *testing.T) {
	img := compile(t, `
topic A { n: int, x: float }
topic B { n: int, label: string }
locus L {
    var total: int = 0;
    on A(a) { total += a.n; }
    on B(b) { total += b.n; }
}
main { spawn L; }
`)
	m, err := vm.New(img, &fakeHost{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Init(0); err != nil {
		t.Fatal(err)
	}
	a, _ := value.Encode(nil, value.NewStruct(m.PayloadType(0), []value.Value{value.Int(3), value.Float(0.5)}))
	b, _ := value.Encode(nil, value.NewStruct(m.PayloadType(1), []value.Value{value.Int(4), value.Str("item")}))
	for topic, p := range [][]byte{a, b} {
		if err := m.Deliver(0, topic, p); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() {
			if err := m.Deliver(0, topic, p); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("topic %d: %v allocations per delivery", topic, n)
		}
	}
}
