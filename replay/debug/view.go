package debug

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/host"
	"github.com/hale-lang/hale/vm/value"
)

// view is what the current stop shows: the stopped thread's frames (from
// its break, or its next handler's entry at a delivery boundary), its
// delivery, and the run's stepper, which reads the instances of the
// consumers between deliveries. Its frame ids and variable refs are valid
// until the next resume call.
type view struct {
	thread int // the consumer that stopped
	c, n   int
	d      host.Delivery
	bi     *vm.BreakInfo // nil at a delivery boundary
	st     *host.Stepper
	frames []Frame
	fns    []int // the function of each frame
	refs   []refEntry
}

// refEntry is what a variable ref expands to.
type refEntry struct {
	kind  int // refLocals, refState, refMessage, refValue
	frame int
	v     value.Value
	t     *value.Type
}

const (
	refLocals = iota
	refState
	refMessage
	refValue
)

func (r *run) breakView(bi *vm.BreakInfo) *view {
	s := r.s
	v := &view{thread: r.c, c: r.c, n: r.n, d: r.d, bi: bi, st: r.st}
	for i, f := range bi.Frames {
		p := s.posOf(f.Fn, f.PC, i == 0)
		v.frames = append(v.frames, s.frame(i+1, f.Fn, p))
		v.fns = append(v.fns, f.Fn)
	}
	return v
}

func (r *run) boundaryView() *view {
	s := r.s
	v := &view{thread: r.c, c: r.c, n: r.n, d: r.d, st: r.st}
	if fn := s.handlerOf(&r.d); fn >= 0 {
		f := &s.img.Funcs[fn]
		p := f.Decl
		if len(f.Stmts) > 0 {
			p = f.Stmts[0].Pos
		}
		v.frames = append(v.frames, s.frame(1, fn, p))
		v.fns = append(v.fns, fn)
	}
	return v
}

func (s *Session) frame(id, fn int, p image.Pos) Frame {
	fr := Frame{ID: id, Name: s.img.Funcs[fn].Name, Line: int(p.Line), Col: int(p.Col)}
	if int(p.File) < len(s.files) {
		fr.File = s.files[p.File]
	}
	return fr
}

// posOf is the position of pc in fn: a statement's own position when a
// statement starts there (stmt), else the instruction's.
func (s *Session) posOf(fn, pc int, stmt bool) image.Pos {
	f := &s.img.Funcs[fn]
	if stmt {
		if i := f.StmtAt(pc); i >= 0 {
			return f.Stmts[i].Pos
		}
	}
	return f.PosAt(pc)
}

// Stack of a thread at the current stop, innermost first.
func (s *Session) Stack(thread int) ([]Frame, error) {
	if s.cur == nil {
		return nil, errors.New("not stopped")
	}
	if thread-1 != s.cur.thread {
		return []Frame{}, nil // between deliveries
	}
	return append([]Frame(nil), s.cur.frames...), nil
}

// Scopes of a frame: Locals, State (of the instance handling the
// delivery) and Message (its payload).
func (s *Session) Scopes(frameID int) ([]Scope, error) {
	v := s.cur
	if v == nil || frameID < 1 || frameID > len(v.frames) {
		return nil, fmt.Errorf("no frame %d", frameID)
	}
	scopes := []Scope{{Name: "Locals", Ref: v.ref(refEntry{kind: refLocals, frame: frameID - 1})},
		{Name: "State", Ref: v.ref(refEntry{kind: refState})}}
	if !v.d.IsStart() {
		scopes = append(scopes, Scope{Name: "Message", Ref: v.ref(refEntry{kind: refMessage})})
	}
	return scopes, nil
}

func (v *view) ref(e refEntry) int {
	v.refs = append(v.refs, e)
	return len(v.refs)
}

// Variables a ref expands to.
func (s *Session) Variables(ref int) ([]Variable, error) {
	v := s.cur
	if v == nil || ref < 1 || ref > len(v.refs) {
		return nil, fmt.Errorf("no variables %d", ref)
	}
	e := v.refs[ref-1]
	switch e.kind {
	case refLocals:
		names, vals, types := s.locals(v, e.frame)
		out := make([]Variable, len(names))
		for i := range names {
			out[i] = s.variable(v, names[i], vals[i], types[i])
		}
		return out, nil
	case refState:
		names, vals, types, err := s.stateOf(v.d.Target)
		if err != nil {
			return nil, err
		}
		out := make([]Variable, len(names))
		for i := range names {
			out[i] = s.variable(v, names[i], vals[i], types[i])
		}
		return out, nil
	case refMessage:
		msg, t, ok := s.message(v)
		if !ok {
			return []Variable{}, nil
		}
		return s.children(v, msg, t), nil
	}
	return s.children(v, e.v, e.t), nil
}

