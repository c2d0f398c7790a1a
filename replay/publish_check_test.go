package replay

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// referenceCheck is the check of a publish before 2026-12-02: the
// recorded entry read whole (Artifact.Publish) and its topic compared by
// name. It returns the finding's sentence, "" when the publish matches.
func referenceCheck(r *Replayer, c int, msg host.MessageID, topic int, payload []byte, delayMS uint64) string {
	id := messageID(msg)
	name := r.topicName(topic)
	i, recorded := r.publishEntry(id)
	if !recorded {
		return fmt.Sprintf("consumer %d: published message %s on topic %s, which the recording does not have", c, id, name)
	}
	x, _ := r.art.Publish(i)
	if x.Topic != name || !bytes.Equal(x.Payload, payload) {
		return fmt.Sprintf("consumer %d: message %s was published on topic %s with other payload bytes than in the recording", c, id, name)
	}
	if x.DelayMS != delayMS {
		return fmt.Sprintf("consumer %d: message %s was published on topic %s after %d ms, in the recording after %d ms", c, id, name, delayMS, x.DelayMS)
	}
	return ""
}

// TestPublishCheckMatchesReference holds the replay's check of each
// publish (the recorded payload compared in place, the topic by number)
// to referenceCheck on generated artifacts, decoded and indexed: every
// recorded message published again on each of the program's topics, one
// it does not have and one the artifact does not name, with the recorded
// payload, a longer one, an empty one and another, after the recorded
// delay and another; and messages the recording does not have. Each
// replayer must find exactly the reference's findings, in order.
func TestPublishCheckMatchesReference(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 11))
		a := loadArtifact(rng, seed%2 == 0)
		// Publishes the program's topics do not cover, long payloads and
		// delays.
		seqs := map[uint32]uint64{}
		for _, e := range a.Entries {
			seqs[e.Consumer] = max(seqs[e.Consumer], e.Seq+1)
		}
		for k := range 1 + rng.IntN(6) {
			c := uint32(rng.IntN(3))
			payload := make([]byte, []int{0, 5, 127, 128, 300}[rng.IntN(5)])
			for j := range payload {
				payload[j] = byte(rng.IntN(256))
			}
			x := artifact.Publish{Topic: []string{"Job", "Line", "Gone", ""}[rng.IntN(4)], Payload: payload,
				Message: artifact.MessageID{Producer: uint32(rng.IntN(4)), Seq: uint64(10 + k)}, DelayMS: uint64(rng.IntN(3)) * 200}
			a.Entries = append(a.Entries, artifact.Entry{Consumer: c, Seq: seqs[c], Body: x})
			seqs[c]++
		}
		ix := indexedCopy(t, a)
		for _, art := range []*artifact.Artifact{a, ix} {
			// One replayer for each recorded publish, so that its
			// findings stay under maxFindings.
			for i := range art.Len() {
				x, ok := art.Publish(i)
				if !ok {
					continue
				}
				r := NewReplayer(art, rjProgram(), Options{Quiet: true})
				var want []string
				msg := host.MessageID{Producer: int(x.Message.Producer), Seq: x.Message.Seq}
				payloads := [][]byte{x.Payload, append(slices.Clone(x.Payload), 0), nil, {byte(rng.IntN(256))}}
				for topic := -1; topic <= len(r.img.Topics); topic++ {
					for _, p := range payloads {
						for _, d := range []uint64{x.DelayMS, x.DelayMS + 1} {
							c := int(x.Message.Producer)
							if s := referenceCheck(r, c, msg, topic, p, d); s != "" {
								want = append(want, s)
							}
							r.PublishAfter(c, msg, topic, p, nil, d)
						}
					}
				}
				unknown := host.MessageID{Producer: 1, Seq: 99}
				want = append(want, referenceCheck(r, 1, unknown, 0, nil, 0))
				r.Publish(1, unknown, 0, nil, nil)
				var got []string
				for _, f := range r.Stats().Findings {
					got = append(got, f.Sentence)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d entry %d (indexed %v): findings\n%q\nwant\n%q", seed, i, art == ix, got, want)
				}
			}
		}
	}
}
