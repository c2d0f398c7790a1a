package artifact

import (
	"bytes"
	"io"
	"reflect"
	"testing"

	"github.com/zeebo/blake3"
)

// seeds are valid artifacts and damaged copies of them.
func seeds(t testing.TB) [][]byte {
	full := mustEncode(t, sample())
	empty := mustEncode(t, &Artifact{Header: Header{EnvPolicy: EnvFull}, Trailer: Trailer{Verdict: VerdictQuiescent}})
	out := [][]byte{full, empty, full[:len(full)/2], full[:len(full)-1]}
	flipped := bytes.Clone(full)
	flipped[len(flipped)/3] ^= 0x55
	return append(out, flipped)
}

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
			_ = a.Verify()
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
		_ = a.Verify()
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
