package replay

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/host"
	"github.com/hale-lang/hale/vm/value"
)

// RecordingJournal is the host.Journal of a recorded run: it lets every
// call go live and turns each event the runtime reports into an artifact
// entry (docs/replay.md), appended to a Recorder from the goroutine of the
// consumer concerned:
//
//   - a call of an input primitive (time, rand, entropy, env, args,
//     fs.read, sleep) is an Invocation with its result or trap; the env
//     primitive's value is withheld (only its byte length is kept) unless
//     the env policy is EnvFull (and the variable is not one the program
//     names as a secret); std::os::secret's result, the parts of a
//     secret or None, holds no value and is recorded as it is;
//   - print, std::io::println and std::io::eprintln are Outputs on stdout
//     or stderr whose result is the text written, newline included;
//   - fs.write and net calls are Outputs on the "fs.write" and "net"
//     channels with their canonical results; a net call's URL is recorded
//     with the password of its userinfo withheld (withheldArgs);
//   - std::process::exit is an Exit with the code, the source position
//     of the call and the coordinate of the delivery that called it;
//   - publishes (ingress lines included), deliveries and traps are
//     Publish, Delivery and Trap entries.
//
// A failure to write is sticky in the Recorder: from then on Deliver
// returns it, which halts the run before the next handler, and Err and
// Close report it; the CLI then exits with code 4. A running handler is
// stopped too: its next journaled call (and the call whose entry could
// not be queued) traps at once with an uncatchable trap (vm.Uncatchable),
// without going live, so that no fs.write, net or other effect happens
// that the recording does not hold.
type RecordingJournal struct {
	rec  *artifact.Recorder
	img  *image.Image
	full bool
	// at is, per consumer, the number of the delivery being handled (-1
	// before the first); each element is touched only from its
	// consumer's goroutine.
	at []int

	mu      sync.Mutex
	ended   bool
	closed  bool
	verdict string
	code    int
}

// NewRecordingJournal returns a journal that records a run of img into
// rec, withholding environment values unless envPolicy is EnvFull.
func NewRecordingJournal(rec *artifact.Recorder, img *image.Image, envPolicy string) *RecordingJournal {
	j := &RecordingJournal{rec: rec, img: img, full: envPolicy == artifact.EnvFull, at: make([]int, len(img.Consumers))}
	for i := range j.at {
		j.at[i] = -1
	}
	return j
}

var _ host.IndependentJournal = (*RecordingJournal)(nil)

// Independent reports true: the recorder waits only for its artifact's
// writer, never for another consumer, so a recorded run may share guests
// among consumers as an unrecorded one does (host.IndependentJournal).
func (j *RecordingJournal) Independent() bool { return true }

var _ host.LateJournal = (*RecordingJournal)(nil)

// StampsLate reports true: Deliver only appends the delivery's entry
// (it reads no state, and its error, a failed recording, halts the run
// whether or not the handler ran), so a run of deliveries that call
// nothing may be stamped after it ran (host.LateJournal).
func (j *RecordingJournal) StampsLate() bool { return true }

// Invoke performs the call live and records it. Once recording has
// failed it traps instead, uncatchably, without performing the call.
func (j *RecordingJournal) Invoke(c int, p stdlib.Primitive, args []byte, live func() ([]byte, error)) ([]byte, error) {
	if j.rec.Failed() {
		return nil, recordingFailed(j.rec.Err())
	}
	res, err := live()
	if aerr := j.recordCall(c, p, args, res, err); aerr != nil {
		return nil, recordingFailed(aerr)
	}
	return res, err
}

// recordingFailed is the uncatchable trap of a journaled call after the
// recording failed with err.
func recordingFailed(err error) error {
	return vm.Uncatchable(fmt.Errorf("recording failed: %w", err))
}

