package image_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/codegen/image"
)

// sample builds a small image by hand: a recursive struct type, an enum,
// a list and a map type, one constant of each kind, a top-level fn, a
// locus with a handler, a start handler and a locus fn, one instance, one
// topic, one primitive and an ingress binding.
func sample() *image.Image {
	const (
		tNode = image.NumBasic + iota // struct Node { name: string, kids: [Node] }
		tKids                         // [Node]
		tEnum                         // enum E { A, B(int) }
		tMap                          // {string: int}
		tMsg                          // topic Msg { n: int }
	)
	return &image.Image{
		Entry: "app.hl",
		Files: []string{"app.hl", "std/io.hl"},
		Types: []image.Type{
			{Kind: image.KindVoid}, {Kind: image.KindInt}, {Kind: image.KindFloat},
			{Kind: image.KindBool}, {Kind: image.KindString}, {Kind: image.KindBytes},
			{Kind: image.KindStruct, Name: "Node", Fields: []image.Field{{Name: "name", Type: image.TString}, {Name: "kids", Type: tKids}}},
			{Kind: image.KindList, Elem: tNode},
			{Kind: image.KindEnum, Name: "E", Variants: []image.Variant{{Name: "A"}, {Name: "B", Fields: []image.TypeRef{image.TInt}}}},
			{Kind: image.KindMap, Key: image.TString, Elem: image.TInt},
			{Kind: image.KindStruct, Name: "Msg", Topic: true, Fields: []image.Field{{Name: "n", Type: image.TInt}}},
		},
		Consts: []image.Const{
			{Kind: image.KindInt, Int: -1 << 40},
			{Kind: image.KindFloat, Float: math.Copysign(0, -1)},
			{Kind: image.KindBool, Int: 1},
			{Kind: image.KindString, Str: "héllo"},
			{Kind: image.KindBytes, Str: "\x00\xff"},
			{Kind: image.KindEnum, Type: tEnum, Variant: 1},
		},
		Funcs: []image.Func{
			{Name: "inc", Kind: image.FuncFn, Locus: -1, Topic: -1, NumParams: 1, NumSlots: 1, FrameSize: 2, Result: image.TInt,
				Locals: []image.Local{{Name: "x", Type: image.TInt}},
				Code: []image.Instr{
					{Op: image.OpJGeIntK, A: 0, B: 5, C: 2},
					{Op: image.OpAddIntK, A: 1, B: 0, C: 1},
					{Op: image.OpRet, A: 1},
				},
				Decl: image.Pos{File: 0, Line: 1, Col: 1},
				Pos:  []image.PosEntry{{PC: 0, Pos: image.Pos{File: 0, Line: 1, Col: 1}}, {PC: 2, Pos: image.Pos{File: 0, Line: 2, Col: 5}}}},
			{Name: "L.init", Kind: image.FuncInit, Locus: 0, Topic: -1, FrameSize: 1, Result: image.TVoid,
				Code: []image.Instr{{Op: image.OpLoadK, A: 0, B: 0}, {Op: image.OpStoreState, A: 1, B: 0}, {Op: image.OpRetVoid}}},
			{Name: "L.on Msg", Kind: image.FuncHandler, Locus: 0, Topic: 0, NumParams: 1, NumSlots: 1, FrameSize: 3, Result: image.TVoid,
				Code: []image.Instr{
					{Op: image.OpField, A: 1, B: 0, C: 0},
					{Op: image.OpCall, A: 1, B: 0},
					{Op: image.OpCall, A: 2, B: 4},
					{Op: image.OpCallB, A: 2, B: int32(image.BuiltinPrint), C: 1},
					{Op: image.OpRetVoid},
				}},
			{Name: "L.on start", Kind: image.FuncStart, Locus: 0, Topic: -1, FrameSize: 2, Result: image.TVoid,
				Code: []image.Instr{
					{Op: image.OpLoadInt, A: 0, B: 3},
					{Op: image.OpPublish, A: 0, B: 0},
					{Op: image.OpLoadK, A: 0, B: 3},
					{Op: image.OpCallPrim, A: 1, B: 0, C: 0},
					{Op: image.OpJump, C: 5},
					{Op: image.OpRetVoid},
				}},
			{Name: "L.f", Kind: image.FuncLocusFn, Locus: 0, Topic: -1, FrameSize: 1, Result: image.TVoid,
				Code: []image.Instr{{Op: image.OpLoadState, A: 0, B: 0}, {Op: image.OpRetVoid}}},
			{Name: "main", Kind: image.FuncSpawn, Locus: 0, Topic: -1, FrameSize: 1, Result: image.TVoid,
				Code: []image.Instr{{Op: image.OpLoadK, A: 0, B: 3}, {Op: image.OpStoreState, A: 0, B: 0}, {Op: image.OpRetVoid}}},
		},
		Loci: []image.Locus{{
			Name:     "L",
			Params:   []image.Var{{Name: "name", Type: image.TString, Slot: 0}},
			State:    []image.Var{{Name: "n", Type: image.TInt, Slot: 1}},
			NumSlots: 2, Init: 1, Start: 3,
			Handlers: []image.Handler{{Topic: 0, Func: 2, Guard: -1}},
			Fns:      []int{4},
			Budget:   1000,
		}},
		Instances: []image.Instance{{Name: "L", Locus: 0, Spawn: 5, Placement: image.PlacePool, Pool: "w", Consumer: 1}},
		Topics:    []image.Topic{{Name: "Msg", Type: tMsg, Subscribers: []int{0}}},
		Ingress:   []image.Ingress{{Topic: 0, Consumer: 2}},
		Prims:     []image.Prim{{Name: "std::io::println", ID: 19, Params: []image.TypeRef{image.TString}, Result: image.TVoid}},
		Consumers: []image.Consumer{
			{Kind: image.ConsumerMain, Name: "main"},
			{Kind: image.ConsumerPool, Name: "w", Instances: []int{0}},
			{Kind: image.ConsumerIngress, Name: "stdin:Msg"},
		},
		SecretNames: []string{"API_KEY", "ORG"},
	}
}

