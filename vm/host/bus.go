package host

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

// This file is the runtime's side of topics across processes (`bind
// nats(…)` and `export T to nats(…)`, docs/distributed.md). The runtime
// knows nothing of NATS itself: a Bus carries the messages, package
// vm/host/natsbus over a real broker, package replay from a recording.
//
//   - Ingress: each message a Bus receives for a binding is handed to
//     BusSink.Receive, which journals it (IngressJournal) and publishes it
//     as the binding's topic from the binding's own ingress consumer.
//   - Egress: every publish of an exported topic, by any consumer, is also
//     a call of the pseudo-primitive NATSPublish on the publishing
//     consumer, with the canonical arguments (subject, msg id, payload):
//     the journal records it as an output and a replay compares it and
//     serves the recorded result instead of sending (like a net call).
//   - A process with nats bindings stays alive until it is stopped or
//     exits: each binding counts as open input until the Bus ends it.

// Bus carries a run's nats bindings and exports.
type Bus interface {
	// Connect is called once at start-up, before any instance is
	// initialised: it connects to every broker the bindings and exports
	// name. An error refuses the run (exit 3), its message naming the
	// URL (never its password).
	Connect(ctx context.Context, spec BusSpec) error
	// Subscribe starts the bindings once every consumer runs: from then
	// on each message received on a binding goes to sink.Receive.
	Subscribe(sink BusSink) error
	// Send sends one message to export x (an index of img.Exports) with
	// the Nats-Msg-Id msgID; payload is its canonical payload.
	Send(x int, msgID string, payload []byte) error
	// Flush waits until every message sent has reached the broker; it is
	// called when the run ends (exit, quiescence, trap), before the
	// journal ends.
	Flush() error
	// Close releases the connections.
	Close()
}

// BusSpec is what a Bus is given at start-up.
type BusSpec struct {
	Image *image.Image
	// LookupEnv reads the environment variables that name URLs.
	LookupEnv func(string) (string, bool)
	// ProcessID is the run's process id (Options.ProcessID).
	ProcessID uint64
}

// BusSink is the runtime as a Bus sees it.
type BusSink interface {
	// Receive publishes a message received on binding b (an index of
	// img.Ingress) as the binding's topic. subject is the subject it came
	// on, msgID its Nats-Msg-Id; payload must be the topic's canonical
	// payload (Receive checks that it decodes; one that does not is
	// refused with an error and not published). Receive blocks while the
	// program is far behind (flow control) and reports false once the
	// run has stopped. Calls for one binding come one at a time.
	Receive(b int, subject, msgID string, payload []byte) (bool, error)
	// Fail ends the run with a trap of kind io whose message is err's:
	// binding b (or, with b < 0, an export) lost its connection for good.
	Fail(b int, err error)
	// End says binding b receives nothing more (a replay has injected
	// every recorded message): it no longer keeps the run alive.
	End(b int)
}

// InjectedBus is an optional interface of a Bus whose messages come from
// a recording (a replay): they are not throttled, since a replaying
// consumer may hold many deliveries while it waits for the next
// message's, as with injected stdin lines.
type InjectedBus interface {
	Injected() bool
}

// IngressJournal is an optional interface of a Journal: Ingress is called
// on binding consumer c's goroutine for each message received from NATS,
// before it is published (the recorder writes an ingress entry).
type IngressJournal interface {
	Ingress(c int, subject, msgID string, payload []byte)
}

// NATSPublish is the pseudo-primitive of a message sent to a nats export
// (not in the standard library's table: programs cannot call it). Its
// arguments are the canonical tuple (subject: string, msg_id: string,
// payload: bytes), its result void.
var NATSPublish = stdlib.Primitive{Name: "nats.publish", Effect: stdlib.Effect("nats"), Journal: stdlib.Virtual}

// MsgID is the Nats-Msg-Id of message m sent by the process with id pid:
// the process id as 16 hex digits, a colon, then P:S.
func MsgID(pid uint64, m MessageID) string {
	return fmt.Sprintf("%016x:%d:%d", pid, m.Producer, m.Seq)
}

// NATSArgs returns the canonical arguments of a NATSPublish call.
func NATSArgs(subject, msgID string, payload []byte) []byte {
	b, _ := value.EncodeTuple(make([]byte, 0, len(subject)+len(msgID)+len(payload)+8),
		[]value.Value{value.Str(subject), value.Str(msgID), value.BytesOf(string(payload))}) // strings and bytes always encode
	return b
}

// busState is the runner's part of nats: which consumer each binding
// publishes from, which exports each topic has, and the payload types
// received messages are checked against.
type busState struct {
	bus      Bus
	bindings map[int]*consumer // by img.Ingress index, nats bindings only
	exports  [][]int           // by topic: indexes of img.Exports
	types    []*value.Type
	open     int // bindings still open (each holds one outstanding)
}

// HasNATS reports whether img has a nats binding or export.
func HasNATS(img *image.Image) bool {
	if len(img.Exports) > 0 {
		return true
	}
	for _, in := range img.Ingress {
		if in.NATS != nil {
			return true
		}
	}
	return false
}

