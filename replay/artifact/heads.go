package artifact

// Spans are the heads of an artifact's entries as its index holds them:
// each one's consumer, seq, kind and message, read without decoding the
// entry's fields. The replayer builds its per-consumer tables from the
// heads of every entry (see Artifact.Heads).
type Spans = spanTable

// Span is the head of one entry.
type Span struct {
	consumer, producer, name uint32
	kind                     Kind
	start                    bool
	seq, msgSeq              uint64
}

// Len returns the number of entries.
func (t *spanTable) Len() int { return len(t.list) }

// At returns entry i's head.
func (t *spanTable) At(i int) Span {
	sp := &t.list[i]
	return Span{consumer: sp.consumer, producer: sp.producer, name: sp.name, kind: Kind(sp.kind),
		start: sp.start(), seq: t.seq(sp), msgSeq: t.msgSeq(sp)}
}

// Seq returns entry i's seq, as At(i).Seq() does.
func (t *spanTable) Seq(i int) uint64 { return t.seq(&t.list[i]) }

// Consumer returns entry i's consumer, as At(i).Consumer() does.
func (t *spanTable) Consumer(i int) uint32 { return t.list[i].consumer }

// Kind returns entry i's kind, as At(i).Kind() does.
func (t *spanTable) Kind(i int) Kind { return Kind(t.list[i].kind) }

// Message returns entry i's message, as At(i).Message() does.
func (t *spanTable) Message(i int) MessageID {
	sp := &t.list[i]
	return MessageID{Producer: sp.producer, Seq: t.msgSeq(sp)}
}

// Name returns entry i's name, as At(i).Name() does.
func (t *spanTable) Name(i int) uint32 { return t.list[i].name }

// Start returns whether entry i is a start delivery, as At(i).Start() does.
func (t *spanTable) Start(i int) bool { return t.list[i].start() }

// Seq returns the entry's seq.
func (s Span) Seq() uint64 { return s.seq }

// Consumer returns the entry's consumer.
func (s Span) Consumer() uint32 { return s.consumer }

// Kind returns the entry's kind (0 for an unknown kind).
func (s Span) Kind() Kind { return s.kind }

// Message returns the message of a publish or a delivery.
func (s Span) Message() MessageID { return MessageID{Producer: s.producer, Seq: s.msgSeq} }

// Name returns the entry's name as numbered in the names Heads returns:
// a publish's topic, a delivery's target, an invocation's primitive;
// beyond the names otherwise.
func (s Span) Name() uint32 { return s.name }

// Start reports whether a delivery is a start delivery.
func (s Span) Start() bool { return s.start }

// Heads returns the head of every entry and the names they refer to.
func (a *Artifact) Heads() (spans Spans, names []string) {
	t, table := a.heads()
	return *t, table.list
}

// Publish returns entry i when it is a publish.
func (a *Artifact) Publish(i int) (Publish, bool) { return a.publish(i) }

// PublishPayload returns publish entry i's topic, numbered as in the
// names Heads returns, its payload and its delay, for a replay's check of
// every publish: the payload's place follows from the span (the topic's
// name and the message identity are in it, and every field is minimally
// encoded), so only the payload's length and the delay are read, in place.
// ok is false for an artifact that is not indexed, an entry that is not a
// publish, or one this reading does not find whole; Publish reads those.
func (a *Artifact) PublishPayload(i int) (topic uint32, payload []byte, delayMS uint64, ok bool) {
	if !a.indexed {
		return noName, nil, 0, false
	}
	sp := &a.spans.list[i]
	if Kind(sp.kind) != KindPublish || sp.name == noName || int(sp.name) >= len(a.names.list) {
		return noName, nil, 0, false
	}
	n := len(a.names.list[sp.name])
	at := a.spans.at(sp) + uvarintLen(uint64(n)) + n + uvarintLen(uint64(sp.producer)) + uvarintLen(a.spans.msgSeq(sp))
	spEnd := a.spans.end(sp)
	b := a.data[:spEnd]
	from, to, ok := fastBytes(b, at)
	if !ok {
		return noName, nil, 0, false
	}
	end := to
	if a.Version >= 2 {
		if delayMS, end, ok = fastUvarint(b, to); !ok {
			return noName, nil, 0, false
		}
	}
	if end != spEnd {
		return noName, nil, 0, false
	}
	return sp.name, b[from:to:to], delayMS, true
}

// Invocation returns entry i when it is an invocation, without the
// allocation that Entry's interface value costs (a replay serves every
// input call from one).
func (a *Artifact) Invocation(i int) (Invocation, bool) {
	if !a.indexed {
		x, ok := a.Entries[i].Body.(Invocation)
		return x, ok
	}
	if Kind(a.spans.list[i].kind) != KindInvocation {
		return Invocation{}, false
	}
	if x, ok := a.invocation(i); ok {
		return x, true
	}
	c := a.reader(i)
	return c.invocation(), true
}

// Delivery returns entry i when it is a delivery.
func (a *Artifact) Delivery(i int) (Delivery, bool) { return a.delivery(i) }

// Check reports whether the header is one a recorder may write: a known
// env policy and a consistent consumer table.
func (h *Header) Check() error { return h.check() }

// SameEnding reports whether a replay that ended as replayed ended as the
// recording did (a canceled recording replays to quiescence).
func SameEnding(recorded, replayed Trailer) bool { return sameEnding(recorded, replayed) }

// VerdictText describes a trailer's ending: "verdict exit (exit code 2)".
func (t Trailer) VerdictText() string { return verdictText(t) }
