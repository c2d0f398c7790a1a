package sir

import (
	"sort"

	"github.com/hale-lang/hale/effects"
	"github.com/hale-lang/hale/lang"
	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/check"
	"github.com/hale-lang/hale/lang/diag"
	"github.com/hale-lang/hale/stdlib"
)

// Lower translates a checked program into SIR. fx supplies the effect
// sets recorded on each Func (nil leaves them empty). Lowering reads the
// symbols, slots and types the checker recorded and never resolves a name
// again. The error, when not nil, is a diag.List: a const whose value is
// not constant or traps (CodeNotConst, CodeConstTrap), or an inconsistency
// in the checked tree (CodeInternal).
func Lower(p *lang.Program, fx *effects.Info) (prog *Program, err error) {
	if p == nil {
		return nil, diag.List{{Code: CodeInternal, Msg: "sir: no program"}}
	}
	l := newLowerer(p, fx)
	defer func() {
		// A checked tree that breaks an invariant must not crash the
		// toolchain: report it as a diagnostic.
		if r := recover(); r != nil {
			prog = nil
			l.errs.Add(ast.Pos{File: p.Entry}, CodeInternal, "internal error while lowering: %v", r)
			err = l.errs.Sort()
		}
	}()
	l.run()
	if len(l.errs) > 0 {
		return nil, l.errs.Sort()
	}
	return l.out, nil
}

// ShapeOf lowers p and returns its shape graph (what `hale shape` prints).
func ShapeOf(p *lang.Program, fx *effects.Info) (*Shape, error) {
	sp, err := Lower(p, fx)
	if err != nil {
		return nil, err
	}
	return BuildShape(sp), nil
}

type lowerer struct {
	p   *lang.Program
	fx  *effects.Info
	out *Program

	errs diag.List

	nominal map[*ast.Type]TypeRef
	lists   map[TypeRef]TypeRef
	maps    map[[2]TypeRef]TypeRef
	consts  map[*ast.ConstDecl]*folded
	// constName is the const being folded, for messages.
	constName string

	fnIndex      map[*ast.FnDecl]int
	handlerIndex map[*ast.Handler]int
	guardIndex   map[*ast.Handler]int // handler → its FuncGuard
	locusIndex   map[*ast.LocusDecl]int
	topicIndex   map[*ast.Type]int // payload struct → topic
	userFn       map[*ast.FnDecl]bool
	pending      []*ast.FnDecl // stdlib helpers still to lower

	primIndex map[string]int // name → provisional index, remapped in finishPrims
	primCalls []*CallPrim
}

func newLowerer(p *lang.Program, fx *effects.Info) *lowerer {
	out := &Program{Entry: p.Entry}
	for _, k := range []TypeKind{KindVoid, KindInt, KindFloat, KindBool, KindString, KindBytes} {
		out.Types = append(out.Types, &Type{Kind: k})
	}
	return &lowerer{
		p: p, fx: fx, out: out,
		nominal:      map[*ast.Type]TypeRef{},
		lists:        map[TypeRef]TypeRef{},
		maps:         map[[2]TypeRef]TypeRef{},
		consts:       map[*ast.ConstDecl]*folded{},
		fnIndex:      map[*ast.FnDecl]int{},
		handlerIndex: map[*ast.Handler]int{},
		guardIndex:   map[*ast.Handler]int{},
		locusIndex:   map[*ast.LocusDecl]int{},
		topicIndex:   map[*ast.Type]int{},
		userFn:       map[*ast.FnDecl]bool{},
		primIndex:    map[string]int{},
	}
}

func (l *lowerer) internal(pos ast.Pos, format string, args ...any) {
	l.errs.Add(pos, CodeInternal, "internal: "+format, args...)
}

// run lowers the whole program: declarations first (so every index is
// known), then bodies.
func (l *lowerer) run() {
	out := l.out
	var fns []*ast.FnDecl
	var loci []*ast.LocusDecl
	for _, f := range l.p.Files {
		out.Files = append(out.Files, f.Path)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.TypeDecl:
				t := l.typeOf(d.Pos(), d.T)
				if d.Topic {
					l.topicIndex[d.T] = len(out.Topics)
					out.Topics = append(out.Topics, &Topic{Name: d.Name.Name, Type: t, Pos: d.Pos()})
				}
			case *ast.EnumDecl:
				l.typeOf(d.Pos(), d.T)
			case *ast.ConstDecl:
				v, ok := l.constValue(d)
				if ok {
					out.Consts = append(out.Consts, &ConstDecl{
						Name: d.Name.Name, Type: v.Type(), Value: v, Pos: d.Pos(),
					})
				}
			case *ast.FnDecl:
				fns = append(fns, d)
			case *ast.LocusDecl:
				loci = append(loci, d)
			}
		}
	}

	// Function shells, so that calls can refer to any index.
	for _, fn := range fns {
		l.userFn[fn] = true
		l.fnIndex[fn] = l.addFunc(&Func{Name: fn.Name.Name, Kind: FuncFn, Locus: -1, Topic: -1, Pos: fn.Name.Pos()})
	}
	for li, ld := range loci {
		l.locusIndex[ld] = li
		lc := &Locus{Name: ld.Name.Name, NumSlots: ld.NumSlots, Budget: ld.Budget, Start: -1, Pos: ld.Name.Pos()}
		for _, prm := range ld.Params {
			lc.Params = append(lc.Params, Var{Name: prm.Name.Name, Type: l.typeOf(prm.Pos(), symType(prm.Name)), Slot: symSlot(prm.Name)})
		}
		for _, sv := range ld.State {
			lc.State = append(lc.State, Var{Name: sv.Name.Name, Type: l.typeOf(sv.Pos(), symType(sv.Name)), Slot: symSlot(sv.Name)})
		}
		lc.Init = l.addFunc(&Func{Name: lc.Name + ".init", Kind: FuncInit, Locus: li, Topic: -1, Pos: ld.Name.Pos()})
		for _, h := range ld.Handlers {
			f := &Func{Locus: li, Topic: -1, Pos: h.Pos()}
			if h.Start {
				f.Name, f.Kind = lc.Name+".on start", FuncStart
			} else {
				f.Name, f.Kind = lc.Name+".on "+h.Topic.Name, FuncHandler
				f.Topic = l.topicOf(h.Topic)
			}
			idx := l.addFunc(f)
			l.handlerIndex[h] = idx
			if h.Start {
				lc.Start = idx
				continue
			}
			ref := HandlerRef{Topic: f.Topic, Func: idx, Guard: -1, Shared: h.Shared}
			if h.Guard != nil {
				ref.Guard = l.addFunc(&Func{Name: f.Name + " guard", Kind: FuncGuard, Locus: li, Topic: -1, Pos: h.Guard.Pos(), Result: TBool})
				l.guardIndex[h] = ref.Guard
			}
			lc.Handlers = append(lc.Handlers, ref)
		}
		for _, fn := range ld.Fns {
			l.userFn[fn] = true
			idx := l.addFunc(&Func{Name: lc.Name + "." + fn.Name.Name, Kind: FuncLocusFn, Locus: li, Topic: -1, Pos: fn.Name.Pos()})
			l.fnIndex[fn] = idx
			lc.Fns = append(lc.Fns, idx)
		}
		out.Loci = append(out.Loci, lc)
	}

	// Bodies.
	for _, fn := range fns {
		l.lowerFn(fn)
	}
	for li, ld := range loci {
		l.lowerInit(ld, li)
		for _, h := range ld.Handlers {
			l.lowerHandler(h, li)
			if h.Guard != nil {
				l.lowerGuard(h, ld)
			}
		}
		for _, fn := range ld.Fns {
			l.lowerFn(fn)
		}
	}
	l.lowerMain()
	for len(l.pending) > 0 {
		fn := l.pending[0]
		l.pending = l.pending[1:]
		l.lowerFn(fn)
	}
	l.finishPrims()
	l.computeSubscribers()
}

