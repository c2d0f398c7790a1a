package explore

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hale-lang/hale/vm/host"
)

// foundBundle searches ordering.hl and returns its failure's bundle.
func foundBundle(t testing.TB, kind host.EngineKind) (*Bundle, []byte) {
	t.Helper()
	c := compileFile(t, "testdata/ordering.hl")
	s, err := NewScheduler(context.Background(), c.Image, Config{Engine: kind})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := Search(context.Background(), s, SearchOptions{Strategy: StrategyPCT, Schedules: 40, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failures) != 1 {
		t.Fatalf("%d failures", len(rep.Failures))
	}
	b, err := s.NewBundle(c, StrategyPCT, rep.Failures[0].Shrunk)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := b.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return b, buf.Bytes()
}

// TestBundleVerifiesAcrossEngines: a bundle found on one engine decodes
// and reproduces on both, from its embedded sources (compiled afresh).
func TestBundleVerifiesAcrossEngines(t *testing.T) {
	_, nativeData := foundBundle(t, host.EngineNative)
	_, wasmData := foundBundle(t, host.EngineWasm)
	if !bytes.Equal(nativeData, wasmData) {
		t.Fatalf("the engines wrote different bundles:\n%s\n%s", nativeData, wasmData)
	}
	b, err := DecodeBundle(nativeData)
	if err != nil {
		t.Fatal(err)
	}
	if got := BundleName(b.Failure.Signature()); len(got) != len("0123456789ab.replay") {
		t.Errorf("bundle name %q", got)
	}
	for _, kind := range []host.EngineKind{host.EngineNative, host.EngineWasm} {
		v, err := Verify(context.Background(), b, kind)
		if err != nil {
			t.Fatal(err)
		}
		if !v.Reproduced || v.Note != "" {
			t.Fatalf("%v: not reproduced: drift %q note %q", kind, v.Drift, v.Note)
		}
	}
}

func TestBundleDriftIsNamed(t *testing.T) {
	b, data := foundBundle(t, host.EngineNative)
	for _, tc := range []struct {
		name, want string
		change     func(b *Bundle)
	}{
		{"step not possible", "step 3 is not possible", func(b *Bundle) { b.Schedule[3].Message = "9:9" }},
		{"other failure", "a different failure", func(b *Bundle) { b.Failure.Message = "something else" }},
		{"other coordinate", "the failure happened at", func(b *Bundle) { b.Failure.Coordinate = "4:7" }},
		{"no failure", "no failure", func(b *Bundle) {
			// Run Check before the chain ends: the assertion holds.
			b.Sources[0].Text = strings.Replace(b.Sources[0].Text, "assert(checked", "assert(true || checked", 1)
		}},
		{"toolchain", "", func(b *Bundle) { b.BuildDigest = strings.Repeat("0", 64) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := DecodeBundle(data)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(c)
			v, err := Verify(context.Background(), c, host.EngineNative)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if !v.Reproduced || !strings.Contains(v.Note, "different toolchain") {
					t.Fatalf("reproduced %v drift %q note %q", v.Reproduced, v.Drift, v.Note)
				}
				return
			}
			if v.Reproduced || !strings.Contains(v.Drift, tc.want) {
				t.Fatalf("drift %q, want %q", v.Drift, tc.want)
			}
		})
	}
	_ = b
}

func TestDamagedBundleIsRefused(t *testing.T) {
	_, data := foundBundle(t, host.EngineNative)
	s := string(data)
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", "not a bundle"},
		{"foreign", `{"hello": 1}`, `no "format"`},
		{"other format", strings.Replace(s, "hale.replay/1", "hale.replay/2", 1), "unknown bundle format"},
		{"truncated", s[:len(s)/2], "not a bundle"},
		{"unknown key", strings.Replace(s, `"seed"`, `"sneed": 1, "seed"`, 1), "unknown field"},
		{"trailing data", s + "{}", "not a bundle"},
		{"source changed", strings.Replace(s, "ROUNDS: int = 4", "ROUNDS: int = 5", 1), "does not match its blake3"},
		{"bad digest", strings.Replace(s, `"build_digest": "`, `"build_digest": "zz`, 1), "build_digest"},
		{"bad message", strings.Replace(s, `"message": "start"`, `"message": "begin"`, 1), "neither start nor P:S"},
		{"missing key", strings.Replace(s, `"stdin": [],`, ``, 1), `no "stdin"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeBundle([]byte(tc.text))
			if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want refused with %q", err, tc.want)
			}
		})
	}
}

func FuzzBundleDecode(f *testing.F) {
	_, data := foundBundle(f, host.EngineNative)
	f.Add(data)
	f.Add([]byte(`{"format":"hale.replay/1"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeBundle(data)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("error not wrapping ErrRefused: %v", err)
			}
			return
		}
		// What decodes re-encodes to a bundle that decodes the same.
		var buf bytes.Buffer
		if err := b.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeBundle(buf.Bytes()); err != nil {
			t.Fatalf("re-encoded bundle refused: %v", err)
		}
	})
}
