package replay

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/hale-lang/hale/codegen/image"
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

// InspectAction is how an inspector goes on from a stop.
type InspectAction int

// Inspector actions.
const (
	InspectHalt     InspectAction = iota // end the run here (`quit`)
	InspectContinue                      // run on without stopping again (`continue`)
	InspectNext                          // stop before the same consumer's next delivery (`next`)
	InspectStep                          // stop before the next delivery of any consumer (`step`)
)

// Inspection is a stop of the replay before a delivery's handler runs,
// as given to Options.Inspect. It is valid only during that call,
// which runs on the stopped consumer's goroutine (the other consumers go
// on, within their recorded order); calls to Inspect are serialised.
type Inspection struct {
	View  *AtView
	r     *Replayer
	c, n  int
	state host.StateReader
}

// Coordinate is the stop's coordinate.
func (in *Inspection) Coordinate() artifact.Coordinate {
	return artifact.Coordinate{Consumer: uint32(in.c), N: uint64(in.n)}
}

// Instances lists the instances the stopped consumer runs, whose state
// State can show.
func (in *Inspection) Instances() []string {
	var out []string
	for _, i := range in.r.img.Consumers[in.c].Instances {
		out = append(out, in.r.img.Instances[i].Name)
	}
	return out
}

// State returns an instance's state as a JSON object of its fields by
// name (`state [instance]`); "" is the pending delivery's target. Only
// instances of the stopped consumer can be read.
func (in *Inspection) State(instance string) (json.RawMessage, error) {
	if instance == "" {
		instance = in.View.Pending.Target
	}
	i, ok := in.r.byName[instance]
	if !ok {
		return nil, errors.New("no instance " + instance)
	}
	if in.r.img.Instances[i].Consumer != in.c {
		return nil, errors.New("instance " + instance + " runs on consumer " +
			strconv.Itoa(in.r.img.Instances[i].Consumer) + ", not on the stopped consumer " + strconv.Itoa(in.c))
	}
	return in.r.stateOf(in.state, i)
}

// Break sets a breakpoint (`break LINE|Locus.on Topic|fn`): after the
// first stop the replay also stops before every delivery whose handler
// is the one named, calls the fn named (directly or through other fns),
// or contains the line named (in the handler or in a fn it calls), lines
// counting in the program's entry file. It returns what the breakpoint
// covers, as handler names, for the inspector to show.
func (in *Inspection) Break(spec string) ([]string, error) {
	handlers, err := in.r.resolveBreak(spec)
	if err != nil {
		return nil, err
	}
	in.r.mu.Lock()
	if in.r.breaks == nil {
		in.r.breaks = map[int]bool{}
	}
	var names []string
	for _, f := range handlers {
		in.r.breaks[f] = true
		names = append(names, in.r.img.Funcs[f].Name)
	}
	in.r.mu.Unlock()
	return names, nil
}

