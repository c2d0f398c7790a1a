package host

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"sync"
	"time"
)

// Timers: `publish T {…} after ms;` with ms > 0. The message gets its
// identity, and is journaled, when the statement runs; its deliveries are
// enqueued when the delay has passed. Until then the pending timer counts
// as one outstanding delivery, so the run cannot be quiescent; exit, a
// trap and an interrupt stop the queue, which drops what is pending.

// Timer is a delayed message waiting for its due time.
type Timer struct {
	// Due is when the deliveries are enqueued, on the queue's clock
	// (TimerQueue.Now): the Now of the publish plus the delay.
	Due     time.Duration
	Message MessageID // Message.Producer is the publishing consumer
	Topic   int
	Payload []byte
	DelayMS uint64
	// Targets are the instances that get a delivery, in main order:
	// decided when the statement runs, like the identity.
	Targets []int
}

// before reports whether t is due before u: by due time, then producer,
// then sequence, so that one producer's timers with equal due times keep
// their publish order.
func (t *Timer) before(u *Timer) bool {
	if t.Due != u.Due {
		return t.Due < u.Due
	}
	if t.Message.Producer != u.Message.Producer {
		return t.Message.Producer < u.Message.Producer
	}
	return t.Message.Seq < u.Message.Seq
}

// TimerQueue holds a run's pending timers and hands each to its fire
// function once due. It is what a virtual clock replaces (Options.Timers).
type TimerQueue interface {
	// Now is the queue's clock: the time since the queue was made.
	Now() time.Duration
	// Add holds t until Now reaches t.Due. Timers fire one at a time, in
	// order of due time, then producer, then sequence.
	Add(t Timer)
	// Stop drops every pending timer: after it, Add holds nothing and no
	// timer still pending is handed to fire (one taken out just before
	// may still be). The run ignores a timer that fires after it stopped.
	Stop()
}

// TimerQueueMaker makes a run's TimerQueue around fire, which enqueues a
// due timer's deliveries. fire may be called from any goroutine, also
// from inside Add, but not concurrently, and not with a lock held that
// Add or Stop takes (fire may end the run, which calls Stop).
type TimerQueueMaker func(fire func(Timer)) TimerQueue

// newTimerQueue makes a run's timer queue with maker, or realTimerQueue.
func newTimerQueue(maker TimerQueueMaker, fire func(Timer)) TimerQueue {
	if maker == nil {
		maker = realTimerQueue
	}
	return maker(fire)
}

// ImmediateTimers is a TimerQueueMaker whose timers fire at once, inside
// Add, whatever their delay: replay uses it, since a replay skips delays
// and lets the recorded order of each consumer place the deliveries.
func ImmediateTimers(fire func(Timer)) TimerQueue { return &immediateTimers{fire: fire} }

type immediateTimers struct {
	mu      sync.Mutex
	stopped bool
	fire    func(Timer)
}

func (q *immediateTimers) Now() time.Duration { return 0 }

func (q *immediateTimers) Add(t Timer) {
	q.mu.Lock()
	stopped := q.stopped
	q.mu.Unlock()
	if !stopped {
		q.fire(t)
	}
}

func (q *immediateTimers) Stop() {
	q.mu.Lock()
	q.stopped = true
	q.mu.Unlock()
}

// realTimerQueue is the default TimerQueueMaker: one runtime timer (no
// goroutine, no polling) set to the earliest due time on the process's
// monotonic clock. A program waiting only on timers uses no CPU.
func realTimerQueue(fire func(Timer)) TimerQueue {
	return &realTimers{start: time.Now(), fire: fire}
}

type realTimers struct {
	start time.Time // the monotonic reading Now counts from
	fire  func(Timer)

	firing sync.Mutex // held while due timers are handed out, so fire calls stay in order

	mu      sync.Mutex
	pending timerHeap
	wake    *time.Timer // armed for pending[0].Due; nil before the first Add
	stopped bool
}

func (q *realTimers) Now() time.Duration { return time.Since(q.start) }

func (q *realTimers) Add(t Timer) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return
	}
	q.pending.push(t)
	if q.pending[0].Message == t.Message {
		q.arm()
	}
}

// arm sets the runtime timer for the earliest pending timer (q.mu held).
func (q *realTimers) arm() {
	d := q.pending[0].Due - q.Now()
	if q.wake == nil {
		q.wake = time.AfterFunc(d, q.run)
		return
	}
	q.wake.Reset(d)
}

