package check

import (
	"fmt"
	"math"
	"strings"

	"github.com/hale-lang/hale/lang/ast"
)

// setFile makes f the current file: in a standard library file the
// module's own names are visible unqualified.
func (c *checker) setFile(f *ast.File) {
	c.module = ""
	if f != nil && f.Stdlib {
		c.module = f.Module
	}
}

// signatures resolves the declared types of consts, fns and loci and
// checks annotations, so that bodies can be checked in any order.
func (c *checker) signatures() {
	for _, d := range c.decls {
		c.setFile(d.file)
		switch decl := d.decl.(type) {
		case *ast.ConstDecl:
			t := c.typeOf(decl.Type)
			if decl.Name != nil && decl.Name.Sym != nil {
				decl.Name.Sym.Type = t
			}
			switch t.Kind {
			case ast.Int, ast.Float, ast.Bool, ast.String, ast.Bytes, ast.Invalid:
			default:
				c.errorf(decl.Type.Pos(), "E0319", "constant type must be int, float, bool, string or bytes, not %s", t)
			}
		case *ast.FnDecl:
			c.annotations(decl.Annotations, "fn", d.file)
			c.signature(decl)
			c.checkBodyPresence(decl, d.file)
		case *ast.LocusDecl:
			c.locusSignature(decl, d.file)
		}
	}
	c.module = ""
}

// signature computes the Func type of fn into fn.Sym.Type.
func (c *checker) signature(fn *ast.FnDecl) {
	ft := &ast.Type{Kind: ast.Func, Result: ast.VoidType}
	for _, p := range fn.Params {
		if p == nil {
			ft.Params = append(ft.Params, ast.InvalidType)
			continue
		}
		ft.Params = append(ft.Params, c.typeOf(p.Type))
	}
	if fn.Result != nil {
		ft.Result = c.typeOf(fn.Result)
	}
	fn.Sym.Type = ft
}

func fnName(fn *ast.FnDecl) string {
	if fn.Name == nil {
		return "?"
	}
	return fn.Name.Name
}

// checkBodyPresence enforces that only standard library @primitive fns
// have no body, and that they indeed have none.
func (c *checker) checkBodyPresence(fn *ast.FnDecl, f *ast.File) {
	prim := false
	for _, a := range fn.Annotations {
		if a != nil && a.Name != nil && a.Name.Name == "primitive" {
			prim = true
		}
	}
	pos := fn.Pos()
	if fn.Name != nil {
		pos = fn.Name.Pos()
	}
	switch {
	case fn.Body == nil && !(f.Stdlib && prim):
		c.errorf(pos, "E0605", "fn %q has no body", fnName(fn))
	case fn.Body != nil && prim && f.Stdlib:
		c.errorf(pos, "E0605", "@primitive fn %q must not have a body", fnName(fn))
	}
}

// annotations checks the annotations of a declaration of the given kind
// ("fn", "locus fn" or "locus") and returns the @budget step count.
func (c *checker) annotations(anns []*ast.Annotation, target string, f *ast.File) int64 {
	var budget int64
	seen := map[string]*ast.Annotation{}
	for _, a := range anns {
		if a == nil || a.Name == nil {
			continue
		}
		name := a.Name.Name
		pos := a.Pos()
		if prev := seen[name]; prev != nil {
			c.errorf(pos, "E0604", "duplicate annotation @%s (first at %s)", name, prev.Pos())
			continue
		}
		seen[name] = a
		switch name {
		case "deterministic":
			if target != "fn" && target != "locus fn" {
				c.errorf(pos, "E0602", "@deterministic applies only to fns, not to a %s", target)
			} else if len(a.Args) > 0 {
				c.errorf(pos, "E0603", "@deterministic takes no arguments")
			}
		case "budget":
			if target != "locus" {
				c.errorf(pos, "E0602", "@budget applies only to loci, not to a %s", target)
				continue
			}
			budget = c.budgetSteps(a, f)
		case "primitive":
			switch {
			case f == nil || !f.Stdlib:
				c.errorf(pos, "E0602", "@primitive is only allowed in the standard library")
			case target != "fn":
				c.errorf(pos, "E0602", "@primitive applies only to top-level fns, not to a %s", target)
			default:
				c.primitiveArgs(a)
			}
		default:
			c.errorf(pos, "E0601", "unknown annotation @%s (known: @deterministic, @budget)", name)
		}
	}
	return budget
}

