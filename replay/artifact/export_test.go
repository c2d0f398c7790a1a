package artifact

import (
	"io"
	"os"
)

// Test-only shorthands.

// readFile reads and strictly decodes the artifact at path.
func readFile(path string) (*Artifact, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(data)
}

// read reads all of r and strictly decodes it.
func read(r io.Reader) (*Artifact, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return Decode(data)
}

// diff compares recorded with replayed without a value decoder.
func diff(recorded, replayed *Artifact) *Report {
	return Differ{}.Diff(recorded, replayed)
}
