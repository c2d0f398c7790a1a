package host

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm"
)

// This file is the seam for record and replay. The runtime reports every
// replayable decision of a run to a Journal, asks an Order which pending
// delivery each consumer runs next, and reads ingress lines from an
// Input. Package replay implements all three: its recorder journals a
// live run; its replayer serves recorded results, holds early deliveries
// and injects recorded input. When none is installed, which is the common
// case, each site costs one nil check and the runtime does the live thing.
//
// Numbering, which every implementation can rely on:
//
//   - Consumer ids are those of image.Image.Consumers (docs/language.md).
//   - A message's identity is (producer consumer, producer sequence), P:S,
//     where S counts that consumer's publishes from 0 (ingress bindings
//     publish too, as their own consumers).
//   - Each consumer numbers the deliveries it handles from 0, start
//     deliveries included: the N of the coordinate C:N. A delivery gets
//     its number when its handler is about to run, not when it is queued.

// MessageID identifies a message: the consumer that published it and the
// number of messages that consumer had published before it. It is
// written P:S.
type MessageID struct {
	Producer int
	Seq      uint64
}

// String returns the identity as "P:S".
func (m MessageID) String() string {
	return strconv.Itoa(m.Producer) + ":" + strconv.FormatUint(m.Seq, 10)
}

// StartTopic is the Topic of a start delivery (an instance's `on start`
// run). It equals vm.HandlerStart, so a delivery's Topic is the handler
// selector that Engine.Deliver takes.
const StartTopic = vm.HandlerStart

// Delivery is one handler run, pending or running: a message, or an
// instance's start, reaching one target instance.
type Delivery struct {
	Target  int       // instance index (image.Image.Instances)
	Topic   int       // topic index (image.Image.Topics), or StartTopic
	Message MessageID // the message's identity; zero for a start delivery
	// Payload is the message's canonical payload (nil for a start
	// delivery). All deliveries of one message share it: never modify it.
	Payload []byte
}

// IsStart reports whether d is an instance's start delivery.
func (d *Delivery) IsStart() bool { return d.Topic == StartTopic }

// Journal sees every replayable event of a run. The recorder writes them
// to an artifact; the replayer checks them against one and serves
// recorded results. Methods are called from the goroutine of the consumer
// concerned (c), concurrently for different consumers and sequentially
// for one; End is called once, after every consumer has stopped. A
// Journal may block (a recorder stalls rather than drops), which stalls
// only the calling consumer.
//
// Per consumer, the calls come in this order: the Invoke calls of its
// instances' spawn arguments and state initialisers (at start-up, from
// Run's own goroutine), then Deliver(n) for n = 0, 1, 2, …, each followed
// by the Invoke and Publish calls its handler makes, in program order,
// and possibly by Trap (then nothing more from that consumer). An ingress consumer only publishes. A Publish always
// precedes the Deliver calls of the deliveries it causes, on every
// consumer. A trap in a state initialiser at start-up is reported (Trap
// with n = -1) before any consumer runs, from Run's own goroutine.
type Journal interface {
	// Invoke is called for every primitive call that crosses the gateway
	// (print, std::io, std::time, std::rand, std::os, std::fs, std::http,
	// std::process::exit), but not for publishing, which is Publish, nor
	// for a pure primitive (std::math), which is computed at once. p is
	// the primitive (stdlib's table: name, effect, journal kind), args
	// its canonical argument tuple (print's args are the text as one
	// canonical string; std::process::exit's are the code, then the
	// source position of the call as a string). live
	// performs the call on the real world and returns the canonical
	// result, or an error that becomes a trap with err.Error() as its
	// message.
	//
	// The journal returns what the program sees. A recorder calls live
	// and records both sides. A replayer compares p and args with the
	// recording and serves the recorded result without calling live (an
	// input, an fs.write or net call, a skipped sleep), or calls live to
	// print again (io output, exit); a journal miss is an error, and so a
	// trap. args and the returned bytes must not be modified afterwards;
	// args may be kept.
	Invoke(c int, p stdlib.Primitive, args []byte, live func() ([]byte, error)) ([]byte, error)

	// Publish is called when consumer c publishes message msg on topic
	// (an index into image.Image.Topics), before the message reaches any
	// queue, also when nobody subscribes. payload is the canonical
	// payload; it may be kept but not modified. targets are the
	// instances that get a delivery of it, in main order: the topic's
	// subscribers whose guard holds, with one member of its work group
	// (Router); the slice is valid only during the call.
	Publish(c int, msg MessageID, topic int, payload []byte, targets []int)

	// Deliver is called on consumer c just before the handler of its
	// delivery number n runs (the delivery is stamped here, not when it
	// was queued). state reads the canonical state of any instance hosted
	// by c, and only during the call (replay --at shows the target's
	// state); d too is valid only during the call (keep a copy). A
	// non-nil error halts the run before the handler runs: no
	// consumer takes another delivery, and Run ends with VerdictHalted and
	// that error in Result.Halt.
	Deliver(c, n int, d *Delivery, state StateReader) error

	// Trap is called when a handler of consumer c traps while running its
	// delivery number n (d), before the run stops. During start-up (an
	// instance's state initialisers trap) n is -1 and d is nil.
	Trap(c, n int, t *vm.Trap, d *Delivery)

	// End is called once when the run is over, with its verdict
	// (VerdictQuiescent, VerdictExit, VerdictTrap, VerdictHalted,
	// VerdictCanceled or VerdictError) and exit code.
	End(verdict string, code int)
}

