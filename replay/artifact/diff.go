package artifact

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/hale-lang/hale/internal/termsafe"
)

// How `hale replay --diff` compares two runs.
//
// Replay fixes the order of each consumer's deliveries and nothing else,
// so the only order two runs can be compared in is per consumer: the
// entries of one consumer, in seq order, form its stream, and the
// interleaving of different consumers in the file is not compared (two
// runs whose streams are equal consumer by consumer are identical, however
// the entries interleave). Diff walks the recorded and the replayed
// stream of every consumer in step and stops at the first pair of entries
// that differ, or where one stream ends before the other. Up to that
// point the two streams are equal, so the entry's place (which delivery's
// handler run it belongs to, which call of that run it is) is the same on
// both sides.
//
// The pair is classified by what the two entries are:
//
//   - both the same kind: the fields that differ decide (a call with a
//     different primitive or arguments is a journal miss; the same call
//     with another outcome is a changed result, or a missing input when a
//     withheld value could not be supplied; and so on);
//   - one side is a trap or an exit: changed_trap or changed_exit;
//   - the recording's entry is a delivery (its handler run ended there)
//     or the recording's stream ended: the replay did something extra,
//     named after the replay's entry (input_past_journal, extra_publish,
//     unexpected_delivery, changed_output);
//   - otherwise the recording's entry did not happen in the replay, named
//     after it (unused_input, missing_publish, missing_delivery,
//     changed_output).
//
// A delivery that differs from the recorded one is missing_delivery when
// the recorded delivery does not occur in the rest of the replay's
// stream, unexpected_delivery when the replayed one does not occur in the
// rest of the recording's, and reordered_delivery when both occur later
// on the other side.
//
// Each consumer has at most one divergence, its first. The report's first
// divergence is the one whose entry comes earliest in the replayed
// artifact's file order; a divergence with no replayed entry (the
// replay's stream had ended) is placed by its recorded entry's index
// instead, which approximates when the missing entry should have
// happened. Equal indices go to the divergence with a replayed entry,
// then to the lower consumer. A different verdict or exit code in the
// trailers comes after every entry, as the trailer does.
//
// Header fields are not compared: admission compares the identities, and the
// creation time and env policy may differ. Entries of kinds this version
// does not know are left out of the streams.

// DivergenceKind classifies a divergence.
type DivergenceKind string

// Divergence kinds.
const (
	JournalMiss        DivergenceKind = "journal_miss"        // a call with another primitive or arguments
	ChangedResult      DivergenceKind = "changed_result"      // the same call, another outcome, result, length or redaction
	MissingInput       DivergenceKind = "missing_input"       // a withheld value the replay could not supply
	UnusedInput        DivergenceKind = "unused_input"        // a recorded call the replay never made
	InputPastJournal   DivergenceKind = "input_past_journal"  // a call the recording has no entry for
	ExtraPublish       DivergenceKind = "extra_publish"       // a publish the recording does not have there
	MissingPublish     DivergenceKind = "missing_publish"     // a recorded publish the replay did not make
	ChangedPayload     DivergenceKind = "changed_payload"     // the same message with other payload bytes (or, for a timer, another delay_ms)
	MissingDelivery    DivergenceKind = "missing_delivery"    // a recorded delivery the replay never handled
	UnexpectedDelivery DivergenceKind = "unexpected_delivery" // a replayed delivery the recording never had
	ReorderedDelivery  DivergenceKind = "reordered_delivery"  // the same delivery at another position
	ChangedOutput      DivergenceKind = "changed_output"      // an output that differs, is missing or is extra
	ChangedTrap        DivergenceKind = "changed_trap"        // a trap that differs, is missing or is extra
	ChangedExit        DivergenceKind = "changed_exit"        // an exit that differs, is missing or is extra
	ChangedVerdict     DivergenceKind = "verdict"             // the trailers' verdicts or exit codes differ
)