func (l *lowerer) addFunc(f *Func) int {
	l.out.Funcs = append(l.out.Funcs, f)
	return len(l.out.Funcs) - 1
}

func symType(id *ast.Ident) *ast.Type {
	if id == nil || id.Sym == nil {
		return nil
	}
	return id.Sym.Type
}

func symSlot(id *ast.Ident) int {
	if id == nil || id.Sym == nil {
		return -1
	}
	return id.Sym.Slot
}

func (l *lowerer) topicOf(id *ast.Ident) int {
	if id != nil && id.Sym != nil && id.Sym.Kind == ast.SymTopic {
		if i, ok := l.topicIndex[id.Sym.Type]; ok {
			return i
		}
	}
	var pos ast.Pos
	if id != nil {
		pos = id.Pos()
	}
	l.internal(pos, "unresolved topic")
	return -1
}

// ---- Types ----

// typeOf maps a checked type to its TypeRef, interning lists and maps and
// registering nominal types on first sight.
func (l *lowerer) typeOf(pos ast.Pos, t *ast.Type) TypeRef {
	if t == nil {
		l.internal(pos, "untyped node")
		return TVoid
	}
	switch t.Kind {
	case ast.Void:
		return TVoid
	case ast.Int:
		return TInt
	case ast.Float:
		return TFloat
	case ast.Bool:
		return TBool
	case ast.String:
		return TString
	case ast.Bytes:
		return TBytes
	case ast.List:
		elem := l.typeOf(pos, t.Elem)
		if r, ok := l.lists[elem]; ok {
			return r
		}
		r := l.addType(&Type{Kind: KindList, Elem: elem})
		l.lists[elem] = r
		return r
	case ast.Map:
		key, val := l.typeOf(pos, t.Key), l.typeOf(pos, t.Elem)
		if r, ok := l.maps[[2]TypeRef{key, val}]; ok {
			return r
		}
		r := l.addType(&Type{Kind: KindMap, Key: key, Elem: val})
		l.maps[[2]TypeRef{key, val}] = r
		return r
	case ast.Struct, ast.Enum:
		if r, ok := l.nominal[t]; ok {
			return r
		}
		nt := &Type{Kind: KindStruct, Name: t.Name, Topic: t.Topic, Pos: t.Decl}
		if t.Kind == ast.Enum {
			nt.Kind = KindEnum
		}
		// Register before the fields so that recursive types find
		// themselves.
		r := l.addType(nt)
		l.nominal[t] = r
		for _, f := range t.Fields {
			nt.Fields = append(nt.Fields, Field{Name: f.Name, Type: l.typeOf(pos, f.Type)})
		}
		for _, v := range t.Variants {
			sv := Variant{Name: v.Name}
			for _, ft := range v.Fields {
				sv.Fields = append(sv.Fields, l.typeOf(pos, ft))
			}
			nt.Variants = append(nt.Variants, sv)
		}
		return r
	}
	l.internal(pos, "unexpected type %s", t)
	return TVoid
}

func (l *lowerer) addType(t *Type) TypeRef {
	l.out.Types = append(l.out.Types, t)
	return TypeRef(len(l.out.Types) - 1)
}

func (l *lowerer) kindOf(r TypeRef) TypeKind { return l.out.Types[r].Kind }

// ---- Functions ----

// fnCtx is the state of lowering one function body.
type fnCtx struct {
	l     *lowerer
	fn    *Func // nil for spawn arguments (no frame)
	locus int
	next  int // next free hidden slot
	// loopVals holds the spawn loop variables' values while a spawn's
	// arguments are lowered for one iteration (they become constants).
	loopVals map[*ast.Symbol]int64
	// guardParams: lowering a guard, whose locus parameters are the
	// frame's copies in slots 1.. rather than instance slots.
	guardParams bool
}

func (l *lowerer) newCtx(f *Func, numSlots int) *fnCtx {
	f.NumSlots = numSlots
	f.Locals = make([]Local, numSlots)
	return &fnCtx{l: l, fn: f, locus: f.Locus, next: numSlots}
}

// hidden allocates a hidden frame slot; release frees every slot
// allocated since mark (slots are scoped to the statement that needs them).
// Slots past the checker's are reused by later statements, so they are
// all named "$tmp" and typed by their first use.
func (c *fnCtx) hidden(t TypeRef) int {
	s := c.next
	c.next++
	if c.next > c.fn.NumSlots {
		c.fn.NumSlots = c.next
		c.fn.Locals = append(c.fn.Locals, Local{Name: "$tmp", Type: t})
	}
	return s
}

func (c *fnCtx) mark() int     { return c.next }
func (c *fnCtx) release(m int) { c.next = m }

