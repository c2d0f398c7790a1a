// Package effects infers which effects every fn, locus fn and handler of a
// checked program can have, and enforces the rules that depend on them.
//
// It runs after the checker (package lang) and before lowering (package
// sir); `hale check --effects` prints its result. Analyze builds the call
// graph of the whole program (user code and the Hale-written parts of the
// standard library) and computes, for every fn and handler, the set of
// effects it can reach:
//
//   - a primitive call contributes the effect of its entry in the
//     primitive table (package stdlib); pure primitives contribute nothing;
//   - the builtin print contributes io; every other builtin is pure
//     (assert and panic trap, but deterministically);
//   - `publish T {…}` contributes the pseudo-effect publish(T);
//   - a call to a fn or locus fn contributes the callee's whole set.
//
// Recursion and mutual recursion are handled by iterating to a fixpoint: a
// worklist recomputes a fn's set from its own effects and its callees'
// sets, and requeues its callers whenever the set grows. Sets only grow and
// are bounded, so the iteration ends. Enum constructors are not calls.
//
// # Rules and diagnostic codes
//
//	E0701  a @deterministic fn can reach a nondeterministic effect (time,
//	       rand, entropy, env, args, fs.read, fs.write or net). Reported at
//	       the fn's name with the shortest call path to the primitive and
//	       the primitive call's position:
//	         @deterministic fn "score" reaches nondeterministic effect time:
//	         score -> helper -> std::time::now_ms (app.hl:12:5)
//	       Outputs (io, exit) and publish(T) are allowed. Among paths of
//	       equal length the first in source order of the call sites wins.
//	E0702  (no longer reported: state initialisers may have effects;
//	       they run at start-up on their instance's consumer and their
//	       calls are journaled before its first delivery)
//	E0703  (no longer reported: spawn arguments may have effects, for
//	       the same reason)
//	E0704  a const value has an effect (consts are folded at compile
//	       time; a backstop, since the checker already allows no calls in
//	       a const value).
//	E0705  a call resolves to a primitive that the primitive table does not
//	       know (a backstop for a toolchain inconsistency, never the user's
//	       fault).
//	E0706  a handler's guard (`on T(x) if …`) has an effect: it calls a
//	       primitive, print, or a fn whose set is not {}. Guards run on
//	       the publisher when it publishes, so they must be pure.
//
// E0704 and E0706 point at the first call in the expression that has an effect.
// Each rule is checked everywhere; Analyze reports every violation.
//
// # Output
//
// Entries lists the user's fns, locus fns and handlers in source order
// (files in load order). WriteText prints one line per entry, the kind and
// name left-aligned in a column as wide as the longest one plus two
// spaces, then the set:
//
//	fn score                       {}
//	locus fn Ledger.report         {}
//	handler Ledger.on start        {io}
//	handler Ledger.on OrderPlaced  {publish(Audit), time}
//
// WriteJSON prints one object on one line:
//
//	{"entries":[{"kind":"fn","name":"score","position":"app.hl:3:4","effects":[]}, …]}
//
// A fn's position is that of its name; a handler's is that of `on`.
package effects

import (
	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/diag"
)

// Diagnostic codes (see the package documentation).
const (
	CodeNondeterministic diag.Code = "E0701"
	CodeConstEffect      diag.Code = "E0704"
	CodeUnknownPrimitive diag.Code = "E0705"
	CodeGuardEffect      diag.Code = "E0706"
)

// Entry kinds.
const (
	KindFn      = "fn"
	KindLocusFn = "locus fn"
	KindHandler = "handler"
	KindGuard   = "guard" // a handler's guard; its Handler is set, its set is {} in a valid program
)

// Entry is one user fn, locus fn or handler with its effects.
type Entry struct {
	Kind    string  // KindFn, KindLocusFn, KindHandler or KindGuard
	Name    string  // "score", "Ledger.report", "Ledger.on OrderPlaced", "Ledger.on start"
	Pos     ast.Pos // the fn's name; the handler's `on`
	Effects Set

	// Exactly one of Fn and Handler is set.
	Fn      *ast.FnDecl
	Handler *ast.Handler
}

// Call is one direct call edge: a call expression in a fn, handler or
// state initialiser whose callee is a fn, locus fn, primitive or builtin.
type Call struct {
	Callee *ast.Symbol
	Pos    ast.Pos // the call expression's start
}

// Info is the result of Analyze.
type Info struct {
	fns      map[*ast.FnDecl]*unit
	handlers map[*ast.Handler]*unit
	guards   map[*ast.Handler]*unit
	inits    map[*ast.LocusDecl]*unit // all state initialisers of a locus
	entries  []Entry
}

// Fn returns the effects a fn or locus fn can have. For a @primitive
// declaration it is the primitive's effect. It is empty for a fn Analyze
// did not see.
func (i *Info) Fn(fn *ast.FnDecl) Set {
	if u := i.fns[fn]; u != nil {
		return u.set
	}
	if fn != nil && fn.Body == nil && fn.Sym != nil {
		if e, ok := primEffect(fn.Sym.Name); ok && e != "" {
			return NewSet(e)
		}
	}
	return Set{}
}

// Handler returns the effects a handler can have.
func (i *Info) Handler(h *ast.Handler) Set {
	if u := i.handlers[h]; u != nil {
		return u.set
	}
	return Set{}
}

// Init returns the effects of a locus's state initialisers together.
func (i *Info) Init(l *ast.LocusDecl) Set {
	if u := i.inits[l]; u != nil {
		return u.set
	}
	return Set{}
}

// Calls returns the direct calls made by n, in source order: n is a
// *ast.FnDecl, a *ast.Handler, or a *ast.LocusDecl for its state
// initialisers. Calls of enum constructors are not included.
func (i *Info) Calls(n ast.Node) []Call {
	if u := i.unitOf(n); u != nil {
		return append([]Call(nil), u.calls...)
	}
	return nil
}

// Publishes returns the topics that n (a *ast.FnDecl or *ast.Handler) can
// publish, directly or through the fns it calls, sorted by name.
func (i *Info) Publishes(n ast.Node) []string {
	if u := i.unitOf(n); u != nil {
		return u.set.Topics()
	}
	return nil
}

// Entries returns the user's fns, locus fns and handlers in source order.
func (i *Info) Entries() []Entry {
	return append([]Entry(nil), i.entries...)
}

func (i *Info) unitOf(n ast.Node) *unit {
	switch n := n.(type) {
	case *ast.FnDecl:
		return i.fns[n]
	case *ast.Handler:
		return i.handlers[n]
	case *ast.LocusDecl:
		return i.inits[n]
	}
	return nil
}
