package vm_test

import (
	"errors"
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

// Guard modes the index is compared in: every guard through the dispatch
// loop, the fieldEq guards one by one, and runs of them indexed.
const (
	modeLoop = iota
	modeFast
	modeIndex
)

var modeNames = [...]string{"loop", "fast path", "index"}

func setGuardMode(mode int) func() {
	vm.SetFieldEq(mode != modeLoop)
	vm.SetGuardIndex(mode == modeIndex)
	return func() { vm.SetFieldEq(true); vm.SetGuardIndex(true) }
}

// ringSrc generates a program whose topic has a random ring of guarded
// subscribers: mostly runs of instances of Ring (`t.to == id`, with a
// string parameter the guard does not read) and of Rev (`id == t.to`),
// with random ids (duplicates, negatives), broken up by instances whose
// guards the index does not cover (a call, a list parameter, a bool
// field, an unguarded subscriber); with onlyRing, instances of Ring
// only, one indexed run for the whole topic. P publishes tokens addressed to ids
// of the ring and to others, building a list as it goes (so that a
// memory limit traps it somewhere).
func ringSrc(r *rand.Rand, listField, onlyRing bool) string {
	var b strings.Builder
	if listField {
		b.WriteString("topic Token { to: int, on: bool, xs: [int] }\n")
	} else {
		b.WriteString("topic Token { to: int, on: bool, tag: string }\n")
	}
	b.WriteString(`locus Ring(id: int, name: string) {
    on Token(t) if t.to == id { print("ring " + name + " " + str(t.to)); }
}
locus Rev(id: int) {
    on Token(t) if id == t.to { print("rev " + str(id)); }
}
locus Flag(want: bool) {
    on Token(t) if t.on == want { print("flag " + str(want)); }
}
fn same(a: int, b: int) -> bool { return a == b; }
locus Call(id: int) {
    on Token(t) if same(t.to, id) { print("call " + str(id)); }
}
locus Lst(id: int, xs: [int]) {
    on Token(t) if t.to == id { print("lst " + str(id) + " " + str(len(xs))); }
}
locus Plain {
    on Token(t) { print("plain " + str(t.to)); }
}
`)
	ids := []int{}
	id := func() int {
		if len(ids) > 0 && r.IntN(3) == 0 {
			return ids[r.IntN(len(ids))] // a duplicate
		}
		v := r.IntN(41) - 20
		ids = append(ids, v)
		return v
	}
	var spawns []string
	named := func() {
		for i, sp := range spawns {
			if !strings.HasSuffix(sp, ";") {
				spawns[i] = fmt.Sprintf("%s as s%d", sp, i)
			}
		}
	}
	for len(spawns) < 60 {
		k := r.IntN(10)
		if onlyRing {
			k = 0 // one run: the whole topic
		}
		switch {
		case k < 5:
			for range r.IntN(12) + 1 {
				spawns = append(spawns, fmt.Sprintf("spawn Ring(%d, %q)", id(), fmt.Sprint("n", len(spawns))))
			}
		case k < 7:
			for range r.IntN(8) + 1 {
				spawns = append(spawns, fmt.Sprintf("spawn Rev(%d)", id()))
			}
		case k == 7:
			for range r.IntN(6) + 1 {
				spawns = append(spawns, fmt.Sprintf("spawn Flag(%v)", r.IntN(2) == 0))
			}
		case k == 8:
			spawns = append(spawns, fmt.Sprintf("spawn Call(%d)", id()), fmt.Sprintf("spawn Lst(%d, [1, 2])", id()))
		default:
			spawns = append(spawns, "spawn Plain")
		}
	}
	named()
	var tokens []string
	for range 12 {
		if r.IntN(4) == 0 {
			tokens = append(tokens, fmt.Sprint(r.IntN(100)+30)) // nobody's
		} else {
			tokens = append(tokens, fmt.Sprint(ids[r.IntN(len(ids))]))
		}
	}
	payload := `tag: "t" + str(k)`
	if listField {
		payload = `xs: [k, k]`
	}
	fmt.Fprintf(&b, `@budget(steps: 1000000)
locus P {
    on start {
        var junk: [string] = [];
        for k in [%s] {
            push(junk, "%s" + str(k));
            publish Token { to: k, on: k %% 2 == 0, %s };
        }
        print("published " + str(len(junk)));
    }
}
main {
    %s;
    spawn P;
}
`, strings.Join(tokens, ", "), strings.Repeat("text to keep ", 40), payload, strings.Join(spawns, ";\n    "))
	return b.String()
}

// ringRun is what a run shows: its output and trap (at the exact
// position, and a budget's at the exact step), the gateway calls (every
// publish's guard bits and payload), the steps of every delivery that
// ended, each with the memory charged since the last measure after it.
type ringRun struct {
	report string
	calls  string
	steps  []int64
}

// runRing runs img as run does, with the memory limit (0: none) set
// first, in one guard mode.
func runRing(t *testing.T, img *image.Image, limit int64, mode int) ringRun {
	t.Helper()
	defer setGuardMode(mode)()
	h := &fakeHost{img: img}
	m, err := vm.New(img, h)
	if err != nil {
		t.Fatal(err)
	}
	m.SetMemoryLimit(limit)
	var steps []int64
	err = func() error {
		for i := range img.Instances {
			if err := m.Init(i); err != nil {
				return err
			}
		}
		if err := shareParams(m, img); err != nil {
			return err
		}
		for i, in := range img.Instances {
			if img.Loci[in.Locus].Start >= 0 {
				if err := m.Deliver(i, vm.HandlerStart, nil); err != nil {
					return err
				}
				steps = append(steps, m.Steps(), vm.MemCharged(m))
			}
		}
		for len(h.queue) > 0 {
			msg := h.queue[0]
			h.queue = h.queue[1:]
			for _, sub := range msg.targets(img) {
				if err := m.Deliver(sub, msg.topic, msg.payload); err != nil {
					return err
				}
				steps = append(steps, m.Steps(), vm.MemCharged(m))
			}
		}
		return nil
	}()
	var tr *vm.Trap
	if err != nil && !errors.As(err, &tr) {
		t.Fatal(err)
	}
	return ringRun{report(h.out.String(), err), fmt.Sprint(h.calls), steps}
}

func (a ringRun) equal(b ringRun) bool {
	return a.report == b.report && a.calls == b.calls && slices.Equal(a.steps, b.steps)
}

// setBudget sets the budget of img's locus P.
func setBudget(img *image.Image, budget int64) {
	for i := range img.Loci {
		if img.Loci[i].Name == "P" {
			img.Loci[i].Budget = budget
		}
	}
}

// checkModes runs img in the three guard modes and fails unless they
// agree on everything.
func checkModes(t *testing.T, img *image.Image, limit int64, what string) ringRun {
	t.Helper()
	loop := runRing(t, img, limit, modeLoop)
	for _, mode := range []int{modeFast, modeIndex} {
		if got := runRing(t, img, limit, mode); !got.equal(loop) {
			t.Fatalf("%s: %s differs from the loop:\nloop: steps %v\n%s%s\n%s: steps %v\n%s%s",
				what, modeNames[mode], loop.steps, loop.report, loop.calls, modeNames[mode], got.steps, got.report, got.calls)
		}
	}
	return loop
}

// The index of guard runs is the loop: on generated rings of guards, at
// every budget of the publisher around the one it needs and at memory
// limits around the one it needs, the same guard bits, deliveries,
// steps and traps in every mode.
func TestFieldEqGuardsIndexedAreInterpreted(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	indexed := 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 18))
		src := ringSrc(r, seed%3 == 2, seed%4 == 3)
		img := compile(t, src)
		topic := slices.IndexFunc(img.Topics, func(tp image.Topic) bool { return tp.Name == "Token" })
		{
			m, err := run(t, img, &fakeHost{})
			if err != nil {
				t.Fatal(err)
			}
			runs := vm.GuardRuns(m, topic)
			for _, n := range runs {
				indexed += n
			}
			if seed%4 == 3 && (len(runs) != 1 || runs[0] != len(vm.GuardedSubscribers(img, topic))) {
				t.Fatalf("seed %d: runs %v, want one of the whole topic", seed, runs)
			}
		}
		full := checkModes(t, img, 0, fmt.Sprintf("seed %d", seed))
		if !strings.Contains(full.report, "published 12") {
			t.Fatalf("seed %d:\n%s", seed, full.report)
		}
		// P's start is the first delivery: its steps are the budget it needs.
		need := full.steps[0]
		traps := 0
		for budget := int64(1); budget <= need+3; budget++ {
			if budget < need-400 && budget%7 != 0 {
				continue // the boundary of the last publishes, and a sample before
			}
			setBudget(img, budget)
			if run := checkModes(t, img, 0, fmt.Sprintf("seed %d budget %d", seed, budget)); strings.Contains(run.report, "budget exhausted") {
				traps++
			}
		}
		setBudget(img, 1000000)
		if traps == 0 {
			t.Errorf("seed %d: no budget trapped", seed)
		}
		// Memory limits from one that traps at once to one that does not.
		memTraps, limits := 0, 0
		for limit := int64(1000); limit <= 12000; limit += 37 {
			limits++
			if run := checkModes(t, img, limit, fmt.Sprintf("seed %d limit %d", seed, limit)); strings.Contains(run.report, "out of memory") {
				memTraps++
			}
		}
		t.Logf("seed %d: %d of %d limits trapped", seed, memTraps, limits)
		if memTraps == 0 || memTraps == limits {
			t.Errorf("seed %d: %d of %d memory limits trapped: the range misses the boundary", seed, memTraps, limits)
		}
	}
	if indexed == 0 {
		t.Fatal("no guard was indexed")
	}
}

