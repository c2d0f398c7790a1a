package host

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// routeJournal is a logJournal that also keeps, for every publish, the
// instances the Router sent it to.
type routeJournal struct {
	*logJournal
	mu     sync.Mutex
	routes map[MessageID][]string
}

func (j *routeJournal) Publish(c int, msg MessageID, topic int, payload []byte, targets []int) {
	j.logJournal.Publish(c, msg, topic, payload, targets)
	names := []string{}
	for _, t := range targets {
		names = append(names, j.prog.Instances[t].Name)
	}
	j.mu.Lock()
	j.routes[msg] = names
	j.mu.Unlock()
}

// runRouted runs src on both engines with a routeJournal, checks that
// the engines agree on stdout, exit code, deliveries handled per consumer
// and routes, and returns the wasm run's outcome and routes.
func runRouted(t *testing.T, src, stdin string) (outcome, map[MessageID][]string) {
	t.Helper()
	img := compileAll(t, src)
	var outs []outcome
	var routes []map[MessageID][]string
	for _, kind := range realEngines {
		j := &routeJournal{logJournal: newLogJournal(img), routes: map[MessageID][]string{}}
		o := runWith(t, img, Options{Engine: kind, Journal: j, Stdin: strings.NewReader(stdin)})
		if o.err != nil {
			t.Fatalf("%v: %v", kind, o.err)
		}
		j.check(t)
		outs = append(outs, o)
		routes = append(routes, j.routes)
	}
	a, b := outs[0], outs[1]
	if a.stdout != b.stdout || a.stderr != b.stderr || a.res.Code != b.res.Code || !slices.Equal(a.res.Handled, b.res.Handled) {
		t.Fatalf("engines disagree:\n%v: exit %d handled %v\n%s%s\n%v: exit %d handled %v\n%s%s",
			realEngines[0], a.res.Code, a.res.Handled, a.stdout, a.stderr, realEngines[1], b.res.Code, b.res.Handled, b.stdout, b.stderr)
	}
	if fmt.Sprint(routes[0]) != fmt.Sprint(routes[1]) {
		t.Fatalf("engines route differently:\n%v\n%v", routes[0], routes[1])
	}
	return b, routes[1]
}

// TestGuardEnqueuesOnlyWhereItHolds counts deliveries: each worker on its
// own consumer handles exactly the jobs its guard accepts, and a failed
// guard leaves no delivery anywhere (the consumers' counts show it).
func TestGuardEnqueuesOnlyWhereItHolds(t *testing.T) {
	src := `
topic Job { worker: int, n: int }
fn known(w: int) -> bool { return w >= 0 && w < 3; }
locus Worker(slot: int) {
    var got: int = 0;
    on Job(j) if j.worker == slot && known(j.worker) { got += 1; }
}
locus Boss {
    on start { for i in 0..10 { publish Job { worker: i % 4, n: i }; } }
}
main {
    spawn Boss;
    spawn Worker(0) as w0 on pinned;
    spawn Worker(1) as w1 on pinned;
    spawn Worker(2) as w2 on pinned;
}
`
	o, routes := runRouted(t, src, "")
	if o.res.Code != 0 {
		t.Fatalf("exit %d: %s", o.res.Code, o.stderr)
	}
	// Consumers: 0 main (Boss's start), 1..3 the pinned workers. Worker
	// i gets the jobs with i % 4 == slot; jobs for worker 3 go nowhere.
	if want := []int{1, 3, 3, 2}; !slices.Equal(o.res.Handled, want) {
		t.Errorf("handled %v, want %v", o.res.Handled, want)
	}
	if len(routes) != 10 {
		t.Fatalf("%d publishes, want 10", len(routes))
	}
	for s := range uint64(10) {
		got := routes[MessageID{Producer: 0, Seq: s}]
		want := []string{}
		if s%4 < 3 {
			want = []string{fmt.Sprintf("w%d", s%4)}
		}
		if !slices.Equal(got, want) {
			t.Errorf("message 0:%d went to %v, want %v", s, got, want)
		}
	}
}

