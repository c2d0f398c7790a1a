package host

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// guardRingSrc is a ring of guarded subscribers whose guards the
// machine indexes (runs of Node, `t.to == id`), broken by one whose
// guard it does not (Odd, a call); P publishes tokens to the given ids
// under a budget, building a list as it goes.
func guardRingSrc(ids []int, tokens []int, budget int) string {
	var b strings.Builder
	b.WriteString(`topic Token { to: int, n: int }
locus Node(id: int, name: string) {
    on Token(t) if t.to == id { print(name + " got " + str(t.n)); }
}
fn odd(n: int) -> bool { return n % 2 != 0; }
locus Odd {
    on Token(t) if odd(t.to) { print("odd got " + str(t.n)); }
}
`)
	toks := make([]string, len(tokens))
	for i, k := range tokens {
		toks[i] = fmt.Sprint(k)
	}
	fmt.Fprintf(&b, `@budget(steps: %d)
locus P {
    on start {
        var kept: [string] = [];
        var n: int = 0;
        for k in [%s] {
            push(kept, "%s" + str(k));
            publish Token { to: k, n: n };
            n += 1;
        }
        print("published " + str(n));
    }
}
main {
`, budget, strings.Join(toks, ", "), strings.Repeat("kept text ", 30))
	for i, id := range ids {
		if i == len(ids)/2 {
			b.WriteString("    spawn Odd;\n")
		}
		fmt.Fprintf(&b, "    spawn Node(%d, \"n%d\") as n%d;\n", id, i, i)
	}
	b.WriteString("    spawn P;\n}\n")
	return b.String()
}

// The index of guard runs on both engines: generated rings (duplicate
// and negative ids) route every token to exactly the nodes with its id
// (and Odd), the same on both engines; at budgets and memory limits
// around the publisher's need, both engines trap the same way, at the
// same place, after the same output. (That the index is the loop, step
// for step, the package vm's tests show.)
func TestGuardIndexEngines(t *testing.T) {
	for seed := range 3 {
		r := rand.New(rand.NewPCG(uint64(seed), 18))
		ids := make([]int, 20+r.IntN(30))
		for i := range ids {
			if i > 0 && r.IntN(4) == 0 {
				ids[i] = ids[r.IntN(i)]
			} else {
				ids[i] = r.IntN(61) - 30
			}
		}
		tokens := make([]int, 8)
		for i := range tokens {
			tokens[i] = ids[r.IntN(len(ids))]
			if r.IntN(4) == 0 {
				tokens[i] = 100 + i // nobody's but Odd's, sometimes
			}
		}
		o, routes := runRouted(t, guardRingSrc(ids, tokens, 1000000), "")
		if o.res.Code != 0 || !strings.Contains(o.stdout, "published 8") {
			t.Fatalf("seed %d: exit %d\n%s%s", seed, o.res.Code, o.stdout, o.stderr)
		}
		for s, k := range tokens {
			var want []string
			for i, id := range ids {
				if id == k {
					want = append(want, fmt.Sprint("n", i))
				}
			}
			if k%2 != 0 {
				want = append(want, "Odd")
			}
			got := slices.Clone(routes[MessageID{Producer: 0, Seq: uint64(s)}])
			sort.Strings(got)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("seed %d: token %d to %d went to %v, want %v", seed, s, k, got, want)
			}
		}
		// The publisher's start takes a few thousand steps: sweep the
		// budgets around the end of its publishes.
		traps := 0
		for budget := 40; budget < 6000; budget += 1 + r.IntN(120) {
			o := runEngines(t, guardRingSrc(ids, tokens, budget), Options{})
			if strings.Contains(o.stderr, "budget exhausted") {
				traps++
			}
		}
		if traps == 0 {
			t.Errorf("seed %d: no budget trapped", seed)
		}
		memTraps := 0
		src := guardRingSrc(ids, tokens, 1000000)
		for limit := int64(1000); limit < 8000; limit += 150 + int64(r.IntN(150)) {
			if o := runEngines(t, src, Options{MemoryLimit: limit}); strings.Contains(o.stderr, "out of memory") {
				memTraps++
			}
		}
		t.Logf("seed %d: %d budgets and %d memory limits trapped", seed, traps, memTraps)
		if memTraps == 0 {
			t.Errorf("seed %d: no memory limit trapped", seed)
		}
	}
}

// runEngines runs src on both engines with opts and fails unless they
// agree on stdout, stderr and the exit code; it returns the wasm run.
func runEngines(t *testing.T, src string, opts Options) outcome {
	t.Helper()
	img := compileAll(t, src)
	var outs []outcome
	for _, kind := range realEngines {
		opts.Engine = kind
		o := runWith(t, img, opts)
		if o.err != nil {
			t.Fatalf("%v: %v", kind, o.err)
		}
		outs = append(outs, o)
	}
	a, b := outs[0], outs[1]
	if a.stdout != b.stdout || a.stderr != b.stderr || a.res.Code != b.res.Code {
		t.Fatalf("engines disagree:\n%v: exit %d\n%s%s\n%v: exit %d\n%s%s",
			realEngines[0], a.res.Code, a.stdout, a.stderr, realEngines[1], b.res.Code, b.stdout, b.stderr)
	}
	return b
}
