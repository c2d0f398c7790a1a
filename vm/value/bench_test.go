package value

import "testing"

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
