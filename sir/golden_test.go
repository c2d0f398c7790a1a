package sir

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestGolden lowers every testdata program and compares its SIR text
// (NAME.sir) and its shape graph (NAME.shape) with the golden files.
func TestGolden(t *testing.T) {
	for name, files := range testdataPrograms(t) {
		t.Run(name, func(t *testing.T) {
			p, err := lowerFiles(files)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := p.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", name+".sir"), b.Bytes())
			b.Reset()
			if err := BuildShape(p).WriteText(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", name+".shape"), b.Bytes())
		})
	}
}
