package artifact

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zeebo/blake3"
)

// sample is an artifact with every entry kind and outcome. Its slices
// follow the decoder's conventions (empty byte strings are non-nil, empty
// lists are nil) so that decoded copies compare equal with DeepEqual.
func sample() *Artifact {
	var digest, shape [32]byte
	for i := range digest {
		digest[i] = byte(i)
		shape[i] = byte(0xff - i)
	}
	return &Artifact{
		Version: FormatVersion,
		Header: Header{
			HaleVersion: "0.1.0",
			Created:     time.Date(2025, 3, 1, 12, 0, 0, 500, time.UTC).UnixNano(),
			BuildDigest: digest,
			ShapeHash:   shape,
			EnvPolicy:   EnvWithheld,
			Files:       []string{"app.hl", "lib/util.hl"},
			Consumers: []Consumer{
				{ID: 0, Kind: ConsumerMain, Name: "main", Instances: []string{"Main"}},
				{ID: 1, Kind: ConsumerPool, Name: "workers", Instances: []string{"Worker#0", "Worker#1"}},
				{ID: 2, Kind: ConsumerPinned, Name: "Ledger", Instances: []string{"Ledger"}},
				{ID: 3, Kind: ConsumerIngress, Name: "stdin", Instances: []string{"Stdin"}},
			},
			Types:       []byte{0xde, 0xad},
			MemoryLimit: 256 << 20,
		},
		Entries: []Entry{
			{0, 0, Delivery{Target: "Main", Start: true}},
			{0, 1, Invocation{Primitive: "std::time::now_ms", Args: []byte{}, Outcome: OK, Result: []byte{0x02, 0x80, 0x01}}},
			{0, 2, Invocation{Primitive: "std::env::get", Args: []byte("HIDDEN_SECRET"), Outcome: Withheld, Length: 11}},
			{0, 3, Publish{Topic: "Job", Message: MessageID{0, 0}, Payload: []byte{1, 2, 3}}},
			{3, 0, Publish{Topic: "Line", Message: MessageID{3, 0}, Payload: []byte("hello")}},
			{1, 0, Delivery{Target: "Worker#0", Message: MessageID{0, 0}, Topic: "Job"}},
			{1, 1, Invocation{Primitive: "std::random::int", Args: []byte{9}, Outcome: Trapped, TrapKind: "arg", Message: "random: empty range"}},
			{1, 2, Output{Channel: ChannelStdout, Primitive: "std::io::println", Args: []byte("working"), Outcome: OK, Result: []byte("working\n")}},
			{2, 0, Delivery{Target: "Ledger", Message: MessageID{3, 0}, Topic: "Line"}},
			{2, 1, Output{Channel: ChannelFSWrite, Primitive: "std::fs::write", Args: []byte("out.txt"), Outcome: OK, Result: []byte{0}}},
			{2, 2, Unknown{Code: 42, Data: []byte{1, 2, 3}}},
			{2, 3, Trap{TrapKind: "arith", Message: "division by zero", Position: "app.hl:17:16",
				Stack: []string{"at app.hl:17:16 in Ledger.on Line", "at app.hl:30:3 in Ledger.add"}, At: &Coordinate{2, 0}}},
			{0, 4, Exit{Code: 3, Position: "app.hl:9:5", At: &Coordinate{0, 0}}},
		},
		Trailer: Trailer{Verdict: VerdictExit, ExitCode: 3},
	}
}

func mustEncode(t testing.TB, a *Artifact) []byte {
	t.Helper()
	data, err := Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRoundTrip(t *testing.T) {
	want := sample()
	data := mustEncode(t, want)
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Header, want.Header) {
		t.Errorf("header:\n got %+v\nwant %+v", got.Header, want.Header)
	}
	if len(got.Entries) != len(want.Entries) {
		t.Fatalf("got %d entries, want %d", len(got.Entries), len(want.Entries))
	}
	for i := range want.Entries {
		if !reflect.DeepEqual(got.Entries[i], want.Entries[i]) {
			t.Errorf("entry %d:\n got %#v\nwant %#v", i, got.Entries[i], want.Entries[i])
		}
	}
	wantCounts := []ConsumerCount{{0, 5}, {1, 3}, {2, 4}, {3, 1}}
	if !got.Complete || got.Trailer.Entries != 13 || !reflect.DeepEqual(got.Trailer.Counts, wantCounts) ||
		got.Trailer.Verdict != VerdictExit || got.Trailer.ExitCode != 3 {
		t.Errorf("trailer: complete=%v %+v", got.Complete, got.Trailer)
	}
	if got.Trailer.Checksum != blake3.Sum256(data[:len(data)-32]) {
		t.Error("checksum does not cover the bytes before it")
	}
	again := mustEncode(t, got)
	if !bytes.Equal(again, data) {
		t.Error("encode(decode(x)) != x")
	}
}

