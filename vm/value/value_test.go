package value

import (
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// Test types, shared by the tests of this package.
var (
	pointT   = &Type{Kind: KindStruct, Name: "Point", Fields: []Field{{"x", IntType}, {"y", IntType}}}
	emptyT   = &Type{Kind: KindStruct, Name: "Empty"}
	orderT   = &Type{Kind: KindStruct, Name: "Order", Fields: []Field{{"id", IntType}, {"amount", IntType}, {"note", StringType}}}
	verdictT = &Type{Kind: KindEnum, Name: "Verdict", Variants: []Variant{{Name: "Accept"}, {Name: "Reject", Fields: []*Type{StringType}}}}
	shapeT   = &Type{Kind: KindEnum, Name: "Shape", Variants: []Variant{
		{Name: "Dot"},
		{Name: "Rect", Fields: []*Type{FloatType, FloatType}},
		{Name: "Tagged", Fields: []*Type{StringType, BytesType, BoolType}},
	}}
	nodeT = func() *Type {
		t := &Type{Kind: KindStruct, Name: "Node"}
		t.Fields = []Field{{"name", StringType}, {"kids", ListOf(t)}}
		return t
	}()
	// Expr is an enum that refers to itself through a struct and a map.
	exprT, pairT = func() (*Type, *Type) {
		e := &Type{Kind: KindEnum, Name: "Expr"}
		p := &Type{Kind: KindStruct, Name: "Pair", Fields: []Field{{"l", e}, {"r", e}}}
		e.Variants = []Variant{
			{Name: "Num", Fields: []*Type{IntType}},
			{Name: "Add", Fields: []*Type{p}},
			{Name: "Env", Fields: []*Type{MapOf(StringType, e)}},
			{Name: "Nil"},
		}
		return e, p
	}()
	strIntT = MapOf(StringType, IntType)
	intStrT = MapOf(IntType, StringType)
	boolFT  = MapOf(BoolType, FloatType)
)

func list(vs ...Value) Value { return NewList(vs) }

func strMap(kv ...any) Value {
	m := NewMap(KindString, 0)
	for i := 0; i < len(kv); i += 2 {
		must(m.AsMap().Set(Str(kv[i].(string)), kv[i+1].(Value)))
	}
	return m
}

func intMap(kv ...Value) Value {
	m := NewMap(kv[0].Kind(), 0)
	for i := 0; i < len(kv); i += 2 {
		must(m.AsMap().Set(kv[i], kv[i+1]))
	}
	return m
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func node(name string, kids ...Value) Value {
	return NewStruct(nodeT, []Value{Str(name), list(kids...)})
}

func TestValueSize(t *testing.T) {
	if got := unsafe.Sizeof(Value{}); got != 3*unsafe.Sizeof(uintptr(0)) {
		t.Errorf("Value is %d bytes, want three words", got)
	}
}

func TestScalars(t *testing.T) {
	if v := Int(-5); v.Kind() != KindInt || v.AsInt() != -5 {
		t.Errorf("Int: %v", v)
	}
	if v := Float(2.5); v.Kind() != KindFloat || v.AsFloat() != 2.5 {
		t.Errorf("Float: %v", v)
	}
	if v := Bool(true); v.Kind() != KindBool || !v.AsBool() {
		t.Errorf("Bool: %v", v)
	}
	if v := Str("héllo"); v.Kind() != KindString || v.AsStr() != "héllo" {
		t.Errorf("Str: %v", v)
	}
	b := []byte{1, 2}
	v := BytesVal(b)
	b[0] = 9 // BytesVal copies
	if v.Kind() != KindBytes || v.AsStr() != "\x01\x02" || string(v.AsBytes()) != "\x01\x02" {
		t.Errorf("BytesVal: %v", v)
	}
	if !(Value{}).IsVoid() || Int(0).IsVoid() {
		t.Error("IsVoid")
	}
	for _, k := range []Kind{KindVoid, KindEnum, numKinds} {
		if k.String() == "" {
			t.Error("empty kind name")
		}
	}
}

func TestWrongAccessorPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"AsStr":     func() { Int(1).AsStr() },
		"AsList":    func() { Int(1).AsList() },
		"AsMap":     func() { list().AsMap() },
		"AsStruct":  func() { list().AsStruct() },
		"EnumType":  func() { list().EnumType() },
		"Variant":   func() { Int(3).Variant() },
		"Payload":   func() { Int(3).Payload() },
		"NewEnum":   func() { NewEnum(verdictT, 2, nil) },
		"NewStruct": func() { NewStruct(pointT, []Value{Int(1)}) },
		"NewMap":    func() { NewMap(KindFloat, 0) },
		"Map.Set":   func() { NewMap(KindInt, 0).AsMap().Set(Str("a"), Int(1)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

func TestList(t *testing.T) {
	for n := range 12 { // every allocation size class
		vs := make([]Value, n)
		for i := range vs {
			vs[i] = Int(int64(i))
		}
		v := NewList(vs)
		l := v.AsList()
		if l.Len() != n {
			t.Fatalf("len %d, want %d", l.Len(), n)
		}
		must(l.Push(Int(100)))
		must(l.Insert(0, Int(-1)))
		if l.Len() != n+2 || l.At(0).AsInt() != -1 || l.At(n+1).AsInt() != 100 {
			t.Fatalf("n=%d after push/insert: %v", n, v)
		}
		if n > 0 && l.At(1).AsInt() != 0 {
			t.Fatalf("n=%d insert shifted wrongly: %v", n, v)
		}
		x, err := l.Remove(0)
		if err != nil || x.AsInt() != -1 {
			t.Fatalf("remove: %v %v", x, err)
		}
		x, err = l.Pop()
		if err != nil || x.AsInt() != 100 || l.Len() != n {
			t.Fatalf("pop: %v %v", x, err)
		}
		if eq, _ := Equal(v, NewList(vs)); !eq {
			t.Fatalf("n=%d: %v != %v", n, v, NewList(vs))
		}
	}
	l := NewListLen(2).AsList()
	if l.Len() != 2 || !l.At(1).IsVoid() {
		t.Error("NewListLen")
	}
	if _, err := l.Get(2); err != ErrIndex {
		t.Errorf("Get(2): %v", err)
	}
	if _, err := l.Get(-1); err != ErrIndex {
		t.Errorf("Get(-1): %v", err)
	}
	if err := l.Set(5, Int(1)); err != ErrIndex {
		t.Errorf("Set(5): %v", err)
	}
	if err := l.Insert(3, Int(1)); err != ErrIndex {
		t.Errorf("Insert(3): %v", err)
	}
	if err := l.Insert(2, Int(7)); err != nil || l.At(2).AsInt() != 7 {
		t.Errorf("Insert at end: %v", err)
	}
	if _, err := l.Remove(3); err != ErrIndex {
		t.Errorf("Remove(3): %v", err)
	}
	if _, err := NewList(nil).AsList().Pop(); err != ErrEmpty {
		t.Errorf("Pop of empty: %v", err)
	}
	if c := Concat(list(Int(1)).AsList(), list(Int(2), Int(3)).AsList()); Format(c) != "[1, 2, 3]" {
		t.Errorf("Concat: %v", c)
	}
}

func TestListAliasing(t *testing.T) {
	a := list(Int(1))
	b := a // same list
	must(b.AsList().Push(Int(2)))
	if a.AsList().Len() != 2 {
		t.Error("copying a Value must alias the list")
	}
	c, err := DeepCopy(a)
	if err != nil {
		t.Fatal(err)
	}
	must(c.AsList().Push(Int(3)))
	if a.AsList().Len() != 2 || c.AsList().Len() != 3 {
		t.Error("DeepCopy must not alias")
	}
}

func TestIterationGuard(t *testing.T) {
	l := list(Int(1), Int(2)).AsList()
	l.BeginIter()
	l.BeginIter() // nested loops over one list
	for name, err := range map[string]error{
		"Push":   l.Push(Int(1)),
		"Set":    l.Set(0, Int(1)),
		"Insert": l.Insert(0, Int(1)),
		"Pop":    second(l.Pop()),
		"Remove": second(l.Remove(0)),
	} {
		if err != ErrIterating {
			t.Errorf("list %s while iterating: %v", name, err)
		}
	}
	l.EndIter()
	if !l.Iterating() {
		t.Error("still one loop")
	}
	l.EndIter()
	if l.Iterating() || l.Push(Int(3)) != nil {
		t.Error("after the loops the list is free")
	}

	m := strMap("a", Int(1)).AsMap()
	m.BeginIter()
	if m.Set(Str("b"), Int(2)) != ErrIterating || m.Set(Str("a"), Int(2)) != ErrIterating ||
		m.Delete(Str("a")) != ErrIterating || m.Delete(Str("zz")) != ErrIterating {
		t.Error("map mutation while iterating must fail")
	}
	m.EndIter()
	if m.Iterating() || m.Set(Str("b"), Int(2)) != nil {
		t.Error("after the loop the map is free")
	}
}

func second(_ Value, err error) error { return err }

func mapKeys(m *Map) string {
	var b strings.Builder
	for i := range m.Len() {
		b.WriteString(Format(m.KeyAt(i)))
		b.WriteByte(' ')
	}
	return b.String()
}

func TestMapOrder(t *testing.T) {
	m := NewMap(KindString, 0).AsMap()
	for _, k := range []string{"b", "a", "c"} {
		must(m.Set(Str(k), Str(k)))
	}
	must(m.Set(Str("a"), Int(2))) // keeps its place
	if got := mapKeys(m); got != "b a c " {
		t.Errorf("keys %q", got)
	}
	must(m.Delete(Str("b")))
	must(m.Delete(Str("nope")))
	must(m.Set(Str("b"), Int(3))) // goes last
	if got := mapKeys(m); got != "a c b " {
		t.Errorf("keys %q", got)
	}
	if v, ok := m.Get(Str("a")); !ok || v.AsInt() != 2 {
		t.Errorf("Get a: %v %v", v, ok)
	}
	if _, ok := m.Get(Str("z")); ok || m.Has(Str("z")) || !m.Has(Str("c")) {
		t.Error("Has")
	}
	if got := Format(m.Keys()) + Format(m.Values()); got != `["a", "c", "b"]`+`[2, "c", 3]` {
		t.Errorf("Keys, Values: %s", got)
	}
	// an empty string key must not match a tombstone
	must(m.Delete(Str("c")))
	if m.Has(Str("")) {
		t.Error("tombstone matched the empty string")
	}
	if m.Has(Value{}) || m.Has(Int(0)) {
		t.Error("a key of another kind matched")
	}
}

// TestMapModel drives small and large maps with a deterministic sequence of
// operations and compares them with a simple model.
func TestMapModel(t *testing.T) {
	for _, kind := range []Kind{KindInt, KindString, KindBool} {
		for _, size := range []int{3, 8, 9, 40, 300} {
			m := NewMap(kind, 0).AsMap()
			var model []int // keys in order
			vals := map[int]int{}
			key := func(i int) Value {
				switch kind {
				case KindString:
					return Str(strconv.Itoa(i))
				case KindBool:
					return Bool(i%2 == 1)
				}
				return Int(int64(i))
			}
			span := size
			if kind == KindBool {
				span = 2
			}
			x := uint32(size)
			for step := range 4000 {
				x = x*1664525 + 1013904223
				k := int(x>>8) % span
				if x>>30 == 0 { // delete a quarter of the time
					must(m.Delete(key(k)))
					for i, mk := range model {
						if mk == k {
							model = append(model[:i], model[i+1:]...)
							break
						}
					}
					delete(vals, k)
				} else {
					must(m.Set(key(k), Int(int64(step))))
					if _, ok := vals[k]; !ok {
						model = append(model, k)
					}
					vals[k] = step
				}
				if step%97 == 0 || step == 3999 {
					if m.Len() != len(model) {
						t.Fatalf("%v/%d step %d: len %d, want %d", kind, size, step, m.Len(), len(model))
					}
					for i, k := range model {
						if eq, _ := Equal(m.KeyAt(i), key(k)); !eq {
							t.Fatalf("%v/%d step %d: key %d is %v, want %v", kind, size, step, i, m.KeyAt(i), key(k))
						}
						if m.ValueAt(i).AsInt() != int64(vals[k]) {
							t.Fatalf("%v/%d step %d: value %d", kind, size, step, i)
						}
						if v, ok := m.Get(key(k)); !ok || v.AsInt() != int64(vals[k]) {
							t.Fatalf("%v/%d step %d: Get(%v)", kind, size, step, key(k))
						}
					}
					for k := range span {
						if _, ok := vals[k]; !ok && m.Has(key(k)) {
							t.Fatalf("%v/%d step %d: Has(%v) of a key deleted or never set", kind, size, step, key(k))
						}
					}
				}
			}
			if len(m.entries) > 2*m.Len()+smallMap {
				t.Errorf("%v/%d: %d slots for %d entries: tombstones are not compacted", kind, size, len(m.entries), m.Len())
			}
		}
	}
}

// TestMapChurn keeps about 50 keys in a map while 100,000 come and go:
// the index's deleted slots must not pile up (a probe needs an empty
// slot to end) nor the index grow with the keys that passed through.
func TestMapChurn(t *testing.T) {
	for _, kind := range []Kind{KindInt, KindString} {
		key := func(i int) Value {
			if kind == KindString {
				return Str("key" + strconv.Itoa(i))
			}
			return Int(int64(i) * 1000003)
		}
		m := NewMap(kind, 0).AsMap()
		const live = 50
		for i := range 100000 {
			must(m.Set(key(i), Int(int64(i))))
			if i >= live {
				must(m.Delete(key(i - live)))
			}
			if i%1013 == 0 && i >= live {
				if m.Has(key(i-live)) || !m.Has(key(i-live+1)) || m.Len() != live {
					t.Fatalf("%v: at %d: len %d", kind, i, m.Len())
				}
			}
		}
		if x := m.idx; len(x.slots) > 8*live || 2*x.used > len(x.slots) {
			t.Errorf("%v: %d slots, %d used, for %d keys", kind, len(x.slots), x.used, m.Len())
		}
		for i := 100000 - live; i < 100000; i++ {
			if v, ok := m.Get(key(i)); !ok || v.AsInt() != int64(i) {
				t.Fatalf("%v: Get(%v) = %v, %v", kind, key(i), v, ok)
			}
		}
	}
}

// A map's header stays in the allocator's 64-byte size class: most maps
// are small and have no index.
func TestMapHeader(t *testing.T) {
	if n := unsafe.Sizeof(Map{}); n > 64 {
		t.Errorf("Map is %d bytes, want 64 or fewer", n)
	}
}

func TestStructAndEnum(t *testing.T) {
	for n := range 12 { // every allocation size class
		fields := make([]Field, n)
		vals := make([]Value, n)
		for i := range fields {
			fields[i] = Field{"f" + strconv.Itoa(i), IntType}
			vals[i] = Int(int64(i))
		}
		st := &Type{Kind: KindStruct, Name: "S", Fields: fields}
		v := NewStruct(st, vals)
		s := v.AsStruct()
		if s.Type() != st || s.Len() != n || len(s.Fields()) != n {
			t.Fatalf("struct of %d", n)
		}
		for i := range n {
			if s.Field(i).AsInt() != int64(i) {
				t.Fatalf("field %d", i)
			}
		}
		if n > 0 {
			s.SetField(n-1, Int(-1))
			if s.Field(n-1).AsInt() != -1 {
				t.Fatal("SetField")
			}
		}
		et := &Type{Kind: KindEnum, Name: "E", Variants: []Variant{{Name: "V", Fields: make([]*Type, n)}}}
		e := NewEnum(et, 0, vals)
		if e.EnumType() != et || e.Variant() != 0 || len(e.Payload()) != n {
			t.Fatalf("enum of %d", n)
		}
	}
	if v := NewStruct(pointT, nil); !v.AsStruct().Field(1).IsVoid() {
		t.Error("NewStruct(nil) gives void fields")
	}
	u := NewEnum(verdictT, 0, nil)
	if u.EnumType() != verdictT || u.Variant() != 0 || u.Payload() != nil {
		t.Error("unit variant")
	}
	r := NewEnum(verdictT, 1, []Value{Str("late")})
	if r.EnumType() != verdictT || r.Variant() != 1 || r.Payload()[0].AsStr() != "late" {
		t.Error("variant with a value")
	}
	if verdictT.VariantIndex("Reject") != 1 || verdictT.VariantIndex("x") != -1 ||
		pointT.FieldIndex("y") != 1 || pointT.FieldIndex("z") != -1 {
		t.Error("FieldIndex / VariantIndex")
	}
}

func TestUnitEnumDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = NewEnum(verdictT, 0, nil) }); n != 0 {
		t.Errorf("unit variant allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = NewStruct(orderT, []Value{Int(1), Int(2), Str("x")}) }); n != 1 {
		t.Errorf("a three-field struct allocates %v times, want 1", n)
	}
}

func TestEqual(t *testing.T) {
	nan := Float(math.NaN())
	cases := []struct {
		a, b Value
		want bool
	}{
		{Int(1), Int(1), true},
		{Int(1), Int(2), false},
		{Int(1), Float(1), false},
		{Float(0), Float(math.Copysign(0, -1)), true},
		{nan, nan, false},
		{list(nan), list(nan), false},
		{Str("a"), Str("a"), true},
		{Str("a"), BytesOf("a"), false},
		{BytesOf("a\x00"), BytesOf("a\x00"), true},
		{Bool(true), Bool(false), false},
		{list(Int(1), Int(2)), list(Int(1), Int(2)), true},
		{list(Int(1), Int(2)), list(Int(1)), false},
		{list(), list(), true},
		{strMap("a", Int(1), "b", Int(2)), strMap("b", Int(2), "a", Int(1)), true},
		{strMap("a", Int(1), "b", Int(2)), strMap("a", Int(1), "b", Int(3)), false},
		{strMap("a", Int(1), "b", Int(2)), strMap("a", Int(1), "c", Int(2)), false},
		{strMap("a", Int(1)), strMap("a", Int(1), "c", Int(2)), false},
		{NewStruct(pointT, []Value{Int(1), Int(2)}), NewStruct(pointT, []Value{Int(1), Int(2)}), true},
		{NewStruct(pointT, []Value{Int(1), Int(2)}), NewStruct(pointT, []Value{Int(1), Int(3)}), false},
		{NewEnum(verdictT, 0, nil), NewEnum(verdictT, 0, nil), true},
		{NewEnum(verdictT, 0, nil), NewEnum(verdictT, 1, []Value{Str("x")}), false},
		{NewEnum(verdictT, 1, []Value{Str("x")}), NewEnum(verdictT, 1, []Value{Str("x")}), true},
		{NewEnum(verdictT, 1, []Value{Str("x")}), NewEnum(verdictT, 1, []Value{Str("y")}), false},
		{node("a", node("b")), node("a", node("b")), true},
		{node("a", node("b")), node("a", node("c")), false},
		{Value{}, Value{}, true},
	}
	for _, c := range cases {
		got, err := Equal(c.a, c.b)
		if err != nil || got != c.want {
			t.Errorf("Equal(%v, %v) = %v, %v; want %v", c.a, c.b, got, err, c.want)
		}
	}
}

func TestCompareAndLess(t *testing.T) {
	nan := Float(math.NaN())
	if !Less(Int(-1), Int(0)) || Less(Int(0), Int(0)) || !Less(Str("a"), Str("b")) || !Less(Str("Z"), Str("a")) ||
		!Less(Float(1), Float(2)) || Less(nan, Float(1)) || Less(Float(1), nan) || Less(list(), list()) {
		t.Error("Less")
	}
	if Compare(Int(1), Int(2)) != -1 || Compare(Str("b"), Str("a")) != 1 || Compare(Float(0), Float(math.Copysign(0, -1))) != 0 ||
		Compare(nan, Float(math.Inf(-1))) != -1 || Compare(nan, nan) != 0 || Compare(list(), list()) != 0 {
		t.Error("Compare")
	}
	if Compare(Str("é"), Str("z")) != 1 { // by bytes
		t.Error("strings compare by bytes")
	}
}

// cyclic returns a list that contains itself through a struct.
func cyclic() Value {
	n := node("loop")
	must(n.AsStruct().Field(1).AsList().Push(n))
	return n
}

// deep returns n nested lists around an int.
func deep(n int) Value {
	v := Int(1)
	for range n {
		v = list(v)
	}
	return v
}

func TestCyclesAndDepth(t *testing.T) {
	c := cyclic()
	if _, err := Encode(nil, c); err != ErrCyclic {
		t.Errorf("Encode: %v", err)
	}
	if _, err := DeepCopy(c); err != ErrCyclic {
		t.Errorf("DeepCopy: %v", err)
	}
	if _, err := Equal(c, c); err != ErrCyclic {
		t.Errorf("Equal: %v", err)
	}
	if _, err := AppendJSON(nil, c); err != ErrCyclic {
		t.Errorf("AppendJSON: %v", err)
	}
	if got := Format(c); got != `Node { name: "loop", kids: [...] }` {
		t.Errorf("Format: %s", got)
	}
	// the same list twice is sharing, not a cycle
	shared := list(Int(1))
	pair := list(shared, shared)
	if got, err := Encode(nil, pair); err != nil || len(got) != 10 {
		t.Errorf("shared list: %x %v", got, err)
	}

	ok, tooDeep := deep(MaxDepth), deep(MaxDepth+1)
	b, err := Encode(nil, ok)
	if err != nil {
		t.Fatalf("Encode at MaxDepth: %v", err)
	}
	if _, err := Decode(b, listType(MaxDepth)); err != nil {
		t.Errorf("Decode at MaxDepth: %v", err)
	}
	if _, err := Encode(nil, tooDeep); err != ErrTooDeep {
		t.Errorf("Encode beyond MaxDepth: %v", err)
	}
	b = append([]byte{byte(KindList), 1}, b...)
	if _, err := Decode(b, listType(MaxDepth+1)); err == nil || !strings.Contains(err.Error(), "deep") {
		t.Errorf("Decode beyond MaxDepth: %v", err)
	}
	if !strings.Contains(Format(tooDeep), "...") {
		t.Error("Format beyond MaxDepth")
	}
}

// listType returns n nested list types around int.
func listType(n int) *Type {
	t := IntType
	for range n {
		t = ListOf(t)
	}
	return t
}

func TestTypeString(t *testing.T) {
	for _, c := range []struct {
		t    *Type
		want string
	}{
		{IntType, "int"},
		{VoidType, "void"},
		{ListOf(pointT), "[Point]"},
		{MapOf(StringType, ListOf(BytesType)), "{string: [bytes]}"},
		{nodeT, "Node"},
		{nil, "?"},
	} {
		if got := c.t.String(); got != c.want {
			t.Errorf("%s, want %s", got, c.want)
		}
	}
}

// TestImports keeps the package free of anything that could read time,
// randomness, the environment, files or the network: it runs in the wasm
// guest, where every such input must cross the primitive gateway.
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"cmp": true, "errors": true, "math": true, "math/bits": true,
		"strconv": true, "strings": true, "unicode/utf8": true, "unsafe": true,
	}
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[p] {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}

// A struct or an enum variant with values is one allocation, its header
// (32 bytes: no slice capacity) followed by its values, so that one of
// two values takes the allocator's 80-byte size class. The second tier
// reads the values' address and count where a slice keeps its data
// pointer and length.
func TestObjectLayout(t *testing.T) {
	if s, e := unsafe.Sizeof(Struct{}), unsafe.Sizeof(enumObj{}); s != 32 || e != 32 {
		t.Errorf("headers of %d and %d bytes, want 32", s, e)
	}
	if n := unsafe.Sizeof(obj2[enumObj]{}); n != 80 {
		t.Errorf("an enum variant of two values takes %d bytes, want 80", n)
	}
	if unsafe.Offsetof(Struct{}.n) != LayoutStructField+8 || unsafe.Offsetof(enumObj{}.n) != LayoutEnumVals+8 {
		t.Error("the count does not follow the address")
	}
	for n := 1; n <= 8; n++ {
		vals := make([]Value, n)
		for i := range vals {
			vals[i] = Str(strconv.Itoa(i))
		}
		st := &Type{Kind: KindStruct, Name: "S", Fields: make([]Field, n)}
		et := &Type{Kind: KindEnum, Name: "E", Variants: []Variant{{Name: "V", Fields: make([]*Type, n)}}}
		if a := testing.AllocsPerRun(50, func() { _ = NewStruct(st, vals) }); a != 1 {
			t.Errorf("a struct of %d fields allocates %v times, want 1", n, a)
		}
		if a := testing.AllocsPerRun(50, func() { _ = NewEnum(et, 0, vals) }); n <= 4 && a != 1 {
			t.Errorf("a variant of %d values allocates %v times, want 1", n, a)
		}
		// The values are a copy, held in the object itself.
		s, e := NewStruct(st, vals).AsStruct(), NewEnum(et, 0, vals)
		vals[0] = Int(-1)
		if s.Field(0).AsStr() != "0" || e.Payload()[0].AsStr() != "0" {
			t.Fatalf("%d values: not a copy", n)
		}
		base := uintptr(unsafe.Pointer(s))
		if f := uintptr(unsafe.Pointer(&s.Fields()[0])); f != base+unsafe.Sizeof(Struct{}) {
			t.Errorf("a struct of %d fields: its fields at +%d", n, f-base)
		}
		if p := uintptr(unsafe.Pointer(&e.Payload()[0])); p != uintptr(e.p)+unsafe.Sizeof(enumObj{}) && n <= 4 {
			t.Errorf("a variant of %d values: its values at +%d", n, p-uintptr(e.p))
		}
		if len(s.Fields()) != n || cap(s.Fields()) != n || len(e.Payload()) != n {
			t.Errorf("%d values: lengths %d, %d", n, len(s.Fields()), len(e.Payload()))
		}
	}
}

// NewEnum2 makes what NewEnum makes of the same two values: equal, with
// the same encoding and size, in one allocation, holding copies.
func TestNewEnum2(t *testing.T) {
	a, b := Float(1.5), Float(-2)
	v := NewEnum2(shapeT, 1, &a, &b)
	w := NewEnum(shapeT, 1, []Value{a, b})
	if eq, err := Equal(v, w); err != nil || !eq {
		t.Fatalf("Equal: %v %v", eq, err)
	}
	ev, err1 := Encode(nil, v)
	ew, err2 := Encode(nil, w)
	if err1 != nil || err2 != nil || string(ev) != string(ew) {
		t.Fatalf("encodings %x %x (%v %v)", ev, ew, err1, err2)
	}
	if ShallowSize(v) != ShallowSize(w) || v.EnumType() != shapeT || v.Variant() != 1 {
		t.Error("size, type or variant differ")
	}
	a = Float(9)
	if p := v.Payload(); len(p) != 2 || p[0].AsFloat() != 1.5 || p[1].AsFloat() != -2 {
		t.Errorf("payload %v", p)
	}
	if n := testing.AllocsPerRun(50, func() { _ = NewEnum2(shapeT, 1, &a, &b) }); n != 1 {
		t.Errorf("%v allocations, want 1", n)
	}
}

// A field outside the struct panics (only a malformed image asks for
// one; the interpreter turns the panic into a trap), on an empty struct
// too.
func TestFieldOutOfRange(t *testing.T) {
	for _, c := range []struct {
		v Value
		i int
	}{{NewStruct(pointT, nil), 2}, {NewStruct(pointT, nil), -1}, {NewStruct(emptyT, nil), 0}} {
		s := c.v.AsStruct()
		for _, f := range []func(){func() { s.Field(c.i) }, func() { s.SetField(c.i, Int(1)) }} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("field %d of %s did not panic", c.i, s.Type())
					}
				}()
				f()
			}()
		}
	}
}

