package effects

import (
	"encoding/json"
	"io"
	"strings"
)

// WriteText writes one line per entry: kind and name in a left-aligned
// column as wide as the longest plus two spaces, then the effect set.
func (i *Info) WriteText(w io.Writer) error {
	width := 0
	for _, e := range i.entries {
		width = max(width, len(e.Kind)+1+len(e.Name))
	}
	var b strings.Builder
	for _, e := range i.entries {
		label := e.Kind + " " + e.Name
		b.WriteString(label)
		b.WriteString(strings.Repeat(" ", width-len(label)+2))
		b.WriteString(e.Effects.String())
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type jsonEntry struct {
	Kind     string   `json:"kind"`
	Name     string   `json:"name"`
	Position string   `json:"position"`
	Effects  []string `json:"effects"`
}

// WriteJSON writes {"entries":[{"kind":…,"name":…,"position":…,"effects":[…]},…]}
// on one line.
func (i *Info) WriteJSON(w io.Writer) error {
	out := struct {
		Entries []jsonEntry `json:"entries"`
	}{Entries: []jsonEntry{}}
	for _, e := range i.entries {
		out.Entries = append(out.Entries, jsonEntry{e.Kind, e.Name, e.Pos.String(), e.Effects.Slice()})
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