// TestHeaderMemoryLimit checks the header's last field: absent in a
// header written before the memory limit was recorded (the limit is 0,
// and a replay runs with the default), and so absent when 0, so that a
// header has one encoding; an explicit 0 is refused.
func TestHeaderMemoryLimit(t *testing.T) {
	h := sample().Header
	withLimit := appendHeader(nil, &h, 2)
	h.MemoryLimit = 0
	without := appendHeader(nil, &h, 2)
	if !bytes.Equal(withLimit[:len(without)], without) || !bytes.Equal(withLimit[len(without):], []byte{0x80, 0x80, 0x80, 0x80, 0x01}) {
		t.Fatalf("with the limit %x, without %x", withLimit, without)
	}
	file := func(body []byte) []byte {
		data := append([]byte(Magic), byte(2))
		data = binary.AppendUvarint(data, uint64(len(body)))
		return seal(append(data, body...), 0, nil, VerdictQuiescent, 0)
	}
	a, err := Decode(file(without))
	if err != nil {
		t.Fatal(err)
	}
	if a.Header.MemoryLimit != 0 || a.Header.EnvPolicy != EnvWithheld || len(a.Header.Consumers) != 4 {
		t.Errorf("header %+v", a.Header)
	}
	if _, err := Decode(file(append(without, 0))); err == nil || !strings.Contains(err.Error(), "memory limit 0 is out of range") {
		t.Errorf("an explicit 0: %v", err)
	}
}

// TestDecodedBytesAreClipped guards the aliasing of decoded byte fields:
// appending to one must not overwrite the file bytes after it.
func TestDecodedBytesAreClipped(t *testing.T) {
	data := mustEncode(t, sample())
	a, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	before := bytes.Clone(data)
	p := a.Entries[3].Body.(Publish).Payload
	_ = append(p, 0xee, 0xee)
	if !bytes.Equal(before, data) {
		t.Fatal("appending to a decoded payload changed the artifact bytes")
	}
}

// prefix returns the magic, version and header of an artifact.
func prefix(h *Header) []byte {
	var buf bytes.Buffer
	if _, err := NewWriter(&buf, h); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// frame frames a raw entry body.
func frame(kind uint64, body []byte) []byte {
	b := binary.AppendUvarint(nil, kind)
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...)
}

// seal appends a trailer with the given fields and a correct checksum.
func seal(b []byte, total uint64, counts []ConsumerCount, verdict string, code int64) []byte {
	body := binary.AppendUvarint(nil, total)
	body = binary.AppendUvarint(body, uint64(len(counts)))
	for _, c := range counts {
		body = binary.AppendUvarint(body, uint64(c.Consumer))
		body = binary.AppendUvarint(body, c.Entries)
	}
	body = appendString(body, verdict)
	body = binary.AppendVarint(body, code)
	b = append(b, frame(trailerMarker, body)...)
	sum := blake3.Sum256(b)
	return append(b, sum[:]...)
}

