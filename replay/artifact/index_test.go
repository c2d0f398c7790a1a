package artifact

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strconv"
	"testing"

	"github.com/zeebo/blake3"
)

// largeArtifact is an artifact of n message round trips on two
// consumers (a publish, its delivery and an input call each), enough
// entries for the indexing decoder to read its halves in parallel.
func largeArtifact(n int) *Artifact {
	a := &Artifact{Header: sample().Header, Trailer: Trailer{Verdict: VerdictQuiescent}}
	seq := [2]uint64{}
	add := func(c uint32, b Body) {
		a.Entries = append(a.Entries, Entry{Consumer: c, Seq: seq[c], Body: b})
		seq[c]++
	}
	for i := range n {
		c := uint32(i % 2)
		add(c, Publish{Topic: "Tick", Message: MessageID{c, uint64(i / 2)}, Payload: []byte{1, byte(i)}})
		add(1-c, Delivery{Target: "Counter", Message: MessageID{c, uint64(i / 2)}, Topic: "Tick"})
		add(1-c, Invocation{Primitive: "std::rand::next_int", Args: []byte{0}, Outcome: OK, Result: []byte{1, byte(i >> 3)}})
	}
	return a
}

// reseal replaces data's checksum with the right one.
func reseal(data []byte) []byte {
	data = bytes.Clone(data)
	sum := blake3.Sum256(data[:len(data)-32])
	copy(data[len(data)-32:], sum[:])
	return data
}

// TestIndexLarge checks the indexing decoder where it reads two halves on
// two goroutines: it agrees with Decode on every entry, and a damaged
// entry in either half (under a valid checksum, so that only the entry
// itself is wrong) is refused with Decode's message, naming the first.
func TestIndexLarge(t *testing.T) {
	const n = 3 * splitFrom // 3n entries
	data := mustEncode(t, largeArtifact(n))
	full, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Index(data)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != len(full.Entries) || ix.Len() < splitFrom {
		t.Fatalf("%d entries indexed, %d decoded", ix.Len(), len(full.Entries))
	}
	for i, want := range full.Entries {
		if got := ix.Entry(i); !reflect.DeepEqual(got, want) {
			t.Fatalf("entry %d: indexed %#v, decoded %#v", i, got, want)
		}
	}
	if !reflect.DeepEqual(diff(full, ix), diff(full, full)) || diff(ix, ix).Diverged() {
		t.Error("an indexed artifact compares differently from a decoded one")
	}

	// The delivery entries' start flags, found by their bytes: target
	// "Counter" then a flag byte 0.
	flag := []byte("\x07Counter\x00")
	var flags []int
	for i := 0; ; {
		j := bytes.Index(data[i:], flag)
		if j < 0 {
			break
		}
		flags = append(flags, i+j+len(flag)-1)
		i += j + len(flag)
	}
	if len(flags) != n {
		t.Fatalf("found %d delivery flags, want %d", len(flags), n)
	}
	damage := func(at ...int) []byte {
		d := bytes.Clone(data)
		for _, i := range at {
			d[i] = 2 // neither 0 nor 1
		}
		return reseal(d)
	}
	for _, tc := range []struct {
		name string
		at   []int
	}{
		{"first half", []int{flags[n/10]}},
		{"second half", []int{flags[n-n/10]}},
		{"both halves", []int{flags[n/3], flags[n-2]}},
		{"the first entry after the halves' split", []int{flags[n/2]}},
		{"the last entry before the halves' split", []int{flags[n/2-1]}},
		{"either side of the split", []int{flags[n/2-1], flags[n/2]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := damage(tc.at...)
			_, derr := Decode(bad)
			_, ierr := Index(bad)
			if derr == nil || ierr == nil || derr.Error() != ierr.Error() {
				t.Fatalf("Decode: %v\nIndex:  %v", derr, ierr)
			}
			var fe *FormatError
			if !errors.As(ierr, &fe) || fe.Err != ErrFraming || fe.Offset != int64(tc.at[0]) {
				t.Fatalf("Index: %v (%+v), want bad framing at offset %d", ierr, fe, tc.at[0])
			}
		})
	}
}