// nameLocals records the name and type of every local slot declared in n.
func (c *fnCtx) nameLocals(n ast.Node) {
	ast.Inspect(n, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok || id.Sym == nil || id.Sym.Kind != ast.SymLocal {
			return true
		}
		s := id.Sym.Slot
		if s < 0 {
			return true
		}
		for s >= len(c.fn.Locals) {
			c.fn.Locals = append(c.fn.Locals, Local{})
			c.fn.NumSlots = len(c.fn.Locals)
			c.next = max(c.next, c.fn.NumSlots)
		}
		if c.fn.Locals[s].Name == "" {
			c.fn.Locals[s] = Local{Name: id.Sym.Name, Type: c.l.typeOf(id.Pos(), id.Sym.Type)}
		}
		return true
	})
}

func (l *lowerer) effectsOf(s effects.Set) []string {
	if s.Pure() {
		return nil
	}
	return s.Slice()
}

func (l *lowerer) lowerFn(fn *ast.FnDecl) {
	f := l.out.Funcs[l.fnIndex[fn]]
	f.NumParams = len(fn.Params)
	if fn.Sym != nil && fn.Sym.Type != nil && fn.Sym.Type.Result != nil {
		f.Result = l.typeOf(fn.Pos(), fn.Sym.Type.Result)
	}
	c := l.newCtx(f, max(fn.NumSlots, len(fn.Params)))
	c.nameLocals(fn)
	if l.fx != nil {
		f.Effects = l.effectsOf(l.fx.Fn(fn))
	}
	if fn.Body == nil {
		l.internal(fn.Pos(), "fn %s has no body", fn.Name.Name)
		return
	}
	f.Body = c.block(fn.Body)
}

func (l *lowerer) lowerHandler(h *ast.Handler, li int) {
	f := l.out.Funcs[l.handlerIndex[h]]
	slots := h.NumSlots
	if !h.Start {
		f.NumParams = 1
		slots = max(slots, 1)
	}
	c := l.newCtx(f, slots)
	c.nameLocals(h)
	if l.fx != nil {
		f.Effects = l.effectsOf(l.fx.Handler(h))
	}
	f.Body = c.block(h.Body)
}

// lowerGuard lowers the guard of `on T(p) if g` into its FuncGuard: the
// payload in slot 0, copies of the locus parameters in slots 1.., and one
// statement returning g, in which a locus parameter reads its copy.
func (l *lowerer) lowerGuard(h *ast.Handler, ld *ast.LocusDecl) {
	f := l.out.Funcs[l.guardIndex[h]]
	f.NumParams = 1 + len(ld.Params)
	c := l.newCtx(f, max(h.GuardSlots, f.NumParams))
	c.guardParams = true
	if h.GuardParam != nil {
		f.Locals[0] = Local{Name: h.GuardParam.Name, Type: l.typeOf(h.Pos(), h.GuardParam.Type)}
	}
	for i, prm := range ld.Params {
		f.Locals[1+i] = Local{Name: prm.Name.Name, Type: l.typeOf(prm.Pos(), symType(prm.Name))}
	}
	c.nameLocals(h.Guard)
	f.Body = []Stmt{&Return{StmtBase: StmtBase{h.Guard.Pos()}, Value: c.expr(h.Guard)}}
}

func (l *lowerer) lowerInit(ld *ast.LocusDecl, li int) {
	f := l.out.Funcs[l.out.Loci[li].Init]
	c := l.newCtx(f, ld.InitSlots)
	for _, sv := range ld.State {
		c.nameLocals(sv.Value)
	}
	if l.fx != nil {
		f.Effects = l.effectsOf(l.fx.Init(ld))
	}
	for _, sv := range ld.State {
		f.Body = append(f.Body, &SetState{StmtBase: StmtBase{sv.Pos()}, Slot: symSlot(sv.Name), Value: c.expr(sv.Value)})
	}
}

// ---- Main: instances, consumers, ingress ----

func (l *lowerer) lowerMain() {
	out := l.out
	out.Consumers = []*Consumer{{Kind: ConsumerMain, Name: "main"}}
	m := l.p.Main
	if m == nil {
		return
	}
	pools := map[string]int{}
	var pinned, async []int
	argCtx := &fnCtx{l: l, locus: -1}
	for _, sa := range l.expandMain(m) {
		s := sa.spawn
		argCtx.loopVals = sa.vals
		in := &Instance{Name: sa.name, Pos: s.Pos(), Locus: -1}
		if s.Locus.Sym != nil && s.Locus.Sym.Locus != nil {
			if li, ok := l.locusIndex[s.Locus.Sym.Locus]; ok {
				in.Locus = li
			}
		}
		if in.Locus < 0 {
			l.internal(s.Pos(), "spawn of unresolved locus %s", s.Locus.Name)
		}
		for _, a := range s.Args {
			in.Args = append(in.Args, argCtx.expr(a))
		}
		if s.Placement != nil {
			in.Placement = Placement{Kind: s.Placement.Kind, Pool: s.Placement.Pool}
		}
		idx := len(out.Instances)
		out.Instances = append(out.Instances, in)
		switch in.Placement.Kind {
		case ast.PlacePool:
			if _, ok := pools[in.Placement.Pool]; !ok {
				pools[in.Placement.Pool] = len(out.Consumers)
				out.Consumers = append(out.Consumers, &Consumer{Kind: ConsumerPool, Name: in.Placement.Pool})
			}
			in.Consumer = pools[in.Placement.Pool]
			c := out.Consumers[in.Consumer]
			c.Instances = append(c.Instances, idx)
		case ast.PlacePinned:
			pinned = append(pinned, idx)
		case ast.PlaceAsyncIO:
			async = append(async, idx)
		default:
			out.Consumers[0].Instances = append(out.Consumers[0].Instances, idx)
		}
	}
	for _, group := range []struct {
		kind ConsumerKind
		idx  []int
	}{{ConsumerPinned, pinned}, {ConsumerAsyncIO, async}} {
		for _, i := range group.idx {
			out.Instances[i].Consumer = len(out.Consumers)
			out.Consumers = append(out.Consumers, &Consumer{Kind: group.kind, Name: out.Instances[i].Name, Instances: []int{i}})
		}
	}
	for _, b := range m.Binds {
		t := l.topicOf(b.Topic)
		in := &Ingress{Topic: t, Consumer: len(out.Consumers), Pos: b.Pos(), NATS: natsOf(b.NATS)}
		out.Consumers = append(out.Consumers, &Consumer{Kind: ConsumerIngress, Name: IngressName(in.NATS, b.Topic.Name)})
		out.Ingress = append(out.Ingress, in)
	}
	for _, x := range m.Exports {
		out.Exports = append(out.Exports, &Export{Topic: l.topicOf(x.Topic), NATS: *natsOf(x.NATS), Pos: x.Pos()})
	}
}