// budgetSteps checks `@budget(steps: N)` and returns N (0 after an error,
// or when N is a constant expression, which budgets reads later).
func (c *checker) budgetSteps(a *ast.Annotation, f *ast.File) int64 {
	if len(a.Args) != 1 || a.Args[0] == nil || a.Args[0].Name == nil || a.Args[0].Name.Name != "steps" {
		c.errorf(a.Pos(), "E0603", "@budget takes one argument: @budget(steps: N)")
		return 0
	}
	pos := a.Args[0].Pos()
	if a.Args[0].Value != nil {
		pos = a.Args[0].Value.Pos()
	}
	lit, ok := a.Args[0].Value.(*ast.IntLit)
	switch {
	case ok && lit != nil && lit.Value == 0:
		c.errorf(pos, "E0603", "@budget steps must be a positive integer, got 0")
		return 0
	case ok && lit != nil && lit.Value > math.MaxInt64:
		c.errorf(pos, "E0603", "@budget steps overflows int")
		return 0
	case ok && lit != nil:
		lit.SetType(ast.IntType)
		return int64(lit.Value)
	case a.Args[0].Value == nil:
		c.errorf(pos, "E0603", "@budget steps must be a positive integer")
		return 0
	}
	c.pendingBudgets = append(c.pendingBudgets, pendingBudget{arg: a.Args[0], file: f})
	return 0
}

// pendingBudget is an @budget argument given as a constant expression
// (`@budget(steps: LIMIT)`, `@budget(steps: 10 * 1000)`).
type pendingBudget struct {
	arg   *ast.AnnArg
	file  *ast.File
	locus *ast.LocusDecl // set by locusSignature
}

// budgets reads the @budget arguments that are constant expressions, now
// that the consts they may name are checked: each must be an int constant
// expression whose value is positive.
func (c *checker) budgets() {
	for _, b := range c.pendingBudgets {
		c.setFile(b.file)
		before := len(c.errs)
		c.fn = &funcCtx{name: "@budget", result: ast.VoidType}
		c.expectValue(&b.arg.Value, ast.IntType, "in @budget")
		c.fn = nil
		if len(c.errs) > before {
			continue
		}
		v, problem := constInt(b.arg.Value, 0)
		switch {
		case problem != "":
			c.errorf(b.arg.Value.Pos(), "E0603", "@budget steps %s", problem)
		case v <= 0:
			c.errorf(b.arg.Value.Pos(), "E0603", "@budget steps must be a positive integer, got %d", v)
		case b.locus != nil:
			b.locus.Budget = v
		}
	}
	c.module = ""
}

// constInt evaluates an int constant expression (literals, consts and
// + - * / % and unary minus), or says what keeps it from being one:
// something that is not constant, an overflow, a division by zero. depth
// guards against a const cycle, which consts reports.
func constInt(e ast.Expr, depth int) (int64, string) {
	const notConst = "must be a constant expression (literals, consts and operators)"
	if depth > 100 {
		return 0, notConst
	}
	var sym *ast.Symbol
	switch e := e.(type) {
	case *ast.IntLit:
		if e.Value > math.MaxInt64 {
			return 0, "overflows int"
		}
		return int64(e.Value), ""
	case *ast.Name:
		if e.Ident != nil {
			sym = e.Ident.Sym
		}
	case *ast.PathExpr:
		sym = e.Sym
	case *ast.UnaryExpr:
		x, problem := constInt(e.X, depth+1)
		switch {
		case problem != "":
			return 0, problem
		case e.Op == ast.Not:
			return ^x, ""
		case e.Op != ast.Neg:
			return 0, notConst
		case x == math.MinInt64:
			return 0, "overflows int"
		}
		return -x, ""
	case *ast.BinaryExpr:
		x, problem := constInt(e.X, depth+1)
		if problem != "" {
			return 0, problem
		}
		y, problem := constInt(e.Y, depth+1)
		if problem != "" {
			return 0, problem
		}
		return intOp(e.Op, x, y)
	}
	if sym == nil || sym.Kind != ast.SymConst || sym.Const == nil {
		return 0, notConst
	}
	return constInt(sym.Const.Value, depth+1)
}

