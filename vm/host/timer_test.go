package host

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hale-lang/hale/vm"
)

// TestEnginesTimers runs timers on both engines: due order, `after 0` as
// a plain publish, quiescence waiting for pending timers, and the trap of
// a negative delay.
func TestEnginesTimers(t *testing.T) {
	runEngineCases(t, []engineCase{
		{name: "due order", src: `
topic Tick { n: int }
locus Clock {
    on start {
        publish Tick { n: 3 } after 600;
        publish Tick { n: 1 } after 200;
        publish Tick { n: 2 } after 400;
        publish Tick { n: 0 };
        print("published");
    }
    on Tick(t) { print(t.n); }
}
main { spawn Clock; }
`, stdout: "published\n0\n1\n2\n3\n"},
		{name: "after 0 is a plain publish", src: `
topic Tick { n: int }
locus Clock {
    on start {
        publish Tick { n: 1 } after 0;
        publish Tick { n: 2 };
        publish Tick { n: 3 } after 0;
    }
    on Tick(t) { print(t.n); }
}
main { spawn Clock; }
`, stdout: "1\n2\n3\n"},
		{name: "chained timers keep the program alive", src: `
topic Tick { n: int }
locus Clock {
    on start { publish Tick { n: 0 } after 10; }
    on Tick(t) {
        print(t.n);
        if t.n < 4 { publish Tick { n: t.n + 1 } after 10 * t.n; }
    }
}
main { spawn Clock; }
`, stdout: "0\n1\n2\n3\n4\n"},
		{name: "negative delay", src: `
topic Tick { n: int }
locus Clock {
    on start {
        print("before");
        let d = 5 - 10;
        publish Tick { n: 1 } after d;
        print("after");
    }
    on Tick(t) { print(t.n); }
}
main { spawn Clock; }
`, stdout: "before\n", stderr: "trap: negative delay -5 ms in publish after\n  at app.hl:7:9 in Clock.on start\n", code: ExitTrap},
	})
}

// TestTimerNegativeDelayKind: the trap of a negative delay has kind arg,
// try catches it, and the message takes no identity.
func TestTimerNegativeDelayKind(t *testing.T) {
	src := `
topic Tick { n: int }
locus Clock {
    on start {
        let r = try publish_late(0 - 1);
        match r {
            Ok(v) => { print("ok"); },
            Err(e) => { print(e.kind + ": " + e.message); },
        }
        publish Tick { n: 7 };
    }
    fn publish_late(d: int) -> int {
        publish Tick { n: 1 } after d;
        return d;
    }
    on Tick(t) { print(t.n); }
}
main { spawn Clock; }
`
	img := compileAll(t, src)
	for _, kind := range realEngines {
		j := newLogJournal(img)
		o := runWith(t, img, Options{Engine: kind, Journal: j})
		if o.err != nil || o.res.Code != 0 {
			t.Fatalf("%v: exit %d, %v\n%s", kind, o.res.Code, o.err, o.stderr)
		}
		if want := "arg: negative delay -1 ms in publish after\n7\n"; o.stdout != want {
			t.Errorf("%v: stdout %q, want %q", kind, o.stdout, want)
		}
		// The one message published is 0:0: the failed timer took no
		// sequence number.
		if got := strings.Join(j.kinds(0, "publish"), " "); !strings.Contains(got, "0:0") || strings.Contains(got, "0:1") {
			t.Errorf("%v: publishes %q", kind, got)
		}
		j.check(t)
	}
}

// TestTimerNegativeDelayTrapKind checks the kind of the uncaught trap.
func TestTimerNegativeDelayTrapKind(t *testing.T) {
	img := compileAll(t, startSrc(`let d = 0 - 3; publish Tick { n: 1 } after d;`)+"topic Tick { n: int }\n")
	for _, kind := range realEngines {
		o := runWith(t, img, Options{Engine: kind})
		if o.res.Trap == nil || o.res.Trap.Trap.Kind != vm.KindArg {
			t.Fatalf("%v: want a trap of kind arg, got %+v (%s)", kind, o.res, o.stderr)
		}
	}
}

// cancelSrc publishes a timer due in a minute and then ends the program
// with its handler of Stop: the run must end at once.
const cancelSrc = `
topic Tick { n: int }
topic Stop { how: int }
locus Clock {
    on start {
        publish Tick { n: 1 } after 60_000;
        publish Stop { how: HOW } after 20;
    }
    on Tick(t) { print("tick"); }
    on Stop(s) {
        if s.how == 0 {
            std::process::exit(5);
        } else {
            let z = s.how - 1;
            print(10 / z);
        }
    }
}
main { spawn Clock; }
`