// natsOf copies a binding's NATS endpoint (nil for stdin).
func natsOf(n *ast.NATS) *NATS {
	if n == nil {
		return nil
	}
	return &NATS{URL: n.URL, URLEnv: n.URLEnv, Subject: n.Subject, Queue: n.Queue}
}

func (l *lowerer) computeSubscribers() {
	for i, in := range l.out.Instances {
		if in.Locus < 0 {
			continue
		}
		for _, h := range l.out.Loci[in.Locus].Handlers {
			if h.Topic >= 0 {
				t := l.out.Topics[h.Topic]
				t.Subscribers = append(t.Subscribers, i)
			}
		}
	}
}

// ---- Primitives ----

func (l *lowerer) prim(name string, decl *ast.FnDecl) int {
	if i, ok := l.primIndex[name]; ok {
		return i
	}
	p := &Prim{Name: name, ID: -1, Result: TVoid}
	if sp, ok := stdlib.Lookup(name); ok {
		p.ID = int(sp.ID)
		if sp.Effect != stdlib.NoEffect {
			p.Effect = string(sp.Effect)
		}
	} else {
		l.internal(decl.Pos(), "primitive %s is not in the primitive table", name)
	}
	if decl.Sym != nil && decl.Sym.Type != nil {
		for _, pt := range decl.Sym.Type.Params {
			p.Params = append(p.Params, l.typeOf(decl.Pos(), pt))
		}
		if decl.Sym.Type.Result != nil {
			p.Result = l.typeOf(decl.Pos(), decl.Sym.Type.Result)
		}
	}
	l.primIndex[name] = len(l.out.Prims)
	l.out.Prims = append(l.out.Prims, p)
	return len(l.out.Prims) - 1
}

// finishPrims sorts the primitive table by name and renumbers the calls.
func (l *lowerer) finishPrims() {
	prims := l.out.Prims
	order := make([]int, len(prims))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return prims[order[a]].Name < prims[order[b]].Name })
	remap := make([]int, len(prims))
	sorted := make([]*Prim, len(prims))
	for newIdx, old := range order {
		remap[old] = newIdx
		sorted[newIdx] = prims[old]
	}
	l.out.Prims = sorted
	for _, c := range l.primCalls {
		c.Prim = remap[c.Prim]
	}
}

// ---- Statements ----

func (c *fnCtx) block(b *ast.Block) []Stmt {
	if b == nil {
		return nil
	}
	var out []Stmt
	for _, s := range b.Stmts {
		out = append(out, c.stmt(s)...)
	}
	return out
}

func (c *fnCtx) stmt(s ast.Stmt) []Stmt {
	at := StmtBase{s.Pos()}
	switch s := s.(type) {
	case *ast.Block:
		return c.block(s)
	case *ast.LetStmt:
		return []Stmt{&Let{StmtBase: at, Slot: symSlot(s.Name), Value: c.expr(s.Value)}}
	case *ast.AssignStmt:
		m := c.mark()
		defer c.release(m)
		return c.assign(s)
	case *ast.ExprStmt:
		return []Stmt{&ExprStmt{StmtBase: at, X: c.expr(s.X)}}
	case *ast.IfStmt:
		st := &If{StmtBase: at, Cond: c.expr(s.Cond), Then: c.block(s.Then)}
		if s.Else != nil {
			st.Else = c.stmt(s.Else)
		}
		return []Stmt{st}
	case *ast.WhileStmt:
		return []Stmt{&While{StmtBase: at, Cond: c.expr(s.Cond), Body: c.block(s.Body)}}
	case *ast.ForStmt:
		m := c.mark()
		defer c.release(m)
		return []Stmt{c.forStmt(s)}
	case *ast.MatchStmt:
		m := c.mark()
		defer c.release(m)
		return []Stmt{c.match(s)}
	case *ast.PublishStmt:
		t := c.l.topicOf(s.Topic)
		st := &Publish{StmtBase: at, Topic: t}
		if t >= 0 {
			st.Fields, st.Order = c.fieldInits(s.Pos(), len(c.l.out.Types[c.l.out.Topics[t].Type].Fields), s.Fields)
		}
		if s.After != nil {
			st.After = c.expr(s.After)
		}
		return []Stmt{st}
	case *ast.ReturnStmt:
		st := &Return{StmtBase: at}
		if s.Value != nil {
			st.Value = c.expr(s.Value)
		}
		return []Stmt{st}
	case *ast.BreakStmt:
		return []Stmt{&Break{StmtBase: at}}
	case *ast.ContinueStmt:
		return []Stmt{&Continue{StmtBase: at}}
	}
	c.l.internal(s.Pos(), "unexpected statement %T", s)
	return nil
}

// simple reports whether evaluating e twice in a row is the same as
// evaluating it once: a literal, a slot read, or a field of one (a field
// read cannot trap and has no effect).
func simple(e Expr) bool {
	switch e := e.(type) {
	case *Const, *LocalRef, *StateRef:
		return true
	case *FieldRef:
		return simple(e.X)
	}
	return false
}

// once returns e, or, when e is not simple, a read of a hidden slot that a
// Let appended to pre stores it in.
func (c *fnCtx) once(e Expr, pre *[]Stmt) Expr {
	if simple(e) {
		return e
	}
	slot := c.hidden(e.Type())
	*pre = append(*pre, &Let{StmtBase: StmtBase{e.Pos()}, Slot: slot, Value: e})
	return &LocalRef{ExprBase: ExprBase{e.Pos(), e.Type()}, Slot: slot}
}

