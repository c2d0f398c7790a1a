package replay

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// AtView is what `hale replay --at C:N` shows (docs/replay.md): the
// coordinate, the delivery about to run, its target's state, and the
// consumer's last handled deliveries, oldest first. Its JSON form is the
// one `--at --json` prints.
type AtView struct {
	Coordinate string            `json:"coordinate"`
	Pending    PendingDelivery   `json:"pending"`
	State      json.RawMessage   `json:"state"`
	Recent     []HandledDelivery `json:"recent"`
	// Error says why the state could not be shown ("" when it could);
	// State is then an empty object.
	Error string `json:"error,omitempty"`
}

// PendingDelivery is the delivery an AtView stopped before. Message is
// "P:S" or "start"; Topic is "" and Payload null for a start delivery.
type PendingDelivery struct {
	Target  string          `json:"target"`
	Message string          `json:"message"`
	Topic   string          `json:"topic"`
	Payload json.RawMessage `json:"payload"`
}

// HandledDelivery is one of the consumer's last handled deliveries.
type HandledDelivery struct {
	Coordinate string          `json:"coordinate"`
	Target     string          `json:"target"`
	Message    string          `json:"message"`
	Topic      string          `json:"topic"`
	Payload    json.RawMessage `json:"payload"`
}

// stopPoint is where the --at stop is (under Replayer.mu).
type stopPoint struct {
	started  bool // set up from Options.At
	armed    bool // a stop is still to come
	consumer int
	n        int
}

// At returns the view captured at Options.At, or nil when the
// replay did not get there.
func (r *Replayer) At() *AtView {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.at
}

// stopsAt reports whether the replay stops before consumer c's delivery
// n: the one Options.At names, once.
func (r *Replayer) stopsAt(c, n int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp := &r.stop
	if !sp.started {
		sp.started = true
		if r.opts.At != nil {
			sp.armed, sp.consumer, sp.n = true, int(r.opts.At.Consumer), int(r.opts.At.N)
		}
	}
	return sp.armed && c == sp.consumer && n == sp.n
}

// maybeStop stops before consumer cs's delivery n when it is the one
// Options.At names: it captures the view and halts the run (ErrStopped).
func (r *Replayer) maybeStop(cs *replayConsumer, n int, d *host.Delivery, state host.StateReader) error {
	if !r.stopsAt(cs.id, n) {
		return nil
	}
	view := r.view(cs, n, d, state)
	r.mu.Lock()
	r.at = view
	r.stop.armed = false
	r.mu.Unlock()
	return ErrStopped
}

// view builds the AtView of consumer cs's delivery n.
func (r *Replayer) view(cs *replayConsumer, n int, d *host.Delivery, state host.StateReader) *AtView {
	v := &AtView{Coordinate: artifact.Coordinate{Consumer: uint32(cs.id), N: uint64(n)}.String(), Recent: []HandledDelivery{}}
	target, message, topic, payload := r.deliveryView(d)
	v.Pending = PendingDelivery{Target: target, Message: message, Topic: topic, Payload: payload}
	st, err := r.stateOf(state, d.Target)
	if err != nil {
		v.State, v.Error = json.RawMessage("{}"), err.Error()
	} else {
		v.State = st
	}
	for _, h := range cs.recent {
		target, message, topic, payload := r.deliveryView(&h.d)
		v.Recent = append(v.Recent, HandledDelivery{Coordinate: artifact.Coordinate{Consumer: uint32(cs.id), N: uint64(h.n)}.String(),
			Target: target, Message: message, Topic: topic, Payload: payload})
	}
	return v
}

// deliveryView shows a delivery's fields, the payload decoded (its
// canonical bytes as {"bytes": hex} when it cannot be).
func (r *Replayer) deliveryView(d *host.Delivery) (target, message, topic string, payload json.RawMessage) {
	target = "instance#" + strconv.Itoa(d.Target)
	if d.Target >= 0 && d.Target < len(r.img.Instances) {
		target = r.img.Instances[d.Target].Name
	}
	if d.IsStart() {
		return target, "start", "", json.RawMessage("null")
	}
	topic = r.topicName(d.Topic)
	payload = json.RawMessage("null")
	if r.types != nil && d.Topic >= 0 && d.Topic < len(r.types.topics) {
		if v, ok := jsonView(d.Payload, r.types.topics[d.Topic]); ok {
			payload = v.(json.RawMessage)
		}
	}
	return target, messageID(d.Message).String(), topic, payload
}

// stateOf reads and decodes instance inst's state.
func (r *Replayer) stateOf(state host.StateReader, inst int) (json.RawMessage, error) {
	if r.types == nil {
		return nil, errors.New("the program's types cannot be shown")
	}
	if state == nil {
		return nil, errors.New("no state reader")
	}
	tuple, err := state.State(inst)
	if err != nil {
		return nil, err
	}
	return r.types.stateJSON(inst, tuple)
}