// recordCall appends the entry of one primitive call that returned res
// or err. Invocations and outputs, the entries of every call, go through
// the recorder's typed appends, which do not box the entry.
func (j *RecordingJournal) recordCall(c int, p stdlib.Primitive, args, res []byte, err error) error {
	switch {
	case p.Effect == stdlib.Exit:
		code, pos := exitArgs(args)
		return j.rec.Append(uint32(c), artifact.Exit{Code: code, Position: pos, At: j.coordinate(c)})
	case p.Journal == stdlib.Output:
		out := artifact.Output{Channel: ioChannel(p), Primitive: p.Name, Args: args, Outcome: artifact.OK}
		if err != nil {
			out.Outcome, out.TrapKind, out.Message = artifact.Trapped, trapKindOf(err), err.Error()
		} else if text, terr := ioText(p, args); terr != nil {
			out.Outcome, out.TrapKind, out.Message = artifact.Trapped, trapKindOf(terr), terr.Error()
		} else {
			out.Result = []byte(text + "\n")
		}
		return j.rec.AppendOutput(uint32(c), &out)
	case p.Journal == stdlib.Virtual:
		out := artifact.Output{Channel: string(p.Effect), Primitive: p.Name, Args: withheldArgs(p, args), Outcome: artifact.OK, Result: res}
		if err != nil {
			out.Outcome, out.Result, out.TrapKind, out.Message = artifact.Trapped, nil, trapKindOf(err), err.Error()
		}
		return j.rec.AppendOutput(uint32(c), &out)
	}
	inv := artifact.Invocation{Primitive: p.Name, Args: args, Outcome: artifact.OK, Result: res}
	switch {
	case err != nil:
		inv.Outcome, inv.Result, inv.TrapKind, inv.Message = artifact.Trapped, nil, trapKindOf(err), err.Error()
	case p.Name == secretPrim:
		// Its result is the secret's parts (the variable's name) or
		// None: never a value, so it is recorded as it is.
	case p.Effect == stdlib.Env && (!j.full || j.secretEnv(args)):
		inv.Outcome, inv.Result, inv.Length = artifact.Withheld, nil, envLength(res)
	}
	return j.rec.AppendInvocation(uint32(c), &inv)
}

// secretPrim is the primitive that names an environment variable as a
// secret.
const secretPrim = "std::os::secret"

// secretEnv reports whether args are those of a std::os::env call of a
// variable the program also names as a secret (a literal argument of
// std::os::secret anywhere in it): its value is withheld whatever the
// env policy.
func (j *RecordingJournal) secretEnv(args []byte) bool {
	if len(j.img.SecretNames) == 0 {
		return false
	}
	vs, err := value.DecodeTuple(args, []*value.Type{value.StringType, value.StringType})
	if err != nil {
		return false
	}
	return slices.Contains(j.img.SecretNames, vs[0].AsStr())
}

// trapKindOf is the kind of the trap that a failed call's err raises, as
// the interpreter decides it (vm.Machine's failErr): the kind the error
// carries (TrapKind), KindRecord for an uncatchable error, else KindHost.
func trapKindOf(err error) string {
	var k interface{ TrapKind() string }
	switch {
	case errors.Is(err, vm.ErrUncatchable):
		return vm.KindRecord
	case errors.As(err, &k):
		return k.TrapKind()
	}
	return vm.KindHost
}

// coordinate is the delivery consumer c is handling, nil outside any.
func (j *RecordingJournal) coordinate(c int) *artifact.Coordinate {
	if c < 0 || c >= len(j.at) || j.at[c] < 0 {
		return nil
	}
	return &artifact.Coordinate{Consumer: uint32(c), N: uint64(j.at[c])}
}

// Publish records a message.
func (j *RecordingJournal) Publish(c int, msg host.MessageID, topic int, payload []byte, targets []int) {
	j.PublishAfter(c, msg, topic, payload, targets, 0)
}

// PublishAfter records a message with its delay in milliseconds (a timer;
// 0 for an immediate message): the delay is recorded, though a replay
// skips it (host.TimerJournal).
func (j *RecordingJournal) PublishAfter(c int, msg host.MessageID, topic int, payload []byte, _ []int, delayMS uint64) {
	e := artifact.Publish{Topic: j.topicName(topic), Message: messageID(msg), Payload: payload, DelayMS: delayMS}
	j.rec.AppendPublish(uint32(c), &e)
}

var _ host.TimerJournal = (*RecordingJournal)(nil)

// Ingress records a message received from NATS, at the wire
// (host.IngressJournal).
func (j *RecordingJournal) Ingress(c int, subject, msgID string, payload []byte) {
	j.rec.Append(uint32(c), artifact.Ingress{Subject: subject, MsgID: msgID, Payload: payload})
}

var _ host.IngressJournal = (*RecordingJournal)(nil)

// Deliver records a handler about to run. Once recording has failed it
// returns the failure, which halts the run.
func (j *RecordingJournal) Deliver(c, n int, d *host.Delivery, _ host.StateReader) error {
	if c >= 0 && c < len(j.at) {
		j.at[c] = n
	}
	e := j.deliveryEntry(d)
	if err := j.rec.AppendDelivery(uint32(c), &e); err != nil {
		return fmt.Errorf("recording failed: %w", err)
	}
	return nil
}