// TestSharedRoundRobinPerProducer: two producers on their own consumers
// each number their publishes of the topic from 0, and message k of each
// goes to member k mod 3 of the work group; an ordinary subscriber gets
// every message.
func TestSharedRoundRobinPerProducer(t *testing.T) {
	src := `
topic Job { n: int }
locus Member(id: int) {
    on Job(j) shared { }
}
locus Audit {
    on Job(j) { }
}
locus Producer(count: int) {
    on start { for i in 0..count { publish Job { n: i }; } }
}
main {
    spawn Member(0) as m0;
    spawn Audit;
    spawn Member(1) as m1;
    spawn Member(2) as m2;
    spawn Producer(5) as pa on pinned;
    spawn Producer(4) as pb on pinned;
}
`
	o, routes := runRouted(t, src, "")
	if o.res.Code != 0 {
		t.Fatalf("exit %d: %s", o.res.Code, o.stderr)
	}
	members := []string{"m0", "m1", "m2"}
	for _, p := range []struct {
		consumer int
		count    uint64
	}{{1, 5}, {2, 4}} {
		for k := range p.count {
			got := routes[MessageID{Producer: p.consumer, Seq: k}]
			// main order: m0, Audit, m1, m2
			want := []string{"Audit", members[k%3]}
			if members[k%3] == "m0" {
				want = []string{"m0", "Audit"}
			}
			if !slices.Equal(got, want) {
				t.Errorf("producer %d message %d went to %v, want %v", p.consumer, k, got, want)
			}
		}
	}
	// main handles 9 for Audit and 9 for the members, nothing twice.
	if o.res.Handled[0] != 18 {
		t.Errorf("main handled %d deliveries, want 18", o.res.Handled[0])
	}
}

// TestGuardedWorkGroup: of the members whose guard holds, in main order,
// message k goes to member k mod m, and to nobody when no guard holds.
func TestGuardedWorkGroup(t *testing.T) {
	src := `
topic Job { size: int }
locus Member(name: string, max: int) {
    on Job(j) if j.size <= max shared { print(format("{} {}", name, j.size)); }
}
locus Boss {
    on start {
        for s in [1, 5, 1, 5, 1, 9, 1] { publish Job { size: s }; }
    }
}
main {
    spawn Member("small", 2) as small;
    spawn Member("big", 6) as big;
    spawn Member("any", 6) as any;
    spawn Boss;
}
`
	o, routes := runRouted(t, src, "")
	// k=0 size 1: all 3 hold -> 0 mod 3 = small; k=1 size 5: big, any
	// -> 1 mod 2 = any; k=2 size 1: 2 mod 3 = any; k=3 size 5: 3 mod 2
	// = any; k=4 size 1: 4 mod 3 = big; k=5 size 9: nobody; k=6 size 1:
	// 6 mod 3 = small.
	want := "small 1\nany 5\nany 1\nany 5\nbig 1\nsmall 1\n"
	if o.stdout != want || o.res.Code != 0 {
		t.Errorf("got (exit %d):\n%s%s\nwant:\n%s", o.res.Code, o.stdout, o.stderr, want)
	}
	if got := routes[MessageID{Producer: 0, Seq: 5}]; len(got) != 0 {
		t.Errorf("message 0:5 went to %v, want nobody", got)
	}
}

// TestGuardTrapAbortsPublish: a guard that traps makes the publish trap
// on the publisher, with the guard's frame on top of the publisher's;
// the message takes no identity and reaches nobody, not even an
// unguarded subscriber.
func TestGuardTrapAbortsPublish(t *testing.T) {
	src := `topic Job { d: int }
locus Plain {
    on Job(j) { print("plain"); }
}
locus Picky(n: int) {
    on Job(j) if n / j.d > 0 { print("picky"); }
}
locus Boss {
    on start {
        let d = 0;
        publish Job { d: d };
        print("not reached");
    }
}
main {
    spawn Plain;
    spawn Picky(4);
    spawn Boss on pinned;
}
`
	o, routes := runRouted(t, src, "")
	if o.res.Code != ExitTrap {
		t.Fatalf("exit %d, want %d:\n%s%s", o.res.Code, ExitTrap, o.stdout, o.stderr)
	}
	for _, want := range []string{
		"trap: division by zero\n",
		"  at app.hl:6:20 in Picky.on Job guard\n",
		"  at app.hl:11:9 in Boss.on start\n",
	} {
		if !strings.Contains(o.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, o.stderr)
		}
	}
	if strings.Contains(o.stdout, "not reached") {
		t.Errorf("the handler went on after the trap:\n%s", o.stdout)
	}
	if len(routes) != 0 || o.res.Handled[0] != 0 {
		t.Errorf("the trapped publish took an identity (%v) or was delivered (%v)", routes, o.res.Handled)
	}
}