// Guards the compiler does not write but the fieldEq shape admits (the
// field compared with itself, two parameters compared) are indexed as
// constants: patched into an image, the modes agree.
func TestFieldEqGuardsIndexedConstants(t *testing.T) {
	src := `topic Token { to: int, n: int }
locus Two(id: int, k: int) {
    on Token(t) if t.to == id { print("two " + str(id) + " " + str(k)); }
}
locus Self(id: int, k: int) {
    on Token(t) if t.to == id { print("self " + str(id) + " " + str(k)); }
}
locus Params(id: int, k: int) {
    on Token(t) if t.to == id { print("params " + str(id) + " " + str(k)); }
}
@budget(steps: 1000000)
locus P {
    on start { for k in [0, 1, 2, -1, 7] { publish Token { to: k, n: k }; } }
}
main {
    spawn Two(0, 0) as i1; spawn Two(1, 5) as i2; spawn Two(1, 1) as i3; spawn Two(-1, 2) as i4; spawn Two(2, 2) as i5;
    spawn Self(0, 0) as i6; spawn Self(1, 1) as i7; spawn Self(2, 3) as i8; spawn Self(3, 3) as i9;
    spawn Params(0, 0) as i10; spawn Params(1, 2) as i11; spawn Params(2, 2) as i12; spawn Params(-1, 3) as i13; spawn Params(-1, -1) as i14;
    spawn P;
}
`
	img := compile(t, src)
	for _, name := range []string{"Self", "Params"} {
		fn := fnIndex(img, name+".on Token guard")
		if fn < 0 || !vm.FieldEqShape(&img.Funcs[fn]) {
			t.Fatalf("%s: no fieldEq guard", name)
		}
		c := img.Funcs[fn].Code
		if name == "Self" {
			c[1].B, c[1].C = c[0].A, c[0].A // the field with itself
		} else {
			c[1].B, c[1].C = 1, 2 // id with k
		}
		if !vm.FieldEqShape(&img.Funcs[fn]) {
			t.Fatalf("%s: patched guard lost its shape", name)
		}
	}
	if err := img.Validate(); err != nil {
		t.Fatal(err)
	}
	m, err := run(t, img, &fakeHost{})
	if err != nil {
		t.Fatal(err)
	}
	if runs := vm.GuardRuns(m, 0); !slices.Equal(runs, []int{5, 4, 5}) {
		t.Fatalf("indexed runs %v, want [5 4 5]", runs)
	}
	full := checkModes(t, img, 0, "constants")
	for _, want := range []string{"self 3 3", "params 2 2", "params -1 -1", "two 1 5"} {
		if !strings.Contains(full.report, want) {
			t.Errorf("no %q in\n%s", want, full.report)
		}
	}
	if strings.Contains(full.report, "params 1 2") {
		t.Errorf("params 1 2 delivered:\n%s", full.report)
	}
	for budget := int64(1); budget <= full.steps[0]+3; budget++ {
		setBudget(img, budget)
		checkModes(t, img, 0, fmt.Sprintf("budget %d", budget))
	}
}

