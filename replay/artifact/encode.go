package artifact

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/zeebo/blake3"
)

// flushSize is how many encoded bytes a Writer gathers before writing them.
const flushSize = 64 << 10

// trailerMarker is the kind code that announces the trailer.
const trailerMarker = 0

// Writer encodes an artifact onto an io.Writer: the header when it is
// created, then entries one by one, then the trailer on Finish. It
// buffers up to 64 KiB; Flush writes what it holds. A Writer is not safe
// for concurrent use (the Recorder serialises through one goroutine).
type Writer struct {
	w       io.Writer
	sum     *blake3.Hasher
	buf     []byte
	scratch []byte
	total   uint64
	counts  map[uint32]uint64
	err     error // first write error; every later call returns it
	done    bool
	version uint64 // the format version written: FormatVersion, or an older one for Encode
}

// NewWriter writes the magic, the format version and the header to w and
// returns a Writer for the entries.
func NewWriter(w io.Writer, h *Header) (*Writer, error) {
	return newWriter(w, h, FormatVersion)
}

// newWriter is NewWriter writing format version version.
func newWriter(w io.Writer, h *Header, version uint64) (*Writer, error) {
	if version < MinFormatVersion || version > FormatVersion {
		return nil, fmt.Errorf("cannot write artifact format version %d", version)
	}
	wr := &Writer{w: w, sum: blake3.New(), counts: map[uint32]uint64{}, version: version}
	wr.buf = append(wr.buf, Magic...)
	wr.buf = binary.AppendUvarint(wr.buf, version)
	body := appendHeader(nil, h, version)
	wr.buf = binary.AppendUvarint(wr.buf, uint64(len(body)))
	wr.buf = append(wr.buf, body...)
	if err := wr.Flush(); err != nil {
		return nil, err
	}
	return wr, nil
}

// WriteEntry appends one entry. Its Consumer and Seq are written as given.
func (w *Writer) WriteEntry(e Entry) error {
	if err := w.usable(); err != nil {
		return err
	}
	rest, err := appendBody(w.scratch[:0], e.Body, w.version)
	w.scratch = rest
	if err != nil {
		return err
	}
	return w.writeFrame(e.Body.Kind(), e.Consumer, e.Seq, rest)
}

// writeFrame appends an entry whose kind-specific part is already encoded.
func (w *Writer) writeFrame(kind Kind, consumer uint32, seq uint64, rest []byte) error {
	if err := w.usable(); err != nil {
		return err
	}
	w.buf = appendFrame(w.buf, kind, consumer, seq, rest)
	w.total++
	w.counts[consumer]++
	if len(w.buf) >= flushSize {
		return w.Flush()
	}
	return nil
}

// appendFrame appends an entry's frame: its kind, its length, consumer
// and seq, then rest, the kind-specific part already encoded.
func appendFrame(b []byte, kind Kind, consumer uint32, seq uint64, rest []byte) []byte {
	n := uvarintLen(uint64(consumer)) + uvarintLen(seq) + len(rest)
	b = binary.AppendUvarint(b, uint64(kind))
	b = binary.AppendUvarint(b, uint64(n))
	b = binary.AppendUvarint(b, uint64(consumer))
	b = binary.AppendUvarint(b, seq)
	return append(b, rest...)
}

// writeFrames writes n entries already framed in p (appendFrame), after
// what the Writer holds, straight from p: the caller keeps the entries'
// counts per consumer and gives them to setCounts before Finish.
func (w *Writer) writeFrames(p []byte, n uint64) error {
	if err := w.usable(); err != nil {
		return err
	}
	if len(w.buf) > 0 {
		if err := w.Flush(); err != nil {
			return err
		}
	}
	w.total += n
	w.sum.Write(p)
	if _, err := w.w.Write(p); err != nil {
		w.err = err
		return err
	}
	return nil
}

// setCounts adds entries of consumer written by writeFrames to the
// trailer's counts.
func (w *Writer) setCounts(consumer uint32, entries uint64) {
	w.counts[consumer] += entries
}