// run hands out every timer that is due, then rearms for the next one.
func (q *realTimers) run() {
	q.firing.Lock()
	defer q.firing.Unlock()
	for {
		q.mu.Lock()
		if q.stopped || len(q.pending) == 0 {
			q.mu.Unlock()
			return
		}
		if q.pending[0].Due > q.Now() {
			q.arm()
			q.mu.Unlock()
			return
		}
		t := q.pending.pop()
		q.mu.Unlock()
		q.fire(t)
	}
}

func (q *realTimers) Stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	q.pending = nil
	if q.wake != nil {
		q.wake.Stop()
	}
}

// timerHeap is a min-heap of timers by Timer.before.
type timerHeap []*Timer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].before(h[j]) }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(*Timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return t
}

func (h *timerHeap) push(t Timer) { heap.Push(h, &t) }

// pop removes and returns the earliest timer; h must not be empty.
func (h *timerHeap) pop() Timer { return *heap.Pop(h).(*Timer) }

// TimerJournal is an optional interface of a Journal: a timer's message
// is reported through PublishAfter, with its delay, instead of Publish.
// It is called at the same point as Publish would be: when the statement
// runs, before the message reaches any queue.
type TimerJournal interface {
	PublishAfter(c int, msg MessageID, topic int, payload []byte, targets []int, delayMS uint64)
}

// publishAfterCall publishes a timer from the gateway: args are the topic
// index and the delay in milliseconds as uvarints, the guard bits of a
// guarded topic (as for a publish), then the canonical payload.
func (c *consumer) publishAfterCall(args []byte) error {
	topic, n := binary.Uvarint(args)
	if n <= 0 || topic >= uint64(len(c.r.subs)) {
		return errors.New("publish: bad topic")
	}
	delay, m := binary.Uvarint(args[n:])
	if m <= 0 || delay == 0 {
		return errors.New("publish: bad delay")
	}
	args = args[n+m:]
	nb := c.r.router.GuardBytes(int(topic))
	if len(args) < nb {
		return errors.New("publish: no guard bits")
	}
	// args is a view of the engine's memory: the payload outlives it.
	return c.r.publishAfter(c, int(topic), bytes.Clone(args[nb:]), args[:nb], delay)
}

// dueAfter returns now plus delayMS milliseconds, saturating at the
// largest time.Duration (some 292 years) rather than overflowing.
func dueAfter(now time.Duration, delayMS uint64) time.Duration {
	const maxDuration = time.Duration(1<<63 - 1)
	if delayMS > uint64(maxDuration-now)/uint64(time.Millisecond) {
		return maxDuration
	}
	return now + time.Duration(delayMS)*time.Millisecond
}

// publishAfter gives a timer's message its identity, decides its
// targets (guards, whose bits the publisher evaluated, and work groups,
// whose round-robin counts it now) and journals it, all now, as publish
// does; then it hands the message to the timer queue, which enqueues its
// deliveries when it is due. An exported topic's message is sent to NATS
// now, not when it is due (docs/distributed.md). It runs on c's goroutine.
func (r *runner) publishAfter(c *consumer, topic int, payload []byte, bits []byte, delayMS uint64) error {
	msg := MessageID{Producer: c.id, Seq: c.published}
	c.published++
	k := c.topicCount(topic)
	targets := r.router.Route(nil, topic, bits, k) // kept by the timer: not c.targets
	if j := r.journal; j != nil {
		if tj, ok := j.(TimerJournal); ok {
			tj.PublishAfter(c.id, msg, topic, payload, targets, delayMS)
		} else {
			j.Publish(c.id, msg, topic, payload, targets)
		}
	}
	r.outstanding.Add(1) // the pending timer: released when it fires
	due := dueAfter(r.timers.Now(), delayMS)
	r.timers.Add(Timer{Due: due, Message: msg, Topic: topic, Payload: payload, DelayMS: delayMS, Targets: targets})
	if r.nats != nil {
		return r.egress(c, topic, msg, payload)
	}
	return nil
}

// fireTimer enqueues a due timer's deliveries, one per subscriber in main
// order, as an immediate publish does.
func (r *runner) fireTimer(t Timer) {
	if !r.stopped.Load() {
		for _, inst := range t.Targets {
			r.instCons[inst].enqueue(Delivery{Target: inst, Topic: t.Topic, Message: t.Message, Payload: t.Payload})
		}
	}
	r.release(1)
}
