package vm_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

func TestTrapStacks(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{
			name: "nested call",
			src: `fn inner(a: int, b: int) -> int {
    return a / b;
}

fn outer(x: int) -> int {
    let y = x + 1;
    return inner(y, x - x) + 1;
}

topic Job { n: int }

locus Worker {
    on start { publish Job { n: 3 }; }
    on Job(j) {
        print("job " + str(j.n));
        let r = outer(j.n);
        print(r);
    }
}

main { spawn Worker; }
`,
			want: `job 3
trap: division by zero
  at app.hl:2:14 in inner
  at app.hl:7:12 in outer
  at app.hl:16:17 in Worker.on Job
`,
		},
		{
			name: "locus fn and state",
			src: `locus Counter(limit: int) {
    var n: int = 0;
    fn bump() {
        n += 1;
        assert(n <= limit, "over the limit of " + str(limit));
    }
    on start {
        bump();
        bump();
        print(n);
        bump();
    }
}

main { spawn Counter(2); }
`,
			want: `2
trap: over the limit of 2
  at app.hl:5:9 in Counter.bump
  at app.hl:11:9 in Counter.on start
`,
		},
		{
			name: "state initialiser",
			src: `fn pick(xs: [int], i: int) -> int { return xs[i]; }

locus L {
    var a: int = 1;
    var b: int = pick([1, 2], 2);
    on start { print("never"); }
}

main { spawn L; }
`,
			want: `trap: index 2 out of range for list of length 2
  at app.hl:1:44 in pick
  at app.hl:5:18 in L.init
`,
		},
		{
			name: "spawn argument",
			src: `fn half(n: int) -> int { return 10 / n; }

locus L(x: int) {
    on start { print(x); }
}

main {
    spawn L(half(5)) as a;
    spawn L(half(0)) as b;
}
`,
			want: `trap: division by zero
  at app.hl:1:36 in half
  at app.hl:9:13 in main
`,
		},
		{
			name: "missing key in map in handler",
			src: `topic Ask { key: string }

locus Store {
    var data: {string: int} = {"a": 1};
    on start { publish Ask { key: "a" }; publish Ask { key: "b" }; }
    on Ask(q) { print(data[q.key]); }
}

main { spawn Store; }
`,
			want: `1
trap: key "b" not found in map
  at app.hl:6:23 in Store.on Ask
`,
		},
		{
			name: "overflow in compound assignment to state",
			src: `locus L {
    var big: int = 9223372036854775806;
    on start {
        big += 1;
        print(big);
        big += 1;
    }
}

main { spawn L; }
`,
			want: `9223372036854775807
trap: integer overflow
  at app.hl:6:9 in L.on start
`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := runSrc(t, c.src); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestDeepStackIsCut(t *testing.T) {
	h := &fakeHost{}
	_, err := run(t, compile(t, startProg(`fn down(n: int) -> int { return down(n + 1); }`, `print(down(0));`)), h)
	var tr *vm.Trap
	if !errors.As(err, &tr) || tr.Message != "stack overflow" {
		t.Fatalf("got %v, want a stack overflow", err)
	}
	if len(tr.Stack) != 101 || !strings.HasSuffix(tr.Stack[100].Func, "more frames)") || tr.Stack[0].Func != "down" {
		t.Errorf("stack of %d frames, last %+v", len(tr.Stack), tr.Stack[len(tr.Stack)-1])
	}
}

// TestSteps pins the step count: one per executed instruction.
func TestSteps(t *testing.T) {
	img := compile(t, startProg("", `var s = 0; for i in 0..10 { s += i; }`))
	h := &fakeHost{}
	m, err := run(t, img, h)
	if err != nil {
		t.Fatal(err)
	}
	// loadint s; loadint i; loadint hi; jle.int; 10 × (add.int, loop.range); ret.void
	if got := m.Steps(); got != 25 {
		t.Errorf("steps = %d, want 25", got)
	}
}

func TestBudget(t *testing.T) {
	src := `topic Go { n: int }

@budget(steps: 100)
locus Spin {
    var seen: int = 0;
    var big: [int] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100];
    on start { publish Go { n: 10 }; publish Go { n: 20 }; publish Go { n: 1000 }; }
    on Go(g) {
        var i = 0;
        while i < g.n { i += 1; }
        seen += 1;
        print(seen);
    }
}

main { spawn Spin; }
`
	want := `1
2
trap: budget exhausted
  at app.hl:10:25 in Spin.on Go
`
	if got := runSrc(t, src); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestBudgetIsPerHandlerRun checks that the count starts afresh with every
// delivery and that the exact budget is allowed.
func TestBudgetIsPerHandlerRun(t *testing.T) {
	body := `var s = 0; for i in 0..10 { s += i; }` // 25 steps (see TestSteps)
	for _, c := range []struct {
		budget string
		trap   bool
	}{{"25", false}, {"24", true}} {
		src := "@budget(steps: " + c.budget + ")\nlocus T {\n    on start {\n" + body + "\n    }\n}\nmain { spawn T; }\n"
		img := compile(t, src)
		m, err := vm.New(img, &fakeHost{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Init(0); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			err := m.Deliver(0, vm.HandlerStart, nil)
			var tr *vm.Trap
			if got := errors.As(err, &tr) && tr.Message == "budget exhausted"; got != c.trap {
				t.Fatalf("budget %s: err %v", c.budget, err)
			}
		}
	}
}

func TestPublish(t *testing.T) {
	src := `type Item { name: string, qty: int }
topic Order { id: int, items: [Item], note: string }
topic Done { id: int }

locus Shop {
    on start {
        let items = [Item { name: "a", qty: 2 }];
        publish Order { note: "hi", id: 7, items: items };
        push(items, Item { name: "b", qty: 1 });
        items[0].qty = 99;
        publish Done { id: 1 };
    }
    on Order(o) {
        print("order " + str(o.id) + " " + str(o.items));
        o.items[0].qty = 5;
        publish Done { id: o.id };
    }
    on Done(d) { print("done " + str(d.id)); }
}

locus Audit {
    on Order(o) { print("audit " + str(o.items[0].qty)); }
}

main { spawn Shop; spawn Audit; }
`
	h := &fakeHost{}
	img := compile(t, src)
	_, err := run(t, img, h)
	if err != nil {
		t.Fatal(err)
	}
	want := `order 7 [Item { name: "a", qty: 2 }]
audit 2
done 1
done 7
`
	if got := h.out.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// The first publish: uvarint(topic 0), then the canonical struct.
	var first []byte
	for _, c := range h.calls {
		if c.id == vm.PrimPublish {
			first = c.args
			break
		}
	}
	wantHex := "00" + // topic Order
		"0803" + // struct of 3 fields
		"010e" + // id: 7
		"0601" + "0802" + "040161" + "0104" + // items: [Item { name: "a", qty: 2 }]
		"04026869" // note: "hi"
	if got := hex.EncodeToString(first); got != wantHex {
		t.Errorf("publish args %s, want %s", got, wantHex)
	}
}

func TestPrint(t *testing.T) {
	h := &fakeHost{}
	if _, err := run(t, compile(t, startProg("", `print("héllo"); print(12); print([1.5]);`)), h); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range h.calls {
		if c.id != vm.PrimPrint {
			t.Fatalf("unexpected call %d", c.id)
		}
		got = append(got, hex.EncodeToString(c.args))
	}
	// A canonical string, without the newline.
	want := []string{"040668c3a96c6c6f", "04023132", "04055b312e355d"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("print args %v, want %v", got, want)
	}
}

func primID(t *testing.T, name string) uint16 {
	t.Helper()
	p, ok := stdlib.Lookup(name)
	if !ok {
		t.Fatalf("no primitive %s", name)
	}
	return p.ID
}

func encode(t *testing.T, v value.Value) []byte {
	t.Helper()
	b, err := value.Encode(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPrimitives(t *testing.T) {
	src := startProg("", `
        let t = std::time::now_ms();
        print(t);
        print(std::os::env("HOME", "none"));
        std::fs::write_text("out.txt", "data");
        let r = std::http::get("http://x");
        print(r.status); print(r.headers);
        print(std::os::args());
        std::io::println("direct");
        print(std::fs::read_text("missing.txt"));
        print("never");`)
	img := compile(t, src)
	ids := map[string]uint16{}
	for _, n := range []string{"std::time::now_ms", "std::os::env", "std::fs::write_text", "std::http::get", "std::os::args", "std::io::println", "std::fs::read_text"} {
		ids[n] = primID(t, n)
	}
	h := &fakeHost{}
	h.serve = func(id uint16, args []byte) ([]byte, error) {
		switch id {
		case ids["std::time::now_ms"]:
			return encode(t, value.Int(1234)), nil
		case ids["std::os::env"]:
			return encode(t, value.Str("/home/x")), nil
		case ids["std::fs::write_text"], ids["std::io::println"]:
			return nil, nil
		case ids["std::http::get"]:
			m := value.NewMap(value.KindString, 0)
			_ = m.AsMap().Set(value.Str("a"), value.Str("b"))
			resp := value.NewStruct(&value.Type{Kind: value.KindStruct, Name: "std::http::Response", Fields: []value.Field{
				{Name: "status", Type: value.IntType}, {Name: "body", Type: value.StringType},
				{Name: "headers", Type: value.MapOf(value.StringType, value.StringType)}}},
				[]value.Value{value.Int(200), value.Str("ok"), m})
			return encode(t, resp), nil
		case ids["std::os::args"]:
			return encode(t, value.NewList([]value.Value{value.Str("-v")})), nil
		case ids["std::fs::read_text"]:
			return nil, errors.New("read missing.txt: no such file")
		}
		return nil, errors.New("unexpected primitive")
	}
	_, err := run(t, img, h)
	got := report(h.out.String(), err)
	want := `1234
/home/x
200
{"a": "b"}
["-v"]
trap: read missing.txt: no such file
  at app.hl:13:15 in T.on start
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// Arguments are canonical tuples.
	wantArgs := map[uint16]string{
		ids["std::time::now_ms"]:   "00",
		ids["std::os::env"]:        "02" + "0404484f4d45" + "04046e6f6e65",
		ids["std::fs::write_text"]: "02" + "04076f75742e747874" + "040464617461",
		ids["std::io::println"]:    "01" + "0406646972656374",
	}
	for _, c := range h.calls {
		if w, ok := wantArgs[c.id]; ok {
			if got := hex.EncodeToString(c.args); got != w {
				t.Errorf("primitive %d args %s, want %s", c.id, got, w)
			}
			delete(wantArgs, c.id)
		}
	}
	if len(wantArgs) > 0 {
		t.Errorf("primitives not called: %v", wantArgs)
	}
}

func TestPrimitiveBadResult(t *testing.T) {
	img := compile(t, startProg("", `print(std::time::now_ms());`))
	h := &fakeHost{serve: func(id uint16, args []byte) ([]byte, error) { return encode(t, value.Str("x")), nil }}
	_, err := run(t, img, h)
	var tr *vm.Trap
	if !errors.As(err, &tr) || !strings.HasPrefix(tr.Message, "bad result from std::time::now_ms: ") {
		t.Errorf("got %v", err)
	}
}

func TestStateAndInstances(t *testing.T) {
	src := `topic Add { n: int }

locus Acc(name: string, first: int) {
    var total: int = first * 2;
    var log: [string] = [name];
    on Add(a) {
        total += a.n;
        push(log, name + "+" + str(a.n));
    }
}

locus Src {
    on start { publish Add { n: 5 }; }
}

main {
    spawn Acc("x", 1) as a;
    spawn Acc("y", 10) as b;
    spawn Src;
}
`
	img := compile(t, src)
	h := &fakeHost{}
	m, err := run(t, img, h)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`[7, ["x", "x+5"]]`, `[25, ["y", "y+5"]]`} {
		st, err := m.State(i)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := value.DecodeTuple(st, m.StateTypes(i))
		if err != nil {
			t.Fatal(err)
		}
		if got := value.Format(value.NewList(vs)); got != want {
			t.Errorf("state of %d: %s, want %s", i, got, want)
		}
	}
	st, err := m.State(2)
	if err != nil || !bytes.Equal(st, []byte{0}) {
		t.Errorf("state of Src: %x %v, want 00", st, err)
	}
	// The payload type decodes what was published.
	var payload []byte
	for _, c := range h.calls {
		if c.id == vm.PrimPublish {
			_, n := binary.Uvarint(c.args)
			payload = c.args[n:]
		}
	}
	v, err := value.Decode(payload, m.PayloadType(0))
	if err != nil || value.Format(v) != "Add { n: 5 }" {
		t.Errorf("payload %v %v", v, err)
	}
}

func TestDeliverErrors(t *testing.T) {
	img := compile(t, `topic A { n: int }
topic B { s: string }
locus L { on A(a) { print(a.n); } }
main { spawn L; }
`)
	m, err := vm.New(img, &fakeHost{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Deliver(0, 0, []byte{8, 1, 1, 2}); err == nil {
		t.Error("delivered to an instance that is not initialised")
	}
	if err := m.Init(0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		inst, handler int
		payload       []byte
	}{
		{1, 0, nil},                   // no such instance
		{0, vm.HandlerStart, nil},     // no on start
		{0, 1, []byte{8, 1, 4, 0}},    // does not handle B
		{0, 5, nil},                   // no such topic
		{0, 0, []byte{8, 1, 4, 0}},    // payload of the wrong type
		{0, 0, []byte{8, 1, 1, 2, 0}}, // trailing bytes
	} {
		err := m.Deliver(c.inst, c.handler, c.payload)
		var tr *vm.Trap
		if err == nil || errors.As(err, &tr) {
			t.Errorf("Deliver(%d, %d, %x) = %v, want a non-trap error", c.inst, c.handler, c.payload, err)
		}
	}
	if err := m.Deliver(0, 0, []byte{8, 1, 1, 2}); err != nil {
		t.Errorf("good delivery: %v", err)
	}
	if _, err := m.State(7); err == nil {
		t.Error("State of a missing instance")
	}
}

// reentrantHost delivers into the machine from inside a primitive call.
type reentrantHost struct {
	m   *vm.Machine
	err error
}

func (h *reentrantHost) Prim(id uint16, args []byte) ([]byte, error) {
	h.err = h.m.Deliver(0, vm.HandlerStart, nil)
	return nil, nil
}

func TestNoReentry(t *testing.T) {
	img := compile(t, startProg("", `print(1);`))
	h := &reentrantHost{}
	m, err := vm.New(img, h)
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	if err := m.Init(0); err != nil {
		t.Fatal(err)
	}
	if err := m.Deliver(0, vm.HandlerStart, nil); err != nil {
		t.Fatal(err)
	}
	if h.err == nil {
		t.Error("a nested Deliver ran")
	}
}

// TestGatewayIDs keeps the gateway ids equal to the standard library's.
func TestGatewayIDs(t *testing.T) {
	if vm.PrimPublish != stdlib.PublishID {
		t.Errorf("PrimPublish %d, stdlib.PublishID %d", vm.PrimPublish, stdlib.PublishID)
	}
	if p, ok := stdlib.Lookup("print"); !ok || p.ID != vm.PrimPrint {
		t.Errorf("PrimPrint %d, stdlib print %+v", vm.PrimPrint, p)
	}
}

// TestGatewayPublishAfterIsNoPrimitive: the timer's gateway id is no
// primitive's, now or as the table grows (it sits at the top of the
// 16-bit range).
func TestGatewayPublishAfterIsNoPrimitive(t *testing.T) {
	if p, ok := stdlib.ByID(vm.PrimPublishAfter); ok {
		t.Errorf("PrimPublishAfter %d is primitive %s", vm.PrimPublishAfter, p.Name)
	}
	if vm.PrimPublishAfter != 0xFFFF {
		t.Errorf("PrimPublishAfter %#x", vm.PrimPublishAfter)
	}
}

// TestPublishAfterGateway pins the gateway encoding of timers: a positive
// delay sends PrimPublishAfter with uvarint(topic), uvarint(ms) and the
// payload; 0 sends a plain PrimPublish; a negative delay traps with kind
// arg and sends nothing.
func TestPublishAfterGateway(t *testing.T) {
	decls := "topic A { n: int }\ntopic B { n: int }"
	h := &fakeHost{}
	if _, err := run(t, compile(t, startProg(decls, `publish B { n: 7 } after 300; publish A { n: 1 } after 0;`)), h); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range h.calls {
		got = append(got, fmt.Sprintf("%d:%x", c.id, c.args))
	}
	// 0xFFFF: topic 1, 300 ms (ac02), struct of 1 field (0801), int 7 (010e);
	// then 1 (PrimPublish): topic 0, the struct with int 1 (0102).
	if len(got) != 2 || got[0] != "65535:01ac020801010e" || got[1] != "1:0008010102" {
		t.Errorf("calls %v, want [65535:01ac020801010e 1:0008010102]", got)
	}

	h = &fakeHost{}
	_, err := run(t, compile(t, startProg(decls, `let d = 0 - 2; publish A { n: 1 } after d;`)), h)
	var tr *vm.Trap
	if !errors.As(err, &tr) || tr.Kind != vm.KindArg || tr.Message != "negative delay -2 ms in publish after" {
		t.Fatalf("err %v, want a trap of kind arg", err)
	}
	if len(h.calls) != 0 {
		t.Errorf("calls %v after a negative delay", h.calls)
	}
}

// TestCallsDoNotAllocate pins that Hale calls, int arithmetic and loops
// allocate nothing once the machine's stacks have grown.
func TestCallsDoNotAllocate(t *testing.T) {
	img := compile(t, startProg(`fn fib(n: int) -> int { if n < 2 { return n; } return fib(n - 1) + fib(n - 2); }`,
		`var s = 0; for i in 0..100 { s += fib(10); } assert(s == 5500, "sum");`))
	m, err := vm.New(img, &fakeHost{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Init(0); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(10, func() {
		if err := m.Deliver(0, vm.HandlerStart, nil); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run, want 0", allocs)
	}
}

// TestPayloadReuse runs handlers that keep their payload, or a part of
// it, beyond the run, next to one that only reads its fields: the
// machine reuses the payload struct of the second kind only, so each
// kept payload must stay as it was delivered.
func TestPayloadReuse(t *testing.T) {
	got := runSrc(t, `
topic Tick { n: int, tag: string, items: [int] }
locus Keeper {
    var kept: [Tick] = [];
    var lists: [[int]] = [];
    var sum: int = 0;
    on Tick(t) {
        push(kept, t);
        push(lists, t.items);
        sum += t.n;
        if t.n == 3 {
            for k in kept { print(str(k.n) + k.tag + str(len(k.items))); }
            for l in lists { print(len(l)); }
        }
    }
}
locus Reader {
    var items: [[int]] = [];
    var tags: string = "";
    on Tick(t) {
        push(items, t.items);
        tags = tags + t.tag;
        if t.n == 3 { print(tags); for l in items { print(len(l)); } }
    }
}
locus Boss {
    on start {
        publish Tick { n: 1, tag: "a", items: [1] };
        publish Tick { n: 2, tag: "b", items: [1, 2] };
        publish Tick { n: 3, tag: "c", items: [1, 2, 3] };
    }
}
main { spawn Boss; spawn Keeper; spawn Reader; }
`)
	want := "1a1\n2b2\n3c3\n1\n2\n3\nabc\n1\n2\n3\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestPayloadLocal checks which handlers get a reused payload.
func TestPayloadLocal(t *testing.T) {
	img := compile(t, `
topic Tick { n: int, items: [int] }
fn count(t: Tick) -> int { return t.n; }
locus A { var s: int = 0; on Tick(t) { s += t.n + len(t.items); } }
locus B { var last: [Tick] = []; on Tick(t) { push(last, t); } }
locus C { var s: int = 0; on Tick(t) { s += count(t); } }
locus D { on Tick(t) { publish Tick { n: t.n + 1, items: t.items }; } }
main { spawn A; spawn B; spawn C; spawn D; }
`)
	want := map[string]bool{"A.on Tick": true, "B.on Tick": false, "C.on Tick": false, "D.on Tick": true}
	for i := range img.Funcs {
		f := &img.Funcs[i]
		if w, ok := want[f.Name]; ok {
			if got := vm.PayloadLocal(f.Code); got != w {
				t.Errorf("%s: payload local %v, want %v", f.Name, got, w)
			}
			delete(want, f.Name)
		}
	}
	if len(want) != 0 {
		t.Fatalf("handlers not found: %v", want)
	}
}

// TestGuards runs guards inside the publishing handler: the guard bits
// reach the host with the payload, a guard's trap is the publisher's,
// with the guard's frame on top, and its steps count toward the budget.
func TestGuards(t *testing.T) {
	src := `topic Job { n: int }
fn odd(n: int) -> bool { return n % 2 == 1; }
locus W(want: int) {
    on Job(j) if odd(j.n) == (want == 1) { print(str(want) + " gets " + str(j.n)); }
}
locus B { on start { for i in 0..4 { publish Job { n: i }; } } }
main { spawn W(0) as even; spawn W(1) as odd; spawn B; }
`
	want := "0 gets 0\n1 gets 1\n0 gets 2\n1 gets 3\n"
	if got := runSrc(t, src); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	trap := `topic Job { d: int }
locus W(n: int) { on Job(j) if n / j.d > 0 { print("no"); } }
locus B { on start { publish Job { d: 0 }; } }
main { spawn W(3); spawn B; }
`
	want = "trap: division by zero\n  at app.hl:2:34 in W.on Job guard\n  at app.hl:3:22 in B.on start\n"
	if got := runSrc(t, trap); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestGuardsSeeTheirOwnPayload: a publish decodes a payload of scalar
// fields once for all its guards, which only read it; a payload with a
// list field is decoded for each guard, so that a guard that changes the
// list (through a call) does not change what the next guard sees.
func TestGuardsSeeTheirOwnPayload(t *testing.T) {
	src := `topic Job { n: int, tag: string, xs: [int] }
fn grow(xs: [int]) -> int { push(xs, 0); return len(xs); }
locus W(id: int) {
    on Job(j) if grow(j.xs) == 2 && j.n > id { print(str(id) + " gets " + j.tag + " " + str(len(j.xs))); }
}
topic Tick { n: int, tag: string }
locus V(id: int) {
    on Tick(t) if t.n > id && t.tag == "go" { print(str(id) + " ticks " + str(t.n)); }
}
locus B { on start { publish Job { n: 2, tag: "x", xs: [7] }; publish Tick { n: 2, tag: "go" }; } }
main { spawn W(0) as w0; spawn W(1) as w1; spawn W(2) as w2; spawn V(0) as v0; spawn V(1) as v1; spawn V(2) as v2; spawn B; }
`
	want := "0 gets x 1\n1 gets x 1\n0 ticks 2\n1 ticks 2\n"
	if got := runSrc(t, src); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