func TestDecodeErrors(t *testing.T) {
	h := sample().Header
	head := prefix(&h)
	valid := mustEncode(t, sample())
	// A publish body: consumer 0, seq 0, topic "T", message 0:0, payload "x", delay 0.
	pub := []byte{0, 0, 1, 'T', 0, 0, 1, 'x', 0}
	one := []ConsumerCount{{0, 1}}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	flip := func(at int) []byte {
		b := bytes.Clone(valid)
		b[at] ^= 0x40
		return b
	}
	// A byte inside the exit entry's position string: flipping it keeps
	// the framing valid, so only the checksum can notice.
	inString := bytes.LastIndex(valid, []byte("app.hl:9:5")) + 3

	tests := []struct {
		name   string
		data   []byte
		err    error
		msg    string // regexp
		offset int64
	}{
		{"empty", nil, ErrNotArtifact, `^not a Hale artifact`, 0},
		{"bad magic", cat([]byte("HALEREC\x01"), valid[8:]), ErrNotArtifact, `^not a Hale artifact`, 0},
		{"newer version", cat([]byte(Magic), []byte{4}, valid[9:]), ErrVersion,
			`^artifact format version 4 is newer than this hale supports \(3\)$`, 8},
		{"version zero", cat([]byte(Magic), []byte{0}, valid[9:]), ErrVersion, `version 0 is not valid`, 8},
		{"no trailer", cat(head, frame(2, pub)), ErrTruncated,
			`^truncated artifact: missing trailer; the data ends at offset \d+, after 1 complete entries$`, int64(len(head) + 11)},
		{"cut inside an entry", cat(head, frame(2, pub)[:6]), ErrTruncated,
			`the data ends inside the publish entry \(4 of 9 bytes present\)`, int64(len(head))},
		{"cut inside the header", valid[:20], ErrTruncated, `inside the header`, 9},
		{"cut checksum", valid[:len(valid)-5], ErrTruncated, `the checksum is cut off`, int64(len(valid) - 32)},
		{"payload bit flip", flip(inString), ErrChecksum, `^checksum mismatch at offset \d+: the trailer has [0-9a-f]{64} but the content hashes to [0-9a-f]{64}$`,
			int64(len(valid) - 32)},
		{"checksum bit flip", flip(len(valid) - 1), ErrChecksum, `^checksum mismatch`, int64(len(valid) - 32)},
		{"bytes after trailer", cat(valid, []byte{0}), ErrFraming, `1 bytes follow the trailer`, int64(len(valid))},
		{"unused body bytes", seal(cat(head, frame(2, cat(pub, []byte{7}))), 1, one, "quiescent", 0), ErrFraming,
			`^bad framing at offset \d+ \(entry 0\): 1 unused bytes at the end of the publish entry$`, int64(len(head) + 11)},
		{"field past body", seal(cat(head, frame(2, pub[:len(pub)-2])), 1, one, "quiescent", 0), ErrFraming,
			`\(entry 0\): payload runs past the end of the publish entry`, int64(len(head) + 8)},
		{"non-minimal varint", seal(cat(head, frame(2, cat([]byte{0x80, 0x00}, pub[1:]))), 1, one, "quiescent", 0), ErrFraming,
			`consumer id is not minimally encoded`, int64(len(head) + 2)},
		{"consumer over 32 bits", seal(cat(head, frame(2, cat([]byte{0x80, 0x80, 0x80, 0x80, 0x10}, pub[1:]))), 1, one, "quiescent", 0),
			ErrFraming, `consumer id 4294967296 does not fit in 32 bits`, int64(len(head) + 2)},
		{"unknown outcome", seal(cat(head, frame(1, []byte{0, 0, 1, 'p', 0, 7})), 1, one, "quiescent", 0), ErrFraming,
			`unknown outcome 7`, int64(len(head) + 7)},
		{"bad start flag", seal(cat(head, frame(3, []byte{0, 0, 1, 'M', 2})), 1, one, "quiescent", 0), ErrFraming,
			`start flag is 2, not 0 or 1`, int64(len(head) + 6)},
		{"huge list count", seal(cat(head, frame(5, []byte{0, 0, 0, 0, 0, 0xff, 0xff, 0x03, 0})), 1, one, "quiescent", 0), ErrFraming,
			`stack frame count 65535 exceeds the 1 bytes left`, int64(len(head) + 7)},
		{"total mismatch", seal(cat(head, frame(2, pub)), 2, one, "quiescent", 0), ErrCount,
			`^entry count mismatch: the trailer says 2 entries, the artifact has 1$`, -1},
		{"consumer count mismatch", seal(cat(head, frame(2, pub)), 1, []ConsumerCount{{0, 2}}, "quiescent", 0), ErrCount,
			`the trailer says consumer 0 has 2 entries, the artifact has 1`, -1},
		{"consumer missing from trailer", seal(cat(head, frame(2, pub)), 1, nil, "quiescent", 0), ErrCount,
			`the trailer does not list consumer 0, which has 1 entries`, -1},
		{"trailer counts out of order", seal(cat(head, frame(2, pub)), 1, []ConsumerCount{{2, 1}, {0, 1}}, "quiescent", 0), ErrFraming,
			`trailer consumer 0 is not in ascending order`, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Decode(tt.data)
			if err == nil {
				t.Fatal("Decode accepted it")
			}
			if a != nil {
				t.Error("Decode returned an artifact with an error")
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("error %q is not %v", err, tt.err)
			}
			if !regexp.MustCompile(tt.msg).MatchString(err.Error()) {
				t.Errorf("error %q does not match %q", err, tt.msg)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *FormatError", err)
			}
			if tt.offset >= 0 && fe.Offset != tt.offset {
				t.Errorf("offset %d, want %d", fe.Offset, tt.offset)
			}
		})
	}
}