func (c *fnCtx) assign(s *ast.AssignStmt) []Stmt {
	at := StmtBase{s.Pos()}
	// value builds the stored value: the right-hand side, or for a
	// compound assignment `cur op rhs`.
	value := func(cur Expr) Expr {
		rhs := c.expr(s.Value)
		if s.Op == ast.Assign {
			return rhs
		}
		return c.binary(s.Op.Binary(), s.Pos(), cur.Type(), cur, rhs, s)
	}
	switch t := s.Target.(type) {
	case *ast.Name:
		sym := t.Ident.Sym
		if sym == nil {
			break
		}
		ty := c.l.typeOf(t.Pos(), t.T)
		switch sym.Kind {
		case ast.SymLocal:
			cur := &LocalRef{ExprBase: ExprBase{t.Pos(), ty}, Slot: sym.Slot}
			return []Stmt{&SetLocal{StmtBase: at, Slot: sym.Slot, Value: value(cur)}}
		case ast.SymState:
			cur := &StateRef{ExprBase: ExprBase{t.Pos(), ty}, Slot: sym.Slot}
			return []Stmt{&SetState{StmtBase: at, Slot: sym.Slot, Value: value(cur)}}
		}
	case *ast.IndexExpr:
		x := c.expr(t.X)
		idx := c.expr(t.Index)
		kind := c.indexKind(t.Pos(), x.Type())
		var pre []Stmt
		if s.Op != ast.Assign {
			// The value reads the target again: evaluate the container
			// and the index once, into hidden slots.
			x, idx = c.once(x, &pre), c.once(idx, &pre)
		}
		cur := &Index{ExprBase: ExprBase{t.Pos(), c.l.typeOf(t.Pos(), t.T)}, Kind: kind, X: x, Index: idx}
		return append(pre, &SetIndex{StmtBase: at, Kind: kind, X: x, Index: idx, Value: value(cur)})
	case *ast.FieldExpr:
		x := c.expr(t.X)
		var pre []Stmt
		if s.Op != ast.Assign {
			x = c.once(x, &pre)
		}
		cur := &FieldRef{ExprBase: ExprBase{t.Pos(), c.l.typeOf(t.Pos(), t.T)}, X: x, Field: t.Index}
		return append(pre, &SetField{StmtBase: at, X: x, Field: t.Index, Value: value(cur)})
	}
	c.l.internal(s.Pos(), "unexpected assignment target %T", s.Target)
	return nil
}

func (c *fnCtx) forStmt(s *ast.ForStmt) Stmt {
	at := StmtBase{s.Pos()}
	// The checker reserves hidden slots for every loop (HiddenSlot and
	// the two after it); use them when they are there.
	reserved := s.HiddenSlot >= 0 && s.HiddenSlot+2 < c.fn.NumSlots
	loopSlot := func(i int, name string, t TypeRef) int {
		if !reserved {
			return c.hidden(t)
		}
		slot := s.HiddenSlot + i
		c.fn.Locals[slot] = Local{Name: name, Type: t}
		return slot
	}
	if s.Hi != nil {
		lo, hi := c.expr(s.X), c.expr(s.Hi)
		st := &ForRange{StmtBase: at, Slot: symSlot(s.Key), Lo: lo, Hi: hi}
		st.HiSlot = loopSlot(0, "$for.hi", TInt)
		st.Body = c.block(s.Body)
		return st
	}
	x := c.expr(s.X)
	switch c.l.kindOf(x.Type()) {
	case KindList:
		st := &ForList{StmtBase: at, Slot: symSlot(s.Key), List: x}
		st.ListSlot = loopSlot(0, "$for.list", x.Type())
		st.IdxSlot = loopSlot(1, "$for.idx", TInt)
		st.Body = c.block(s.Body)
		return st
	case KindMap:
		st := &ForMap{StmtBase: at, KeySlot: symSlot(s.Key), ValSlot: -1, Map: x}
		if s.Val != nil {
			st.ValSlot = symSlot(s.Val)
		}
		st.MapSlot = loopSlot(0, "$for.map", x.Type())
		st.IdxSlot = loopSlot(1, "$for.idx", TInt)
		st.Body = c.block(s.Body)
		return st
	}
	c.l.internal(s.Pos(), "for over %s", c.l.kindOf(x.Type()))
	return &While{StmtBase: at, Cond: &Const{ExprBase: ExprBase{s.Pos(), TBool}, Value: BoolValue(false)}}
}

func (c *fnCtx) match(s *ast.MatchStmt) Stmt {
	x := c.expr(s.X)
	st := &Match{StmtBase: StmtBase{s.Pos()}, X: x}
	switch c.l.kindOf(x.Type()) {
	case KindEnum:
		st.Kind = MatchEnum
	case KindInt:
		st.Kind = MatchInt
	case KindString:
		st.Kind = MatchString
	case KindBool:
		st.Kind = MatchBool
	default:
		c.l.internal(s.Pos(), "match on %s", c.l.kindOf(x.Type()))
	}
	st.Slot = c.hidden(x.Type())
	for _, a := range s.Arms {
		pat := a.Pattern
		if pat.Kind == ast.PatWildcard {
			st.HasDefault = true
			st.Default = c.block(a.Body)
			break // later arms can never run
		}
		arm := &Arm{Pos: a.Pos()}
		switch pat.Kind {
		case ast.PatInt:
			arm.Int = pat.Int
		case ast.PatString:
			arm.Str = pat.Str
		case ast.PatBool:
			arm.Bool = pat.Bool
		case ast.PatVariant:
			arm.Variant = pat.Variant
			for _, b := range pat.Binds {
				slot := -1
				if b.Name != "_" && b.Sym != nil && b.Sym.Kind == ast.SymLocal {
					slot = b.Sym.Slot
				}
				arm.Binds = append(arm.Binds, slot)
			}
		}
		arm.Body = c.block(a.Body)
		st.Arms = append(st.Arms, arm)
	}
	return st
}

// fieldInits orders struct or publish field initialisers by declaration
// and computes the evaluation order (nil when it cannot be observed).
func (c *fnCtx) fieldInits(pos ast.Pos, n int, inits []*ast.FieldInit) ([]Expr, []int) {
	fields := make([]Expr, n)
	order := make([]int, 0, len(inits))
	inOrder := true
	loud := 0 // fields whose evaluation could be observed
	for i, fi := range inits {
		if fi.Index < 0 || fi.Index >= n || fields[fi.Index] != nil {
			c.l.internal(fi.Pos(), "bad field initialiser %s", fi.Name.Name)
			continue
		}
		e := c.expr(fi.Value)
		fields[fi.Index] = e
		order = append(order, fi.Index)
		if fi.Index != i {
			inOrder = false
		}
		if !quiet(e) {
			loud++
		}
	}
	for i, f := range fields {
		if f == nil {
			c.l.internal(pos, "field %d has no value", i)
			fields[i] = &Const{ExprBase: ExprBase{pos, TVoid}}
		}
	}
	if inOrder || loud <= 1 || len(order) != n {
		return fields, nil
	}
	return fields, order
}