// intOp applies an int operator, or says why it cannot.
func intOp(op ast.BinaryOp, x, y int64) (int64, string) {
	const overflow = "overflows int"
	switch op {
	case ast.Add:
		if s := x + y; (s^x)&(s^y) >= 0 {
			return s, ""
		}
		return 0, overflow
	case ast.Sub:
		if s := x - y; (x^y)&(s^x) >= 0 {
			return s, ""
		}
		return 0, overflow
	case ast.Mul:
		if x == 0 || y == 0 {
			return 0, ""
		}
		p := x * y
		if p/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
			return 0, overflow
		}
		return p, ""
	case ast.Div, ast.Rem:
		switch {
		case y == 0:
			return 0, "divides by zero"
		case y == -1 && x == math.MinInt64:
			return 0, overflow
		case op == ast.Div:
			return x / y, ""
		}
		return x % y, ""
	case ast.BitAnd:
		return x & y, ""
	case ast.BitOr:
		return x | y, ""
	case ast.BitXor:
		return x ^ y, ""
	case ast.Shl, ast.Shr:
		if y < 0 || y > 63 {
			return 0, fmt.Sprintf("shifts by %d (the count must be 0 to 63)", y)
		}
		if op == ast.Shl {
			return x << y, ""
		}
		return x >> y, ""
	}
	return 0, "must be an int constant expression"
}

// primitiveArgs checks `@primitive` or `@primitive(effect: "name")`.
func (c *checker) primitiveArgs(a *ast.Annotation) {
	if len(a.Args) == 0 {
		return
	}
	arg := a.Args[0]
	if len(a.Args) > 1 || arg == nil || arg.Name == nil || arg.Name.Name != "effect" {
		c.errorf(a.Pos(), "E0603", `@primitive takes one argument: @primitive(effect: "name")`)
		return
	}
	lit, ok := arg.Value.(*ast.StringLit)
	if !ok || lit == nil {
		pos := arg.Pos()
		if arg.Value != nil {
			pos = arg.Value.Pos()
		}
		c.errorf(pos, "E0603", "@primitive effect must be a string literal")
		return
	}
	lit.SetType(ast.StringType)
}

// locusSignature declares the members of a locus (parameters, state and
// fns), assigns instance slots, reads @budget and resolves handler topics.
func (c *checker) locusSignature(l *ast.LocusDecl, f *ast.File) {
	pending := len(c.pendingBudgets)
	l.Budget = c.annotations(l.Annotations, "locus", f)
	for i := pending; i < len(c.pendingBudgets); i++ {
		c.pendingBudgets[i].locus = l
	}
	ctx := &locusCtx{decl: l, members: map[string]*ast.Symbol{}, initState: -1}
	c.loci[l] = ctx
	lname := "?"
	if l.Name != nil {
		lname = l.Name.Name
	}
	add := func(id *ast.Ident, sym *ast.Symbol) {
		if id == nil {
			return
		}
		id.Sym = sym
		sym.Pos = id.Pos()
		sym.Name = lname + "." + id.Name
		sym.Locus = l
		if prev := ctx.members[id.Name]; prev != nil {
			c.errorf(id.Pos(), "E0202", "duplicate declaration of %q in locus %q (first declared at %s)", id.Name, lname, prev.Pos)
			return
		}
		if id.Name == "_" {
			return
		}
		ctx.members[id.Name] = sym
	}
	for i, p := range l.Params {
		var t *ast.Type = ast.InvalidType
		if p != nil {
			t = c.typeOf(p.Type)
		}
		ctx.params = append(ctx.params, t)
		if p != nil {
			add(p.Name, &ast.Symbol{Kind: ast.SymLocusParam, Slot: i, Type: t})
		}
	}
	for j, s := range l.State {
		var t *ast.Type = ast.InvalidType
		if s != nil && s.Type != nil {
			t = c.typeOf(s.Type)
		}
		// A state variable without a written type gets its initialiser's
		// type in locusBody, before any handler or fn body is checked.
		ctx.state = append(ctx.state, t)
		if s != nil {
			add(s.Name, &ast.Symbol{Kind: ast.SymState, Slot: len(l.Params) + j, Type: t, Mutable: true})
		}
	}
	l.NumSlots = len(l.Params) + len(l.State)
	for _, fn := range l.Fns {
		if fn == nil {
			continue
		}
		c.annotations(fn.Annotations, "locus fn", f)
		fn.Sym = &ast.Symbol{Kind: ast.SymLocusFn, Fn: fn, Type: &ast.Type{Kind: ast.Func, Result: ast.VoidType}}
		c.signature(fn)
		if fn.Body == nil {
			c.errorf(fn.Pos(), "E0605", "fn %q has no body", fnName(fn))
		}
		add(fn.Name, fn.Sym)
	}
	// Handlers: one per topic, one on start.
	var start *ast.Handler
	byTopic := map[*ast.Symbol]*ast.Handler{}
	for _, h := range l.Handlers {
		if h == nil {
			continue
		}
		if h.Start {
			if start != nil {
				c.errorf(h.Pos(), "E0502", "duplicate handler on start in locus %q (first at %s)", lname, start.Pos())
			} else {
				start = h
			}
			continue
		}
		if h.Topic == nil {
			continue
		}
		sym := c.topic(h.Topic)
		if sym == nil {
			continue
		}
		if prev := byTopic[sym]; prev != nil {
			if prev.Shared != h.Shared {
				c.errorf(h.Pos(), "E0531", "locus %q has both a shared and an ordinary handler for topic %q (first at %s): an instance either joins the work group or gets every message", lname, h.Topic.Name, prev.Pos())
				continue
			}
			c.errorf(h.Pos(), "E0502", "duplicate handler for topic %q in locus %q (first at %s)", h.Topic.Name, lname, prev.Pos())
			continue
		}
		byTopic[sym] = h
	}
}

