package artifact

// An artifact from Index or Admit keeps an index of its entries rather
// than the entries themselves (see decodeIndexed): one span per entry, in one
// array with no pointers in it. A replay reads an entry's fields from the
// artifact's bytes when it needs them, which cannot fail, since admission
// checked every field of every entry. Artifacts from Decode and Salvage
// keep the decoded entries; the methods here work on both.

// span locates one entry's fields in Artifact.data and holds the few of
// them that a replay's tables are built from. It has no pointers, so
// the garbage collector never scans the index.
type span struct {
	seq      uint64
	at, end  int    // the kind's fields: data[at:end]
	msgSeq   uint64 // publish, delivery: the message's seq; an entry of an unknown kind: its kind code
	consumer uint32
	producer uint32 // publish, delivery: the message's producer
	name     uint32 // publish: the topic, delivery: the target, invocation: the primitive, as numbered in the nameTable; else noName
	kind     uint8  // a known kind, or 0 (the code is in msgSeq)
	start    bool   // delivery: a start delivery
	// topic is, for a delivery of a message read by fastSpan, its
	// topic's number in the nameTable plus one, so that Verify need not
	// read the topic again; 0 when not noted (a number of 1<<16-1 or
	// more, or an entry the general reader read). It fills what was
	// padding: a span is 48 bytes either way.
	topic uint16
}

// Len returns the number of entries.
func (a *Artifact) Len() int {
	if a.indexed {
		return len(a.spans)
	}
	return len(a.Entries)
}

// Entry returns entry i, 0 <= i < Len().
func (a *Artifact) Entry(i int) Entry {
	if !a.indexed {
		return a.Entries[i]
	}
	sp := &a.spans[i]
	if Kind(sp.kind) == KindInvocation {
		// Served for every input call a replay makes.
		if x, ok := a.invocation(i); ok {
			return Entry{Consumer: sp.consumer, Seq: sp.seq, Body: x}
		}
	}
	c := a.reader(i)
	return Entry{Consumer: sp.consumer, Seq: sp.seq, Body: c.fields(a.kindOf(i))}
}

// invocation reads indexed entry i, an invocation, with the primitive
// from its span; it gives up (false) on a trapped call, whose message the
// general reader reads.
func (a *Artifact) invocation(i int) (Invocation, bool) {
	sp := &a.spans[i]
	b := a.data[:sp.end]
	_, j, ok := fastBytes(b, sp.at)
	if !ok || sp.name == noName {
		return Invocation{}, false
	}
	x := Invocation{Primitive: a.names.list[sp.name]}
	var from, to int
	if from, to, ok = fastBytes(b, j); !ok || to >= len(b) {
		return Invocation{}, false
	}
	x.Args = b[from:to:to]
	switch x.Outcome = Outcome(b[to]); x.Outcome {
	case OK:
		if from, to, ok = fastBytes(b, to+1); ok {
			x.Result = b[from:to:to]
		}
	case Withheld:
		x.Length, to, ok = fastUvarint(b, to+1)
	default:
		ok = false
	}
	return x, ok && to == sp.end
}

// head returns entry i's consumer, seq and kind without reading its fields.
func (a *Artifact) head(i int) (consumer uint32, seq uint64, kind Kind) {
	if a.indexed {
		sp := &a.spans[i]
		return sp.consumer, sp.seq, a.kindOf(i)
	}
	e := &a.Entries[i]
	if e.Body == nil {
		return e.Consumer, e.Seq, 0
	}
	return e.Consumer, e.Seq, e.Body.Kind()
}

// kindOf returns indexed entry i's kind code.
func (a *Artifact) kindOf(i int) Kind {
	sp := &a.spans[i]
	if sp.kind != 0 {
		return Kind(sp.kind)
	}
	return Kind(sp.msgSeq)
}

// heads returns the artifact's spans and the names they number. Those of
// a decoded artifact are made for the call and locate nothing (at and
// end are 0): only their consumer, seq, kind, message and name are set.
func (a *Artifact) heads() ([]span, *nameTable) {
	if a.indexed {
		return a.spans, a.names
	}
	names := &nameTable{}
	spans := make([]span, len(a.Entries))
	for i, e := range a.Entries {
		sp := &spans[i]
		sp.consumer, sp.seq, sp.name = e.Consumer, e.Seq, noName
		switch x := e.Body.(type) {
		case Publish:
			sp.producer, sp.msgSeq, sp.name = x.Message.Producer, x.Message.Seq, names.idOf(x.Topic)
		case Delivery:
			sp.producer, sp.msgSeq, sp.start, sp.name = x.Message.Producer, x.Message.Seq, x.Start, names.idOf(x.Target)
		}
		if e.Body != nil && e.Body.Kind().known() {
			sp.kind = uint8(e.Body.Kind())
		}
	}
	return spans, names
}

// publish returns entry i's fields when it is a publish, without the
// allocation that Entry's interface value costs.
func (a *Artifact) publish(i int) (Publish, bool) {
	if !a.indexed {
		x, ok := a.Entries[i].Body.(Publish)
		return x, ok
	}
	sp := &a.spans[i]
	if Kind(sp.kind) != KindPublish {
		return Publish{}, false
	}
	// Every message's payload is compared, so the topic comes from the
	// span and only the payload is read, past the fields before it.
	b := a.data[:sp.end]
	if _, j, ok := fastBytes(b, sp.at); ok {
		if _, _, j, ok = fastMessage(b, j); ok {
			if from, to, ok := fastBytes(b, j); ok {
				var delay uint64
				end := to
				if a.Version >= 2 {
					delay, end, ok = fastUvarint(b, to)
				}
				if ok && end == sp.end {
					return Publish{Topic: a.names.list[sp.name], Message: MessageID{sp.producer, sp.msgSeq},
						Payload: b[from:to:to], DelayMS: delay}, true
				}
			}
		}
	}
	c := a.reader(i)
	return c.publish(), true
}

// delivery is publish for a delivery.
func (a *Artifact) delivery(i int) (Delivery, bool) {
	if !a.indexed {
		x, ok := a.Entries[i].Body.(Delivery)
		return x, ok
	}
	if Kind(a.spans[i].kind) != KindDelivery {
		return Delivery{}, false
	}
	c := a.reader(i)
	return c.delivery(), true
}

// reader returns a cursor over indexed entry i's fields. It only reads
// the interned names, so readers on several goroutines may share them.
func (a *Artifact) reader(i int) cursor {
	sp := &a.spans[i]
	return cursor{data: a.data, pos: sp.at, end: sp.end, start: sp.at, what: entryLabel(a.kindOf(i)),
		entry: i, names: a.names, frozen: true, v2: a.Version >= 2}
}

// full returns a itself when it keeps its decoded entries, else a copy of
// it that does: for the tools that walk every entry (Diff, Encode, trace).
func (a *Artifact) full() *Artifact {
	if !a.indexed {
		return a
	}
	b := *a
	b.indexed, b.spans, b.data, b.names = false, nil, nil, nil
	b.Entries = make([]Entry, len(a.spans))
	for i := range a.spans {
		b.Entries[i] = a.Entry(i)
	}
	return &b
}