// TestMapProbes keeps the index's probes short on the keys programs
// use: runs of ints, ints with a common stride (multiples of a power of
// two, which a plain multiply sends to few slots), and strings that
// differ in one character or share a long prefix. A map's longest probe
// (slots visited for one key) must stay small at the index's load.
func TestMapProbes(t *testing.T) {
	longest := func(m *Map) int {
		worst := 0
		for pos := range m.entries {
			k := m.entries[pos].key
			x := m.idx
			i, n := int(hashKey(k)>>x.shift), 1
			for x.slots[i] != int32(pos+1) {
				i = (i + 1) & (len(x.slots) - 1)
				n++
			}
			worst = max(worst, n)
		}
		return worst
	}
	sets := map[string]func(i int) Value{
		"run":      func(i int) Value { return Int(int64(i)) },
		"stride":   func(i int) Value { return Int(int64(i) << 20) },
		"negative": func(i int) Value { return Int(-int64(i) * 4096) },
		"suffix":   func(i int) Value { return Str("user-" + strconv.Itoa(i)) },
		"prefix":   func(i int) Value { return Str(strconv.Itoa(i) + "/a/long/shared/path/to/the/same/place") },
		// Keys written down to collide under a plain Fibonacci hash,
		// (k ^ c) * 2^64/φ: its product is i, so every key's top bits
		// are 0. A program fed such keys (a JSON object's ids) would
		// probe n slots for its n-th key.
		"crafted": func(i int) Value { return Int(int64(uint64(i)*fibInverse ^ 0x2545f4914f6cdd1d)) },
	}
	for name, key := range sets {
		m := NewMap(key(0).Kind(), 0).AsMap()
		for i := range 50000 {
			must(m.Set(key(i), Int(int64(i))))
		}
		if n := longest(m); n > 64 {
			t.Errorf("%s: a probe of %d slots among %d keys in %d slots", name, n, m.Len(), len(m.idx.slots))
		}
	}
}

// fibInverse is the inverse of 2^64/φ (0x9e3779b97f4a7c15) modulo 2^64,
// by Newton's iteration (each step doubles the bits that are right).
var fibInverse = func() uint64 {
	const x = 0x9e3779b97f4a7c15
	inv := uint64(x)
	for range 6 {
		inv *= 2 - x*inv
	}
	return inv
}()
