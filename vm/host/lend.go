package host

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hale-lang/hale/codegen/image"
)

// Lending: a message passed back and forth between consumers (a
// ping-pong, a ring of pinned instances) would wake another thread for
// every message, which costs more than handling it. Instead, a publish
// to a waiting consumer that may be lent defers that consumer's wake to
// the end of the publishing handler; there, if the publisher's own
// consumer has nothing pending, its goroutine *borrows* the woken
// consumer and runs its deliveries itself, one at a time, in that
// consumer's order, on that consumer's engine. Which goroutine runs a
// consumer's deliveries is invisible to the program: each consumer still
// handles one delivery at a time, in arrival order. A handler that runs on
// past lendDelay after such a publish wakes the deferred consumers then,
// so that work handed to another consumer never waits long for its
// publisher (a producer that computes after it publishes keeps its
// workers running beside it), and a handler that publishes to several
// waiting consumers lends only the first and wakes the others.
//
// A consumer may be lent (lendable) when it takes its deliveries in
// arrival order (no Order, Stepper or debugger) and no handler of its
// instances may block (blockingLoci: a sleep, a network call), so that a
// borrowed handler never holds up its borrower for long; and only
// consumers that may be lent defer their publishes' wakes (a handler that
// may block does not hold another consumer's wake).

// lendQueue is how many deliveries a waiting consumer may have pending
// while its wake is deferred: past it, it is woken at once, so that a
// producer keeps its consumer running beside it.
const lendQueue = 16

// lendDelay is how long a handler may run on after a publish whose wake
// it deferred before the deferred consumers are woken anyway.
var lendDelay = 50 * time.Microsecond

// holder is what a consumer's goroutine keeps while it runs deliveries,
// its own consumer's (home) or a borrowed one's.
type holder struct {
	home *consumer
	// deferring: publishes to waiting lendable consumers defer their
	// wakes to settle. Off while the engine runs several deliveries in
	// one call, where the end of each handler is not seen.
	deferring bool

	// any says deferred is not empty, so that settle, called after
	// every handler, takes no lock when nothing was deferred.
	any atomic.Bool

	mu       sync.Mutex
	deferred []*consumer // waiting for settle (or the timer)
	armed    bool        // the timer runs for deferred
	timer    *time.Timer
	rest     []*consumer // settle's scratch
}

// hold makes the calling goroutine c's holder.
func (c *consumer) hold() *holder {
	h := &holder{home: c, deferring: c.lendable}
	if h.deferring {
		h.timer = time.AfterFunc(time.Hour, h.expire)
		h.timer.Stop()
	}
	c.holder = h
	return h
}

// deferWake notes c, a waiting consumer given a delivery by the running
// handler, for settle.
func (h *holder) deferWake(c *consumer) {
	h.mu.Lock()
	for _, d := range h.deferred {
		if d == c {
			h.mu.Unlock()
			return
		}
	}
	h.deferred = append(h.deferred, c)
	h.any.Store(true)
	if !h.armed {
		h.armed = true
		h.timer.Reset(lendDelay)
	}
	h.mu.Unlock()
}

// expire is the timer's: the handler ran on past lendDelay, so the
// consumers it deferred are woken now.
func (h *holder) expire() {
	h.mu.Lock()
	cs := append([]*consumer(nil), h.deferred...)
	clear(h.deferred)
	h.deferred = h.deferred[:0]
	h.any.Store(false)
	h.armed = false
	h.mu.Unlock()
	for _, c := range cs {
		c.wakeUp()
	}
}

// next returns the first consumer deferred by the handler that just ended
// (nil if none) and wakes the others.
func (h *holder) next() *consumer {
	if !h.any.Load() {
		return nil
	}
	h.mu.Lock()
	if len(h.deferred) == 0 {
		h.mu.Unlock()
		return nil
	}
	first := h.deferred[0]
	h.rest = append(h.rest[:0], h.deferred[1:]...)
	clear(h.deferred)
	h.deferred = h.deferred[:0]
	h.any.Store(false)
	if h.armed {
		h.armed = false
		h.timer.Stop()
	}
	h.mu.Unlock()
	for i, c := range h.rest {
		c.wakeUp()
		h.rest[i] = nil
	}
	return first
}

