package explore

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing/fstest"

	"github.com/zeebo/blake3"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/vm/host"
	"github.com/hale-lang/hale/vm/value"
)

// BundleFormat is the format name of a `.replay` bundle (docs/bundle.md).
const BundleFormat = "hale.replay/1"

// MaxBundleSize bounds a bundle that is read.
const MaxBundleSize = 256 << 20

// Bundle is a `.replay` file: one failing schedule with everything needed
// to run it again (docs/bundle.md).
type Bundle struct {
	Format      string       `json:"format"`
	HaleVersion string       `json:"hale_version"`
	BuildDigest string       `json:"build_digest"`
	ShapeHash   string       `json:"shape_hash"`
	Entry       string       `json:"entry"`
	Sources     []Source     `json:"sources"`
	Seed        uint64       `json:"seed"`
	Strategy    string       `json:"strategy"`
	Limits      Limits       `json:"limits"`
	Stdin       []string     `json:"stdin"`
	Schedule    []WireStep   `json:"schedule"`
	Inputs      []WireInput  `json:"inputs"`
	Outputs     []WireOutput `json:"outputs"`
	Failure     WireFailure  `json:"failure"`
}

// Source is one embedded source file.
type Source struct {
	Path   string `json:"path"`
	BLAKE3 string `json:"blake3"`
	Text   string `json:"text"`
}

// Limits are the run limits the failure was found with.
type Limits struct {
	MaxSteps        int   `json:"max_steps"`
	MaxHandlerSteps int64 `json:"max_handler_steps"`
}

// WireStep is one step of a bundle's schedule.
type WireStep struct {
	Step     int    `json:"step"`
	Consumer int    `json:"consumer"`
	Target   string `json:"target"`
	Message  string `json:"message"`
}

// WireInput is one answered primitive call: args and result in the JSON
// view (null where the program's types do not tell), and their canonical
// bytes as hex, which is what a replay serves. A call that trapped has
// Result {"trap": {"kind": …, "message": …}} and no result_hex.
type WireInput struct {
	Consumer  int             `json:"consumer"`
	Primitive string          `json:"primitive"`
	Args      json.RawMessage `json:"args"`
	Result    json.RawMessage `json:"result"`
	ArgsHex   string          `json:"args_hex"`
	ResultHex *string         `json:"result_hex,omitempty"`
}

// WireOutput is one output: printed text (kind stdout or stderr), an exit
// (kind exit, with its code) or a virtualised call (kind call: a file
// write or an HTTP request).
type WireOutput struct {
	Consumer int       `json:"consumer"`
	Kind     string    `json:"kind"`
	Text     *string   `json:"text,omitempty"`
	Code     *int64    `json:"code,omitempty"`
	Call     *WireCall `json:"call,omitempty"`
}

// WireCall is a virtualised output call.
type WireCall struct {
	Primitive string          `json:"primitive"`
	Args      json.RawMessage `json:"args"`
}

// WireFailure is the failure a bundle reproduces.
type WireFailure struct {
	Kind       string   `json:"kind"`
	Message    string   `json:"message"`
	Position   string   `json:"position"`
	Coordinate string   `json:"coordinate"`
	Stack      []string `json:"stack"`
}

// Signature is the failure's signature: kind, message and position.
func (f WireFailure) Signature() string { return f.Kind + "\n" + f.Message + "\n" + f.Position }

// BundleName is the file name of the bundle of a failure with signature
// sig: the first 12 hex digits of its BLAKE3, then ".replay".
func BundleName(sig string) string {
	sum := blake3.Sum256([]byte(sig))
	return hex.EncodeToString(sum[:6]) + ".replay"
}

// NewBundle makes the bundle of a failing run of the compiled program c.
func (s *Scheduler) NewBundle(c *hale.Compiled, strategy string, o *Outcome) (*Bundle, error) {
	if o.Failure == nil {
		return nil, errors.New("bundle: the run did not fail")
	}
	digest, shape := c.BuildDigest(), c.ShapeHash
	b := &Bundle{
		Format:      BundleFormat,
		HaleVersion: hale.Version,
		BuildDigest: hex.EncodeToString(digest[:]),
		ShapeHash:   hex.EncodeToString(shape[:]),
		Entry:       c.Files[0],
		Seed:        o.Seed,
		Strategy:    strategy,
		Limits:      Limits{MaxSteps: s.cfg.MaxSteps, MaxHandlerSteps: s.cfg.MaxHandlerSteps},
		Stdin:       append([]string{}, o.stdin...),
	}
	for _, p := range c.Files {
		text := c.Program.Source(p)
		sum := blake3.Sum256(text)
		b.Sources = append(b.Sources, Source{Path: p, BLAKE3: hex.EncodeToString(sum[:]), Text: string(text)})
	}
	b.Schedule = wireSchedule(s.img, o.Steps)
	b.Inputs, b.Outputs = wireCalls(s.img, o.inputs, o.outputs)
	b.Failure = wireFailure(o.Failure)
	return b, nil
}

