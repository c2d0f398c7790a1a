package sir

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/zeebo/blake3"

	"github.com/hale-lang/hale/lang/check"
)

// The shape graph is the program's structural identity (docs/replay.md): what
// runs where, who talks to whom, and what may touch the world. Replay
// admission compares its hash, so two builds of one program agree on it and
// any structural change alters it.
//
// Normalisation. The graph holds names and types written as Hale writes
// them, never positions or indices, and every list whose order carries no
// meaning is sorted by name. Formatting, comments and the order of
// declarations therefore leave it unchanged. Orders that carry meaning are
// kept: parameters and fields (they are signatures and payload layouts),
// enum variants, and the consumer table (spawn and bind order decide
// consumer ids, start-up order and the delivery order of one publish).
//
// Contents: locus types (parameters, state variables with their types,
// which is state ownership, handlers, private fns); the struct and enum
// types; topics with payload fields; instances with locus and placement;
// the consumer table; stdin bindings; subscriptions (instance <- topic);
// publishes (handler -> topic, transitively through the calls it makes);
// the call graph (caller -> fn or primitive, by qualified name); and the
// effect set of every function.

// Shape is the normalised structural graph of a program.
type Shape struct {
	Loci          []ShapeLocus
	Types         []ShapeType // structs and enums (not topic payloads), by name
	Topics        []ShapeTopic
	Instances     []ShapeInstance
	Placement     []ShapeConsumer // the consumer table, in id order
	Ingress       []string        // topics bound to stdin, in binding order
	NATS          []ShapeNATS     // nats bindings then exports, in source order
	Subscriptions []Edge          // From instance, To topic
	Publishes     []Edge          // From handler, To topic
	Calls         []Edge          // From fn or handler, To fn or primitive
	Effects       []ShapeEffects

	// instPublishes are instance -> topic edges derived from Publishes,
	// for WriteDot (not hashed: they follow from the rest).
	instPublishes []Edge
	// subKinds says which subscriptions are "guarded", "shared" or
	// "guarded, shared", for the text and DOT forms (not hashed: the
	// loci's handlers hold it).
	subKinds map[Edge]string
	hash     string
}

// ShapeNATS is a nats binding ("bind") or export ("export"). The URL is
// shown (its password hidden) but not hashed: where the broker runs is
// not the program's structure.
type ShapeNATS struct {
	Kind    string `json:"kind"` // "bind" or "export"
	Topic   string `json:"topic"`
	Subject string `json:"subject"`
	Queue   string `json:"queue,omitempty"`
	URL     string `json:"url"` // the literal (redacted) or "env NAME"
}

// ShapeLocus is a locus type.
type ShapeLocus struct {
	Name     string
	Params   []ShapeField // in order
	State    []ShapeField // by name
	Handlers []string     // "start" and topic names, sorted
	Fns      []string     // private fn names, sorted
}

// ShapeField is a name with its type as Hale writes it.
type ShapeField struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// ShapeType is a struct or enum type.
type ShapeType struct {
	Name     string
	Kind     string // "struct" or "enum"
	Fields   []ShapeField
	Variants []ShapeVariant
}

// ShapeVariant is an enum variant with its payload types.
type ShapeVariant struct {
	Name   string   `json:"name"`
	Fields []string `json:"fields"`
}

// ShapeTopic is a topic and its payload fields.
type ShapeTopic struct {
	Name   string
	Fields []ShapeField
}

// ShapeInstance is a spawned instance.
type ShapeInstance struct {
	Name      string
	Locus     string
	Placement string // "main", "pinned", "async_io", `pool("name")`
}

// ShapeConsumer is one row of the consumer table.
type ShapeConsumer struct {
	ID        int
	Kind      string
	Name      string
	Instances []string // in main order
}

// Edge is a directed edge between two named nodes.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// ShapeEffects is the effect set of one function.
type ShapeEffects struct {
	Name    string
	Kind    string // FuncKind.String()
	Effects []string
}