// locals are the named locals of frame i that decode with their types.
func (s *Session) locals(v *view, i int) (names []string, vals []value.Value, types []*value.Type) {
	if v.bi == nil || i >= len(v.bi.Frames) {
		return nil, nil, nil
	}
	bf := v.bi.Frames[i]
	f := &s.img.Funcs[bf.Fn]
	for j, l := range f.Locals {
		if l.Name == "" || j >= len(bf.Locals) || bf.Locals[j] == nil {
			continue
		}
		if i == 0 && bf.PC < int(l.Start) || i > 0 && bf.PC+1 < int(l.Start) {
			continue // not defined yet: the register holds an earlier call's value
		}
		t := s.types[l.Type]
		x, err := value.Decode(bf.Locals[j], t)
		if err != nil {
			continue // not assigned yet: the register holds another type
		}
		names, vals, types = append(names, l.Name), append(vals, x), append(types, t)
	}
	return names, vals, types
}

// stateTuple reads inst's state at the current stop: from the break when
// the instance's consumer is mid-delivery, else from its engine.
func (s *Session) stateTuple(inst int) ([]byte, error) {
	v := s.cur
	if v == nil {
		return nil, errors.New("not stopped")
	}
	if v.bi != nil && s.img.Instances[inst].Consumer == v.thread {
		if inst < len(v.bi.States) && v.bi.States[inst] != nil {
			return v.bi.States[inst], nil
		}
	}
	return v.st.InstanceState(inst)
}

func (s *Session) stateOf(inst int) (names []string, vals []value.Value, types []*value.Type, err error) {
	tuple, err := s.stateTuple(inst)
	if err != nil {
		return nil, nil, nil, err
	}
	l := &s.img.Loci[s.img.Instances[inst].Locus]
	for _, sv := range l.State {
		names, types = append(names, sv.Name), append(types, s.types[sv.Type])
	}
	vals, err = value.DecodeTuple(tuple, types)
	return names, vals, types, err
}

func (s *Session) message(v *view) (value.Value, *value.Type, bool) {
	if v.d.IsStart() || v.d.Topic < 0 || v.d.Topic >= len(s.img.Topics) {
		return value.Value{}, nil, false
	}
	t := s.types[s.img.Topics[v.d.Topic].Type]
	x, err := value.Decode(v.d.Payload, t)
	return x, t, err == nil
}

func (s *Session) variable(v *view, name string, x value.Value, t *value.Type) Variable {
	out := Variable{Name: name, Value: show(x), Type: typeName(t)}
	if expandable(x) {
		out.Ref = v.ref(refEntry{kind: refValue, v: x, t: t})
	}
	return out
}

func expandable(x value.Value) bool {
	switch x.Kind() {
	case value.KindList:
		return x.AsList().Len() > 0
	case value.KindMap:
		return x.AsMap().Len() > 0
	case value.KindStruct:
		return x.AsStruct().Len() > 0
	case value.KindEnum:
		return len(x.Payload()) > 0
	}
	return false
}

// children are a container's items.
func (s *Session) children(v *view, x value.Value, t *value.Type) []Variable {
	var out []Variable
	switch x.Kind() {
	case value.KindList:
		l := x.AsList()
		for i := 0; i < l.Len(); i++ {
			out = append(out, s.variable(v, "["+strconv.Itoa(i)+"]", l.At(i), elemOf(t)))
		}
	case value.KindMap:
		mp := x.AsMap()
		for i := 0; i < mp.Len(); i++ {
			out = append(out, s.variable(v, "["+show(mp.KeyAt(i))+"]", mp.ValueAt(i), elemOf(t)))
		}
	case value.KindStruct:
		st := x.AsStruct()
		ft := st.Type()
		for i := 0; i < st.Len(); i++ {
			name, ftype := strconv.Itoa(i), (*value.Type)(nil)
			if ft != nil && i < len(ft.Fields) {
				name, ftype = ft.Fields[i].Name, ft.Fields[i].Type
			}
			out = append(out, s.variable(v, name, st.Field(i), ftype))
		}
	case value.KindEnum:
		et := x.EnumType()
		var fts []*value.Type
		if et != nil && x.Variant() < len(et.Variants) {
			fts = et.Variants[x.Variant()].Fields
		}
		for i, p := range x.Payload() {
			var ft *value.Type
			if i < len(fts) {
				ft = fts[i]
			}
			out = append(out, s.variable(v, strconv.Itoa(i), p, ft))
		}
	}
	if out == nil {
		out = []Variable{}
	}
	return out
}

