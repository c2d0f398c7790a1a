package tier

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/hale-lang/hale/codegen/image"
)

// FuzzCompile compiles the tier of every image Unmarshal accepts: the
// module must be one wazero accepts (a plan the compiler cannot compile,
// or a module that does not validate, would silently leave the program
// to the interpreter), and neither step may panic.
func FuzzCompile(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "..", "codegen", "testdata", "*.hl"))
	// The Benchmarks Game ports: functions over lists of floats and ints
	// and lists of structs.
	bench, _ := filepath.Glob(filepath.Join("..", "..", "..", "cmd", "hale", "cli", "testdata", "bench", "*.hl"))
	paths = append(paths, bench...)
	srcs := []string{fibSrc}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		srcs = append(srcs, string(b))
	}
	for _, src := range srcs {
		data, err := compile(f, src).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := image.Unmarshal(data)
		if err != nil {
			return
		}
		p := NewPlan(img)
		bin, err := Compile(img, p)
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		if bin == nil {
			if p.HasEntries() {
				t.Fatal("a plan with entries compiled to nothing")
			}
			return
		}
		mod, err := rt.CompileModule(ctx, bin)
		if err != nil {
			t.Fatalf("the module does not validate: %v", err)
		}
		mod.Close(ctx)
	})
}