// BuildShape computes the shape graph of a lowered program.
func BuildShape(p *Program) *Shape {
	s := &Shape{}
	tn := p.TypeName
	fields := func(fs []Field) []ShapeField {
		out := make([]ShapeField, len(fs))
		for i, f := range fs {
			out[i] = ShapeField{f.Name, tn(f.Type)}
		}
		return out
	}
	funcName := func(i int) string {
		if i >= 0 && i < len(p.Funcs) {
			return p.Funcs[i].Name
		}
		return "?"
	}
	topicName := func(i int) string {
		if i >= 0 && i < len(p.Topics) {
			return p.Topics[i].Name
		}
		return "?"
	}

	for _, l := range p.Loci {
		sl := ShapeLocus{Name: l.Name}
		for _, v := range l.Params {
			sl.Params = append(sl.Params, ShapeField{v.Name, tn(v.Type)})
		}
		for _, v := range l.State {
			sl.State = append(sl.State, ShapeField{v.Name, tn(v.Type)})
		}
		sort.Slice(sl.State, func(i, j int) bool { return sl.State[i].Name < sl.State[j].Name })
		if l.Start >= 0 {
			sl.Handlers = append(sl.Handlers, "start")
		}
		for _, h := range l.Handlers {
			sl.Handlers = append(sl.Handlers, handlerShape(p, h, topicName(h.Topic)))
		}
		sort.Strings(sl.Handlers)
		for _, f := range l.Fns {
			sl.Fns = append(sl.Fns, strings.TrimPrefix(funcName(f), l.Name+"."))
		}
		sort.Strings(sl.Fns)
		s.Loci = append(s.Loci, sl)
	}
	sort.Slice(s.Loci, func(i, j int) bool { return s.Loci[i].Name < s.Loci[j].Name })

	for _, t := range p.Types {
		switch {
		case t.Kind == KindStruct && !t.Topic:
			s.Types = append(s.Types, ShapeType{Name: t.Name, Kind: "struct", Fields: fields(t.Fields)})
		case t.Kind == KindEnum:
			st := ShapeType{Name: t.Name, Kind: "enum"}
			for _, v := range t.Variants {
				sv := ShapeVariant{Name: v.Name, Fields: []string{}}
				for _, f := range v.Fields {
					sv.Fields = append(sv.Fields, tn(f))
				}
				st.Variants = append(st.Variants, sv)
			}
			s.Types = append(s.Types, st)
		}
	}
	sort.Slice(s.Types, func(i, j int) bool { return s.Types[i].Name < s.Types[j].Name })

	for _, t := range p.Topics {
		st := ShapeTopic{Name: t.Name}
		if t.Type >= 0 && int(t.Type) < len(p.Types) {
			st.Fields = fields(p.Types[t.Type].Fields)
		}
		s.Topics = append(s.Topics, st)
	}
	sort.Slice(s.Topics, func(i, j int) bool { return s.Topics[i].Name < s.Topics[j].Name })

	instName := func(i int) string {
		if i >= 0 && i < len(p.Instances) {
			return p.Instances[i].Name
		}
		return "?"
	}
	for _, in := range p.Instances {
		locus := "?"
		if in.Locus >= 0 && in.Locus < len(p.Loci) {
			locus = p.Loci[in.Locus].Name
		}
		s.Instances = append(s.Instances, ShapeInstance{Name: in.Name, Locus: locus, Placement: in.Placement.String()})
	}
	sort.Slice(s.Instances, func(i, j int) bool { return s.Instances[i].Name < s.Instances[j].Name })

	for id, c := range p.Consumers {
		sc := ShapeConsumer{ID: id, Kind: c.Kind.String(), Name: c.Name, Instances: []string{}}
		for _, i := range c.Instances {
			sc.Instances = append(sc.Instances, instName(i))
		}
		s.Placement = append(s.Placement, sc)
	}
	for _, g := range p.Ingress {
		if g.NATS != nil {
			s.NATS = append(s.NATS, shapeNATS("bind", topicName(g.Topic), g.NATS))
			continue
		}
		s.Ingress = append(s.Ingress, topicName(g.Topic))
	}
	for _, x := range p.Exports {
		s.NATS = append(s.NATS, shapeNATS("export", topicName(x.Topic), &x.NATS))
	}

	s.subKinds = map[Edge]string{}
	for ti, t := range p.Topics {
		for _, i := range t.Subscribers {
			e := Edge{instName(i), t.Name}
			s.Subscriptions = append(s.Subscriptions, e)
			if in := p.Instances[i]; in.Locus >= 0 && in.Locus < len(p.Loci) {
				for _, h := range p.Loci[in.Locus].Handlers {
					if h.Topic != ti {
						continue
					}
					switch {
					case h.Guard >= 0 && h.Shared:
						s.subKinds[e] = "guarded, shared"
					case h.Guard >= 0:
						s.subKinds[e] = "guarded"
					case h.Shared:
						s.subKinds[e] = "shared"
					}
				}
			}
		}
	}
	sortEdges(s.Subscriptions)

	// Direct publishes and calls of every function, then the publishes
	// closed over the call graph.
	pubs := make([]map[string]bool, len(p.Funcs))
	callees := make([][]int, len(p.Funcs))
	calls := map[Edge]bool{}
	for fi, f := range p.Funcs {
		pubs[fi] = map[string]bool{}
		walkFunc(f, func(s Stmt) {
			if pb, ok := s.(*Publish); ok {
				pubs[fi][topicName(pb.Topic)] = true
			}
		}, func(e Expr) {
			switch e := e.(type) {
			case *Call:
				callees[fi] = append(callees[fi], e.Func)
				calls[Edge{f.Name, funcName(e.Func)}] = true
			case *CallPrim:
				calls[Edge{f.Name, e.Name}] = true
			}
		})
	}
	for changed := true; changed; {
		changed = false
		for fi := range p.Funcs {
			for _, c := range callees[fi] {
				if c < 0 || c >= len(pubs) {
					continue
				}
				for t := range pubs[c] {
					if !pubs[fi][t] {
						pubs[fi][t] = true
						changed = true
					}
				}
			}
		}
	}
	for fi, f := range p.Funcs {
		if f.Kind != FuncHandler && f.Kind != FuncStart {
			continue
		}
		for t := range pubs[fi] {
			s.Publishes = append(s.Publishes, Edge{f.Name, t})
		}
	}
	sortEdges(s.Publishes)
	for e := range calls {
		s.Calls = append(s.Calls, e)
	}
	sortEdges(s.Calls)

	for _, f := range p.Funcs {
		s.Effects = append(s.Effects, ShapeEffects{Name: f.Name, Kind: f.Kind.String(), Effects: append([]string{}, f.Effects...)})
	}
	sort.Slice(s.Effects, func(i, j int) bool { return s.Effects[i].Name < s.Effects[j].Name })

	// Instance -> topic publishes, for the picture.
	ip := map[Edge]bool{}
	for _, in := range p.Instances {
		if in.Locus < 0 || in.Locus >= len(p.Loci) {
			continue
		}
		l := p.Loci[in.Locus]
		hs := []int{l.Start}
		for _, h := range l.Handlers {
			hs = append(hs, h.Func)
		}
		for _, h := range hs {
			if h >= 0 && h < len(pubs) {
				for t := range pubs[h] {
					ip[Edge{in.Name, t}] = true
				}
			}
		}
	}
	for e := range ip {
		s.instPublishes = append(s.instPublishes, e)
	}
	sortEdges(s.instPublishes)

	s.hash = hashShape(s)
	return s
}

