package timeline

import (
	"encoding/json"
	"io"
)

// The Chrome Trace Event Format (the JSON Perfetto and chrome://tracing
// open): one process, a thread per lane, an "X" slice per delivery, a
// flow ("s" then "f", bound to the enclosing slices) per arrow and an
// instant event per trap or exit. Timestamps are microseconds in the
// format; here they are logical steps (entry indices), so "1 µs" on
// screen reads "one entry".

// TraceEvent is one event of the Trace Event Format. Fields left empty
// are left out, so each phase carries only its own keys.
type TraceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   *int           `json:"ts,omitempty"`
	Dur  *int           `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	ID   *int           `json:"id,omitempty"`
	BP   string         `json:"bp,omitempty"`
	S    string         `json:"s,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// TraceFile is the JSON object form of the format.
type TraceFile struct {
	TraceEvents []TraceEvent   `json:"traceEvents"`
	OtherData   map[string]any `json:"otherData"`
}

const tracePid = 1

// tid gives lane i its thread id; 0 is avoided, some viewers treat it
// specially.
func tid(lane int) int { return lane + 1 }

func intp(v int) *int { return &v }

// Perfetto converts the timeline to the Trace Event Format. title names
// the process (the artifact's path).
func (t *Timeline) Perfetto(title string) *TraceFile {
	f := &TraceFile{TraceEvents: []TraceEvent{},
		OtherData: map[string]any{"time_axis": "logical: one unit per artifact entry", "source": title}}
	add := func(e TraceEvent) { f.TraceEvents = append(f.TraceEvents, e) }
	add(TraceEvent{Name: "process_name", Ph: "M", Pid: tracePid, Args: map[string]any{"name": "hale " + title}})
	for i, l := range t.Lanes {
		add(TraceEvent{Name: "thread_name", Ph: "M", Pid: tracePid, Tid: tid(i), Args: map[string]any{"name": l.Label()}})
		add(TraceEvent{Name: "thread_sort_index", Ph: "M", Pid: tracePid, Tid: tid(i), Args: map[string]any{"sort_index": i}})
	}
	for _, b := range t.Boxes {
		args := map[string]any{"coordinate": b.Coordinate, "target": b.Target, "message": b.Message, "entry": b.Entry}
		if b.Payload != nil {
			args["payload"] = b.Payload
		}
		add(TraceEvent{Name: b.Target + " on " + b.Topic, Cat: "delivery", Ph: "X", Ts: intp(b.Step), Dur: intp(b.End - b.Step),
			Pid: tracePid, Tid: tid(b.Lane), Args: args})
	}
	// A publish outside any handler (a program's main block) has no slice
	// to start its flow from: it gets a one-step slice of its own, which
	// cannot overlap a box since its consumer runs no handler then.
	outside := map[int]bool{}
	for i, a := range t.Arrows {
		if a.FromBox < 0 && !outside[a.Step] {
			outside[a.Step] = true
			add(TraceEvent{Name: "publish " + a.Message, Cat: "publish", Ph: "X", Ts: intp(a.Step), Dur: intp(1), Pid: tracePid, Tid: tid(a.Lane)})
		}
		to := t.Boxes[a.ToBox]
		add(TraceEvent{Name: "message " + a.Message, Cat: "message", Ph: "s", Ts: intp(a.Step), Pid: tracePid, Tid: tid(a.Lane), ID: intp(i)})
		add(TraceEvent{Name: "message " + a.Message, Cat: "message", Ph: "f", BP: "e", Ts: intp(to.Step), Pid: tracePid, Tid: tid(to.Lane), ID: intp(i)})
	}
	for _, m := range t.Marks {
		add(TraceEvent{Name: m.Kind + ": " + m.Text, Cat: m.Kind, Ph: "i", S: "t", Ts: intp(m.Step), Pid: tracePid, Tid: tid(m.Lane),
			Args: map[string]any{"position": m.Position}})
	}
	return f
}

// WritePerfetto writes the timeline as Trace Event Format JSON.
func (t *Timeline) WritePerfetto(w io.Writer, title string) error {
	enc := json.NewEncoder(w)
	return enc.Encode(t.Perfetto(title))
}