func (j *RecordingJournal) deliveryEntry(d *host.Delivery) artifact.Delivery {
	e := artifact.Delivery{Target: j.instanceName(d.Target)}
	if d.IsStart() {
		e.Start = true
	} else {
		e.Message, e.Topic = messageID(d.Message), j.topicName(d.Topic)
	}
	return e
}

// Trap records a trap with its stack and coordinate.
func (j *RecordingJournal) Trap(c, n int, t *vm.Trap, _ *host.Delivery) {
	e := trapEntry(c, n, t)
	j.rec.Append(uint32(c), e)
}

// trapEntry is the entry of trap t on consumer c's delivery n (-1 at
// start-up).
func trapEntry(c, n int, t *vm.Trap) artifact.Trap {
	e := artifact.Trap{Stack: []string{}}
	if t != nil {
		e.TrapKind, e.Message = t.Kind, t.Message
		if len(t.Stack) > 0 {
			e.Position = t.Stack[0].Pos
		}
		for _, f := range t.Stack {
			if f.Pos == "" {
				e.Stack = append(e.Stack, "at "+f.Func)
			} else {
				e.Stack = append(e.Stack, "at "+f.Pos+" in "+f.Func)
			}
		}
	}
	if n >= 0 {
		e.At = &artifact.Coordinate{Consumer: uint32(c), N: uint64(n)}
	}
	return e
}

// End remembers how the run ended, for Close.
func (j *RecordingJournal) End(verdict string, code int) {
	j.mu.Lock()
	j.ended, j.verdict, j.code = true, verdict, code
	j.mu.Unlock()
}

// Err returns the recording's failure, or nil.
func (j *RecordingJournal) Err() error { return j.rec.Err() }

// ErrRunNotEnded is what Close returns when the run never reported its
// end (host.Run failed before it started): the artifact is abandoned, and
// the run's own error is the one to report.
var ErrRunNotEnded = errors.New("recording abandoned: the run did not start")

// Close finishes the artifact with the verdict and exit code End
// reported and renames it into place. It returns the recording's failure,
// if any, in which case no artifact is left. Without End the artifact is
// abandoned and Close returns ErrRunNotEnded.
func (j *RecordingJournal) Close() error {
	j.mu.Lock()
	closed, ended, verdict, code := j.closed, j.ended, j.verdict, j.code
	j.closed = true
	j.mu.Unlock()
	switch {
	case closed:
		return artifact.ErrClosed
	case !ended:
		j.rec.Abort()
		return ErrRunNotEnded
	}
	return j.rec.Close(verdict, int64(code))
}

func (j *RecordingJournal) topicName(t int) string {
	if t >= 0 && t < len(j.img.Topics) {
		return j.img.Topics[t].Name
	}
	return fmt.Sprintf("topic#%d", t)
}

func (j *RecordingJournal) instanceName(i int) string {
	if i >= 0 && i < len(j.img.Instances) {
		return j.img.Instances[i].Name
	}
	return fmt.Sprintf("instance#%d", i)
}

func messageID(m host.MessageID) artifact.MessageID {
	return artifact.MessageID{Producer: uint32(m.Producer), Seq: m.Seq}
}

// ioChannel is the output channel of an io primitive.
func ioChannel(p stdlib.Primitive) string {
	if p.Name == "std::io::eprintln" {
		return artifact.ChannelStderr
	}
	return artifact.ChannelStdout
}

// ioText is the text an io primitive writes, without the newline: print's
// argument is one canonical string, println's and eprintln's a tuple of
// one string.
func ioText(p stdlib.Primitive, args []byte) (string, error) {
	if p.Name == "print" {
		v, err := value.Decode(args, value.StringType)
		if err != nil {
			return "", fmt.Errorf("print: bad argument: %v", err)
		}
		return v.AsStr(), nil
	}
	vs, err := value.DecodeTuple(args, []*value.Type{value.StringType})
	if err != nil {
		return "", fmt.Errorf("%s: bad arguments: %v", p.Name, err)
	}
	return vs[0].AsStr(), nil
}

// exitArgs splits std::process::exit's gateway arguments into the code
// and the source position of the call; the code is -1 when they are not
// an int and a string.
func exitArgs(args []byte) (code int64, pos string) {
	vs, err := value.DecodeTuple(args, []*value.Type{value.IntType, value.StringType})
	if err != nil {
		return -1, ""
	}
	return vs[0].AsInt(), vs[1].AsStr()
}

// envLength is the withheld length of an env result: the byte length of
// the string value (of the canonical bytes when they are not a string).
func envLength(res []byte) uint64 {
	v, err := value.Decode(res, value.StringType)
	if err != nil {
		return uint64(len(res))
	}
	return uint64(len(v.AsStr()))
}
