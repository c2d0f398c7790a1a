package debug

import (
	"encoding/json"
	"errors"

	"github.com/hale-lang/hale/replay"
)

// This file is what the terminal inspector needs beyond the common API.

// Delivery is the delivery the stopped thread is in, or about to start.
type Delivery struct {
	Coordinate string
	replay.PendingDelivery
}

// Delivery returns the current stop's delivery; false when not stopped.
func (s *Session) Delivery() (Delivery, bool) {
	v := s.cur
	if v == nil {
		return Delivery{}, false
	}
	d := Delivery{Coordinate: coord(v.c, v.n)}
	d.Target = s.img.Instances[v.d.Target].Name
	d.Payload = json.RawMessage("null")
	if v.d.IsStart() {
		d.Message = "start"
		return d, true
	}
	d.Message = v.d.Message.String()
	d.Topic = s.img.Topics[v.d.Topic].Name
	if x, ok := replay.ProgramDecoder(s.img)("payload", d.Topic, v.d.Payload); ok {
		if j, err := json.Marshal(x); err == nil {
			d.Payload = j
		}
	}
	return d, true
}

// Back goes back to the stop before the current one in this session's
// history (the inspector's `back`), by replaying from the start; it
// returns an error when there is none.
func (s *Session) Back() (Stop, error) {
	if !s.CanStepBack() {
		return Stop{}, errors.New("going back needs a recording or a bundle")
	}
	if len(s.history) < 2 || s.cur == nil {
		return Stop{}, errors.New("no earlier stop to go back to")
	}
	i := len(s.history) - 2
	return s.gotoKey(s.history[i], s.reasons[i])
}
