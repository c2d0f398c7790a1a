package artifact

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// valueLimit is the longest rendering of one value, in runes, before it
// is cut with "…". Two different values that look alike once cut are
// shown whole instead.
const valueLimit = 64

// render describes entries for people: values go through decode when it
// is set and can decode them, and are shown as hex otherwise.
type render struct {
	decode ValueDecoder
	limit  int // see valueLimit; 0: no limit
}

// explain fills in d's descriptions and sentence. r and p are the two
// divergent entries (either may be nil), n the number of the consumer's
// deliveries before them, counts the calls, publishes and outputs of the
// handler run before them. If the two descriptions come out the same
// although the entries differ, they are written again without cutting
// values, then without the decoder.
func (rd render) explain(d *Divergence, r, p *Entry, n uint64, counts map[Kind]uint64) {
	rd.limit = valueLimit
	for try := 0; ; try++ {
		rd.describe(d, r, p, n, counts)
		if d.Recorded != d.Replayed || try == 2 {
			return
		}
		if try == 0 {
			rd.limit = 0
		} else {
			rd.decode = nil
		}
	}
}

func (rd render) describe(d *Divergence, r, p *Entry, n uint64, counts map[Kind]uint64) {
	// A delivery shows its topic only when nothing else tells the two apart.
	withTopic := false
	if x, ok := body(r).(Delivery); ok {
		if y, ok := body(p).(Delivery); ok {
			x.Topic = y.Topic
			withTopic = x == y
		}
	}
	d.Recorded, d.Replayed = "", ""
	if r != nil {
		d.Recorded = rd.item(r.Body, n, counts, withTopic)
	}
	if p != nil {
		d.Replayed = rd.item(p.Body, n, counts, withTopic)
	}

	ctx := fmt.Sprintf("in delivery #%d", d.At.N)
	if d.Startup {
		ctx = "before delivery #0"
	}
	var s string
	if r != nil && p != nil && r.Body.Kind() == p.Body.Kind() {
		switch x := r.Body.(type) {
		case Delivery:
			y := p.Body.(Delivery)
			s = fmt.Sprintf("delivery #%d was %s in the recording, but %s in the replay",
				n, rd.delivery(x, withTopic), rd.delivery(y, withTopic))
		case Invocation:
			y := p.Body.(Invocation)
			label := fmt.Sprintf("call #%d %s", counts[KindInvocation], ctx)
			if d.Kind == JournalMiss {
				s = label + " was " + rd.call(x.Primitive, x.Args) + " in the recording, but " +
					rd.call(y.Primitive, y.Args) + " in the replay"
			} else {
				// The kinds are shown when they are what differs.
				wasKind, nowKind := "", ""
				if x.Outcome == Trapped && y.Outcome == Trapped && x.TrapKind != y.TrapKind {
					wasKind, nowKind = x.TrapKind, y.TrapKind
				}
				was := rd.outcome(x.Primitive, x.Outcome, x.Result, x.Length, wasKind, x.Message)
				now := rd.outcome(y.Primitive, y.Outcome, y.Result, y.Length, nowKind, y.Message)
				if x.Outcome == y.Outcome {
					// "returned 17 …, but 18 …": the verb is not repeated.
					now = strings.TrimPrefix(strings.TrimPrefix(now, "returned "), "trapped ")
				}
				s = label + ", " + rd.call(x.Primitive, x.Args) + ", " + was + " in the recording, but " + now + " in the replay"
			}
		case Publish:
			y := p.Body.(Publish)
			label := fmt.Sprintf("publish #%d %s", counts[KindPublish], ctx)
			switch {
			case d.Kind == ChangedPayload && bytes.Equal(x.Payload, y.Payload) && x.DelayMS != y.DelayMS:
				// Only a timer's delay differs.
				s = fmt.Sprintf("%s %s had delay_ms %d in the recording, but %d in the replay", label, rd.publish(x, false), x.DelayMS, y.DelayMS)
			case d.Kind == ChangedPayload:
				s = label + " " + rd.publish(x, false) + " had payload " + rd.value("payload", x.Topic, x.Payload) +
					" in the recording, but " + rd.value("payload", y.Topic, y.Payload) + " in the replay"
			default:
				s = label + " was " + rd.publish(x, false) + " in the recording, but " + rd.publish(y, false) + " in the replay"
			}
		case Output:
			y := p.Body.(Output)
			s = fmt.Sprintf("output #%d %s was %s in the recording, but %s in the replay",
				counts[KindOutput], ctx, rd.output(x), rd.output(y))
		case Trap:
			y := p.Body.(Trap)
			was, now := rd.trap(x), rd.trap(y)
			if was == now { // only the kind differs
				was, now = was+" of kind "+x.TrapKind, now+" of kind "+y.TrapKind
			}
			s = fmt.Sprintf("the trap %s was %s in the recording, but %s in the replay", ctx, was, now)
		case Exit:
			y := p.Body.(Exit)
			s = fmt.Sprintf("the exit %s had code %d in the recording, but code %d in the replay", ctx, x.Code, y.Code)
		case Ingress:
			y := p.Body.(Ingress)
			s = fmt.Sprintf("ingress #%d was %s in the recording, but %s in the replay", counts[KindIngress], ingressText(x), ingressText(y))
		}
	} else {
		// Different kinds, or one stream ended: say what each run had.
		if !(isDelivery(r) && isDelivery(p)) {
			s = ctx + ", "
		}
		s += "the recording had " + orNothing(d.Recorded) + ", but the replay had " + orNothing(d.Replayed)
	}
	d.Sentence = fmt.Sprintf("consumer %d: %s", d.At.Consumer, s)
}

