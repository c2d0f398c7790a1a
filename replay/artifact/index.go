package artifact

import (
	"math"
	"sync/atomic"
	"unsafe"
)

// An artifact from Index or Admit keeps an index of its entries rather
// than the entries themselves (see decodeIndexed): one span per entry, in one
// array with no pointers in it. A replay reads an entry's fields from the
// artifact's bytes when it needs them, which cannot fail, since admission
// checked every field of every entry. Artifacts from Decode and Salvage
// keep the decoded entries; the methods here work on both.

// span locates one entry's fields in Artifact.data and holds the few of
// them that a replay's tables are built from. It has no pointers, so
// the garbage collector never scans the index, and it is 32 bytes: its
// offsets and seqs are held in 32 bits. An entry whose offsets or seqs
// do not fit (an artifact of 4 GiB or more, a seq of 2^32 or more, an
// unknown kind's code of 2^32 or more) is wide: its span holds the
// number of its wideSpan in the spanTable's wide list in at, and the
// wide list holds those four values whole. Read them through the
// spanTable (seq, msgSeq, at, end), never from the span's fields.
type span struct {
	at32, size32 uint32 // the kind's fields: data[at:at+size]; when wide, at32 numbers the wideSpan
	seq32        uint32
	msg32        uint32 // publish, delivery: the message's seq; an entry of an unknown kind: its kind code
	consumer     uint32
	producer     uint32 // publish, delivery: the message's producer
	name         uint32 // publish: the topic, delivery: the target, invocation: the primitive, as numbered in the nameTable; else noName
	kind         uint8  // a known kind, or 0 (the code is in msgSeq)
	flags        uint8  // spanStart, spanWide
	// topic is, for a delivery of a message read by fastSpan, its
	// topic's number in the nameTable plus one, so that Verify need not
	// read the topic again; 0 when not noted (a number of 1<<16-1 or
	// more, or an entry the general reader read).
	topic uint16
}

// span flags.
const (
	spanStart = 1 << iota // delivery: a start delivery
	spanWide              // the offsets and seqs are in the wide list
)

// wideSpan holds the offsets and seqs of a wide span whole.
type wideSpan struct {
	seq, msgSeq uint64
	at, end     int
}

// spanTable is an index's spans and the wide values of the few that
// need them.
type spanTable struct {
	list []span
	wide []wideSpan
}

// start reports whether a delivery is a start delivery.
func (sp *span) start() bool { return sp.flags&spanStart != 0 }

func (t *spanTable) seq(sp *span) uint64 {
	if sp.flags&spanWide != 0 {
		return t.wide[sp.at32].seq
	}
	return uint64(sp.seq32)
}

func (t *spanTable) msgSeq(sp *span) uint64 {
	if sp.flags&spanWide != 0 {
		return t.wide[sp.at32].msgSeq
	}
	return uint64(sp.msg32)
}

// at and end delimit the entry's fields (after its consumer and seq).
func (t *spanTable) at(sp *span) int {
	if sp.flags&spanWide != 0 {
		return t.wide[sp.at32].at
	}
	return int(sp.at32)
}

func (t *spanTable) end(sp *span) int {
	if sp.flags&spanWide != 0 {
		return t.wide[sp.at32].end
	}
	return int(sp.at32) + int(sp.size32)
}

// setPlace sets sp's seq, message seq and field offsets, in its own
// fields when they fit in 32 bits, else in a wideSpan appended to *wide.
func setPlace(sp *span, wide *[]wideSpan, seq, msgSeq uint64, at, end int) {
	if seq <= math.MaxUint32 && msgSeq <= math.MaxUint32 && uint64(end) <= math.MaxUint32 {
		sp.seq32, sp.msg32, sp.at32, sp.size32 = uint32(seq), uint32(msgSeq), uint32(at), uint32(end-at)
		sp.flags &^= spanWide
		return
	}
	sp.flags |= spanWide
	sp.seq32, sp.msg32, sp.size32 = 0, 0, 0
	sp.at32 = uint32(len(*wide))
	*wide = append(*wide, wideSpan{seq: seq, msgSeq: msgSeq, at: at, end: end})
}

// Len returns the number of entries.
func (a *Artifact) Len() int {
	if a.indexed {
		return len(a.spans.list)
	}
	return len(a.Entries)
}

// Resident is about how many bytes of memory an indexed artifact holds
// without pointers in them (its bytes and its index), which the garbage
// collector counts as live heap but never scans; 0 for a decoded one.
func (a *Artifact) Resident() int64 {
	if !a.indexed {
		return 0
	}
	return int64(cap(a.data)) + int64(cap(a.spans.list))*int64(unsafe.Sizeof(span{})) + int64(cap(a.spans.wide))*int64(unsafe.Sizeof(wideSpan{}))
}

// Counts returns how many entries consumer id has, in all and of each
// kind a replay's tables are sized by, as the decoder counted them while
// indexing, which spares a replay a counting pass over the index; ok is
// false for an artifact that keeps its decoded entries (which may have
// been changed since).
func (a *Artifact) Counts(id uint32) (counts KindCounts, ok bool) {
	if !a.indexed || !a.counted {
		return KindCounts{}, false
	}
	return a.counts.of(id), true
}