func wireFailure(f *Failure) WireFailure {
	stack := f.Stack
	if stack == nil {
		stack = []string{}
	}
	return WireFailure{Kind: f.Kind, Message: f.Message, Position: f.Position, Coordinate: f.Coordinate, Stack: stack}
}

func wireSchedule(img *image.Image, steps []Step) []WireStep {
	out := make([]WireStep, len(steps))
	for i, st := range steps {
		out[i] = WireStep{Step: i, Consumer: st.Consumer, Target: img.Instances[st.Target].Name, Message: st.message()}
	}
	return out
}

func wireCalls(img *image.Image, inputs, outputs []call) ([]WireInput, []WireOutput) {
	decode := func(string, string, []byte) (any, bool) { return nil, false }
	if img != nil {
		decode = replay.ProgramDecoder(img)
	}
	view := func(field, prim string, data []byte) json.RawMessage {
		if v, ok := decode(field, prim, data); ok {
			if j, err := json.Marshal(v); err == nil {
				return j
			}
		}
		return json.RawMessage("null")
	}
	ins := make([]WireInput, len(inputs))
	for i, c := range inputs {
		in := WireInput{Consumer: c.consumer, Primitive: c.prim, Args: view("args", c.prim, c.args), ArgsHex: hex.EncodeToString(c.args)}
		if c.trap != nil {
			j, _ := json.Marshal(map[string]any{"trap": map[string]string{"kind": c.trap.Kind, "message": c.trap.Message}})
			in.Result = j
		} else {
			h := hex.EncodeToString(c.result)
			in.Result, in.ResultHex = view("result", c.prim, c.result), &h
		}
		ins[i] = in
	}
	outs := make([]WireOutput, len(outputs))
	for i, c := range outputs {
		o := WireOutput{Consumer: c.consumer}
		switch c.prim {
		case "print", "std::io::println", "std::io::eprintln":
			o.Kind = "stdout"
			if c.prim == "std::io::eprintln" {
				o.Kind = "stderr"
			}
			var text string
			if c.prim == "print" {
				if v, err := value.Decode(c.args, value.StringType); err == nil {
					text = v.AsStr()
				}
			} else if vs, err := value.DecodeTuple(c.args, []*value.Type{value.StringType}); err == nil {
				text = vs[0].AsStr()
			}
			o.Text = &text
		case "std::process::exit":
			o.Kind = "exit"
			if vs, err := value.DecodeTuple(c.args, []*value.Type{value.IntType, value.StringType}); err == nil {
				code := vs[0].AsInt()
				o.Code = &code
			}
		default:
			o.Kind = "call"
			o.Call = &WireCall{Primitive: c.prim, Args: view("args", c.prim, c.args)}
		}
		outs[i] = o
	}
	return ins, outs
}

// Encode writes the bundle as indented JSON, with one line per step of
// the schedule, so that two bundles diff well.
func (b *Bundle) Encode(w io.Writer) error {
	c := *b
	c.Schedule = nil
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&c); err != nil {
		return err
	}
	var steps strings.Builder
	steps.WriteString("[")
	for i, st := range b.Schedule {
		if i > 0 {
			steps.WriteString(",")
		}
		target, _ := json.Marshal(st.Target)
		msg, _ := json.Marshal(st.Message)
		fmt.Fprintf(&steps, "\n    {\"step\": %d, \"consumer\": %d, \"target\": %s, \"message\": %s}", st.Step, st.Consumer, target, msg)
	}
	if len(b.Schedule) > 0 {
		steps.WriteString("\n  ")
	}
	steps.WriteString("]")
	out := bytes.Replace(buf.Bytes(), []byte(`"schedule": null`), []byte("\"schedule\": "+steps.String()), 1)
	_, err := w.Write(out)
	return err
}

