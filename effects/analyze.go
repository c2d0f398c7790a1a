package effects

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hale-lang/hale/lang"
	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/diag"
	"github.com/hale-lang/hale/stdlib"
)

// unit is one node of the call graph: a fn or handler body, or an
// expression evaluated outside any handler (state initialisers, spawn
// arguments, const values), which is only ever a caller.
type unit struct {
	name   string      // in call paths and messages: "score", "Ledger.report"
	fn     *ast.FnDecl // nil unless the unit is a fn
	calls  []Call      // direct calls, source order
	prims  []primCall  // primitive and builtin calls with an effect, source order
	local  []string    // effects of its own calls and publishes
	callee []*unit     // fn units called, one per call site, source order
	caller []*unit     // units calling this one (deduplicated)
	set    Set         // the fixpoint result
}

// primCall is a call of a primitive (or builtin) that has an effect.
type primCall struct {
	name   string
	effect stdlib.Effect
	pos    ast.Pos
}

// analyzer holds the state of one Analyze call.
type analyzer struct {
	info    *Info
	diags   diag.List
	units   []*unit // every unit, in creation order
	pending []*unit // fn units created but not yet collected
	bodies  map[*unit]ast.Node
}

// Analyze infers the effects of every fn and handler of a checked program
// and checks the rules that depend on them (see the package documentation
// for the codes). The Info is complete even when diagnostics are returned.
func Analyze(p *lang.Program) (*Info, diag.List) {
	a := &analyzer{
		info: &Info{
			fns:      map[*ast.FnDecl]*unit{},
			handlers: map[*ast.Handler]*unit{},
			guards:   map[*ast.Handler]*unit{},
			inits:    map[*ast.LocusDecl]*unit{},
		},
		bodies: map[*unit]ast.Node{},
	}
	if p == nil {
		return a.info, nil
	}
	files := append(append([]*ast.File(nil), p.Files...), p.Stdlib...)

	// Units for every fn and handler, then for the expressions that must
	// be pure. Each records its own effects and its call edges.
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FnDecl:
				a.fnUnit(d, nil)
			case *ast.LocusDecl:
				for _, fn := range d.Fns {
					a.fnUnit(fn, d)
				}
				for _, h := range d.Handlers {
					u := a.newUnit(handlerName(d, h), nil)
					a.info.handlers[h] = u
					a.collect(u, h.Body)
				}
			}
		}
	}
	for _, fn := range p.Fns { // in case a declaration is listed only here
		a.fnUnit(fn, nil)
	}
	a.drain()

	type pureExpr struct {
		u    *unit
		x    ast.Expr
		code diag.Code
		what string // message prefix
		hint string // message suffix
	}
	var pure []pureExpr
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.ConstDecl:
				u := a.newUnit("const "+d.Name.Name, nil)
				a.collect(u, d.Value)
				pure = append(pure, pureExpr{u, d.Value, CodeConstEffect,
					fmt.Sprintf("const %q", d.Name.Name), "const values must be pure"})
			case *ast.LocusDecl:
				all := a.newUnit(d.Name.Name+" state", nil)
				a.info.inits[d] = all
				// State initialisers may have effects: they run at
				// start-up on the instance's consumer, and their calls
				// are journaled before its first delivery.
				for _, sv := range d.State {
					a.collect(all, sv.Value)
				}
				// Guards run on the publisher, at publish time, for
				// every subscriber: they must be pure.
				for _, h := range d.Handlers {
					if h.Guard == nil {
						continue
					}
					u := a.newUnit("guard of "+handlerName(d, h), nil)
					a.info.guards[h] = u
					a.collect(u, h.Guard)
					pure = append(pure, pureExpr{u, h.Guard, CodeGuardEffect,
						"guard of " + handlerName(d, h),
						"a guard may call only fns without effects"})
				}
			case *ast.MainDecl:
				// Spawn arguments too (they are evaluated with the
				// instance's state initialisers).
				for _, s := range d.Spawns {
					u := a.newUnit("spawn "+s.InstanceName(), nil)
					for _, arg := range s.Args {
						a.collect(u, arg)
					}
				}
			}
		}
	}
	a.drain() // fns reached only from those expressions

	a.fixpoint()

	// @deterministic fns, in source order.
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FnDecl:
				a.checkDeterministic(d)
			case *ast.LocusDecl:
				for _, fn := range d.Fns {
					a.checkDeterministic(fn)
				}
			}
		}
	}
	for _, pe := range pure {
		if pe.u.set.Pure() {
			continue
		}
		word := "effect"
		if pe.u.set.Len() > 1 {
			word = "effects"
		}
		a.diags.Add(a.firstEffectfulCall(pe.u, pe.x), pe.code, "%s has %s %s; %s",
			pe.what, word, strings.Join(pe.u.set.Slice(), ", "), pe.hint)
	}

	a.info.entries = entries(a.info, p.Files)
	return a.info, a.diags
}

