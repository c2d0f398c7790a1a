package artifact

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/zeebo/blake3"
)

// The Recorder frames entries straight into its batch buffer, through
// typed appends that take the entry by pointer, and counts each
// consumer's entries itself. The tests here hold that path byte for byte
// to the encoder it replaced: refAppendBody and refEncode below are that
// encoder, frozen (each entry's body encoded on its own, framed by the
// Writer, counted per consumer as it was written).

// refAppendBody is appendBody as it was before the typed appends, in
// format version 3 and later.
func refAppendBody(b []byte, body Body) ([]byte, error) {
	switch x := body.(type) {
	case Invocation:
		b = appendString(b, x.Primitive)
		b = appendBytes(b, x.Args)
		return refAppendOutcome(b, x.Outcome, x.Result, x.Length, x.TrapKind, x.Message)
	case Publish:
		b = appendString(b, x.Topic)
		b = binary.AppendUvarint(b, uint64(x.Message.Producer))
		b = binary.AppendUvarint(b, x.Message.Seq)
		b = appendBytes(b, x.Payload)
		return binary.AppendUvarint(b, x.DelayMS), nil
	case Delivery:
		b = appendString(b, x.Target)
		if x.Start {
			return append(b, 1), nil
		}
		b = append(b, 0)
		b = binary.AppendUvarint(b, uint64(x.Message.Producer))
		b = binary.AppendUvarint(b, x.Message.Seq)
		return appendString(b, x.Topic), nil
	case Output:
		b = appendString(b, x.Channel)
		b = appendString(b, x.Primitive)
		b = appendBytes(b, x.Args)
		return refAppendOutcome(b, x.Outcome, x.Result, x.Length, x.TrapKind, x.Message)
	case Trap:
		b = appendString(b, x.TrapKind)
		b = appendString(b, x.Message)
		b = appendString(b, x.Position)
		b = appendStrings(b, x.Stack)
		return appendCoordinate(b, x.At), nil
	case Exit:
		b = binary.AppendVarint(b, x.Code)
		b = appendString(b, x.Position)
		return appendCoordinate(b, x.At), nil
	case Ingress:
		b = appendString(b, x.Subject)
		b = appendString(b, x.MsgID)
		return appendBytes(b, x.Payload), nil
	case Unknown:
		return append(b, x.Data...), nil
	}
	return b, fmt.Errorf("unsupported entry body %T", body)
}

func refAppendOutcome(b []byte, o Outcome, result []byte, length uint64, kind, message string) ([]byte, error) {
	b = append(b, byte(o))
	switch o {
	case OK:
		return appendBytes(b, result), nil
	case Withheld:
		return binary.AppendUvarint(b, length), nil
	case Trapped:
		b = appendString(b, kind)
		return appendString(b, message), nil
	}
	return b, fmt.Errorf("invalid call outcome %d", o)
}

