package artifact

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/zeebo/blake3"

	"github.com/hale-lang/hale/replay/internal/pages"
)

// The problems a decoder reports; a *FormatError wraps exactly one of them,
// so errors.Is tells which admission check failed.
var (
	ErrNotArtifact = errors.New("not a Hale artifact")
	ErrVersion     = errors.New("unsupported artifact format version")
	ErrFraming     = errors.New("bad framing")
	ErrTruncated   = errors.New("truncated artifact")
	ErrCount       = errors.New("entry count mismatch")
	ErrChecksum    = errors.New("checksum mismatch")
)

// FormatError is a problem found while decoding an artifact.
type FormatError struct {
	Err    error // ErrNotArtifact, ErrVersion, ErrFraming, ErrTruncated, ErrCount or ErrChecksum
	Offset int64 // byte offset where the problem was found
	Entry  int   // index of the entry concerned, or -1
	Msg    string
}

func (e *FormatError) Error() string { return e.Msg }

// Unwrap returns the sentinel error naming the kind of problem.
func (e *FormatError) Unwrap() error { return e.Err }

// Decode decodes a complete artifact. Any problem is a *FormatError: bad
// magic, a newer or invalid version, bad framing, a missing trailer,
// counts that disagree with the trailer, or a checksum mismatch.
// Byte-slice fields of the result share memory with data.
func Decode(data []byte) (*Artifact, error) {
	a, ferr := decode(data)
	if ferr != nil {
		return nil, ferr
	}
	return a, nil
}

// Index decodes data as strictly as Decode, but the artifact it returns
// keeps an index of its entries instead of the decoded entries (Entries
// is nil): Len and Entry read them from data, which must not change
// afterwards. Admission, the replayer and Diff work on such artifacts;
// allocating nothing per entry, it is several times faster than Decode.
func Index(data []byte) (*Artifact, error) {
	a, ferr := decodeIndexed(data)
	if ferr != nil {
		return nil, ferr
	}
	return a, nil
}

// Salvage decodes as much of data as it can. It returns every complete
// entry before the first problem, with a.Complete false and the problem
// as err; a is nil only when not even the header could be read. For a
// valid artifact it returns the same as Decode.
func Salvage(data []byte) (a *Artifact, err error) {
	a, ferr := decode(data)
	if ferr != nil {
		return a, ferr
	}
	return a, nil
}

// decodeIndexed decodes data as strictly as Decode, but keeps an index of
// where each entry lies in data instead of the decoded entries: a replay
// reads each entry from data when it needs it (Artifact.Entry), so
// admission allocates one array for 400,000 entries instead of one
// object per entry, and the garbage collector has nothing to scan in it.
// Every check is made here, so reading an entry later cannot fail.
func decodeIndexed(data []byte) (*Artifact, *FormatError) {
	return decodeIndexedFrom(data, splitFrom)
}

// decodeIndexedFrom is decodeIndexed splitting the work between two
// goroutines from split entries on.
func decodeIndexedFrom(data []byte, split int) (*Artifact, *FormatError) {
	a, ferr := decodeAs(data, false, split)
	if ferr != nil {
		return nil, ferr
	}
	return a, nil
}

// splitFrom is the number of entries from which the indexing decoder
// reads the two halves of an artifact on two goroutines: below it,
// starting them costs more than it saves.
const splitFrom = 1 << 12

// hashAheadFrom is the size from which the indexing decoder hashes an
// artifact on a goroutine of its own, from the start, beside the walk
// that counts its entries (about a hundred bytes an entry less than
// splitFrom entries take).
const hashAheadFrom = 256 << 10

// decode is decodeAs keeping the decoded entries.
func decode(data []byte) (*Artifact, *FormatError) { return decodeAs(data, true, 0) }