// ErrRefused wraps every reason a bundle is refused.
var ErrRefused = errors.New("refused")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// DecodeBundle reads a bundle strictly: one JSON object with exactly the
// keys of docs/bundle.md, the known format, consistent sources and a
// well-formed schedule, transcript and failure. Anything else is refused
// with the reason (an error wrapping ErrRefused).
func DecodeBundle(data []byte) (*Bundle, error) {
	if len(data) > MaxBundleSize {
		return nil, refuse("the bundle is larger than %d bytes", MaxBundleSize)
	}
	// The format first, so that a foreign file is named as such.
	var head struct {
		Format *string `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, refuse("not a bundle: %v", err)
	}
	if head.Format == nil {
		return nil, refuse("not a bundle: no \"format\" key")
	}
	if *head.Format != BundleFormat {
		return nil, refuse("unknown bundle format %q (this hale reads %q)", *head.Format, BundleFormat)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b Bundle
	if err := dec.Decode(&b); err != nil {
		return nil, refuse("damaged bundle: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, refuse("damaged bundle: data after the bundle's object")
	}
	if err := b.check(data); err != nil {
		return nil, err
	}
	return &b, nil
}

// check validates what the JSON decoder cannot.
func (b *Bundle) check(data []byte) error {
	// Every key must be present (a missing one is not a zero value).
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return refuse("damaged bundle: %v", err)
	}
	for _, k := range []string{"format", "hale_version", "build_digest", "shape_hash", "entry", "sources", "seed", "strategy", "limits", "stdin", "schedule", "inputs", "outputs", "failure"} {
		if v, ok := keys[k]; !ok || string(v) == "null" {
			return refuse("damaged bundle: no %q", k)
		}
	}
	for _, h := range []struct{ name, v string }{{"build_digest", b.BuildDigest}, {"shape_hash", b.ShapeHash}} {
		if raw, err := hex.DecodeString(h.v); err != nil || len(raw) != 32 {
			return refuse("damaged bundle: %s is not 64 hex digits", h.name)
		}
	}
	if len(b.Sources) == 0 {
		return refuse("damaged bundle: no sources")
	}
	entry := false
	seen := map[string]bool{}
	for i, s := range b.Sources {
		if s.Path == "" || seen[s.Path] {
			return refuse("damaged bundle: source %d has an empty or repeated path", i)
		}
		seen[s.Path] = true
		sum := blake3.Sum256([]byte(s.Text))
		if hex.EncodeToString(sum[:]) != s.BLAKE3 {
			return refuse("damaged bundle: source %s does not match its blake3", s.Path)
		}
		entry = entry || s.Path == b.Entry
	}
	if !entry {
		return refuse("damaged bundle: the entry %q is not among the sources", b.Entry)
	}
	if b.Limits.MaxSteps <= 0 || b.Limits.MaxHandlerSteps <= 0 {
		return refuse("damaged bundle: limits must be positive")
	}
	for i, st := range b.Schedule {
		if st.Step != i {
			return refuse("damaged bundle: schedule step %d is numbered %d", i, st.Step)
		}
		if st.Consumer < 0 || st.Target == "" {
			return refuse("damaged bundle: schedule step %d has no consumer or target", i)
		}
		if _, _, err := parseMessage(st.Message); err != nil {
			return refuse("damaged bundle: schedule step %d: %v", i, err)
		}
	}
	for i, in := range b.Inputs {
		if in.Consumer < 0 || in.Primitive == "" {
			return refuse("damaged bundle: input %d has no consumer or primitive", i)
		}
		if _, err := hex.DecodeString(in.ArgsHex); err != nil {
			return refuse("damaged bundle: input %d: args_hex: %v", i, err)
		}
		if in.ResultHex != nil {
			if _, err := hex.DecodeString(*in.ResultHex); err != nil {
				return refuse("damaged bundle: input %d: result_hex: %v", i, err)
			}
		} else if _, err := inputTrap(in.Result); err != nil {
			return refuse("damaged bundle: input %d: %v", i, err)
		}
	}
	for i, o := range b.Outputs {
		ok := o.Consumer >= 0
		switch o.Kind {
		case "stdout", "stderr":
			ok = ok && o.Text != nil
		case "exit":
			ok = ok && o.Code != nil
		case "call":
			ok = ok && o.Call != nil && o.Call.Primitive != ""
		default:
			ok = false
		}
		if !ok {
			return refuse("damaged bundle: output %d is not a stdout, stderr, exit or call output", i)
		}
	}
	if b.Failure.Kind == "" {
		return refuse("damaged bundle: the failure has no kind")
	}
	if b.Failure.Stack == nil {
		return refuse("damaged bundle: the failure has no stack")
	}
	return nil
}

// parseMessage reads a step's message: "start" or "P:S".
func parseMessage(m string) (host.MessageID, bool, error) {
	if m == "start" {
		return host.MessageID{}, true, nil
	}
	p, s, ok := strings.Cut(m, ":")
	pn, err1 := strconv.Atoi(p)
	sn, err2 := strconv.ParseUint(s, 10, 64)
	if !ok || err1 != nil || err2 != nil || pn < 0 || strconv.Itoa(pn) != p || strconv.FormatUint(sn, 10) != s {
		return host.MessageID{}, false, fmt.Errorf("message %q is neither start nor P:S", m)
	}
	return host.MessageID{Producer: pn, Seq: sn}, false, nil
}

// inputTrap reads a trapped input's result {"trap": {"kind", "message"}}.
func inputTrap(raw json.RawMessage) (*struct{ Kind, Message string }, error) {
	var t struct {
		Trap *struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"trap"`
	}
	if err := json.Unmarshal(raw, &t); err != nil || t.Trap == nil || t.Trap.Kind == "" {
		return nil, errors.New("a result without result_hex must be {\"trap\": {\"kind\": …, \"message\": …}}")
	}
	return &struct{ Kind, Message string }{t.Trap.Kind, t.Trap.Message}, nil
}

