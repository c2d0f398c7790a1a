// Package timeline turns a recording into a picture of the run: a lane per
// consumer, a box per delivery, an arrow from each publish to each of its
// deliveries, and the traps and exits marked. It reads the artifact alone
// (nothing is run) and writes the picture as Chrome Trace Event JSON for
// Perfetto (WritePerfetto) or as one self-contained HTML page (WriteHTML).
//
// An artifact holds no time per entry, so the time axis is logical: an
// entry's step is its index in file order. A delivery's box spans from its
// delivery entry to the last entry its consumer wrote before its next
// delivery, so the boxes of one lane never overlap.
package timeline

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hale-lang/hale/replay/artifact"
)

// Timeline is the picture of one recording.
type Timeline struct {
	Lanes  []Lane  `json:"lanes"`
	Boxes  []Box   `json:"boxes"`  // in file order: Boxes[i] is bare delivery i
	Arrows []Arrow `json:"arrows"` // in order of their deliveries
	Marks  []Mark  `json:"marks"`  // traps and exits, in file order
	Steps  int     `json:"steps"`  // entries, the length of the time axis

	entryBox []int // the box each entry belongs to; -1 outside any handler
}

// Lane is one consumer, named as `hale trace summary` lists it.
type Lane struct {
	Consumer uint32 `json:"consumer"`
	Kind     string `json:"kind"` // "unlisted" for a consumer missing from the header
	Name     string `json:"name"`
}

// Label is the lane's name for a person: "0 Main (main)".
func (l Lane) Label() string {
	if l.Name == "" {
		return fmt.Sprintf("%d (%s)", l.Consumer, l.Kind)
	}
	return fmt.Sprintf("%d %s (%s)", l.Consumer, l.Name, l.Kind)
}

// Box is one delivery: a handler run from Step to End (exclusive).
type Box struct {
	Lane       int    `json:"lane"`       // index in Lanes
	Entry      int    `json:"entry"`      // the delivery entry's index
	Coordinate string `json:"coordinate"` // C:N
	Target     string `json:"target"`
	Topic      string `json:"topic"` // "start" for an instance's `on start`
	Message    string `json:"message"`
	// Payload is the delivered message's payload as JSON, when its
	// publish is in the artifact and the payload decodes; else its hex.
	Payload json.RawMessage `json:"payload,omitempty"`
	Step    int             `json:"step"`
	End     int             `json:"end"`
}

// Arrow goes from a publish to one delivery of the published message.
type Arrow struct {
	Message string `json:"message"`  // P:S
	FromBox int    `json:"from_box"` // the box the publish happened in; -1 outside any handler
	Lane    int    `json:"lane"`     // the publisher's lane
	Step    int    `json:"step"`     // the publish entry's index
	ToBox   int    `json:"to_box"`
}

// Mark is a trap or an exit.
type Mark struct {
	Kind     string `json:"kind"` // "trap" or "exit"
	Lane     int    `json:"lane"`
	Box      int    `json:"box"` // the delivery it happened in; -1 outside any handler
	Step     int    `json:"step"`
	Text     string `json:"text"` // the trap's message or "exit N"
	Position string `json:"position"`
}

// Build makes the timeline of an artifact, complete or salvaged. decode,
// when not nil, gives payloads their JSON view (as `hale trace dump`).
func Build(a *artifact.Artifact, decode artifact.ValueDecoder) *Timeline {
	t := &Timeline{Lanes: []Lane{}, Boxes: []Box{}, Arrows: []Arrow{}, Marks: []Mark{}, Steps: a.Len(),
		entryBox: make([]int, a.Len())}
	laneOf := map[uint32]int{}
	for _, c := range a.Header.Consumers {
		if _, dup := laneOf[c.ID]; dup {
			continue
		}
		laneOf[c.ID] = len(t.Lanes)
		t.Lanes = append(t.Lanes, Lane{Consumer: c.ID, Kind: c.Kind, Name: c.Name})
	}
	var unlisted []uint32
	for i := range a.Len() {
		c := a.Entry(i).Consumer
		if _, ok := laneOf[c]; !ok {
			laneOf[c] = -1
			unlisted = append(unlisted, c)
		}
	}
	slices.Sort(unlisted)
	for _, c := range unlisted {
		laneOf[c] = len(t.Lanes)
		t.Lanes = append(t.Lanes, Lane{Consumer: c, Kind: "unlisted"})
	}

	type publish struct {
		box, lane, step int
		payload         json.RawMessage
	}
	publishes := map[artifact.MessageID]publish{}
	open := map[uint32]int{}      // consumer -> its current box
	delivered := map[uint32]int{} // consumer -> deliveries so far
	current := func(c uint32) int {
		if b, ok := open[c]; ok {
			return b
		}
		return -1
	}
	for i := range a.Len() {
		e := a.Entry(i)
		lane := laneOf[e.Consumer]
		// Every entry of a consumer but its next delivery belongs to
		// the handler it is running.
		if b := current(e.Consumer); b >= 0 && e.Body.Kind() != artifact.KindDelivery {
			t.Boxes[b].End = i + 1
		}
		t.entryBox[i] = current(e.Consumer)
		switch x := e.Body.(type) {
		case artifact.Publish:
			publishes[x.Message] = publish{current(e.Consumer), lane, i, payloadView(decode, x.Topic, x.Payload)}
		case artifact.Delivery:
			n := delivered[e.Consumer]
			delivered[e.Consumer]++
			box := Box{Lane: lane, Entry: i, Target: x.Target, Topic: x.Topic, Step: i, End: i + 1,
				Coordinate: artifact.Coordinate{Consumer: e.Consumer, N: uint64(n)}.String()}
			if x.Start {
				box.Topic, box.Message = "start", "start"
			} else {
				box.Message = x.Message.String()
				if p, ok := publishes[x.Message]; ok {
					box.Payload = p.payload
					t.Arrows = append(t.Arrows, Arrow{Message: box.Message, FromBox: p.box, Lane: p.lane, Step: p.step, ToBox: len(t.Boxes)})
				}
			}
			open[e.Consumer] = len(t.Boxes)
			t.entryBox[i] = len(t.Boxes)
			t.Boxes = append(t.Boxes, box)
		case artifact.Trap:
			t.Marks = append(t.Marks, Mark{Kind: "trap", Lane: lane, Box: current(e.Consumer), Step: i, Text: x.Message, Position: x.Position})
		case artifact.Exit:
			t.Marks = append(t.Marks, Mark{Kind: "exit", Lane: lane, Box: current(e.Consumer), Step: i, Text: fmt.Sprintf("exit %d", x.Code), Position: x.Position})
		}
	}
	return t
}

// payloadView is the payload's decoded JSON view, or its hex as a JSON
// string when it does not decode.
func payloadView(decode artifact.ValueDecoder, topic string, payload []byte) json.RawMessage {
	if decode != nil {
		if v, ok := decode("payload", topic, payload); ok {
			if b, err := json.Marshal(v); err == nil {
				return b
			}
		}
	}
	b, _ := json.Marshal(hex.EncodeToString(payload))
	return b
}