// TestSplitAt checks where indexHalves divides the records: at the mark
// of countEntriesMarked nearest to the middle, with both halves
// non-empty, and not at all (the records are walked again) when there is
// no such mark.
func TestSplitAt(t *testing.T) {
	for _, n := range []int{0, 1, 2, 1000, markEvery, markEvery + 1, 2*markEvery - 1, 2 * markEvery, 3 * markEvery, splitFrom, 3*splitFrom + 17, 1 << 20} {
		data := bytes.Repeat([]byte{byte(KindPublish), 1, 0}, n) // records of one byte's body
		data = append(data, trailerMarker)
		var marks []int
		got, framed := countEntriesMarked(data, math.MaxInt, &marks)
		if got != n || framed != 3*n || len(marks) != (n+markEvery-1)/markEvery {
			t.Fatalf("n=%d: counted %d records in %d bytes with %d marks", n, got, framed, len(marks))
		}
		for k, at := range marks {
			if at != 3*k*markEvery {
				t.Fatalf("n=%d: mark %d at %d", n, k, at)
			}
		}
		half, mid, ok := splitAt(n, marks)
		switch {
		case !ok && n >= 2*markEvery:
			t.Errorf("n=%d: no split", n)
		case ok && (half <= 0 || half >= n || half%markEvery != 0 || mid != 3*half || abs(half-n/2) > markEvery/2):
			t.Errorf("n=%d: split after %d records at %d", n, half, mid)
		}
	}
}

func abs(x int) int { return max(x, -x) }

// TestDeliveryTopicNoted checks the topic that indexing notes in a
// delivery's span against the topic read from the entry's bytes, on an
// artifact whose deliveries name more topics than a span can note
// (1<<16 - 1), read by the general reader (which notes none) and by the
// fast one split in two (where the second half's names are renumbered):
// deliveryTopic must give the same name and number either way.
func TestDeliveryTopicNoted(t *testing.T) {
	a := &Artifact{Header: sample().Header, Trailer: Trailer{Verdict: VerdictQuiescent}}
	const n = 1<<16 + 5000
	for i := range n {
		topic := "T" + strconv.Itoa(i%(n-100)) // some repeat, in the second half too
		a.Entries = append(a.Entries,
			Entry{Consumer: 0, Seq: uint64(2 * i), Body: Publish{Topic: topic, Message: MessageID{0, uint64(i)}, Payload: []byte{1}}},
			Entry{Consumer: 0, Seq: uint64(2*i + 1), Body: Delivery{Target: "Counter", Message: MessageID{0, uint64(i)}, Topic: topic}})
	}
	data := mustEncode(t, a)
	for _, split := range []int{0, splitFrom} {
		ix, err := decodeIndexedFrom(data, split)
		if err != nil {
			t.Fatal(err)
		}
		noted := 0
		for i := 1; i < ix.Len(); i += 2 {
			sp := ix.spans.list[i]
			if sp.topic != 0 {
				noted++
			}
			name, id := ix.deliveryTopic(i, ix.names, noName)
			// The same entry, its topic read from its bytes.
			ix.spans.list[i].topic = 0
			wantName, wantID := ix.deliveryTopic(i, ix.names, noName)
			ix.spans.list[i].topic = sp.topic
			if name != wantName || id != wantID || name != a.Entries[i].Body.(Delivery).Topic {
				t.Fatalf("split %d, entry %d: topic %q (%d), read from the entry %q (%d)", split, i, name, id, wantName, wantID)
			}
		}
		// The general reader (no split) notes none; the fast one
		// (split) all but those numbered 1<<16-1 and on.
		if split == 0 && noted != 0 || split > 0 && (noted == 0 || noted == n) {
			t.Fatalf("split %d: %d of %d deliveries noted their topic", split, noted, n)
		}
	}
}

// refHead is an entry's head as the 48-byte span held it, read from the
// decoded entry: the reference for the 32-bit spans and their wide list.
type refHead struct {
	consumer, producer uint32
	seq, msgSeq        uint64
	kind               Kind
	start              bool
	name               string
}

func refHeadOf(e Entry) refHead {
	h := refHead{consumer: e.Consumer, seq: e.Seq}
	switch x := e.Body.(type) {
	case Publish:
		h.producer, h.msgSeq, h.name = x.Message.Producer, x.Message.Seq, x.Topic
	case Delivery:
		h.producer, h.msgSeq, h.start, h.name = x.Message.Producer, x.Message.Seq, x.Start, x.Target
	case Invocation:
		h.name = x.Primitive
	}
	if e.Body != nil && e.Body.Kind().known() {
		h.kind = e.Body.Kind()
	}
	return h
}