// Report verdicts, the `verdict` of `hale replay --json`.
const (
	ReportIdentical = "identical"
	ReportDiverged  = "diverged"
	ReportRefused   = "refused"
)

// Report is the outcome of a replay: what WriteText and WriteJSON print.
// Differ.Diff fills it in; the caller adds what only the replayer knows
// (OrderTimeouts) and may set the first divergence's Position before
// printing.
type Report struct {
	Verdict string // ReportIdentical, ReportDiverged or ReportRefused

	// Consumers counts the replayed artifact's consumers that handle
	// deliveries: every consumer in its table except ingress consumers,
	// which only publish.
	Consumers int
	// Deliveries and JournalCalls count the replayed run's delivery and
	// invocation entries (the inputs served from the journal; outputs
	// are not counted).
	Deliveries   int
	JournalCalls int
	// JournalMisses counts the calls that did not match the recorded call
	// at the same place in their consumer's journal (the recorded
	// invocations of the consumer, in order), Unconsumed the recorded
	// invocations beyond the replayed ones (inputs never read), and
	// Unexpected the replayed deliveries that the recording does not have
	// on that consumer.
	JournalMisses int
	Unconsumed    int
	Unexpected    int
	// OrderTimeouts is counted by the replayer, which sets it.
	OrderTimeouts int

	// Divergences holds each consumer's first divergence, and the
	// verdict's, first divergence first. Empty when identical.
	Divergences []*Divergence

	// Reason says why the artifact was refused.
	Reason string
}

// Divergence is the first place where one consumer's recorded and
// replayed streams differ, or a difference between the trailers.
type Divergence struct {
	Kind DivergenceKind
	// At is C:N: the consumer, and the number of the delivery during
	// whose handler run the divergence happened (for a divergent delivery,
	// its own number).
	At Coordinate
	// Startup is set when the divergence came before the consumer's
	// first delivery; At.N is then 0, the delivery that was next.
	Startup bool
	// End is set for a verdict divergence, which has no coordinate.
	End bool
	// RecordedEntry and ReplayedEntry index the two entries in their
	// artifacts' Entries; -1 when that side has none.
	RecordedEntry, ReplayedEntry int
	// Recorded and Replayed describe the two entries briefly; "" when
	// that side has none.
	Recorded, Replayed string
	// Handler is the delivery whose handler was running (the replayed
	// one when both runs had it), or the divergent delivery itself; nil
	// in start-up and for a verdict. The CLI finds the handler's source
	// position from it.
	Handler *Delivery
	// Sentence explains the divergence: "consumer 2: delivery #41 was …".
	Sentence string
	// Position is the source position shown under the sentence, as
	// "app.hl:31:9 in Ledger.on OrderPlaced"; "" when unknown. Diff fills
	// it in from a trap's innermost frame when the replay trapped at the
	// divergence; the caller may set or replace it.
	Position string
}

// Differ compares a recording with its replay. The zero value is ready
// to use.
type Differ struct {
	// Decode, when not nil, renders payloads, arguments and results in
	// descriptions; bytes it cannot decode are shown as hex. A panic in
	// it counts as "cannot decode".
	Decode ValueDecoder
}

