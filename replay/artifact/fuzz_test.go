package artifact

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/zeebo/blake3"
)

// seeds are valid artifacts, in format versions 2 and 1, and damaged
// copies of them.
func seeds(t testing.TB) [][]byte {
	full := mustEncode(t, sample())
	empty := mustEncode(t, &Artifact{Header: Header{EnvPolicy: EnvFull}, Trailer: Trailer{Verdict: VerdictQuiescent}})
	out := [][]byte{full, empty, full[:len(full)/2], full[:len(full)-1]}
	flipped := bytes.Clone(full)
	flipped[len(flipped)/3] ^= 0x55
	delayed := sample()
	delayed.Entries[3].Body = withDelay(delayed.Entries[3].Body.(Publish), 250)
	v1 := sample()
	v1.Version = 1
	out = append(out, flipped, mustEncode(t, delayed), mustEncode(t, v1))
	// A format 1 recording made by hale itself (see its README).
	if data, err := os.ReadFile("../testdata/format1/run.halerec"); err == nil {
		out = append(out, data)
	}
	return out
}

func withDelay(p Publish, ms uint64) Publish { p.DelayMS = ms; return p }

// FuzzDecode feeds arbitrary bytes to every reader. None may panic, and
// whatever Decode accepts must re-encode to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Decode(data)
		sameIndexed(t, data, a, err)
		if err == nil {
			again, err := Encode(a)
			if err != nil {
				t.Fatalf("re-encoding a decoded artifact: %v", err)
			}
			if !bytes.Equal(again, data) {
				t.Fatalf("encode(decode(x)) != x")
			}
			admitAgreesWithVerify(t, data, a)
		}
		a, err = Salvage(data)
		if a == nil {
			return
		}
		if (err == nil) != a.Complete {
			t.Fatalf("Salvage: complete=%v with error %v", a.Complete, err)
		}
		if err := Summarize(a, err).WriteText(io.Discard); err != nil {
			t.Fatal(err)
		}
		if err := Dump(io.Discard, a, nil); err != nil {
			t.Fatal(err)
		}
		_ = a.Verify()
	})
}

