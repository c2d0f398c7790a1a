package hale

import (
	"runtime"
	"strings"
	"testing"

	"github.com/zeebo/blake3"
)

func TestToolchainDigestIsStableAndCoversSources(t *testing.T) {
	a, b := ToolchainDigest(), ToolchainDigest()
	if a != b || a == ([32]byte{}) {
		t.Fatalf("ToolchainDigest not stable or empty: %x %x", a, b)
	}
	for _, p := range []string{"lang/ast/ast.go", "replay/artifact/artifact.go", "replay/session.go", "compile.go", "stdlib/std/time.hl", "go.sum"} {
		if _, err := toolchainSources.ReadFile(p); err != nil {
			t.Errorf("toolchain sources miss %s: %v", p, err)
		}
		if !partOfToolchain(p) {
			t.Errorf("%s is not hashed", p)
		}
	}
	for _, p := range []string{"lang/diag/diag_test.go", "README.md"} {
		if partOfToolchain(p) {
			t.Errorf("%s must not be part of the toolchain digest", p)
		}
	}
}

func TestBuildDigest(t *testing.T) {
	base := []SourceFile{{"app.hl", []byte("main {}\n")}, {"lib/a.hl", []byte("fn a() {}\n")}}
	d := BuildDigest(base, BuildOptions{})
	if d != BuildDigest([]SourceFile{base[1], base[0]}, BuildOptions{}) {
		t.Error("digest depends on file order")
	}
	comment := []SourceFile{{"app.hl", []byte("main {} // hi\n")}, base[1]}
	if d == BuildDigest(comment, BuildOptions{}) {
		t.Error("a comment did not change the digest")
	}
	renamed := []SourceFile{{"app2.hl", base[0].Data}, base[1]}
	if d == BuildDigest(renamed, BuildOptions{}) {
		t.Error("a logical path change did not change the digest")
	}
	// Field framing: moving a byte between path and data changes the digest.
	shifted := []SourceFile{{"app.hlm", []byte("ain {}\n")}, base[1]}
	if d == BuildDigest(shifted, BuildOptions{}) {
		t.Error("path/data boundary is ambiguous")
	}
}

// The Go release the binary was built with is part of the build's
// identity (the native engine and the host are compiled by it); build
// paths are not.
func TestBuildDigestIncludesGoVersion(t *testing.T) {
	files := []SourceFile{{"app.hl", []byte("main {}\n")}}
	if BuildDigest(files, BuildOptions{}) != buildDigest(runtime.Version(), files, BuildOptions{}) {
		t.Fatal("BuildDigest does not use the running binary's Go version")
	}
	if buildDigest("go1.26.0", files, BuildOptions{}) == buildDigest("go1.26.1", files, BuildOptions{}) {
		t.Error("two Go releases give the same build digest")
	}
	if v := runtime.Version(); strings.ContainsAny(v, `/\`) {
		t.Errorf("runtime.Version() %q looks like it holds a path", v)
	}
}

// TestToolchainDigestMatchesReadFile holds the streamed digest to the
// digest of every source read whole, as it was computed before.
func TestToolchainDigestMatchesReadFile(t *testing.T) {
	h := blake3.New()
	paths := toolchainPaths()
	for _, p := range paths {
		data, err := toolchainSources.ReadFile(p)
		if err != nil {
			continue
		}
		writeField(h, []byte(p))
		writeField(h, data)
	}
	var want [32]byte
	copy(want[:], h.Sum(nil))
	if got := ToolchainDigest(); got != want {
		t.Fatalf("ToolchainDigest %x, read whole %x", got, want)
	}
	// A buffer smaller than most files, so that they take several reads.
	small := blake3.New()
	for _, p := range paths {
		hashSource(small, p, make([]byte, 100))
	}
	if got := small.Sum(nil); string(got) != string(want[:]) {
		t.Fatalf("hashed through a 100-byte buffer: %x, read whole %x", got, want)
	}
}