func marshal(t testing.TB, img *image.Image) []byte {
	t.Helper()
	data, err := img.MarshalBinary()
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return data
}

func TestRoundTrip(t *testing.T) {
	img := sample()
	data := marshal(t, img)
	if !bytes.HasPrefix(data, []byte(image.Magic)) {
		t.Fatalf("no magic: %q", data[:8])
	}
	back, err := image.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(img, back) {
		t.Errorf("decoded image differs:\n%+v\n%+v", img, back)
	}
	if again := marshal(t, back); !bytes.Equal(again, data) {
		t.Error("re-encoding differs")
	}
	// -0.0 keeps its sign bit.
	if math.Float64bits(back.Consts[1].Float) != 1<<63 {
		t.Error("float constant changed")
	}
}

func TestUnmarshalErrors(t *testing.T) {
	data := marshal(t, sample())
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a Hale program image"},
		{"bad magic", append([]byte("hale\x00imx"), data[8:]...), "not a Hale program image"},
		{"other version", append(append([]byte(image.Magic), image.Version+1), data[9:]...), "unsupported image version " + strconv.Itoa(image.Version+1)},
		{"trailing bytes", append(append([]byte(nil), data...), 0), "trailing bytes"},
		{"huge count", append(append([]byte(image.Magic), image.Version, 0), 0xff, 0xff, 0xff, 0xff, 0x0f), "exceeds the input"},
	} {
		_, err := image.Unmarshal(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
		if got := errors.Is(err, image.ErrVersion); got != (c.name == "other version") {
			t.Errorf("%s: errors.Is(err, ErrVersion) = %v", c.name, got)
		}
	}
	// Every proper prefix fails, and no single changed byte panics.
	for i := range data {
		if _, err := image.Unmarshal(data[:i]); err == nil {
			t.Fatalf("prefix of %d bytes decoded", i)
		}
		for _, b := range []byte{0, 1, 0x7f, 0x80, 0xff} {
			mut := append([]byte(nil), data...)
			mut[i] = b
			if img, err := image.Unmarshal(mut); err == nil {
				if _, err := img.MarshalBinary(); err != nil {
					t.Fatalf("decoded image does not re-encode: %v", err)
				}
			}
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		change func(img *image.Image)
		want   string
	}{
		{"register out of frame", func(img *image.Image) { img.Funcs[0].Code[1].A = 2 }, "bad operand A"},
		{"negative register", func(img *image.Image) { img.Funcs[0].Code[1].B = -1 }, "bad operand B"},
		{"jump out of code", func(img *image.Image) { img.Funcs[0].Code[0].C = 3 }, "bad operand C"},
		{"unused operand set", func(img *image.Image) { img.Funcs[0].Code[2].B = 1 }, "bad operand B"},
		{"unknown opcode", func(img *image.Image) { img.Funcs[0].Code[1].Op = 250 }, "bad opcode"},
		{"falls off the end", func(img *image.Image) { img.Funcs[0].Code = img.Funcs[0].Code[:2] }, "does not end"},
		{"empty code", func(img *image.Image) { img.Funcs[4].Code = nil }, "does not end"},
		{"bad constant", func(img *image.Image) { img.Funcs[1].Code[0].B = 6 }, "bad operand B"},
		{"state slot of a fn", func(img *image.Image) { img.Funcs[0].Code[1] = image.Instr{Op: image.OpLoadState, A: 1, B: 0} }, "bad operand B"},
		{"state slot out of range", func(img *image.Image) { img.Funcs[1].Code[1].A = 2 }, "bad operand A"},
		{"argument window", func(img *image.Image) {
			img.Funcs[0].NumParams, img.Funcs[0].NumSlots = 2, 2
			img.Funcs[2].Code[1].A = 2
		}, "operands do not fit"},
		{"call of a handler", func(img *image.Image) { img.Funcs[2].Code[1].B = 2 }, "operands do not fit"},
		{"builtin window", func(img *image.Image) { img.Funcs[2].Code[3].C = 3 }, "bad operand C"},
		{"builtin arity", func(img *image.Image) { img.Funcs[2].Code[3].B = int32(image.BuiltinInsert) }, "operands do not fit"},
		{"bad builtin", func(img *image.Image) { img.Funcs[2].Code[3].B = 0 }, "bad operand B"},
		{"format without a layout", func(img *image.Image) {
			in := img.Funcs[2].Code[3]
			img.Funcs[2].Code[3] = image.Instr{Op: image.OpFormat, A: in.A, B: in.C, C: 2}
		}, "operands do not fit"},
		{"format window", func(img *image.Image) {
			in := img.Funcs[2].Code[3]
			img.Consts = append(img.Consts, image.Const{Kind: image.KindString, Str: image.FormatLayout(make([]int64, 64))})
			img.Funcs[2].Code[3] = image.Instr{Op: image.OpFormat, A: in.A, B: in.C, C: int32(len(img.Consts) - 1)}
		}, "operands do not fit"},
		{"publish window", func(img *image.Image) { img.Funcs[3].Code[1].B = 2 }, "bad operand B"},
		{"frame smaller than slots", func(img *image.Image) { img.Funcs[0].FrameSize = 0 }, "bad frame"},
		{"handler without payload", func(img *image.Image) { img.Funcs[2].NumParams = 0 }, "bad handler"},
		{"positions out of order", func(img *image.Image) { img.Funcs[0].Pos[1].PC = 0 }, "bad position table"},
		{"position file", func(img *image.Image) { img.Funcs[0].Pos[0].File = 9 }, "bad position"},
		{"declaration file", func(img *image.Image) { img.Funcs[0].Decl.File = 9 }, "bad declaration position"},
		{"list of itself", func(img *image.Image) { img.Types[7].Elem = 7 }, "bad list element type"},
		{"void element", func(img *image.Image) { img.Types[7].Elem = image.TVoid }, "bad list element type"},
		{"map key", func(img *image.Image) { img.Types[9].Key = image.TFloat }, "map key"},
		{"basic type moved", func(img *image.Image) { img.Types[1].Kind = image.KindBool }, "basic type out of place"},
		{"void field", func(img *image.Image) { img.Types[6].Fields[0].Type = image.TVoid }, "bad field type"},
		{"bool constant", func(img *image.Image) { img.Consts[2].Int = 2 }, "bad bool"},
		{"enum constant", func(img *image.Image) { img.Consts[5].Variant = 2 }, "bad enum variant"},
		{"init of another kind", func(img *image.Image) { img.Loci[0].Init = 0 }, "bad init function"},
		{"handler topic", func(img *image.Image) { img.Loci[0].Handlers[0].Topic = 1 }, "bad handler"},
		{"spawn function", func(img *image.Image) { img.Instances[0].Spawn = 1 }, "spawn function"},
		{"consumer", func(img *image.Image) { img.Instances[0].Consumer = 3 }, "bad consumer"},
		{"topic payload", func(img *image.Image) { img.Topics[0].Type = image.TInt }, "payload is not a struct"},
		{"subscriber", func(img *image.Image) { img.Topics[0].Subscribers = []int{1} }, "bad subscriber"},
		{"prim type", func(img *image.Image) { img.Prims[0].Params[0] = 99 }, "bad parameter type"},
		{"missing basic types", func(img *image.Image) { img.Types = img.Types[:3] }, "missing basic types"},
	}
	for _, c := range cases {
		img := sample()
		c.change(img)
		err := img.Validate()
		var ve *image.ValidationError
		if err == nil || !errors.As(err, &ve) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
		if _, err := img.MarshalBinary(); err == nil {
			t.Errorf("%s: an invalid image encoded", c.name)
		}
	}
	if err := sample().Validate(); err != nil {
		t.Errorf("sample: %v", err)
	}
}

func TestPosAt(t *testing.T) {
	f := &sample().Funcs[0]
	for pc, want := range []int32{1, 1, 2, 2} {
		if got := f.PosAt(pc).Line; got != want {
			t.Errorf("PosAt(%d) line %d, want %d", pc, got, want)
		}
	}
	if p := (&image.Func{}).PosAt(0); p != (image.Pos{}) {
		t.Errorf("no table: %+v", p)
	}
}

func TestOpInfo(t *testing.T) {
	seen := map[string]bool{}
	for op := image.Op(0); int(op) < image.NumOps; op++ {
		info, ok := image.OpInfo(op)
		if !ok || info.Name == "" || seen[info.Name] {
			t.Errorf("opcode %d: %+v", op, info)
		}
		seen[info.Name] = true
	}
	if _, ok := image.OpInfo(image.Op(image.NumOps)); ok {
		t.Error("OpInfo of an unknown opcode")
	}
	if !image.OpJump.Terminal() || image.OpJumpT.Terminal() || !image.OpJumpT.IsJump() || image.OpAddInt.IsJump() {
		t.Error("Terminal or IsJump wrong")
	}
}

// programImages compiles the code generator's testdata programs, to seed
// the fuzzer with real images.
func programImages(t testing.TB) [][]byte {
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "*.hl"))
	var out [][]byte
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := hale.Compile(fstest.MapFS{"app.hl": {Data: src}}, "app.hl", hale.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, marshal(t, c.Image))
	}
	return out
}

// FuzzUnmarshal checks that Unmarshal never panics and that whatever it
// accepts encodes again and decodes to the same image.
func FuzzUnmarshal(f *testing.F) {
	f.Add(marshal(f, sample()))
	for _, data := range programImages(f) {
		f.Add(data)
	}
	f.Add([]byte(image.Magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := image.Unmarshal(data)
		if err != nil {
			return
		}
		again, err := img.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded image does not encode: %v", err)
		}
		back, err := image.Unmarshal(again)
		if err != nil {
			t.Fatalf("re-encoded image does not decode: %v", err)
		}
		if !reflect.DeepEqual(img, back) {
			t.Fatal("round trip changed the image")
		}
	})
}