// settle runs after each handler h's goroutine runs: the consumer whose
// wake the handler deferred is borrowed and its deliveries run here while
// the home consumer has nothing pending, and so on along the consumers
// those deliveries defer; whatever is left is woken.
func (h *holder) settle() {
	c := h.next()
	for c != nil {
		if h.home.r.stopped.Load() || !h.home.idle() || !c.borrow() {
			c.wakeUp()
			return
		}
		c = c.runBorrowed(h)
	}
}

// runBorrowed runs the borrowed consumer c's pending deliveries until c
// has none, the home consumer has work, or the run stops, then gives c
// back; it returns the consumer to borrow next (one that c's last handler
// deferred, when c and the home consumer are idle), or nil.
func (c *consumer) runBorrowed(h *holder) *consumer {
	// c's own goroutine waits until giveBack, so its holder is only
	// lent here, and given back before c is.
	own := c.holder
	c.holder = h
	var next *consumer
	for !c.r.stopped.Load() {
		c.mu.Lock()
		if c.fifo.len() == 0 {
			c.mu.Unlock()
			break
		}
		d := c.fifo.pop()
		c.mu.Unlock()
		if !c.handle(d) {
			break
		}
		lent.Add(1)
		next = h.next()
		if next != nil && (c.idle() && h.home.idle()) {
			break
		}
		if next != nil {
			next.wakeUp()
			next = nil
		}
		if !h.home.idle() {
			break
		}
	}
	c.holder = own
	c.giveBack()
	return next
}

// borrow marks c as run by another goroutine if c's own goroutine waits
// and nobody else runs it; it reports whether it did.
func (c *consumer) borrow() bool {
	c.mu.Lock()
	ok := c.waiting && !c.borrowed && !c.retired && c.pending() > 0 && !c.r.stopped.Load()
	if ok {
		c.borrowed = true
	}
	c.mu.Unlock()
	return ok
}

// giveBack ends a borrow: c's own goroutine takes over if c has
// deliveries left.
func (c *consumer) giveBack() {
	c.mu.Lock()
	c.borrowed = false
	w := c.takeWake()
	c.mu.Unlock()
	if w {
		c.signal()
	}
}

// wakeUp wakes c's goroutine if it waits with deliveries pending and no
// other goroutine runs them.
func (c *consumer) wakeUp() {
	c.mu.Lock()
	w := c.takeWake()
	c.mu.Unlock()
	if w {
		c.signal()
	}
}

// takeWake reports whether c's goroutine is to be signalled: it waits
// with deliveries pending and no other goroutine runs them; it then no
// longer counts as waiting (c.mu held).
func (c *consumer) takeWake() bool {
	w := c.waiting && !c.borrowed && c.pending() > 0
	if w {
		c.waiting = false
	}
	return w
}

// idle reports whether c has no pending delivery.
func (c *consumer) idle() bool {
	c.mu.Lock()
	n := c.pending()
	c.mu.Unlock()
	return n == 0
}

// markLendable sets lendable on the consumers that may be lent (see
// above): in a run without an Order, a Stepper, a debugger or NATS, and
// with no Journal or an independent one (a Journal that waits for
// another consumer inside a handler could wait for the borrower itself).
func (r *runner) markLendable() {
	o := &r.opts
	if noLend || r.order != nil || o.stepping || o.Debug != nil || o.DebugPoll != nil || r.nats != nil {
		return
	}
	if r.journal != nil {
		if j, ok := r.journal.(IndependentJournal); !ok || !j.Independent() {
			return
		}
	}
	blocking := blockingLoci(r.img)
	for _, c := range r.consumers {
		if !c.inOrder {
			continue
		}
		switch c.kind {
		case image.ConsumerMain, image.ConsumerPool, image.ConsumerPinned:
		default:
			continue
		}
		ic := r.img.Consumers[c.id]
		ok := len(ic.Instances) > 0
		for _, inst := range ic.Instances {
			ok = ok && !blocking[r.img.Instances[inst].Locus]
		}
		c.lendable = ok
	}
}

// lent counts the deliveries run by a borrower, for tests.
var lent atomic.Int64

// noLend turns lending off (tests compare runs with and without it).
var noLend bool
