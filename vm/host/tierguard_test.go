package host

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/internal/tier"
	"github.com/hale-lang/hale/vm/value"
)

// randomGuardProgram writes a ring in the shape of Savina's ThreadRing
// with random variations: Node instances guard `on Tok(t) if t.to == id`
// (or `id == t.to`), with ids dense or with gaps, duplicates, negatives
// or spread wide (an index without a dense table); now and then the
// guarded subscribers are not one indexed run (a guard that calls, a
// locus between the nodes), the ring is of bools (`t.on == want`), the
// handler's @budget is short of the guards' steps, it publishes twice,
// or prints; a Watcher without a guard sees every token and starts the
// chain again when a token's key is no node's.
func randomGuardProgram(seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 18))
	var b strings.Builder
	n := 1 + r.IntN(40)
	if r.IntN(3) == 0 {
		n = 4 + r.IntN(8)
	}
	// The fields in a random order: the guards compare the field to.
	fields := []string{"to: int", "left: int", "on: bool"}
	r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	fmt.Fprintf(&b, "const N: int = %d;\ntopic Tok { %s }\n", n, strings.Join(fields, ", "))
	bools := r.IntN(6) == 0
	guard := "t.to == id"
	switch {
	case bools:
		guard = "t.on == want"
	case r.IntN(3) == 0:
		guard = "id == t.to"
	}
	next := fmt.Sprintf("(id * %d + t.left + %d) %% %d - %d", 1+r.IntN(5), r.IntN(7), n+1+r.IntN(2*n+2), r.IntN(3))
	if r.IntN(4) == 0 {
		fmt.Fprintf(&b, "@budget(steps: %d)\n", 3*n+10+r.IntN(50))
	}
	param := "id: int"
	if bools {
		param = "want: bool, id: int"
	}
	fmt.Fprintf(&b, "locus Node(%s, name: string) {\n    var seen: int = 0;\n    on Tok(t) if %s {\n", param, guard)
	// Steps that vary from hop to hop, so that a budget runs out at
	// some hops only (the first hop of each machine runs in the guest).
	fmt.Fprintf(&b, "        for i in 0..(t.left %% %d) { seen += 0; }\n", 1+r.IntN(9))
	b.WriteString("        seen += 1;\n        if t.left <= 0 || seen > 120 { print(\"end \" + name + \" \" + str(seen)); return; }\n")
	if r.IntN(5) == 0 {
		b.WriteString("        if t.left % 17 == 3 { print(\"at \" + str(t.left)); }\n")
	}
	fmt.Fprintf(&b, "        publish Tok { to: %s, left: t.left - 1, on: !t.on };\n", next)
	if r.IntN(5) == 0 {
		b.WriteString("        if t.left % 5 == 0 { publish Tok { to: id - 1, left: t.left / 2 - 1, on: t.on }; }\n")
	}
	b.WriteString("    }\n}\n")
	b.WriteString(`fn same(a: int, b: int) -> bool { return a == b; }
locus Odd(id: int) {
    on Tok(t) if same(t.to, id) { print("odd " + str(t.left)); }
}
locus Watcher {
    var count: int = 0;
    on Tok(t) {
        count += 1;
        if (t.to < 0 || t.to >= N) && t.left > 0 && count < 400 {
            publish Tok { to: (t.left * 7 + count) % N, left: t.left - 1, on: t.on };
        }
    }
}
`)
	var spawns []string
	odd := r.IntN(5) == 0
	for i := range n {
		id := i
		switch k := r.IntN(10); {
		case k == 0:
			id = -1 - r.IntN(3)
		case k == 1 && i > 0:
			id = r.IntN(i)
		case k == 2:
			id = n + r.IntN(4)
		}
		if seed%7 == 3 {
			id = i * 1000 // wide keys: no dense table
		}
		if bools {
			spawns = append(spawns, fmt.Sprintf("spawn Node(%v, %d, \"n%d\") as node%d", r.IntN(2) == 0, id, i, i))
		} else {
			spawns = append(spawns, fmt.Sprintf("spawn Node(%d, \"n%d\") as node%d", id, i, i))
		}
		if odd && i == n/2 {
			spawns = append(spawns, "spawn Odd(1) as odd")
		}
	}
	fmt.Fprintf(&b, "locus Main {\n    on start {\n")
	for range 1 + r.IntN(3) {
		fmt.Fprintf(&b, "        publish Tok { to: %d, left: %d, on: %v };\n", r.IntN(n+2)-1, 20+r.IntN(300), r.IntN(2) == 0)
	}
	fmt.Fprintf(&b, "    }\n}\nmain {\n    %s;\n    spawn Watcher;\n    spawn Main;\n}\n", strings.Join(spawns, ";\n    "))
	return b.String()
}

