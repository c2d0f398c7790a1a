package hale

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCachedDigest: a digest is computed once per executable identity and
// then read from the cache file; another identity, a damaged line or a
// file of another layout computes it again; the file keeps the newest
// digestCacheEntries identities.
func TestCachedDigest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hale", digestCacheFile)
	calls := 0
	value := func(b byte) [32]byte {
		var s [32]byte
		for i := range s {
			s[i] = b + byte(i)
		}
		return s
	}
	digestOf := func(b byte) func() [32]byte {
		return func() [32]byte { calls++; return value(b) }
	}
	key := func(i int) string {
		return strings.Repeat("0", 30) + string("0123456789abcdef"[i/16]) + string("0123456789abcdef"[i%16])
	}
	a := cachedDigest(path, key(1), digestOf(1))
	if calls != 1 {
		t.Fatalf("computed %d times on an empty cache", calls)
	}
	if got := cachedDigest(path, key(1), digestOf(9)); got != a || calls != 1 {
		t.Fatalf("the cached digest was not used: %x (computed %d times)", got, calls)
	}
	if got := cachedDigest(path, key(2), digestOf(2)); got != value(2) || calls != 2 {
		t.Fatalf("another executable got %x", got)
	}
	calls = 0
	if cachedDigest(path, key(1), digestOf(9)) != a || cachedDigest(path, key(2), digestOf(9)) != value(2) || calls != 0 {
		t.Fatal("two executables' digests were not both kept")
	}

	// A damaged line (a digit of the digest changed) is not believed.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	if lines[0] != digestCacheHeader || len(lines) != 4 || !strings.HasPrefix(lines[2], key(1)+" ") {
		t.Fatalf("cache file:\n%s", data)
	}
	fields := strings.Fields(lines[2])
	d := []byte(fields[1])
	d[10] ^= 1
	lines[2] = fields[0] + " " + string(d) + " " + fields[2]
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	calls = 0
	if got := cachedDigest(path, key(1), digestOf(1)); got != a || calls != 1 {
		t.Fatalf("a damaged line gave %x (computed %d times)", got, calls)
	}

	// Another layout is not read.
	if err := os.WriteFile(path, []byte("hale toolchain digests v0\n"+digestLine(key(3), a)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	calls = 0
	if cachedDigest(path, key(3), digestOf(3)); calls != 1 {
		t.Fatal("a cache file of another layout was read")
	}

	// The newest digestCacheEntries stay.
	for i := range 40 {
		cachedDigest(path, key(i), digestOf(byte(i)))
	}
	calls = 0
	for i := 40 - digestCacheEntries; i < 40; i++ {
		if cachedDigest(path, key(i), digestOf(byte(i))) != value(byte(i)) {
			t.Fatalf("wrong digest for key %d", i)
		}
	}
	if calls != 0 {
		t.Fatalf("%d of the newest %d digests were not kept", calls, digestCacheEntries)
	}
	if cachedDigest(path, key(0), digestOf(0)); calls != 1 {
		t.Fatal("the cache grew past digestCacheEntries")
	}
	if n := strings.Count(string(mustRead(t, path)), "\n"); n != digestCacheEntries+1 {
		t.Fatalf("cache file has %d lines", n)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestToolchainDigestCachedForExecutable: the running executable has an
// identity, the same twice, and the digest computed through the cache in
// a fresh cache folder, then read from it, is the digest of the sources.
func TestToolchainDigestCachedForExecutable(t *testing.T) {
	k1, ok1 := executableKey()
	k2, ok2 := executableKey()
	if !ok1 || !ok2 || k1 != k2 || len(k1) != 32 {
		t.Fatalf("executable identity %q %v, %q %v", k1, ok1, k2, ok2)
	}
	want := computeToolchainDigest()
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	t.Setenv("HOME", dir)
	t.Setenv("LocalAppData", dir)
	calls := 0
	compute := func() [32]byte { calls++; return computeToolchainDigest() }
	if got := toolchainDigestCached(compute); got != want || calls != 1 {
		t.Fatalf("first digest %x (computed %d times), want %x", got, calls, want)
	}
	if got := toolchainDigestCached(compute); got != want || calls != 1 {
		t.Fatalf("second digest %x (computed %d times), want %x from the cache", got, calls, want)
	}
	if ToolchainDigest() != want {
		t.Fatal("ToolchainDigest differs from the digest of the sources")
	}
}

// TestExecutableKeyChanges: touching a file (a new modification time)
// or rewriting it in place with its old modification time gives it
// another identity (on Linux, through its status-change time).
func TestExecutableKeyChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "exe")
	if err := os.WriteFile(path, []byte("one"), 0o755); err != nil {
		t.Fatal(err)
	}
	key := func() string {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fileKey(path, fi)
	}
	k0 := key()
	if key() != k0 {
		t.Fatal("the same file has two identities")
	}
	mtime := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	k1 := key()
	if k1 == k0 {
		t.Fatal("a new modification time kept the identity")
	}
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(path, []byte("two"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if k2 := key(); k2 == k1 && fileIdentity(mustStat(t, path)) != "" {
		t.Fatal("a file rewritten with its old size and modification time kept its identity")
	}
}

func mustStat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// FuzzDigestCache gives the toolchain digest cache any file: reading it
// never fails, a digest is believed only from a well-formed line of the
// executable's key whose check holds, a miss leaves a well-formed file
// with the new line first, and a second look finds what the first gave.
func FuzzDigestCache(f *testing.F) {
	const key = "00112233445566778899aabbccddeeff"
	var good [32]byte
	good[0], good[31] = 7, 9
	f.Add([]byte(""))
	f.Add([]byte(digestCacheHeader + "\n" + digestLine(key, good) + "\n"))
	f.Add([]byte(digestCacheHeader + "\n" + digestLine("ffeeddccbbaa99887766554433221100", good) + "\n\n" + key + " zz 00\n"))
	f.Add([]byte("hale toolchain digests v0\n" + digestLine(key, good)))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), digestCacheFile)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var computed [32]byte
		computed[5] = 42
		calls := 0
		compute := func() [32]byte { calls++; return computed }
		got := cachedDigest(path, key, compute)
		if calls == 0 {
			believed := false
			for _, l := range readDigestCacheBytes(data) {
				if k, sum, ok := parseDigestLine(l); ok && k == key && sum == got {
					believed = true
				}
			}
			if !believed {
				t.Fatalf("digest %x believed from no valid line of %q", got, data)
			}
		} else {
			if got != computed {
				t.Fatalf("computed %x, returned %x", computed, got)
			}
			lines := readDigestCache(path)
			if len(lines) == 0 || len(lines) > digestCacheEntries {
				t.Fatalf("rewritten cache has %d lines", len(lines))
			}
			for i, l := range lines {
				k, sum, ok := parseDigestLine(l)
				if !ok || (i == 0 && (k != key || sum != computed)) {
					t.Fatalf("rewritten line %d %q", i, l)
				}
			}
		}
		calls = 0
		if again := cachedDigest(path, key, compute); again != got || calls != 0 {
			t.Fatalf("second look: %x (computed %d times), first %x", again, calls, got)
		}
	})
}

// readDigestCacheBytes is readDigestCache of a file holding data.
func readDigestCacheBytes(data []byte) []string {
	dir, err := os.MkdirTemp("", "digests")
	if err != nil {
		return nil
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "f")
	if os.WriteFile(path, data, 0o644) != nil {
		return nil
	}
	return readDigestCache(path)
}
