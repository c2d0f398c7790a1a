package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

// HeaderInfo is what an artifact header needs beyond the image: the
// toolchain's and the program's identity, the user's files and the env
// policy, which only the caller knows (the root package computes them and
// imports nothing of replay).
type HeaderInfo struct {
	HaleVersion string
	Created     time.Time // zero: now
	BuildDigest [32]byte
	ShapeHash   [32]byte
	EnvPolicy   string // artifact.EnvWithheld or EnvFull; "" is EnvWithheld
	// Files are the logical paths of the user's files, entry first (the
	// image's Files also name the standard library files its positions
	// point into).
	Files []string
	// MemoryLimit is the run's memory limit per consumer, in bytes
	// (host.Options.MemoryLimit; 0: not recorded).
	MemoryLimit int64
	// ProcessID is the run's process id (host.Options.ProcessID), kept
	// only when the program has nats bindings or exports.
	ProcessID uint64
}

// consumerKinds names the image's consumer kinds as the header does.
var consumerKinds = [...]string{
	image.ConsumerMain:    artifact.ConsumerMain,
	image.ConsumerPool:    artifact.ConsumerPool,
	image.ConsumerPinned:  artifact.ConsumerPinned,
	image.ConsumerAsyncIO: artifact.ConsumerAsyncIO,
	image.ConsumerIngress: artifact.ConsumerIngress,
}

// NewHeader builds the header of a recording of img: the identity and
// files from info, the consumer table (ids, kinds and names of the
// image's consumers, with the names of the instances each one runs) and
// the type table (see artifact.TypeTable).
func NewHeader(img *image.Image, info HeaderInfo) (*artifact.Header, error) {
	if img == nil {
		return nil, errors.New("recording: no program")
	}
	h := &artifact.Header{
		HaleVersion: info.HaleVersion,
		BuildDigest: info.BuildDigest,
		ShapeHash:   info.ShapeHash,
		EnvPolicy:   info.EnvPolicy,
		Files:       append([]string{}, info.Files...),
		MemoryLimit: info.MemoryLimit,
	}
	h.Bindings = bindingsOf(img)
	if h.Bindings != nil {
		h.ProcessID = info.ProcessID
	}
	if h.EnvPolicy == "" {
		h.EnvPolicy = artifact.EnvWithheld
	}
	created := info.Created
	if created.IsZero() {
		created = time.Now()
	}
	h.Created = created.UnixNano()
	for id, c := range img.Consumers {
		if int(c.Kind) >= len(consumerKinds) {
			return nil, fmt.Errorf("recording: consumer %d has kind %d", id, c.Kind)
		}
		hc := artifact.Consumer{ID: uint32(id), Kind: consumerKinds[c.Kind], Name: c.Name, Instances: []string{}}
		for _, i := range c.Instances {
			if i < 0 || i >= len(img.Instances) {
				return nil, fmt.Errorf("recording: consumer %d lists instance %d, which does not exist", id, i)
			}
			hc.Instances = append(hc.Instances, img.Instances[i].Name)
		}
		h.Consumers = append(h.Consumers, hc)
	}
	pt, err := typesOfProgram(img)
	if err == nil {
		h.Types, err = pt.encode()
	}
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	if err := h.Check(); err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	return h, nil
}

// replayHeader builds the header of a replay's own recording: as
// NewHeader, but with the env policy and the memory limit of the artifact
// being replayed, whatever info says (docs/replay.md).
func replayHeader(art *artifact.Artifact, img *image.Image, info HeaderInfo) (*artifact.Header, error) {
	info.EnvPolicy = art.Header.EnvPolicy
	info.MemoryLimit = art.Header.MemoryLimit
	info.ProcessID = art.Header.ProcessID
	return NewHeader(img, info)
}

// bindingsOf lists img's nats bindings and exports as a header does:
// never their URLs, which may hold credentials.
func bindingsOf(img *image.Image) []artifact.Binding {
	var bs []artifact.Binding
	for _, in := range img.Ingress {
		if in.NATS != nil {
			bs = append(bs, artifact.Binding{Kind: artifact.BindingIngress, Topic: img.Topics[in.Topic].Name,
				Subject: in.NATS.Subject, Queue: in.NATS.Queue, Consumer: uint32(in.Consumer)})
		}
	}
	for _, x := range img.Exports {
		bs = append(bs, artifact.Binding{Kind: artifact.BindingEgress, Topic: img.Topics[x.Topic].Name, Subject: x.NATS.Subject})
	}
	return bs
}

// The type table of a header (Header.Types) is laid out as
// artifact.TypeTable describes: the names and subscriptions, then vm/value's
// canonical type table, which this package writes and reads.

// programTypes holds the value types of one program, indexed for the
// recorder's decoder, the replayer and --at.
type programTypes struct {
	topics    []*value.Type // payload struct by topic index
	topicName []string
	subs      [][]int // subscriber instance indices by topic index
	byTopic   map[string]*value.Type
	states    []*value.Type // state struct by instance index
	instName  []string
	prims     map[string]primTypes
	primOrder []string
}

