package hale

import (
	"embed"
	"encoding/binary"
	"encoding/hex"
	"io/fs"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/zeebo/blake3"
)

// toolchainSources is the toolchain's own source: every package that
// takes part in building, running, recording or replaying a program, the
// standard library's Hale files, the embedded interpreter guest, and the
// module files that pin every dependency. Hashing the sources rather than
// the executable makes the digest the same wherever the toolchain was
// built (the executable depends on build paths and flags).
//
//go:embed go.mod go.sum hale.go identity.go identity_cache.go identity_linux.go identity_other.go compile.go lang sir effects codegen vm replay explore stdlib cmd
var toolchainSources embed.FS

var toolchainOnce struct {
	sync.Once
	sum [32]byte
}

// ToolchainDigest returns the BLAKE3-256 digest of the toolchain's sources
// (tests, test data and fuzz corpora excluded: they do not change what a
// program does). It is computed once per executable and kept in the user
// cache folder (toolchainDigestCached).
func ToolchainDigest() [32]byte {
	toolchainOnce.Do(func() {
		toolchainOnce.sum = toolchainDigestCached(computeToolchainDigest)
	})
	return toolchainOnce.sum
}

// computeToolchainDigest hashes the toolchain's sources.
func computeToolchainDigest() [32]byte {
	h := blake3.New()
	paths := toolchainPaths()
	// Each file is streamed through one buffer: ReadFile would copy
	// all of the sources (about 5 MB) into fresh memory, which cost
	// a recorded run about 15 ms of CPU in page faults and garbage
	// collection, more than the hashing.
	buf := make([]byte, 64<<10)
	for _, p := range paths {
		hashSource(h, p, buf)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// toolchainPaths lists the sources the digest covers, sorted.
func toolchainPaths() []string {
	var paths []string
	_ = fs.WalkDir(toolchainSources, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return fs.SkipDir
			}
			return nil
		}
		if partOfToolchain(p) {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	return paths
}

// hashSource writes the toolchain source p as ReadFile would give it, its
// path and then its bytes (writeField), reading it through buf; a file
// that cannot be opened is left out, as one ReadFile cannot read was.
func hashSource(h *blake3.Hasher, p string, buf []byte) {
	f, err := toolchainSources.Open(p)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return
	}
	writeField(h, []byte(p))
	var n [binary.MaxVarintLen64]byte
	_, _ = h.Write(n[:binary.PutUvarint(n[:], uint64(fi.Size()))])
	for {
		k, err := f.Read(buf)
		_, _ = h.Write(buf[:k])
		if err != nil {
			return
		}
	}
}

func partOfToolchain(p string) bool {
	base := path.Base(p)
	switch {
	case strings.HasSuffix(base, "_test.go"):
		return false
	case strings.HasSuffix(base, ".go"), strings.HasSuffix(base, ".hl"), strings.HasSuffix(base, ".wasm"):
		return true
	case base == "go.mod" || base == "go.sum":
		return true
	}
	return false
}

// BuildOptions are the options that change what a build produces. The
// engine (wasm or native) is deliberately not one of them: both engines
// produce identical runs.
type BuildOptions struct{}

// SourceFile is one file of the program: its logical path and bytes.
type SourceFile struct {
	Path string
	Data []byte
}

// BuildDigest returns the build-input digest of a program: BLAKE3-256
// over the toolchain digest, the version of Go this binary was built with,
// the build options and the program's files (logical paths and bytes, in
// path order). Any change to the toolchain or to a byte of the program, a
// comment included, changes it; the folder the program lives in does not,
// since only logical paths enter it.
//
// The Go version is part of the build's identity because the native engine
// and the host (wazero, the scheduler, the standard library's formatting
// and parsing) are compiled by it: two binaries built from the same
// sources with different Go releases are different toolchains. Build
// paths and flags stay out, so the digest is the same wherever the
// toolchain was built.
func BuildDigest(files []SourceFile, opts BuildOptions) [32]byte {
	return buildDigest(runtime.Version(), files, opts)
}

// buildDigest is BuildDigest for a binary built with Go goVersion.
func buildDigest(goVersion string, files []SourceFile, _ BuildOptions) [32]byte {
	h := blake3.New()
	writeField(h, []byte("hale build digest v2"))
	tc := ToolchainDigest()
	writeField(h, tc[:])
	writeField(h, []byte(goVersion))
	writeField(h, nil) // build options: none yet
	sorted := append([]SourceFile(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	for _, f := range sorted {
		writeField(h, []byte(f.Path))
		writeField(h, f.Data)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// Hex formats a digest as lower-case hex.
func Hex(sum [32]byte) string { return hex.EncodeToString(sum[:]) }

// writeField writes a length-prefixed field so that no two different
// sequences of fields hash the same bytes.
func writeField(h *blake3.Hasher, data []byte) {
	var n [binary.MaxVarintLen64]byte
	_, _ = h.Write(n[:binary.PutUvarint(n[:], uint64(len(data)))])
	_, _ = h.Write(data)
}
