package host

import (
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hale-lang/hale/vm"
)

// consumer is one row of the consumer table at run time: a queue of
// pending deliveries and the goroutine and engine that handle them (or,
// for an ingress binding, just a producer).
type consumer struct {
	r      *runner
	id     int
	kind   uint8 // image.ConsumerMain …
	engine Engine
	topic  int  // ingress: the bound topic
	closed bool // a nats binding's input has ended (under runner.ingressMu)

	// Touched only by the consumer's own goroutine (for ingress: the
	// input reader's).
	handled   int    // deliveries handled: the next delivery's number
	published uint64 // messages published: the next message's sequence
	rng       *mrand.Rand
	cut       bool     // the Journal interrupted the running handler (ErrInterrupt)
	stamped   Delivery // the delivery stamp hands the Journal
	// counts[topic] is the number of messages on topic published so far
	// (k of the work-group rule); targets is Route's scratch.
	counts  []uint64
	targets []int
	// staged and stagedTo: the deliveries of a batch of publishes routed
	// but not yet enqueued, and their consumers (publishBatch).
	staged   []Delivery
	stagedTo []*consumer

	mu sync.Mutex
	// The pending deliveries: in fifo when they are taken in arrival
	// order (inOrder: no Order, no Stepper), else queue[head:], where
	// the Order or the Stepper picks among them.
	inOrder bool
	// windowed (a RunOrder's consumer, takeRun): queue[head:] is a
	// window of the oldest pending deliveries, the rest are in fifo
	// (push); the window is refilled up to orderWindow before the Order
	// is asked, and takes all of them when it holds or retires.
	windowed bool
	fifo     fifo
	queue    []Delivery
	head     int
	waiting  bool          // the goroutine waits for wake
	retired  bool          // the Order retired the consumer
	wake     chan struct{} // capacity 1

	// Lending (holder.settle): lendable is fixed at start-up; borrowed
	// (under mu) says another consumer's goroutine runs this consumer's
	// deliveries while its own goroutine waits; holder is the goroutine
	// running this consumer's deliveries now (set and read by it).
	lendable bool
	borrowed bool
	holder   *holder
}

// enqueue adds a delivery to the queue (from any goroutine).
func (c *consumer) enqueue(d Delivery) {
	c.enqueueFrom(nil, d)
}

// enqueueFrom is enqueue for a publish made by from's running handler
// (nil: not a publish). When c waits and may be lent, its wake is
// deferred to the end of that handler (holder.settle), whose goroutine
// then runs c's deliveries itself if it has nothing of its own to do.
func (c *consumer) enqueueFrom(from *consumer, d Delivery) {
	c.mu.Lock()
	if c.retired {
		c.mu.Unlock()
		return
	}
	c.r.outstanding.Add(1)
	c.push(d)
	// notify's body, kept here: a call more per delivery showed on the
	// main bus (enqueueFrom is its only enqueue).
	w := c.waiting && !c.borrowed
	if w && from != nil && c.lendable && from != c && c.pending() <= lendQueue {
		if h := from.holder; h != nil && h.deferring {
			c.mu.Unlock()
			h.deferWake(c)
			return
		}
	}
	if w {
		c.waiting = false
	}
	c.mu.Unlock()
	if w {
		c.signal()
	}
}

// enqueueRun is enqueueFrom for several deliveries in a row, in order,
// under one acquisition of c.mu and with at most one wake: a batch of
// publishes to one consumer (a producer's run of messages to its
// counter) took the lock and looked at the wake once per message, and
// the consumer's goroutine, taking deliveries at the same time, fought
// for the lock's cache line each time.
func (c *consumer) enqueueRun(from *consumer, ds []Delivery) {
	c.mu.Lock()
	if c.retired {
		c.mu.Unlock()
		return
	}
	c.r.outstanding.Add(int64(len(ds)))
	for _, d := range ds {
		c.push(d)
	}
	c.notify(from)
}

