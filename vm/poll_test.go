package vm_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/internal/tier"
)

// pollHost counts the interpreter's polls and answers stop from the
// given poll on (0: never).
type pollHost struct {
	polls  int
	stopAt int
}

var errStop = errors.New("stop")

func (h *pollHost) Prim(id uint16, args []byte) ([]byte, error) {
	if id == vm.PrimPoll {
		h.polls++
		if h.stopAt > 0 && h.polls >= h.stopAt {
			return nil, errStop
		}
	}
	return nil, nil
}

// A budget larger than a poll slice still traps at exactly its step, and
// the host is polled between slices.
func TestBudgetAcrossPolls(t *testing.T) {
	const budget = 2*vm.PollSteps + 5
	img := compile(t, `
@budget(steps: `+strconv.Itoa(budget)+`)
locus M { on start { var i = 0; while true { i += 1; } } }
main { spawn M; }
`)
	h := &pollHost{}
	m := initMachine(t, img, h)
	var tr *vm.Trap
	if err := m.Deliver(0, vm.HandlerStart, nil); !errors.As(err, &tr) || tr.Message != "budget exhausted" {
		t.Fatalf("got %v, want the budget trap", err)
	}
	if m.Steps() != budget {
		t.Errorf("steps %d, want %d", m.Steps(), budget)
	}
	if h.polls != 2 {
		t.Errorf("%d polls, want 2", h.polls)
	}
}

// A host that answers a poll with an error ends a handler that would never
// end, with that error (not a trap), and the steps count what ran.
func TestPollInterrupts(t *testing.T) {
	img := compile(t, `
locus M { on start { var i = 0; while true { i += 1; } } }
main { spawn M; }
`)
	h := &pollHost{stopAt: 3}
	m := initMachine(t, img, h)
	var tr *vm.Trap
	if err := m.Deliver(0, vm.HandlerStart, nil); !errors.Is(err, errStop) || errors.As(err, &tr) {
		t.Fatalf("got %v, want the host's error", err)
	}
	if want := int64(3*vm.PollSteps + 1); m.Steps() != want {
		t.Errorf("steps %d, want %d", m.Steps(), want)
	}
}

// initMachine makes a machine for img and initialises its instance 0.
func initMachine(t *testing.T, img *image.Image, h vm.Host) *vm.Machine {
	t.Helper()
	m, err := vm.New(img, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Init(0); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestTierLimits keeps the second tier's limits equal to the
// interpreter's: compiled code hands a call back before the interpreter
// would run out of frames or registers.
func TestTierLimits(t *testing.T) {
	if tier.MaxDepth != vm.MaxDepth || tier.MaxStack != vm.MaxStack {
		t.Fatalf("tier limits %d, %d; interpreter %d, %d", tier.MaxDepth, tier.MaxStack, vm.MaxDepth, vm.MaxStack)
	}
}