// Ordered reports whether a is an index that Verify has found
// consistent, and so one whose every consumer's entries come in the
// order of their seqs (0, 1, 2, ...), with Counts available.
func (a *Artifact) Ordered() bool {
	return a.indexed && a.counted && atomic.LoadUint32(&a.ordered) == 1
}

// Entry returns entry i, 0 <= i < Len().
func (a *Artifact) Entry(i int) Entry {
	if !a.indexed {
		return a.Entries[i]
	}
	sp := &a.spans.list[i]
	if Kind(sp.kind) == KindInvocation {
		// Served for every input call a replay makes.
		if x, ok := a.invocation(i); ok {
			return Entry{Consumer: sp.consumer, Seq: a.spans.seq(sp), Body: x}
		}
	}
	c := a.reader(i)
	return Entry{Consumer: sp.consumer, Seq: a.spans.seq(sp), Body: c.fields(a.kindOf(i))}
}

// invocation reads indexed entry i, an invocation, with the primitive
// from its span; it gives up (false) on a trapped call, whose message the
// general reader reads.
func (a *Artifact) invocation(i int) (Invocation, bool) {
	sp := &a.spans.list[i]
	end := a.spans.end(sp)
	b := a.data[:end]
	_, j, ok := fastBytes(b, a.spans.at(sp))
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
	return x, ok && to == end
}

// head returns entry i's consumer, seq and kind without reading its fields.
func (a *Artifact) head(i int) (consumer uint32, seq uint64, kind Kind) {
	if a.indexed {
		sp := &a.spans.list[i]
		return sp.consumer, a.spans.seq(sp), a.kindOf(i)
	}
	e := &a.Entries[i]
	if e.Body == nil {
		return e.Consumer, e.Seq, 0
	}
	return e.Consumer, e.Seq, e.Body.Kind()
}

// kindOf returns indexed entry i's kind code.
func (a *Artifact) kindOf(i int) Kind {
	sp := &a.spans.list[i]
	if sp.kind != 0 {
		return Kind(sp.kind)
	}
	return Kind(a.spans.msgSeq(sp))
}

// heads returns the artifact's spans and the names they number. Those of
// a decoded artifact are made for the call and locate nothing (at and
// end are 0): only their consumer, seq, kind, message and name are set.
func (a *Artifact) heads() (*spanTable, *nameTable) {
	if a.indexed {
		return &a.spans, a.names
	}
	names := &nameTable{}
	t := &spanTable{list: make([]span, len(a.Entries))}
	for i, e := range a.Entries {
		sp := &t.list[i]
		sp.consumer, sp.name = e.Consumer, noName
		var msgSeq uint64
		switch x := e.Body.(type) {
		case Publish:
			sp.producer, msgSeq, sp.name = x.Message.Producer, x.Message.Seq, names.idOf(x.Topic)
		case Delivery:
			sp.producer, msgSeq, sp.name = x.Message.Producer, x.Message.Seq, names.idOf(x.Target)
			if x.Start {
				sp.flags |= spanStart
			}
		}
		if e.Body != nil && e.Body.Kind().known() {
			sp.kind = uint8(e.Body.Kind())
		}
		setPlace(sp, &t.wide, e.Seq, msgSeq, 0, 0)
	}
	return t, names
}

// publish returns entry i's fields when it is a publish, without the
// allocation that Entry's interface value costs.
func (a *Artifact) publish(i int) (Publish, bool) {
	if !a.indexed {
		x, ok := a.Entries[i].Body.(Publish)
		return x, ok
	}
	sp := &a.spans.list[i]
	if Kind(sp.kind) != KindPublish {
		return Publish{}, false
	}
	// Every message's payload is compared, so the topic comes from the
	// span and only the payload is read, past the fields before it.
	spEnd := a.spans.end(sp)
	b := a.data[:spEnd]
	if _, j, ok := fastBytes(b, a.spans.at(sp)); ok {
		if _, _, j, ok = fastMessage(b, j); ok {
			if from, to, ok := fastBytes(b, j); ok {
				var delay uint64
				end := to
				if a.Version >= 2 {
					delay, end, ok = fastUvarint(b, to)
				}
				if ok && end == spEnd {
					return Publish{Topic: a.names.list[sp.name], Message: MessageID{sp.producer, a.spans.msgSeq(sp)},
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
	if Kind(a.spans.list[i].kind) != KindDelivery {
		return Delivery{}, false
	}
	c := a.reader(i)
	return c.delivery(), true
}

// reader returns a cursor over indexed entry i's fields. It only reads
// the interned names, so readers on several goroutines may share them.
func (a *Artifact) reader(i int) cursor {
	sp := &a.spans.list[i]
	at := a.spans.at(sp)
	return cursor{data: a.data, pos: at, end: a.spans.end(sp), start: at, what: entryLabel(a.kindOf(i)),
		entry: i, names: a.names, frozen: true, v2: a.Version >= 2}
}

// full returns a itself when it keeps its decoded entries, else a copy of
// it that does: for the tools that walk every entry (Diff, Encode, trace).
func (a *Artifact) full() *Artifact {
	if !a.indexed {
		return a
	}
	b := *a
	b.indexed, b.spans, b.data, b.names = false, spanTable{}, nil, nil
	b.Entries = make([]Entry, len(a.spans.list))
	for i := range a.spans.list {
		b.Entries[i] = a.Entry(i)
	}
	return &b
}