// push adds d to the pending deliveries (c.mu held).
func (c *consumer) push(d Delivery) {
	switch {
	case c.inOrder:
		c.fifo.push(d)
	case c.windowed && (c.fifo.len() > 0 || len(c.queue)-c.head >= orderWindow):
		// Past the window: in the fifo, after every delivery of the
		// window (a delivery goes to the window only while the fifo is
		// empty), so that a consumer with a few pending deliveries (a
		// ring's, a ping-pong's) never takes a 7 KiB block, as an
		// ordered consumer did not before the window.
		c.fifo.push(d)
	default:
		c.queue = append(c.queue, d)
	}
}

// notify, after deliveries were added, wakes c's goroutine if it waits,
// or defers its wake to the end of from's handler, as enqueueFrom does;
// it unlocks c.mu.
func (c *consumer) notify(from *consumer) {
	w := c.waiting && !c.borrowed
	if w && from != nil && c.lendable && from != c && c.pending() <= lendQueue {
		if h := from.holder; h != nil && h.deferring {
			c.mu.Unlock()
			h.deferWake(c)
			return
		}
	}
	if w {
		c.waiting = false
	}
	c.mu.Unlock()
	if w {
		c.signal()
	}
}

// signal wakes the consumer's goroutine if it waits.
func (c *consumer) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// loop handles deliveries until the run stops.
func (c *consumer) loop() {
	r := c.r
	defer r.wg.Done()
	h := c.hold()
	if m, ok := c.engine.(manyDeliverer); ok && c.deliversMany() && m.deliversMany() {
		c.loopMany(m, h)
		return
	}
	if c.takesMany() {
		c.loopTaken(h)
		return
	}
	if ro := c.runOrder(); ro != nil {
		c.loopRuns(ro)
		return
	}
	for {
		d, ok := c.take()
		if !ok {
			return
		}
		if !c.handle(d) {
			return
		}
		if h.deferring {
			h.settle()
		}
	}
}

// handle runs delivery d, taken from c's queue, on the calling goroutine
// (c's own or its borrower's); it reports false when c is done (the run
// stopped, or the Journal cut the handler).
func (c *consumer) handle(d Delivery) bool {
	r := c.r
	n := c.handled
	if j := r.journal; j != nil {
		if err := c.stamp(j, n, d); err != nil {
			r.stop(VerdictHalted, 0, nil, err, nil)
			return false
		}
	}
	c.handled++
	if err := c.engine.Deliver(d.Target, d.Topic, d.Payload); err != nil {
		if c.cut {
			// The Journal ended this handler where a canceled
			// recording ended it: this consumer is done, the others
			// go on to their own ends.
			r.release(1)
			c.mu.Lock()
			c.retire()
			c.mu.Unlock()
			return false
		}
		c.failedDelivery(n, d, err)
		return false
	}
	r.release(1)
	return true
}

// deliversMany reports whether the consumer may hand its engine several
// deliveries at once (loopMany): a run with nobody to stamp each
// delivery as it starts or to pick it (no Journal, Order, Stepper or
// debugger), taking from a fifo.
func (c *consumer) deliversMany() bool {
	o := &c.r.opts
	return !noMany && c.inOrder && c.r.journal == nil && o.Debug == nil && o.DebugPoll == nil && !o.stepping
}

// takenAtOnce counts the deliveries loopTaken took with others (tests
// look that it does).
var takenAtOnce atomic.Int64

// noMany turns loopMany and loopTaken off (tests compare runs with and
// without them).
var noMany bool

// takesMany reports whether the consumer may take several deliveries
// from its queue at once and then run them one by one (loopTaken): a
// run whose deliveries are stamped (a Journal) but neither picked (no
// Order, no Stepper) nor watched (no debugger), taking from a fifo.
func (c *consumer) takesMany() bool {
	o := &c.r.opts
	return !noMany && c.inOrder && c.r.journal != nil && o.Debug == nil && o.DebugPoll == nil && !o.stepping
}