// TestFastGuardedRandomPrograms runs random rings on the native engine,
// on the wasm engine with compiled handlers and without them, with and
// without a small memory limit: output, traps, every payload (and its
// guard bits) and the state before every delivery must be identical;
// and handlers with a guarded publish must run compiled and fall back.
func TestFastGuardedRandomPrograms(t *testing.T) {
	n := randomPrograms(40, 10)
	planned := 0
	ran, fell := fastAnswered.Load(), fastFellBack.Load()
	for seed := range uint64(n) {
		src := randomGuardProgram(seed)
		img, ok := tryCompile(src)
		if !ok {
			t.Fatalf("seed %d: the generated program does not compile:\n%s", seed, src)
		}
		p := tier.NewPlan(img)
		tier.PlanHandlers(img, p)
		for _, h := range p.Handlers {
			if len(h.Guards) > 0 {
				planned++
				break
			}
		}
		var limit int64
		if seed%3 == 1 {
			limit = MinMemoryLimit
		}
		native := runFastOpts(t, img, EngineNative, false, limit)
		fast := runFastOpts(t, img, EngineWasm, false, limit)
		slow := runFastOpts(t, img, EngineWasm, true, limit)
		sameRuns(t, fmt.Sprintf("seed %d: native and wasm", seed), src, native, fast)
		sameRuns(t, fmt.Sprintf("seed %d: wasm with and without compiled handlers", seed), src, fast, slow)
	}
	ran, fell = fastAnswered.Load()-ran, fastFellBack.Load()-fell
	if planned < n/2 || ran < int64(20*n) || fell == 0 {
		t.Fatalf("%d of %d programs had a compiled guarded publish; %d deliveries ran compiled, %d fell back", planned, n, ran, fell)
	}
	t.Logf("%d programs, %d with a compiled guarded publish, %d deliveries ran compiled, %d fell back", n, planned, ran, fell)
}

// runFastOpts is runFast with a memory limit (0: the default).
func runFastOpts(t *testing.T, img *image.Image, kind EngineKind, slow bool, limit int64) fastRun {
	t.Helper()
	j := fastJournal{newLogJournal(img)}
	disableFast = slow
	defer func() { disableFast = false }()
	out := runWith(t, img, Options{Engine: kind, Journal: j, MemoryLimit: limit})
	if out.err != nil {
		t.Fatalf("%v: %v", kind, out.err)
	}
	j.check(t)
	r := fastRun{out: out}
	for c := range consumerCount(img) {
		r.events = append(r.events, j.events(c))
	}
	return r
}

const fastRingSrc = `
const RING: int = 100;
const HOPS: int = 3000;
topic Token { to: int, left: int }
locus Node(id: int) {
    on start { if id == 0 { publish Token { to: 1, left: HOPS }; } }
    on Token(t) if t.to == id {
        if t.left == 1 { print("ring done at node " + str(id)); return; }
        publish Token { to: (id + 1) % RING, left: t.left - 1 };
    }
}
main {
    for i in 0..RING { spawn Node(i) as nodes[i]; }
}
`

// TestFastGuardedRing checks that ThreadRing's hops run compiled (a fast
// path that always fell back would pass the agreement tests) and agree
// with the native engine and the guest, the memory limit's measures
// included.
func TestFastGuardedRing(t *testing.T) {
	img := compileAll(t, fastRingSrc)
	p := tier.NewPlan(img)
	tier.PlanHandlers(img, p)
	if len(p.Handlers) != 1 || p.Handlers[0].Guards[0] != (tier.GuardPub{Subs: 100, Field: 0}) {
		t.Fatalf("handlers %+v: want Node.on Token with a guarded publish of 100", p.Handlers)
	}
	for _, limit := range []int64{0, MinMemoryLimit} {
		ran, fell := fastAnswered.Load(), fastFellBack.Load()
		native := runFastOpts(t, img, EngineNative, false, limit)
		fast := runFastOpts(t, img, EngineWasm, false, limit)
		ran, fell = fastAnswered.Load()-ran, fastFellBack.Load()-fell
		slow := runFastOpts(t, img, EngineWasm, true, limit)
		sameRuns(t, "native and wasm", fastRingSrc, native, fast)
		sameRuns(t, "wasm with and without compiled handlers", fastRingSrc, fast, slow)
		if fast.out.stdout != "ring done at node 0\n" {
			t.Fatalf("printed %q", fast.out.stdout)
		}
		// Every hop but the first to a machine, the last, and (under a
		// limit) those after which the guest measures.
		if ran < 2500 || limit > 0 && fell == 0 {
			t.Fatalf("limit %d: %d hops ran compiled, %d fell back", limit, ran, fell)
		}
		t.Logf("limit %d: %d hops ran compiled, %d fell back", limit, ran, fell)
	}
}

