package value

import (
	"strconv"
	"testing"
)

func BenchmarkEncodeStruct(b *testing.B) {
	v := NewStruct(orderT, []Value{Int(1234), Int(-99), Str("coffee beans")})
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = Encode(buf[:0], v)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkDecodeStruct(b *testing.B) {
	data, _ := Encode(nil, NewStruct(orderT, []Value{Int(1234), Int(-99), Str("coffee beans")}))
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Decode(data, orderT); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDeepCopyStruct(b *testing.B) {
	v := NewStruct(orderT, []Value{Int(1234), Int(-99), Str("coffee beans")})
	b.ReportAllocs()
	for b.Loop() {
		_, _ = DeepCopy(v)
	}
}

func BenchmarkEncodeNode(b *testing.B) {
	v := node("root", node("a", node("a1"), node("a2")), node("b"))
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = Encode(buf[:0], v)
	}
}

func BenchmarkDecodeNode(b *testing.B) {
	data, _ := Encode(nil, node("root", node("a", node("a1"), node("a2")), node("b")))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data, nodeT); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMapSetGet(b *testing.B) {
	for _, n := range []int{4, 64} {
		b.Run(itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m := NewMap(KindInt, 0).AsMap()
				for i := range n {
					_ = m.Set(Int(int64(i)), Int(int64(i)))
				}
				for i := range n {
					m.Get(Int(int64(i)))
				}
			}
		})
	}
}

func BenchmarkFormatFloat(b *testing.B) {
	buf := make([]byte, 0, 32)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendFloat(buf[:0], 1234.5678)
	}
}

func BenchmarkAppendJSONStruct(b *testing.B) {
	v := NewStruct(orderT, []Value{Int(1234), Int(-99), Str("coffee beans")})
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendJSON(buf[:0], v)
	}
}

func itoa(n int) string { return string(AppendFormat(nil, Int(int64(n)))) }

// replyText is a chat-completions-like reply of about 1 MB (as in
// cmd/hale/cli/testdata/bench/json_reply.hl).
func replyText() string {
	var b []byte
	b = append(b, `{"id": "chatcmpl-9f8e7d6c5b4a", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [`...)
	for i := 0; i < 3600; i++ {
		if i > 0 {
			b = append(b, ", "...)
		}
		n := strconv.Itoa(i)
		b = append(b, `{"id": "call_`+n+`_a8f3c2d9e1b7", "type": "function", "function": {"name": "lookup_inventory", "arguments": "{\"query\": \"item `+n+
			` in stock at the central warehouse\", \"limit\": `+n+`, \"exact\": true}"}, "score": `+strconv.FormatFloat(float64(i)/7, 'g', -1, 64)+
			`, "tags": ["inventory", "read-only", null, false]}`...)
	}
	b = append(b, `]}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 812, "completion_tokens": 90210, "total_tokens": 91022}}`...)
	return string(b)
}

func BenchmarkParseJSONReply(b *testing.B) {
	s := replyText()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if _, _, err := ParseJSON(s, jsonT); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSizeTree measures a perfect tree of 2^16 - 1 enum nodes: the
// memory limit's measure of binary-trees' long-lived tree.
func BenchmarkSizeTree(b *testing.B) {
	tr := &Type{Kind: KindEnum, Name: "T"}
	tr.Variants = []Variant{{Name: "E"}, {Name: "N", Fields: []*Type{tr, tr}}}
	var make func(d int) Value
	make = func(d int) Value {
		if d == 0 {
			return NewEnum(tr, 0, nil)
		}
		return NewEnum(tr, 1, []Value{make(d - 1), make(d - 1)})
	}
	t := make(16)
	var s Sizer
	b.ResetTimer()
	for range b.N {
		s.Begin(1 << 40)
		s.Add([]Value{t})
	}
	if s.Total() != (1<<16-1)*(SizeObjectHeader+2*SizeSlot) {
		b.Fatalf("total %d", s.Total())
	}
}

// BenchmarkSizeInts measures a list of 100,000 ints.
func BenchmarkSizeInts(b *testing.B) {
	xs := make([]Value, 100000)
	for i := range xs {
		xs[i] = Int(int64(i))
	}
	l := NewList(xs)
	var s Sizer
	b.ResetTimer()
	for range b.N {
		s.Begin(1 << 40)
		s.Add([]Value{l})
	}
	if s.Total() != SizeListHeader+100000*SizeSlot {
		b.Fatalf("total %d", s.Total())
	}
}

// BenchmarkSnapshotState measures what a snapshot of a locus's state
// costs with values as Go objects: the state's canonical encoding
// (snapshot), its decoding into fresh values (restore), and, for
// comparison, copying that many bytes (what a snapshot of a heap kept
// as a byte range of linear memory would cost at best). The state: a
// list of 10,000 orders and a map of 10,000 counters (about 0.4 MB
// encoded). design.md §7 has the figures.
func BenchmarkSnapshotState(b *testing.B) {
	const n = 10000
	orders := make([]Value, n)
	counts := newMap(KindString, n)
	for i := range n {
		orders[i] = NewStruct(orderT, []Value{Int(int64(i)), Int(int64(i * 7)), Str("order " + strconv.Itoa(i))})
		if err := counts.Set(Str("k"+strconv.Itoa(i)), Int(int64(i))); err != nil {
			b.Fatal(err)
		}
	}
	state := []Value{NewList(orders), counts.value()}
	types := []*Type{{Kind: KindList, Elem: orderT}, {Kind: KindMap, Key: StringType, Elem: IntType}}
	data, err := EncodeTuple(nil, state)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		buf := make([]byte, 0, len(data))
		for b.Loop() {
			buf, _ = EncodeTuple(buf[:0], state)
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := DecodeTuple(data, types); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		dst := make([]byte, len(data))
		for b.Loop() {
			copy(dst, data)
		}
	})
}

// BenchmarkMapGet looks up every key of a map of 1,000, int or string
// keys: the index alone, without building it (ns/op is per lookup).
func BenchmarkMapGet(b *testing.B) {
	for _, kind := range []Kind{KindInt, KindString} {
		b.Run(kind.String(), func(b *testing.B) {
			m := NewMap(kind, 0).AsMap()
			keys := make([]Value, 1000)
			for i := range keys {
				keys[i] = Int(int64(i) * 7919)
				if kind == KindString {
					keys[i] = Str("key" + itoa(i))
				}
				_ = m.Set(keys[i], Int(int64(i)))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if !m.Has(keys[i%len(keys)]) {
					b.Fatal("missing")
				}
			}
		})
	}
}