// handlerShape is a handler's entry in the shape: the topic's name, then
// ` if ` and the guard's normalised SIR (no positions, no indices), then
// ` shared` for a work group member: "Job if eq.int(l0:j.worker, l1:slot) shared".
func handlerShape(p *Program, h HandlerRef, topic string) string {
	s := topic
	if h.Guard >= 0 && h.Guard < len(p.Funcs) {
		s += " if " + GuardText(p, h.Guard)
	}
	if h.Shared {
		s += " shared"
	}
	return s
}

// GuardText renders guard function fi's condition as normalised SIR:
// what the shape graph hashes and `hale shape` shows.
func GuardText(p *Program, fi int) string {
	f := p.Funcs[fi]
	if len(f.Body) != 1 {
		return "?"
	}
	ret, ok := f.Body[0].(*Return)
	if !ok {
		return "?"
	}
	pr := &printer{p: p, fn: f, shape: true}
	return pr.expr(ret.Value)
}

func sortEdges(es []Edge) {
	sort.Slice(es, func(i, j int) bool {
		if es[i].From != es[j].From {
			return es[i].From < es[j].From
		}
		return es[i].To < es[j].To
	})
}

// walkFunc calls fs for every statement and fe for every expression of f,
// in order.
func walkFunc(f *Func, fs func(Stmt), fe func(Expr)) {
	var stmts func([]Stmt)
	var expr func(Expr)
	exprs := func(list []Expr) {
		for _, e := range list {
			expr(e)
		}
	}
	expr = func(e Expr) {
		if e == nil {
			return
		}
		fe(e)
		switch e := e.(type) {
		case *Unary:
			expr(e.X)
		case *Binary:
			expr(e.X)
			expr(e.Y)
		case *And:
			expr(e.X)
			expr(e.Y)
		case *Or:
			expr(e.X)
			expr(e.Y)
		case *Call:
			exprs(e.Args)
		case *CallBuiltin:
			exprs(e.Args)
		case *CallPrim:
			exprs(e.Args)
		case *MakeList:
			exprs(e.Elems)
		case *Format:
			exprs(e.Parts)
		case *MakeMap:
			exprs(e.Keys)
			exprs(e.Values)
		case *MakeStruct:
			exprs(e.Fields)
		case *MakeEnum:
			exprs(e.Args)
		case *Index:
			expr(e.X)
			expr(e.Index)
		case *FieldRef:
			expr(e.X)
		case *Question:
			expr(e.X)
		case *Try:
			expr(e.X)
		}
	}
	stmts = func(list []Stmt) {
		for _, s := range list {
			fs(s)
			switch s := s.(type) {
			case *Let:
				expr(s.Value)
			case *SetLocal:
				expr(s.Value)
			case *SetState:
				expr(s.Value)
			case *SetIndex:
				expr(s.X)
				expr(s.Index)
				expr(s.Value)
			case *SetField:
				expr(s.X)
				expr(s.Value)
			case *ExprStmt:
				expr(s.X)
			case *If:
				expr(s.Cond)
				stmts(s.Then)
				stmts(s.Else)
			case *While:
				expr(s.Cond)
				stmts(s.Body)
			case *ForRange:
				expr(s.Lo)
				expr(s.Hi)
				stmts(s.Body)
			case *ForList:
				expr(s.List)
				stmts(s.Body)
			case *ForMap:
				expr(s.Map)
				stmts(s.Body)
			case *Match:
				expr(s.X)
				for _, a := range s.Arms {
					stmts(a.Body)
				}
				stmts(s.Default)
			case *Publish:
				exprs(s.Fields)
				expr(s.After)
			case *Return:
				expr(s.Value)
			}
		}
	}
	stmts(f.Body)
}