// A break in a guard of an indexed ring stops at every guard of every
// hop on both engines: under a debugger the guards run one by one in
// the interpreter, and no handler runs compiled.
func TestBreakInGuardOfFastRing(t *testing.T) {
	img := compileAll(t, strings.Replace(fastRingSrc, "HOPS: int = 3000", "HOPS: int = 30", 1))
	fn := -1
	for i, f := range img.Funcs {
		if f.Name == "Node.on Token guard" {
			fn = i
		}
	}
	p := tier.NewPlan(img)
	tier.PlanHandlers(img, p)
	if fn < 0 || len(img.Funcs[fn].Stmts) == 0 || len(p.Handlers) != 1 || len(p.Handlers[0].Guards) != 1 {
		t.Fatal("no guard to break in, or Node.on Token is not compiled whole: the test proves nothing")
	}
	spec := vm.EncodeBreakSpec(vm.BreakSpec{At: []vm.BreakPC{{Fn: fn, PC: int(img.Funcs[fn].Stmts[0].PC)}}})
	var outs []string
	for _, kind := range realEngines {
		ran := fastAnswered.Load()
		breaks, res, out := debugRun(t, img, kind, spec)
		if len(breaks) != 30*100 || res.Code != 0 || fastAnswered.Load() != ran {
			t.Fatalf("%s: %d breaks, exit %d, output %q, %d ran compiled; want 3000 breaks", kind, len(breaks), res.Code, out,
				fastAnswered.Load()-ran)
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Fatalf("outputs %q", outs)
	}
}

// TestFastGuardedCharges delivers tokens one by one to a ring of nodes
// (a string parameter the guards do not read) on two batched wasm
// engines with a memory limit, one with compiled handlers and one
// without: after every delivery the publishes (their guard bits
// included), the machine's memory charges since its last measure and
// its allowance must be the same, keys in and out of the ring's range.
func TestFastGuardedCharges(t *testing.T) {
	img := compileAll(t, `
topic Token { to: int, left: int }
locus Node(id: int, name: string) {
    var seen: int = 0;
    on Token(t) if t.to == id {
        seen += 1;
        publish Token { to: (id * 3 + t.left) % 11 - 1, left: t.left - 1 };
    }
}
main {
    for i in 0..8 { spawn Node(i, "node " + str(i)) as nodes[i]; }
}
`)
	w, err := defaultWasm()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	prog, err := w.prepare(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.close(ctx)
	var pubs [2][]string
	var engines [2]*wasmEngine
	for i := range engines {
		host := hostFunc(func(id uint16, args []byte) ([]byte, error) {
			pubs[i] = append(pubs[i], fmt.Sprintf("%d %x", id, args))
			return nil, nil
		})
		e, err := w.newEngine(ctx, prog, &countingBatchHost{hostFunc: host}, MinMemoryLimit)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		engines[i] = e.(*wasmEngine)
		if i == 1 {
			engines[i].fastMode = 2 // no compiled handlers
		}
		for inst := range img.Instances {
			if err := e.Init(inst); err != nil {
				t.Fatal(err)
			}
		}
	}
	table := make([][]byte, len(img.Instances))
	for inst := range table {
		b, err := engines[0].Params(inst)
		if err != nil {
			t.Fatal(err)
		}
		table[inst] = append([]byte{}, b...)
	}
	// counters reads the machine's charges and allowance.
	counters := func(e *wasmEngine) string {
		var fi fastInst
		e.askFast(0, 0, &fi)
		if !fi.known || fi.guards == 0 {
			t.Fatal("fastinfo gave no guard tables")
		}
		read := func(at uint64) uint64 {
			b, ok := e.g.mem.Read(uint32(at), 8)
			if !ok {
				t.Fatalf("no memory at %#x", at)
			}
			return binary.LittleEndian.Uint64(b)
		}
		return fmt.Sprintf("charged %d, allowance %d", read(fi.charged), read(read(fi.guards+8)))
	}
	for _, e := range engines {
		if err := e.SetGuardParams(table); err != nil {
			t.Fatal(err)
		}
	}
	ran := fastAnswered.Load()
	r := rand.New(rand.NewPCG(5, 18))
	for k := range 3000 {
		to := int64(r.IntN(12) - 2)
		payload := structPayload(value.Int(to), value.Int(int64(r.IntN(1000))))
		var got [2]string
		for i, e := range engines {
			err := e.Deliver(int(max(0, to)), 0, payload)
			got[i] = fmt.Sprintf("%v, %s, %d publishes", err, counters(e), len(pubs[i]))
		}
		if got[0] != got[1] || !slices.Equal(pubs[0], pubs[1]) {
			t.Fatalf("delivery %d: with compiled handlers %s\nwithout %s\n%q\n%q", k, got[0], got[1], pubs[0], pubs[1])
		}
	}
	if ran = fastAnswered.Load() - ran; ran < 2000 {
		t.Fatalf("%d deliveries ran compiled, want 2000 or more", ran)
	}
}
