package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

// compileSIR compiles src, loaded as app.hl, to its image (hale.Compile).
func compileSIR(t testing.TB, src string) *image.Image {
	t.Helper()
	img, err := lowerSrc(src)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// lowerSrc is compileSIR for a program that may not compile.
func lowerSrc(src string) (*image.Image, error) {
	fsys := fstest.MapFS{"app.hl": &fstest.MapFile{Data: []byte(src)}}
	c, err := hale.Compile(fsys, "app.hl", hale.BuildOptions{})
	if err != nil {
		return nil, err
	}
	return c.Image, nil
}

// compileAll compiles src down to an image.
func compileAll(t testing.TB, src string) *image.Image {
	t.Helper()
	return compileSIR(t, src)
}

// behaviour maps SIR function names ("Worker.on Job", "Boss.on start",
// "Ledger.init") to Go code run in their place by the fake engine.
type behaviour map[string]func(x *call) error

// fakeEngine runs behaviours instead of an interpreter. Like a real
// engine it is used from one goroutine at a time; it counts handler runs
// per instance as its "state".
type fakeEngine struct {
	prog *image.Image
	host vm.Host
	b    behaviour
	runs map[int]int64
}

func fakeEngines(prog *image.Image, b behaviour) func(vm.Host) (Engine, error) {
	return func(h vm.Host) (Engine, error) {
		return &fakeEngine{prog: prog, host: h, b: b, runs: map[int]int64{}}, nil
	}
}

func (e *fakeEngine) Init(inst int) error {
	l := e.prog.Loci[e.prog.Instances[inst].Locus]
	if f := e.b[l.Name+".init"]; f != nil {
		return f(&call{e: e, inst: inst})
	}
	return nil
}

func (e *fakeEngine) Deliver(inst, handler int, payload []byte) error {
	l := e.prog.Loci[e.prog.Instances[inst].Locus]
	fn := l.Start
	if handler != vm.HandlerStart {
		fn = l.HandlerFor(handler)
	}
	if fn < 0 {
		return fmt.Errorf("fake: %s has no handler %d", l.Name, handler)
	}
	e.runs[inst]++
	if f := e.b[e.prog.Funcs[fn].Name]; f != nil {
		return f(&call{e: e, inst: inst, topic: handler, payload: payload})
	}
	return nil
}

func (e *fakeEngine) State(inst int) ([]byte, error) {
	return value.EncodeTuple(nil, []value.Value{value.Int(e.runs[inst])})
}

func (e *fakeEngine) Close() error { return nil }

func (e *fakeEngine) Params(inst int) ([]byte, error) { return []byte{0}, nil }

func (e *fakeEngine) SetGuardParams(table [][]byte) error { return nil }

func (e *fakeEngine) Guards(topic int, payload []byte) ([]byte, error) { return nil, nil }

// call is one fake handler run.
type call struct {
	e       *fakeEngine
	inst    int
	topic   int
	payload []byte
}

func (x *call) name() string { return x.e.prog.Instances[x.inst].Name }

// field decodes field i of the payload (basic field types only).
func (x *call) field(i int) value.Value {
	ty := x.e.prog.Types[x.e.prog.Topics[x.topic].Type]
	fields := make([]*value.Type, len(ty.Fields))
	for j, f := range ty.Fields {
		fields[j] = basicType(f.Type)
	}
	// A struct's encoding is a tuple's with a tag in front.
	vs, err := value.DecodeTuple(x.payload[1:], fields)
	if err != nil || x.payload[0] != byte(value.KindStruct) {
		panic(fmt.Sprintf("fake: payload %x: %v", x.payload, err))
	}
	return vs[i]
}

func (x *call) int(i int) int64 { return x.field(i).AsInt() }

func (x *call) str(i int) string { return x.field(i).AsStr() }

func basicType(t image.TypeRef) *value.Type {
	switch t {
	case image.TInt:
		return value.IntType
	case image.TFloat:
		return value.FloatType
	case image.TBool:
		return value.BoolType
	case image.TString:
		return value.StringType
	case image.TBytes:
		return value.BytesType
	}
	panic("fake: not a basic type")
}

func (x *call) publish(topic string, fields ...value.Value) error {
	for i, t := range x.e.prog.Topics {
		if t.Name == topic {
			args := binary.AppendUvarint(nil, uint64(i))
			args = append(args, structPayload(fields...)...)
			_, err := x.e.host.Prim(vm.PrimPublish, args)
			return err
		}
	}
	panic("fake: no topic " + topic)
}

func structPayload(fields ...value.Value) []byte {
	b := binary.AppendUvarint([]byte{byte(value.KindStruct)}, uint64(len(fields)))
	for _, f := range fields {
		b, _ = value.Encode(b, f)
	}
	return b
}

func (x *call) print(s string) error {
	args, _ := value.Encode(nil, value.Str(s))
	_, err := x.e.host.Prim(vm.PrimPrint, args)
	return err
}

// prim calls a library primitive by name.
func (x *call) prim(name string, args ...value.Value) ([]byte, error) {
	p, ok := stdlib.Lookup(name)
	if !ok {
		panic("fake: no primitive " + name)
	}
	b, _ := value.EncodeTuple(nil, args)
	return x.e.host.Prim(p.ID, b)
}

// ---- running ----

// outcome is what a test run produced.
type outcome struct {
	res    Result
	err    error
	stdout string
	stderr string
}

// runFake runs prog with the fake engine.
func runFake(t testing.TB, prog *image.Image, b behaviour, opts Options) outcome {
	t.Helper()
	opts.engine = fakeEngines(prog, b)
	return runWith(t, prog, opts)
}

func runWith(t testing.TB, img *image.Image, opts Options) outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if opts.Stdout == nil {
		opts.Stdout = &stdout
	}
	if opts.Stderr == nil {
		opts.Stderr = &stderr
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = func(string) (string, bool) { return "", false }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, img, opts)
	return outcome{res: res, err: err, stdout: stdout.String(), stderr: stderr.String()}
}

