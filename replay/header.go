package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/sir"
	"github.com/hale-lang/hale/vm/value"
)

// HeaderInfo is what an artifact header needs beyond the program: the
// toolchain's identity and the env policy, which only the caller knows
// (package hale imports this one, so the version and digests are passed
// in).
type HeaderInfo struct {
	HaleVersion string
	Created     time.Time // zero: now
	BuildDigest [32]byte
	ShapeHash   [32]byte
	EnvPolicy   string // EnvWithheld or EnvFull; "" is EnvWithheld
}

// NewHeader builds the header of a recording of prog: the identity from
// info, the logical paths of the user's files, the consumer table (ids,
// kinds and names of sir.Program.Consumers, with the names of the
// instances each one runs) and the type table of ProgramTypes.
func NewHeader(prog *sir.Program, info HeaderInfo) (*artifact.Header, error) {
	if prog == nil {
		return nil, errors.New("recording: no program")
	}
	h := &artifact.Header{
		HaleVersion: info.HaleVersion,
		BuildDigest: info.BuildDigest,
		ShapeHash:   info.ShapeHash,
		EnvPolicy:   info.EnvPolicy,
		Files:       append([]string(nil), prog.Files...),
	}
	if h.EnvPolicy == "" {
		h.EnvPolicy = artifact.EnvWithheld
	}
	created := info.Created
	if created.IsZero() {
		created = time.Now()
	}
	h.Created = created.UnixNano()
	for id, c := range prog.Consumers {
		hc := artifact.Consumer{ID: uint32(id), Kind: c.Kind.String(), Name: c.Name, Instances: []string{}}
		for _, i := range c.Instances {
			if i < 0 || i >= len(prog.Instances) {
				return nil, fmt.Errorf("recording: consumer %d lists instance %d, which does not exist", id, i)
			}
			hc.Instances = append(hc.Instances, prog.Instances[i].Name)
		}
		h.Consumers = append(h.Consumers, hc)
	}
	types, err := ProgramTypes(prog)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	h.Types = types
	if err := h.Check(); err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	return h, nil
}

// ReplayHeader builds the header of a replay's own recording: as
// NewHeader, but with the env policy of the artifact being replayed,
// whatever info says (docs/replay.md).
func ReplayHeader(art *artifact.Artifact, prog *sir.Program, info HeaderInfo) (*artifact.Header, error) {
	info.EnvPolicy = art.Header.EnvPolicy
	return NewHeader(prog, info)
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

// ProgramTypes returns the type table of a header for prog (see the
// layout above).
func ProgramTypes(prog *sir.Program) ([]byte, error) {
	pt, err := typesOfProgram(prog)
	if err != nil {
		return nil, err
	}
	return pt.encode()
}

// typesOfProgram converts prog's type table to value types.
func typesOfProgram(prog *sir.Program) (*programTypes, error) {
	ts, err := valueTypesOf(prog)
	if err != nil {
		return nil, err
	}
	at := func(r sir.TypeRef, what string) (*value.Type, error) {
		if r < 0 || int(r) >= len(ts) {
			return nil, fmt.Errorf("%s has type %d, which is not in the type table", what, r)
		}
		return ts[r], nil
	}
	pt := &programTypes{byTopic: map[string]*value.Type{}, prims: map[string]primTypes{}}
	for _, t := range prog.Topics {
		pt.subs = append(pt.subs, append([]int{}, t.Subscribers...))
		vt, err := at(t.Type, "topic "+t.Name)
		if err != nil {
			return nil, err
		}
		pt.topics = append(pt.topics, vt)
		pt.topicName = append(pt.topicName, t.Name)
		pt.byTopic[t.Name] = vt
	}
	loci := make([]*value.Type, len(prog.Loci))
	for li, l := range prog.Loci {
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
	for _, in := range prog.Instances {
		if in.Locus < 0 || in.Locus >= len(loci) {
			return nil, fmt.Errorf("instance %s has locus %d, which does not exist", in.Name, in.Locus)
		}
		pt.states = append(pt.states, loci[in.Locus])
		pt.instName = append(pt.instName, in.Name)
	}
	for _, p := range prog.Prims {
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
		if sig.result, err = at(p.Result, "the result of "+p.Name); err != nil {
			return nil, err
		}
		pt.prims[p.Name] = sig
		pt.primOrder = append(pt.primOrder, p.Name)
	}
	return pt, nil
}

// valueTypesOf builds the value type of every entry of prog's type table,
// indexed by sir.TypeRef (as vm.Types does for an image). Struct and enum
// descriptors are built once, so recursive types point at themselves.
func valueTypesOf(prog *sir.Program) ([]*value.Type, error) {
	basic := [...]*value.Type{value.VoidType, value.IntType, value.FloatType, value.BoolType, value.StringType, value.BytesType}
	ts := make([]*value.Type, len(prog.Types))
	for i, t := range prog.Types {
		switch {
		case i < len(basic):
			ts[i] = basic[i]
		case t == nil:
			return nil, fmt.Errorf("type %d is missing", i)
		default:
			ts[i] = &value.Type{Kind: value.Kind(t.Kind), Name: t.Name}
		}
	}
	ref := func(r sir.TypeRef) (*value.Type, error) {
		if r < 0 || int(r) >= len(ts) {
			return nil, fmt.Errorf("type reference %d is out of range", r)
		}
		return ts[r], nil
	}
	fill := func(st *sir.Type, vt *value.Type) error {
		var err error
		switch st.Kind {
		case sir.KindList:
			vt.Elem, err = ref(st.Elem)
		case sir.KindMap:
			if vt.Key, err = ref(st.Key); err == nil {
				vt.Elem, err = ref(st.Elem)
			}
		case sir.KindStruct:
			vt.Fields = make([]value.Field, len(st.Fields))
			for j, f := range st.Fields {
				vt.Fields[j].Name = f.Name
				if vt.Fields[j].Type, err = ref(f.Type); err != nil {
					return err
				}
			}
		case sir.KindEnum:
			vt.Variants = make([]value.Variant, len(st.Variants))
			for j, v := range st.Variants {
				vt.Variants[j].Name = v.Name
				for _, f := range v.Fields {
					ft, err := ref(f)
					if err != nil {
						return err
					}
					vt.Variants[j].Fields = append(vt.Variants[j].Fields, ft)
				}
			}
		}
		return err
	}
	for i := len(basic); i < len(ts); i++ {
		if err := fill(prog.Types[i], ts[i]); err != nil {
			return nil, fmt.Errorf("type %d: %w", i, err)
		}
	}
	return ts, nil
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

// ProgramDecoder returns a ValueDecoder with prog's types, for showing the
// values of a replay of prog. It decodes nothing when prog's types cannot
// be converted.
func ProgramDecoder(prog *sir.Program) artifact.ValueDecoder {
	pt, err := typesOfProgram(prog)
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