func orNothing(s string) string {
	if s == "" {
		return "nothing more"
	}
	return s
}

// item describes one entry with its number: "delivery #41 (target
// Ledger, message 3:20)", "call #3 std::time::now_ms() -> 17", …
func (rd render) item(b Body, n uint64, counts map[Kind]uint64, withTopic bool) string {
	switch x := b.(type) {
	case Delivery:
		return fmt.Sprintf("delivery #%d %s", n, rd.delivery(x, withTopic))
	case Invocation:
		return fmt.Sprintf("call #%d %s -> %s", counts[KindInvocation], rd.call(x.Primitive, x.Args),
			rd.result(x.Primitive, x.Outcome, x.Result, x.Length, x.Message))
	case Publish:
		return fmt.Sprintf("publish #%d %s", counts[KindPublish], rd.publish(x, true))
	case Output:
		return fmt.Sprintf("output #%d %s", counts[KindOutput], rd.output(x))
	case Trap:
		return "trap " + rd.trap(x)
	case Exit:
		return fmt.Sprintf("exit with code %d", x.Code)
	case Ingress:
		return fmt.Sprintf("ingress #%d %s", counts[KindIngress], ingressText(x))
	}
	return ""
}

// ingressText describes a received message: subject, origin id, size.
func ingressText(x Ingress) string {
	return fmt.Sprintf("(subject %s, msg id %q, %d bytes)", x.Subject, x.MsgID, len(x.Payload))
}

func (rd render) delivery(x Delivery, withTopic bool) string {
	if x.Start {
		return "(target " + x.Target + ", message start)"
	}
	s := "(target " + x.Target + ", message " + x.Message.String()
	if withTopic {
		s += ", topic " + x.Topic
	}
	return s + ")"
}

func (rd render) publish(x Publish, withPayload bool) string {
	s := "(topic " + x.Topic + ", message " + x.Message.String()
	if withPayload {
		s += ", payload " + rd.value("payload", x.Topic, x.Payload)
	}
	return s + ")"
}

