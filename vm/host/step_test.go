package host

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestStepperRunsTheChosenOrder drives a run one delivery at a time: the
// caller's picks decide the order, the program's state starts afresh in
// every run of one Program (guests are reused and reloaded), and the run
// ends quiescent when nothing is pending.
func TestStepperRunsTheChosenOrder(t *testing.T) {
	img := compileAll(t, `topic A { n: int }
topic B { n: int }
locus PA { on start { publish A { n: 1 }; } }
locus PB { on start { publish B { n: 2 }; } }
locus Sink {
    var seen: string = "";
    on A(a) { seen = seen + "a"; print(seen); }
    on B(b) { seen = seen + "b"; print(seen); }
}
main { spawn PA on pinned; spawn PB on pinned; spawn Sink on pinned; }`)
	for _, kind := range realEngines {
		prog, err := PrepareProgram(context.Background(), kind, img)
		if err != nil {
			t.Fatal(err)
		}
		for run, bFirst := range []bool{false, true, false, true} {
			var out bytes.Buffer
			st, err := NewStepper(context.Background(), prog, Options{Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			if !st.Start() {
				t.Fatal("start-up ended the run")
			}
			st.Input(nil)
			// Both starts (consumers 1 and 2), then the sink (consumer 3)
			// takes B or A first as chosen.
			for _, c := range []int{1, 2} {
				if err := st.Step(c, 0); err != nil {
					t.Fatal(err)
				}
			}
			pending := st.Pending(3)
			if len(pending) != 2 {
				t.Fatalf("%d deliveries pending at the sink", len(pending))
			}
			first := 0
			if bFirst == (pending[0].Message.Producer == 1) {
				first = 1
			}
			for _, pick := range []int{first, 0} {
				if err := st.Step(3, pick); err != nil {
					t.Fatal(err)
				}
			}
			if !st.Stopped() {
				t.Fatal("the run is not over with nothing pending")
			}
			res, err := st.Finish()
			if err != nil || res.Verdict != VerdictQuiescent || res.Handled[3] != 2 {
				t.Fatalf("result %+v, %v", res, err)
			}
			want := "a\nab\n"
			if bFirst {
				want = "b\nba\n"
			}
			if out.String() != want {
				t.Errorf("%v run %d: output %q, want %q", kind, run, out.String(), want)
			}
			if err := st.Step(3, 0); err == nil || !strings.Contains(err.Error(), "ended") {
				t.Errorf("a step after the end: %v", err)
			}
		}
		prog.Close()
	}
}