// Diff compares the two artifacts in both directions, consumer by
// consumer, and reports the first divergence of each. A nil artifact
// counts as one with no entries.
func (df Differ) Diff(recorded, replayed *Artifact) *Report {
	if recorded == nil {
		recorded = &Artifact{}
	}
	if replayed == nil {
		replayed = &Artifact{}
	}
	rep := &Report{Verdict: ReportIdentical}
	for _, c := range replayed.Header.Consumers {
		if c.Kind != ConsumerIngress {
			rep.Consumers++
		}
	}
	for i := range replayed.Len() {
		switch _, _, kind := replayed.head(i); kind {
		case KindDelivery:
			rep.Deliveries++
		case KindInvocation:
			rep.JournalCalls++
		}
	}

	rs, ps := streams(recorded), streams(replayed)
	ids := make([]uint32, 0, len(rs)+len(ps))
	for id := range rs {
		ids = append(ids, id)
	}
	for id := range ps {
		if _, ok := rs[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	rd := render{decode: df.Decode}
	for _, id := range ids {
		if sameStreams(recorded, rs[id], replayed, ps[id]) {
			continue // no divergence, nothing to count
		}
		rec, re := newSide(recorded, rs[id]), newSide(replayed, ps[id])
		rep.tally(rec, re)
		if d := rd.walk(id, rec, re); d != nil {
			rep.Divergences = append(rep.Divergences, d)
		}
	}

	rt, pt := recorded.Trailer, replayed.Trailer
	if !sameEnding(rt, pt) {
		r, p := verdictText(rt), verdictText(pt)
		rep.Divergences = append(rep.Divergences, &Divergence{
			Kind: ChangedVerdict, End: true, RecordedEntry: -1, ReplayedEntry: -1,
			Recorded: r, Replayed: p,
			Sentence: "the run ended with " + r + " in the recording, but " + p + " in the replay",
		})
	}

	// When the replay stopped where the recording did not (a trap, say a
	// journal miss, or an exit), every consumer's stream ends there, and
	// what the recording has after that is a consequence of the stop, not
	// a place where the runs first disagreed, however early its recorded
	// entry. Those divergences then come after the ones the replay has an
	// entry for.
	stoppedEarly := rt.Verdict != pt.Verdict && (pt.Verdict == VerdictTrap || pt.Verdict == VerdictExit)
	rank := func(d *Divergence) int {
		switch {
		case d.End:
			return 2
		case stoppedEarly && d.ReplayedEntry < 0:
			return 1
		}
		return 0
	}
	slices.SortStableFunc(rep.Divergences, func(a, b *Divergence) int {
		if c := cmp.Compare(rank(a), rank(b)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.order(), b.order()); c != 0 {
			return c
		}
		// At equal indices, an entry the replay has comes first.
		if c := boolCompare(a.ReplayedEntry < 0, b.ReplayedEntry < 0); c != 0 {
			return c
		}
		return cmp.Compare(a.At.Consumer, b.At.Consumer)
	})
	if len(rep.Divergences) > 0 {
		rep.Verdict = ReportDiverged
	}
	return rep
}

// Prefer moves the divergence of the given kind at coordinate at, if the
// report has one, to the front, keeping the others in order.
func (r *Report) Prefer(kind DivergenceKind, at Coordinate) {
	for i, d := range r.Divergences {
		if !d.End && d.Kind == kind && d.At == at {
			copy(r.Divergences[1:i+1], r.Divergences[:i])
			r.Divergences[0] = d
			return
		}
	}
}

// boolCompare orders false before true.
func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// order places a divergence in file order: its replayed entry's index,
// else its recorded entry's, and a verdict after everything.
func (d *Divergence) order() int {
	switch {
	case d.End:
		return math.MaxInt
	case d.ReplayedEntry >= 0:
		return d.ReplayedEntry
	}
	return d.RecordedEntry
}

func verdictText(t Trailer) string {
	v := t.Verdict
	if v == "" {
		v = "(none)"
	}
	return fmt.Sprintf("verdict %s (exit code %d)", v, t.ExitCode)
}

// RefusedReport is the report of a refused artifact; err is usually the
// *RefusalError from AdmitIndexed.
func RefusedReport(err error) *Report {
	r := &Report{Verdict: ReportRefused}
	var re *RefusalError
	if errors.As(err, &re) {
		r.Reason = re.Reason
	} else if err != nil {
		r.Reason = err.Error()
	}
	return r
}

// First returns the first divergence, or nil when there is none.
func (r *Report) First() *Divergence {
	if len(r.Divergences) == 0 {
		return nil
	}
	return r.Divergences[0]
}

// Diverged reports whether the runs diverged.
func (r *Report) Diverged() bool { return r.verdict() == ReportDiverged }

// verdict is Verdict, or for a report built by hand without one, what
// its divergences say.
func (r *Report) verdict() string {
	switch {
	case r.Verdict != "":
		return r.Verdict
	case len(r.Divergences) > 0:
		return ReportDiverged
	}
	return ReportIdentical
}

// WriteText writes the report as `hale replay` prints it on stderr:
//
//	replay OK: 3 consumers, 128 deliveries, 40 journal calls, 0 divergences
//
// or the first divergence, its sentence and, when known, its position:
//
//	replay DIVERGED at 2:41:
//	consumer 2: delivery #41 was (target Ledger, message 3:20) in the recording, but (target Ledger, message 1:21) in the replay
//	  at app.hl:31:9 in Ledger.on OrderPlaced
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	switch r.verdict() {
	case ReportRefused:
		fmt.Fprintf(&b, "replay REFUSED: %s\n", r.Reason)
	case ReportDiverged:
		d := r.First()
		switch {
		case d == nil:
			b.WriteString("replay DIVERGED\n")
		case d.End:
			fmt.Fprintf(&b, "replay DIVERGED at the end of the run:\n%s\n", d.Sentence)
		default:
			fmt.Fprintf(&b, "replay DIVERGED at %s:\n%s\n", d.At, d.Sentence)
		}
		if d != nil && d.Position != "" {
			fmt.Fprintf(&b, "  at %s\n", d.Position)
		}
	default:
		// The shape is fixed, plurals included, so that scripts can
		// match it whatever the counts.
		fmt.Fprintf(&b, "replay OK: %d consumers, %d deliveries, %d journal calls, 0 divergences\n",
			r.Consumers, r.Deliveries, r.JournalCalls)
	}
	_, err := io.WriteString(w, termsafe.Lines(b.String()))
	return err
}

type reportJSON struct {
	Verdict         string          `json:"verdict"`
	Consumers       int             `json:"consumers"`
	Deliveries      int             `json:"deliveries"`
	JournalCalls    int             `json:"journal_calls"`
	JournalMisses   int             `json:"journal_misses"`
	OrderTimeouts   int             `json:"order_timeouts"`
	Unconsumed      int             `json:"unconsumed"`
	Unexpected      int             `json:"unexpected"`
	FirstDivergence *divergenceJSON `json:"first_divergence"`
	Reason          *string         `json:"reason,omitempty"`
}

// divergenceJSON is first_divergence. A verdict divergence has no
// coordinate: coordinate, consumer and index are null.
type divergenceJSON struct {
	Coordinate *string        `json:"coordinate"`
	Consumer   *uint32        `json:"consumer"`
	Index      *uint64        `json:"index"`
	Kind       DivergenceKind `json:"kind"`
	Recorded   *string        `json:"recorded"`
	Replayed   *string        `json:"replayed"`
	Position   *string        `json:"position"`
}

// WriteJSON writes the report as one JSON object on one line, with the
// keys of `hale replay --json`.
func (r *Report) WriteJSON(w io.Writer) error {
	out := reportJSON{
		Verdict:       r.verdict(),
		Consumers:     r.Consumers,
		Deliveries:    r.Deliveries,
		JournalCalls:  r.JournalCalls,
		JournalMisses: r.JournalMisses,
		OrderTimeouts: r.OrderTimeouts,
		Unconsumed:    r.Unconsumed,
		Unexpected:    r.Unexpected,
	}
	if out.Verdict == ReportRefused {
		reason := r.Reason
		out.Reason = &reason
	}
	if d := r.First(); d != nil && out.Verdict == ReportDiverged {
		dj := &divergenceJSON{Kind: d.Kind, Recorded: optional(d.Recorded), Replayed: optional(d.Replayed),
			Position: optional(d.Position)}
		if !d.End {
			at, c, n := d.At.String(), d.At.Consumer, d.At.N
			dj.Coordinate, dj.Consumer, dj.Index = &at, &c, &n
		}
		out.FirstDivergence = dj
	}
	enc := json.NewEncoder(termsafe.JSONWriter(w))
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// tally adds one consumer's journal misses, unconsumed inputs and
// unexpected deliveries to the counts.
func (r *Report) tally(rec, rep side) {
	ri, pi := rec.invocations(), rep.invocations()
	for i := range min(len(ri), len(pi)) {
		if !sameCall(ri[i], pi[i]) {
			r.JournalMisses++
		}
	}
	r.Unconsumed += max(0, len(ri)-len(pi))
	recorded := make(map[Delivery]int, len(rec.idx))
	for i := range rec.es {
		if x, ok := rec.es[i].Body.(Delivery); ok {
			recorded[x]++
		}
	}
	for i := range rep.es {
		if x, ok := rep.es[i].Body.(Delivery); ok {
			if recorded[x] > 0 {
				recorded[x]--
			} else {
				r.Unexpected++
			}
		}
	}
}

// streams groups an artifact's entries by consumer, each group in seq
// order, as entry indexes. Entries of unknown kinds are left out.
func streams(a *Artifact) map[uint32][]int {
	s := map[uint32][]int{}
	for i := range a.Len() {
		if c, _, kind := a.head(i); kind.known() {
			s[c] = append(s[c], i)
		}
	}
	seq := func(i int) uint64 {
		_, n, _ := a.head(i)
		return n
	}
	for _, idx := range s {
		if !slices.IsSortedFunc(idx, func(x, y int) int { return cmp.Compare(seq(x), seq(y)) }) {
			slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(seq(x), seq(y)) })
		}
	}
	return s
}

