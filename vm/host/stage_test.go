package host

import (
	"reflect"
	"strings"
	"testing"
)

// stageSrc: two pinned producers publish thousands of messages each to a
// pinned checker, in batches the host stages and enqueues in runs
// (publishBatch); the first also sends every fifth message's number
// directly to a pinned X and through a pinned Y, which forwards it to X.
// The checker counts the messages each producer's sequence has out of
// order, and X the forwarded numbers it got before the direct one: both
// must be 0, since a consumer gets one producer's deliveries in the order
// of their publishes, and a delivery caused by a later publish (Via, then
// Fwd) never overtakes one of an earlier publish (Direct).
const stageSrc = `
topic Seq { from: int, n: int }
topic Done { from: int }
topic Direct { n: int }
topic Via { n: int }
topic Fwd { n: int }

const K: int = 3000;

locus Producer(id: int) {
    on start {
        for i in 0..K {
            publish Seq { from: id, n: i };
            if id == 0 && i % 5 == 0 {
                publish Direct { n: i / 5 };
                publish Via { n: i / 5 };
            }
        }
        publish Done { from: id };
    }
}

locus Checker {
    var last0: int = -1;
    var last1: int = -1;
    var bad: int = 0;
    var done: int = 0;
    on Seq(s) {
        if s.from == 0 {
            if s.n != last0 + 1 { bad += 1; }
            last0 = s.n;
        } else {
            if s.n != last1 + 1 { bad += 1; }
            last1 = s.n;
        }
    }
    on Done(d) {
        done += 1;
        if done == 2 { print("checker " + str(last0) + " " + str(last1) + " bad " + str(bad)); }
    }
}

locus X {
    var direct: int = 0;
    var fwd: int = 0;
    var bad: int = 0;
    on Direct(d) {
        if d.n != direct { bad += 1; }
        direct += 1;
    }
    on Fwd(f) {
        if f.n >= direct { bad += 1; }
        fwd += 1;
        if fwd == K / 5 { print("x direct " + str(direct) + " fwd " + str(fwd) + " bad " + str(bad)); }
    }
}

locus Y {
    on Via(v) { publish Fwd { n: v.n }; }
}

main {
    spawn Producer(0) as p0 on pinned;
    spawn Producer(1) as p1 on pinned;
    spawn Checker on pinned;
    spawn X on pinned;
    spawn Y on pinned;
}
`

// TestStagedPublishesKeepOrder runs stageSrc on the native engine and,
// repeatedly, on the wasm engine with and without publish batches, and
// requires every run to end quiescent (no wake lost: a lost one ends in
// the harness's timeout) with each producer's messages in order and no
// forwarded message ahead of its direct one.
func TestStagedPublishesKeepOrder(t *testing.T) {
	img := compileAll(t, stageSrc)
	want := []string{"checker 2999 2999 bad 0", "x direct 600 fwd 600 bad 0"}
	runs := 8
	if testing.Short() {
		runs = 2
	}
	for i := range 1 + 2*runs {
		kind, name := EngineWasm, "wasm"
		switch {
		case i == 0:
			kind, name = EngineNative, "native"
		case i%2 == 0:
			noBatches, name = true, "wasm-unbatched"
		}
		o := runWith(t, img, Options{Engine: kind})
		noBatches = false
		if o.err != nil {
			t.Fatalf("%s: %v", name, o.err)
		}
		if got := sortedLines(o.stdout); !reflect.DeepEqual(got, want) || o.res.Verdict != VerdictQuiescent {
			t.Fatalf("%s, run %d: %s\n%s(%s), want %q", name, i, strings.Join(got, "\n"), o.stderr, o.res.Verdict, want)
		}
	}
}

// wakeSrc: a pinned producer computes a while (so that its consumer is
// waiting by then) and ends with one run of three publishes to it, which
// reaches the host as one batch and is enqueued as one run: the run must
// wake the consumer (a lost wake ends in the harness's timeout).
const wakeSrc = `
topic M { n: int }
locus P {
    on start {
        var s: int = 0;
        for i in 0..300000 { s = (s + i * 7) % 1000003; }
        publish M { n: s % 2 };
        publish M { n: 1 };
        publish M { n: 2 };
    }
}
locus C {
    var got: int = 0;
    on M(m) {
        got += 1;
        if got == 3 { print("got 3"); }
    }
}
main { spawn P on pinned; spawn C on pinned; }
`

// TestStagedRunWakes runs wakeSrc on both engines: the consumer waits
// when the producer's last batch arrives, and the run must end with its
// three deliveries handled.
func TestStagedRunWakes(t *testing.T) {
	img := compileAll(t, wakeSrc)
	for _, kind := range []EngineKind{EngineNative, EngineWasm, EngineWasm} {
		o := runWith(t, img, Options{Engine: kind})
		if o.err != nil {
			t.Fatal(o.err)
		}
		if o.stdout != "got 3\n" || o.res.Verdict != VerdictQuiescent {
			t.Fatalf("engine %v: %q%s(%s), want \"got 3\" and quiescent", kind, o.stdout, o.stderr, o.res.Verdict)
		}
	}
}