func (rd render) output(x Output) string {
	s := rd.call(x.Primitive, x.Args) + " on " + x.Channel + " -> "
	if x.Outcome == OK && (x.Channel == ChannelStdout || x.Channel == ChannelStderr) {
		return s + rd.text(string(x.Result))
	}
	return s + rd.result(x.Primitive, x.Outcome, x.Result, x.Length, x.Message)
}

func (rd render) trap(x Trap) string {
	s := strconv.Quote(x.Message)
	if x.Position != "" {
		s += " at " + x.Position
	}
	return s
}

// call shows a call as "primitive(args)": the arguments decoded (a
// decoded list is shown as its elements), or as hex.
func (rd render) call(prim string, args []byte) string {
	if len(args) == 0 {
		return prim + "()"
	}
	if v, ok := rd.view("args", prim, args); ok {
		if list, ok := v.([]any); ok {
			parts := make([]string, 0, len(list))
			for _, e := range list {
				s, ok := jsonText(e)
				if !ok {
					return prim + "(" + rd.hex(args) + ")"
				}
				parts = append(parts, s)
			}
			return prim + "(" + rd.clip(strings.Join(parts, ", ")) + ")"
		}
		if s, ok := jsonText(v); ok {
			return prim + "(" + rd.clip(s) + ")"
		}
	}
	return prim + "(" + rd.hex(args) + ")"
}

// result shows an outcome briefly: the value, "withheld (11 bytes)" or
// `trap "message"`.
func (rd render) result(prim string, o Outcome, res []byte, n uint64, msg string) string {
	switch o {
	case OK:
		return rd.value("result", prim, res)
	case Withheld:
		return fmt.Sprintf("withheld (%s)", plural(n, "byte", "bytes"))
	}
	return "trap " + strconv.Quote(msg)
}

// outcome shows an outcome as a verb phrase, for changed results.
// A trap shows its kind when kind is not "".
func (rd render) outcome(prim string, o Outcome, res []byte, n uint64, kind, msg string) string {
	switch o {
	case OK:
		return "returned " + rd.value("result", prim, res)
	case Withheld:
		return fmt.Sprintf("returned a withheld value (%s)", plural(n, "byte", "bytes"))
	}
	if kind != "" {
		return "trapped with " + kind + " trap " + strconv.Quote(msg)
	}
	return "trapped with " + strconv.Quote(msg)
}

// value shows canonical value bytes decoded, or as hex.
func (rd render) value(field, hint string, data []byte) string {
	if v, ok := rd.view(field, hint, data); ok {
		if s, ok := jsonText(v); ok {
			return rd.clip(s)
		}
	}
	if len(data) == 0 {
		return "(no bytes)"
	}
	return rd.hex(data)
}

// view calls the decoder; a panic in it counts as a failure to decode.
func (rd render) view(field, hint string, data []byte) (v any, ok bool) {
	if rd.decode == nil {
		return nil, false
	}
	defer func() {
		if recover() != nil {
			v, ok = nil, false
		}
	}()
	return rd.decode(field, hint, data)
}

func (rd render) hex(data []byte) string {
	if rd.limit > 0 && 2*len(data) > rd.limit {
		return "0x" + hex.EncodeToString(data[:rd.limit/2]) + fmt.Sprintf("… (%d bytes)", len(data))
	}
	return "0x" + hex.EncodeToString(data)
}

// text quotes written text, cut to the limit.
func (rd render) text(s string) string {
	if rd.limit > 0 && utf8.RuneCountInString(s) > rd.limit {
		return strconv.Quote(string([]rune(s)[:rd.limit])) + "…"
	}
	return strconv.Quote(s)
}

func (rd render) clip(s string) string {
	if rd.limit > 0 && utf8.RuneCountInString(s) > rd.limit {
		return string([]rune(s)[:rd.limit]) + "…"
	}
	return s
}

// jsonText renders a decoded view as compact JSON.
func jsonText(v any) (string, bool) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", false
	}
	return strings.TrimSuffix(b.String(), "\n"), true
}