// Flush writes the buffered bytes.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	w.sum.Write(w.buf)
	return w.write()
}

func (w *Writer) write() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.w.Write(w.buf)
	w.buf = w.buf[:0]
	if err != nil {
		w.err = err
	}
	return err
}

// Finish appends the trailer (counts, verdict, exit code, checksum) and
// flushes. The Writer cannot be used afterwards.
func (w *Writer) Finish(verdict string, exitCode int64) error {
	if err := w.usable(); err != nil {
		return err
	}
	w.done = true
	body := binary.AppendUvarint(nil, w.total)
	ids := make([]uint32, 0, len(w.counts))
	for id := range w.counts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	body = binary.AppendUvarint(body, uint64(len(ids)))
	for _, id := range ids {
		body = binary.AppendUvarint(body, uint64(id))
		body = binary.AppendUvarint(body, w.counts[id])
	}
	body = appendString(body, verdict)
	body = binary.AppendVarint(body, exitCode)

	w.buf = binary.AppendUvarint(w.buf, trailerMarker)
	w.buf = binary.AppendUvarint(w.buf, uint64(len(body)))
	w.buf = append(w.buf, body...)
	w.sum.Write(w.buf)
	w.buf = w.sum.Sum(w.buf) // the checksum covers every byte before it
	return w.write()
}

var errFinished = errors.New("artifact writer already finished")

func (w *Writer) usable() error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return errFinished
	}
	return nil
}