// An ingress line's guards (Machine.Guards) take the index too: the same
// bits for any payload in every mode.
func TestFieldEqGuardsIndexedIngress(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 18))
	img := compile(t, ringSrc(r, false, false))
	topic := slices.IndexFunc(img.Topics, func(tp image.Topic) bool { return tp.Name == "Token" })
	guards := func(mode int) string {
		defer setGuardMode(mode)()
		m, err := vm.New(img, &fakeHost{img: img})
		if err != nil {
			t.Fatal(err)
		}
		for i := range img.Instances {
			if err := m.Init(i); err != nil {
				t.Fatal(err)
			}
		}
		if err := shareParams(m, img); err != nil {
			t.Fatal(err)
		}
		if mode == modeIndex && len(vm.GuardRuns(m, topic)) == 0 {
			t.Fatal("no indexed run")
		}
		var b strings.Builder
		for k := int64(-25); k <= 25; k++ {
			payload, err := value.EncodeTuple([]byte{byte(value.KindStruct)}, []value.Value{value.Int(k), value.Bool(k%3 == 0), value.Str("x")})
			if err != nil {
				t.Fatal(err)
			}
			bits, err := m.Guards(topic, payload)
			fmt.Fprintf(&b, "%d: %x %v\n", k, bits, err)
		}
		return b.String()
	}
	loop := guards(modeLoop)
	if !strings.Contains(loop, "1") {
		t.Fatalf("no guard held:\n%s", loop)
	}
	for _, mode := range []int{modeFast, modeIndex} {
		if got := guards(mode); got != loop {
			t.Errorf("%s:\n%s\nloop:\n%s", modeNames[mode], got, loop)
		}
	}
}