// sameStreams reports whether one consumer's two streams hold the same
// entries byte for byte, which is how a faithful replay compares: then
// they have no divergence and nothing to count, and their entries need
// not be decoded. It answers false when either artifact keeps decoded
// entries rather than its bytes.
func sameStreams(a *Artifact, ai []int, b *Artifact, bi []int) bool {
	if !a.indexed || !b.indexed || len(ai) != len(bi) {
		return false
	}
	for k, i := range ai {
		j := bi[k]
		x, y := &a.spans.list[i], &b.spans.list[j]
		if x.kind != y.kind || x.kind == 0 || !bytes.Equal(a.data[a.spans.at(x):a.spans.end(x)], b.data[b.spans.at(y):b.spans.end(y)]) {
			return false
		}
	}
	return true
}

// side is one consumer's stream in one artifact, decoded.
type side struct {
	idx []int   // the entries' indexes in the artifact
	es  []Entry // the entries
}

func newSide(a *Artifact, idx []int) side {
	s := side{idx: idx, es: make([]Entry, len(idx))}
	for k, i := range idx {
		s.es[k] = a.Entry(i)
	}
	return s
}

// at returns the stream's i-th entry, or nil past its end.
func (s side) at(i int) *Entry {
	if i < len(s.es) {
		return &s.es[i]
	}
	return nil
}