// decodeAs is the one decoder: it stops at the first problem and returns
// what it had read until then. With keep it returns the decoded entries
// (Artifact.Entries), without it their index (Artifact.spans), and with
// split > 0 it reads an artifact of at least split entries in parallel
// (indexHalves).
func decodeAs(data []byte, keep bool, split int) (*Artifact, *FormatError) {
	if len(data) < len(Magic) || string(data[:len(Magic)]) != Magic {
		return nil, &FormatError{Err: ErrNotArtifact, Entry: -1, Msg: "not a Hale artifact (bad magic)"}
	}
	c := &cursor{data: data, pos: len(Magic), end: len(data), entry: -1, top: true, names: &nameTable{}}
	version := c.uvarint("format version")
	if c.err != nil {
		return nil, c.err
	}
	switch {
	case version > FormatVersion:
		return nil, &FormatError{Err: ErrVersion, Offset: int64(len(Magic)), Entry: -1,
			Msg: fmt.Sprintf("artifact format version %d is newer than this hale supports (%d)", version, FormatVersion)}
	case version == 0:
		return nil, &FormatError{Err: ErrVersion, Offset: int64(len(Magic)), Entry: -1,
			Msg: "artifact format version 0 is not valid"}
	}

	c.v2 = version >= 2
	hc := c.record("header", c.pos)
	if c.err != nil {
		return nil, c.err
	}
	a := &Artifact{Version: version}
	hc.v3 = version >= 3
	hc.header(&a.Header)
	if hc.finish(); hc.err != nil {
		return nil, hc.err
	}

	var found entryCounts
	// A first walk over the records' frames counts the entries, so that
	// the slice is allocated once at its size: a guess from the input's
	// size reserved (and cleared) two to three times the memory.
	var marks []int // where every markEvery-th record starts, for indexHalves
	markp := &marks
	if keep || split <= 0 {
		markp = nil
	}
	var sum <-chan [32]byte
	if !keep && split > 0 && len(data) >= hashAheadFrom {
		// Hashed beside the walk below, which leaves a core idle.
		sum = hashAhead(data)
	}
	n, framed := countEntriesMarked(c.data[c.pos:c.end], math.MaxInt, markp)
	switch {
	case keep:
		a.Entries = make([]Entry, 0, n)
	default:
		a.indexed, a.data, a.names = true, data, c.names
		a.spans.list = make([]span, 0, n)
		if split > 0 && n >= split {
			// Each half asks for the pages of its own spans.
			if ferr := c.indexHalves(a, n, framed, marks, &found); ferr != nil {
				return a, ferr
			}
		} else {
			pages.Prepare(a.spans.list)
		}
	}
	for {
		start := c.pos
		c.entry = a.Len()
		if c.pos == c.end {
			return a, c.truncated(start, "the data ends")
		}
		kind := Kind(c.uvarint("entry kind"))
		if c.err != nil {
			return a, c.err
		}
		if kind == trailerMarker {
			c.entry = -1
			break
		}
		bc := c.record(entryLabel(kind), start)
		if c.err != nil {
			return a, c.err
		}
		if !keep {
			sp := bc.span(kind, &a.spans.wide)
			if bc.finish(); bc.err != nil {
				return a, bc.err
			}
			a.spans.list = append(a.spans.list, sp)
			found.add(sp.consumer, Kind(sp.kind))
			continue
		}
		e := bc.body(kind)
		if bc.finish(); bc.err != nil {
			return a, bc.err
		}
		a.Entries = append(a.Entries, e)
		found.add(e.Consumer, kind)
	}
	if ferr := c.trailer(a, &found, sum); ferr != nil {
		return a, ferr
	}
	if !keep {
		// An index does not change: its counts stay true.
		a.counts, a.counted = found, true
	}
	return a, nil
}

// hashAhead hashes what the checksum covers in a valid artifact,
// everything but its last 32 bytes, on another goroutine.
func hashAhead(data []byte) <-chan [32]byte {
	sum := make(chan [32]byte, 1)
	if len(data) < 32 {
		close(sum)
		return sum
	}
	go func() { sum <- blake3.Sum256(data[:len(data)-32]) }()
	return sum
}