// primTypes is the signature of one primitive.
type primTypes struct {
	params []*value.Type
	result *value.Type
}

// typesOfProgram converts img's type table to value types (vm.Types).
func typesOfProgram(img *image.Image) (*programTypes, error) {
	if err := checkTypeRefs(img); err != nil {
		return nil, err
	}
	ts := vm.Types(img)
	at := func(r image.TypeRef, what string) (*value.Type, error) {
		if r < 0 || int(r) >= len(ts) {
			return nil, fmt.Errorf("%s has type %d, which is not in the type table", what, r)
		}
		return ts[r], nil
	}
	pt := &programTypes{byTopic: map[string]*value.Type{}, prims: map[string]primTypes{}}
	for _, t := range img.Topics {
		pt.subs = append(pt.subs, append([]int{}, t.Subscribers...))
		vt, err := at(t.Type, "topic "+t.Name)
		if err != nil {
			return nil, err
		}
		pt.topics = append(pt.topics, vt)
		pt.topicName = append(pt.topicName, t.Name)
		pt.byTopic[t.Name] = vt
	}
	loci := make([]*value.Type, len(img.Loci))
	for li, l := range img.Loci {
		st := &value.Type{Kind: value.KindStruct, Name: l.Name}
		for _, v := range l.State {
			vt, err := at(v.Type, "state variable "+l.Name+"."+v.Name)
			if err != nil {
				return nil, err
			}
			st.Fields = append(st.Fields, value.Field{Name: v.Name, Type: vt})
		}
		loci[li] = st
	}
	for _, in := range img.Instances {
		if in.Locus < 0 || in.Locus >= len(loci) {
			return nil, fmt.Errorf("instance %s has locus %d, which does not exist", in.Name, in.Locus)
		}
		pt.states = append(pt.states, loci[in.Locus])
		pt.instName = append(pt.instName, in.Name)
	}
	for _, p := range img.Prims {
		if _, dup := pt.prims[p.Name]; dup {
			continue
		}
		var sig primTypes
		for i, r := range p.Params {
			vt, err := at(r, "parameter "+strconv.Itoa(i)+" of "+p.Name)
			if err != nil {
				return nil, err
			}
			sig.params = append(sig.params, vt)
		}
		var err error
		if sig.result, err = at(p.Result, "the result of "+p.Name); err != nil {
			return nil, err
		}
		pt.prims[p.Name] = sig
		pt.primOrder = append(pt.primOrder, p.Name)
	}
	return pt, nil
}

// checkTypeRefs checks what vm.Types relies on: every reference within
// the table.
func checkTypeRefs(img *image.Image) error {
	in := func(r image.TypeRef) bool { return r >= 0 && int(r) < len(img.Types) }
	for i, t := range img.Types {
		ok := true
		switch t.Kind {
		case image.KindList:
			ok = in(t.Elem)
		case image.KindMap:
			ok = in(t.Key) && in(t.Elem)
		case image.KindStruct:
			for _, f := range t.Fields {
				ok = ok && in(f.Type)
			}
		case image.KindEnum:
			for _, v := range t.Variants {
				for _, f := range v.Fields {
					ok = ok && in(f)
				}
			}
		}
		if !ok {
			return fmt.Errorf("type %d: a type reference is out of range", i)
		}
	}
	return nil
}

// encode writes the header's type table.
func (pt *programTypes) encode() ([]byte, error) {
	roots := make([]*value.Type, 0, len(pt.topics)+len(pt.states)+2*len(pt.primOrder))
	roots = append(roots, pt.topics...)
	roots = append(roots, pt.states...)
	for _, name := range pt.primOrder {
		sig := pt.prims[name]
		args := &value.Type{Kind: value.KindStruct, Name: name + " arguments"}
		for i, p := range sig.params {
			args.Fields = append(args.Fields, value.Field{Name: strconv.Itoa(i), Type: p})
		}
		roots = append(roots, args, sig.result)
	}
	values, err := value.EncodeTypes(nil, roots)
	if err != nil {
		return nil, err
	}
	tt := artifact.TypeTable{Topics: pt.topicName, Subscribers: pt.subs, Instances: pt.instName, Prims: pt.primOrder, Values: values}
	return tt.Encode(), nil
}

// decodeProgramTypes reads a header's type table (see artifact.TypeTable).
func decodeProgramTypes(data []byte) (*programTypes, error) {
	tt, err := artifact.DecodeTypeTable(data)
	if err != nil {
		return nil, err
	}
	bad := func(detail string) (*programTypes, error) {
		return nil, fmt.Errorf("header type table: %s", detail)
	}
	roots, err := value.DecodeTypes(tt.Values)
	if err != nil {
		return bad(err.Error())
	}
	topics, insts, prims := tt.Topics, tt.Instances, tt.Prims
	if len(roots) != len(topics)+len(insts)+2*len(prims) {
		return bad(fmt.Sprintf("%d types for %d topics, %d instances and %d primitives", len(roots), len(topics), len(insts), len(prims)))
	}
	pt := &programTypes{byTopic: map[string]*value.Type{}, prims: map[string]primTypes{},
		topicName: topics, subs: tt.Subscribers, instName: insts, primOrder: prims}
	pt.topics, roots = roots[:len(topics)], roots[len(topics):]
	for i, name := range topics {
		pt.byTopic[name] = pt.topics[i]
	}
	pt.states, roots = roots[:len(insts)], roots[len(insts):]
	for i, name := range prims {
		args, result := roots[2*i], roots[2*i+1]
		if args.Kind != value.KindStruct {
			return bad("the arguments of " + name + " are not a struct")
		}
		sig := primTypes{result: result}
		for _, f := range args.Fields {
			sig.params = append(sig.params, f.Type)
		}
		pt.prims[name] = sig
	}
	return pt, nil
}

