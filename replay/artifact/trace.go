package artifact

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hale-lang/hale/internal/termsafe"
)

// Summary is what `hale trace summary` shows. The JSON keys are part of
// the CLI's contract; fields tagged "-" appear in the text form only.
type Summary struct {
	FormatVersion uint64            `json:"format_version"`
	HaleVersion   string            `json:"hale_version"`
	Created       string            `json:"created"` // RFC 3339, UTC
	BuildDigest   string            `json:"build_digest"`
	ShapeHash     string            `json:"shape_hash"`
	EnvPolicy     string            `json:"env_policy"`
	Complete      bool              `json:"complete"`
	Consumers     []ConsumerSummary `json:"consumers"`
	Entries       uint64            `json:"entries"`
	ByKind        map[string]uint64 `json:"by_kind"`
	// ProcessID is the header's process id as 16 hex digits ("" when 0)
	// and Bindings its nats bindings and exports (format 3).
	ProcessID string           `json:"process_id,omitempty"`
	Bindings  []BindingSummary `json:"bindings,omitempty"`

	Files       []string `json:"-"`
	MemoryLimit int64    `json:"-"` // 0: not recorded
	Verdict     string   `json:"-"` // "" when incomplete
	ExitCode    int64    `json:"-"`
	Problem     string   `json:"-"` // why the artifact is incomplete
}

// BindingSummary is one nats binding or export, with the number of
// messages that crossed it: ingress entries of the binding's consumer, or
// nats output entries on the export's subject.
type BindingSummary struct {
	Kind     string  `json:"kind"` // "bind" or "export"
	Topic    string  `json:"topic"`
	Subject  string  `json:"subject"`
	Queue    string  `json:"queue,omitempty"`
	Consumer *uint32 `json:"consumer,omitempty"` // bind: its consumer
	Messages uint64  `json:"messages"`
}