// indexHalves indexes the first n entry records, which start at c.pos and
// take framed bytes (countEntries), as two halves on two goroutines, and
// moves c past them. Each record is read as the loop of decodeAs would
// read it (by fastRecord, or when that gives up by the general reader
// from the record's start), so a problem is reported just as that loop
// reports it; one in the first half is the first problem.
//
// The first half ends at the mark (countEntriesMarked) nearest to n/2,
// so that the records are not walked a second time to find the middle.
func (c *cursor) indexHalves(a *Artifact, n, framed int, marks []int, found *entryCounts) *FormatError {
	half, mid, ok := splitAt(n, marks)
	if !ok { // fewer records than marks are made for: walk them again
		half = n / 2
		_, mid = countEntries(c.data[c.pos:c.pos+framed], half)
	}
	a.spans.list = a.spans.list[:n]
	type part struct {
		cur   *cursor
		found entryCounts
		wide  []wideSpan
		err   *FormatError
	}
	first := &part{cur: &cursor{data: c.data, pos: c.pos, end: c.pos + mid, top: true, names: c.names, v2: c.v2}}
	second := &part{cur: &cursor{data: c.data, pos: c.pos + mid, end: c.pos + framed, top: true, names: &nameTable{}, v2: c.v2}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		pages.Prepare(a.spans.list[half:])
		second.err = second.cur.indexRange(a.spans.list[half:], half, &second.found, &second.wide)
	}()
	pages.Prepare(a.spans.list[:half])
	first.err = first.cur.indexRange(a.spans.list[:half], 0, &first.found, &first.wide)
	<-done
	if first.err != nil {
		return first.err
	}
	if second.err != nil {
		return second.err
	}
	// The second half numbered its names in a table of its own.
	renumber := make([]uint32, len(second.cur.names.list))
	for id, s := range second.cur.names.list {
		renumber[id] = c.names.idOf(s)
	}
	// And its wide spans number their values in a list of its own,
	// which follows the first half's.
	a.spans.wide = append(append(a.spans.wide, first.wide...), second.wide...)
	shift := uint32(len(a.spans.wide) - len(second.wide))
	for i := range a.spans.list[half:] {
		sp := &a.spans.list[half+i]
		if sp.name != noName {
			sp.name = renumber[sp.name]
			if sp.topic != 0 {
				sp.topic = spanTopic(renumber[sp.topic-1])
			}
		}
		if sp.flags&spanWide != 0 {
			sp.at32 += shift
		}
	}
	found.merge(&first.found)
	found.merge(&second.found)
	c.pos += framed
	return nil
}

// indexRange indexes len(spans) entry records from c.pos, entries first
// on, all of them framed: it is the loop of decodeAs for such records.
func (c *cursor) indexRange(spans []span, first int, found *entryCounts, wide *[]wideSpan) *FormatError {
	for i := range spans {
		start := c.pos
		if next, ok := fastRecord(c.data, start, c.end, c.names, c.v2, &spans[i], wide); ok {
			found.add(spans[i].consumer, Kind(spans[i].kind))
			c.pos = next
			continue
		}
		c.entry = first + i
		kind := Kind(c.uvarint("entry kind"))
		bc := c.record(entryLabel(kind), start)
		if c.err != nil {
			return c.err
		}
		sp := bc.span(kind, wide)
		if bc.finish(); bc.err != nil {
			return bc.err
		}
		spans[i] = sp
		found.add(sp.consumer, Kind(sp.kind))
	}
	return nil
}

// markEvery is how many records apart countEntriesMarked notes where a
// record starts.
const markEvery = 1 << 10

// countEntriesMarked is countEntries that also appends to *marks, when
// marks is not nil, the offset in data of record k*markEvery for every k
// (0 included) up to the count.
func countEntriesMarked(data []byte, limit int, marks *[]int) (n, framed int) {
	for framed < len(data) && data[framed] != trailerMarker && n < limit {
		if marks != nil && n%markEvery == 0 {
			*marks = append(*marks, framed)
		}
		_, k := binary.Uvarint(data[framed:])
		if k <= 0 {
			break
		}
		size, l := binary.Uvarint(data[framed+k:])
		if l <= 0 || size > uint64(len(data)-framed-k-l) {
			break
		}
		framed += k + l + int(size)
		n++
	}
	return n, framed
}

// splitAt returns where indexHalves divides n records: the number of
// records in the first half, the multiple of markEvery nearest to n/2,
// and the offset where the second half starts (its mark).
func splitAt(n int, marks []int) (half, mid int, ok bool) {
	k := min((n/2+markEvery/2)/markEvery, len(marks)-1)
	if k <= 0 || k*markEvery >= n {
		return 0, 0, false
	}
	return k * markEvery, marks[k], true
}

// countEntries returns how many entry records data starts with, reading
// only each record's kind and length, up to the trailer marker, to where
// the framing breaks (which the decoder then reports) or to limit
// records; and how many bytes those records take.
func countEntries(data []byte, limit int) (n, framed int) {
	return countEntriesMarked(data, limit, nil)
}

// entryLabel names an entry record in error messages.
func entryLabel(k Kind) string {
	switch k {
	case KindInvocation:
		return "invocation entry"
	case KindPublish:
		return "publish entry"
	case KindDelivery:
		return "delivery entry"
	case KindOutput:
		return "output entry"
	case KindTrap:
		return "trap entry"
	case KindExit:
		return "exit entry"
	}
	return "unknown entry"
}