// A break armed in a guard of an indexed run stops in every guard of
// the run: with a debugger the guards run through the loop.
func TestFieldEqGuardIndexStopsAtBreak(t *testing.T) {
	img := compile(t, `topic Token { to: int }
locus Node(id: int) {
    on Token(t) if t.to == id { print("node " + str(id)); }
}
locus P {
    on start { publish Token { to: 2 }; publish Token { to: 9 }; }
}
main {
    for i in 0..6 { spawn Node(i) as nodes[i]; }
    spawn P;
}
`)
	guard := fnIndex(img, "Node.on Token guard")
	if guard < 0 || !vm.FieldEqShape(&img.Funcs[guard]) || len(img.Funcs[guard].Stmts) == 0 {
		t.Fatalf("guard %d: no fast-shaped guard with a statement", guard)
	}
	h := &breakHost{img: img}
	h.fakeHost.img = img // publishes carry guard bits
	spec := vm.EncodeBreakSpec(vm.BreakSpec{At: []vm.BreakPC{{Fn: guard, PC: int(img.Funcs[guard].Stmts[0].PC)}}})
	m, err := vm.New(img, h)
	if err != nil {
		t.Fatal(err)
	}
	for i := range img.Instances {
		if err := m.Init(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := shareParams(m, img); err != nil {
		t.Fatal(err)
	}
	if runs := vm.GuardRuns(m, 0); !slices.Equal(runs, []int{6}) {
		t.Fatalf("indexed runs %v, want [6]", runs)
	}
	if err := m.SetBreaks(spec); err != nil {
		t.Fatal(err)
	}
	if err := m.Deliver(len(img.Instances)-1, vm.HandlerStart, nil); err != nil {
		t.Fatal(err)
	}
	if len(h.stops) != 12 {
		t.Errorf("stops %v, want 12 in the guard", h.stops)
	}
	if len(h.queue) != 2 || h.queue[0].bits[0] != 1<<2 || h.queue[1].bits[0] != 0 {
		t.Errorf("publishes %v, want bits 4 then 0", h.queue)
	}
}

// discardHost answers every gateway call with nothing.
type discardHost struct{ calls int }

func (h *discardHost) Prim(id uint16, args []byte) ([]byte, error) { h.calls++; return nil, nil }

// BenchmarkThreadRingHop is one hop of Savina's ThreadRing in the
// interpreter: a node's delivery, which publishes the token to the next
// node, running the guards of the ring (ring100: indexed, or one by one
// with -index=false; ring1: one guard; plain: no guard, the delivery and
// publish alone).
func BenchmarkThreadRingHop(b *testing.B) {
	src := func(ring int, guard string) string {
		return fmt.Sprintf(`const RING: int = %d;
topic Token { to: int, left: int }
locus Node(id: int) {
    on Token(t) %s {
        if t.left == 1 { print("done"); return; }
        publish Token { to: (id + 1) %% RING, left: t.left - 1 };
    }
}
main { for i in 0..RING { spawn Node(i) as nodes[i]; } }
`, ring, guard)
	}
	for _, c := range []struct {
		name  string
		ring  int
		guard string
		index bool
	}{
		{"ring100", 100, "if t.to == id", true},
		{"ring100-loop", 100, "if t.to == id", false},
		{"ring1", 1, "if t.to == id", true},
		{"plain", 1, "", true},
	} {
		b.Run(c.name, func(b *testing.B) {
			vm.SetGuardIndex(c.index)
			defer vm.SetGuardIndex(true)
			img := compile(b, src(c.ring, c.guard))
			h := &discardHost{}
			m, err := vm.New(img, h)
			if err != nil {
				b.Fatal(err)
			}
			for i := range img.Instances {
				if err := m.Init(i); err != nil {
					b.Fatal(err)
				}
			}
			if err := shareParams(m, img); err != nil {
				b.Fatal(err)
			}
			payload, err := value.EncodeTuple([]byte{byte(value.KindStruct)}, []value.Value{value.Int(0), value.Int(1 << 40)})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := m.Deliver(0, 0, payload); err != nil {
					b.Fatal(err)
				}
			}
			if h.calls == 0 {
				b.Fatal("no publish")
			}
		})
	}
}

// TestGuardTableConstants keeps the tier's copies of a guard's steps and
// of the guard table's layout equal to the machine's.
func TestGuardTableConstants(t *testing.T) {
	if tier.GuardSteps != vm.FieldEqSteps || !slices.Equal(tier.GuardTableWords, vm.GuardTableWords) {
		t.Fatalf("tier: %d steps, words %v; vm: %d, %v", tier.GuardSteps, tier.GuardTableWords, vm.FieldEqSteps, vm.GuardTableWords)
	}
}

// A guard table (what handlers compiled whole read) holds, for every key
// in its range and one for any other, the bits Machine.Guards gives; it
// is made only for one indexed run with dense keys, and is invalid after
// new parameters (until indexed again) and once a debugger is attached.
func TestGuardTable(t *testing.T) {
	checked := 0
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 18))
		img := compile(t, ringSrc(r, false, seed%2 == 0))
		topic := slices.IndexFunc(img.Topics, func(tp image.Topic) bool { return tp.Name == "Token" })
		m, err := vm.New(img, &fakeHost{img: img})
		if err != nil {
			t.Fatal(err)
		}
		for i := range img.Instances {
			if err := m.Init(i); err != nil {
				t.Fatal(err)
			}
		}
		if err := shareParams(m, img); err != nil {
			t.Fatal(err)
		}
		runs := vm.GuardRuns(m, topic)
		words, bits := vm.GuardTable(m, topic)
		subs := len(vm.GuardedSubscribers(img, topic))
		if one := len(runs) == 1 && runs[0] == subs; !one {
			if words != nil && words[0] != 0 {
				t.Fatalf("seed %d: runs %v of %d subscribers, and a valid table", seed, runs, subs)
			}
			continue
		}
		if words == nil || words[0] != 1 {
			t.Fatalf("seed %d: one run of %d and no valid table %v", seed, subs, words)
		}
		checked++
		nb := vm.GuardBits(subs)
		if words[1] != uint64(subs) || len(bits) != int(words[4]+1)*nb {
			t.Fatalf("seed %d: table %v, %d bytes of bits, %d subscribers", seed, words, len(bits), subs)
		}
		lo := int64(words[3])
		for k := lo - 3; k <= lo+int64(words[4])+3; k++ {
			payload, err := value.EncodeTuple([]byte{byte(value.KindStruct)}, []value.Value{value.Int(k), value.Bool(false), value.Str("x")})
			if err != nil {
				t.Fatal(err)
			}
			want, err := m.Guards(topic, payload)
			if err != nil {
				t.Fatal(err)
			}
			i := k - lo
			if i < 0 || i >= int64(words[4]) {
				i = int64(words[4])
			}
			if got := bits[int(i)*nb : int(i+1)*nb]; !slices.Equal(got, want) {
				t.Fatalf("seed %d, key %d: table %x, guards %x", seed, k, got, want)
			}
		}
		if err := shareParams(m, img); err != nil {
			t.Fatal(err)
		}
		if words, _ := vm.GuardTable(m, topic); words[0] != 0 {
			t.Fatalf("seed %d: valid after new parameters", seed)
		}
		vm.GuardRuns(m, topic) // indexed again
		if words, _ := vm.GuardTable(m, topic); words[0] != 1 {
			t.Fatalf("seed %d: not valid after indexing again", seed)
		}
		if err := m.SetBreaks(vm.EncodeBreakSpec(vm.BreakSpec{Traps: true})); err != nil {
			t.Fatal(err)
		}
		if words, _ := vm.GuardTable(m, topic); words[0] != 0 {
			t.Fatalf("seed %d: valid under a debugger", seed)
		}
	}
	if checked < 5 {
		t.Fatalf("%d tables checked", checked)
	}
}