func (a *analyzer) newUnit(name string, fn *ast.FnDecl) *unit {
	u := &unit{name: name, fn: fn}
	a.units = append(a.units, u)
	return u
}

// fnUnit returns the unit of fn, creating it (and queueing its body for
// collection) on first sight. Body-less declarations (primitives) have no
// unit.
func (a *analyzer) fnUnit(fn *ast.FnDecl, locus *ast.LocusDecl) *unit {
	if fn == nil || fn.Body == nil {
		return nil
	}
	if u := a.info.fns[fn]; u != nil {
		return u
	}
	name := fn.Name.Name
	switch {
	case fn.Sym != nil && fn.Sym.Name != "":
		name = fn.Sym.Name // qualified for locus fns and stdlib helpers
	case locus != nil:
		name = locus.Name.Name + "." + name
	}
	u := a.newUnit(name, fn)
	a.info.fns[fn] = u
	a.pending = append(a.pending, u)
	a.bodies[u] = fn.Body
	return u
}

// drain collects the bodies of fn units created so far, and of those they
// reach.
func (a *analyzer) drain() {
	for len(a.pending) > 0 {
		u := a.pending[0]
		a.pending = a.pending[1:]
		a.collect(u, a.bodies[u])
	}
}

// collect records the direct effects and calls found in n into u.
func (a *analyzer) collect(u *unit, n ast.Node) {
	if n == nil {
		return
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.PublishStmt:
			topic := n.Topic.Name
			if n.Topic.Sym != nil && n.Topic.Sym.Name != "" {
				topic = n.Topic.Sym.Name
			}
			u.local = append(u.local, string(stdlib.Publish(topic)))
			if n.After != nil {
				a.publishAfter(u, n)
			}
		case *ast.CallExpr:
			a.call(u, n)
		}
		return true
	})
}

// publishAfter records the effect of a timer, `publish T {…} after ms;`:
// it reads the monotonic clock, so it has effect time (as sleep_ms does).
func (a *analyzer) publishAfter(u *unit, n *ast.PublishStmt) {
	u.prims = append(u.prims, primCall{"publish " + n.Topic.Name + " after", stdlib.Time, n.After.Pos()})
	u.local = append(u.local, string(stdlib.Time))
}

func (a *analyzer) call(u *unit, c *ast.CallExpr) {
	sym := c.Callee()
	if sym == nil {
		return
	}
	pos := c.Pos()
	switch sym.Kind {
	case ast.SymFn, ast.SymLocusFn:
		u.calls = append(u.calls, Call{Callee: sym, Pos: pos})
		if sym.Fn != nil && sym.Fn.Body == nil {
			// A body-less fn is a primitive whatever its symbol says.
			a.prim(u, sym.Name, pos)
			return
		}
		var locus *ast.LocusDecl
		if sym.Kind == ast.SymLocusFn {
			locus = sym.Locus
		}
		if v := a.fnUnit(sym.Fn, locus); v != nil {
			u.callee = append(u.callee, v)
		}
	case ast.SymPrim:
		u.calls = append(u.calls, Call{Callee: sym, Pos: pos})
		a.prim(u, sym.Name, pos)
	case ast.SymBuiltin:
		u.calls = append(u.calls, Call{Callee: sym, Pos: pos})
		// Builtins are pure unless the table lists them (print).
		if p, ok := stdlib.Lookup(sym.Builtin); ok && p.Effect != stdlib.NoEffect {
			u.prims = append(u.prims, primCall{sym.Builtin, p.Effect, pos})
			u.local = append(u.local, string(p.Effect))
		}
	}
}

func (a *analyzer) prim(u *unit, name string, pos ast.Pos) {
	e, ok := primEffect(name)
	if !ok {
		a.diags.Add(pos, CodeUnknownPrimitive, "primitive %q has no entry in the primitive table", name)
		return
	}
	if e != "" {
		u.prims = append(u.prims, primCall{name, e, pos})
		u.local = append(u.local, string(e))
	}
}

// primEffect returns the effect of a primitive, "" when it is pure, and
// false when the table does not know it.
func primEffect(name string) (stdlib.Effect, bool) {
	p, ok := stdlib.Lookup(name)
	if !ok {
		return "", false
	}
	if p.Effect == stdlib.NoEffect {
		return "", true
	}
	return p.Effect, true
}