// ---- Hash ----

// Hash returns the shape hash: the lower-case hex BLAKE3-256 digest of the
// graph's canonical binary encoding.
func (s *Shape) Hash() string {
	if s.hash == "" {
		s.hash = hashShape(s)
	}
	return s.hash
}

// shapeEncoding is the version tag that starts the hashed bytes; change it
// whenever the encoding below changes.
const shapeEncoding = "hale shape v1"

// hashShape encodes every section in a fixed order: each list as its
// length then its elements, each string as its length then its bytes.
func hashShape(s *Shape) string {
	var b []byte
	str := func(x string) {
		b = binary.AppendUvarint(b, uint64(len(x)))
		b = append(b, x...)
	}
	n := func(k int) { b = binary.AppendUvarint(b, uint64(k)) }
	strs := func(xs []string) {
		n(len(xs))
		for _, x := range xs {
			str(x)
		}
	}
	flds := func(fs []ShapeField) {
		n(len(fs))
		for _, f := range fs {
			str(f.Name)
			str(f.Type)
		}
	}
	edges := func(es []Edge) {
		n(len(es))
		for _, e := range es {
			str(e.From)
			str(e.To)
		}
	}
	str(shapeEncoding)
	n(len(s.Loci))
	for _, l := range s.Loci {
		str(l.Name)
		flds(l.Params)
		flds(l.State)
		strs(l.Handlers)
		strs(l.Fns)
	}
	n(len(s.Types))
	for _, t := range s.Types {
		str(t.Name)
		str(t.Kind)
		flds(t.Fields)
		n(len(t.Variants))
		for _, v := range t.Variants {
			str(v.Name)
			strs(v.Fields)
		}
	}
	n(len(s.Topics))
	for _, t := range s.Topics {
		str(t.Name)
		flds(t.Fields)
	}
	n(len(s.Instances))
	for _, in := range s.Instances {
		str(in.Name)
		str(in.Locus)
		str(in.Placement)
	}
	n(len(s.Placement))
	for _, c := range s.Placement {
		n(c.ID)
		str(c.Kind)
		str(c.Name)
		strs(c.Instances)
	}
	strs(s.Ingress)
	if len(s.NATS) > 0 {
		// Only when present, so that the hashes of programs without
		// nats bindings did not change when they were added.
		str("nats")
		n(len(s.NATS))
		for _, b := range s.NATS {
			str(b.Kind)
			str(b.Topic)
			str(b.Subject)
			str(b.Queue)
		}
	}
	edges(s.Subscriptions)
	edges(s.Publishes)
	edges(s.Calls)
	n(len(s.Effects))
	for _, e := range s.Effects {
		str(e.Name)
		str(e.Kind)
		strs(e.Effects)
	}
	sum := blake3.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ---- Output ----

// WriteText writes the graph readably, section by section, ending with the
// line `shape hash: <hex>`.
func (s *Shape) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format+"\n", args...) }
	flds := func(fs []ShapeField) string {
		parts := make([]string, len(fs))
		for i, f := range fs {
			parts[i] = f.Name + ": " + f.Type
		}
		return strings.Join(parts, ", ")
	}
	p("loci:")
	for _, l := range s.Loci {
		if len(l.Params) > 0 {
			p("  %s(%s)", l.Name, flds(l.Params))
		} else {
			p("  %s", l.Name)
		}
		for _, v := range l.State {
			p("    state %s: %s", v.Name, v.Type)
		}
		for _, h := range l.Handlers {
			p("    on %s", h)
		}
		for _, f := range l.Fns {
			p("    fn %s", f)
		}
	}
	p("types:")
	for _, t := range s.Types {
		if t.Kind == "struct" {
			p("  struct %s { %s }", t.Name, flds(t.Fields))
			continue
		}
		vs := make([]string, len(t.Variants))
		for i, v := range t.Variants {
			vs[i] = v.Name
			if len(v.Fields) > 0 {
				vs[i] += "(" + strings.Join(v.Fields, ", ") + ")"
			}
		}
		p("  enum %s { %s }", t.Name, strings.Join(vs, ", "))
	}
	p("topics:")
	for _, t := range s.Topics {
		p("  %s { %s }", t.Name, flds(t.Fields))
	}
	p("instances:")
	for _, in := range s.Instances {
		p("  %s: %s on %s", in.Name, in.Locus, in.Placement)
	}
	p("placement:")
	for _, c := range s.Placement {
		if len(c.Instances) > 0 {
			p("  consumer %d %s %s: %s", c.ID, c.Kind, c.Name, strings.Join(c.Instances, ", "))
		} else {
			p("  consumer %d %s %s", c.ID, c.Kind, c.Name)
		}
	}
	p("ingress:")
	for _, t := range s.Ingress {
		p("  stdin -> %s", t)
	}
	if len(s.NATS) > 0 {
		p("nats:")
		for _, b := range s.NATS {
			p("  %s", b.text())
		}
	}
	p("subscriptions:")
	for _, e := range s.Subscriptions {
		if k := s.subKinds[e]; k != "" {
			p("  %s <- %s (%s)", e.From, e.To, k)
			continue
		}
		p("  %s <- %s", e.From, e.To)
	}
	p("publishes:")
	for _, e := range s.Publishes {
		p("  %s -> %s", e.From, e.To)
	}
	p("calls:")
	for _, e := range s.Calls {
		p("  %s -> %s", e.From, e.To)
	}
	p("effects:")
	for _, e := range s.Effects {
		p("  %s %s {%s}", e.Kind, e.Name, strings.Join(e.Effects, ", "))
	}
	p("shape hash: %s", s.Hash())
	return bw.Flush()
}

