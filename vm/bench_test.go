package vm_test

import (
	"encoding/binary"
	"testing"

	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

type nopHost struct{}

func (nopHost) Prim(id uint16, args []byte) ([]byte, error) { return nil, nil }

// benchStart measures one delivery of the start handler of the program's
// only instance.
func benchStart(b *testing.B, src string) {
	img := compile(b, src)
	m, err := vm.New(img, nopHost{})
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Init(0); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := cpuTime()
	for range b.N {
		if err := m.Deliver(0, vm.HandlerStart, nil); err != nil {
			b.Fatal(err)
		}
	}
	// The machines this runs on are shared: CPU time is steadier than
	// wall time.
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(m.Steps()), "steps/op")
}

func BenchmarkFib30(b *testing.B) {
	benchStart(b, startProg(`
fn fib(n: int) -> int {
    if n < 2 { return n; }
    return fib(n - 1) + fib(n - 2);
}`, `        let r = fib(30); assert(r == 832040, "fib");`))
}

func BenchmarkLoop1e6(b *testing.B) {
	benchStart(b, startProg("", `
        var s = 0;
        for i in 0..1000000 { s += i; }
        assert(s == 499999500000, "sum");`))
}

func BenchmarkWhileLoop1e6(b *testing.B) {
	benchStart(b, startProg("", `
        var s = 0;
        var i = 0;
        while i < 1000000 { s = s + i; i = i + 1; }
        assert(s == 499999500000, "sum");`))
}

// BenchmarkTrees builds and walks a perfect binary tree of 32,767 enum
// nodes (binary-trees' make_tree(14) and check): per node a call, a
// test and a value made.
func BenchmarkTrees(b *testing.B) {
	benchStart(b, startProg(`
enum Tree { Empty, Node(Tree, Tree) }
fn make_tree(depth: int) -> Tree {
    if depth == 0 { return Tree::Node(Tree::Empty, Tree::Empty); }
    return Tree::Node(make_tree(depth - 1), make_tree(depth - 1));
}
fn check(t: Tree) -> int {
    match t {
        Tree::Empty => { return 0; },
        Tree::Node(l, r) => { return 1 + check(l) + check(r); },
    }
}`, `        assert(check(make_tree(14)) == 32767, "nodes");`))
}

// BenchmarkCalls makes a million calls of a function that returns its
// argument.
func BenchmarkCalls(b *testing.B) {
	benchStart(b, startProg(`
fn id(x: int) -> int { return x; }`, `
        var s = 0;
        for i in 0..1000000 { s = id(i); }
        assert(s == 999999, "last");`))
}

// BenchmarkFields reads and writes float fields of structs in a list,
// as n-body's advance does.
func BenchmarkFields(b *testing.B) {
	benchStart(b, startProg(`
type P { x: float, v: float, m: float }`, `
        let ps = [P { x: 0.0, v: 1.0, m: 2.0 }, P { x: 1.0, v: 0.5, m: 1.0 }];
        for i in 0..200000 {
            for p in ps { p.x = p.x + p.v * 0.01; p.v = p.v - p.x * p.m * 0.001; }
        }
        assert(ps[0].x != 0.0, "moved");`))
}

func BenchmarkStrings(b *testing.B) {
	benchStart(b, startProg("", `
        var parts: [string] = [];
        for i in 0..1000 { push(parts, "item" + str(i)); }
        let joined = join(parts, ",");
        let back = split(joined, ",");
        var s = "";
        for p in back { s = s + p; }
        assert(len(back) == 1000, "split");`))
}

func BenchmarkMaps(b *testing.B) {
	benchStart(b, startProg("", `
        var m: {int: int} = {};
        for i in 0..100000 { m[i] = i * 2; }
        var s = 0;
        for i in 0..100000 { s += m[i]; }
        assert(s == 9999900000, "sum");`))
}

// echoHost keeps the last published payload, in a buffer it reuses.
type echoHost struct{ last []byte }

func (h *echoHost) Prim(id uint16, args []byte) ([]byte, error) {
	if id == vm.PrimPublish {
		_, n := binary.Uvarint(args)
		h.last = append(h.last[:0], args[n:]...)
	}
	return nil, nil
}

// BenchmarkDeliver measures one delivery of msgs.hl's handler, the
// main-bus benchmark's: the payload decoded, the state updated, the next
// message encoded and published. allocs/op is what every main-bus
// message allocates in the interpreter.
func BenchmarkDeliver(b *testing.B) {
	img := compile(b, `
topic Tick { n: int, note: string }
locus Counter {
    var count: int = 0;
    on Tick(t) {
        count += 1;
        if t.n < 1000000000 { publish Tick { n: t.n + 1, note: t.note }; }
        if count == 0 { print("never"); }
    }
}
main { spawn Counter; }
`)
	h := &echoHost{}
	m, err := vm.New(img, h)
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Init(0); err != nil {
		b.Fatal(err)
	}
	first, err := value.EncodeTuple(nil, []value.Value{value.Int(1), value.Str("tick")})
	if err != nil {
		b.Fatal(err)
	}
	payload := append([]byte{byte(value.KindStruct)}, first...)
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Deliver(0, 0, payload); err != nil {
			b.Fatal(err)
		}
		payload = append(payload[:0], h.last...)
	}
}

// BenchmarkJSONParse parses a 1 MB chat-completions-like reply (the text
// of cmd/hale/cli/testdata/bench/json_reply.hl, built once) and reads a
// few fields, per delivery.
func BenchmarkJSONParse(b *testing.B) {
	benchStart(b, `
fn reply() -> string {
    var calls: [string] = [];
    for i in 0..3600 {
        let n = str(i);
        push(calls, "{\"id\": \"call_" + n + "_a8f3c2d9e1b7\", \"type\": \"function\", \"function\": {\"name\": \"lookup_inventory\", " +
            "\"arguments\": \"{\\\"query\\\": \\\"item " + n + " in stock at the central warehouse\\\", \\\"limit\\\": " + n + ", \\\"exact\\\": true}\"}, " +
            "\"score\": " + str(float(i) / 7.0) + ", \"tags\": [\"inventory\", \"read-only\", null, false]}");
    }
    return "{\"id\": \"chatcmpl-9f8e7d6c5b4a\", \"choices\": [{\"index\": 0, \"message\": {\"role\": \"assistant\", \"tool_calls\": [" +
        join(calls, ", ") + "]}}], \"usage\": {\"total_tokens\": 91022}}";
}
locus T {
    var text = reply();
    on start {
        let r = unwrap(std::json::parse(text));
        let choice = unwrap(std::json::at(unwrap(std::json::get(r, "choices")), 0));
        let tools = unwrap(std::json::as_arr(unwrap(std::json::get(unwrap(std::json::get(choice, "message")), "tool_calls"))));
        assert(len(tools) == 3600, "tool calls");
    }
}
main { spawn T; }
`)
}

func BenchmarkMapCount(b *testing.B) {
	benchStart(b, startProg("", `
        var m: {int: int} = {};
        for i in 0..100000 {
            let k = (i * 7919) % 1000;
            if has(m, k) { m[k] += 1; } else { m[k] = 1; }
        }
        assert(len(m) == 1000, "count");`))
}