// quiet reports whether evaluating e can neither be observed nor observe
// anything another expression does: it cannot trap, call, or read state
// (a call could change state). Locals cannot be changed by a call.
func quiet(e Expr) bool {
	switch e := e.(type) {
	case *Const, *LocalRef:
		return true
	case *MakeList:
		for _, x := range e.Elems {
			if !quiet(x) {
				return false
			}
		}
		return true
	case *MakeEnum:
		for _, x := range e.Args {
			if !quiet(x) {
				return false
			}
		}
		return true
	case *FieldRef:
		return quiet(e.X)
	}
	return false
}

// ---- Expressions ----

func (c *fnCtx) base(e ast.Expr) ExprBase {
	return ExprBase{At: e.Pos(), Ty: c.l.typeOf(e.Pos(), e.TypeOf())}
}

func (c *fnCtx) expr(e ast.Expr) Expr {
	switch e := e.(type) {
	case *ast.IntLit:
		v, ok := intLit(e)
		if !ok {
			c.l.internal(e.Pos(), "integer literal %s out of range", e.Raw)
		}
		return &Const{ExprBase: ExprBase{e.Pos(), TInt}, Value: IntValue(v)}
	case *ast.FloatLit:
		return &Const{ExprBase: ExprBase{e.Pos(), TFloat}, Value: FloatValue(e.Value)}
	case *ast.StringLit:
		return &Const{ExprBase: ExprBase{e.Pos(), TString}, Value: StringValue(e.Value)}
	case *ast.BytesLit:
		return &Const{ExprBase: ExprBase{e.Pos(), TBytes}, Value: BytesValue(e.Value)}
	case *ast.BoolLit:
		return &Const{ExprBase: ExprBase{e.Pos(), TBool}, Value: BoolValue(e.Value)}
	case *ast.Name:
		return c.symbolRef(e, e.Ident.Sym)
	case *ast.PathExpr:
		return c.symbolRef(e, e.Sym)
	case *ast.StructLit:
		b := c.base(e)
		n := 0
		if t := c.l.out.Types[b.Ty]; t.Kind == KindStruct {
			n = len(t.Fields)
		} else {
			c.l.internal(e.Pos(), "struct literal of %s", t.Kind)
		}
		fields, order := c.fieldInits(e.Pos(), n, e.Fields)
		return &MakeStruct{ExprBase: b, Fields: fields, Order: order}
	case *ast.ListLit:
		ml := &MakeList{ExprBase: c.base(e)}
		for _, x := range e.Elems {
			ml.Elems = append(ml.Elems, c.expr(x))
		}
		return ml
	case *ast.MapLit:
		mm := &MakeMap{ExprBase: c.base(e)}
		for _, en := range e.Entries {
			mm.Keys = append(mm.Keys, c.expr(en.Key))
			mm.Values = append(mm.Values, c.expr(en.Value))
		}
		return mm
	case *ast.UnaryExpr:
		return c.unary(e)
	case *ast.BinaryExpr:
		pos := e.OpPos
		if !pos.IsValid() {
			pos = e.Pos()
		}
		x, y := c.expr(e.X), c.expr(e.Y)
		switch e.Op {
		case ast.AndAnd:
			return &And{ExprBase: ExprBase{pos, TBool}, X: x, Y: y}
		case ast.OrOr:
			return &Or{ExprBase: ExprBase{pos, TBool}, X: x, Y: y}
		}
		if e.Op == ast.Add && isSecretType(e.TypeOf()) {
			return &CallBuiltin{ExprBase: ExprBase{pos, c.l.typeOf(pos, e.TypeOf())}, Builtin: BuiltinSecretJoin, Args: []Expr{x, y}}
		}
		return c.binary(e.Op, pos, x.Type(), x, y, e)
	case *ast.CallExpr:
		return c.call(e)
	case *ast.IndexExpr:
		x := c.expr(e.X)
		return &Index{ExprBase: c.base(e), Kind: c.indexKind(e.Pos(), x.Type()), X: x, Index: c.expr(e.Index)}
	case *ast.FieldExpr:
		return &FieldRef{ExprBase: c.base(e), X: c.expr(e.X), Field: e.Index}
	case *ast.TryExpr:
		return &Try{ExprBase: c.base(e), X: c.expr(e.X), Void: e.Void}
	case *ast.QuestionExpr:
		ret := TVoid
		if c.fn != nil {
			ret = c.fn.Result
		}
		return &Question{ExprBase: c.base(e), X: c.expr(e.X), Ret: ret}
	}
	c.l.internal(e.Pos(), "unexpected expression %T", e)
	return &Const{ExprBase: ExprBase{e.Pos(), TVoid}}
}

// symbolRef lowers a name or path used as a value.
func (c *fnCtx) symbolRef(e ast.Expr, sym *ast.Symbol) Expr {
	if sym == nil {
		c.l.internal(e.Pos(), "unresolved name")
		return &Const{ExprBase: ExprBase{e.Pos(), TVoid}}
	}
	switch sym.Kind {
	case ast.SymLocal:
		if v, ok := c.loopVals[sym]; ok {
			return &Const{ExprBase: ExprBase{e.Pos(), TInt}, Value: IntValue(v)}
		}
		if c.fn == nil {
			c.l.internal(e.Pos(), "local %s outside a function", sym.Name)
		}
		return &LocalRef{ExprBase: c.base(e), Slot: sym.Slot}
	case ast.SymState, ast.SymLocusParam:
		if c.guardParams && sym.Kind == ast.SymLocusParam {
			return &LocalRef{ExprBase: c.base(e), Slot: 1 + sym.Slot}
		}
		if c.locus < 0 {
			c.l.internal(e.Pos(), "state %s outside a locus", sym.Name)
		}
		return &StateRef{ExprBase: c.base(e), Slot: sym.Slot}
	case ast.SymConst:
		v, ok := Value{}, false
		if sym.Const != nil {
			v, ok = c.l.constValue(sym.Const)
		}
		if !ok {
			return &Const{ExprBase: c.base(e)}
		}
		return &Const{ExprBase: ExprBase{e.Pos(), v.Type()}, Value: v, Name: sym.Name}
	case ast.SymVariant:
		return &MakeEnum{ExprBase: c.base(e), Variant: sym.Index}
	}
	c.l.internal(e.Pos(), "%s %s used as a value", sym.Kind, sym.Name)
	return &Const{ExprBase: ExprBase{e.Pos(), TVoid}}
}

