package sir

import (
	"fmt"

	"github.com/hale-lang/hale/lang/ast"
)

// Validate checks the program's internal consistency: every type, function,
// locus, topic, instance, consumer and primitive index is in range, every
// frame slot is below its function's NumSlots and every instance slot below
// its locus's NumSlots, operations and builtins are known, struct and enum
// constructions and field accesses fit their types, and every expression
// that must be present is. A program from Lower always passes; Unmarshal
// calls Validate so that a code generator can index without checking.
func (p *Program) Validate() error {
	v := &validator{p: p}
	v.program()
	return v.err
}

type validator struct {
	p     *Program
	err   error
	fn    *Func
	where string
	slots int // instance slots available (-1: none)
}

func (v *validator) failf(pos ast.Pos, format string, args ...any) {
	if v.err == nil {
		msg := fmt.Sprintf(format, args...)
		if v.where != "" {
			msg = v.where + ": " + msg
		}
		if pos.IsValid() {
			msg = pos.String() + ": " + msg
		}
		v.err = fmt.Errorf("sir: invalid program: %s", msg)
	}
}

func (v *validator) typ(pos ast.Pos, t TypeRef) bool {
	if t < 0 || int(t) >= len(v.p.Types) {
		v.failf(pos, "type t%d out of range", t)
		return false
	}
	return true
}

func (v *validator) kind(t TypeRef) TypeKind {
	if t < 0 || int(t) >= len(v.p.Types) {
		return KindVoid
	}
	return v.p.Types[t].Kind
}

func (v *validator) in(pos ast.Pos, what string, i, n int) bool {
	if i < 0 || i >= n {
		v.failf(pos, "%s %d out of range", what, i)
		return false
	}
	return true
}

func (v *validator) program() {
	p := v.p
	if len(p.Types) < NumBasic {
		v.failf(ast.Pos{}, "type table lacks the basic types")
		return
	}
	for i, t := range p.Types {
		if t == nil {
			v.failf(ast.Pos{}, "type t%d is nil", i)
			return
		}
		if i < NumBasic && t.Kind != TypeKind(i) {
			v.failf(ast.Pos{}, "basic type t%d has kind %s", i, t.Kind)
		}
		switch t.Kind {
		case KindVoid, KindInt, KindFloat, KindBool, KindString, KindBytes:
			if i >= NumBasic {
				v.failf(ast.Pos{}, "basic type repeated at t%d", i)
			}
		case KindList:
			v.typ(t.Pos, t.Elem)
		case KindMap:
			if v.typ(t.Pos, t.Key) {
				if k := v.kind(t.Key); k != KindInt && k != KindString && k != KindBool {
					v.failf(t.Pos, "map key of kind %s", k)
				}
			}
			v.typ(t.Pos, t.Elem)
		case KindStruct:
			for _, f := range t.Fields {
				v.typ(t.Pos, f.Type)
			}
		case KindEnum:
			for _, vr := range t.Variants {
				for _, f := range vr.Fields {
					v.typ(t.Pos, f)
				}
			}
		default:
			v.failf(t.Pos, "type t%d has unknown kind %d", i, t.Kind)
		}
	}
	for _, c := range p.Consts {
		if c == nil {
			v.failf(ast.Pos{}, "nil const")
			return
		}
		v.typ(c.Pos, c.Type)
	}
	for _, pm := range p.Prims {
		if pm == nil {
			v.failf(ast.Pos{}, "nil primitive")
			return
		}
		for _, t := range pm.Params {
			v.typ(ast.Pos{}, t)
		}
		v.typ(ast.Pos{}, pm.Result)
	}
	for _, t := range p.Topics {
		if t == nil {
			v.failf(ast.Pos{}, "nil topic")
			return
		}
		if v.typ(t.Pos, t.Type) && v.kind(t.Type) != KindStruct {
			v.failf(t.Pos, "topic %s payload is not a struct", t.Name)
		}
		for _, s := range t.Subscribers {
			v.in(t.Pos, "subscriber instance", s, len(p.Instances))
		}
	}
	for _, l := range p.Loci {
		if l == nil {
			v.failf(ast.Pos{}, "nil locus")
			return
		}
		if l.NumSlots != len(l.Params)+len(l.State) {
			v.failf(l.Pos, "locus %s has %d instance slots for %d parameters and %d state variables", l.Name, l.NumSlots, len(l.Params), len(l.State))
		}
		for _, vs := range [][]Var{l.Params, l.State} {
			for _, x := range vs {
				v.typ(l.Pos, x.Type)
				v.in(l.Pos, "instance slot", x.Slot, l.NumSlots)
			}
		}
		v.in(l.Pos, "init function", l.Init, len(p.Funcs))
		if l.Start != -1 {
			v.in(l.Pos, "start function", l.Start, len(p.Funcs))
		}
		for _, h := range l.Handlers {
			v.in(l.Pos, "handler topic", h.Topic, len(p.Topics))
			v.in(l.Pos, "handler function", h.Func, len(p.Funcs))
			if h.Guard != -1 && v.in(l.Pos, "guard function", h.Guard, len(p.Funcs)) && p.Funcs[h.Guard].Kind != FuncGuard {
				v.failf(l.Pos, "guard function %d is a %s", h.Guard, p.Funcs[h.Guard].Kind)
			}
		}
		for _, f := range l.Fns {
			v.in(l.Pos, "locus fn", f, len(p.Funcs))
		}
		if l.Budget < 0 {
			v.failf(l.Pos, "negative budget")
		}
	}
	for _, c := range p.Consumers {
		if c == nil {
			v.failf(ast.Pos{}, "nil consumer")
			return
		}
		for _, i := range c.Instances {
			v.in(ast.Pos{}, "consumer instance", i, len(p.Instances))
		}
	}
	for _, g := range p.Ingress {
		if g == nil {
			v.failf(ast.Pos{}, "nil ingress")
			return
		}
		v.in(g.Pos, "ingress topic", g.Topic, len(p.Topics))
		v.in(g.Pos, "ingress consumer", g.Consumer, len(p.Consumers))
	}
	for _, x := range p.Exports {
		if x == nil {
			v.failf(ast.Pos{}, "nil export")
			return
		}
		v.in(x.Pos, "export topic", x.Topic, len(p.Topics))
	}
	for _, in := range p.Instances {
		if in == nil {
			v.failf(ast.Pos{}, "nil instance")
			return
		}
		v.in(in.Pos, "instance locus", in.Locus, len(p.Loci))
		v.in(in.Pos, "instance consumer", in.Consumer, len(p.Consumers))
		if in.Placement.Kind > ast.PlacePool {
			v.failf(in.Pos, "unknown placement %d", in.Placement.Kind)
		}
		v.fn, v.slots, v.where = nil, -1, "spawn "+in.Name
		for _, a := range in.Args {
			v.expr(a, true)
		}
	}
	v.where = ""
	for _, f := range p.Funcs {
		if f == nil {
			v.failf(ast.Pos{}, "nil function")
			return
		}
		v.function(f)
		if v.err != nil {
			return
		}
	}
}