// ErrInterrupt, returned (wrapped or not) by a Journal's Invoke or a
// Poller's Poll, ends the running handler there, without a trap: in a
// handler run the consumer then retires while the others go on; at
// start-up the run stops as canceled (code ExitCanceled). A replayer
// uses it to stop a replay where a canceled recording stopped. Run then
// returns no error.
var ErrInterrupt = errors.New("interrupted")

// Poller is an optional interface of a Journal: Poll is called every
// vm.PollSteps steps of a handler run (or initialiser) of consumer c, and
// an error (ErrInterrupt) ends it there. It lets a replayer stop a handler
// that the recorded run interrupted even when the handler makes no more
// calls.
type Poller interface {
	Poll(c int) error
}

// LateJournal is an optional interface of a Journal. StampsLate
// reporting true lets a consumer run a run of deliveries (to one
// instance and topic, queued one after the other) whose handlers call
// nothing the Journal sees (no Invoke, Publish, Poll or Trap: on the
// wasm engine, a handler compiled whole that publishes nothing, which
// hands back any delivery that would) in one call of its engine, and
// call Deliver for each of them afterwards, in order, before the
// consumer's next call of anything else. The Journal then sees the same
// calls in the same order as if each had been stamped before it ran,
// but its Deliver may not read the instance's state (it is past the
// delivery), nor expect a non-nil error to keep the handler from
// running (it has run, with no effect outside its instance's state; the
// run still halts). The recorder is one, and so is the replayer but
// under --at (it checks a run of deliveries it gave, RunOrder, after
// they ran); a consumer that takes them one by one does not stamp late.
type LateJournal interface {
	Journal
	StampsLate() bool
}

// StateReader reads an instance's state as the canonical tuple of its
// state variables in declaration order. Every Engine is one.
type StateReader interface {
	State(inst int) ([]byte, error)
}

// Order chooses which pending delivery a consumer handles next. Without
// one, every consumer handles its queue in arrival order (FIFO), as
// docs/language.md specifies. The replayer installs one that follows the
// recorded order.
type Order interface {
	// Next is called on consumer c's goroutine whenever c is ready for
	// its next delivery and has at least one pending; pending holds them
	// in arrival order (valid only during the call, not to be modified).
	// It returns the index of the delivery to run, or:
	//
	//   - Hold: none of them yet. The consumer waits until another
	//     delivery arrives or wait has passed (wait <= 0: until one
	//     arrives), then calls Next again with the longer list. Replay
	//     holds early arrivals this way and, once its hold timeout has
	//     passed, releases one.
	//   - Retire: the consumer takes nothing more. Its pending deliveries
	//     and any that arrive later are dropped and do not keep the run
	//     from being quiescent. Replay retires a consumer that has handled
	//     every delivery of the recording when the recorded run ended
	//     there.
	Next(c int, pending []Delivery) (pick int, wait time.Duration)
}

// RunOrder is an optional interface of an Order. NextRun is Next for a
// consumer that may take several pending deliveries at once (at most
// most): it may answer pick 0 with count > 1, which gives pending[0],
// …, pending[count-1] to run one after the other, in that order, as if
// Next had picked the first pending delivery before each (the consumer
// runs them all, unless one of them ends it: a trap, a halt, an
// interrupt); otherwise count is 1 (0 with Hold or Retire) and pick and
// wait are Next's. pending may be only the oldest pending deliveries
// (at least one, in arrival order): when NextRun answers Hold or Retire
// and more are pending, it is asked again at once with all of them, so
// an answer must hold for being asked twice (a retiring Order counts
// what it drops once). NextRun is called with the consumer's queue locked:
// it must answer at once (Hold to wait), and not publish, enqueue or
// call into the runtime. The replayer is one: a replay that follows its
// recording took its consumer's lock and asked Next once per delivery.
type RunOrder interface {
	Order
	NextRun(c int, pending []Delivery, most int) (pick, count int, wait time.Duration)
}

// Special results of Order.Next.
const (
	Hold   = -1
	Retire = -2
)

// Input is where `bind stdin` bindings get their lines: the program's
// stdin in a live run (LineReader), the recorded lines on replay
// (RecordedLines). Each line is published once by every binding, in
// binding order.
type Input interface {
	// Line returns the next line without its line ending, or io.EOF at
	// the end of input. Any other error also ends the input.
	Line() (string, error)
}

// LineReader returns the Input of a live run: r split at "\n", a trailing
// "\r" removed from each line, and a last line without a newline
// included.
func LineReader(r io.Reader) Input {
	if r == nil {
		return RecordedLines(nil)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	return inputFunc(func() (string, error) {
		line, err := br.ReadString('\n')
		if err != nil {
			if line == "" {
				if err == nil {
					err = io.EOF
				}
				return "", err
			}
			// The last line without a newline; the error comes next time.
		}
		line = strings.TrimSuffix(line, "\n")
		return strings.TrimSuffix(line, "\r"), nil
	})
}

// RecordedLines returns an Input that yields lines and then io.EOF.
func RecordedLines(lines []string) Input {
	i := 0
	return inputFunc(func() (string, error) {
		if i >= len(lines) {
			return "", io.EOF
		}
		i++
		return lines[i-1], nil
	})
}

type inputFunc func() (string, error)

func (f inputFunc) Line() (string, error) { return f() }