// trailer reads the trailer record (its marker already consumed) and the
// checksum, and checks both against what was decoded.
//
// sum, when not nil, delivers the hash of all but the last 32 bytes
// (hashAhead): the checksum of a valid artifact.
func (c *cursor) trailer(a *Artifact, counts *entryCounts, sum <-chan [32]byte) *FormatError {
	tc := c.record("trailer", c.pos-1)
	if c.err != nil {
		return c.err
	}
	t := &a.Trailer
	t.Entries = tc.uvarint("total entry count")
	n := tc.count("consumer count")
	last := int64(-1)
	for i := uint64(0); i < n && tc.err == nil; i++ {
		at := tc.pos
		id := tc.consumer()
		count := tc.uvarint("entry count")
		switch {
		case tc.err != nil:
		case int64(id) <= last:
			tc.failAt(at, "trailer consumer %d is not in ascending order", id)
		case count == 0:
			tc.failAt(at, "trailer lists consumer %d with zero entries", id)
		}
		last = int64(id)
		t.Counts = append(t.Counts, ConsumerCount{Consumer: id, Entries: count})
	}
	t.Verdict = tc.string("verdict")
	t.ExitCode = tc.varint("exit code")
	if tc.finish(); tc.err != nil {
		return tc.err
	}

	sumAt := c.pos
	if c.end-c.pos < len(t.Checksum) {
		return c.truncated(sumAt, "the checksum is cut off")
	}
	copy(t.Checksum[:], c.data[sumAt:])
	c.pos += len(t.Checksum)
	if c.pos != c.end {
		return c.failAt(c.pos, "%d bytes follow the trailer", c.end-c.pos)
	}
	var got [32]byte
	if sum != nil && sumAt == len(c.data)-len(t.Checksum) {
		got = <-sum
	} else {
		got = blake3.Sum256(c.data[:sumAt])
	}
	if got != t.Checksum {
		return &FormatError{Err: ErrChecksum, Offset: int64(sumAt), Entry: -1,
			Msg: fmt.Sprintf("checksum mismatch at offset %d: the trailer has %s but the content hashes to %s",
				sumAt, hexDigest(t.Checksum), hexDigest(got))}
	}

	mismatch := func(msg string, args ...any) *FormatError {
		return &FormatError{Err: ErrCount, Offset: int64(tc.start), Entry: -1,
			Msg: "entry count mismatch: " + fmt.Sprintf(msg, args...)}
	}
	if t.Entries != uint64(a.Len()) {
		return mismatch("the trailer says %d entries, the artifact has %d", t.Entries, a.Len())
	}
	found := counts.byConsumer()
	for _, cc := range t.Counts {
		if found[cc.Consumer] != cc.Entries {
			return mismatch("the trailer says consumer %d has %d entries, the artifact has %d",
				cc.Consumer, cc.Entries, found[cc.Consumer])
		}
	}
	if len(t.Counts) != len(found) {
		for id, n := range found {
			if !hasCount(t.Counts, id) {
				return mismatch("the trailer does not list consumer %d, which has %d entries", id, n)
			}
		}
	}
	a.Complete = true
	return nil
}

// entryCounts counts entries per consumer while decoding, in all and of
// the kinds a replay's tables are sized by (KindCounts): in a slice for
// the small ids every real program has, in a map for the rest, since a
// map update per entry is a tenth of the decoding time.
type entryCounts struct {
	small []KindCounts
	large map[uint32]KindCounts
}

// KindCounts are how many entries one consumer has in an artifact: in
// all, and of the kinds a replay builds its tables from.
type KindCounts struct {
	Entries    uint64
	Deliveries uint64
	Calls      uint64 // invocation, output and exit entries: the journaled calls of its handlers
	Publishes  uint64
}

// count counts one entry of kind k (0 for an unknown kind).
func (kc *KindCounts) count(k Kind) {
	kc.Entries++
	switch k {
	case KindDelivery:
		kc.Deliveries++
	case KindInvocation, KindOutput, KindExit:
		kc.Calls++
	case KindPublish:
		kc.Publishes++
	}
}

// plus adds o's counts.
func (kc *KindCounts) plus(o KindCounts) {
	kc.Entries += o.Entries
	kc.Deliveries += o.Deliveries
	kc.Calls += o.Calls
	kc.Publishes += o.Publishes
}

const smallConsumers = 1 << 12