// TestSpansMatchEntries holds the index's 32-byte spans to the decoded
// entries, on artifacts whose seqs, message seqs and unknown kinds' codes
// fit in 32 bits and on ones where some do not (wide spans), read whole,
// split in two (where each half keeps its own wide list until they are
// joined) and as a decoded artifact's heads: every head, every entry and
// every field place must be what the decoder reads.
func TestSpansMatchEntries(t *testing.T) {
	if s := reflect.TypeFor[span]().Size(); s != 32 {
		t.Errorf("a span is %d bytes, want 32", s)
	}
	for _, wide := range []uint64{0, 1 << 33, 1<<64 - 1} {
		a := largeArtifact(splitFrom + 100)
		// Make some entries wide: a huge seq on consumer 1 from the
		// middle on (a new numbering, which Verify refuses, but the index
		// must hold it), a message seq, an unknown kind's code.
		for i := range a.Entries {
			e := &a.Entries[i]
			if wide == 0 {
				break
			}
			if e.Consumer == 1 && i > len(a.Entries)/3 {
				e.Seq += wide - uint64(len(a.Entries))
			}
			switch i % 97 {
			case 5:
				if x, ok := e.Body.(Publish); ok {
					x.Message.Seq = wide - uint64(i)
					e.Body = x
				}
			case 11:
				e.Body = Unknown{Code: Kind(wide - uint64(i)), Data: []byte{byte(i), 7}}
			}
		}
		data := mustEncode(t, a)
		full, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, split := range []int{0, 1, splitFrom} {
			ix, ferr := decodeIndexedFrom(data, split)
			if ferr != nil {
				t.Fatal(ferr)
			}
			if wide == 0 && len(ix.spans.wide) != 0 || wide != 0 && len(ix.spans.wide) < 10 {
				t.Fatalf("wide %d, split %d: %d wide spans", wide, split, len(ix.spans.wide))
			}
			checkHeads(t, ix, full)
			for i, want := range full.Entries {
				if got := ix.Entry(i); !reflect.DeepEqual(got, want) {
					t.Fatalf("wide %d, split %d, entry %d: indexed %#v, decoded %#v", wide, split, i, got, want)
				}
				if _, ok := want.Body.(Unknown); ok && ix.kindOf(i) != want.Body.Kind() {
					t.Fatalf("entry %d: kind %d, decoded %d", i, ix.kindOf(i), want.Body.Kind())
				}
			}
			if iv, fv := ix.Verify(), full.Verify(); (iv == nil) != (fv == nil) || iv != nil && iv.Error() != fv.Error() {
				t.Fatalf("wide %d, split %d: Verify %v on the index, %v on the entries", wide, split, ix.Verify(), full.Verify())
			}
		}
		checkHeads(t, full, full)
	}
	// Offsets past 4 GiB, which no test artifact reaches, go wide too.
	var sp span
	var wl []wideSpan
	t32 := spanTable{wide: wl}
	for _, at := range []int{0, 1<<32 - 10, 1 << 32, 1<<40 + 3} {
		end := at + 9
		setPlace(&sp, &t32.wide, 7, 8, at, end)
		if t32.at(&sp) != at || t32.end(&sp) != end || t32.seq(&sp) != 7 || t32.msgSeq(&sp) != 8 {
			t.Fatalf("at %d: read back %d..%d, seq %d, message %d", at, t32.at(&sp), t32.end(&sp), t32.seq(&sp), t32.msgSeq(&sp))
		}
		if (sp.flags&spanWide != 0) != (end > math.MaxUint32) {
			t.Fatalf("at %d: wide %v", at, sp.flags&spanWide != 0)
		}
	}
}