func elemOf(t *value.Type) *value.Type {
	if t == nil {
		return nil
	}
	return t.Elem
}

// show writes a value as the program would write it inside a container
// (strings quoted).
func show(x value.Value) string {
	if x.Kind() == value.KindString {
		return strconv.Quote(x.AsStr())
	}
	return value.Format(x)
}

func typeName(t *value.Type) string {
	if t == nil {
		return ""
	}
	switch t.Kind {
	case value.KindList:
		return "[" + typeName(t.Elem) + "]"
	case value.KindMap:
		return "{" + typeName(t.Key) + ": " + typeName(t.Elem) + "}"
	case value.KindStruct, value.KindEnum:
		return t.Name
	}
	return t.Kind.String()
}

// Evaluate reads a name in the frame: a local or parameter, a state field
// (or `self.field`), `msg`, and field paths like `order.amount`.
func (s *Session) Evaluate(frameID int, expr string) (Variable, error) {
	v := s.cur
	if v == nil || frameID < 1 || frameID > len(v.frames) {
		return Variable{}, fmt.Errorf("no frame %d", frameID)
	}
	expr = strings.TrimSpace(expr)
	parts := strings.Split(expr, ".")
	var x value.Value
	var t *value.Type
	found := false
	head := parts[0]
	rest := parts[1:]
	switch {
	case head == "msg":
		x, t, found = s.message(v)
	case head == "self" && len(rest) > 0:
		head, rest = rest[0], rest[1:]
		x, t, found = s.stateField(v, head)
	default:
		names, vals, types := s.locals(v, frameID-1)
		for i, n := range names {
			if n == head {
				x, t, found = vals[i], types[i], true
			}
		}
		if !found {
			x, t, found = s.stateField(v, head)
		}
	}
	if !found {
		return Variable{}, fmt.Errorf("%s is not a local, a state variable or msg here", head)
	}
	for _, field := range rest {
		if x.Kind() != value.KindStruct {
			return Variable{}, fmt.Errorf("%s has no field %s", typeName(t), field)
		}
		st := x.AsStruct()
		ft := st.Type()
		i := -1
		if ft != nil {
			for j, f := range ft.Fields {
				if f.Name == field {
					i = j
				}
			}
		}
		if i < 0 {
			return Variable{}, fmt.Errorf("%s has no field %s", typeName(t), field)
		}
		x, t = st.Field(i), ft.Fields[i].Type
	}
	return s.variable(v, expr, x, t), nil
}

func (s *Session) stateField(v *view, name string) (value.Value, *value.Type, bool) {
	names, vals, types, err := s.stateOf(v.d.Target)
	if err != nil {
		return value.Value{}, nil, false
	}
	for i, n := range names {
		if n == name {
			return vals[i], types[i], true
		}
	}
	return value.Value{}, nil, false
}

// output is where run r's prints go: each byte once, though going back
// replays the run from the start (a replay writes the same bytes again,
// deterministically; those already written are skipped). A run that
// only looks ahead for the stop to go back to (modeCollect) writes
// nothing: it passes the current stop, and what it prints there has not
// been printed yet as far as the user is concerned.
func (s *Session) output(r *run) io.Writer {
	if s.cfg.Output == nil {
		return nil
	}
	return &onceWriter{s: s, r: r}
}

type onceWriter struct {
	s   *Session
	r   *run
	pos int64
}

func (w *onceWriter) Write(p []byte) (int, error) {
	n := len(p)
	end := w.pos + int64(n)
	if end > w.s.written && w.r.mode.kind != modeCollect {
		skip := max(w.s.written-w.pos, 0)
		if _, err := w.s.cfg.Output.Write(p[skip:]); err != nil {
			return 0, err
		}
		w.s.written = end
	}
	w.pos = end
	return n, nil
}

// sortedKeys is for deterministic listings.
func sortedKeys(m map[int][]lineBP) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}