// The JSON view: one object, every list present (never null).
type shapeJSON struct {
	ShapeHash     string          `json:"shape_hash"`
	Loci          []locusJSON     `json:"loci"`
	Types         []typeJSON      `json:"types"`
	Topics        []topicJSON     `json:"topics"`
	Instances     []instanceJSON  `json:"instances"`
	Placement     []consumerJSON  `json:"placement"`
	Ingress       []string        `json:"ingress"`
	NATS          []ShapeNATS     `json:"nats"`
	Subscriptions []subscribeJSON `json:"subscriptions"`
	Publishes     []publishJSON   `json:"publishes"`
	Calls         []Edge          `json:"calls"`
	Effects       []effectsJSON   `json:"effects"`
}

type locusJSON struct {
	Name     string       `json:"name"`
	Params   []ShapeField `json:"params"`
	State    []ShapeField `json:"state"`
	Handlers []string     `json:"handlers"`
	Fns      []string     `json:"fns"`
}

type typeJSON struct {
	Name     string         `json:"name"`
	Kind     string         `json:"kind"`
	Fields   []ShapeField   `json:"fields,omitempty"`
	Variants []ShapeVariant `json:"variants,omitempty"`
}

type topicJSON struct {
	Name   string       `json:"name"`
	Fields []ShapeField `json:"fields"`
}

