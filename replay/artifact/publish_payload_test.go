package artifact

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPublishPayload holds the in-place reading of a publish that a
// replay checks every publish with to Publish, the full reading, on
// generated artifacts of both formats: topics, message identities,
// payloads and delays of every length a varint changes at, each publish
// compared with its own recorded fields and with another's.
func TestPublishPayload(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	topics := []string{"", "T", "Job", strings.Repeat("t", 127), strings.Repeat("u", 128), strings.Repeat("v", 300)}
	lengths := []int{0, 1, 2, 127, 128, 129, 300, 16384}
	numbers := []uint64{0, 1, 127, 128, 16383, 16384, 1 << 32, 1<<63 + 5}
	for _, version := range []uint64{MinFormatVersion, FormatVersion} {
		a := &Artifact{Header: sample().Header, Trailer: Trailer{Verdict: VerdictQuiescent}, Version: version}
		seq := uint64(0)
		for k := range 400 {
			payload := make([]byte, lengths[rng.IntN(len(lengths))])
			for j := range payload {
				payload[j] = byte(rng.IntN(256))
			}
			x := Publish{Topic: topics[rng.IntN(len(topics))], Payload: payload,
				Message: MessageID{Producer: uint32(numbers[rng.IntN(4)]), Seq: numbers[rng.IntN(len(numbers))]}}
			if version >= 2 {
				x.DelayMS = numbers[rng.IntN(len(numbers))]
			}
			a.Entries = append(a.Entries, Entry{Consumer: 0, Seq: seq, Body: x})
			seq++
			if k%3 == 0 { // entries of other kinds between
				a.Entries = append(a.Entries, Entry{Consumer: 0, Seq: seq, Body: Delivery{Target: "Sink", Topic: x.Topic, Message: x.Message}})
				seq++
			}
		}
		data := mustEncode(t, a)
		ix, err := Index(data)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		_, names := ix.Heads()
		checked := 0
		for i := range ix.Len() {
			want, isPub := ix.Publish(i)
			if _, _, _, ok := dec.PublishPayload(i); ok {
				t.Fatalf("entry %d: read in place from a decoded artifact", i)
			}
			topic, payload, delay, ok := ix.PublishPayload(i)
			if !isPub {
				if ok {
					t.Fatalf("entry %d: not a publish, read as one", i)
				}
				continue
			}
			if !ok {
				t.Fatalf("v%d entry %d: publish not read in place", version, i)
			}
			checked++
			if names[topic] != want.Topic || !bytes.Equal(payload, want.Payload) || delay != want.DelayMS {
				t.Fatalf("v%d entry %d: read %q %x %d, recorded %q %x %d", version, i, names[topic], payload, delay, want.Topic, want.Payload, want.DelayMS)
			}
			if cap(payload) != len(payload) {
				t.Fatalf("entry %d: payload can be appended to in place", i)
			}
			// The check against another publish's fields decides as the
			// full reading's does.
			j := rng.IntN(ix.Len())
			other, _ := ix.Publish(j)
			if other.Topic == "" && j != i {
				other = want
				other.Payload = append(bytes.Clone(want.Payload), 0)
			}
			oldSame := other.Topic == want.Topic && bytes.Equal(other.Payload, want.Payload)
			newSame := names[topic] == other.Topic && bytes.Equal(payload, other.Payload)
			if oldSame != newSame {
				t.Fatalf("entry %d against entry %d: same %v in place, %v read whole", i, j, newSame, oldSame)
			}
		}
		if checked < 400 {
			t.Fatalf("v%d: %d publishes checked", version, checked)
		}
	}
}

// BenchmarkPublishCheck compares a replay's check of a publish read whole
// (Publish, the topic by name) with the check in place (PublishPayload,
// the topic by number), over the publishes of largeArtifact.
func BenchmarkPublishCheck(b *testing.B) {
	ix, err := Index(mustEncode(b, largeArtifact(30000)))
	if err != nil {
		b.Fatal(err)
	}
	_, names := ix.Heads()
	var pubs []int
	for i := range ix.Len() {
		if _, ok := ix.Publish(i); ok {
			pubs = append(pubs, i)
		}
	}
	x, _ := ix.Publish(pubs[0])
	topic, name, payload := uint32(0), x.Topic, []byte{1, 0}
	for topic < uint32(len(names)) && names[topic] != name {
		topic++
	}
	b.Run("whole", func(b *testing.B) {
		same := 0
		for b.Loop() {
			for _, i := range pubs {
				if x, _ := ix.Publish(i); x.Topic == name && bytes.Equal(x.Payload, payload) && x.DelayMS == 0 {
					same++
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pubs)), "ns/publish")
	})
	b.Run("in-place", func(b *testing.B) {
		same := 0
		for b.Loop() {
			for _, i := range pubs {
				if t, p, d, _ := ix.PublishPayload(i); t == topic && bytes.Equal(p, payload) && d == 0 {
					same++
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pubs)), "ns/publish")
	})
}