// refEncode is the artifact the old Writer wrote for h and entries (each
// with its Consumer and Seq) and the trailer's verdict and exit code.
func refEncode(t *testing.T, h *Header, entries []Entry, verdict string, code int64) []byte {
	t.Helper()
	b := append([]byte(Magic), FormatVersion)
	head := appendHeader(nil, h, FormatVersion)
	b = binary.AppendUvarint(b, uint64(len(head)))
	b = append(b, head...)
	counts := map[uint32]uint64{}
	for _, e := range entries {
		rest, err := refAppendBody(nil, e.Body)
		if err != nil {
			t.Fatal(err)
		}
		b = binary.AppendUvarint(b, uint64(e.Body.Kind()))
		b = binary.AppendUvarint(b, uint64(uvarintLen(uint64(e.Consumer))+uvarintLen(e.Seq)+len(rest)))
		b = binary.AppendUvarint(b, uint64(e.Consumer))
		b = binary.AppendUvarint(b, e.Seq)
		b = append(b, rest...)
		counts[e.Consumer]++
	}
	body := binary.AppendUvarint(nil, uint64(len(entries)))
	ids := make([]uint32, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	body = binary.AppendUvarint(body, uint64(len(ids)))
	for _, id := range ids {
		body = binary.AppendUvarint(body, uint64(id))
		body = binary.AppendUvarint(body, counts[id])
	}
	body = appendString(body, verdict)
	body = binary.AppendVarint(body, code)
	b = binary.AppendUvarint(b, trailerMarker)
	b = binary.AppendUvarint(b, uint64(len(body)))
	b = append(b, body...)
	sum := blake3.Sum256(b)
	return append(b, sum[:]...)
}

// encodeTestConsumers are the consumers of the generated entries: dense
// ids and one past denseLanes, which the Recorder keeps in a map.
var encodeTestConsumers = []uint32{0, 1, 2, 7, denseLanes + 5}

func encodeTestHeader() *Header {
	h := &Header{HaleVersion: "test", EnvPolicy: EnvWithheld, Created: 1, Files: []string{"app.hl"}}
	for _, id := range encodeTestConsumers {
		h.Consumers = append(h.Consumers, Consumer{ID: id, Kind: ConsumerPool, Name: fmt.Sprintf("pool%d", id)})
	}
	return h
}

// genBody is a random entry body of kind k (any kind when k is 0), with
// strings and byte strings of random lengths (some past 127 bytes, so
// that their length takes two bytes) and random numbers of every size.
func genBody(rng *rand.Rand, k Kind) Body {
	str := func() string {
		n := rng.IntN(6)
		if rng.IntN(8) == 0 {
			n = 100 + rng.IntN(300)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	bytesOf := func() []byte {
		if rng.IntN(6) == 0 {
			return nil
		}
		b := make([]byte, rng.IntN(20))
		if rng.IntN(8) == 0 {
			b = make([]byte, 128+rng.IntN(200))
		}
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	num := func() uint64 { return rng.Uint64() >> rng.IntN(64) }
	coord := func() *Coordinate {
		if rng.IntN(2) == 0 {
			return nil
		}
		return &Coordinate{Consumer: uint32(num()), N: num()}
	}
	outcome := func() (Outcome, []byte, uint64, string, string) {
		switch rng.IntN(3) {
		case 0:
			return OK, bytesOf(), 0, "", ""
		case 1:
			return Withheld, nil, num(), "", ""
		}
		return Trapped, nil, 0, str(), str()
	}
	if k == 0 {
		k = Kind(1 + rng.IntN(int(KindIngress)+1)) // KindIngress+1: unknown
	}
	switch k {
	case KindInvocation:
		e := Invocation{Primitive: str(), Args: bytesOf()}
		e.Outcome, e.Result, e.Length, e.TrapKind, e.Message = outcome()
		return e
	case KindPublish:
		return Publish{Topic: str(), Message: MessageID{Producer: uint32(num()), Seq: num()}, Payload: bytesOf(), DelayMS: num()}
	case KindDelivery:
		if rng.IntN(4) == 0 {
			return Delivery{Target: str(), Start: true}
		}
		return Delivery{Target: str(), Message: MessageID{Producer: uint32(num()), Seq: num()}, Topic: str()}
	case KindOutput:
		e := Output{Channel: str(), Primitive: str(), Args: bytesOf()}
		e.Outcome, e.Result, e.Length, e.TrapKind, e.Message = outcome()
		return e
	case KindTrap:
		var stack []string
		for range rng.IntN(4) {
			stack = append(stack, str())
		}
		return Trap{TrapKind: str(), Message: str(), Position: str(), Stack: stack, At: coord()}
	case KindExit:
		return Exit{Code: int64(num()), Position: str(), At: coord()}
	case KindIngress:
		return Ingress{Subject: str(), MsgID: str(), Payload: bytesOf()}
	}
	return Unknown{Code: Kind(40 + rng.IntN(100)), Data: bytesOf()}
}

// appendEither appends body through its typed append when it has one and
// typed is set, else through Append.
func appendEither(r *Recorder, consumer uint32, body Body, typed bool) error {
	if typed {
		switch x := body.(type) {
		case Publish:
			return r.AppendPublish(consumer, &x)
		case Delivery:
			return r.AppendDelivery(consumer, &x)
		case Invocation:
			return r.AppendInvocation(consumer, &x)
		case Output:
			return r.AppendOutput(consumer, &x)
		}
	}
	return r.Append(consumer, body)
}

// TestRecorderBytesMatchReference records generated entries of every kind
// from several consumers, through the typed appends and through Append,
// and compares the artifact byte for byte with the reference encoder's;
// Encode (the Writer's own path) must agree too.
func TestRecorderBytesMatchReference(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 18))
		n := 1 + rng.IntN(3000)
		if seed == 0 {
			n = 0
		}
		checkRecorderMatches(t, seed, n, 1+rng.IntN(64))
	}
}

// FuzzRecorderMatchesReference is TestRecorderBytesMatchReference on
// any seed, entry count and per-consumer buffer.
func FuzzRecorderMatchesReference(f *testing.F) {
	f.Add(uint64(1), uint16(100), uint8(4))
	f.Add(uint64(2), uint16(3000), uint8(0))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16, buffer uint8) {
		checkRecorderMatches(t, seed, int(n%4096), int(buffer))
	})
}