// topic resolves a name that must be a topic (handler, publish, bind).
func (c *checker) topic(id *ast.Ident) *ast.Symbol {
	sym := c.lookupTop(id.Name)
	if sym == nil {
		c.errorf(id.Pos(), "E0201", "undefined topic %q", id.Name)
		c.endAt(id.End())
		c.suggest(id.Name, c.topLevelOf(ast.SymTopic))
		return nil
	}
	id.Sym = sym
	if sym.Kind != ast.SymTopic {
		c.errorf(id.Pos(), "E0501", "%s is not a topic", describe(sym))
		return nil
	}
	return sym
}

// consts checks every constant initialiser and reports cycles among them.
func (c *checker) consts() {
	deps := map[*ast.ConstDecl][]*ast.ConstDecl{}
	var order []*ast.ConstDecl
	for _, d := range c.decls {
		decl, ok := d.decl.(*ast.ConstDecl)
		if !ok {
			continue
		}
		c.setFile(d.file)
		order = append(order, decl)
		want := ast.InvalidType
		name := "?"
		if decl.Name != nil && decl.Name.Sym != nil {
			want = decl.Name.Sym.Type
			name = decl.Name.Name
		}
		c.fn = &funcCtx{name: name, result: ast.VoidType}
		c.expectValue(&decl.Value, want, fmt.Sprintf("in constant %q", name))
		c.fn = nil
		var ds []*ast.ConstDecl
		c.constExpr(decl.Value, &ds)
		deps[decl] = ds
	}
	c.module = ""

	// Depth-first search; a const met again while on the stack closes a cycle.
	const (
		unvisited = iota
		active
		done
	)
	state := map[*ast.ConstDecl]int{}
	var stack []*ast.ConstDecl
	var visit func(d *ast.ConstDecl)
	visit = func(d *ast.ConstDecl) {
		state[d] = active
		stack = append(stack, d)
		for _, dep := range deps[d] {
			switch state[dep] {
			case unvisited:
				visit(dep)
			case active:
				i := len(stack) - 1
				for i > 0 && stack[i] != dep {
					i--
				}
				var names []string
				for _, s := range stack[i:] {
					names = append(names, s.Name.Name)
				}
				names = append(names, dep.Name.Name)
				c.errorf(dep.Name.Pos(), "E0320", "constant %q refers to itself: %s", dep.Name.Name, strings.Join(names, " -> "))
			}
		}
		stack = stack[:len(stack)-1]
		state[d] = done
	}
	for _, d := range order {
		if state[d] == unvisited && d.Name != nil {
			visit(d)
		}
	}
}