// ---- a journal that logs everything ----

// logJournal records every event, per consumer and in one global order,
// and checks the ordering promises of Journal as it goes.
type logJournal struct {
	prog *image.Image

	mu        sync.Mutex
	all       []string         // every event, in the order the journal saw them
	per       map[int][]string // events per consumer
	published map[MessageID]int
	delivered map[string]bool // "target msg" already delivered
	nextN     map[int]int
	nextS     map[int]uint64
	ends      int
	verdict   string
	code      int
	problems  []string

	// deliverHook, if set, is called from Deliver (for halting).
	deliverHook func(c, n int, d *Delivery, st StateReader) error
}

func newLogJournal(prog *image.Image) *logJournal {
	return &logJournal{prog: prog, per: map[int][]string{}, published: map[MessageID]int{},
		delivered: map[string]bool{}, nextN: map[int]int{}, nextS: map[int]uint64{}}
}

func (j *logJournal) add(c int, ev string) {
	if j.ends > 0 {
		j.problems = append(j.problems, "event after End: "+ev)
	}
	j.all = append(j.all, fmt.Sprintf("%d %s", c, ev))
	j.per[c] = append(j.per[c], ev)
}

func (j *logJournal) problem(format string, args ...any) {
	j.problems = append(j.problems, fmt.Sprintf(format, args...))
}

func (j *logJournal) Invoke(c int, p stdlib.Primitive, args []byte, live func() ([]byte, error)) ([]byte, error) {
	res, err := live()
	j.mu.Lock()
	defer j.mu.Unlock()
	desc := p.Name + "(" + describeArgs(p, args) + ")"
	if err != nil {
		desc += " trap " + err.Error()
	} else if len(res) > 0 {
		desc += fmt.Sprintf(" -> %x", res)
	}
	j.add(c, "invoke "+desc)
	return res, err
}

func describeArgs(p stdlib.Primitive, args []byte) string {
	if p.Name == "print" {
		v, err := value.Decode(args, value.StringType)
		if err != nil {
			return "?"
		}
		return fmt.Sprintf("%q", v.AsStr())
	}
	return fmt.Sprintf("%x", args)
}

func (j *logJournal) Publish(c int, msg MessageID, topic int, payload []byte, _ []int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if msg.Producer != c {
		j.problem("publish %v by consumer %d", msg, c)
	}
	if msg.Seq != j.nextS[c] {
		j.problem("consumer %d published %v, want seq %d", c, msg, j.nextS[c])
	}
	j.nextS[c] = msg.Seq + 1
	j.published[msg] = topic
	j.add(c, fmt.Sprintf("publish %v %s", msg, j.prog.Topics[topic].Name))
}

// PublishAfter logs a timer's message as Publish does, then its delay.
func (j *logJournal) PublishAfter(c int, msg MessageID, topic int, payload []byte, targets []int, delayMS uint64) {
	j.Publish(c, msg, topic, payload, targets)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.add(c, fmt.Sprintf("after %v %d", msg, delayMS))
}

func (j *logJournal) Deliver(c, n int, d *Delivery, st StateReader) error {
	j.mu.Lock()
	if n != j.nextN[c] {
		j.problem("consumer %d delivery %d, want %d", c, n, j.nextN[c])
	}
	j.nextN[c] = n + 1
	target := j.prog.Instances[d.Target]
	if target.Consumer != c {
		j.problem("delivery to %s (consumer %d) on consumer %d", target.Name, target.Consumer, c)
	}
	msg := "start"
	if !d.IsStart() {
		msg = d.Message.String()
		topic, ok := j.published[d.Message]
		switch {
		case !ok:
			j.problem("delivery of %v before its publish", d.Message)
		case topic != d.Topic:
			j.problem("delivery of %v with topic %d, published with %d", d.Message, d.Topic, topic)
		}
	}
	key := target.Name + " " + msg
	if j.delivered[key] {
		j.problem("%s delivered twice", key)
	}
	j.delivered[key] = true
	j.add(c, fmt.Sprintf("deliver %d %s %s", n, target.Name, msg))
	hook := j.deliverHook
	j.mu.Unlock()
	if hook != nil {
		return hook(c, n, d, st)
	}
	return nil
}

func (j *logJournal) Trap(c, n int, t *vm.Trap, d *Delivery) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if d != nil && n != j.nextN[c]-1 {
		j.problem("trap at %d:%d, but the last delivery was %d", c, n, j.nextN[c]-1)
	}
	j.add(c, fmt.Sprintf("trap %d %s", n, t.Message))
}

func (j *logJournal) End(verdict string, code int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.ends++
	if j.ends > 1 {
		j.problem("End called %d times", j.ends)
	}
	j.verdict, j.code = verdict, code
}

// check fails the test on any ordering problem the journal saw.
func (j *logJournal) check(t testing.TB) {
	t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ends != 1 {
		t.Errorf("End called %d times", j.ends)
	}
	for _, p := range j.problems {
		t.Error("journal: " + p)
	}
}

// events returns consumer c's events.
func (j *logJournal) events(c int) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.per[c]...)
}

// kinds returns consumer c's events of the given kind ("deliver", …).
func (j *logJournal) kinds(c int, kind string) []string {
	var out []string
	for _, ev := range j.events(c) {
		if strings.HasPrefix(ev, kind+" ") {
			out = append(out, ev)
		}
	}
	return out
}

func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	sort.Strings(lines)
	return lines
}
