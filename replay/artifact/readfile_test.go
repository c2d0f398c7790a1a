package artifact

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hale-lang/hale/replay/internal/pages"
)

// TestReadFileMatchesOS holds ReadFile to os.ReadFile: the same bytes for
// files of every size around the sizes where it asks for pages at once,
// and the same errors for a missing file and a folder.
func TestReadFileMatchesOS(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 4096, pages.MinBytes - 1, pages.MinBytes, 3<<20 + 5} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*13 + n)
		}
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(path)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(got, b) {
			t.Fatalf("%d bytes: ReadFile read %d bytes, not the file's", n, len(got))
		}
	}
	_, err := ReadFile(filepath.Join(dir, "missing"))
	_, want := os.ReadFile(filepath.Join(dir, "missing"))
	if err == nil || err.Error() != want.Error() || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want %v", err, want)
	}
	_, err = ReadFile(dir)
	_, want = os.ReadFile(dir)
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("folder: %v, want %v", err, want)
	}
}

// TestReadFileGrowing reads a file that is longer than its size said: a
// pipe, whose size is 0, stands for a file that grew after Stat.
func TestReadFileGrowing(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("0123456789"), 100000)
	go func() {
		w.Write(want)
		w.Close()
	}()
	defer r.Close()
	got, err := ReadFile("/dev/fd/" + strconv.Itoa(int(r.Fd())))
	if err != nil {
		t.Skipf("no /dev/fd: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes of %d", len(got), len(want))
	}
}