// loopTaken is loop taking what is pending at once, up to
// manyDeliveries (takeMany), and then handling each delivery as loop
// does (stamped, one engine call each), looking whether the run stopped
// before each. A recorded run took its consumer's lock once per
// delivery, where the producers filling the queue take it too (a
// recorded Counting's counter fought its producer for that cache line
// 200,000 times).
//
// Under a Journal that stamps late (LateJournal: the recorder), a run of
// deliveries to one instance and topic whose compiled handler publishes
// nothing goes to the engine in one call (quietRunner), and the
// deliveries that ran are stamped after it, in order, before anything
// else: they called nothing, so the Journal sees what it would have
// seen one delivery at a time. A recorded Counting's counter made one
// engine call per increment.
func (c *consumer) loopTaken(h *holder) {
	var taken []Delivery
	quiet := c.lateQuiet()
	for {
		var ok bool
		if taken, ok = c.takeMany(taken[:0]); !ok {
			return
		}
		if len(taken) > 1 {
			takenAtOnce.Add(int64(len(taken)))
		}
		if !c.handleTaken(taken, quiet, h) {
			return
		}
		clear(taken) // drop the payloads
	}
}

// lateQuiet returns the engine's quietRunner when the run's Journal
// stamps late (LateJournal), else nil.
func (c *consumer) lateQuiet() quietRunner {
	if j, ok := c.r.journal.(LateJournal); ok && j.StampsLate() && !noQuiet {
		quiet, _ := c.engine.(quietRunner)
		return quiet
	}
	return nil
}

// handleTaken handles the deliveries taken in turn, a run of them to one
// quiet handler in one call when quiet is not nil (runQuiet), and
// reports false when the consumer must stop. With a holder (loopTaken),
// it looks whether the run stopped before each delivery but the first
// and settles the holder after each; without one (loopRuns), every
// delivery given is handled.
func (c *consumer) handleTaken(taken []Delivery, quiet quietRunner, h *holder) bool {
	r := c.r
	handBack := -1 // the delivery a run handed back: it runs on its own
	for i := 0; i < len(taken); i++ {
		if h != nil && i > 0 && r.stopped.Load() {
			return false
		}
		if quiet != nil && i != handBack {
			if end := sameRun(taken[i:]); end > 1 {
				k, ok := c.runQuiet(quiet, taken[i:i+end])
				if !ok {
					return false
				}
				if k < end {
					handBack = i + k
				}
				if k > 0 {
					i += k - 1
					continue
				}
			}
		}
		if !c.handle(taken[i]) {
			if c.cut {
				// Retired with the rest taken: they are dropped,
				// as retire drops those left in the queue.
				if left := len(taken) - i - 1; left > 0 {
					r.release(int64(left))
				}
			}
			return false
		}
		if h != nil && h.deferring {
			h.settle()
		}
	}
	return true
}

// noQuiet turns loopTaken's runs in one call off (tests compare runs
// with and without them).
var noQuiet bool

// quietRan counts the deliveries loopTaken ran in runs and stamped
// after them (tests look that it does).
var quietRan atomic.Int64

// runQuiet hands ds, a run of deliveries to one instance and topic, to
// q and then stamps the k that ran, in order (loopTaken). It reports
// false when c is done (a stamp failed: the run halts, as handle's).
func (c *consumer) runQuiet(q quietRunner, ds []Delivery) (k int, ok bool) {
	r := c.r
	k, _ = q.DeliverQuietRun(ds) // an error: ds[k] runs again the usual way
	if k <= 0 {
		return 0, true
	}
	quietRan.Add(int64(k))
	for _, d := range ds[:k] {
		if err := c.stamp(r.journal, c.handled, d); err != nil {
			r.stop(VerdictHalted, 0, nil, err, nil)
			return k, false
		}
		c.handled++
	}
	r.release(int64(k))
	return k, true
}

// loopMany is loop for an engine that runs several deliveries in one
// call (manyDeliverer): it takes what is pending, up to manyDeliveries,
// and hands it over, looking whether the run stopped before each call.
// The engine stops after a handler that made a call other than a publish
// (one that may have stopped the run, such as std::process::exit), so
// a handler that runs after the run stopped is one that calls nothing
// and publishes into queues nobody takes from: nothing of it shows. A
// trap is reported at its own delivery, with its own number.
func (c *consumer) loopMany(m manyDeliverer, h *holder) {
	r := c.r
	var taken []Delivery
	for {
		var ok bool
		if taken, ok = c.takeMany(taken[:0]); !ok {
			return
		}
		for ds := taken; len(ds) > 0; {
			if r.stopped.Load() {
				return
			}
			var ran int
			var err error
			if len(ds) == 1 {
				// One delivery (a chain, a ping-pong): the plain call.
				if err = c.engine.Deliver(ds[0].Target, ds[0].Topic, ds[0].Payload); err == nil {
					ran = 1
				}
			} else {
				// Several handlers in one call: their ends are not seen
				// here, so nothing is deferred past them.
				h.deferring = false
				ran, err = m.DeliverMany(ds)
				h.deferring = c.lendable
			}
			c.handled += ran
			if ran > 0 {
				r.release(int64(ran))
			}
			if err != nil {
				n := c.handled
				c.handled++
				c.failedDelivery(n, ds[ran], err)
				return
			}
			ds = ds[ran:]
			if h.deferring {
				h.settle()
			}
		}
		clear(taken) // drop the payloads
	}
}

