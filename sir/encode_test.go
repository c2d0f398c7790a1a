package sir

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func encodeAll(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for name, files := range testdataPrograms(t) {
		p, err := lowerFiles(files)
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	for name, files := range testdataPrograms(t) {
		p, err := lowerFiles(files)
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		q, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b2, err := q.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, b2) {
			t.Errorf("%s: re-encoding differs", name)
		}
		if p.Text() != q.Text() {
			t.Errorf("%s: decoded program prints differently:\n%s", name, lineDiff(p.Text(), q.Text()))
		}
		if BuildShape(p).Hash() != BuildShape(q).Hash() {
			t.Errorf("%s: decoded program has another shape", name)
		}
	}
}

func TestUnmarshalRejects(t *testing.T) {
	good := encodeAll(t)["program"]
	version := append([]byte("HSIR"), binary.AppendUvarint(nil, binaryVersion+1)...)
	bomb := append([]byte("HSIR"), binary.AppendUvarint(nil, binaryVersion)...)
	bomb = append(bomb, 0, 0)                // entry, files
	bomb = binary.AppendUvarint(bomb, 1<<40) // a trillion types
	cases := map[string][]byte{
		"empty":     nil,
		"magic":     []byte("HSIX\x01"),
		"version":   version,
		"count":     bomb,
		"trailing":  append(append([]byte{}, good...), 0),
		"truncated": good[:len(good)-1],
	}
	for name, data := range cases {
		if _, err := Unmarshal(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestUnmarshalDamaged decodes every prefix of an encoding and every
// one-byte corruption of it: no panic, and whatever is accepted is valid.
func TestUnmarshalDamaged(t *testing.T) {
	good := encodeAll(t)["assign"]
	for i := 0; i < len(good); i++ {
		if _, err := Unmarshal(good[:i]); err == nil {
			t.Fatalf("prefix of %d bytes accepted", i)
		}
	}
	for i := 0; i < len(good); i++ {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			bad := append([]byte{}, good...)
			bad[i] ^= x
			if p, err := Unmarshal(bad); err == nil {
				exercise(t, p)
			}
		}
	}
}

// exercise runs every consumer of a decoded program that must not panic
// on a valid one.
func exercise(t testing.TB, p *Program) {
	t.Helper()
	_ = p.Text()
	s := BuildShape(p)
	var b bytes.Buffer
	_ = s.WriteText(&b)
	_ = s.WriteJSON(&b)
	_ = s.WriteDot(&b)
	if _, err := p.MarshalBinary(); err != nil {
		t.Fatalf("valid decoded program does not encode: %v", err)
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, b := range encodeAll(f) {
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Unmarshal(data)
		if err != nil {
			return
		}
		exercise(t, p)
		// The encoding of a decoded program is canonical: it decodes
		// and re-encodes to itself.
		b, _ := p.MarshalBinary()
		q, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("re-encoded program rejected: %v", err)
		}
		b2, _ := q.MarshalBinary()
		if !bytes.Equal(b, b2) {
			t.Fatal("encoding is not canonical")
		}
	})
}

func TestValidateCatches(t *testing.T) {
	mutations := map[string]func(p *Program){
		"type ref":      func(p *Program) { p.Topics[0].Type = TypeRef(len(p.Types)) },
		"frame slot":    func(p *Program) { p.Funcs[0].Body[0].(*Let).Slot = p.Funcs[0].NumSlots },
		"state slot":    func(p *Program) { p.Loci[0].NumSlots = 99 },
		"call arity":    func(p *Program) { p.Funcs[0].NumParams = 0 },
		"locals":        func(p *Program) { p.Funcs[0].Locals = nil },
		"subscriber":    func(p *Program) { p.Topics[0].Subscribers = []int{7} },
		"basic types":   func(p *Program) { p.Types[TInt].Kind = KindFloat },
		"instance slot": func(p *Program) { p.Instances[0].Args = []Expr{&StateRef{ExprBase: ExprBase{Ty: TInt}}} },
	}
	src := `
topic T { n: int }
fn f(x: int) -> int { let y = x; return y; }
fn g() -> int { return f(1); }
locus L(k: int) { on T(t) { } }
main { spawn L(1); }`
	for name, mutate := range mutations {
		p := loadSrc(t, src)
		if err := p.Validate(); err != nil {
			t.Fatalf("valid program rejected: %v", err)
		}
		mutate(p)
		if err := p.Validate(); err == nil {
			t.Errorf("%s: mutation not caught", name)
		}
	}
}