// checkRecorderMatches records n entries generated from seed through a
// Recorder with the given per-consumer buffer (0: the default) and
// compares its bytes with the reference encoder's and Encode's.
func checkRecorderMatches(t *testing.T, seed uint64, n, buffer int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 19))
	var buf bytes.Buffer
	h := encodeTestHeader()
	r, err := New(&buf, h, Options{Buffer: buffer})
	if err != nil {
		t.Fatal(err)
	}
	seqs := map[uint32]uint64{}
	var entries []Entry
	for range n {
		c := encodeTestConsumers[rng.IntN(len(encodeTestConsumers))]
		body := genBody(rng, 0)
		if err := appendEither(r, c, body, rng.IntN(2) == 0); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, Entry{Consumer: c, Seq: seqs[c], Body: body})
		seqs[c]++
	}
	code := int64(seed%7) - 3
	if err := r.Close(VerdictExit, code); err != nil {
		t.Fatal(err)
	}
	want := refEncode(t, h, entries, VerdictExit, code)
	if got := buf.Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("seed %d: the recorder wrote %d bytes that differ from the reference's %d at byte %d", seed, len(got), len(want), firstDiff(got, want))
	}
	enc, err := Encode(&Artifact{Header: *h, Entries: entries, Trailer: Trailer{Verdict: VerdictExit, ExitCode: code}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, want) {
		t.Fatalf("seed %d: Encode differs from the reference at byte %d", seed, firstDiff(enc, want))
	}
	if _, err := Salvage(want); err != nil {
		t.Fatalf("seed %d: the reference artifact does not read back: %v", seed, err)
	}
}

// TestTypedAppendsMatchAppend appends every kind with a typed append
// (one entry per kind, each on its own) and through Append: the
// encoded entries are the same.
func TestTypedAppendsMatchAppend(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, k := range []Kind{KindInvocation, KindPublish, KindDelivery, KindOutput} {
		for range 200 {
			body := genBody(rng, k)
			var typed, boxed bytes.Buffer
			for _, x := range []struct {
				w     *bytes.Buffer
				typed bool
			}{{&typed, true}, {&boxed, false}} {
				r, err := New(x.w, testHeader(1), Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := appendEither(r, 0, body, x.typed); err != nil {
					t.Fatal(err)
				}
				if err := r.Close(VerdictQuiescent, 0); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(typed.Bytes(), boxed.Bytes()) {
				t.Fatalf("%v entry %+v: typed append differs at byte %d", k, body, firstDiff(typed.Bytes(), boxed.Bytes()))
			}
		}
	}
}

// TestRecorderConcurrentReference has several goroutines append
// generated entries of one consumer each at once, through small buffers:
// each consumer's entries must come out in its order, numbered from 0,
// with the reference encoder's bytes and the trailer's counts.
func TestRecorderConcurrentReference(t *testing.T) {
	var buf bytes.Buffer
	h := encodeTestHeader()
	r, err := New(&buf, h, Options{Buffer: 3})
	if err != nil {
		t.Fatal(err)
	}
	const per = 2000
	bodies := make([][]Body, len(encodeTestConsumers))
	var wg sync.WaitGroup
	for i, c := range encodeTestConsumers {
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		for range per {
			bodies[i] = append(bodies[i], genBody(rng, 0))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j, b := range bodies[i] {
				if err := appendEither(r, c, b, j%2 == 0); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := r.Close(VerdictQuiescent, 0); err != nil {
		t.Fatal(err)
	}
	a, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	// Re-encoding the decoded entries in their file order with the
	// reference encoder gives the same bytes.
	if want := refEncode(t, h, a.Entries, VerdictQuiescent, 0); !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("differs from the reference at byte %d", firstDiff(buf.Bytes(), want))
	}
	next := map[uint32]int{}
	index := map[uint32]int{}
	for i, c := range encodeTestConsumers {
		index[c] = i
	}
	for _, e := range a.Entries {
		i := index[e.Consumer]
		n := next[e.Consumer]
		if e.Seq != uint64(n) {
			t.Fatalf("consumer %d: seq %d, want %d", e.Consumer, e.Seq, n)
		}
		want, _ := refAppendBody(nil, bodies[i][n])
		got, _ := refAppendBody(nil, e.Body)
		if !bytes.Equal(got, want) {
			t.Fatalf("consumer %d entry %d: %+v, want %+v", e.Consumer, n, e.Body, bodies[i][n])
		}
		next[e.Consumer]++
	}
	for _, c := range encodeTestConsumers {
		if next[c] != per {
			t.Errorf("consumer %d: %d entries, want %d", c, next[c], per)
		}
	}
}

// TestRecorderEncodingError: an entry that cannot be encoded fails the
// recorder, which then refuses every entry (typed or not) and Close
// reports the failure.
func TestRecorderEncodingError(t *testing.T) {
	var buf bytes.Buffer
	r, err := New(&buf, testHeader(1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AppendPublish(0, &Publish{Topic: "T"}); err != nil {
		t.Fatal(err)
	}
	if err := r.AppendInvocation(0, &Invocation{Primitive: "p", Outcome: Outcome(9)}); err == nil || !errors.Is(r.Err(), err) {
		t.Fatalf("bad outcome: %v (recorder %v)", err, r.Err())
	}
	if err := r.AppendDelivery(0, &Delivery{Target: "W0", Start: true}); err == nil {
		t.Error("appended after the failure")
	}
	if err := r.Close(VerdictQuiescent, 0); err == nil {
		t.Error("Close succeeded after an encoding failure")
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