// runOrder returns the run's Order when it gives runs of deliveries
// (RunOrder) and nothing else picks or watches each delivery (no
// Stepper, no debugger), else nil.
func (c *consumer) runOrder() RunOrder {
	o := &c.r.opts
	if noMany || c.inOrder || o.Debug != nil || o.DebugPoll != nil || o.stepping {
		return nil
	}
	ro, _ := c.r.order.(RunOrder)
	return ro
}

// loopRuns is loop under an Order that gives runs of deliveries
// (RunOrder): it takes each run the Order gives (takeRun) and handles
// its deliveries in turn, as loop handles one. It does not look whether
// the run stopped between them: a delivery the Order gave is handled,
// as loop handles the one take returned (a replay waits at a recorded
// trap until every other consumer has been given its recorded
// deliveries, and then expects them to run).
//
// Under a Journal that stamps late (the replayer, but for --at), a run
// of the deliveries given to one instance and topic whose compiled
// handler publishes nothing goes to the engine in one call and is
// stamped after it, as loopTaken does in a recorded run.
func (c *consumer) loopRuns(ro RunOrder) {
	var taken []Delivery
	quiet := c.lateQuiet()
	for {
		var ok bool
		if taken, ok = c.takeRun(ro, taken[:0]); !ok {
			return
		}
		if len(taken) > 1 {
			givenRuns.Add(int64(len(taken)))
		}
		if !c.handleTaken(taken, quiet, nil) {
			return
		}
		clear(taken) // drop the payloads
	}
}

// givenRuns counts the deliveries loopRuns was given in runs of more
// than one (tests look that it was).
var givenRuns atomic.Int64

// takeRun is take under a RunOrder: it appends the deliveries the Order
// gives, one or a run of them, to ds; it reports false when the run has
// stopped or the consumer was retired.
func (c *consumer) takeRun(ro RunOrder, ds []Delivery) ([]Delivery, bool) {
	r := c.r
	c.mu.Lock()
	for {
		if r.stopped.Load() {
			c.mu.Unlock()
			return ds, false
		}
		c.refill(orderWindow)
		pending := c.queue[c.head:]
		if len(pending) == 0 {
			c.wait(0, 0)
			continue
		}
		// NextRun is asked with c.mu held (take lets go of it for
		// Next): a RunOrder answers at once, never waiting, and takes
		// no lock of the runtime's, so holding c.mu cannot deadlock, and
		// a replay that follows a chain (one delivery pending at a
		// time) takes the lock once per delivery instead of twice.
		pick, count, wait := ro.NextRun(c.id, pending, manyDeliveries)
		if (pick == Hold || pick == Retire) && c.fifo.len() > 0 {
			// It answered from the window: ask again with every
			// pending delivery.
			c.refill(-1)
			pending = c.queue[c.head:]
			pick, count, wait = ro.NextRun(c.id, pending, manyDeliveries)
		}
		switch {
		case pick == Retire:
			c.retire()
			c.mu.Unlock()
			return ds, false
		case pick == Hold:
			c.wait(len(pending), wait)
			continue
		case pick < 0 || pick >= len(pending) || count > 1 && (pick != 0 || count > len(pending)):
			c.mu.Unlock()
			r.fail(fmt.Errorf("order: consumer %d: pick %d (%d) of %d pending deliveries", c.id, pick, count, len(pending)))
			return ds, false
		}
		ds = append(ds, c.remove(pick))
		for k := 1; k < count; k++ {
			ds = append(ds, c.remove(0))
		}
		c.mu.Unlock()
		return ds, true
	}
}

