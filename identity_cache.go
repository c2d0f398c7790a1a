package hale

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/zeebo/blake3"
)

// The toolchain digest is a property of the executable: of the sources it
// embeds. Hashing them cost every recorded run and every replay about 10
// ms of CPU (the hashing of 5 MB, and faulting that much of the
// executable into memory, which a native run does not otherwise touch),
// so it is kept in the user cache folder, beside the wasm engine's
// compiled code, under the executable's identity: its path, size and
// modification time and, on Linux, its device, inode and status-change
// time, which no rewrite of the file leaves as it was. Any other
// executable, or this one rebuilt, replaced or touched, computes it again.
//
// The cache is one small file, digestCacheFile: a first line naming its
// layout, then up to digestCacheEntries lines "KEY DIGEST CHECK", newest
// first, each in hex. CHECK is a hash of the two, so that a damaged line
// is not believed. Writing it goes through a temporary file renamed into
// place; a cache that cannot be read or written only costs the hashing.

const (
	digestCacheFile    = "toolchain-digests"
	digestCacheHeader  = "hale toolchain digests v1"
	digestCacheEntries = 16
)

// toolchainDigestCached returns the digest of this executable's sources
// from the cache, or compute's, which it then caches.
func toolchainDigestCached(compute func() [32]byte) [32]byte {
	dir, err := os.UserCacheDir()
	key, ok := executableKey()
	if err != nil || dir == "" || !ok {
		return compute()
	}
	return cachedDigest(filepath.Join(dir, "hale", digestCacheFile), key, compute)
}

// cachedDigest looks key up in the cache file at path; on a miss it
// calls compute and writes the file again with the new line first.
func cachedDigest(path, key string, compute func() [32]byte) [32]byte {
	lines := readDigestCache(path)
	for _, l := range lines {
		if k, sum, ok := parseDigestLine(l); ok && k == key {
			return sum
		}
	}
	sum := compute()
	kept := []string{digestLine(key, sum)}
	for _, l := range lines {
		if k, _, ok := parseDigestLine(l); ok && k != key && len(kept) < digestCacheEntries {
			kept = append(kept, l)
		}
	}
	writeDigestCache(path, kept)
	return sum
}

// executableKey is the identity of the running executable (hex), or false
// when it cannot be found.
func executableKey() (string, bool) {
	exe, err := os.Executable()
	if err != nil {
		return "", false
	}
	fi, err := os.Stat(exe)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return fileKey(exe, fi), true
}

// fileKey is the identity (hex) of the file at path, whose information
// is fi.
func fileKey(path string, fi os.FileInfo) string {
	h := blake3.New()
	writeField(h, []byte("hale executable v1"))
	writeField(h, []byte(path))
	writeField(h, []byte(strconv.FormatInt(fi.Size(), 10)))
	writeField(h, []byte(strconv.FormatInt(fi.ModTime().UnixNano(), 10)))
	writeField(h, []byte(fileIdentity(fi)))
	writeField(h, []byte(runtime.Version()))
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// digestLine is the cache line of key and sum.
func digestLine(key string, sum [32]byte) string {
	d := hex.EncodeToString(sum[:])
	return key + " " + d + " " + digestCheck(key, d)
}

// digestCheck is the CHECK field of a line holding key and digest (hex).
func digestCheck(key, digest string) string {
	h := blake3.New()
	writeField(h, []byte(digestCacheHeader))
	writeField(h, []byte(key))
	writeField(h, []byte(digestCacheHeader))
	writeField(h, []byte(digest))
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// parseDigestLine reads a cache line; ok is false for anything but a
// well-formed line whose check holds.
func parseDigestLine(l string) (key string, sum [32]byte, ok bool) {
	f := bytes.Fields([]byte(l))
	if len(f) != 3 || len(f[0]) != 32 || len(f[1]) != 64 || len(f[2]) != 16 {
		return "", sum, false
	}
	key, digest := string(f[0]), string(f[1])
	if _, err := hex.DecodeString(key); err != nil || digestCheck(key, digest) != string(f[2]) {
		return "", sum, false
	}
	if _, err := hex.Decode(sum[:], f[1]); err != nil {
		return "", sum, false
	}
	return key, sum, true
}

// readDigestCache returns the entry lines of the cache file at path,
// none when it is missing, too large or not of this layout.
func readDigestCache(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 64<<10 {
		return nil
	}
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) == 0 || string(lines[0]) != digestCacheHeader {
		return nil
	}
	var out []string
	for _, l := range lines[1:] {
		if len(l) > 0 {
			out = append(out, string(l))
		}
	}
	return out
}

// writeDigestCache replaces the cache file at path with lines, through a
// temporary file renamed into place; failures are ignored.
func writeDigestCache(path string, lines []string) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	f, err := os.CreateTemp(dir, "."+digestCacheFile+".tmp-*")
	if err != nil {
		return
	}
	var b bytes.Buffer
	b.WriteString(digestCacheHeader + "\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	_, werr := f.Write(b.Bytes())
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), path) != nil {
		os.Remove(f.Name())
	}
}