// fixpoint computes every unit's set: its own effects and its callees'
// sets, iterated until nothing changes.
func (a *analyzer) fixpoint() {
	for _, u := range a.units {
		seen := map[*unit]bool{}
		for _, v := range u.callee {
			if !seen[v] {
				seen[v] = true
				v.caller = append(v.caller, u)
			}
		}
		u.set = setOf(append([]string(nil), u.local...))
	}
	queue := append([]*unit(nil), a.units...)
	queued := map[*unit]bool{}
	for _, u := range queue {
		queued[u] = true
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		queued[u] = false
		next := u.set
		for _, v := range u.callee {
			next = next.Union(v.set)
		}
		if next.Equal(u.set) {
			continue
		}
		u.set = next
		for _, c := range u.caller {
			if !queued[c] {
				queued[c] = true
				queue = append(queue, c)
			}
		}
	}
}

// checkDeterministic reports E0701 when a @deterministic fn can reach a
// nondeterministic effect, with the shortest call path to the primitive.
func (a *analyzer) checkDeterministic(fn *ast.FnDecl) {
	if !hasAnnotation(fn, "deterministic") {
		return
	}
	start := a.info.fns[fn]
	if start == nil || len(start.set.nondeterministic()) == 0 {
		return
	}
	// Breadth-first over call sites in source order: the first primitive
	// found lies on a shortest path, and ties go to the earliest call.
	type step struct {
		u    *unit
		prev *step
	}
	visited := map[*unit]bool{start: true}
	queue := []*step{{u: start}}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		// The unit's own calls come first: a primitive called here ends a
		// path one step shorter than anything found through a callee.
		for _, pc := range s.u.prims {
			if !stdlib.Nondeterministic(pc.effect) {
				continue
			}
			var names []string
			for t := s; t != nil; t = t.prev {
				names = append(names, t.u.name)
			}
			for l, r := 0, len(names)-1; l < r; l, r = l+1, r-1 {
				names[l], names[r] = names[r], names[l]
			}
			a.diags.Add(fn.Name.Pos(), CodeNondeterministic,
				"@deterministic fn %q reaches nondeterministic effect %s: %s -> %s (%s)",
				start.name, pc.effect, strings.Join(names, " -> "), pc.name, pc.pos)
			return
		}
		for _, v := range s.u.callee {
			if visited[v] || len(v.set.nondeterministic()) == 0 {
				continue
			}
			visited[v] = true
			queue = append(queue, &step{u: v, prev: s})
		}
	}
}

// firstEffectfulCall returns the position of the first call in x that has
// an effect, or x's own position.
func (a *analyzer) firstEffectfulCall(u *unit, x ast.Expr) ast.Pos {
	var found ast.Pos
	ast.Inspect(x, func(n ast.Node) bool {
		if found.IsValid() {
			return false
		}
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		for _, pc := range u.prims {
			if pc.pos == c.Pos() {
				found = pc.pos
				return false
			}
		}
		if sym := c.Callee(); sym != nil && (sym.Kind == ast.SymFn || sym.Kind == ast.SymLocusFn) {
			if v := a.info.fns[sym.Fn]; v != nil && !v.set.Pure() {
				found = c.Pos()
				return false
			}
		}
		return true
	})
	if found.IsValid() {
		return found
	}
	return x.Pos()
}

func hasAnnotation(fn *ast.FnDecl, name string) bool {
	for _, an := range fn.Annotations {
		if an.Name != nil && an.Name.Name == name {
			return true
		}
	}
	return false
}

func handlerName(l *ast.LocusDecl, h *ast.Handler) string {
	if h.Start || h.Topic == nil {
		return l.Name.Name + ".on start"
	}
	return l.Name.Name + ".on " + h.Topic.Name
}

// entries lists the user's fns, locus fns and handlers in source order.
func entries(info *Info, files []*ast.File) []Entry {
	var out []Entry
	for _, f := range files {
		if f.Stdlib {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FnDecl:
				if u := info.fns[d]; u != nil {
					out = append(out, Entry{Kind: KindFn, Name: d.Name.Name, Pos: d.Name.Pos(), Effects: u.set, Fn: d})
				}
			case *ast.LocusDecl:
				var local []Entry
				for _, fn := range d.Fns {
					if u := info.fns[fn]; u != nil {
						local = append(local, Entry{Kind: KindLocusFn, Name: d.Name.Name + "." + fn.Name.Name,
							Pos: fn.Name.Pos(), Effects: u.set, Fn: fn})
					}
				}
				for _, h := range d.Handlers {
					if u := info.handlers[h]; u != nil {
						local = append(local, Entry{Kind: KindHandler, Name: handlerName(d, h), Pos: h.Pos(),
							Effects: u.set, Handler: h})
					}
					if u := info.guards[h]; u != nil {
						local = append(local, Entry{Kind: KindGuard, Name: handlerName(d, h), Pos: h.Guard.Pos(),
							Effects: u.set, Handler: h})
					}
				}
				// Handlers and fns interleave in the source.
				sort.SliceStable(local, func(i, j int) bool { return local[i].Pos.Offset < local[j].Pos.Offset })
				out = append(out, local...)
			}
		}
	}
	return out
}