func (s side) entry(i int) int {
	if i < len(s.idx) {
		return s.idx[i]
	}
	return -1
}

func (s side) invocations() []Invocation {
	var out []Invocation
	for i := range s.es {
		if x, ok := s.es[i].Body.(Invocation); ok {
			out = append(out, x)
		}
	}
	return out
}

// has reports whether the stream holds delivery d at position from or later.
func (s side) has(from int, d Delivery) bool {
	for _, e := range s.es[min(from, len(s.es)):] {
		if x, ok := e.Body.(Delivery); ok && x == d {
			return true
		}
	}
	return false
}

// walk finds consumer c's first divergence, or nil.
func (rd render) walk(c uint32, rec, rep side) *Divergence {
	var (
		n       uint64              // deliveries before the current position
		counts  = map[Kind]uint64{} // calls, publishes, outputs of the current handler run
		handler *Delivery
	)
	for i := 0; ; i++ {
		r, p := rec.at(i), rep.at(i)
		if r == nil && p == nil {
			return nil
		}
		if r != nil && p != nil && sameEntry(r.Body, p.Body) {
			if x, ok := p.Body.(Delivery); ok {
				n++
				clear(counts)
				handler = &x
			} else {
				counts[p.Body.Kind()]++
			}
			continue
		}

		d := &Divergence{
			Kind:          classify(r, p, rec, rep, i),
			At:            Coordinate{c, n},
			RecordedEntry: rec.entry(i),
			ReplayedEntry: rep.entry(i),
		}
		own := isDelivery(r) && isDelivery(p)
		switch {
		case own:
			// The divergent delivery itself: its own number.
			if x, ok := body(p).(Delivery); ok {
				d.Handler = &x
			} else if x, ok := body(r).(Delivery); ok {
				d.Handler = &x
			}
		case n == 0:
			d.Startup = true
		default:
			d.At.N = n - 1
			d.Handler = handler
		}
		d.Position = trapPosition(d.Kind, rep, i)
		rd.explain(d, r, p, n, counts)
		return d
	}
}