// constExpr reports the parts of a constant initialiser that are not
// constant and collects the constants it refers to.
func (c *checker) constExpr(e ast.Expr, deps *[]*ast.ConstDecl) {
	switch e := e.(type) {
	case nil, *ast.IntLit, *ast.FloatLit, *ast.StringLit, *ast.BytesLit, *ast.BoolLit:
	case *ast.Name:
		c.constRef(e.Ident.Sym, e.Pos(), e.Ident.Name, deps)
	case *ast.PathExpr:
		c.constRef(e.Sym, e.Pos(), e.Joined(), deps)
	case *ast.UnaryExpr:
		c.constExpr(e.X, deps)
	case *ast.BinaryExpr:
		c.constExpr(e.X, deps)
		c.constExpr(e.Y, deps)
	default:
		c.errorf(e.Pos(), "E0318", "constant initialiser must be a constant expression (literals, constants and operators)")
	}
}

func (c *checker) constRef(sym *ast.Symbol, pos ast.Pos, name string, deps *[]*ast.ConstDecl) {
	if sym == nil {
		return // undefined: already reported
	}
	if sym.Kind != ast.SymConst {
		c.errorf(pos, "E0318", "%q is not a constant; a constant initialiser may use only literals, constants and operators", name)
		return
	}
	if sym.Const != nil && sym.Const.Name != nil {
		*deps = append(*deps, sym.Const)
	}
}

// bodies checks the body of every fn and locus.
func (c *checker) bodies() {
	for _, d := range c.decls {
		c.setFile(d.file)
		switch decl := d.decl.(type) {
		case *ast.FnDecl:
			c.fnBody(decl)
		case *ast.LocusDecl:
			c.locusBody(decl)
		}
	}
	c.module = ""
}

// fnBody checks a fn: parameters take slots 0..n-1 and share the scope of
// the body's top-level statements.
func (c *checker) fnBody(fn *ast.FnDecl) {
	ft := fn.Sym.Type
	c.fn = &funcCtx{name: fmt.Sprintf("fn %q", fnName(fn)), result: ft.Result}
	c.scope = nil
	c.enter()
	for i, p := range fn.Params {
		if p == nil {
			c.hidden(1)
			continue
		}
		c.declareLocal(p.Name, ft.Params[i], false, "a parameter")
	}
	if fn.Body != nil {
		c.stmts(fn.Body.Stmts)
		if ft.Result.Kind != ast.Void && !terminates(fn.Body) {
			c.errorf(closingBrace(fn.Body, fn), "E0406", "missing return at end of %q", fnName(fn))
		}
	}
	fn.NumSlots = c.fn.slots
	c.leave()
	c.fn = nil
}

// closingBrace is the position of a block's closing brace (or of the fn's
// name when the block has no end position).
func closingBrace(b *ast.Block, fn *ast.FnDecl) ast.Pos {
	end := b.End()
	if end.IsValid() && end.Col > 1 {
		end.Col--
		end.Offset--
		return end
	}
	if fn.Name != nil {
		return fn.Name.Pos()
	}
	return fn.Pos()
}

// locusBody checks the state initialisers, handlers and fns of a locus.
// inferState types a state variable declared without a type from its
// initialiser, `var n = 0;`. An empty list or map says nothing about its
// elements, so it needs the type written.
func (c *checker) inferState(s *ast.StateVar, name string) *ast.Type {
	if isEmptyLit(s.Value) {
		lit, eg := "list", "var "+name+": [int] = [];"
		if _, ok := s.Value.(*ast.MapLit); ok {
			lit, eg = "map", "var "+name+": {string: int} = {};"
		}
		c.errorf(s.Value.Pos(), "E0304", "cannot infer the type of state %q from an empty %s; write the type, e.g. %s", name, lit, eg)
		return ast.InvalidType
	}
	return c.value(&s.Value, nil)
}