// TestTimerCanceledByExitAndTrap: std::process::exit and a trap cancel a
// pending timer: the program ends promptly, not after the delay.
func TestTimerCanceledByExitAndTrap(t *testing.T) {
	for _, c := range []struct {
		how  string
		code int
	}{{"0", 5}, {"1", ExitTrap}} {
		img := compileAll(t, strings.Replace(cancelSrc, "HOW", c.how, 1))
		for _, kind := range realEngines {
			var spy *stopSpy
			start := time.Now()
			o := runWith(t, img, Options{Engine: kind, Timers: func(fire func(Timer)) TimerQueue {
				spy = &stopSpy{TimerQueue: realTimerQueue(fire)}
				return spy
			}})
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("%v: the run took %v: the pending timer was not canceled", kind, took)
			}
			if !spy.stopped.Load() {
				t.Errorf("%v: the run ended without stopping its timers", kind)
			}
			if o.res.Code != c.code || o.stdout != "" {
				t.Errorf("%v: exit %d, stdout %q; want exit %d and nothing printed", kind, o.res.Code, o.stdout, c.code)
			}
		}
	}
}

// stopSpy is a TimerQueue that notes whether it was stopped.
type stopSpy struct {
	TimerQueue
	stopped atomic.Bool
}

func (s *stopSpy) Stop() { s.stopped.Store(true); s.TimerQueue.Stop() }

// TestTimerInterrupt: canceling the run (Ctrl-C) while it waits on a
// timer ends it promptly, as canceled.
func TestTimerInterrupt(t *testing.T) {
	img := compileAll(t, startSrc(`publish Tick { n: 1 } after 60_000;`)+"topic Tick { n: int }\n")
	for _, kind := range realEngines {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		res, _ := Run(ctx, img, Options{Engine: kind})
		cancel()
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("%v: the run took %v", kind, took)
		}
		if res.Verdict != VerdictCanceled || res.Code != ExitCanceled {
			t.Errorf("%v: %s exit %d, want canceled", kind, res.Verdict, res.Code)
		}
	}
}

// manualTimers is a virtual clock: its time moves only when advance is
// called, which fires the timers that are due by then.
type manualTimers struct {
	mu      sync.Mutex
	now     time.Duration
	pending timerHeap
	added   chan Timer
	fire    func(Timer)
	stopped bool
}

func (q *manualTimers) Now() time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.now
}

func (q *manualTimers) Add(t Timer) {
	q.mu.Lock()
	q.pending.push(t)
	q.mu.Unlock()
	q.added <- t
}

func (q *manualTimers) Stop() {
	q.mu.Lock()
	q.stopped = true
	q.mu.Unlock()
}

func (q *manualTimers) advance(d time.Duration) {
	q.mu.Lock()
	q.now += d
	var due []Timer
	for len(q.pending) > 0 && q.pending[0].Due <= q.now && !q.stopped {
		due = append(due, q.pending.pop())
	}
	q.mu.Unlock()
	for _, t := range due {
		q.fire(t)
	}
}