// FuzzDecodeSealed is FuzzDecode with the checksum fixed up: the fuzzer
// supplies everything before the checksum and the test appends the right
// one, so mutations get past the checksum and exercise the parser and the
// count checks, where the canonical round trip matters.
func FuzzDecodeSealed(f *testing.F) {
	for _, s := range seeds(f) {
		if len(s) > 32 {
			f.Add(s[:len(s)-32])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sum := blake3.Sum256(data)
		data = append(data[:len(data):len(data)], sum[:]...)
		a, err := Decode(data)
		sameIndexed(t, data, a, err)
		if err != nil {
			return
		}
		again, err := Encode(a)
		if err != nil {
			t.Fatalf("re-encoding a decoded artifact: %v", err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("encode(decode(x)) != x")
		}
		admitAgreesWithVerify(t, data, a)
		_ = Dump(io.Discard, a, nil)
	})
}

// sameIndexed checks that admission's decoder, which keeps an index
// rather than the entries, accepts what Decode accepts, refuses the rest
// with the same error, and reads back every entry as Decode decoded it;
// on one goroutine and split in two at any entry count.
func sameIndexed(t *testing.T, data []byte, a *Artifact, err error) {
	t.Helper()
	for _, split := range []int{0, 1, 2, 3, 5, splitFrom} {
		sameIndexedFrom(t, data, a, err, split)
	}
}

func sameIndexedFrom(t *testing.T, data []byte, a *Artifact, err error, split int) {
	t.Helper()
	ix, ierr := decodeIndexedFrom(data, split)
	switch {
	case (err == nil) != (ierr == nil):
		t.Fatalf("Decode: %v, decodeIndexed: %v", err, ierr)
	case err != nil:
		if err.Error() != ierr.Error() {
			t.Fatalf("Decode: %v, decodeIndexed: %v", err, ierr)
		}
		return
	}
	if ix.Len() != len(a.Entries) || !reflect.DeepEqual(ix.Header, a.Header) || !reflect.DeepEqual(ix.Trailer, a.Trailer) {
		t.Fatalf("decodeIndexed: %d entries, header %+v, trailer %+v; Decode: %d, %+v, %+v",
			ix.Len(), ix.Header, ix.Trailer, len(a.Entries), a.Header, a.Trailer)
	}
	for i, want := range a.Entries {
		if got := ix.Entry(i); !reflect.DeepEqual(got, want) {
			t.Fatalf("entry %d: read from the index %#v, decoded %#v", i, got, want)
		}
		c, seq, kind := ix.head(i)
		if c != want.Consumer || seq != want.Seq || kind != want.Body.Kind() {
			t.Fatalf("entry %d: head %d %d %v", i, c, seq, kind)
		}
		if x, ok := want.Body.(Publish); ok {
			if got, ok := ix.publish(i); !ok || !reflect.DeepEqual(got, x) {
				t.Fatalf("entry %d: publish %#v", i, got)
			}
		}
		if x, ok := want.Body.(Delivery); ok {
			if got, ok := ix.delivery(i); !ok || !reflect.DeepEqual(got, x) {
				t.Fatalf("entry %d: delivery %#v", i, got)
			}
		}
	}
	if !reflect.DeepEqual(ix.full().Entries, a.Entries) {
		t.Fatalf("full() differs from Decode")
	}
	// The counts the index kept are those of the decoded entries.
	want := map[uint32]KindCounts{}
	for _, e := range a.Entries {
		kc := want[e.Consumer]
		kc.count(e.Body.Kind())
		want[e.Consumer] = kc
	}
	for id, kc := range want {
		if got, ok := ix.Counts(id); !ok || got != kc {
			t.Fatalf("consumer %d: the index counted %+v (%v), the entries %+v", id, got, ok, kc)
		}
	}
	if ix.Ordered() || (ix.Verify() == nil) != ix.Ordered() {
		t.Fatalf("Ordered %v with Verify %v", ix.Ordered(), ix.Verify())
	}
}

// admitAgreesWithVerify checks, for data that Decode accepted as a, that
// whatever admission accepts Verify accepts too (admission refuses an
// inconsistent artifact with Verify's own message), and that Verify says
// the same on the index that admission keeps as on the decoded entries.
func admitAgreesWithVerify(t *testing.T, data []byte, a *Artifact) {
	t.Helper()
	verr := a.Verify()
	ix, err := Index(data)
	if err != nil {
		t.Fatalf("Index refuses what Decode accepts: %v", err)
	}
	checkHeads(t, ix, a) // the 32-byte spans, wide or not, against the entries
	if ierr := ix.Verify(); (ierr == nil) != (verr == nil) || ierr != nil && ierr.Error() != verr.Error() {
		t.Fatalf("Verify on the index: %v; on the decoded entries: %v", ierr, verr)
	}
	// Split in two, the index is read by the fast reader, whose spans
	// note the deliveries' topics (which Verify then does not read).
	sx, ferr := decodeIndexedFrom(data, 1)
	if ferr != nil {
		t.Fatalf("the split index refuses what Decode accepts: %v", ferr)
	}
	checkHeads(t, sx, a)
	if serr := sx.Verify(); (serr == nil) != (verr == nil) || serr != nil && serr.Error() != verr.Error() {
		t.Fatalf("Verify on the split index: %v; on the decoded entries: %v", serr, verr)
	}
	id := Identity{BuildDigest: a.Header.BuildDigest, ShapeHash: a.Header.ShapeHash}
	_, _, aerr := admit(data, id, false)
	if verr == nil {
		return
	}
	if aerr == nil {
		t.Fatalf("admitted an artifact that Verify calls inconsistent: %v", verr)
	}
	var re *RefusalError
	if errors.As(aerr, &re) && re.Kind == RefusedInconsistent && re.Reason != "inconsistent: "+verr.Error() {
		t.Fatalf("admission says %q, Verify %q", re.Reason, verr)
	}
}

// FuzzAdmitForged forges artifacts as an attacker with the format in
// hand would: one field of one entry (or of the header or trailer) of a
// valid artifact is changed and the artifact re-encoded, so its checksum
// and counts are right. Admission must accept only what Verify accepts.
func FuzzAdmitForged(f *testing.F) {
	for what := range uint8(12) {
		f.Add(uint8(5), what, uint64(1), "Job")
	}
	f.Add(uint8(0), uint8(9), uint64(0), "phnned")
	f.Add(uint8(5), uint8(4), uint64(0), "Line")
	f.Fuzz(func(t *testing.T, at, what uint8, n uint64, s string) {
		a := sample()
		i := int(at) % len(a.Entries)
		e := &a.Entries[i]
		switch what % 12 {
		case 0:
			e.Consumer = uint32(n % 6)
		case 1:
			e.Seq = n % 8
		case 2, 3, 4, 5:
			switch x := e.Body.(type) {
			case Publish:
				switch what % 12 {
				case 2:
					x.Message.Producer = uint32(n % 6)
				case 3:
					x.Message.Seq = n % 4
				default:
					x.Topic = s
				}
				e.Body = x
			case Delivery:
				switch what % 12 {
				case 2:
					x.Message = MessageID{Producer: uint32(n % 6), Seq: n / 6 % 4}
				case 3:
					x.Target = s
				case 4:
					x.Topic = s
				default:
					x.Start = !x.Start
				}
				e.Body = x
			case Trap:
				x.At = &Coordinate{Consumer: uint32(n % 6), N: n / 6 % 4}
				e.Body = x
			case Exit:
				x.At = &Coordinate{Consumer: uint32(n % 6), N: n / 6 % 4}
				x.Code = int64(n % 5)
				e.Body = x
			}
		case 6:
			a.Entries[i], a.Entries[(i+int(n))%len(a.Entries)] = a.Entries[(i+int(n))%len(a.Entries)], a.Entries[i]
		case 7:
			a.Entries = append(a.Entries[:i], a.Entries[i+1:]...)
		case 8:
			a.Trailer.ExitCode = int64(n % 5)
			a.Trailer.Verdict = []string{VerdictExit, VerdictTrap, VerdictQuiescent, VerdictCanceled}[n%4]
		case 9:
			a.Header.Consumers[int(n)%len(a.Header.Consumers)].Kind = s
		case 10:
			a.Header.Consumers[int(n)%len(a.Header.Consumers)].ID = uint32(n % 6)
		case 11:
			c := &a.Header.Consumers[int(n)%len(a.Header.Consumers)]
			c.Instances = append(c.Instances, s)
		}
		data, err := Encode(a)
		if err != nil {
			return
		}
		again, err := Decode(data)
		if err != nil {
			return
		}
		admitAgreesWithVerify(t, data, again)
	})
}

// FuzzEntry encodes arbitrary field values: the entry must decode back to
// itself.
func FuzzEntry(f *testing.F) {
	f.Add(uint8(1), uint32(0), uint64(0), "std::time::now_ms", []byte{1}, []byte{2}, uint64(3), int64(-1), true)
	f.Add(uint8(3), uint32(7), uint64(1<<40), "Ledger", []byte{}, []byte("x"), uint64(1<<63), int64(1<<62), false)
	f.Fuzz(func(t *testing.T, kind uint8, consumer uint32, seq uint64, s string, p, q []byte, n uint64, i int64, flag bool) {
		var body Body
		at := &Coordinate{consumer, n}
		if flag {
			at = nil
		}
		switch kind % 7 {
		case 0:
			body = Invocation{Primitive: s, Args: p, Outcome: OK, Result: q}
		case 1:
			body = Invocation{Primitive: s, Args: p, Outcome: Withheld, Length: n}
		case 2:
			body = Publish{Topic: s, Message: MessageID{consumer, n}, Payload: p}
		case 3:
			body = Delivery{Target: s, Start: flag, Message: MessageID{consumer, n}, Topic: string(q)}
			if flag {
				body = Delivery{Target: s, Start: true}
			}
		case 4:
			body = Output{Channel: string(q), Primitive: s, Args: p, Outcome: Trapped, Message: string(q)}
		case 5:
			body = Trap{Message: s, Position: string(p), Stack: []string{string(q), s}, At: at}
		case 6:
			body = Exit{Code: i, Position: s, At: at}
		}
		a := &Artifact{Header: Header{EnvPolicy: EnvWithheld}, Entries: []Entry{{consumer, seq, body}}}
		got, err := Decode(mustEncode(t, a))
		if err != nil {
			t.Fatal(err)
		}
		// The dumps show every field, so they differ if any field was lost.
		var want, have bytes.Buffer
		if err := Dump(&want, a, nil); err != nil {
			t.Fatal(err)
		}
		if err := Dump(&have, got, nil); err != nil {
			t.Fatal(err)
		}
		if want.String() != have.String() {
			t.Fatalf("entry did not survive a round trip:\n got %s\nwant %s", &have, &want)
		}
	})
}
