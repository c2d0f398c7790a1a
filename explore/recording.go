package explore

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/host"
	"github.com/hale-lang/hale/vm/value"
)

// StrategyRecording is the strategy of a bundle made from a recording
// (hale trace bundle).
const StrategyRecording = "recording"

// FromRecording turns an admitted recording of the compiled program c
// that ended in a failure (a trap, or an exit with a non-zero code) into
// a bundle (docs/testing.md): its per-consumer delivery orders are merged
// into one schedule by repeatedly taking the lowest-numbered consumer
// whose next recorded delivery's message has already been published; the
// recorded calls become the transcript, the recorded output the outputs,
// the ingress lines the stdin, and the sources are embedded.
func FromRecording(art *artifact.Artifact, c *hale.Compiled) (*Bundle, error) {
	r, err := ReadRecording(art, c.Image)
	if err != nil {
		return nil, err
	}
	if r.failure == nil {
		return nil, errors.New("the recording ends without a failure (a trap or a non-zero exit): there is nothing to bundle")
	}
	o := &Outcome{Steps: r.steps, Failure: r.failure, inputs: r.inputs, outputs: r.outputs, stdin: r.stdin}
	s := &Scheduler{cfg: Config{MaxSteps: DefaultMaxSteps, MaxHandlerSteps: DefaultMaxHandlerSteps}, img: c.Image}
	return s.NewBundle(c, StrategyRecording, o)
}

// Recording is what the explorer takes from a recorded run: its delivery
// orders merged into one schedule (the failing delivery, if any, last),
// its answered calls, its stdin lines, its outputs and its failure.
type Recording struct {
	steps   []Step
	inputs  []call
	outputs []call
	stdin   []string
	failure *Failure
}

// Steps is the number of steps of the recording's merged schedule.
func (r *Recording) Steps() int { return len(r.steps) }

// replayInputs serves a run from the recording: its answers, then the
// fixtures and the seed for what it did not record.
func (r *Recording) replayInputs() *replayInputs {
	in := &replayInputs{stdin: r.stdin, transcript: map[string][]call{}, fallback: true}
	for _, c := range r.inputs {
		k := callKey(c.prim, c.args)
		in.transcript[k] = append(in.transcript[k], c)
	}
	return in
}