// orderWindow is how many of a windowed consumer's pending deliveries
// its Order is shown at first. A replayed consumer kept every pending
// delivery in one slice, which a producer far ahead of it (Savina
// Counting's, 200,000 messages in one handler) grew by copying into
// fresh memory again and again: a fifth of a replay's CPU time went to
// those copies and their page faults.
const orderWindow = 1024

// refill moves the oldest deliveries of c.fifo to the end of the window
// queue[head:] until it holds at least most (all of them when most < 0),
// with c.mu held.
func (c *consumer) refill(most int) {
	for c.fifo.len() > 0 && (most < 0 || len(c.queue)-c.head < most) {
		c.queue = append(c.queue, c.fifo.pop())
	}
}

// takeMany appends the pending deliveries, at least one (waiting for it)
// and at most manyDeliveries or about maxManyBytes of payload, to ds; it
// reports false when the run has stopped or the consumer was retired.
func (c *consumer) takeMany(ds []Delivery) ([]Delivery, bool) {
	d, ok := c.take()
	if !ok {
		return ds, false
	}
	ds = append(ds, d)
	size := len(d.Payload)
	c.mu.Lock()
	for len(ds) < manyDeliveries && size < maxManyBytes && c.fifo.len() > 0 && !c.r.stopped.Load() {
		d := c.fifo.pop()
		size += len(d.Payload)
		ds = append(ds, d)
	}
	c.mu.Unlock()
	return ds, true
}

// stamp is the Journal's Deliver for delivery n, d. The Journal gets a
// pointer, valid only during the call (a Journal keeps a copy), to the
// consumer's own stamped field, so that neither loop's d nor a copy of it
// goes to the heap: a recorded run allocated one Delivery per delivery,
// about a tenth of a recorded Counting's CPU time natively.
func (c *consumer) stamp(j Journal, n int, d Delivery) error {
	c.stamped = d
	err := j.Deliver(c.id, n, &c.stamped, c.engine)
	c.stamped = Delivery{} // drop the payload
	return err
}

// failedDelivery is failed for delivery n, d (by value, as stamp).
func (c *consumer) failedDelivery(n int, d Delivery, err error) {
	c.failed(n, &d, d.Target, err)
}

// topicCount returns the number of messages on topic c published before
// this one, and counts this one.
func (c *consumer) topicCount(topic int) uint64 {
	if c.counts == nil {
		c.counts = make([]uint64, len(c.r.img.Topics))
	}
	k := c.counts[topic]
	c.counts[topic]++
	return k
}

// failedGuard stops the run after a guard evaluated for an ingress line
// (c is an ingress binding) trapped or failed: the line is not published.
func (c *consumer) failedGuard(err error) {
	r := c.r
	var t *vm.Trap
	if !errors.As(err, &t) {
		r.fail(fmt.Errorf("consumer %d (%s): %w", c.id, r.img.Consumers[c.id].Name, err))
		return
	}
	if j := r.journal; j != nil {
		j.Trap(c.id, -1, t, nil)
	}
	r.stop(VerdictTrap, ExitTrap, &TrapReport{Trap: t, Consumer: c.id, N: -1, Topic: r.topicName(c.topic)}, nil, nil)
}

// failed stops the run after an engine error while running delivery n (d)
// or, with n == -1 and d nil, initialising instance inst.
func (c *consumer) failed(n int, d *Delivery, inst int, err error) {
	r := c.r
	if r.canceled() {
		return // the run was interrupted in this handler: not a trap
	}
	var t *vm.Trap
	if !errors.As(err, &t) {
		r.fail(fmt.Errorf("consumer %d (%s): %w", c.id, r.img.Consumers[c.id].Name, err))
		return
	}
	if j := r.journal; j != nil {
		j.Trap(c.id, n, t, d)
	}
	rep := &TrapReport{Trap: t, Consumer: c.id, N: n, Instance: r.instanceName(inst)}
	if d != nil {
		dd := *d
		rep.Delivery = &dd
		if !d.IsStart() {
			rep.Topic = r.topicName(d.Topic)
		}
	}
	r.stop(VerdictTrap, ExitTrap, rep, nil, nil)
}

