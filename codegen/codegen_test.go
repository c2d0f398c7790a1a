package codegen

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/effects"
	"github.com/hale-lang/hale/lang"
	"github.com/hale-lang/hale/lang/diag"
	"github.com/hale-lang/hale/sir"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// lower runs the front end on a one-file program.
func lower(t *testing.T, src []byte) *sir.Program {
	t.Helper()
	lp, err := lang.LoadFS(fstest.MapFS{"app.hl": {Data: src}}, "app.hl")
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	fx, errs := effects.Analyze(lp)
	if len(errs) > 0 {
		t.Fatalf("effects: %v", diag.List(errs))
	}
	p, err := sir.Lower(lp, fx)
	if err != nil {
		t.Fatalf("lower: %v", err)
	}
	return p
}

func testdata(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.hl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata programs: %v", err)
	}
	return paths
}

// TestGolden compares the disassembly of every testdata program with its
// .asm file; -update rewrites them.
func TestGolden(t *testing.T) {
	for _, path := range testdata(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			img, err := Compile(lower(t, src))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := WriteAsm(&out, img); err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(path, ".hl") + ".asm"
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("disassembly differs from %s (run with -update to accept):\n%s", golden, diffLines(string(want), out.String()))
			}
		})
	}
}

// diffLines shows the first differing line of two texts.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + itoa(i+1) + ":\n  want: " + a + "\n  got:  " + b
		}
	}
	return "(no line differs)"
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestRoundTrip checks that every testdata image encodes, decodes to the
// same image and encodes to the same bytes, and that compiling twice
// gives the same bytes.
func TestRoundTrip(t *testing.T) {
	for _, path := range testdata(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := Compile(lower(t, src))
		if err != nil {
			t.Fatal(err)
		}
		data, err := img.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := image.Unmarshal(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !reflect.DeepEqual(img, back) {
			t.Errorf("%s: decoded image differs", path)
		}
		again, err := back.MarshalBinary()
		if err != nil || !bytes.Equal(data, again) {
			t.Errorf("%s: re-encoding differs (%v)", path, err)
		}
		img2, err := Compile(lower(t, src))
		if err != nil {
			t.Fatal(err)
		}
		if data2, _ := img2.MarshalBinary(); !bytes.Equal(data, data2) {
			t.Errorf("%s: compiling twice gives different images", path)
		}
	}
}

// TestOpcodeCoverage checks that the testdata programs use every opcode,
// so the golden files show each one.
func TestOpcodeCoverage(t *testing.T) {
	used := map[image.Op]bool{}
	for _, path := range testdata(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := Compile(lower(t, src))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range img.Funcs {
			for _, in := range f.Code {
				used[in.Op] = true
			}
		}
	}
	for op := image.Op(0); int(op) < image.NumOps; op++ {
		if op != image.OpNop && !used[op] {
			t.Errorf("no testdata program uses %s", op)
		}
	}
}

// TestBuiltinTables checks that the image's builtin numbering is SIR's.
func TestBuiltinTables(t *testing.T) {
	if int(sir.NumBuiltins) != int(image.NumBuiltins) {
		t.Fatalf("SIR has %d builtins, the image %d", sir.NumBuiltins, image.NumBuiltins)
	}
	for b := sir.Builtin(0); b < sir.NumBuiltins; b++ {
		if got, want := image.Builtin(b).String(), b.String(); got != want {
			t.Errorf("builtin %d: image %q, SIR %q", b, got, want)
		}
	}
}

// TestKindTables checks that the image's type and function kinds are
// numbered as SIR's.
func TestKindTables(t *testing.T) {
	for k := sir.KindVoid; k <= sir.KindEnum; k++ {
		if image.Kind(k).String() != k.String() {
			t.Errorf("kind %d: image %s, SIR %s", k, image.Kind(k), k)
		}
	}
	for k := sir.FuncFn; k <= sir.FuncInit; k++ {
		if image.FuncKind(k).String() != k.String() {
			t.Errorf("func kind %d: image %s, SIR %s", k, image.FuncKind(k), k)
		}
	}
	for k := sir.ConsumerMain; k <= sir.ConsumerIngress; k++ {
		if uint8(k) > image.ConsumerIngress {
			t.Errorf("consumer kind %s out of range", k)
		}
	}
}
