package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

// scenario is a program with a fake-engine twin: the behaviour does in Go
// what the Hale handlers do, so the same expectations hold for the fake
// engine (testing the scheduler alone) and for both real engines.
type scenario struct {
	name   string
	src    string
	fake   behaviour
	stdin  string
	args   []string
	stdout string // exact, unless unordered
	// unordered compares stdout as a sorted set of lines (consumers run
	// concurrently).
	unordered bool
	stderr    string
	code      int
	verdict   string
}

var (
	v   = value.Int
	str = value.Str
)

var scenarios = []scenario{
	{
		name: "main bus FIFO",
		src: `
topic T { n: int }
locus P {
    on start { publish T { n: 1 }; publish T { n: 2 }; print("P start"); }
    on T(t) { print("P got " + str(t.n)); }
}
locus Q {
    on start { publish T { n: 3 }; print("Q start"); }
    on T(t) { print("Q got " + str(t.n)); }
}
main { spawn P; spawn Q; }
`,
		fake: behaviour{
			"P.on start": func(x *call) error {
				x.publish("T", v(1))
				x.publish("T", v(2))
				return x.print("P start")
			},
			"Q.on start": func(x *call) error {
				x.publish("T", v(3))
				return x.print("Q start")
			},
			"P.on T": func(x *call) error { return x.print(fmt.Sprintf("P got %d", x.int(0))) },
			"Q.on T": func(x *call) error { return x.print(fmt.Sprintf("Q got %d", x.int(0))) },
		},
		stdout: "P start\nQ start\nP got 1\nQ got 1\nP got 2\nQ got 2\nP got 3\nQ got 3\n",
	},
	{
		name: "fan-out in main order, publisher included",
		src: `
topic T { n: int }
locus S { on T(t) { print("S " + str(t.n)); } }
locus Pub {
    on start { publish T { n: 7 }; }
    on T(t) { print("Pub " + str(t.n)); }
}
main { spawn S as s1; spawn Pub; spawn S as s2; }
`,
		fake: behaviour{
			"Pub.on start": func(x *call) error { return x.publish("T", v(7)) },
			"S.on T":       func(x *call) error { return x.print(fmt.Sprintf("S %d", x.int(0))) },
			"Pub.on T":     func(x *call) error { return x.print(fmt.Sprintf("Pub %d", x.int(0))) },
		},
		stdout: "S 7\nPub 7\nS 7\n",
	},
	{
		name: "publish without subscribers",
		src: `
topic Nobody { n: int }
locus A { on start { publish Nobody { n: 1 }; print("ok"); } }
main { spawn A; }
`,
		fake: behaviour{
			"A.on start": func(x *call) error {
				x.publish("Nobody", v(1))
				return x.print("ok")
			},
		},
		stdout: "ok\n",
	},
	{
		name: "ping-pong across consumers reaches quiescence",
		src: `
topic Ping { n: int }
topic Pong { n: int }
locus A {
    on start { publish Ping { n: 0 }; }
    on Pong(p) {
        if p.n < 50 { publish Ping { n: p.n + 1 }; } else { print("done " + str(p.n)); }
    }
}
locus B { on Ping(p) { publish Pong { n: p.n }; } }
main { spawn A; spawn B on pinned; }
`,
		fake: behaviour{
			"A.on start": func(x *call) error { return x.publish("Ping", v(0)) },
			"A.on Pong": func(x *call) error {
				if n := x.int(0); n < 50 {
					return x.publish("Ping", v(n+1))
				}
				return x.print(fmt.Sprintf("done %d", x.int(0)))
			},
			"B.on Ping": func(x *call) error { return x.publish("Pong", v(x.int(0))) },
		},
		stdout: "done 50\n",
	},
	{
		name: "pools and pinned instances",
		src: `
topic Job { n: int }
topic Answer { who: string, n: int }
locus Boss {
    on start { for i in 0..6 { publish Job { n: i }; } }
    on Answer(r) { print(r.who + " did " + str(r.n)); }
}
locus Worker(slot: int) {
    on Job(j) { if j.n % 3 == slot { publish Answer { who: "w" + str(slot), n: j.n }; } }
}
main {
    spawn Boss;
    spawn Worker(0) as w0 on pool("workers");
    spawn Worker(1) as w1 on pool("workers");
    spawn Worker(2) as w2 on pinned;
}
`,
		fake: behaviour{
			"Boss.on start": func(x *call) error {
				for i := range 6 {
					x.publish("Job", v(int64(i)))
				}
				return nil
			},
			"Boss.on Answer": func(x *call) error { return x.print(fmt.Sprintf("%s did %d", x.str(0), x.int(1))) },
			"Worker.on Job": func(x *call) error {
				slot := int64(x.name()[1] - '0')
				if n := x.int(0); n%3 == slot {
					return x.publish("Answer", str(fmt.Sprintf("w%d", slot)), v(n))
				}
				return nil
			},
		},
		unordered: true,
		stdout:    "w0 did 0\nw0 did 3\nw1 did 1\nw1 did 4\nw2 did 2\nw2 did 5\n",
	},
	{
		name: "stdin ingress",
		src: `
topic Line { text: string }
locus Echo { on Line(l) { print("[" + l.text + "]"); } }
main { spawn Echo; bind stdin to Line; }
`,
		fake: behaviour{
			"Echo.on Line": func(x *call) error { return x.print("[" + x.str(0) + "]") },
		},
		stdin:  "a\r\nb\n\nlast",
		stdout: "[a]\n[b]\n[]\n[last]\n",
	},
	{
		name: "exit stops after the current handler",
		src: `
topic T { n: int }
locus M {
    on start { publish T { n: 1 }; std::process::exit(7); print("after exit"); }
    on T(t) { print("never"); }
}
main { spawn M; }
`,
		fake: behaviour{
			"M.on start": func(x *call) error {
				x.publish("T", v(1))
				x.prim("std::process::exit", v(7), value.Str("app.hl:3:45"))
				return x.print("after exit")
			},
			"M.on T": func(x *call) error { return x.print("never") },
		},
		stdout:  "after exit\n",
		code:    7,
		verdict: VerdictExit,
	},
	{
		name: "trap report",
		src: `topic Job { n: int }
locus Worker {
    on Job(j) { let x = 10 / (j.n - 2); print(str(x)); }
}
locus Boss {
    on start { for i in 0..4 { publish Job { n: i }; } }
}
main { spawn Boss; spawn Worker; }
`,
		fake: behaviour{
			"Boss.on start": func(x *call) error {
				for i := range 4 {
					x.publish("Job", v(int64(i)))
				}
				return nil
			},
			"Worker.on Job": func(x *call) error {
				d := x.int(0) - 2
				if d == 0 {
					return &vm.Trap{Message: "division by zero", Stack: []vm.Frame{{Func: "Worker.on Job", Pos: "app.hl:3:28"}}}
				}
				return x.print(fmt.Sprint(10 / d))
			},
		},
		stdout:  "-5\n-10\n",
		stderr:  "trap: division by zero\n  at app.hl:3:28 in Worker.on Job\n  delivery 0:3 (target Worker, message 0:2, topic Job)\n",
		code:    3,
		verdict: VerdictTrap,
	},
	{
		name: "trap in a start delivery, with a call stack",
		src: `fn check(n: int) -> int {
    assert(n > 0, "n must be positive");
    return n;
}
locus Ledger {
    on start { print("up"); check(0); }
}
main { spawn Ledger; }
`,
		fake: behaviour{
			"Ledger.on start": func(x *call) error {
				x.print("up")
				return &vm.Trap{Message: "n must be positive", Stack: []vm.Frame{
					{Func: "check", Pos: "app.hl:2:5"},
					{Func: "Ledger.on start", Pos: "app.hl:6:29"},
				}}
			},
		},
		stdout:  "up\n",
		stderr:  "trap: n must be positive\n  at app.hl:2:5 in check\n  at app.hl:6:29 in Ledger.on start\n  delivery 0:0 (target Ledger, message start)\n",
		code:    3,
		verdict: VerdictTrap,
	},
	{
		name: "io and args",
		src: `
locus A {
    on start {
        std::io::println("out " + join(std::os::args(), ","));
        std::io::eprintln("err line");
        print(len(std::os::args()));
    }
}
main { spawn A; }
`,
		fake: behaviour{
			"A.on start": func(x *call) error {
				x.prim("std::io::println", str("out x,y z"))
				x.prim("std::io::eprintln", str("err line"))
				return x.print("2")
			},
		},
		args:   []string{"x", "y z"},
		stdout: "out x,y z\n2\n",
		stderr: "err line\n",
	},
}

