package host

import (
	"errors"
	"fmt"

	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/guest/abi"
)

// Publish batches (package vm/guest/abi): the wasm guest of a run's
// consumer does not cross hale.prim for each publish but appends it to a
// batch, which reaches the host before the guest's next crossing, when
// it grows past abi.BatchFlush bytes, or when init or deliver returns.
// A crossing costs the guest and the host more than the rest of a
// publish's work on the host, and a message on the main bus is usually
// one publish and one delivery.
//
// The host, and so its Journal, still sees every publish, primitive
// call, poll and trap in the order of the handler's run. What changes is
// when the host sees a publish: later in real time, never out of order.
// So a publish is batched only where its call cannot fail but by an
// interrupt (Ctrl-C, which may end a run at any point anyway): a run
// with nats exports, whose publishes send and may trap at the publish,
// does not batch. A timer (publish … after) is not batched: its due time
// counts from the moment the host sees it.

// batcher is a host whose publishes may be batched.
type batcher interface {
	vm.Host
	// batchPublishes reports whether the host's publishes may be
	// batched: they fail only when the run is interrupted.
	batchPublishes() bool
	// publishBatch publishes the records of a batch in order, as Prim
	// would one by one; batch is a view of guest memory, valid during the
	// call. The error is the first publish's that failed; the publishes
	// after it are dropped.
	publishBatch(batch []byte) error
}

// batches reports whether a guest whose machines host serves batches
// publishes.
func batches(host vm.Host) bool {
	b, ok := host.(batcher)
	return ok && b.batchPublishes()
}

// errBadBatch is the error of a batch that does not split into records.
var errBadBatch = errors.New("publish: bad batch")

// publishBatch publishes a batch of publishes with host: at once, if it
// takes batches, else one Prim call per record.
func publishBatch(host vm.Host, batch []byte) error {
	if b, ok := host.(batcher); ok {
		return b.publishBatch(batch)
	}
	for len(batch) > 0 {
		rec, rest, ok := abi.SplitBatch(batch)
		if !ok {
			return errBadBatch
		}
		if _, err := host.Prim(vm.PrimPublish, rec); err != nil {
			return err
		}
		batch = rest
	}
	return nil
}

// noBatches turns publish batches off (tests compare runs with and
// without them).
var noBatches bool

// batchPublishes implements batcher: a run without nats exports, whose
// publishes only queue deliveries (and are journaled).
func (c *consumer) batchPublishes() bool { return !noBatches && len(c.r.img.Exports) == 0 }

// publishBatch implements batcher. The batch is copied once, and every
// payload is a piece of the copy, capped at its end (a delivery's payload
// is never modified). Each publish checks for an interrupt as Prim does.
//
// The publishes are journaled and routed one by one, in order, as Prim
// would, but their deliveries are staged and enqueued in runs
// (flushStaged): consecutive deliveries to one consumer under one lock
// and one wake. Every staged delivery is enqueued before publishBatch
// returns, that is before the handler that published it ends, so the run
// counts it outstanding in time, and deliveries are enqueued in the
// order of their publishes, so every consumer gets them in the same
// order as before and a delivery caused by a later publish never
// overtakes one of an earlier publish.
func (c *consumer) publishBatch(batch []byte) error {
	batch = append([]byte(nil), batch...)
	defer c.flushStaged()
	for len(batch) > 0 {
		if err := c.r.ctx.Err(); err != nil {
			c.flushStaged()
			c.r.stop(VerdictCanceled, ExitCanceled, nil, nil, err)
			return fmt.Errorf("%w: %w", vm.ErrInterrupted, err)
		}
		rec, rest, ok := abi.SplitBatch(batch)
		if !ok {
			return errBadBatch
		}
		topic, payload, bits, err := c.splitPublish(rec)
		if err != nil {
			return err
		}
		if len(rest) == 0 && len(c.staged) == 0 {
			// A batch of one publish (a chain's handler): nothing to
			// gather, so its deliveries are queued at once.
			c.r.enqueuePublish(c, topic, payload, bits)
		} else {
			c.r.publishStaged(c, topic, payload, bits)
		}
		batch = rest
	}
	return nil
}

// stageMax is how many deliveries publishBatch stages before it enqueues
// them, so that a consumer fed by a long batch starts on its first
// deliveries while the rest are routed.
const stageMax = 128

// stage adds delivery d for consumer to to c's staged deliveries.
func (c *consumer) stage(to *consumer, d Delivery) {
	c.staged = append(c.staged, d)
	c.stagedTo = append(c.stagedTo, to)
	if len(c.staged) >= stageMax {
		c.flushStaged()
	}
}

// flushStaged enqueues c's staged deliveries in order, each run of
// consecutive deliveries to one consumer at once (enqueueRun).
func (c *consumer) flushStaged() {
	ds, to := c.staged, c.stagedTo
	for i := 0; i < len(ds); {
		j := i + 1
		for j < len(ds) && to[j] == to[i] {
			j++
		}
		if j == i+1 {
			to[i].enqueueFrom(c, ds[i])
		} else {
			to[i].enqueueRun(c, ds[i:j])
		}
		i = j
	}
	clear(ds) // drop the payloads
	clear(to)
	c.staged, c.stagedTo = ds[:0], to[:0]
}