// checkHeads compares a's heads with the decoded entries of full.
func checkHeads(t *testing.T, a, full *Artifact) {
	t.Helper()
	spans, names := a.Heads()
	if spans.Len() != len(full.Entries) {
		t.Fatalf("%d heads, %d entries", spans.Len(), len(full.Entries))
	}
	for i, e := range full.Entries {
		want := refHeadOf(e)
		if !a.indexed && want.kind == KindInvocation {
			want.name = "" // a decoded artifact's heads name publishes and deliveries only
		}
		if x, ok := e.Body.(Unknown); ok && a.indexed {
			want.msgSeq = uint64(x.Code) // an index holds an unknown kind's code there
		}
		h := spans.At(i)
		got := refHead{consumer: h.Consumer(), seq: h.Seq(), producer: h.Message().Producer, msgSeq: h.Message().Seq,
			kind: h.Kind(), start: h.Start()}
		if h.Name() != noName {
			got.name = names[h.Name()]
		}
		if got != want || spans.Seq(i) != want.seq || spans.Consumer(i) != want.consumer || spans.Kind(i) != want.kind ||
			spans.Message(i) != h.Message() || spans.Name(i) != h.Name() || spans.Start(i) != want.start {
			t.Fatalf("entry %d: head %+v, decoded %+v", i, got, want)
		}
	}
}

// TestIndexCounts holds the counts an index keeps (Counts) to a count
// over the decoded entries, read whole and split in two, with every kind
// of entry, unknown kinds and consumer ids too large for the counts'
// slice; a decoded artifact has none. Ordered is set by Verify passing
// an index, and only then.
func TestIndexCounts(t *testing.T) {
	a := largeArtifact(splitFrom + 100)
	seq := map[uint32]uint64{0: a.Entries[len(a.Entries)-1].Seq + 1, 1: a.Entries[len(a.Entries)-2].Seq + 1}
	for _, e := range a.Entries {
		seq[e.Consumer] = max(seq[e.Consumer], e.Seq+1)
	}
	add := func(c uint32, b Body) {
		a.Entries = append(a.Entries, Entry{Consumer: c, Seq: seq[c], Body: b})
		seq[c]++
	}
	for i, c := range []uint32{0, 1, 7, smallConsumers + 3, 1 << 31} {
		add(c, Output{Channel: ChannelStdout, Primitive: "print", Args: []byte{1}, Outcome: OK, Result: []byte("x\n")})
		add(c, Unknown{Code: 99, Data: []byte{byte(i)}})
		add(c, Delivery{Target: "Counter", Start: true})
		add(c, Trap{TrapKind: "index", Message: "boom"})
		add(c, Exit{Code: int64(i)})
		add(c, Publish{Topic: "Tick", Message: MessageID{c, 1 << 20}, Payload: []byte{1}})
	}
	data := mustEncode(t, a)
	full, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint32]KindCounts{}
	for _, e := range full.Entries {
		kc := want[e.Consumer]
		kc.count(e.Body.Kind())
		want[e.Consumer] = kc
	}
	if _, ok := full.Counts(0); ok || full.Ordered() {
		t.Error("a decoded artifact has counts")
	}
	for _, split := range []int{0, 1, splitFrom} {
		ix, ferr := decodeIndexedFrom(data, split)
		if ferr != nil {
			t.Fatal(ferr)
		}
		for _, id := range []uint32{0, 1, 2, 7, smallConsumers + 3, 1 << 31, math.MaxUint32} {
			got, ok := ix.Counts(id)
			if !ok || got != want[id] {
				t.Errorf("split %d: consumer %d: counts %+v (%v), want %+v", split, id, got, ok, want[id])
			}
		}
		if want[0].Deliveries == 0 || want[0].Calls == 0 || want[0].Publishes == 0 {
			t.Fatalf("the artifact lacks a kind: %+v", want[0])
		}
		if ix.Ordered() || ix.Verify() == nil || ix.Ordered() {
			t.Errorf("split %d: an index Verify refuses is Ordered", split)
		}
	}

	// largeArtifact with each delivery to an instance its consumer runs.
	consistent := largeArtifact(splitFrom + 100)
	for i, e := range consistent.Entries {
		if d, ok := e.Body.(Delivery); ok {
			d.Target = []string{"Main", "Worker#0"}[e.Consumer]
			consistent.Entries[i].Body = d
		}
	}
	good := mustEncode(t, consistent)
	for _, split := range []int{0, splitFrom} {
		ix, ferr := decodeIndexedFrom(good, split)
		if ferr != nil {
			t.Fatal(ferr)
		}
		if ix.Ordered() {
			t.Errorf("split %d: Ordered before Verify", split)
		}
		if err := ix.Verify(); err != nil {
			t.Fatalf("split %d: %v", split, err)
		}
		if !ix.Ordered() {
			t.Errorf("split %d: not Ordered after Verify passed it", split)
		}
	}
}