func (c *checker) locusBody(l *ast.LocusDecl) {
	ctx := c.loci[l]
	if ctx == nil {
		return
	}
	c.locus = ctx
	defer func() { c.locus = nil }()

	c.fn = &funcCtx{name: "state initialiser", result: ast.VoidType}
	for j, s := range l.State {
		if s == nil {
			continue
		}
		ctx.initState = j
		c.scope = nil
		name := "?"
		if s.Name != nil {
			name = s.Name.Name
		}
		if s.Type == nil {
			ctx.state[j] = c.inferState(s, name)
			if s.Name != nil && s.Name.Sym != nil {
				s.Name.Sym.Type = ctx.state[j]
			}
			continue
		}
		c.expectValue(&s.Value, ctx.state[j], fmt.Sprintf("in initialiser of state %q", name))
	}
	ctx.initState = -1
	l.InitSlots = c.fn.slots

	for _, h := range l.Handlers {
		if h == nil {
			continue
		}
		name := "on start"
		if !h.Start && h.Topic != nil {
			name = "on " + h.Topic.Name
		}
		if h.Guard != nil {
			c.handlerGuard(l, ctx, h, name)
		}
		c.fn = &funcCtx{name: fmt.Sprintf("handler %q", name), result: ast.VoidType}
		c.scope = nil
		c.enter()
		if !h.Start && h.Param != nil {
			t := ast.InvalidType
			if h.Topic != nil && h.Topic.Sym != nil && h.Topic.Sym.Kind == ast.SymTopic {
				t = h.Topic.Sym.Type
			}
			c.declareLocal(h.Param, t, false, "a handler parameter")
		}
		if h.Body != nil {
			c.stmts(h.Body.Stmts)
		}
		h.NumSlots = c.fn.slots
		c.leave()
	}
	for _, fn := range l.Fns {
		if fn != nil {
			c.fnBody(fn)
		}
	}
	c.fn = nil
}

// handlerGuard checks the guard of `on T(x) if guard`: a bool expression
// in its own frame (the payload in slot 0, the locus parameters in the
// slots after it), which may read the payload, the parameters and consts
// and call fns; that the fns it calls have no effects is the effects
// package's rule (E0706).
func (c *checker) handlerGuard(l *ast.LocusDecl, ctx *locusCtx, h *ast.Handler, name string) {
	c.fn = &funcCtx{name: fmt.Sprintf("guard of %q", name), result: ast.BoolType}
	c.scope = nil
	c.enter()
	t := ast.InvalidType
	if h.Topic != nil && h.Topic.Sym != nil && h.Topic.Sym.Kind == ast.SymTopic {
		t = h.Topic.Sym.Type
	}
	if h.Param != nil {
		h.GuardParam = c.declareLocal(h.Param, t, false, "a handler parameter")
	}
	c.hidden(len(l.Params)) // the parameters' copies
	ctx.guard = true
	c.expectValue(&h.Guard, ast.BoolType, fmt.Sprintf("in the guard of %s (a guard is a bool)", name))
	ctx.guard = false
	h.GuardSlots = c.fn.slots
	c.leave()
}

// checkMain checks the main block: it is required, unique, in the entry
// file, and its spawns and binds are well formed.
func (c *checker) checkMain(entry *ast.File) {
	c.module = ""
	c.locus = nil
	c.scope = nil
	if len(c.mains) == 0 {
		if entry != nil {
			c.errorf(ast.Pos{File: entry.Path, Line: 1, Col: 1}, "E0503", "missing main: the entry file %q must declare main { … }", entry.Path)
		}
		return
	}
	var first *ast.MainDecl
	for _, m := range c.mains {
		if m.decl == nil {
			continue
		}
		if m.file != entry && entry != nil {
			c.errorf(m.decl.Pos(), "E0505", "main must be declared in the entry file %q, not in %q", entry.Path, m.file.Path)
		}
		if first != nil {
			c.errorf(m.decl.Pos(), "E0504", "duplicate main (first declared at %s)", first.Pos())
		} else {
			first = m.decl
		}
		c.spawnLoops(m.decl)
		c.spawns(m.decl)
		c.binds(m.decl)
		c.checkNATS(m.decl)
	}
	c.res.Main = first
}

