package host

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestOutOfMemoryTrapsAlike runs a program whose data grows without end
// under a small memory limit: on both engines it traps "out of memory"
// (exit 3) quickly, with the same report, rather than crashing the wasm
// guest after 4 GiB or the whole process on the native engine.
func TestOutOfMemoryTrapsAlike(t *testing.T) {
	img := compileAll(t, `
locus M { on start { var xs: [[int]] = []; while true { push(xs, [1,2,3,4,5,6,7,8]); } } }
main { spawn M; }
`)
	reports := map[EngineKind]string{}
	for _, kind := range []EngineKind{EngineNative, EngineWasm} {
		var stderr strings.Builder
		start := time.Now()
		res, err := Run(context.Background(), img, Options{Engine: kind, Stderr: &stderr, MemoryLimit: 16 << 20})
		if err != nil || res.Verdict != VerdictTrap || res.Code != ExitTrap {
			t.Fatalf("%v: %v %+v\n%s", kind, err, res, stderr.String())
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%v: took %v", kind, took)
		}
		reports[kind] = stderr.String()
	}
	want := "trap: out of memory: the consumer's data outgrew its limit of 16 MiB\n  at app.hl:2:"
	if !strings.HasPrefix(reports[EngineNative], want) || reports[EngineWasm] != reports[EngineNative] {
		t.Errorf("native:\n%s\nwasm:\n%s", reports[EngineNative], reports[EngineWasm])
	}
}

func TestParseMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"512MiB", 512 << 20}, {"1GiB", 1 << 30}, {"64M", 64 << 20}, {"2048K", 2 << 20}, {"1048576", 1 << 20},
		{"", 0}, {"0", 0}, {"-5MiB", 0}, {"512KiB", 0}, {"2GiB", 0}, {"1.5GiB", 0}, {"12x", 0}, {"9999999999999G", 0},
	} {
		got, err := ParseMemoryLimit(c.in)
		if got != c.want || (err == nil) != (c.want != 0) {
			t.Errorf("ParseMemoryLimit(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}
