package vm_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hale-lang/hale/vm"
)

// oomSrc keeps every list it makes: its data grows without end.
const oomSrc = `
locus M { on start { var xs: [[int]] = []; while true { push(xs, [1,2,3,4,5,6,7,8]); } } }
main { spawn M; }
`

// A handler whose data outgrows the machine's memory limit traps with
// "out of memory" at the push that crossed it, quickly, and at the same
// step every time: the accounting counts the program's values, not the
// Go runtime's memory.
func TestMemoryLimitTraps(t *testing.T) {
	img := compile(t, oomSrc)
	var first *vm.Trap
	var steps int64
	for run := range 2 {
		m := initMachine(t, img, &pollHost{})
		m.SetMemoryLimit(8 << 20)
		start := time.Now()
		err := m.Deliver(0, vm.HandlerStart, nil)
		var tr *vm.Trap
		if !errors.As(err, &tr) || tr.Message != "out of memory: the consumer's data outgrew its limit of 8 MiB" {
			t.Fatalf("got %v, want the out of memory trap", err)
		}
		if len(tr.Stack) != 1 || tr.Stack[0].Func != "M.on start" || !strings.HasPrefix(tr.Stack[0].Pos, "app.hl:2:") {
			t.Errorf("stack %+v", tr.Stack)
		}
		if took := time.Since(start); took > 20*time.Second { // generous: under -race on a busy machine
			t.Errorf("took %v to trap", took)
		}
		if run == 1 && (m.Steps() != steps || tr.Stack[0] != first.Stack[0]) {
			t.Errorf("trapped at step %d (%s), then at step %d (%s)", steps, first.Stack[0].Pos, m.Steps(), tr.Stack[0].Pos)
		}
		first, steps = tr, m.Steps()
	}
}

// Data that stays under the limit never traps, however much garbage the
// program makes: the limit is on what is held, not on what was allocated.
func TestMemoryLimitCountsLiveData(t *testing.T) {
	img := compile(t, `
locus M {
    var keep: [string] = [];
    on start {
        var i = 0;
        while i < 200000 {
            let xs = [i, i, i, i, i, i, i, i];
            let s = str(xs) + str(xs);
            if i % 1000 == 0 { push(keep, s); }
            i += 1;
        }
        print(str(len(keep)));
    }
}
main { spawn M; }
`)
	h := &fakeHost{}
	m := initMachine(t, img, h)
	m.SetMemoryLimit(1 << 20)
	if err := m.Deliver(0, vm.HandlerStart, nil); err != nil {
		t.Fatal(err)
	}
	if h.out.String() != "200\n" {
		t.Errorf("printed %q", h.out.String())
	}
}