// ConsumerSummary is one consumer and its number of entries.
type ConsumerSummary struct {
	ID      uint32 `json:"id"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Entries uint64 `json:"entries"`
}

// Summarize summarises an artifact read by Salvage; problem is the error
// Salvage returned with it, or nil. Counts are those of the entries
// present, so a truncated artifact is summarised up to its cut.
func Summarize(a *Artifact, problem error) *Summary {
	a = a.full()
	s := &Summary{
		FormatVersion: a.Version,
		HaleVersion:   a.Header.HaleVersion,
		Created:       time.Unix(0, a.Header.Created).UTC().Format(time.RFC3339Nano),
		BuildDigest:   hexDigest(a.Header.BuildDigest),
		ShapeHash:     hexDigest(a.Header.ShapeHash),
		EnvPolicy:     a.Header.EnvPolicy,
		Complete:      a.Complete && problem == nil,
		Consumers:     []ConsumerSummary{},
		Entries:       uint64(len(a.Entries)),
		ByKind:        map[string]uint64{},
		Files:         a.Header.Files,
		MemoryLimit:   a.Header.MemoryLimit,
	}
	last := KindExit
	if a.Version >= 3 {
		last = KindIngress
	}
	for k := KindInvocation; k <= last; k++ {
		s.ByKind[k.String()] = 0
	}
	if a.Header.ProcessID != 0 {
		s.ProcessID = fmt.Sprintf("%016x", a.Header.ProcessID)
	}
	counts := map[uint32]uint64{}
	sent := map[string]uint64{} // nats outputs by subject
	for _, e := range a.Entries {
		s.ByKind[e.Body.Kind().String()]++
		counts[e.Consumer]++
		if o, ok := e.Body.(Output); ok && o.Channel == ChannelNATS {
			if subject, _, _, err := NATSArgs(o.Args); err == nil {
				sent[subject]++
			}
		}
	}
	for _, b := range a.Header.Bindings {
		bs := BindingSummary{Kind: b.Kind, Topic: b.Topic, Subject: b.Subject, Queue: b.Queue}
		if b.Kind == BindingIngress {
			c := b.Consumer
			bs.Consumer, bs.Messages = &c, 0
			for _, e := range a.Entries {
				if _, ok := e.Body.(Ingress); ok && e.Consumer == c {
					bs.Messages++
				}
			}
		} else {
			bs.Messages = sent[b.Subject]
		}
		s.Bindings = append(s.Bindings, bs)
	}
	listed := map[uint32]bool{}
	for _, c := range a.Header.Consumers {
		s.Consumers = append(s.Consumers, ConsumerSummary{ID: c.ID, Kind: c.Kind, Name: c.Name, Entries: counts[c.ID]})
		listed[c.ID] = true
	}
	// Entries of consumers missing from the table are still counted, so
	// that the per-consumer counts add up to the total.
	var extra []uint32
	for id := range counts {
		if !listed[id] {
			extra = append(extra, id)
		}
	}
	slices.Sort(extra)
	for _, id := range extra {
		s.Consumers = append(s.Consumers, ConsumerSummary{ID: id, Kind: "unlisted", Entries: counts[id]})
	}
	if s.Complete {
		s.Verdict, s.ExitCode = a.Trailer.Verdict, a.Trailer.ExitCode
	}
	if problem != nil {
		s.Problem = problem.Error()
	}
	return s
}

// WriteText writes the summary for a person to read. The strings come
// from the artifact, which may be forged: each is escaped (termsafe), a
// tab included, since a tab would shift the columns.
func (s *Summary) WriteText(w io.Writer) error {
	esc := func(s string) string { return strings.ReplaceAll(termsafe.String(s), "\t", `\t`) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "format version\t%d\n", s.FormatVersion)
	fmt.Fprintf(tw, "hale version\t%s\n", esc(s.HaleVersion))
	fmt.Fprintf(tw, "created\t%s\n", esc(s.Created))
	fmt.Fprintf(tw, "build digest\t%s\n", esc(s.BuildDigest))
	fmt.Fprintf(tw, "shape hash\t%s\n", esc(s.ShapeHash))
	fmt.Fprintf(tw, "env policy\t%s\n", esc(s.EnvPolicy))
	if len(s.Files) > 0 {
		fmt.Fprintf(tw, "files\t%s\n", esc(strings.Join(s.Files, " ")))
	}
	if s.MemoryLimit > 0 {
		fmt.Fprintf(tw, "memory limit\t%s per consumer\n", formatBytes(s.MemoryLimit))
	}
	if s.ProcessID != "" {
		fmt.Fprintf(tw, "process id\t%s\n", esc(s.ProcessID))
	}
	if s.Complete {
		fmt.Fprintf(tw, "complete\tyes (verdict %s, exit code %d)\n", esc(s.Verdict), s.ExitCode)
	} else {
		fmt.Fprintf(tw, "complete\tno: %s\n", esc(s.Problem))
	}
	fmt.Fprintf(tw, "entries\t%d\n", s.Entries)
	kinds := make([]string, 0, len(s.ByKind))
	for k := range s.ByKind {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b string) int { return kindRank(a) - kindRank(b) })
	for _, k := range kinds {
		fmt.Fprintf(tw, "  %s\t%d\n", esc(k), s.ByKind[k])
	}
	fmt.Fprintf(tw, "consumers\t%d\n", len(s.Consumers))
	if err := tw.Flush(); err != nil {
		return err
	}
	// The consumer table is aligned on its own.
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  id\tkind\tname\tentries\n")
	for _, c := range s.Consumers {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%d\n", c.ID, esc(c.Kind), esc(c.Name), c.Entries)
	}
	if len(s.Bindings) == 0 {
		return tw.Flush()
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "bindings     %d\n", len(s.Bindings))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  kind\ttopic\tsubject\tqueue\tconsumer\tmessages\n")
	for _, b := range s.Bindings {
		q, c := "-", "-"
		if b.Queue != "" {
			q = esc(b.Queue)
		}
		if b.Consumer != nil {
			c = strconv.FormatUint(uint64(*b.Consumer), 10)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d\n", esc(b.Kind), esc(b.Topic), esc(b.Subject), q, c, b.Messages)
	}
	return tw.Flush()
}

// kindRank orders kind names as the format numbers them, unknown last.
func kindRank(name string) int {
	for k := KindInvocation; k <= KindIngress; k++ {
		if k.String() == name {
			return int(k)
		}
	}
	return int(KindIngress) + 1
}

// ValueDecoder gives a JSON-ready view of canonical value bytes for trace
// dump. field is "payload", "args" or "result"; hint is the topic for a
// payload and the primitive for arguments and results. It returns false
// when it cannot decode the bytes, and the view is then left out.
type ValueDecoder func(field, hint string, data []byte) (any, bool)

// Dump writes one JSON object per entry, one per line, in file order.
// Every object has index, consumer, seq and kind, then the kind's fields;
// byte fields appear as lower-case hex (payload_hex, args_hex,
// result_hex, data_hex) and, when decode is not nil and succeeds, also as
// decoded views (payload, args, result). A delivery also carries its
// coordinate ("C:N") and its bare coordinate (delivery, its number in
// file order). Every character that is not printable is escaped
// (termsafe.JSON), so the dump is safe to print on a terminal.
func Dump(w io.Writer, a *Artifact, decode ValueDecoder) error {
	a = a.full()
	// encoding/json escapes the C0 controls but not DEL or C1 controls,
	// which a forged artifact or a program's output may hold.
	enc := json.NewEncoder(termsafe.JSONWriter(w))
	enc.SetEscapeHTML(false)
	view := func(field, hint string, data []byte) any {
		if decode == nil {
			return nil
		}
		if v, ok := decode(field, hint, data); ok {
			return v
		}
		return nil
	}
	deliveries := map[uint32]uint64{}
	var bare uint64
	for i, e := range a.Entries {
		head := dumpHead{Index: i, Consumer: e.Consumer, Seq: e.Seq, Kind: e.Body.Kind().String()}
		var rec any
		switch x := e.Body.(type) {
		case Invocation:
			call := dumpCall(x.Primitive, x.Args, x.Outcome, x.Result, x.Length, x.TrapKind, x.Message, view)
			rec = struct {
				dumpHead
				dumpCallFields
			}{head, call}
		case Output:
			call := dumpCall(x.Primitive, x.Args, x.Outcome, x.Result, x.Length, x.TrapKind, x.Message, view)
			var text *string
			if x.Outcome == OK && (x.Channel == ChannelStdout || x.Channel == ChannelStderr) {
				t := string(x.Result)
				text = &t
			}
			rec = struct {
				dumpHead
				Channel string `json:"channel"`
				dumpCallFields
				Text *string `json:"text,omitempty"`
			}{head, x.Channel, call, text}
		case Publish:
			rec = struct {
				dumpHead
				Topic      string `json:"topic"`
				Message    string `json:"message"`
				PayloadHex string `json:"payload_hex"`
				Payload    any    `json:"payload,omitempty"`
				DelayMS    uint64 `json:"delay_ms"`
			}{head, x.Topic, x.Message.String(), hex.EncodeToString(x.Payload), view("payload", x.Topic, x.Payload), x.DelayMS}
		case Delivery:
			msg := "start"
			if !x.Start {
				msg = x.Message.String()
			}
			rec = struct {
				dumpHead
				Target     string `json:"target"`
				Message    string `json:"message"`
				Topic      string `json:"topic"`
				Coordinate string `json:"coordinate"`
				Delivery   uint64 `json:"delivery"`
			}{head, x.Target, msg, x.Topic, Coordinate{e.Consumer, deliveries[e.Consumer]}.String(), bare}
			deliveries[e.Consumer]++
			bare++
		case Trap:
			stack := x.Stack
			if stack == nil {
				stack = []string{}
			}
			rec = struct {
				dumpHead
				Message    string   `json:"message"`
				Position   string   `json:"position"`
				Stack      []string `json:"stack"`
				Coordinate *string  `json:"coordinate"`
				TrapKind   string   `json:"trap_kind,omitempty"`
			}{head, x.Message, x.Position, stack, coordinateString(x.At), x.TrapKind}
		case Exit:
			rec = struct {
				dumpHead
				Code       int64   `json:"code"`
				Position   string  `json:"position"`
				Coordinate *string `json:"coordinate"`
			}{head, x.Code, x.Position, coordinateString(x.At)}
		case Ingress:
			topic := ""
			for _, b := range a.Header.Bindings {
				if b.Kind == BindingIngress && b.Consumer == e.Consumer {
					topic = b.Topic
				}
			}
			rec = struct {
				dumpHead
				Subject    string `json:"subject"`
				MsgID      string `json:"msg_id"`
				Topic      string `json:"topic,omitempty"`
				PayloadHex string `json:"payload_hex"`
				Payload    any    `json:"payload,omitempty"`
			}{head, x.Subject, x.MsgID, topic, hex.EncodeToString(x.Payload), view("payload", topic, x.Payload)}
		case Unknown:
			rec = struct {
				dumpHead
				Code    uint64 `json:"code"`
				DataHex string `json:"data_hex"`
			}{head, uint64(x.Code), hex.EncodeToString(x.Data)}
		default:
			return fmt.Errorf("entry %d: unsupported entry body %T", i, e.Body)
		}
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	return nil
}

type dumpHead struct {
	Index    int    `json:"index"`
	Consumer uint32 `json:"consumer"`
	Seq      uint64 `json:"seq"`
	Kind     string `json:"kind"`
}

// dumpCallFields are the fields invocations and outputs share; only those
// of the call's outcome are present.
type dumpCallFields struct {
	Primitive string  `json:"primitive"`
	ArgsHex   string  `json:"args_hex"`
	Args      any     `json:"args,omitempty"`
	Outcome   string  `json:"outcome"`
	ResultHex *string `json:"result_hex,omitempty"`
	Result    any     `json:"result,omitempty"`
	Length    *uint64 `json:"length,omitempty"`
	Message   *string `json:"message,omitempty"`
	TrapKind  string  `json:"trap_kind,omitempty"` // absent in a format 1 artifact
}

func dumpCall(prim string, args []byte, o Outcome, result []byte, length uint64, kind, message string,
	view func(field, hint string, data []byte) any) dumpCallFields {
	f := dumpCallFields{Primitive: prim, ArgsHex: hex.EncodeToString(args), Args: view("args", prim, args), Outcome: o.String()}
	switch o {
	case OK:
		h := hex.EncodeToString(result)
		f.ResultHex, f.Result = &h, view("result", prim, result)
	case Withheld:
		f.Length = &length
	case Trapped:
		f.Message, f.TrapKind = &message, kind
	}
	return f
}

func coordinateString(c *Coordinate) *string {
	if c == nil {
		return nil
	}
	s := c.String()
	return &s
}

// formatBytes writes a byte count as the memory limit is written (see
// vm.FormatBytes, which this package does not import): in GiB, MiB or KiB
// when it is a whole number of them, else in bytes.
func formatBytes(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