// Compile compiles the bundle's embedded sources.
func (b *Bundle) Compile() (*hale.Compiled, error) {
	fsys := fstest.MapFS{}
	for _, s := range b.Sources {
		fsys[s.Path] = &fstest.MapFile{Data: []byte(s.Text)}
	}
	return hale.Compile(fsys, b.Entry, hale.BuildOptions{})
}

// steps resolves the schedule against img's instance names.
func (b *Bundle) steps(img *image.Image) ([]*Step, error) {
	byName := map[string]int{}
	for i, in := range img.Instances {
		byName[in.Name] = i
	}
	out := make([]*Step, len(b.Schedule))
	for i, ws := range b.Schedule {
		t, ok := byName[ws.Target]
		if !ok {
			return nil, fmt.Errorf("step %d names instance %q, which the program does not have", i, ws.Target)
		}
		msg, start, _ := parseMessage(ws.Message)
		out[i] = &Step{Consumer: ws.Consumer, Target: t, Start: start, Message: msg}
	}
	return out, nil
}

// inputs is the bundle's transcript and stdin, as a run serves them.
func (b *Bundle) inputs() *replayInputs {
	in := &replayInputs{stdin: b.Stdin, transcript: map[string][]call{}}
	for _, wi := range b.Inputs {
		args, _ := hex.DecodeString(wi.ArgsHex)
		c := call{consumer: wi.Consumer, prim: wi.Primitive, args: args}
		if wi.ResultHex != nil {
			c.result, _ = hex.DecodeString(*wi.ResultHex)
		} else if t, err := inputTrap(wi.Result); err == nil {
			c.trap = trapError(t.Kind, t.Message)
		}
		k := callKey(c.prim, c.args)
		in.transcript[k] = append(in.transcript[k], c)
	}
	return in
}

// Verification is the result of re-executing a bundle.
type Verification struct {
	Reproduced bool
	Drift      string // why it did not reproduce
	Note       string // a toolchain difference that did not matter
	Outcome    *Outcome
}