func (c *fnCtx) unary(e *ast.UnaryExpr) Expr {
	b := c.base(e)
	if e.Op == ast.Neg {
		// Fold negative literals, which also gives the one literal that
		// only exists negated: -9223372036854775808.
		switch lit := e.X.(type) {
		case *ast.IntLit:
			if lit.Value <= 1<<63 {
				return &Const{ExprBase: ExprBase{e.Pos(), TInt}, Value: IntValue(int64(-lit.Value))}
			}
		case *ast.FloatLit:
			return &Const{ExprBase: ExprBase{e.Pos(), TFloat}, Value: FloatValue(-lit.Value)}
		}
	}
	x := c.expr(e.X)
	u := &Unary{ExprBase: b, X: x}
	switch {
	case e.Op == ast.Not && c.l.kindOf(x.Type()) == KindInt:
		u.Op = NotInt
	case e.Op == ast.Not:
		u.Op = NotBool
	case c.l.kindOf(x.Type()) == KindFloat:
		u.Op = NegFloat
	default:
		u.Op = NegInt
	}
	return u
}

// binary builds a typed binary operation; t is the operands' type.
func (c *fnCtx) binary(op ast.BinaryOp, pos ast.Pos, t TypeRef, x, y Expr, n ast.Node) Expr {
	k := c.l.kindOf(t)
	res := TBool
	var sop BinaryOp = numBinaryOps
	switch op {
	case ast.Eq:
		sop = Eq
	case ast.Ne:
		sop = Ne
	case ast.Lt, ast.Le, ast.Gt, ast.Ge:
		d := BinaryOp(op - ast.Lt)
		switch k {
		case KindInt:
			sop = IntLt + d
		case KindFloat:
			sop = FloatLt + d
		case KindString:
			sop = StrLt + d
		}
	case ast.Add, ast.Sub, ast.Mul, ast.Div, ast.Rem:
		res = t
		d := BinaryOp(op - ast.Add)
		switch k {
		case KindInt:
			sop = IntAdd + d
		case KindFloat:
			sop = FloatAdd + d
		case KindString:
			if op == ast.Add {
				sop = StrConcat
			}
		case KindBytes:
			if op == ast.Add {
				sop = BytesConcat
			}
		case KindList:
			if op == ast.Add {
				sop = ListConcat
			}
		}
	case ast.BitAnd, ast.BitOr, ast.BitXor, ast.Shl, ast.Shr:
		res = t
		if k == KindInt {
			sop = IntAnd + BinaryOp(op-ast.BitAnd)
		}
	}
	if sop == numBinaryOps {
		c.l.internal(n.Pos(), "operator %s on %s", op, k)
		sop = Eq
	}
	return &Binary{ExprBase: ExprBase{pos, res}, Op: sop, X: x, Y: y}
}

func (c *fnCtx) indexKind(pos ast.Pos, t TypeRef) IndexKind {
	switch c.l.kindOf(t) {
	case KindList:
		return IndexList
	case KindMap:
		return IndexMap
	case KindString:
		return IndexString
	case KindBytes:
		return IndexBytes
	}
	c.l.internal(pos, "index of %s", c.l.kindOf(t))
	return IndexList
}

func (c *fnCtx) args(in []ast.Expr) []Expr {
	out := make([]Expr, 0, len(in))
	for _, a := range in {
		out = append(out, c.expr(a))
	}
	return out
}

func (c *fnCtx) call(e *ast.CallExpr) Expr {
	sym := e.Callee()
	b := c.base(e)
	if sym == nil {
		c.l.internal(e.Pos(), "unresolved callee")
		return &Const{ExprBase: b}
	}
	switch sym.Kind {
	case ast.SymFn, ast.SymLocusFn:
		fn := sym.Fn
		if fn == nil {
			break
		}
		if fn.Body == nil { // a @primitive reached through a fn symbol
			return c.primCall(e, b, sym.Name, fn)
		}
		idx, ok := c.l.fnIndex[fn]
		if !ok {
			// A standard library helper written in Hale, lowered on
			// first use.
			idx = c.l.addFunc(&Func{Name: sym.Name, Kind: FuncFn, Locus: -1, Topic: -1, Pos: fn.Name.Pos()})
			c.l.fnIndex[fn] = idx
			c.l.pending = append(c.l.pending, fn)
		}
		return &Call{ExprBase: b, Func: idx, Args: c.args(e.Args)}
	case ast.SymPrim:
		if sym.Fn == nil {
			break
		}
		return c.primCall(e, b, sym.Name, sym.Fn)
	case ast.SymBuiltin:
		return c.builtin(e, b, sym.Builtin)
	case ast.SymVariant:
		return &MakeEnum{ExprBase: b, Variant: sym.Index, Args: c.args(e.Args)}
	}
	c.l.internal(e.Pos(), "call of %s %s", sym.Kind, sym.Name)
	return &Const{ExprBase: b}
}

// pureBuiltins are the pure standard library primitives the virtual
// machine computes itself.
var pureBuiltins = map[string]Builtin{
	"std::json::encode": BuiltinJSONEncode,
	"std::math::sqrt":   BuiltinSqrt,
	"std::math::floor":  BuiltinFloor,
	"std::math::ceil":   BuiltinCeil,
	"std::math::pow":    BuiltinPow,
	"std::math::log":    BuiltinLog,
	"std::math::exp":    BuiltinExp,
	"std::math::sin":    BuiltinSin,
	"std::math::cos":    BuiltinCos,
	"std::math::tan":    BuiltinTan,
	"std::math::asin":   BuiltinAsin,
	"std::math::acos":   BuiltinAcos,
	"std::math::atan":   BuiltinAtan,
	"std::math::atan2":  BuiltinAtan2,
	"std::math::hypot":  BuiltinHypot,
}

