package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestRunPutsTheCollectorBack: `hale run` turns Go's collector off while
// the wasm engine loads (holdStartupGC) and puts the collector's percent
// and memory limit back as they were, on both engines.
func TestRunPutsTheCollectorBack(t *testing.T) {
	prevPercent := debug.SetGCPercent(137)
	prevLimit := debug.SetMemoryLimit(3 << 30)
	defer func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) }()
	prog := filepath.Join(t.TempDir(), "hello.hl")
	if err := os.WriteFile(prog, []byte("locus M { on start { print(\"hi\"); } }\nmain { spawn M; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, engine := range []string{"wasm", "native"} {
		var out bytes.Buffer
		e := env{stdin: strings.NewReader(""), stdout: &out, stderr: &out, getenv: func(string) string { return "" }}
		if code := Run([]string{"run", "--engine", engine, prog}, e); code != ExitOK || out.String() != "hi\n" {
			t.Fatalf("%s: exit %d, printed %q", engine, code, out.String())
		}
		if p := debug.SetGCPercent(137); p != 137 {
			t.Fatalf("%s: the collector's percent is %d after the run, want 137", engine, p)
		}
		if l := debug.SetMemoryLimit(-1); l != 3<<30 {
			t.Fatalf("%s: the memory limit is %d after the run, want %d", engine, l, int64(3<<30))
		}
	}
	// The hold itself: off, bounded, then back.
	release := holdStartupGC()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("percent %d while held, want -1 (off)", p)
	}
	if l := debug.SetMemoryLimit(-1); l != startupGCLimit {
		t.Fatalf("memory limit %d while held, want %d", l, startupGCLimit)
	}
	release()
	release()
	if p := debug.SetGCPercent(137); p != 137 {
		t.Fatalf("percent %d after release, want 137", p)
	}
}