func (v *validator) function(f *Func) {
	p := v.p
	v.fn, v.where, v.slots = f, f.Name, -1
	if f.Kind > FuncGuard {
		v.failf(f.Pos, "unknown function kind %d", f.Kind)
	}
	if f.Locus != -1 && v.in(f.Pos, "function locus", f.Locus, len(p.Loci)) {
		v.slots = p.Loci[f.Locus].NumSlots
	}
	if f.Topic != -1 {
		v.in(f.Pos, "handler topic", f.Topic, len(p.Topics))
	}
	if f.Kind == FuncGuard {
		v.slots = 0 // a guard reads no instance slot: its parameters are copies
	}
	if f.NumParams < 0 || f.NumParams > f.NumSlots || len(f.Locals) != f.NumSlots {
		v.failf(f.Pos, "bad frame: %d params, %d slots, %d locals", f.NumParams, f.NumSlots, len(f.Locals))
		return
	}
	for _, l := range f.Locals {
		v.typ(f.Pos, l.Type)
	}
	v.typ(f.Pos, f.Result)
	v.stmts(f.Body)
}

func (v *validator) slot(pos ast.Pos, s int) {
	if v.fn == nil {
		v.failf(pos, "frame slot outside a function")
		return
	}
	v.in(pos, "frame slot", s, v.fn.NumSlots)
}

func (v *validator) stmts(list []Stmt) {
	for _, s := range list {
		if v.err != nil {
			return
		}
		if s == nil {
			v.failf(ast.Pos{}, "nil statement")
			return
		}
		v.stmt(s)
	}
}