func (c *checker) spawns(m *ast.MainDecl) {
	byLocus := map[*ast.Symbol][]*ast.Spawn{}
	var spawned []*ast.Spawn
	for _, sp := range m.Spawns {
		if sp == nil || sp.Locus == nil {
			continue
		}
		c.fn = &funcCtx{name: "main", result: ast.VoidType}
		c.loopScope(sp.Loops)
		c.spawnIndex(sp)
		sym := c.res.Scope[sp.Locus.Name]
		var params []*ast.Type
		switch {
		case sym == nil:
			c.errorf(sp.Locus.Pos(), "E0201", "undefined locus %q", sp.Locus.Name)
			c.endAt(sp.Locus.End())
			c.suggest(sp.Locus.Name, c.topLevelOf(ast.SymLocus))
		case sym.Kind != ast.SymLocus:
			sp.Locus.Sym = sym
			c.errorf(sp.Locus.Pos(), "E0506", "cannot spawn %s: it is not a locus", describe(sym))
			sym = nil
		default:
			sp.Locus.Sym = sym
			params = c.loci[sym.Locus].params
			switch {
			case len(params) > 0 && !sp.HasArgs:
				c.errorf(sp.Locus.Pos(), "E0507", "locus %q takes %s; write spawn %s(…)", sp.Locus.Name, plural(len(params), "argument"), sp.Locus.Name)
			case len(sp.Args) != len(params):
				c.errorf(sp.Locus.Pos(), "E0507", "locus %q takes %s, got %d", sp.Locus.Name, plural(len(params), "argument"), len(sp.Args))
			}
			if len(sp.Loops) == 0 || sp.As != nil { // a looped spawn without a name is E0521 only
				byLocus[sym] = append(byLocus[sym], sp)
				spawned = append(spawned, sp)
			}
		}
		for i := range sp.Args {
			var want *ast.Type
			if i < len(params) {
				want = params[i]
			}
			c.expectValue(&sp.Args[i], want, fmt.Sprintf("in argument %d of spawn %s", i+1, sp.Locus.Name))
		}
		if p := sp.Placement; p != nil && p.Kind == ast.PlacePool && p.Pool == "" {
			c.errorf(p.Pos(), "E0510", "pool name must not be empty")
		}
		c.fn = nil
		c.scope = nil
	}
	// Two spawns of one locus type need `as`.
	needsAs := map[*ast.Spawn]bool{}
	for _, sp := range spawned {
		group := byLocus[sp.Locus.Sym]
		if sp.As != nil || len(group) < 2 {
			continue
		}
		other := group[0]
		if other == sp {
			other = group[1]
		}
		needsAs[sp] = true
		c.errorf(sp.Pos(), "E0509", "locus %q is spawned more than once, so this spawn needs \"as name\" (other spawn at %s)", sp.Locus.Name, other.Pos())
	}
	instances := map[string]*ast.Spawn{}
	for _, sp := range spawned {
		if needsAs[sp] {
			continue
		}
		name := sp.InstanceName()
		pos := sp.Locus.Pos()
		if sp.As != nil {
			pos = sp.As.Pos()
		}
		if prev := instances[name]; prev != nil {
			c.errorf(pos, "E0508", "duplicate instance name %q (first spawned at %s)", name, prev.Pos())
			continue
		}
		instances[name] = sp
	}
}

// loopScope makes the variables of loops (outermost first) the only
// local names in scope, for a spawn's arguments or an inner loop's bounds.
func (c *checker) loopScope(loops []*ast.SpawnLoop) {
	c.scope = nil
	for _, l := range loops {
		if l.Var == nil || l.Var.Sym == nil {
			continue
		}
		c.enter()
		c.scope.names[l.Var.Name] = l.Var.Sym
	}
}

// maxSpawnLoopDepth bounds how deeply spawn loops nest, so a hostile
// program cannot make the checker recurse without end.
const maxSpawnLoopDepth = 16

// spawnLoops checks each spawn loop's bounds (int, constant: literals,
// consts and operators) and declares its variable, outer loops first.
func (c *checker) spawnLoops(m *ast.MainDecl) {
	for _, l := range m.Loops {
		if l == nil || l.Var == nil {
			continue
		}
		var outer []*ast.SpawnLoop
		for o := l.Outer; o != nil; o = o.Outer {
			outer = append([]*ast.SpawnLoop{o}, outer...)
		}
		if len(outer) == maxSpawnLoopDepth {
			c.errorf(l.Pos(), "E0520", "spawn loops nest more than %d deep", maxSpawnLoopDepth)
		}
		c.fn = &funcCtx{name: "main", result: ast.VoidType}
		c.loopScope(outer)
		for _, bound := range []*ast.Expr{&l.Lo, &l.Hi} {
			c.expectValue(bound, ast.IntType, "in a spawn loop's bound")
			c.loopBound(*bound)
		}
		for _, o := range outer {
			if o.Var.Name == l.Var.Name && l.Var.Name != "_" {
				c.errorf(l.Var.Pos(), "E0202", "duplicate declaration of %q (first declared at %s)", l.Var.Name, o.Var.Pos())
			}
		}
		sym := &ast.Symbol{Kind: ast.SymLocal, Name: l.Var.Name, Pos: l.Var.Pos(), Type: ast.IntType}
		l.Var.Sym = sym
		c.localKind[sym] = "a spawn loop variable"
		c.fn = nil
		c.scope = nil
	}
}

