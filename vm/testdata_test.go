package vm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hale-lang/hale/vm/value"
)

// TestCodegenTestdata runs the code generator's golden programs, whose
// expected output sits in a comment block at their end.
func TestCodegenTestdata(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "codegen", "testdata", "*.hl"))
	if len(paths) == 0 {
		t.Fatal("no programs")
	}
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, ok := expectedOutput(string(src))
		if !ok {
			t.Errorf("%s: no expected output", path)
			continue
		}
		h := &fakeHost{serve: func(id uint16, args []byte) ([]byte, error) {
			if id == primID(t, "std::time::now_ms") {
				return encode(t, value.Int(1000)), nil
			}
			return nil, nil // sleep_ms, println
		}}
		_, err = run(t, compile(t, string(src)), h)
		if got := report(h.out.String(), err); got != want {
			t.Errorf("%s: got:\n%s\nwant:\n%s", path, got, want)
		}
	}
}

// expectedOutput returns the lines of the program's trailing
// `// Output:` comment block.
func expectedOutput(src string) (string, bool) {
	i := strings.LastIndex(src, "// Output:\n")
	if i < 0 {
		return "", false
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(src[i+len("// Output:\n"):], "\n"), "\n") {
		b.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "//"), " "))
		b.WriteByte('\n')
	}
	return b.String(), true
}