// Verify re-executes the bundle's embedded sources under its schedule and
// inputs on the given engine and checks that the same failure happens at
// the same coordinate with the same outputs.
func Verify(ctx context.Context, b *Bundle, engine host.EngineKind) (*Verification, error) {
	c, err := b.Compile()
	if err != nil {
		return &Verification{Drift: "the embedded sources do not compile with this hale: " + firstLine(err.Error())}, nil
	}
	return verifyWith(ctx, b, c, engine, true)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func verifyWith(ctx context.Context, b *Bundle, c *hale.Compiled, engine host.EngineKind, embedded bool) (*Verification, error) {
	v := &Verification{}
	digest := c.BuildDigest()
	// With other sources the digest differs anyway: only the embedded
	// sources' digest says whether the toolchain changed.
	if embedded && hex.EncodeToString(digest[:]) != b.BuildDigest {
		v.Note = fmt.Sprintf("note: the bundle was made by a different toolchain (hale %s, build digest %.12s…; now %.12s…)", b.HaleVersion, b.BuildDigest, hex.EncodeToString(digest[:]))
	}
	if shape := hex.EncodeToString(c.ShapeHash[:]); embedded && shape != b.ShapeHash {
		v.Drift = fmt.Sprintf("the program's shape differs from the bundle's (shape hash %.12s…, bundle %.12s…)", shape, b.ShapeHash)
		return v, nil
	}
	s, err := NewScheduler(ctx, c.Image, Config{Engine: engine, MaxSteps: b.Limits.MaxSteps, MaxHandlerSteps: b.Limits.MaxHandlerSteps})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	steps, err := b.steps(c.Image)
	if err != nil {
		v.Drift = err.Error()
		return v, nil
	}
	f := &follow{steps: steps, strict: true, stopAtEnd: true}
	o, err := s.run(ctx, b.Seed, f, b.inputs())
	if err != nil {
		return nil, err
	}
	v.Outcome = o
	want := b.Failure
	switch {
	case f.drift != "":
		v.Drift = f.drift
	case o.Failure == nil:
		v.Drift = fmt.Sprintf("no failure after %d of %d steps (expected %s)", len(o.Steps), len(steps), describe(want))
	case o.Failure.Signature() != want.Signature():
		v.Drift = fmt.Sprintf("a different failure: %s (expected %s)", describe(wireFailure(o.Failure)), describe(want))
	case o.Failure.Coordinate != want.Coordinate:
		v.Drift = fmt.Sprintf("the failure happened at %s, the bundle's at %s", o.Failure.Coordinate, want.Coordinate)
	case len(o.Steps) != len(steps):
		v.Drift = fmt.Sprintf("the failure happened after %d steps, the bundle's after %d", len(o.Steps), len(steps))
	default:
		_, outs := wireCalls(c.Image, nil, o.outputs)
		if d := diffOutputs(outs, b.Outputs); d != "" {
			v.Drift = d
		} else {
			v.Reproduced = true
		}
	}
	return v, nil
}

func describe(f WireFailure) string {
	s := f.Kind + " " + strconv.Quote(f.Message)
	if f.Position != "" {
		s += " at " + f.Position
	}
	return s
}

// diffOutputs names the first difference between two output lists.
func diffOutputs(got, want []WireOutput) string {
	for i := range min(len(got), len(want)) {
		g, _ := json.Marshal(got[i])
		w, _ := json.Marshal(want[i])
		if !bytes.Equal(g, w) {
			return fmt.Sprintf("output %d differs: %s, the bundle has %s", i, g, w)
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d outputs, the bundle has %d", len(got), len(want))
	}
	return ""
}

// VerifyProgram is Verify with the compiled program c instead of the
// embedded sources (hale replay x.replay app.hl).
func VerifyProgram(ctx context.Context, b *Bundle, c *hale.Compiled, engine host.EngineKind) (*Verification, error) {
	return verifyWith(ctx, b, c, engine, false)
}

// ChangedSources lists the paths whose text in c differs from the
// bundle's, and those only one of them has.
func (b *Bundle) ChangedSources(c *hale.Compiled) []string {
	var out []string
	mine := map[string]string{}
	for _, s := range b.Sources {
		mine[s.Path] = s.Text
	}
	theirs := map[string]bool{}
	for _, p := range c.Files {
		theirs[p] = true
		if t, ok := mine[p]; !ok || t != string(c.Program.Source(p)) {
			out = append(out, p)
		}
	}
	for _, s := range b.Sources {
		if !theirs[s.Path] {
			out = append(out, s.Path)
		}
	}
	return out
}

// Printed returns what the re-executed run printed, in order: outputs of
// kind stdout or stderr.
func (v *Verification) Printed() []WireOutput {
	_, outs := wireCalls(nil, nil, v.Outcome.outputs)
	var t []WireOutput
	for _, o := range outs {
		if o.Text != nil {
			t = append(t, o)
		}
	}
	return t
}