// add counts an entry of consumer id and kind k.
func (ec *entryCounts) add(id uint32, k Kind) {
	if int(id) < len(ec.small) {
		ec.small[id].count(k)
		return
	}
	if id < smallConsumers {
		for int(id) >= len(ec.small) {
			ec.small = append(ec.small, KindCounts{})
		}
		ec.small[id].count(k)
		return
	}
	if ec.large == nil {
		ec.large = map[uint32]KindCounts{}
	}
	kc := ec.large[id]
	kc.count(k)
	ec.large[id] = kc
}

// merge adds o's counts.
func (ec *entryCounts) merge(o *entryCounts) {
	for id, n := range o.small {
		for id >= len(ec.small) {
			ec.small = append(ec.small, KindCounts{})
		}
		ec.small[id].plus(n)
	}
	for id, n := range o.large {
		if ec.large == nil {
			ec.large = map[uint32]KindCounts{}
		}
		kc := ec.large[id]
		kc.plus(n)
		ec.large[id] = kc
	}
}

// of returns consumer id's counts.
func (ec *entryCounts) of(id uint32) KindCounts {
	if int(id) < len(ec.small) {
		return ec.small[id]
	}
	return ec.large[id]
}

// byConsumer returns the entry counts of the consumers that have entries.
func (ec *entryCounts) byConsumer() map[uint32]uint64 {
	m := make(map[uint32]uint64, len(ec.small)+len(ec.large))
	for id, n := range ec.small {
		if n.Entries > 0 {
			m[uint32(id)] = n.Entries
		}
	}
	for id, n := range ec.large {
		m[id] = n.Entries
	}
	return m
}

func hasCount(counts []ConsumerCount, id uint32) bool {
	for _, cc := range counts {
		if cc.Consumer == id {
			return true
		}
	}
	return false
}

// cursor reads fields from data[pos:end]. The first problem sticks in err
// and turns every later read into a no-op returning zero values, so
// parsing code reads straight through and checks err once.
type cursor struct {
	data     []byte
	pos, end int
	start    int    // offset of the record being read
	what     string // the record being read, for messages
	entry    int    // index of the entry being read, or -1
	top      bool   // reading the file itself: running out of data means truncation
	err      *FormatError
	// names interns the strings that repeat across entries (topics,
	// targets, primitives, channels), shared by a file's every cursor.
	names *nameTable
	// frozen: names is only read, never written (an admitted artifact's
	// entries are read from several goroutines).
	frozen bool
	// sub is reused for every record read from this cursor: a record is
	// read to its end before the next one starts.
	sub *cursor
	// v2: the file has format version 2 or newer (trap kinds, publish
	// delays).
	v2 bool
	// v3: the header of a format version 3 file (process id); set only
	// on the header's cursor.
	v3 bool
}

// record reads a length-prefixed record and returns a cursor over its body.
// start is the offset of the record's first byte, marker included.
func (c *cursor) record(what string, start int) *cursor {
	n := c.uvarintOf(what, " length")
	if c.err != nil {
		return nil
	}
	if n > uint64(c.end-c.pos) {
		c.truncated(start, fmt.Sprintf("the data ends inside the %s (%d of %d bytes present)", what, c.end-c.pos, n))
		return nil
	}
	if c.sub == nil {
		c.sub = &cursor{}
	}
	body := c.sub
	// Only the fields that differ from the last record's: this runs once
	// per entry.
	body.data, body.pos, body.end, body.start, body.what, body.entry = c.data, c.pos, c.pos+int(n), start, what, c.entry
	body.top, body.err, body.names, body.frozen, body.v2 = false, nil, c.names, c.frozen, c.v2
	c.pos += int(n)
	return body
}

// finish checks that a record body was read exactly.
func (c *cursor) finish() {
	if c.err == nil && c.pos != c.end {
		c.failAt(c.pos, "%d unused bytes at the end of the %s", c.end-c.pos, c.what)
	}
}

func (c *cursor) failAt(at int, format string, args ...any) *FormatError {
	if c.err == nil {
		where := fmt.Sprintf("bad framing at offset %d", at)
		if c.entry >= 0 {
			where += fmt.Sprintf(" (entry %d)", c.entry)
		}
		c.err = &FormatError{Err: ErrFraming, Offset: int64(at), Entry: c.entry,
			Msg: where + ": " + fmt.Sprintf(format, args...)}
	}
	return c.err
}