// ReadRecording reads an admitted recording of img.
func ReadRecording(art *artifact.Artifact, img *image.Image) (*Recording, error) {
	type recorded struct {
		step      Step
		publishes []artifact.MessageID
		outputs   []call // in the consumer's order, placed with the step
	}
	perConsumer := map[uint32][]*recorded{}
	published := map[artifact.MessageID]bool{}
	byName := map[string]int{}
	for i, in := range img.Instances {
		byName[in.Name] = i
	}
	ingress := map[uint32]bool{}
	firstIngress := ^uint32(0)
	for _, ic := range art.Header.Consumers {
		if ic.Kind == artifact.ConsumerIngress {
			ingress[ic.ID] = true
			firstIngress = min(firstIngress, ic.ID)
		}
	}
	var inputs, outputs []call // outputs: those at start-up, before any delivery
	output := func(cur []*recorded, c call) {
		if len(cur) == 0 {
			outputs = append(outputs, c)
			return
		}
		cur[len(cur)-1].outputs = append(cur[len(cur)-1].outputs, c)
	}
	var stdin []string
	var failure *Failure
	for i := 0; i < art.Len(); i++ {
		e := art.Entry(i)
		cons := int(e.Consumer)
		cur := perConsumer[e.Consumer]
		switch x := e.Body.(type) {
		case artifact.Delivery:
			t, ok := byName[x.Target]
			if !ok {
				return nil, fmt.Errorf("the recording delivers to instance %q, which the program does not have", x.Target)
			}
			st := Step{Consumer: cons, Target: t, Start: x.Start}
			if !x.Start {
				st.Message = host.MessageID{Producer: int(x.Message.Producer), Seq: x.Message.Seq}
			}
			perConsumer[e.Consumer] = append(cur, &recorded{step: st})
		case artifact.Publish:
			switch {
			case ingress[e.Consumer]:
				published[x.Message] = true
				// Every binding publishes each line: read them from the first.
				if e.Consumer == firstIngress && len(x.Payload) >= 2 {
					if v, err := value.Decode(x.Payload[2:], value.StringType); err == nil {
						stdin = append(stdin, v.AsStr())
					}
				}
			case len(cur) == 0:
				published[x.Message] = true // at start-up, before any delivery
			default:
				cur[len(cur)-1].publishes = append(cur[len(cur)-1].publishes, x.Message)
			}
		case artifact.Invocation:
			inputs = append(inputs, recordedCall(cons, x.Primitive, x.Args, x.Outcome, x.Result, x.TrapKind, x.Message))
		case artifact.Output:
			switch x.Channel {
			case artifact.ChannelStdout, artifact.ChannelStderr:
				output(cur, call{consumer: cons, prim: x.Primitive, args: x.Args})
			default:
				inputs = append(inputs, recordedCall(cons, x.Primitive, x.Args, x.Outcome, x.Result, x.TrapKind, x.Message))
				output(cur, call{consumer: cons, prim: x.Primitive, args: x.Args})
			}
		case artifact.Exit:
			args, _ := value.EncodeTuple(nil, []value.Value{value.Int(x.Code), value.Str(x.Position)})
			output(cur, call{consumer: cons, prim: "std::process::exit", args: args})
			if x.Code != 0 && failure == nil {
				failure = &Failure{Kind: "exit", Message: fmt.Sprintf("exit code %d", x.Code), Position: x.Position, Stack: []string{}}
				if x.At != nil {
					failure.Coordinate = x.At.String()
				}
			}
		case artifact.Trap:
			if failure == nil {
				failure = &Failure{Kind: x.TrapKind, Message: x.Message, Position: x.Position, Stack: []string{}}
				if failure.Kind == "" {
					failure.Kind = vm.KindPanic // a format 1 artifact does not say
				}
				if x.At != nil {
					failure.Coordinate = x.At.String()
				}
				for _, f := range x.Stack {
					f = strings.TrimPrefix(f, "at ")
					failure.Stack = append(failure.Stack, strings.Replace(f, " in ", " ", 1))
				}
			}
		}
	}
	// Merge the per-consumer orders.
	var ids []uint32
	for id := range perConsumer {
		ids = append(ids, id)
	}
	sortUint32(ids)
	next := map[uint32]int{}
	var steps []Step
	// The failing delivery runs last: the run ends there.
	failing := func(id uint32, k int) bool { return failure != nil && failure.Coordinate == coord(int(id), k) }
	for lastResort := false; ; {
		took := false
		for _, id := range ids {
			k := next[id]
			if k >= len(perConsumer[id]) || (failing(id, k) && !lastResort) {
				continue
			}
			r := perConsumer[id][k]
			msg := artifact.MessageID{Producer: uint32(r.step.Message.Producer), Seq: r.step.Message.Seq}
			if !r.step.Start && !published[msg] {
				continue
			}
			steps = append(steps, r.step)
			outputs = append(outputs, r.outputs...)
			for _, p := range r.publishes {
				published[p] = true
			}
			next[id] = k + 1
			took = true
			break
		}
		if !took {
			if lastResort {
				break
			}
			lastResort = true
		} else if lastResort && len(steps) > 0 && failing(uint32(steps[len(steps)-1].Consumer), next[uint32(steps[len(steps)-1].Consumer)]-1) {
			break // the failure: nothing after it ran
		}
	}
	// Deliveries left over ran after the failure, on other consumers, or
	// handled what the failing handler published: the bundle's run ends
	// at the failure without them.
	return &Recording{steps: steps, inputs: inputs, outputs: outputs, stdin: stdin, failure: failure}, nil
}

func recordedCall(consumer int, prim string, args []byte, o artifact.Outcome, result []byte, kind, message string) call {
	c := call{consumer: consumer, prim: prim, args: args, result: result}
	switch o {
	case artifact.Trapped:
		if kind == "" {
			kind = vm.KindIO
		}
		c.trap, c.result = trapError(kind, message), nil
	case artifact.Withheld:
		// Not recorded: the bundle cannot answer it, and a replay traps there.
		c.trap, c.result = trapError(vm.KindReplay, "the recording withheld this result"), nil
	}
	return c
}

func sortUint32(s []uint32) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