// TestSalvageEveryCut cuts a valid artifact at every byte: Salvage must
// return exactly the entries that end before the cut, and call it
// truncated once the header is whole.
func TestSalvageEveryCut(t *testing.T) {
	want := sample()
	data := mustEncode(t, want)
	h := want.Header
	headLen := len(prefix(&h))
	// ends[i] is the offset just past entry i.
	var ends []int
	off := headLen
	for _, e := range want.Entries {
		rest, err := appendBody(nil, e.Body, FormatVersion)
		if err != nil {
			t.Fatal(err)
		}
		n := uvarintLen(uint64(e.Consumer)) + uvarintLen(e.Seq) + len(rest)
		off += uvarintLen(uint64(e.Body.Kind())) + uvarintLen(uint64(n)) + n
		ends = append(ends, off)
	}
	for cut := 0; cut < len(data); cut++ {
		a, err := Salvage(data[:cut])
		switch {
		case cut < len(Magic):
			if !errors.Is(err, ErrNotArtifact) || a != nil {
				t.Fatalf("cut %d: %v", cut, err)
			}
			continue
		case cut < headLen:
			if !errors.Is(err, ErrTruncated) || a != nil {
				t.Fatalf("cut %d: %v, artifact %v", cut, err, a != nil)
			}
			continue
		}
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("cut %d: error %v, want truncated", cut, err)
		}
		if a == nil || a.Complete {
			t.Fatalf("cut %d: artifact %v", cut, a)
		}
		n := 0
		for n < len(ends) && ends[n] <= cut {
			n++
		}
		if len(a.Entries) != n {
			t.Fatalf("cut %d: %d entries, want %d", cut, len(a.Entries), n)
		}
		for i := range n {
			if !reflect.DeepEqual(a.Entries[i], want.Entries[i]) {
				t.Fatalf("cut %d: entry %d differs", cut, i)
			}
		}
	}
	a, err := Salvage(data)
	if err != nil || !a.Complete {
		t.Fatalf("whole artifact: %v", err)
	}
}

func TestEncodeRejects(t *testing.T) {
	tests := []struct {
		name string
		body Body
	}{
		{"nil body", nil},
		{"bad outcome", Invocation{Primitive: "p", Outcome: 9}},
		{"unknown with a known code", Unknown{Code: KindPublish}},
		{"unknown with the trailer code", Unknown{Code: 0}},
		{"pointer body", &Exit{}},
	}
	for _, tt := range tests {
		if _, err := appendBody(nil, tt.body, FormatVersion); err == nil {
			t.Errorf("%s: encoded", tt.name)
		}
	}
}

// framing is the number of bytes of an encoded entry that are not the
// content of its strings and byte strings: kind, length, consumer, seq,
// length prefixes, identities, flags.
func framing(t testing.TB, e Entry) (total, overhead int) {
	rest, err := appendBody(nil, e.Body, FormatVersion)
	if err != nil {
		t.Fatal(err)
	}
	n := uvarintLen(uint64(e.Consumer)) + uvarintLen(e.Seq) + len(rest)
	total = uvarintLen(uint64(e.Body.Kind())) + uvarintLen(uint64(n)) + n
	content := 0
	switch x := e.Body.(type) {
	case Invocation:
		content = len(x.Primitive) + len(x.Args) + len(x.Result) + len(x.Message)
	case Publish:
		content = len(x.Topic) + len(x.Payload)
	case Delivery:
		content = len(x.Target) + len(x.Topic)
	case Output:
		content = len(x.Channel) + len(x.Primitive) + len(x.Args) + len(x.Result) + len(x.Message)
	}
	return total, total - content
}