func (v *validator) stmt(s Stmt) {
	pos := s.Pos()
	switch s := s.(type) {
	case *Let:
		v.slot(pos, s.Slot)
		v.expr(s.Value, true)
	case *SetLocal:
		v.slot(pos, s.Slot)
		v.expr(s.Value, true)
	case *SetState:
		v.in(pos, "instance slot", s.Slot, v.slots)
		v.expr(s.Value, true)
	case *SetIndex:
		v.expr(s.X, true)
		v.expr(s.Index, true)
		v.expr(s.Value, true)
		if s.X != nil && !(s.Kind == IndexList && v.kind(s.X.Type()) == KindList ||
			s.Kind == IndexMap && v.kind(s.X.Type()) == KindMap) {
			v.failf(pos, "set.%s on %s", s.Kind, v.kind(s.X.Type()))
		}
	case *SetField:
		v.expr(s.X, true)
		v.expr(s.Value, true)
		if s.X != nil {
			v.field(pos, s.X.Type(), s.Field)
		}
	case *ExprStmt:
		v.expr(s.X, true)
	case *If:
		v.expr(s.Cond, true)
		v.stmts(s.Then)
		v.stmts(s.Else)
	case *While:
		v.expr(s.Cond, true)
		v.stmts(s.Body)
	case *ForRange:
		v.slot(pos, s.Slot)
		v.slot(pos, s.HiSlot)
		v.expr(s.Lo, true)
		v.expr(s.Hi, true)
		v.stmts(s.Body)
	case *ForList:
		v.slot(pos, s.Slot)
		v.slot(pos, s.ListSlot)
		v.slot(pos, s.IdxSlot)
		if v.expr(s.List, true) && v.kind(s.List.Type()) != KindList {
			v.failf(pos, "for over a list of kind %s", v.kind(s.List.Type()))
		}
		v.stmts(s.Body)
	case *ForMap:
		v.slot(pos, s.KeySlot)
		if s.ValSlot != -1 {
			v.slot(pos, s.ValSlot)
		}
		v.slot(pos, s.MapSlot)
		v.slot(pos, s.IdxSlot)
		if v.expr(s.Map, true) && v.kind(s.Map.Type()) != KindMap {
			v.failf(pos, "for over a map of kind %s", v.kind(s.Map.Type()))
		}
		v.stmts(s.Body)
	case *Match:
		v.slot(pos, s.Slot)
		if !v.expr(s.X, true) {
			return
		}
		want := map[MatchKind]TypeKind{MatchEnum: KindEnum, MatchInt: KindInt, MatchString: KindString, MatchBool: KindBool}
		k, ok := want[s.Kind]
		if !ok || v.kind(s.X.Type()) != k {
			v.failf(pos, "match.%s on %s", s.Kind, v.kind(s.X.Type()))
			return
		}
		for _, a := range s.Arms {
			if a == nil {
				v.failf(pos, "nil arm")
				return
			}
			if s.Kind == MatchEnum {
				t := v.p.Types[s.X.Type()]
				if !v.in(a.Pos, "variant", a.Variant, len(t.Variants)) {
					return
				}
				if len(a.Binds) != len(t.Variants[a.Variant].Fields) {
					v.failf(a.Pos, "variant %s binds %d values, has %d", t.Variants[a.Variant].Name, len(a.Binds), len(t.Variants[a.Variant].Fields))
				}
				for _, b := range a.Binds {
					if b != -1 {
						v.slot(a.Pos, b)
					}
				}
			} else if len(a.Binds) > 0 {
				v.failf(a.Pos, "binds in a %s match", s.Kind)
			}
			v.stmts(a.Body)
		}
		v.stmts(s.Default)
	case *Publish:
		if !v.in(pos, "topic", s.Topic, len(v.p.Topics)) {
			return
		}
		t := v.p.Types[v.p.Topics[s.Topic].Type]
		if len(s.Fields) != len(t.Fields) {
			v.failf(pos, "publish %s with %d fields, topic has %d", t.Name, len(s.Fields), len(t.Fields))
		}
		for _, f := range s.Fields {
			v.expr(f, true)
		}
		if s.After != nil {
			v.expr(s.After, true)
		}
		v.order(pos, s.Order, len(s.Fields))
	case *Return:
		if s.Value != nil {
			v.expr(s.Value, true)
		}
	case *Break, *Continue:
	default:
		v.failf(pos, "unknown statement %T", s)
	}
}

func (v *validator) order(pos ast.Pos, order []int, n int) {
	if order == nil {
		return
	}
	if len(order) != n {
		v.failf(pos, "evaluation order of %d fields for %d", len(order), n)
		return
	}
	seen := make([]bool, n)
	for _, o := range order {
		if o < 0 || o >= n || seen[o] {
			v.failf(pos, "evaluation order is not a permutation")
			return
		}
		seen[o] = true
	}
}

func (v *validator) field(pos ast.Pos, t TypeRef, i int) {
	if v.kind(t) != KindStruct {
		v.failf(pos, "field of a %s", v.kind(t))
		return
	}
	v.in(pos, "field", i, len(v.p.Types[t].Fields))
}