// TestGuardStepsCountTowardBudget: the guards run in the publisher's
// handler run, so an expensive guard exhausts the publisher's budget.
func TestGuardStepsCountTowardBudget(t *testing.T) {
	src := `topic Job { n: int }
fn slow(n: int) -> bool {
    let total = 0;
    for i in 0..n { let x = i; }
    return total >= 0;
}
locus W {
    on Job(j) if slow(j.n) { print("got " + str(j.n)); }
}
@budget(steps: 2000)
locus Boss {
    on start {
        publish Job { n: 10 };
        publish Job { n: 100000 };
    }
}
main { spawn W; spawn Boss; }
`
	o, routes := runRouted(t, src, "")
	if len(routes) != 1 {
		t.Errorf("%d messages published, want the first one only", len(routes))
	}
	if o.res.Code != ExitTrap || !strings.Contains(o.stderr, "trap: budget exhausted") || !strings.Contains(o.stderr, "in W.on Job guard") {
		t.Errorf("got exit %d:\n%s%s", o.res.Code, o.stdout, o.stderr)
	}
}

// TestGuardOnIngress: guards of a topic bound to stdin run for every line
// (on the binding's own engine), with the subscribers' parameters.
func TestGuardOnIngress(t *testing.T) {
	src := `topic Line { text: string }
locus Echo(prefix: string) {
    on Line(l) if starts_with(l.text, prefix) { print(prefix + ": " + l.text); }
}
main {
    spawn Echo("a") as a;
    spawn Echo("b") as b;
    bind stdin to Line;
}
`
	o, _ := runRouted(t, src, "apple\nbanana\ncherry\navocado\n")
	if want := "a: apple\nb: banana\na: avocado\n"; o.stdout != want || o.res.Code != 0 {
		t.Errorf("got (exit %d):\n%s%s\nwant:\n%s", o.res.Code, o.stdout, o.stderr, want)
	}
	if o.res.Handled[0] != 3 {
		t.Errorf("main handled %d, want 3", o.res.Handled[0])
	}
}

// TestGuardTrapOnIngress: a guard that traps on a stdin line stops the
// run before the line is published, with a report naming the binding.
func TestGuardTrapOnIngress(t *testing.T) {
	src := `topic Line { text: string }
locus Echo(n: int) {
    on Line(l) if n / len(l.text) > 0 { print(l.text); }
}
main { spawn Echo(5); bind stdin to Line; }
`
	o, routes := runRouted(t, src, "\nab\n")
	want := "trap: division by zero\n  at app.hl:3:21 in Echo.on Line guard\n  reading stdin for topic Line (consumer 1)\n"
	if o.res.Code != ExitTrap || o.stderr != want {
		t.Errorf("got exit %d:\n%s\nwant:\n%s", o.res.Code, o.stderr, want)
	}
	if len(routes) != 0 || o.res.Handled[0] != 0 {
		t.Errorf("the line was published (%v) or delivered (%v)", routes, o.res.Handled)
	}
}

// TestGuardSeesItsOwnCopies: a guard that mutates the payload or a
// parameter (through a pure fn) changes neither the other guards' view,
// nor the next publish's, nor the delivered payload.
func TestGuardSeesItsOwnCopies(t *testing.T) {
	src := `topic Job { items: [int] }
fn grab(xs: [int]) -> bool { push(xs, 7); return len(xs) == 2; }
locus W(name: string, tags: [int]) {
    on Job(j) if grab(j.items) && grab(tags) { print(name + " " + str(j.items) + " " + str(tags)); }
}
locus Boss { on start { publish Job { items: [1] }; publish Job { items: [2] }; } }
main {
    spawn Boss;
    spawn W("a", [5]) as a;
    spawn W("b", [6]) as b;
}
`
	o, _ := runRouted(t, src, "")
	if want := "a [1] [5]\nb [1] [6]\na [2] [5]\nb [2] [6]\n"; o.stdout != want || o.res.Code != 0 {
		t.Errorf("got (exit %d):\n%s%s\nwant:\n%s", o.res.Code, o.stdout, o.stderr, want)
	}
}