func (c *cursor) truncated(at int, detail string) *FormatError {
	if c.err == nil {
		msg := fmt.Sprintf("truncated artifact: missing trailer; %s at offset %d", detail, at)
		if c.entry >= 0 {
			msg += fmt.Sprintf(", after %d complete entries", c.entry)
		}
		c.err = &FormatError{Err: ErrTruncated, Offset: int64(at), Entry: c.entry, Msg: msg}
	}
	return c.err
}

// short reports that a field does not fit in what remains.
func (c *cursor) short(at int, field string) {
	if c.top {
		c.truncated(at, "the data ends inside the "+field)
		return
	}
	c.failAt(at, "%s runs past the end of the %s", field, c.what)
}

// uvarint reads a minimally encoded LEB128 integer; minimality makes the
// encoding canonical, so decode-then-encode reproduces the input.
func (c *cursor) uvarint(field string) uint64 { return c.uvarintOf(field, "") }

// uvarintOf is uvarint for the field named field+suffix; the name is only
// built for an error message, keeping the hot path free of allocations.
func (c *cursor) uvarintOf(field, suffix string) uint64 {
	if c.err != nil {
		return 0
	}
	if c.pos < c.end && c.data[c.pos] < 0x80 { // most fields are one byte
		c.pos++
		return uint64(c.data[c.pos-1])
	}
	at := c.pos
	var x uint64
	for i := 0; i < 10; i++ {
		if c.pos >= c.end {
			c.short(at, field+suffix)
			return 0
		}
		b := c.data[c.pos]
		c.pos++
		if i == 9 && b > 1 {
			c.failAt(at, "%s overflows 64 bits", field+suffix)
			return 0
		}
		x |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			if b == 0 && i > 0 {
				c.failAt(at, "%s is not minimally encoded", field+suffix)
				return 0
			}
			return x
		}
	}
	c.failAt(at, "%s is longer than 10 bytes", field+suffix)
	return 0
}

// varint reads a zigzag-encoded signed integer.
func (c *cursor) varint(field string) int64 {
	u := c.uvarint(field)
	return int64(u>>1) ^ -int64(u&1)
}

func (c *cursor) consumer() uint32 {
	at := c.pos
	id := c.uvarint("consumer id")
	if id > math.MaxUint32 {
		c.failAt(at, "consumer id %d does not fit in 32 bits", id)
		return 0
	}
	return uint32(id)
}

func (c *cursor) messageID() MessageID {
	p := c.consumer()
	return MessageID{Producer: p, Seq: c.uvarint("message seq")}
}

// count reads a list length; every element takes at least one byte, so a
// count beyond the remaining bytes is bad framing, caught before anything
// is allocated for it.
func (c *cursor) count(field string) uint64 { return c.countOf(field, "") }

// countOf is count for the field named field+suffix.
func (c *cursor) countOf(field, suffix string) uint64 {
	at := c.pos
	n := c.uvarintOf(field, suffix)
	if c.err == nil && n > uint64(c.end-c.pos) {
		c.failAt(at, "%s%s %d exceeds the %d bytes left in the %s", field, suffix, n, c.end-c.pos, c.what)
		return 0
	}
	return n
}

// bytes reads a length-prefixed byte string. The result shares data's
// memory; its capacity is clipped so that appending to it cannot clobber
// the bytes after it.
func (c *cursor) bytes(field string) []byte {
	at := c.pos
	n := c.uvarintOf(field, " length")
	if c.err != nil {
		return nil
	}
	if n > uint64(c.end-c.pos) {
		c.short(at, field)
		return nil
	}
	p := c.pos
	c.pos += int(n)
	return c.data[p:c.pos:c.pos]
}

func (c *cursor) string(field string) string { return string(c.bytes(field)) }

// name reads a string that many entries repeat, allocating each distinct
// one once.
func (c *cursor) name(field string) string {
	b := c.bytes(field)
	if c.names == nil || c.err != nil {
		return string(b)
	}
	return c.names.intern(b, !c.frozen)
}

// nameTable interns the names that entries repeat. Each distinct name
// is allocated once and numbered, so that an entry's span can refer to
// it by number.
type nameTable struct {
	ids  map[string]uint32
	list []string
	// recent are the names last interned, tried before the map: most
	// entries repeat one of the previous entry's names.
	recent [2]uint32
}

// intern returns the interned copy of b, adding it when add is set (and
// otherwise allocating a copy for a name the table does not have).
// Without add the table is only read, so several goroutines may share it.
func (t *nameTable) intern(b []byte, add bool) string {
	id, ok := t.id(b, add)
	if !ok {
		return string(b)
	}
	return t.list[id]
}