// resolveBreak returns the handler functions a breakpoint stops before.
func (r *Replayer) resolveBreak(spec string) ([]int, error) {
	img := r.img
	// calls[f] holds every function f reaches through calls.
	reaches := func(f int, want func(g int) bool) bool {
		seen := map[int]bool{}
		var walk func(g int) bool
		walk = func(g int) bool {
			if seen[g] {
				return false
			}
			seen[g] = true
			if want(g) {
				return true
			}
			for _, in := range img.Funcs[g].Code {
				if in.Op == image.OpCall && int(in.B) >= 0 && int(in.B) < len(img.Funcs) && walk(int(in.B)) {
					return true
				}
			}
			return false
		}
		return walk(f)
	}
	var want func(g int) bool
	if line, err := strconv.Atoi(spec); err == nil {
		if line < 1 {
			return nil, errors.New("break: line " + spec + " is not a line number")
		}
		want = func(g int) bool {
			for _, p := range img.Funcs[g].Pos {
				if p.File == 0 && int(p.Line) == line {
					return true
				}
			}
			return false
		}
	} else {
		found := false
		for g := range img.Funcs {
			if img.Funcs[g].Name == spec {
				found = true
			}
		}
		if !found {
			return nil, errors.New("break: no handler or fn named " + spec + " (a breakpoint is LINE, Locus.on Topic or fn)")
		}
		want = func(g int) bool { return img.Funcs[g].Name == spec }
	}
	var out []int
	for _, l := range img.Loci {
		handlers := []int{}
		if l.Start >= 0 {
			handlers = append(handlers, l.Start)
		}
		for _, h := range l.Handlers {
			handlers = append(handlers, h.Func)
		}
		for _, f := range handlers {
			if reaches(f, want) {
				out = append(out, f)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("break: " + spec + " is in no handler and in no fn a handler calls")
	}
	return out, nil
}

// handlerOf returns the function handling delivery d, or -1.
func (r *Replayer) handlerOf(d *host.Delivery) int {
	if d.Target < 0 || d.Target >= len(r.img.Instances) {
		return -1
	}
	l := &r.img.Loci[r.img.Instances[d.Target].Locus]
	if d.IsStart() {
		return l.Start
	}
	return l.HandlerFor(d.Topic)
}

// stopPoint is where the replay stops next.
type stopPoint struct {
	mode     InspectAction // InspectHalt (at coordinate), InspectContinue (nowhere), InspectNext, InspectStep
	consumer int
	n        int
	started  bool // the At stop has been set up
	halted   bool // the inspector ended the run: no stop any more
}

// At returns the view captured at Options.At, or nil when the
// replay did not get there (or an inspector handled the stop).
func (r *Replayer) At() *AtView {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.at
}

// stopsAt reports whether the replay stops before consumer c's delivery
// n, handled by function handler.
func (r *Replayer) stopsAt(c, n, handler int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp := &r.stop
	if sp.halted {
		return false
	}
	if !sp.started {
		sp.started = true
		sp.mode = InspectContinue
		if r.opts.At != nil {
			sp.mode, sp.consumer, sp.n = InspectHalt, int(r.opts.At.Consumer), int(r.opts.At.N)
		}
	}
	if sp.mode == InspectHalt {
		return c == sp.consumer && n == sp.n
	}
	if handler >= 0 && r.breaks[handler] {
		return true
	}
	switch sp.mode {
	case InspectNext:
		return c == sp.consumer
	case InspectStep:
		return true
	}
	return false
}

// maybeStop stops before consumer cs's delivery n when it is the
// requested one: it captures the view and halts the run (ErrStopped), or
// hands the stop to the inspector.
func (r *Replayer) maybeStop(cs *replayConsumer, n int, d *host.Delivery, state host.StateReader) error {
	handler := r.handlerOf(d)
	if !r.stopsAt(cs.id, n, handler) {
		return nil
	}
	view := r.view(cs, n, d, state)
	if r.opts.Inspect == nil {
		r.mu.Lock()
		r.at = view
		r.stop.mode = InspectContinue
		r.mu.Unlock()
		return ErrStopped
	}
	// While a person looks at the stop, no hold times out: the consumers
	// waiting for this one are not late, the person is.
	r.mu.Lock()
	r.paused++
	r.mu.Unlock()
	// Stops are decided one at a time. Another consumer may have reached
	// a delivery while the person looked at this stop, and been let
	// through by the mode of that stop (`step`); what the person decided
	// since then (`next`, `quit`) is what counts, so the stop is checked
	// again once it is this consumer's turn. Without that check, `next`
	// showed whichever consumer was queued first, and `quit` showed the
	// queued stop instead of ending the run.
	r.inspectMu.Lock()
	action := InspectContinue
	stops := r.stopsAt(cs.id, n, handler)
	if stops {
		action = r.opts.Inspect(&Inspection{View: view, r: r, c: cs.id, n: n, state: state})
	}
	r.mu.Lock()
	r.paused--
	for _, o := range r.cons {
		o.holdSince = time.Time{} // holds start again from now
	}
	if stops {
		r.stop.mode, r.stop.consumer = action, cs.id
		r.stop.halted = action == InspectHalt
	}
	r.mu.Unlock()
	r.inspectMu.Unlock()
	if stops && action == InspectHalt {
		return ErrStopped
	}
	return nil
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