// expr checks e; with need set a nil e is an error. It reports whether e
// is present and its type is in range.
func (v *validator) expr(e Expr, need bool) bool {
	if v.err != nil {
		return false
	}
	if e == nil {
		if need {
			v.failf(ast.Pos{}, "missing expression")
		}
		return false
	}
	pos := e.Pos()
	if !v.typ(pos, e.Type()) {
		return false
	}
	each := func(list []Expr) {
		for _, x := range list {
			v.expr(x, true)
		}
	}
	switch e := e.(type) {
	case *Const:
		if e.Value.Kind > KindBytes {
			v.failf(pos, "constant of kind %s", e.Value.Kind)
		}
	case *LocalRef:
		v.slot(pos, e.Slot)
	case *StateRef:
		v.in(pos, "instance slot", e.Slot, v.slots)
	case *Unary:
		if e.Op >= numUnaryOps {
			v.failf(pos, "unknown unary operation %d", e.Op)
		}
		v.expr(e.X, true)
	case *Binary:
		if e.Op >= numBinaryOps {
			v.failf(pos, "unknown binary operation %d", e.Op)
		}
		v.expr(e.X, true)
		v.expr(e.Y, true)
	case *And:
		v.expr(e.X, true)
		v.expr(e.Y, true)
	case *Or:
		v.expr(e.X, true)
		v.expr(e.Y, true)
	case *Call:
		if v.in(pos, "function", e.Func, len(v.p.Funcs)) {
			if f := v.p.Funcs[e.Func]; f != nil && len(e.Args) != f.NumParams {
				v.failf(pos, "call of %s with %d arguments, wants %d", f.Name, len(e.Args), f.NumParams)
			}
		}
		each(e.Args)
	case *CallBuiltin:
		if e.Builtin == BuiltinInvalid || e.Builtin >= NumBuiltins {
			v.failf(pos, "unknown builtin %d", e.Builtin)
		}
		each(e.Args)
	case *CallPrim:
		if v.in(pos, "primitive", e.Prim, len(v.p.Prims)) {
			if pm := v.p.Prims[e.Prim]; pm != nil && len(e.Args) != len(pm.Params) {
				v.failf(pos, "call of %s with %d arguments, wants %d", pm.Name, len(e.Args), len(pm.Params))
			}
		}
		each(e.Args)
	case *Format:
		if v.kind(e.Ty) != KindString {
			v.failf(pos, "format of type %s", v.kind(e.Ty))
		}
		if len(e.Parts) == 0 || len(e.Specs) != len(e.Parts) {
			v.failf(pos, "format of %d parts with %d specs", len(e.Parts), len(e.Specs))
		}
		each(e.Parts)
	case *MakeList:
		if v.kind(e.Ty) != KindList {
			v.failf(pos, "list literal of type %s", v.kind(e.Ty))
		}
		each(e.Elems)
	case *MakeMap:
		if v.kind(e.Ty) != KindMap {
			v.failf(pos, "map literal of type %s", v.kind(e.Ty))
		}
		if len(e.Keys) != len(e.Values) {
			v.failf(pos, "map literal with %d keys and %d values", len(e.Keys), len(e.Values))
		}
		each(e.Keys)
		each(e.Values)
	case *MakeStruct:
		if v.kind(e.Ty) != KindStruct {
			v.failf(pos, "struct literal of type %s", v.kind(e.Ty))
			return false
		}
		if n := len(v.p.Types[e.Ty].Fields); len(e.Fields) != n {
			v.failf(pos, "struct literal with %d fields, type has %d", len(e.Fields), n)
		}
		each(e.Fields)
		v.order(pos, e.Order, len(e.Fields))
	case *MakeEnum:
		if v.kind(e.Ty) != KindEnum {
			v.failf(pos, "enum value of type %s", v.kind(e.Ty))
			return false
		}
		t := v.p.Types[e.Ty]
		if v.in(pos, "variant", e.Variant, len(t.Variants)) && len(e.Args) != len(t.Variants[e.Variant].Fields) {
			v.failf(pos, "variant %s with %d values, wants %d", t.Variants[e.Variant].Name, len(e.Args), len(t.Variants[e.Variant].Fields))
		}
		each(e.Args)
	case *Index:
		if v.expr(e.X, true) {
			want := map[IndexKind]TypeKind{IndexList: KindList, IndexMap: KindMap, IndexString: KindString, IndexBytes: KindBytes}
			if k, ok := want[e.Kind]; !ok || v.kind(e.X.Type()) != k {
				v.failf(pos, "index.%s on %s", e.Kind, v.kind(e.X.Type()))
			}
		}
		v.expr(e.Index, true)
	case *FieldRef:
		if v.expr(e.X, true) {
			v.field(pos, e.X.Type(), e.Field)
		}
	case *Try:
		v.expr(e.X, true)
		if v.kind(e.Ty) != KindEnum {
			v.failf(pos, "try of type %s", v.kind(e.Ty))
		}
	case *Question:
		if v.expr(e.X, true) && v.kind(e.X.Type()) != KindEnum {
			v.failf(pos, "? on %s", v.kind(e.X.Type()))
		}
		if v.kind(e.Ret) != KindEnum {
			v.failf(pos, "? in a function returning %s", v.kind(e.Ret))
		}
	default:
		v.failf(pos, "unknown expression %T", e)
	}
	return true
}