func (c *fnCtx) primCall(e *ast.CallExpr, b ExprBase, name string, decl *ast.FnDecl) Expr {
	if bi, ok := pureBuiltins[name]; ok {
		return &CallBuiltin{ExprBase: b, Builtin: bi, Args: c.args(e.Args)}
	}
	cp := &CallPrim{ExprBase: b, Prim: c.l.prim(name, decl), Name: name, Args: c.args(e.Args)}
	c.l.primCalls = append(c.l.primCalls, cp)
	return cp
}

// simpleBuiltins map a builtin name to its id when the name alone decides.
var simpleBuiltins = map[string]Builtin{
	"print": BuiltinPrint, "str": BuiltinStr, "push": BuiltinPush, "pop": BuiltinPop, "insert": BuiltinInsert,
	"remove": BuiltinRemove, "has": BuiltinHas, "keys": BuiltinKeys, "values": BuiltinValues, "delete": BuiltinDelete,
	"sort": BuiltinSort, "find": BuiltinFind, "split": BuiltinSplit, "join": BuiltinJoin, "trim": BuiltinTrim,
	"upper": BuiltinUpper, "lower": BuiltinLower, "starts_with": BuiltinStartsWith, "ends_with": BuiltinEndsWith,
	"replace": BuiltinReplace, "assert": BuiltinAssert, "panic": BuiltinPanic,
	"unwrap": BuiltinUnwrap, "unwrap_or": BuiltinUnwrapOr, "is_some": BuiltinIsSome, "is_none": BuiltinIsNone,
	"is_ok": BuiltinIsOk, "is_err": BuiltinIsErr,
}

// builtin resolves an overloaded builtin by the type of its first argument.
func (c *fnCtx) builtin(e *ast.CallExpr, b ExprBase, name string) Expr {
	if name == "format" {
		return c.format(e, b)
	}
	args := c.args(e.Args)
	if bi, ok := simpleBuiltins[name]; ok {
		return &CallBuiltin{ExprBase: b, Builtin: bi, Args: args}
	}
	if bi, ok := pureBuiltins[name]; ok {
		return &CallBuiltin{ExprBase: b, Builtin: bi, Args: args}
	}
	if bi, ok := jsonBuiltins[name]; ok {
		return &CallBuiltin{ExprBase: b, Builtin: bi, Args: append(args, c.typeCarrier(e, b))}
	}
	if len(args) == 0 {
		c.l.internal(e.Pos(), "builtin %s without arguments", name)
		return &Const{ExprBase: b}
	}
	k := c.l.kindOf(args[0].Type())
	bi := BuiltinInvalid
	switch name {
	case "int":
		switch k {
		case KindInt:
			return args[0] // int(i) is i
		case KindFloat:
			bi = BuiltinIntOfFloat
		case KindString:
			bi = BuiltinIntOfString
		}
	case "float":
		switch k {
		case KindFloat:
			return args[0]
		case KindInt:
			bi = BuiltinFloatOfInt
		case KindString:
			bi = BuiltinFloatOfString
		}
	case "len":
		switch k {
		case KindList:
			bi = BuiltinLenList
		case KindMap:
			bi = BuiltinLenMap
		case KindString, KindBytes:
			bi = BuiltinLenStr
		}
	case "slice":
		switch k {
		case KindList:
			bi = BuiltinSliceList
		case KindString:
			bi = BuiltinSliceStr
		case KindBytes:
			bi = BuiltinSliceBytes
		}
	case "contains":
		switch k {
		case KindString:
			bi = BuiltinContainsStr
		case KindList:
			bi = BuiltinContainsList
		}
	case "get":
		switch k {
		case KindMap:
			bi = BuiltinGetMap
		case KindList:
			bi = BuiltinGetList
		}
		// The None of the result type carries the type the builtin
		// needs to build Some(v).
		args = append(args, &MakeEnum{ExprBase: b, Variant: 1})
	case "abs", "min", "max":
		off := map[string]Builtin{"abs": BuiltinAbsInt, "min": BuiltinMinInt, "max": BuiltinMaxInt}[name]
		switch k {
		case KindInt:
			bi = off
		case KindFloat:
			bi = off + 1
		}
	}
	if bi == BuiltinInvalid {
		c.l.internal(e.Pos(), "builtin %s on %s", name, k)
		return &Const{ExprBase: b}
	}
	return &CallBuiltin{ExprBase: b, Builtin: bi, Args: args}
}

// jsonBuiltins are the std::json builtins that build an Option or a
// Result: each takes a hidden last argument of its result type (see
// typeCarrier).
var jsonBuiltins = map[string]Builtin{
	"std::json::parse": BuiltinJSONParse, "std::json::get": BuiltinJSONGet, "std::json::at": BuiltinJSONAt,
	"std::json::as_str": BuiltinJSONAsStr, "std::json::as_num": BuiltinJSONAsNum,
	"std::json::as_bool": BuiltinJSONAsBool, "std::json::as_arr": BuiltinJSONAsArr,
	"std::json::as_obj": BuiltinJSONAsObj, "std::json::decode": BuiltinJSONDecode,
}

// typeCarrier is a value of the call's result type that carries that type
// (and with it the whole type graph decode reads into) to the builtin: None
// for an Option, Err(Error { kind: "", message: "" }) for a Result.
func (c *fnCtx) typeCarrier(e *ast.CallExpr, b ExprBase) Expr {
	t := e.TypeOf()
	if t.IsOption() {
		return &MakeEnum{ExprBase: b, Variant: 1}
	}
	errT := c.l.typeOf(e.Pos(), t.Variants[1].Fields[0])
	empty := func() Expr { return &Const{ExprBase: ExprBase{At: b.At, Ty: TString}, Value: Value{Kind: KindString}} }
	errV := &MakeStruct{ExprBase: ExprBase{At: b.At, Ty: errT}, Fields: []Expr{empty(), empty()}}
	return &MakeEnum{ExprBase: b, Variant: 1, Args: []Expr{errV}}
}

// isSecretType reports whether t is the built-in secret type, whose `+`
// joins parts (BuiltinSecretJoin) rather than bytes.
func isSecretType(t *ast.Type) bool {
	return t != nil && t.Kind == ast.Struct && t.Name == check.SecretTypeName
}