// TestTimerVirtualClock drives the timers with a virtual clock through
// Options.Timers: each timer's due time is the clock's Now plus its delay;
// timers due at the same time fire in publish order; the program is not
// quiescent while a timer is pending.
func TestTimerVirtualClock(t *testing.T) {
	img := compileAll(t, `
topic Tick { n: int }
locus Clock {
    on start {
        publish Tick { n: 1 } after 500;
        publish Tick { n: 2 } after 100;
        publish Tick { n: 3 } after 500;
        publish Tick { n: 4 } after 100;
    }
    on Tick(t) { print(t.n); }
}
main { spawn Clock; }
`)
	for _, kind := range realEngines {
		q := &manualTimers{added: make(chan Timer, 4), now: time.Second}
		j := newLogJournal(img)
		var stdout strings.Builder
		var mu sync.Mutex
		done := make(chan Result, 1)
		go func() {
			res, err := Run(context.Background(), img, Options{Engine: kind, Journal: j,
				Stdout: lockedWriter(func(p []byte) { mu.Lock(); stdout.Write(p); mu.Unlock() }),
				Timers: func(fire func(Timer)) TimerQueue { q.fire = fire; return q }})
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		var dues []time.Duration
		for range 4 {
			dues = append(dues, (<-q.added).Due)
		}
		want := []time.Duration{1500 * time.Millisecond, 1100 * time.Millisecond, 1500 * time.Millisecond, 1100 * time.Millisecond}
		for i := range want {
			if dues[i] != want[i] {
				t.Fatalf("%v: due times %v, want %v", kind, dues, want)
			}
		}
		select {
		case res := <-done:
			t.Fatalf("%v: the run ended (%s) with timers pending", kind, res.Verdict)
		case <-time.After(50 * time.Millisecond):
		}
		q.advance(100 * time.Millisecond)
		q.advance(400 * time.Millisecond)
		res := <-done
		mu.Lock()
		got := stdout.String()
		mu.Unlock()
		if res.Verdict != VerdictQuiescent || got != "2\n4\n1\n3\n" {
			t.Errorf("%v: %s, stdout %q; want quiescent and 2 4 1 3", kind, res.Verdict, got)
		}
		// The journal saw each timer, with its delay, when it was published.
		if got := strings.Join(j.kinds(0, "after"), ", "); got != "after 0:0 500, after 0:1 100, after 0:2 500, after 0:3 100" {
			t.Errorf("%v: journaled %s", kind, got)
		}
		j.check(t)
	}
}

type lockedWriter func(p []byte)

func (w lockedWriter) Write(p []byte) (int, error) { w(p); return len(p), nil }

// TestTimerHeapOrder: timers leave the queue by due time, then producer,
// then sequence.
func TestTimerHeapOrder(t *testing.T) {
	var h timerHeap
	add := func(due time.Duration, p int, s uint64) {
		h.push(Timer{Due: due, Message: MessageID{Producer: p, Seq: s}})
	}
	add(20, 1, 0)
	add(10, 2, 5)
	add(10, 1, 3)
	add(10, 2, 4)
	add(5, 3, 9)
	var got []string
	for len(h) > 0 {
		x := h.pop()
		got = append(got, x.Message.String())
	}
	if s := strings.Join(got, " "); s != "3:9 1:3 2:4 2:5 1:0" {
		t.Errorf("order %s", s)
	}
}

// TestRealTimersStop: a stopped queue fires nothing more.
func TestRealTimersStop(t *testing.T) {
	fired := make(chan Timer, 4)
	q := realTimerQueue(func(t Timer) { fired <- t })
	q.Add(Timer{Due: q.Now() + 10*time.Millisecond, Message: MessageID{Seq: 1}})
	q.Add(Timer{Due: q.Now() + 10*time.Second, Message: MessageID{Seq: 2}})
	if x := <-fired; x.Message.Seq != 1 {
		t.Fatalf("fired %v first", x.Message)
	}
	q.Stop()
	q.Add(Timer{Due: q.Now(), Message: MessageID{Seq: 3}})
	select {
	case x := <-fired:
		t.Fatalf("fired %v after Stop", x.Message)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestTimerGuardsAndWorkGroups: a timer's guards run, and its work-group
// member is chosen, when the statement runs: the timer takes round-robin
// turn 0 although it is delivered after the immediate message that took
// turn 1, and a guard that traps traps the publish at once, not after the
// delay.
func TestTimerGuardsAndWorkGroups(t *testing.T) {
	runEngineCases(t, []engineCase{
		{name: "round-robin at the statement", src: `
topic Job { n: int }
locus Boss {
    on start {
        publish Job { n: 1 } after 200;
        publish Job { n: 2 };
    }
}
locus Worker(id: int) {
    on Job(j) shared { print("worker " + str(id) + " got " + str(j.n)); }
}
main {
    spawn Boss;
    spawn Worker(0) as w0;
    spawn Worker(1) as w1;
}
`, stdout: "worker 1 got 2\nworker 0 got 1\n"},
		{name: "guards at the statement", src: `
topic Job { n: int }
locus Boss {
    on start {
        publish Job { n: 4 } after 100;
        publish Job { n: 3 } after 50;
        print("published");
        publish Job { n: 0 } after 60_000;
        print("not reached");
    }
}
locus Worker(id: int) {
    on Job(j) if 12 / j.n % 2 == id { print("worker " + str(id) + " got " + str(j.n)); }
}
main {
    spawn Boss;
    spawn Worker(0) as w0;
    spawn Worker(1) as w1;
}
`, stdout: "published\n", stderr: "trap: division by zero\n", code: ExitTrap},
	})
}