// body returns e's body, or nil for a nil entry.
func body(e *Entry) Body {
	if e == nil {
		return nil
	}
	return e.Body
}

// isDelivery reports whether e is a delivery or absent.
func isDelivery(e *Entry) bool {
	if e == nil {
		return true
	}
	_, ok := e.Body.(Delivery)
	return ok
}

// classify names the divergence between r and p, the first entries of
// their streams that differ (see the comment at the top of the file).
func classify(r, p *Entry, rec, rep side, i int) DivergenceKind {
	rb, pb := body(r), body(p)
	if r != nil && p != nil && rb.Kind() == pb.Kind() {
		switch x := rb.(type) {
		case Delivery:
			y := pb.(Delivery)
			switch {
			case !rep.has(i, x):
				return MissingDelivery
			case !rec.has(i, y):
				return UnexpectedDelivery
			}
			return ReorderedDelivery
		case Invocation:
			y := pb.(Invocation)
			switch {
			case !sameCall(x, y):
				return JournalMiss
			case y.Outcome == Trapped && (x.Outcome == Withheld || strings.HasPrefix(y.Message, "replay: missing input")):
				return MissingInput
			}
			return ChangedResult
		case Publish:
			y := pb.(Publish)
			if x.Topic != y.Topic || x.Message != y.Message {
				return ExtraPublish
			}
			return ChangedPayload
		case Output:
			return ChangedOutput
		case Trap:
			return ChangedTrap
		case Ingress:
			return ChangedPayload
		}
		return ChangedExit
	}
	switch {
	case r == nil:
		return extra(pb)
	case p == nil:
		return missing(rb)
	}
	_, rt := rb.(Trap)
	_, pt := pb.(Trap)
	_, rx := rb.(Exit)
	_, px := pb.(Exit)
	switch {
	case rt || pt:
		return ChangedTrap
	case rx || px:
		return ChangedExit
	case isDelivery(r):
		return extra(pb)
	}
	if _, call := pb.(Invocation); call {
		// The replay made a call where the recording's handler run had
		// none left: it read past the journal.
		return InputPastJournal
	}
	return missing(rb)
}

// extra names an entry the replay has where the recording does not.
func extra(b Body) DivergenceKind {
	switch b.(type) {
	case Invocation:
		return InputPastJournal
	case Publish, Ingress:
		return ExtraPublish
	case Delivery:
		return UnexpectedDelivery
	case Output:
		return ChangedOutput
	case Trap:
		return ChangedTrap
	}
	return ChangedExit
}

