package vm_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hale-lang/hale/vm"
)

// guardRingSrc publishes to subscribers whose guards have the fast path's
// shape (int field == parameter, either way round, and a bool field) and
// one that has not (a call), under a step budget.
const guardRingSrc = `topic Token { to: int, on: bool }
locus N(id: int, want: bool) {
    on Token(t) if t.to == id { print("N" + str(id) + " " + str(t.to)); }
}
locus R(id: int) {
    on Token(t) if id == t.to { print("R" + str(id)); }
}
locus B(want: bool) {
    on Token(t) if t.on == want { print("B " + str(want)); }
}
fn same(a: int, b: int) -> bool { return a == b; }
locus S(id: int) {
    on Token(t) if same(t.to, id) { print("S" + str(id)); }
}
@budget(steps: %d)
locus P {
    on start {
        for k in 0..3 { publish Token { to: k, on: k == 1 }; }
    }
}
main {
    spawn N(0, true) as n0; spawn N(1, false) as n1; spawn R(1) as r1; spawn R(2) as r2;
    spawn B(true) as bt; spawn B(false) as bf; spawn S(2) as s2; spawn P;
}
`

// The fast path of guards is the interpreter's: for every budget around
// the one the publishing handler needs, the same deliveries, the same
// trap at the same step, with and without it.
func TestFieldEqGuardsAreInterpreted(t *testing.T) {
	img := compile(t, fmt.Sprintf(guardRingSrc, 1000))
	fast := 0
	for i := range img.Funcs {
		if vm.FieldEqShape(&img.Funcs[i]) {
			fast++
		}
	}
	if fast != 3 {
		t.Fatalf("%d guards have the fast shape, want 3 (N, R, B)", fast)
	}
	run := func(budget int, on bool) (string, int64) {
		vm.SetFieldEq(on)
		defer vm.SetFieldEq(true)
		h := &fakeHost{}
		m, err := run(t, compile(t, fmt.Sprintf(guardRingSrc, budget)), h)
		var tr *vm.Trap
		if err != nil && !errors.As(err, &tr) {
			t.Fatal(err)
		}
		return report(h.out.String(), err), m.Steps()
	}
	full, _ := run(1000, false)
	if !strings.Contains(full, "N0 0") || !strings.Contains(full, "R2") || !strings.Contains(full, "S2") || !strings.Contains(full, "B true") {
		t.Fatalf("deliveries:\n%s", full)
	}
	traps := 0
	for budget := 1; budget <= 120; budget++ {
		slowOut, slowSteps := run(budget, false)
		fastOut, fastSteps := run(budget, true)
		if slowOut != fastOut || slowSteps != fastSteps {
			t.Fatalf("budget %d: interpreted (%d steps):\n%s\nfast path (%d steps):\n%s", budget, slowSteps, slowOut, fastSteps, fastOut)
		}
		if strings.Contains(slowOut, "budget exhausted") {
			traps++
		}
	}
	if traps == 0 || traps == 120 {
		t.Errorf("%d of 120 budgets trapped: the range misses the boundary", traps)
	}
}

// A break armed in a guard of the fast path's shape stops there: with a
// debugger the guards run through the loop, where breaks are patched in.
func TestFieldEqGuardStopsAtBreak(t *testing.T) {
	img := compile(t, fmt.Sprintf(guardRingSrc, 1000))
	guard := fnIndex(img, "N.on Token guard")
	if guard < 0 || !vm.FieldEqShape(&img.Funcs[guard]) || len(img.Funcs[guard].Stmts) == 0 {
		t.Fatalf("guard %d: no fast-shaped guard with a statement", guard)
	}
	h := &breakHost{img: img}
	spec := vm.EncodeBreakSpec(vm.BreakSpec{At: []vm.BreakPC{{Fn: guard, PC: int(img.Funcs[guard].Stmts[0].PC)}}})
	m, err := vm.New(img, h)
	if err != nil {
		t.Fatal(err)
	}
	p := len(img.Instances) - 1 // P, the publisher
	for i := range img.Instances {
		if err := m.Init(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := shareParams(m, img); err != nil {
		t.Fatal(err)
	}
	if err := m.SetBreaks(spec); err != nil {
		t.Fatal(err)
	}
	if err := m.Deliver(p, vm.HandlerStart, nil); err != nil {
		t.Fatal(err)
	}
	// Three publishes, each running the guard of n0 and of n1.
	if len(h.stops) != 6 {
		t.Errorf("stops %v, want 6 in the guard", h.stops)
	}
}