// Encode returns the bytes of a complete artifact holding a's header and
// entries. The trailer's counts and checksum are computed; its verdict and
// exit code are taken from a.Trailer. For an artifact that Decode
// accepted, Encode returns the decoded bytes exactly: it writes format
// version a.Version (FormatVersion when 0), so a format 1 artifact stays
// one.
func Encode(a *Artifact) ([]byte, error) {
	var buf bytes.Buffer
	version := a.Version
	if version == 0 {
		version = FormatVersion
	}
	w, err := newWriter(&buf, &a.Header, version)
	if err != nil {
		return nil, err
	}
	a = a.full()
	for i, e := range a.Entries {
		if err := w.WriteEntry(e); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
	}
	if err := w.Finish(a.Trailer.Verdict, a.Trailer.ExitCode); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func appendHeader(b []byte, h *Header, version uint64) []byte {
	b = appendString(b, h.HaleVersion)
	b = binary.AppendVarint(b, h.Created)
	b = append(b, h.BuildDigest[:]...)
	b = append(b, h.ShapeHash[:]...)
	b = appendString(b, h.EnvPolicy)
	b = appendStrings(b, h.Files)
	b = binary.AppendUvarint(b, uint64(len(h.Consumers)))
	for _, c := range h.Consumers {
		b = binary.AppendUvarint(b, uint64(c.ID))
		b = appendString(b, c.Kind)
		b = appendString(b, c.Name)
		b = appendStrings(b, c.Instances)
	}
	b = appendBytes(b, h.Types)
	if version >= 3 {
		b = binary.AppendUvarint(b, uint64(max(h.MemoryLimit, 0)))
		b = binary.LittleEndian.AppendUint64(b, h.ProcessID)
		b = binary.AppendUvarint(b, uint64(len(h.Bindings)))
		for _, x := range h.Bindings {
			b = appendString(b, x.Kind)
			b = appendString(b, x.Topic)
			b = appendString(b, x.Subject)
			b = appendString(b, x.Queue)
			b = binary.AppendUvarint(b, uint64(x.Consumer))
		}
		return b
	}
	if h.MemoryLimit > 0 { // absent when not recorded, so that each header has one encoding
		b = binary.AppendUvarint(b, uint64(h.MemoryLimit))
	}
	return b
}

// appendBody appends the kind-specific part of an entry body, the bytes
// after consumer and seq, in format version version. Format 1 has no
// trap kinds (they are left out) and no publish delay (one that is not 0
// is an error).
func appendBody(b []byte, body Body, version uint64) ([]byte, error) {
	switch x := body.(type) {
	case Invocation:
		return appendInvocation(b, &x, version)
	case Publish:
		return appendPublish(b, &x, version)
	case Delivery:
		return appendDelivery(b, &x), nil
	case Output:
		return appendOutput(b, &x, version)
	case Trap:
		if version >= 2 {
			b = appendString(b, x.TrapKind)
		}
		b = appendString(b, x.Message)
		b = appendString(b, x.Position)
		b = appendStrings(b, x.Stack)
		return appendCoordinate(b, x.At), nil
	case Exit:
		b = binary.AppendVarint(b, x.Code)
		b = appendString(b, x.Position)
		return appendCoordinate(b, x.At), nil
	case Ingress:
		if version < 3 {
			return b, fmt.Errorf("artifact format version %d cannot hold an ingress entry", version)
		}
		b = appendString(b, x.Subject)
		b = appendString(b, x.MsgID)
		return appendBytes(b, x.Payload), nil
	case Unknown:
		if x.Code == trailerMarker || x.Code.known() {
			return b, fmt.Errorf("cannot encode an unknown entry with kind code %d", x.Code)
		}
		return append(b, x.Data...), nil
	case nil:
		return b, errors.New("entry has no body")
	}
	return b, fmt.Errorf("unsupported entry body %T", body)
}

// appendInvocation, appendPublish, appendDelivery and appendOutput are
// appendBody for the entries of every message and call, from a pointer,
// so that the Recorder's typed appends need not box the entry.
func appendInvocation(b []byte, x *Invocation, version uint64) ([]byte, error) {
	b = appendString(b, x.Primitive)
	b = appendBytes(b, x.Args)
	return appendOutcome(b, x.Outcome, x.Result, x.Length, x.TrapKind, x.Message, version >= 2)
}

func appendPublish(b []byte, x *Publish, version uint64) ([]byte, error) {
	b = appendString(b, x.Topic)
	b = binary.AppendUvarint(b, uint64(x.Message.Producer))
	b = binary.AppendUvarint(b, x.Message.Seq)
	b = appendBytes(b, x.Payload)
	switch {
	case version >= 2:
		b = binary.AppendUvarint(b, x.DelayMS)
	case x.DelayMS != 0:
		return b, fmt.Errorf("artifact format version %d cannot hold a publish delay", version)
	}
	return b, nil
}

func appendDelivery(b []byte, x *Delivery) []byte {
	b = appendString(b, x.Target)
	if x.Start {
		return append(b, 1)
	}
	b = append(b, 0)
	b = binary.AppendUvarint(b, uint64(x.Message.Producer))
	b = binary.AppendUvarint(b, x.Message.Seq)
	return appendString(b, x.Topic)
}

func appendOutput(b []byte, x *Output, version uint64) ([]byte, error) {
	b = appendString(b, x.Channel)
	b = appendString(b, x.Primitive)
	b = appendBytes(b, x.Args)
	return appendOutcome(b, x.Outcome, x.Result, x.Length, x.TrapKind, x.Message, version >= 2)
}

// appendOutcome appends a call's outcome; with v2 a trap's kind comes
// before its message.
func appendOutcome(b []byte, o Outcome, result []byte, length uint64, kind, message string, v2 bool) ([]byte, error) {
	b = append(b, byte(o))
	switch o {
	case OK:
		return appendBytes(b, result), nil
	case Withheld:
		return binary.AppendUvarint(b, length), nil
	case Trapped:
		if v2 {
			b = appendString(b, kind)
		}
		return appendString(b, message), nil
	}
	return b, fmt.Errorf("invalid call outcome %d", o)
}

func appendCoordinate(b []byte, c *Coordinate) []byte {
	if c == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(c.Consumer))
	return binary.AppendUvarint(b, c.N)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}