func (sc *scenario) check(t *testing.T, o outcome) {
	t.Helper()
	if o.err != nil {
		t.Fatalf("Run: %v", o.err)
	}
	verdict := sc.verdict
	if verdict == "" {
		verdict = VerdictQuiescent
	}
	if o.res.Verdict != verdict || o.res.Code != sc.code {
		t.Errorf("verdict %s code %d, want %s %d", o.res.Verdict, o.res.Code, verdict, sc.code)
	}
	if sc.unordered {
		if got, want := sortedLines(o.stdout), sortedLines(sc.stdout); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("stdout lines %q, want %q", got, want)
		}
	} else if o.stdout != sc.stdout {
		t.Errorf("stdout:\n%s\nwant:\n%s", o.stdout, sc.stdout)
	}
	if o.stderr != sc.stderr {
		t.Errorf("stderr:\n%s\nwant:\n%s", o.stderr, sc.stderr)
	}
}

func (sc *scenario) options() Options {
	return Options{Stdin: strings.NewReader(sc.stdin), Args: sc.args}
}

// TestScenariosFake runs every scenario on the fake engine, with a
// journal checking the ordering promises.
func TestScenariosFake(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			prog := compileSIR(t, sc.src)
			j := newLogJournal(prog)
			opts := sc.options()
			opts.Journal = j
			sc.check(t, runFake(t, prog, sc.fake, opts))
			j.check(t)
			// And once without a journal: the live path.
			sc.check(t, runFake(t, prog, sc.fake, sc.options()))
		})
	}
}