// NewValueDecoder returns the decoder `hale trace dump` and the diff use
// for an artifact: it decodes payloads by topic name and the arguments
// and results of the primitives the recorded program calls, with the
// header's type table. It fails when the header has no usable table.
func NewValueDecoder(h *artifact.Header) (artifact.ValueDecoder, error) {
	pt, err := decodeProgramTypes(h.Types)
	if err != nil {
		return nil, err
	}
	return pt.decode, nil
}

// programDecoder returns a ValueDecoder with img's types, for showing
// the values of a replay of img. It decodes nothing when img's types
// cannot be converted.
func programDecoder(img *image.Image) artifact.ValueDecoder {
	pt, err := typesOfProgram(img)
	if err != nil {
		return func(string, string, []byte) (any, bool) { return nil, false }
	}
	return pt.decode
}

// decode is a ValueDecoder: payloads become their JSON view, arguments a
// list of the arguments' JSON views, results the JSON view of the result.
func (pt *programTypes) decode(field, hint string, data []byte) (any, bool) {
	switch field {
	case "payload":
		t := pt.byTopic[hint]
		if t == nil {
			return nil, false
		}
		return jsonView(data, t)
	case "args":
		if hint == "print" {
			// print's argument is the text as one canonical string.
			v, ok := jsonView(data, value.StringType)
			if !ok {
				return nil, false
			}
			return []any{v}, true
		}
		sig, ok := pt.prims[hint]
		if !ok {
			return nil, false
		}
		vs, err := value.DecodeTuple(data, sig.params)
		if err != nil {
			return nil, false
		}
		out := make([]any, len(vs))
		for i, v := range vs {
			j, err := value.AppendJSON(nil, v)
			if err != nil {
				return nil, false
			}
			out[i] = json.RawMessage(j)
		}
		return out, true
	case "result":
		sig, ok := pt.prims[hint]
		if !ok || len(data) == 0 {
			return nil, false
		}
		return jsonView(data, sig.result)
	}
	return nil, false
}

// jsonView decodes canonical bytes of type t to their JSON view.
func jsonView(data []byte, t *value.Type) (any, bool) {
	j, err := value.JSONOf(data, t)
	if err != nil {
		return nil, false
	}
	return json.RawMessage(j), true
}

// stateJSON renders an instance's state tuple as a JSON object of its
// fields by name, in declaration order.
func (pt *programTypes) stateJSON(inst int, tuple []byte) (json.RawMessage, error) {
	if inst < 0 || inst >= len(pt.states) {
		return nil, fmt.Errorf("no instance %d", inst)
	}
	st := pt.states[inst]
	types := make([]*value.Type, len(st.Fields))
	for i, f := range st.Fields {
		types[i] = f.Type
	}
	vs, err := value.DecodeTuple(tuple, types)
	if err != nil {
		return nil, err
	}
	b := []byte{'{'}
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(st.Fields[i].Name)
		b = append(append(b, name...), ':')
		if b, err = value.AppendJSON(b, v); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// subscribed reports whether the header's type table says instance target
// subscribes to topic; known is false when the table cannot tell (no
// table, an older layout, or names it does not list).
func (pt *programTypes) subscribed(target, topic string) (yes, known bool) {
	if pt == nil || len(pt.subs) != len(pt.topicName) {
		return false, false
	}
	t := slices.Index(pt.topicName, topic)
	i := slices.Index(pt.instName, target)
	if t < 0 || i < 0 {
		return false, false
	}
	return slices.Contains(pt.subs[t], i), true
}

// ProgramDecoder returns the ValueDecoder of img's types (payloads by
// topic name, primitive arguments and results by primitive name), for
// tools that show a run's values in the JSON view, such as the explorer's
// bundles. It decodes nothing when img's types cannot be converted.
func ProgramDecoder(img *image.Image) artifact.ValueDecoder { return programDecoder(img) }

// StateJSON renders instance inst's state tuple (the canonical bytes an
// Engine's State returns) as the JSON object of its fields by name, as
// `hale replay --at` shows it, for tools that stop a run of img
// themselves (the explorer's bundles).
func StateJSON(img *image.Image, inst int, tuple []byte) (json.RawMessage, error) {
	pt, err := typesOfProgram(img)
	if err != nil {
		return nil, err
	}
	return pt.stateJSON(inst, tuple)
}
