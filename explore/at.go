package explore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/vm/host"
)

// recentDeliveries is how many handled deliveries per consumer --at shows.
const recentDeliveries = 5

// atStop is the world's part of `hale replay x.replay --at C:N`: it keeps
// each consumer's last deliveries and, just before delivery C:N, builds
// the view and halts the run.
type atStop struct {
	img    *image.Image
	c, n   int
	recent map[int][]handled
	view   *replay.AtView
}

type handled struct {
	n int
	d host.Delivery
}

var errAtStop = errors.New("stopped at the requested delivery")

func (a *atStop) deliver(c, n int, d *host.Delivery, state host.StateReader) error {
	if c == a.c && n == a.n {
		a.view = a.build(c, n, d, state)
		return errAtStop
	}
	r := append(a.recent[c], handled{n, *d})
	if len(r) > recentDeliveries {
		r = r[1:]
	}
	a.recent[c] = r
	return nil
}

func (a *atStop) build(c, n int, d *host.Delivery, state host.StateReader) *replay.AtView {
	v := &replay.AtView{Coordinate: coord(c, n), Recent: []replay.HandledDelivery{}}
	target, message, topic, payload := a.show(d)
	v.Pending = replay.PendingDelivery{Target: target, Message: message, Topic: topic, Payload: payload}
	v.State = json.RawMessage("{}")
	if tuple, err := state.State(d.Target); err != nil {
		v.Error = err.Error()
	} else if st, err := replay.StateJSON(a.img, d.Target, tuple); err != nil {
		v.Error = err.Error()
	} else {
		v.State = st
	}
	for _, h := range a.recent[c] {
		target, message, topic, payload := a.show(&h.d)
		v.Recent = append(v.Recent, replay.HandledDelivery{Coordinate: coord(c, h.n), Target: target, Message: message, Topic: topic, Payload: payload})
	}
	return v
}

func (a *atStop) show(d *host.Delivery) (target, message, topic string, payload json.RawMessage) {
	target = a.img.Instances[d.Target].Name
	if d.IsStart() {
		return target, "start", "", json.RawMessage("null")
	}
	topic = a.img.Topics[d.Topic].Name
	payload = json.RawMessage("null")
	if v, ok := replay.ProgramDecoder(a.img)("payload", topic, d.Payload); ok {
		if j, err := json.Marshal(v); err == nil {
			payload = j
		}
	}
	return target, d.Message.String(), topic, payload
}

// ParseAt reads --at for a bundle: "C:N", or a bare step number N (the
// N-th step of the schedule, from 0), and returns the coordinate.
func (b *Bundle) ParseAt(at string) (c, n int, err error) {
	if cs, ns, ok := strings.Cut(at, ":"); ok {
		c, err1 := strconv.Atoi(cs)
		n, err2 := strconv.Atoi(ns)
		if err1 != nil || err2 != nil || c < 0 || n < 0 {
			return 0, 0, fmt.Errorf("--at %q: want C:N or a step number", at)
		}
		return c, n, nil
	}
	step, err := strconv.Atoi(at)
	if err != nil || step < 0 {
		return 0, 0, fmt.Errorf("--at %q: want C:N or a step number", at)
	}
	if step >= len(b.Schedule) {
		return 0, 0, fmt.Errorf("--at %d: the schedule has %d steps", step, len(b.Schedule))
	}
	c = b.Schedule[step].Consumer
	for _, ws := range b.Schedule[:step] {
		if ws.Consumer == c {
			n++
		}
	}
	return c, n, nil
}

// At re-executes the bundle (its embedded sources, or c when not nil) up
// to just before delivery C:N and returns what `--at` shows. It fails
// when the run never reaches that delivery.
func At(ctx context.Context, b *Bundle, c *hale.Compiled, engine host.EngineKind, consumer, n int) (*replay.AtView, error) {
	prog := c
	if prog == nil {
		compiled, err := b.Compile()
		if err != nil {
			return nil, fmt.Errorf("the embedded sources do not compile with this hale: %s", firstLine(err.Error()))
		}
		prog = compiled
	}
	s, err := NewScheduler(ctx, prog.Image, Config{Engine: engine, MaxSteps: b.Limits.MaxSteps, MaxHandlerSteps: b.Limits.MaxHandlerSteps})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	steps, err := b.steps(prog.Image)
	if err != nil {
		return nil, err
	}
	stop := &atStop{img: prog.Image, c: consumer, n: n, recent: map[int][]handled{}}
	in := b.inputs()
	in.at = stop
	if _, err := s.run(ctx, b.Seed, &follow{steps: steps, strict: true, stopAtEnd: true}, in); err != nil {
		return nil, err
	}
	if stop.view == nil {
		return nil, fmt.Errorf("the bundle's run never reaches delivery %s", coord(consumer, n))
	}
	return stop.view, nil
}