// take returns the next delivery to handle, waiting for one if needed; it
// reports false when the run has stopped or the consumer was retired.
func (c *consumer) take() (Delivery, bool) {
	r := c.r
	c.mu.Lock()
	for {
		if r.stopped.Load() {
			c.mu.Unlock()
			return Delivery{}, false
		}
		if c.inOrder {
			if c.fifo.len() == 0 {
				c.wait(0, 0)
				continue
			}
			d := c.fifo.pop()
			c.mu.Unlock()
			return d, true
		}
		pending := c.queue[c.head:]
		if len(pending) == 0 {
			c.wait(0, 0)
			continue
		}
		pick := 0
		if r.order != nil {
			// Only this goroutine removes deliveries, and producers only
			// append, so pending stays valid without the lock.
			c.mu.Unlock()
			var wait time.Duration
			pick, wait = r.order.Next(c.id, pending)
			c.mu.Lock()
			switch {
			case pick == Retire:
				c.retire()
				c.mu.Unlock()
				return Delivery{}, false
			case pick == Hold:
				c.wait(len(pending), wait)
				continue
			case pick < 0 || pick >= len(pending):
				c.mu.Unlock()
				r.fail(fmt.Errorf("order: consumer %d: pick %d of %d pending deliveries", c.id, pick, len(pending)))
				return Delivery{}, false
			}
		}
		d := c.remove(pick)
		c.mu.Unlock()
		return d, true
	}
}

// wait waits, with c.mu held (and held again on return), until more than
// have deliveries are pending, the run stops, or timeout (if positive)
// has passed. Before blocking it flushes the output, so that a program
// waiting for input or for another consumer shows what it printed.
func (c *consumer) wait(have int, timeout time.Duration) {
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	for (c.pending() <= have || c.borrowed) && !c.r.stopped.Load() {
		c.waiting = true
		c.mu.Unlock()
		c.r.out.flush()
		if timer == nil {
			c.spin()
		}
		select {
		case <-c.wake:
		case <-timer:
			c.mu.Lock()
			c.waiting = false
			return
		}
		c.mu.Lock()
	}
	c.waiting = false
}

// spinYields is how many times a consumer that runs out of deliveries
// yields its thread before it parks: a reply that comes within a few
// microseconds (a ping-pong between two consumers) then finds it
// running, which costs less CPU time than parking the goroutine and
// waking it up again.
const spinYields = 32

// spin yields until a delivery arrives (enqueue signals c.wake, since
// c.waiting is set) or spinYields yields have passed.
func (c *consumer) spin() {
	for range spinYields {
		if len(c.wake) > 0 {
			return
		}
		runtime.Gosched()
	}
}

// pending returns the number of pending deliveries (c.mu held).
func (c *consumer) pending() int {
	if c.inOrder {
		return c.fifo.len()
	}
	return len(c.queue) - c.head + c.fifo.len()
}

// remove takes pending delivery i (0 is the oldest) out of the queue.
func (c *consumer) remove(i int) Delivery {
	at := c.head + i
	d := c.queue[at]
	// Close the gap from the shorter side: replay picks out of arrival
	// order all the time, mostly near the front.
	if pending := len(c.queue) - c.head; i < pending/2 {
		copy(c.queue[c.head+1:at+1], c.queue[c.head:at])
		c.queue[c.head] = Delivery{} // drop the payload reference
		c.head++
	} else {
		copy(c.queue[at:], c.queue[at+1:])
		c.queue[len(c.queue)-1] = Delivery{}
		c.queue = c.queue[:len(c.queue)-1]
	}
	switch {
	case c.head == len(c.queue):
		c.queue, c.head = c.queue[:0], 0
	case c.head >= 1024 && c.head*2 >= len(c.queue):
		// Reclaim the handled prefix so that a queue that never drains
		// does not grow without bound.
		n := copy(c.queue, c.queue[c.head:])
		clear(c.queue[n:])
		c.queue, c.head = c.queue[:n], 0
	}
	return d
}

// retire drops the pending deliveries and refuses later ones (c.mu held).
func (c *consumer) retire() {
	dropped := c.pending()
	c.fifo.clear()
	clear(c.queue)
	c.queue, c.head, c.retired = nil, 0, true
	if dropped > 0 {
		c.r.release(int64(dropped))
	}
}
