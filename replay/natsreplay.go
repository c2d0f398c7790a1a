package replay

import (
	"context"
	"errors"
	"strings"

	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/host"
)

// A replay of a process with nats bindings contacts no broker: the
// replayer is the run's host.Bus. Each binding's recorded messages (its
// ingress entries) are injected in their recorded order, on the
// binding's own goroutine as the broker's were, and then the binding
// ends, so the replay ends where the recording did. A binding whose
// connection was lost in the recording (a trap outside any handler on
// its consumer) fails with the recorded trap instead of ending. Exports are
// journaled calls (host.NATSPublish) that the replayer compares and
// serves without sending, unless AllowLiveEffects with a LiveBus sends
// them for real.

// replayBus is the host.Bus of a replay.
type replayBus struct {
	r    *Replayer
	live host.Bus // nil: nothing is sent
}

// bus returns the replay's Bus.
func (r *Replayer) bus() host.Bus {
	b := &replayBus{r: r}
	if r.opts.AllowLiveEffects {
		b.live = r.opts.LiveBus
	}
	return b
}

// Injected implements host.InjectedBus: the messages come from the
// recording.
func (b *replayBus) Injected() bool { return true }

// Connect connects the live bus, if any, for the exports. A recording
// whose first connection was refused (a start-up trap of kind io on the
// main consumer before any delivery, the bus's words) is refused again.
func (b *replayBus) Connect(ctx context.Context, spec host.BusSpec) error {
	if t, ok := b.r.cons[0].traps[-1]; ok && b.r.noDeliveries && strings.HasPrefix(t.Message, "nats: ") {
		return &vm.TrapError{Kind: t.TrapKind, Message: t.Message}
	}
	if b.live == nil {
		return nil
	}
	// Only the exports go live: the bindings' messages come from the
	// recording.
	img := *spec.Image
	img.Ingress = nil
	spec.Image = &img
	return b.live.Connect(ctx, spec)
}

// Subscribe injects every binding's recorded messages.
func (b *replayBus) Subscribe(sink host.BusSink) error {
	for i, in := range b.r.img.Ingress {
		if in.NATS == nil {
			continue
		}
		msgs := b.r.natsIn[i]
		lost, failed := b.r.cons[in.Consumer].traps[-1]
		go func() {
			for _, m := range msgs {
				ok, err := sink.Receive(i, m.Subject, m.MsgID, m.Payload)
				if err != nil {
					sink.Fail(i, err) // it was accepted when recorded: the program changed
					return
				}
				if !ok {
					return
				}
			}
			if failed {
				sink.Fail(i, &vm.TrapError{Kind: lost.TrapKind, Message: lost.Message})
				return
			}
			sink.End(i)
		}()
	}
	return nil
}

// Send sends for real with a live bus; without one the replayer serves
// every export call from the recording and never gets here.
func (b *replayBus) Send(x int, msgID string, payload []byte) error {
	if b.live == nil {
		return errors.New("replay: nats exports are virtualised (--allow-live-effects sends them)")
	}
	return b.live.Send(x, msgID, payload)
}

func (b *replayBus) Flush() error {
	if b.live == nil {
		return nil
	}
	return b.live.Flush()
}

func (b *replayBus) Close() {
	if b.live != nil {
		b.live.Close()
	}
}

// Ingress passes a received message to the replay's own recording
// (host.IngressJournal).
func (r *Replayer) Ingress(c int, subject, msgID string, payload []byte) {
	if cs := r.consumer(c); cs != nil {
		cs.events.Add(1)
	}
	if r.rec != nil {
		r.rec.Ingress(c, subject, msgID, payload)
	}
}

var _ host.IngressJournal = (*Replayer)(nil)