// id returns b's number, adding it when add is set.
func (t *nameTable) id(b []byte, add bool) (uint32, bool) {
	for _, id := range t.recent {
		if int(id) < len(t.list) && t.list[id] == string(b) {
			return id, true
		}
	}
	id, ok := t.ids[string(b)]
	if !ok && add {
		if t.ids == nil {
			t.ids = map[string]uint32{}
		}
		id, ok = uint32(len(t.list)), true
		s := string(b)
		t.ids[s] = id
		t.list = append(t.list, s)
	}
	if ok && add {
		// The slot of the one used longer ago.
		copy(t.recent[1:], t.recent[:len(t.recent)-1])
		t.recent[0] = id
	}
	return id, ok
}

// idOf returns the number of name s, which the table has.
func (t *nameTable) idOf(s string) uint32 {
	id, ok := t.id([]byte(s), true)
	if !ok {
		return noName
	}
	return id
}

// noName is a span's name when its entry has none.
const noName = ^uint32(0)

func (c *cursor) strings(field string) []string {
	n := c.countOf(field, " count")
	var ss []string
	for i := uint64(0); i < n && c.err == nil; i++ {
		ss = append(ss, c.string(field))
	}
	return ss
}

func (c *cursor) digest(d *[32]byte, field string) { c.fixed(d[:], field) }

// fixed reads len(d) bytes into d.
func (c *cursor) fixed(d []byte, field string) {
	if c.err != nil {
		return
	}
	if c.end-c.pos < len(d) {
		c.short(c.pos, field)
		return
	}
	copy(d[:], c.data[c.pos:])
	c.pos += len(d)
}

// flag reads a byte that must be 0 or 1.
func (c *cursor) flag(field string) bool {
	if c.err != nil {
		return false
	}
	if c.pos >= c.end {
		c.short(c.pos, field)
		return false
	}
	b := c.data[c.pos]
	if b > 1 {
		c.failAt(c.pos, "%s is %d, not 0 or 1", field, b)
		return false
	}
	c.pos++
	return b == 1
}

func (c *cursor) header(h *Header) {
	h.HaleVersion = c.string("hale version")
	h.Created = c.varint("creation time")
	c.digest(&h.BuildDigest, "build digest")
	c.digest(&h.ShapeHash, "shape hash")
	h.EnvPolicy = c.string("env policy")
	h.Files = c.strings("file path")
	n := c.count("consumer count")
	for i := uint64(0); i < n && c.err == nil; i++ {
		var k Consumer
		k.ID = c.consumer()
		k.Kind = c.string("consumer kind")
		k.Name = c.string("consumer name")
		k.Instances = c.strings("instance name")
		h.Consumers = append(h.Consumers, k)
	}
	h.Types = c.bytes("type table")
	if c.v3 {
		limit := c.uvarint("memory limit")
		if limit > math.MaxInt64 {
			c.failAt(c.pos, "memory limit %d is out of range", limit)
		}
		h.MemoryLimit = int64(limit)
		var pid [8]byte
		c.fixed(pid[:], "process id")
		h.ProcessID = binary.LittleEndian.Uint64(pid[:])
		n := c.count("binding count")
		for i := uint64(0); i < n && c.err == nil; i++ {
			var x Binding
			x.Kind = c.string("binding kind")
			x.Topic = c.string("binding topic")
			x.Subject = c.string("binding subject")
			x.Queue = c.string("binding queue")
			x.Consumer = c.consumer()
			h.Bindings = append(h.Bindings, x)
		}
		return
	}
	if c.err == nil && c.pos < c.end { // absent from recordings of older versions
		at := c.pos
		limit := c.uvarint("memory limit")
		if limit == 0 || limit > math.MaxInt64 {
			// Not recorded is written as no field at all.
			c.failAt(at, "memory limit %d is out of range", limit)
		}
		h.MemoryLimit = int64(limit)
	}
}

// body reads an entry body: consumer, seq, then the kind's fields.
func (c *cursor) body(kind Kind) Entry {
	e := Entry{Consumer: c.consumer(), Seq: c.uvarint("seq")}
	e.Body = c.fields(kind)
	return e
}

