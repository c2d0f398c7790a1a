package explore

import (
	"time"

	"github.com/hale-lang/hale/vm/host"
)

// virtualTimers holds a run's delayed messages (`publish T {…} after ms`)
// on the world's virtual clock (docs/testing.md): a timer's deliveries are
// enqueued once virtual time reaches its due time, where they join their
// producer's order; when nothing else is deliverable, time jumps to the
// earliest due timer.
type virtualTimers struct {
	w       *world
	fire    func(host.Timer)
	pending []host.Timer // in order of due time, producer, sequence
	stopped bool
	fired   int // timers fired so far
}

func (q *virtualTimers) Now() time.Duration { return time.Duration(q.w.elapsedNs) }

func (q *virtualTimers) Add(t host.Timer) {
	if q.stopped {
		return
	}
	i := len(q.pending)
	for i > 0 && timerBefore(&t, &q.pending[i-1]) {
		i--
	}
	q.pending = append(q.pending, host.Timer{})
	copy(q.pending[i+1:], q.pending[i:])
	q.pending[i] = t
}

func (q *virtualTimers) Stop() {
	q.stopped = true
	q.pending = nil
}

// timerBefore orders timers by due time, then producer, then sequence.
func timerBefore(t, u *host.Timer) bool {
	if t.Due != u.Due {
		return t.Due < u.Due
	}
	if t.Message.Producer != u.Message.Producer {
		return t.Message.Producer < u.Message.Producer
	}
	return t.Message.Seq < u.Message.Seq
}

// fireDue enqueues the deliveries of every timer that is due.
func (q *virtualTimers) fireDue() {
	for len(q.pending) > 0 && !q.stopped && q.pending[0].Due <= q.Now() {
		t := q.pending[0]
		q.pending = q.pending[1:]
		q.fired++
		q.fire(t)
	}
}

// jump advances virtual time to the earliest pending timer and fires
// every timer due then; it reports false when none is pending.
func (q *virtualTimers) jump() bool {
	if len(q.pending) == 0 || q.stopped {
		return false
	}
	if due := int64(q.pending[0].Due); due > q.w.elapsedNs {
		q.w.elapsedNs = due
	}
	q.fireDue()
	return true
}

// wanted reports whether the chooser, when it follows a given schedule,
// finds the delivery it wants among the choices (true when it wants no
// particular one). A followed schedule may name a delayed message that is
// not due yet on the virtual clock (a recording's schedule counts delayed
// messages as due at once): time then jumps until it is.
func wanted(ch chooser, step int, choices []choice) bool {
	var f *follow
	switch c := ch.(type) {
	case *follow:
		f = c
	case *prefixChooser:
		if step >= c.n {
			return true
		}
		f = c.f
	default:
		return true
	}
	if step >= len(f.steps) || f.steps[step] == nil {
		return true
	}
	for _, c := range choices {
		if f.steps[step].same(&c.d, c.consumer) {
			return true
		}
	}
	return false
}