// TestFramingOverhead measures the per-entry cost of the format on
// typical entries deep into a run (seq in the tens of thousands) and
// holds it under 24 bytes.
func TestFramingOverhead(t *testing.T) {
	payload := bytes.Repeat([]byte{7}, 40)
	tests := []struct {
		name string
		e    Entry
	}{
		{"invocation now_ms", Entry{2, 40000, Invocation{Primitive: "std::time::now_ms", Args: []byte{}, Result: []byte{2, 0x80, 0xa0, 0xc8, 0x9a, 0xd5, 0x65}}}},
		{"invocation withheld env", Entry{0, 12, Invocation{Primitive: "std::env::get", Args: []byte("\x04\x0dHIDDEN_SECRET"), Outcome: Withheld, Length: 32}}},
		{"publish", Entry{2, 40000, Publish{Topic: "OrderPlaced", Message: MessageID{2, 15000}, Payload: payload}}},
		{"delivery", Entry{3, 40000, Delivery{Target: "Ledger", Message: MessageID{2, 15000}, Topic: "OrderPlaced"}}},
		{"delivery start", Entry{3, 0, Delivery{Target: "Ledger", Start: true}}},
		{"output stdout", Entry{0, 40000, Output{Channel: ChannelStdout, Primitive: "std::io::println", Args: []byte("\x04\x05hello"), Result: []byte("hello\n")}}},
	}
	for _, tt := range tests {
		total, overhead := framing(t, tt.e)
		t.Logf("%-26s %3d bytes, %2d of them framing", tt.name, total, overhead)
		if overhead >= 24 {
			t.Errorf("%s: %d bytes of framing, want under 24", tt.name, overhead)
		}
	}
}

// TestFormatVersion2Fields round-trips the fields format 2 added (trap
// kinds, a publish's delay) through Encode, Decode and Index, and checks
// how format 1 writes and reads them.
func TestFormatVersion2Fields(t *testing.T) {
	a := sample()
	a.Entries[3].Body = withDelay(a.Entries[3].Body.(Publish), 1500)
	a.Entries = append(a.Entries[:len(a.Entries)-1],
		Entry{2, 4, Output{Channel: ChannelNet, Primitive: "std::http::get", Args: []byte{}, Outcome: Trapped, TrapKind: "timeout", Message: "cannot GET"}},
		a.Entries[len(a.Entries)-1])
	data := mustEncode(t, a)
	for name, decode := range map[string]func([]byte) (*Artifact, error){"Decode": Decode, "Index": Index} {
		got, err := decode(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Version != FormatVersion {
			t.Errorf("%s: version %d", name, got.Version)
		}
		if x := got.Entry(3).Body.(Publish); x.DelayMS != 1500 {
			t.Errorf("%s: delay %d, want 1500", name, x.DelayMS)
		}
		if x := got.Entry(6).Body.(Invocation); x.TrapKind != "arg" || x.Message != "random: empty range" {
			t.Errorf("%s: invocation trap %q %q", name, x.TrapKind, x.Message)
		}
		if x := got.Entry(11).Body.(Trap); x.TrapKind != "arith" {
			t.Errorf("%s: trap entry kind %q", name, x.TrapKind)
		}
		if x := got.Entry(12).Body.(Output); x.TrapKind != "timeout" {
			t.Errorf("%s: output trap kind %q", name, x.TrapKind)
		}
		if again := mustEncode(t, got); !bytes.Equal(again, data) {
			t.Errorf("%s: re-encoding changed the bytes", name)
		}
	}

	// Format 1 cannot hold a delay, and leaves the kinds out.
	a.Version = 1
	if _, err := Encode(a); err == nil || !strings.Contains(err.Error(), "cannot hold a publish delay") {
		t.Errorf("format 1 with a delay: %v", err)
	}
	a.Entries[3].Body = withDelay(a.Entries[3].Body.(Publish), 0)
	old, err := Decode(mustEncode(t, a))
	if err != nil {
		t.Fatal(err)
	}
	if old.Version != 1 || old.Entries[6].Body.(Invocation).TrapKind != "" || old.Entries[11].Body.(Trap).TrapKind != "" {
		t.Errorf("format 1 kept a trap kind: version %d, %+v", old.Version, old.Entries[6].Body)
	}
	if err := old.Verify(); err != nil {
		t.Errorf("format 1 without trap kinds: %v", err)
	}
	a.Version = 4
	if _, err := Encode(a); err == nil {
		t.Error("Encode wrote format version 4")
	}
}