// span reads an entry body as body does, checking every field, and
// returns where it lies instead of what it holds, with the few fields a
// replay's tables are built from (its wide values appended to *wide).
func (c *cursor) span(kind Kind, wide *[]wideSpan) (sp span) {
	sp = span{consumer: c.consumer(), name: noName}
	seq := c.uvarint("seq")
	at, end := c.pos, c.end
	var msgSeq uint64
	if kind.known() {
		sp.kind = uint8(kind)
	} else {
		msgSeq = uint64(kind) // see span.kind
	}
	defer func() { setPlace(&sp, wide, seq, msgSeq, at, end) }()
	switch kind {
	case KindInvocation:
		x := c.invocation()
		if c.err == nil {
			sp.name = c.names.idOf(x.Primitive)
		}
	case KindPublish:
		x := c.publish()
		sp.producer, msgSeq = x.Message.Producer, x.Message.Seq
		if c.err == nil {
			sp.name = c.names.idOf(x.Topic)
		}
	case KindDelivery:
		x := c.delivery()
		sp.producer, msgSeq = x.Message.Producer, x.Message.Seq
		if x.Start {
			sp.flags |= spanStart
		}
		if c.err == nil {
			sp.name = c.names.idOf(x.Target)
		}
	case KindOutput:
		c.output()
	case KindTrap:
		c.trap()
	case KindExit:
		c.exit()
	case KindIngress:
		c.ingress()
	default:
		c.pos = c.end
	}
	return sp
}

// fields reads the kind's fields, the rest of an entry body.
func (c *cursor) fields(kind Kind) Body {
	switch kind {
	case KindInvocation:
		return c.invocation()
	case KindPublish:
		return c.publish()
	case KindDelivery:
		return c.delivery()
	case KindOutput:
		return c.output()
	case KindTrap:
		return c.trap()
	case KindExit:
		return c.exit()
	case KindIngress:
		return c.ingress()
	}
	if c.err != nil {
		return nil
	}
	u := Unknown{Code: kind, Data: c.data[c.pos:c.end:c.end]}
	c.pos = c.end
	return u
}

func (c *cursor) invocation() (x Invocation) {
	x.Primitive = c.name("primitive")
	x.Args = c.bytes("args")
	x.Outcome, x.Result, x.Length, x.TrapKind, x.Message = c.outcome()
	return x
}

func (c *cursor) publish() (x Publish) {
	x.Topic = c.name("topic")
	x.Message = c.messageID()
	x.Payload = c.bytes("payload")
	if c.v2 {
		x.DelayMS = c.uvarint("delay")
	}
	return x
}

func (c *cursor) delivery() (x Delivery) {
	x.Target = c.name("target")
	x.Start = c.flag("start flag")
	if !x.Start {
		x.Message = c.messageID()
		x.Topic = c.name("topic")
	}
	return x
}

func (c *cursor) output() (x Output) {
	x.Channel = c.name("channel")
	x.Primitive = c.name("primitive")
	x.Args = c.bytes("args")
	x.Outcome, x.Result, x.Length, x.TrapKind, x.Message = c.outcome()
	return x
}

func (c *cursor) trap() (x Trap) {
	if c.v2 {
		x.TrapKind = c.string("trap kind")
	}
	x.Message = c.string("message")
	x.Position = c.string("position")
	x.Stack = c.strings("stack frame")
	x.At = c.coordinate()
	return x
}

func (c *cursor) exit() (x Exit) {
	x.Code = c.varint("exit code")
	x.Position = c.string("position")
	x.At = c.coordinate()
	return x
}

func (c *cursor) ingress() (x Ingress) {
	x.Subject = c.string("subject")
	x.MsgID = c.string("message id")
	x.Payload = c.bytes("payload")
	return x
}

func (c *cursor) outcome() (o Outcome, result []byte, length uint64, kind, message string) {
	if c.err != nil {
		return
	}
	if c.pos >= c.end {
		c.short(c.pos, "outcome")
		return
	}
	o = Outcome(c.data[c.pos])
	switch o {
	case OK:
		c.pos++
		result = c.bytes("result")
	case Withheld:
		c.pos++
		length = c.uvarint("withheld length")
	case Trapped:
		c.pos++
		if c.v2 {
			kind = c.string("trap kind")
		}
		message = c.string("trap message")
	default:
		c.failAt(c.pos, "unknown outcome %d", o)
		o = OK
	}
	return
}

func (c *cursor) coordinate() *Coordinate {
	if !c.flag("coordinate flag") {
		return nil
	}
	co := Coordinate{Consumer: c.consumer(), N: c.uvarint("delivery number")}
	if c.err != nil {
		return nil
	}
	return &co
}