// loopBound reports the parts of a spawn loop's bound that are not
// constant: the loop is unrolled at compile time.
func (c *checker) loopBound(e ast.Expr) {
	switch e := e.(type) {
	case nil, *ast.IntLit, *ast.FloatLit, *ast.StringLit, *ast.BytesLit, *ast.BoolLit: // wrong types are E0301
	case *ast.Name:
		c.loopBoundRef(e.Ident.Sym, e.Pos(), e.Ident.Name)
	case *ast.PathExpr:
		c.loopBoundRef(e.Sym, e.Pos(), e.Joined())
	case *ast.UnaryExpr:
		c.loopBound(e.X)
	case *ast.BinaryExpr:
		c.loopBound(e.X)
		c.loopBound(e.Y)
	default:
		c.errorf(e.Pos(), "E0520", "a spawn loop's bound must be constant (literals, consts and operators)")
	}
}

func (c *checker) loopBoundRef(sym *ast.Symbol, pos ast.Pos, name string) {
	switch {
	case sym == nil, sym.Kind == ast.SymConst:
	case c.localKind[sym] == "a spawn loop variable":
		c.errorf(pos, "E0520", "loop variable %q may appear only in spawn arguments and instance name indices, not in a bound", name)
	default:
		c.errorf(pos, "E0520", "a spawn loop's bound must be constant (literals, consts and operators); %q is not a constant", name)
	}
}

// spawnIndex checks a spawn's instance name against its loops: inside a
// loop the name is required and its indices are the loop variables,
// outermost first, each once; outside a loop there are no indices.
func (c *checker) spawnIndex(sp *ast.Spawn) {
	if len(sp.Loops) == 0 {
		if len(sp.Index) > 0 {
			c.errorf(sp.Index[0].Pos(), "E0522", "an instance name has indices only inside a spawn loop")
		}
		return
	}
	want := ""
	for _, l := range sp.Loops {
		if l.Var != nil {
			want += "[" + l.Var.Name + "]"
		}
	}
	if sp.As == nil {
		c.errorf(sp.Pos(), "E0521", "a spawn inside a spawn loop needs an indexed name: write \"as NAME%s\"", want)
		return
	}
	fix := sp.As.Name + want
	seen := map[string]bool{}
	for k, ix := range sp.Index {
		switch {
		case seen[ix.Name]:
			c.errorf(ix.Pos(), "E0522", "index %q is repeated in instance name %q; write \"as %s\"", ix.Name, sp.As.Name, fix)
			return
		case k < len(sp.Loops) && sp.Loops[k].Var != nil && ix.Name == sp.Loops[k].Var.Name:
			ix.Sym = sp.Loops[k].Var.Sym
		default:
			c.errorf(ix.Pos(), "E0522", "the indices of instance name %q must be the enclosing loop variables, outermost first; write \"as %s\"", sp.As.Name, fix)
			return
		}
		seen[ix.Name] = true
	}
	if len(sp.Index) < len(sp.Loops) {
		c.errorf(sp.As.Pos(), "E0522", "instance name %q needs one index per enclosing spawn loop; write \"as %s\"", sp.As.Name, fix)
	}
}

func (c *checker) binds(m *ast.MainDecl) {
	var stdin *ast.Bind
	for _, b := range m.Binds {
		if b == nil {
			continue
		}
		if b.Loop != nil {
			c.errorf(b.Pos(), "E0523", "bind may not stand inside a spawn loop (bind stdin once, at the top of main)")
		}
		if b.NATS != nil {
			continue // checkNATS
		}
		if stdin != nil {
			c.errorf(b.Pos(), "E0512", "stdin is already bound (at %s)", stdin.Pos())
		} else {
			stdin = b
		}
		if b.Topic == nil {
			continue
		}
		sym := c.topic(b.Topic)
		if sym == nil {
			continue
		}
		t := sym.Type
		if len(t.Fields) != 1 || t.Fields[0].Type.Kind != ast.String {
			c.errorf(b.Topic.Pos(), "E0511", "cannot bind stdin to %q: an ingress topic needs exactly one field, of type string", b.Topic.Name)
		}
	}
}