type instanceJSON struct {
	Name      string `json:"name"`
	Locus     string `json:"locus"`
	Placement string `json:"placement"`
}

type consumerJSON struct {
	ID        int      `json:"id"`
	Kind      string   `json:"kind"`
	Name      string   `json:"name"`
	Instances []string `json:"instances"`
}

type subscribeJSON struct {
	Instance string `json:"instance"`
	Topic    string `json:"topic"`
}

type publishJSON struct {
	Handler string `json:"handler"`
	Topic   string `json:"topic"`
}

type effectsJSON struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Effects []string `json:"effects"`
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// WriteJSON writes the graph as one JSON object on one line with the keys
// shape_hash, loci, types, topics, instances, placement, ingress, nats
// ({kind, topic, subject, queue, url}),
// subscriptions ({instance, topic}), publishes ({handler, topic}), calls
// ({from, to}) and effects ({name, kind, effects}).
func (s *Shape) WriteJSON(w io.Writer) error {
	j := shapeJSON{
		ShapeHash:     s.Hash(),
		Loci:          []locusJSON{},
		Types:         []typeJSON{},
		Topics:        []topicJSON{},
		Instances:     []instanceJSON{},
		Placement:     []consumerJSON{},
		Ingress:       nonNil(s.Ingress),
		NATS:          nonNil(s.NATS),
		Subscriptions: []subscribeJSON{},
		Publishes:     []publishJSON{},
		Calls:         nonNil(s.Calls),
		Effects:       []effectsJSON{},
	}
	for _, l := range s.Loci {
		j.Loci = append(j.Loci, locusJSON{l.Name, nonNil(l.Params), nonNil(l.State), nonNil(l.Handlers), nonNil(l.Fns)})
	}
	for _, t := range s.Types {
		j.Types = append(j.Types, typeJSON{t.Name, t.Kind, t.Fields, t.Variants})
	}
	for _, t := range s.Topics {
		j.Topics = append(j.Topics, topicJSON{t.Name, nonNil(t.Fields)})
	}
	for _, in := range s.Instances {
		j.Instances = append(j.Instances, instanceJSON(in))
	}
	for _, c := range s.Placement {
		j.Placement = append(j.Placement, consumerJSON{c.ID, c.Kind, c.Name, nonNil(c.Instances)})
	}
	for _, e := range s.Subscriptions {
		j.Subscriptions = append(j.Subscriptions, subscribeJSON{e.From, e.To})
	}
	for _, e := range s.Publishes {
		j.Publishes = append(j.Publishes, publishJSON{e.From, e.To})
	}
	for _, e := range s.Effects {
		j.Effects = append(j.Effects, effectsJSON{e.Name, e.Kind, nonNil(e.Effects)})
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(j)
}

// WriteDot writes the graph as a Graphviz digraph: instances (boxes) and
// topics (ellipses) are nodes; an edge topic -> instance is a
// subscription, instance -> topic a publish (dashed), stdin -> topic an
// ingress binding.
func (s *Shape) WriteDot(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format+"\n", args...) }
	p("digraph shape {")
	p("  rankdir=LR;")
	p("  label=%s;", dotQuote("shape hash: "+s.Hash()))
	for _, in := range s.Instances {
		p("  %s [shape=box, label=%s];", dotQuote("instance:"+in.Name),
			dotQuote(in.Name+"\n"+in.Locus+" on "+in.Placement))
	}
	for _, t := range s.Topics {
		p("  %s [shape=ellipse, label=%s];", dotQuote("topic:"+t.Name), dotQuote(t.Name))
	}
	if len(s.Ingress) > 0 {
		p("  %s [shape=plaintext, label=%s];", dotQuote("stdin"), dotQuote("stdin"))
	}
	for _, e := range s.Subscriptions {
		if k := s.subKinds[e]; k != "" {
			p("  %s -> %s [label=%s];", dotQuote("topic:"+e.To), dotQuote("instance:"+e.From), dotQuote(k))
			continue
		}
		p("  %s -> %s;", dotQuote("topic:"+e.To), dotQuote("instance:"+e.From))
	}
	for _, e := range s.instPublishes {
		p("  %s -> %s [style=dashed];", dotQuote("instance:"+e.From), dotQuote("topic:"+e.To))
	}
	for _, t := range s.Ingress {
		p("  %s -> %s;", dotQuote("stdin"), dotQuote("topic:"+t))
	}
	for _, b := range s.NATS {
		node := dotQuote("nats:" + b.Subject)
		p("  %s [shape=cds, label=%s];", node, dotQuote("nats "+b.Subject))
		if b.Kind == "bind" {
			p("  %s -> %s;", node, dotQuote("topic:"+b.Topic))
		} else {
			p("  %s -> %s;", dotQuote("topic:"+b.Topic), node)
		}
	}
	p("}")
	return bw.Flush()
}

// shapeNATS is the shape of one binding or export.
func shapeNATS(kind, topic string, n *NATS) ShapeNATS {
	url := "env " + n.URLEnv
	if n.URLEnv == "" {
		url = check.RedactURL(n.URL)
	}
	return ShapeNATS{Kind: kind, Topic: topic, Subject: n.Subject, Queue: n.Queue, URL: url}
}

// text is the line of the text form: `bind "jobs" queue "w" -> Job (nats
// env HALE_NATS_URL)` or `export Done -> "done" (nats …)`.
func (b ShapeNATS) text() string {
	if b.Kind == "export" {
		return fmt.Sprintf("export %s -> %q (nats %s)", b.Topic, b.Subject, b.URL)
	}
	q := ""
	if b.Queue != "" {
		q = fmt.Sprintf(" queue %q", b.Queue)
	}
	return fmt.Sprintf("bind %q%s -> %s (nats %s)", b.Subject, q, b.Topic, b.URL)
}

// dotQuote quotes a DOT identifier, escaping quotes, backslashes and
// newlines (which become DOT's \n line breaks).
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