// missing names an entry the recording has where the replay does not.
func missing(b Body) DivergenceKind {
	switch b.(type) {
	case Invocation:
		return UnusedInput
	case Publish, Ingress:
		return MissingPublish
	case Delivery:
		return MissingDelivery
	case Output:
		return ChangedOutput
	case Trap:
		return ChangedTrap
	}
	return ChangedExit
}

// trapPosition finds the source position of a divergence the replay
// trapped on: the replayed trap itself, or the trap that the replayer's
// refusal of a call raised right after it.
func trapPosition(kind DivergenceKind, rep side, i int) string {
	switch kind {
	case ChangedTrap:
	case JournalMiss, MissingInput, InputPastJournal:
		i++
	default:
		return ""
	}
	t, ok := body(rep.at(i)).(Trap)
	switch {
	case !ok:
		return ""
	case len(t.Stack) > 0:
		return strings.TrimPrefix(t.Stack[0], "at ")
	}
	return t.Position
}

// sameEnding reports whether a replay ended as its recording did. A
// recorded run that was canceled (Ctrl-C) ended wherever the interrupt
// found it: its replay stops at the same point, inside a handler (it is
// canceled too) or between handlers (every consumer has had its recorded
// deliveries, and the replay ends quiescent). Whether it got there is
// what the rest of the comparison checks.
func sameEnding(recorded, replayed Trailer) bool {
	if recorded.Verdict == VerdictCanceled && replayed.Verdict == VerdictQuiescent {
		return true
	}
	return recorded.Verdict == replayed.Verdict && recorded.ExitCode == replayed.ExitCode
}

// sameEntry reports whether two bodies are equal as the diff compares
// them: a trap by kind, message and position, an exit by code, the rest by
// every field.
func sameEntry(a, b Body) bool {
	switch x := a.(type) {
	case Delivery:
		y, ok := b.(Delivery)
		return ok && x == y
	case Invocation:
		y, ok := b.(Invocation)
		return ok && sameCall(x, y) && sameOutcome(x.Outcome, x.Result, x.Length, x.TrapKind, x.Message, y.Outcome, y.Result, y.Length, y.TrapKind, y.Message)
	case Publish:
		y, ok := b.(Publish)
		return ok && x.Topic == y.Topic && x.Message == y.Message && bytes.Equal(x.Payload, y.Payload) && x.DelayMS == y.DelayMS
	case Output:
		y, ok := b.(Output)
		return ok && x.Channel == y.Channel && x.Primitive == y.Primitive && bytes.Equal(x.Args, y.Args) &&
			sameOutcome(x.Outcome, x.Result, x.Length, x.TrapKind, x.Message, y.Outcome, y.Result, y.Length, y.TrapKind, y.Message)
	case Trap:
		y, ok := b.(Trap)
		return ok && x.Message == y.Message && x.Position == y.Position && sameTrapKind(x.TrapKind, y.TrapKind)
	case Exit:
		y, ok := b.(Exit)
		return ok && x.Code == y.Code
	case Ingress:
		y, ok := b.(Ingress)
		return ok && x.Subject == y.Subject && x.MsgID == y.MsgID && bytes.Equal(x.Payload, y.Payload)
	}
	return false
}

func sameCall(x, y Invocation) bool {
	return x.Primitive == y.Primitive && bytes.Equal(x.Args, y.Args)
}

// sameTrapKind compares two trap kinds; a format 1 artifact records none
// (""), which matches any.
func sameTrapKind(k, k2 string) bool { return k == k2 || k == "" || k2 == "" }

// sameOutcome compares two outcomes by the fields their outcome uses: a
// trap by its kind and message.
func sameOutcome(o Outcome, res []byte, n uint64, kind, msg string, p Outcome, res2 []byte, n2 uint64, kind2, msg2 string) bool {
	if o != p {
		return false
	}
	switch o {
	case OK:
		return bytes.Equal(res, res2)
	case Withheld:
		return n == n2
	}
	return msg == msg2 && sameTrapKind(kind, kind2)
}
