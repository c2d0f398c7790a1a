package host

import (
	"testing"
)

const fastSmokeSrc = `
topic Tick { n: int, x: float, ok: bool }
topic Done { total: int }
fn sq(a: int) -> int { var s = 0; for i in 0..a { s += a; } return s; }
locus Counter {
    var total: int = 0;
    var f: float = 0.5;
    var seen: bool = false;
    on Tick(t) {
        total += t.n + sq(t.n & 7);
        f = f * 0.5 + t.x;
        seen = t.ok;
        if t.n < 300 {
            publish Tick { n: t.n + 1, x: f, ok: !t.ok };
        } else {
            publish Done { total: total };
        }
    }
}
locus Main {
    on start { publish Tick { n: -5, x: 1.5, ok: true }; }
    on Done(d) { print(d.total); }
}
main { spawn Counter; spawn Main; }
`

func TestFastHandlerSmoke(t *testing.T) {
	img := compileAll(t, fastSmokeSrc)
	before := fastAnswered.Load()
	native := runWith(t, img, Options{Engine: EngineNative})
	wasm := runWith(t, img, Options{Engine: EngineWasm})
	if native.err != nil || wasm.err != nil {
		t.Fatalf("errors: %v %v", native.err, wasm.err)
	}
	if native.stdout != wasm.stdout || native.stderr != wasm.stderr || native.res.Code != wasm.res.Code {
		t.Fatalf("disagree:\n%s%s\n---\n%s%s", native.stdout, native.stderr, wasm.stdout, wasm.stderr)
	}
	t.Logf("out %q, fast %d", wasm.stdout, fastAnswered.Load()-before)
	if fastAnswered.Load()-before < 250 {
		t.Fatalf("fast path ran %d deliveries", fastAnswered.Load()-before)
	}
}