// connectBus connects the run's Bus at start-up; it reports false when
// the run cannot go on (no Bus, or a refused connection: a trap of kind
// io at start-up, exit 3).
func (r *runner) connectBus() bool {
	img := r.img
	if !HasNATS(img) {
		return true
	}
	b := &busState{bus: r.opts.Bus, bindings: map[int]*consumer{}, exports: make([][]int, len(img.Topics)), types: vm.Types(img)}
	for i, in := range img.Ingress {
		if in.NATS != nil {
			b.bindings[i] = r.consumers[in.Consumer]
		}
	}
	for i, x := range img.Exports {
		b.exports[x.Topic] = append(b.exports[x.Topic], i)
	}
	if b.bus == nil {
		r.fail(errors.New("run: the program has nats bindings or exports, but no bus was given"))
		return false
	}
	r.nats = b
	if err := b.bus.Connect(r.ctx, BusSpec{Image: img, LookupEnv: r.lookupEnv, ProcessID: r.opts.ProcessID}); err != nil {
		r.busTrap(-1, err)
		return false
	}
	return true
}

// subscribeBus starts the bindings, once the consumers run.
func (r *runner) subscribeBus() {
	if r.nats == nil {
		return
	}
	if err := r.nats.bus.Subscribe(r); err != nil {
		r.busTrap(-1, err)
	}
}

// endBus flushes what was sent and closes the connections, when the run
// is over and before the journal ends.
func (r *runner) endBus() {
	if r.nats == nil {
		return
	}
	if err := r.nats.bus.Flush(); err != nil {
		r.out.report("nats: " + err.Error() + "\n")
	}
	r.nats.bus.Close()
}

// Receive implements BusSink.
func (r *runner) Receive(b int, subject, msgID string, payload []byte) (bool, error) {
	c := r.nats.bindings[b]
	if c == nil {
		return false, fmt.Errorf("no nats binding %d", b)
	}
	topic := r.img.Ingress[b].Topic
	if _, err := value.Decode(payload, r.nats.types[r.img.Topics[topic].Type]); err != nil {
		return true, fmt.Errorf("payload does not decode as topic %s: %v", r.topicName(topic), err)
	}
	if inj, ok := r.nats.bus.(InjectedBus); !(ok && inj.Injected()) && !r.awaitDrain() {
		return false, nil
	}
	r.ingressMu.Lock()
	defer r.ingressMu.Unlock()
	if r.stopped.Load() {
		return false, nil
	}
	if j, ok := r.journal.(IngressJournal); ok {
		j.Ingress(c.id, subject, msgID, payload)
	}
	var bits []byte
	if c.engine != nil {
		var err error
		if bits, err = c.engine.Guards(topic, payload); err != nil {
			c.failedGuard(err)
			return false, nil
		}
	}
	if err := r.publish(c, topic, payload, bits); err != nil {
		r.busTrap(b, err)
		return false, nil
	}
	return true, nil
}

// Fail implements BusSink.
func (r *runner) Fail(b int, err error) { r.busTrap(b, err) }

// End implements BusSink.
func (r *runner) End(b int) {
	r.ingressMu.Lock()
	c := r.nats.bindings[b]
	if c == nil || c.closed {
		r.ingressMu.Unlock()
		return
	}
	c.closed = true
	r.ingressMu.Unlock()
	r.release(1)
}

// busTrap stops the run with a trap of kind io outside any handler: a
// refused connection at start-up, a connection lost for good, a failed
// send of an ingress consumer's publish. The report names the binding.
func (r *runner) busTrap(b int, err error) {
	var te *vm.TrapError
	t := &vm.Trap{Kind: vm.KindIO, Message: err.Error()}
	if errors.As(err, &te) {
		t.Kind, t.Message = te.Kind, te.Message
	}
	id := -1
	rep := &TrapReport{Trap: t, Consumer: -1, N: -1, Context: "nats"}
	if b >= 0 && r.nats != nil && r.nats.bindings[b] != nil {
		id = r.nats.bindings[b].id
		rep.Consumer = id
		rep.Context = "nats binding " + strconv.Quote(r.img.Ingress[b].NATS.Subject) + " for topic " + r.topicName(r.img.Ingress[b].Topic) + " (consumer " + strconv.Itoa(id) + ")"
	}
	if j := r.journal; j != nil {
		j.Trap(max(id, 0), -1, t, nil)
	}
	r.stop(VerdictTrap, ExitTrap, rep, nil, nil)
}

// egress sends message msg of topic to every export of the topic, as
// NATSPublish calls journaled on consumer c.
func (r *runner) egress(c *consumer, topic int, msg MessageID, payload []byte) error {
	xs := r.nats.exports[topic]
	if len(xs) == 0 {
		return nil
	}
	id := MsgID(r.opts.ProcessID, msg)
	for _, x := range xs {
		subject := r.img.Exports[x].NATS.Subject
		send := func() ([]byte, error) {
			if err := r.nats.bus.Send(x, id, payload); err != nil {
				return nil, &vm.TrapError{Kind: vm.KindIO, Message: err.Error()}
			}
			return nil, nil
		}
		var err error
		if j := r.journal; j != nil {
			_, err = j.Invoke(c.id, NATSPublish, NATSArgs(subject, id, payload), send)
			if errors.Is(err, ErrInterrupt) {
				return c.interrupt(err)
			}
		} else {
			_, err = send()
		}
		if err != nil {
			return err
		}
	}
	return nil
}
