package host

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"
)

// A warm start compiles nothing: a second process (here, a second
// runtime on the same cache folder) finds both the interpreter and the
// program's second tier in the compilation cache and writes no new
// entry. A tier whose module bytes changed from run to run (a map
// iterated in its order, say) would miss the cache and be compiled
// again at every start; so would the guest if its configuration did.
func TestWarmStartCompilesNothing(t *testing.T) {
	dir := t.TempDir()
	img := compileAll(t, `
fn fib(n: int) -> int { if n < 2 { return n; } return fib(n - 1) + fib(n - 2); }
locus L { on start { print(str(fib(15))); } }
main { spawn L; }
`)
	ctx := context.Background()
	start := func() []string {
		w, err := newWasmRuntime(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer w.close(ctx)
		p, err := w.prepare(ctx, img)
		if err != nil || p.tier == nil {
			t.Fatalf("no tier: %v", err)
		}
		p.close(ctx)
		var files []string
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, path)
			}
			return nil
		})
		return files
	}
	cold := start()
	if len(cold) < 2 {
		t.Fatalf("the first start cached %d modules, want the interpreter and the tier: %v", len(cold), cold)
	}
	warm := start()
	if len(warm) != len(cold) {
		t.Errorf("the second start wrote %d new cache entries: %v, after %v", len(warm)-len(cold), warm, cold)
	}
}
