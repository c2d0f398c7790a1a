package vm_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
)

// FuzzRun runs images that Unmarshal accepts. The interpreter addresses
// registers and instructions without bounds checks, trusting Validate, so
// whatever validates must run without corrupting memory or crashing: it
// may only return, trap or report an error. Images with operations whose
// results can grow exponentially in a few steps (concatenation, builtins)
// are skipped, as are their loops' memory needs.
func FuzzRun(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "codegen", "testdata", "*.hl"))
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		data, err := compile(f, string(src)).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, src := range []string{
		startProg(`fn fib(n: int) -> int { if n < 2 { return n; } return fib(n - 1) + fib(n - 2); }`, `let x = fib(5);`),
		startProg(`fn h(n: int) -> Result<int> { if n > 2 { return Ok(10 / (n - 3)); } return Err(Error { kind: "k", message: "m" }); }
fn g(n: int) -> Result<int> { let v = h(n)?; let w = try (h(v)?); return w; }`,
			`for i in 0..6 { let r = try g(i); let o: Option<int> = Some(i); match r { Ok(v) => { }, Err(e) => { } } }`),
		startProg(`type P { x: int } enum E { A, B(int) }`, `let m = {1: [P { x: 1 }]}; for k, v in m { let e = E::B(v[0].x); match e { E::A => { }, E::B(i) => { m[k + i] = v; } } }`),
		`topic Job { n: int, xs: [int] }
fn big(xs: [int], n: int) -> bool { push(xs, n); return len(xs) > n % 3; }
locus W(k: int, ys: [int]) { on Job(j) if big(j.xs, j.n + k) && big(ys, k) { publish Job { n: j.n + 1, xs: ys }; } }
locus B { on start { for i in 0..3 { publish Job { n: i, xs: [i] }; } } }
main { spawn B; spawn W(1, [1]) as a; spawn W(2, []) as b; }
`,
	} {
		data, err := compile(f, src).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := image.Unmarshal(data)
		if err != nil {
			return
		}
		for _, fn := range img.Funcs {
			for _, in := range fn.Code {
				switch in.Op {
				case image.OpCallB, image.OpConcatStr, image.OpConcatBytes, image.OpConcatList, image.OpFormat:
					return
				}
			}
		}
		for i := range img.Loci {
			img.Loci[i].Budget = 2000
		}
		h := &fakeHost{img: img}
		m, err := vm.New(img, h)
		if err != nil {
			t.Fatalf("New rejected a valid image: %v", err)
		}
		vm.SetInitBudget(m, 2000)
		for i := range img.Instances {
			_ = m.Init(i)
		}
		_ = shareParams(m, img) // guards need them; an instance whose Init failed has none
		for i, in := range img.Instances {
			if img.Loci[in.Locus].Start >= 0 {
				_ = m.Deliver(i, vm.HandlerStart, nil)
			}
			_, _ = m.State(i)
		}
		for n := 0; n < 20 && len(h.queue) > 0; n++ {
			msg := h.queue[0]
			h.queue = h.queue[1:]
			for _, sub := range msg.targets(img) {
				_ = m.Deliver(sub, msg.topic, msg.payload)
			}
		}
	})
}
