package codegen

import (
	"fmt"
	"math"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/diag"
	"github.com/hale-lang/hale/sir"
)

// fnComp is the state of compiling one function.
type fnComp struct {
	c    *compiler
	f    *image.Func
	top  int // next free register
	high int // registers used so far (the frame size)

	loops   []*loop
	tries   int       // tries being compiled (a ? inside them drops them)
	at      image.Pos // position of the instruction being emitted
	boundAt int       // pc of the last label bound

	// cur is the position of the statement or expression being compiled,
	// and overAt where it was when the frame first outgrew image.MaxFrame,
	// for the diagnostic.
	cur, overAt ast.Pos

	// stmtAt is the position of the statement whose first instruction is
	// still to be emitted (stmtPending): emit records it in Func.Stmts.
	stmtAt      image.Pos
	stmtPending bool
}

// label is a jump target, bound once; jumps emitted before it is bound
// are patched when it is.
type label struct {
	pc   int // -1 until bound
	refs []int
}

// loop is an enclosing loop: where break and continue go, and the
// iteration registers of a `for` over a list or map (-1 otherwise).
// funcKind maps a SIR function kind to the image's: the first five are
// numbered alike; the image puts FuncSpawn before FuncGuard.
func funcKind(k sir.FuncKind) image.FuncKind {
	if k == sir.FuncGuard {
		return image.FuncGuard
	}
	return image.FuncKind(k)
}

type loop struct {
	brk, cont *label
	iter      int
}

func (c *compiler) function(index int, sf *sir.Func) error {
	f := &c.img.Funcs[index]
	*f = image.Func{
		Name: sf.Name, Kind: funcKind(sf.Kind), Locus: sf.Locus, Topic: sf.Topic,
		NumParams: sf.NumParams, NumSlots: sf.NumSlots, Result: image.TypeRef(sf.Result),
	}
	for i, l := range sf.Locals {
		start := int32(-1) // set by the first let or var of the slot
		if i < sf.NumParams {
			start = 0
		}
		f.Locals = append(f.Locals, image.Local{Name: l.Name, Type: image.TypeRef(l.Type), Start: start})
	}
	g := &fnComp{c: c, f: f, top: sf.NumSlots, high: sf.NumSlots, boundAt: -1, cur: sf.Pos}
	f.Decl = c.pos(sf.Pos)
	g.at = f.Decl
	g.stmts(sf.Body)
	for i := range f.Locals {
		if f.Locals[i].Start < 0 {
			f.Locals[i].Start = 0 // a slot no let defines (a loop's): always shown
		}
	}
	g.setPos(sf.Pos)
	g.emit(image.OpRetVoid, 0, 0, 0) // the end of a fn without a result, or unreachable
	return g.finish()
}

// spawn compiles the synthetic function that stores an instance's spawn
// arguments into its parameter slots.
func (c *compiler) spawn(index int, in *sir.Instance) error {
	f := &c.img.Funcs[index]
	*f = image.Func{Name: "main", Kind: image.FuncSpawn, Locus: in.Locus, Topic: -1, Result: image.TVoid}
	g := &fnComp{c: c, f: f, boundAt: -1, cur: in.Pos}
	g.at = c.pos(in.Pos)
	params := c.p.Loci[in.Locus].Params
	if len(params) != len(in.Args) {
		return fmt.Errorf("codegen: instance %s: %d arguments for %d parameters", in.Name, len(in.Args), len(params))
	}
	for i, a := range in.Args {
		m := g.top
		r := g.operand(a)
		g.setPos(a.Pos())
		g.emit(image.OpStoreState, int32(params[i].Slot), int32(r), 0)
		g.top = m
	}
	g.setPos(in.Pos)
	g.emit(image.OpRetVoid, 0, 0, 0)
	return g.finish()
}

func (g *fnComp) finish() error {
	if g.high > image.MaxFrame {
		return &diag.Error{Pos: g.overAt, Code: CodeFrameTooLarge, Msg: fmt.Sprintf(
			"%s needs %d registers, more than the %d a function may use; this expression keeps too many values at once (split it with variables)",
			g.describe(), g.high, image.MaxFrame)}
	}
	if len(g.f.Code) > math.MaxInt32 {
		return &diag.Error{Pos: g.cur, Code: CodeCodeTooLong, Msg: fmt.Sprintf(
			"%s compiles to more than %d instructions", g.describe(), math.MaxInt32)}
	}
	g.f.FrameSize = g.high
	return nil
}

// ---- Emission ----

func (g *fnComp) setPos(p ast.Pos) {
	if p.IsValid() {
		g.at = g.c.pos(p)
	}
}

// emit appends an instruction and returns its pc, or -1 when it cannot
// be reached (it follows a jump or return and no label is bound there), in
// which case it is dropped.
func (g *fnComp) emit(op image.Op, a, b, c int32) int {
	pc := len(g.f.Code)
	if pc > 0 && g.f.Code[pc-1].Op.Terminal() && g.boundAt != pc {
		return -1
	}
	if n := len(g.f.Pos); n == 0 || g.f.Pos[n-1].Pos != g.at {
		if n > 0 && int(g.f.Pos[n-1].PC) == pc {
			g.f.Pos[n-1].Pos = g.at // nothing emitted at the previous position
		} else {
			g.f.Pos = append(g.f.Pos, image.PosEntry{PC: int32(pc), Pos: g.at})
		}
		// Merging may have made two neighbours equal.
		if n := len(g.f.Pos); n > 1 && g.f.Pos[n-2].Pos == g.f.Pos[n-1].Pos {
			g.f.Pos = g.f.Pos[:n-1]
		}
	}
	if g.stmtPending {
		g.stmtPending = false
		if n := len(g.f.Stmts); n == 0 || int(g.f.Stmts[n-1].PC) < pc {
			g.f.Stmts = append(g.f.Stmts, image.PosEntry{PC: int32(pc), Pos: g.stmtAt})
		}
	}
	g.f.Code = append(g.f.Code, image.Instr{Op: op, A: a, B: b, C: c})
	return pc
}

func (g *fnComp) newLabel() *label { return &label{pc: -1} }

// jump emits a jump-like instruction whose C operand is l's pc.
func (g *fnComp) jump(op image.Op, a, b int32, l *label) {
	pc := g.emit(op, a, b, int32(l.pc))
	if pc >= 0 && l.pc < 0 {
		l.refs = append(l.refs, pc)
	}
}

func (g *fnComp) bind(l *label) {
	l.pc = len(g.f.Code)
	g.boundAt = l.pc
	for _, pc := range l.refs {
		g.f.Code[pc].C = int32(l.pc)
	}
	l.refs = nil
}

// ---- Registers ----

func (g *fnComp) alloc() int { return g.allocN(1) }

// allocN allocates n consecutive temporaries and returns the first.
func (g *fnComp) allocN(n int) int {
	r := g.top
	g.top += n
	if g.top > g.high {
		g.high = g.top
		if g.high > image.MaxFrame && !g.overAt.IsValid() {
			g.overAt = g.cur
		}
	}
	return r
}

// describe names the function being compiled in a diagnostic.
func (g *fnComp) describe() string {
	if g.f.Kind == image.FuncSpawn {
		return "the spawn of this instance"
	}
	return "function " + g.f.Name
}

// window allocates n consecutive temporaries for the operands of one
// instruction (at least one, so that the first is a register of the frame
// even when there are no operands).
func (g *fnComp) window(n int) int { return g.allocN(max(n, 1)) }

// isTopTemp reports whether r is the most recently allocated temporary,
// so that registers allocated next follow it.
func (g *fnComp) isTopTemp(r int) bool { return r == g.top-1 && r >= g.f.NumSlots }

// ---- Statements ----

func (g *fnComp) stmts(ss []sir.Stmt) {
	for _, s := range ss {
		g.stmt(s)
	}
}

func (g *fnComp) stmt(s sir.Stmt) {
	mark := g.top
	defer func() { g.top, g.stmtPending = mark, false }()
	g.setPos(s.Pos())
	if s.Pos().IsValid() {
		g.cur = s.Pos()
		g.stmtAt, g.stmtPending = g.c.pos(s.Pos()), true
	}
	switch s := s.(type) {
	case *sir.Let:
		g.expr(s.Value, s.Slot)
		if s.Slot < len(g.f.Locals) && g.f.Locals[s.Slot].Start < 0 {
			l := &g.f.Locals[s.Slot]
			l.Start = int32(len(g.f.Code))
		}
	case *sir.SetLocal:
		g.expr(s.Value, s.Slot)
	case *sir.SetState:
		r := g.operand(s.Value)
		g.setPos(s.Pos())
		g.emit(image.OpStoreState, int32(s.Slot), int32(r), 0)
	case *sir.SetIndex:
		x := g.operand(s.X)
		i := g.operand(s.Index)
		v := g.operand(s.Value)
		g.setPos(s.Pos())
		op := image.OpSetIndexList
		if s.Kind == sir.IndexMap {
			op = image.OpSetIndexMap
		}
		g.emit(op, int32(x), int32(i), int32(v))
	case *sir.SetField:
		x := g.operand(s.X)
		v := g.operand(s.Value)
		g.setPos(s.Pos())
		g.emit(image.OpSetField, int32(x), int32(s.Field), int32(v))
	case *sir.ExprStmt:
		g.expr(s.X, g.alloc())
	case *sir.If:
		els, end := g.newLabel(), g.newLabel()
		g.cond(s.Cond, els, false)
		g.stmts(s.Then)
		if len(s.Else) > 0 {
			g.setPos(s.Pos())
			g.jump(image.OpJump, 0, 0, end)
			g.bind(els)
			g.stmts(s.Else)
			g.bind(end)
		} else {
			g.bind(els)
		}
	case *sir.While:
		body, test, exit := g.newLabel(), g.newLabel(), g.newLabel()
		g.jump(image.OpJump, 0, 0, test)
		g.bind(body)
		g.loop(&loop{brk: exit, cont: test, iter: -1}, s.Body)
		g.bind(test)
		g.setPos(s.Pos())
		g.cond(s.Cond, body, true)
		g.bind(exit)
	case *sir.ForRange:
		g.expr(s.Lo, s.Slot)
		hi := g.alloc()
		g.expr(s.Hi, hi)
		g.setPos(s.Pos())
		body, next, exit := g.newLabel(), g.newLabel(), g.newLabel()
		g.jump(image.OpJLeInt, int32(hi), int32(s.Slot), exit) // hi <= i: no iteration
		g.bind(body)
		g.loop(&loop{brk: exit, cont: next, iter: -1}, s.Body)
		g.bind(next)
		g.setPos(s.Pos())
		g.jump(image.OpLoopRange, int32(s.Slot), int32(hi), body)
		g.bind(exit)
	case *sir.ForList:
		g.forIter(s.Pos(), s.List, image.OpIterList, image.OpForList, s.Slot, -1, s.Body)
	case *sir.ForMap:
		g.forIter(s.Pos(), s.Map, image.OpIterMap, image.OpForMap, s.KeySlot, s.ValSlot, s.Body)
	case *sir.Match:
		g.match(s)
	case *sir.Publish:
		n := len(s.Fields)
		base := g.window(n)
		for _, i := range evalOrder(n, s.Order) {
			g.expr(s.Fields[i], base+i)
		}
		if s.After != nil {
			g.publishAfter(s, base)
			break
		}
		g.setPos(s.Pos())
		g.emit(image.OpPublish, int32(s.Topic), int32(base), 0)
	case *sir.Return:
		r := -1
		if s.Value != nil {
			r = g.operand(s.Value)
		}
		g.setPos(s.Pos())
		for i := len(g.loops) - 1; i >= 0; i-- {
			if l := g.loops[i]; l.iter >= 0 {
				g.emit(image.OpIterEnd, int32(l.iter), 0, 0)
			}
		}
		if r >= 0 {
			g.emit(image.OpRet, int32(r), 0, 0)
		} else {
			g.emit(image.OpRetVoid, 0, 0, 0)
		}
	case *sir.Break:
		g.jump(image.OpJump, 0, 0, g.innermost().brk)
	case *sir.Continue:
		g.jump(image.OpJump, 0, 0, g.innermost().cont)
	default:
		panic(fmt.Sprintf("unexpected statement %T", s))
	}
}

func (g *fnComp) innermost() *loop {
	if len(g.loops) == 0 {
		panic("break or continue outside a loop")
	}
	return g.loops[len(g.loops)-1]
}

func (g *fnComp) loop(l *loop, body []sir.Stmt) {
	g.loops = append(g.loops, l)
	g.stmts(body)
	g.loops = g.loops[:len(g.loops)-1]
}

// forIter compiles `for` over a list or map: the container and the
// position live in two temporaries for the whole loop.
func (g *fnComp) forIter(at ast.Pos, x sir.Expr, begin, next image.Op, slot, valSlot int, body []sir.Stmt) {
	base := g.allocN(2)
	g.expr(x, base)
	g.setPos(at)
	g.emit(begin, int32(base), 0, 0)
	top, test, exit := g.newLabel(), g.newLabel(), g.newLabel()
	g.jump(image.OpJump, 0, 0, test)
	g.bind(top)
	if valSlot >= 0 {
		g.emit(image.OpForMapVal, int32(valSlot), int32(base), 0)
	}
	g.loop(&loop{brk: exit, cont: test, iter: base}, body)
	g.bind(test)
	g.setPos(at)
	g.jump(next, int32(slot), int32(base), top)
	g.bind(exit)
	g.emit(image.OpIterEnd, int32(base), 0, 0)
}

func (g *fnComp) match(s *sir.Match) {
	x := g.operand(s.X)
	end := g.newLabel()
	for i, arm := range s.Arms {
		g.setPos(arm.Pos)
		next := g.newLabel()
		last := i == len(s.Arms)-1 && !s.HasDefault // exhaustive: the last arm needs no test
		if !last {
			switch s.Kind {
			case sir.MatchEnum:
				g.jump(image.OpJNeVariant, int32(x), int32(arm.Variant), next)
			case sir.MatchInt:
				if fitsImm(arm.Int) {
					g.jump(image.OpJNeIntK, int32(x), int32(arm.Int), next)
				} else {
					k := g.alloc()
					g.emit(image.OpLoadK, int32(k), g.c.konst(image.Const{Kind: image.KindInt, Int: arm.Int}), 0)
					g.jump(image.OpJNeInt, int32(x), int32(k), next)
					g.top--
				}
			case sir.MatchString:
				g.jump(image.OpJNeStrK, int32(x), g.c.konst(image.Const{Kind: image.KindString, Str: arm.Str}), next)
			case sir.MatchBool:
				op := image.OpJumpF
				if !arm.Bool {
					op = image.OpJumpT
				}
				g.jump(op, int32(x), 0, next)
			}
		}
		for j, slot := range arm.Binds {
			if slot >= 0 {
				g.emit(image.OpEnumField, int32(slot), int32(x), int32(j))
			}
		}
		g.stmts(arm.Body)
		g.setPos(arm.Pos)
		g.jump(image.OpJump, 0, 0, end)
		g.bind(next)
	}
	if s.HasDefault {
		g.stmts(s.Default)
	}
	g.bind(end)
}

func evalOrder(n int, order []int) []int {
	if order != nil {
		return order
	}
	o := make([]int, n)
	for i := range o {
		o[i] = i
	}
	return o
}

func fitsImm(i int64) bool { return i >= math.MinInt32 && i <= math.MaxInt32 }

// ---- Conditions ----

// cond emits code that jumps to l when e evaluates to when, and falls
// through otherwise.
func (g *fnComp) cond(e sir.Expr, l *label, when bool) {
	mark := g.top
	defer func() { g.top = mark }()
	switch e := e.(type) {
	case *sir.Const:
		if e.Value.Kind == sir.KindBool {
			if e.Value.Bool == when {
				g.setPos(e.Pos())
				g.jump(image.OpJump, 0, 0, l)
			}
			return
		}
	case *sir.Unary:
		if e.Op == sir.NotBool {
			g.cond(e.X, l, !when)
			return
		}
	case *sir.And:
		if when { // x && y is true: x true then y true
			skip := g.newLabel()
			g.cond(e.X, skip, false)
			g.cond(e.Y, l, true)
			g.bind(skip)
		} else { // false when either is false
			g.cond(e.X, l, false)
			g.cond(e.Y, l, false)
		}
		return
	case *sir.Or:
		if when {
			g.cond(e.X, l, true)
			g.cond(e.Y, l, true)
		} else {
			skip := g.newLabel()
			g.cond(e.X, skip, true)
			g.cond(e.Y, l, false)
			g.bind(skip)
		}
		return
	case *sir.Binary:
		if rel, ok := intRelation(g.c.p, e); ok {
			if !when {
				rel = rel.negate()
			}
			g.intJump(e, rel, l)
			return
		}
	}
	r := g.operand(e)
	g.setPos(e.Pos())
	if when {
		g.jump(image.OpJumpT, int32(r), 0, l)
	} else {
		g.jump(image.OpJumpF, int32(r), 0, l)
	}
}

// relation is a comparison of two ints.
type relation uint8

const (
	relLt relation = iota
	relLe
	relGt
	relGe
	relEq
	relNe
)

func (r relation) negate() relation {
	return [...]relation{relGe, relGt, relLe, relLt, relNe, relEq}[r]
}

// swap returns the relation with its operands exchanged (a < b is b > a).
func (r relation) swap() relation {
	return [...]relation{relGt, relGe, relLt, relLe, relEq, relNe}[r]
}

// intRelation reports whether e compares two ints (or two bools, for == and
// !=), and which way.
func intRelation(p *sir.Program, e *sir.Binary) (relation, bool) {
	switch e.Op {
	case sir.IntLt:
		return relLt, true
	case sir.IntLe:
		return relLe, true
	case sir.IntGt:
		return relGt, true
	case sir.IntGe:
		return relGe, true
	case sir.Eq, sir.Ne:
		if k := p.Types[e.X.Type()].Kind; k == sir.KindInt || k == sir.KindBool {
			if e.Op == sir.Eq {
				return relEq, true
			}
			return relNe, true
		}
	}
	return 0, false
}

// smallInt reports whether e is an int constant that fits an immediate.
func smallInt(e sir.Expr) (int32, bool) {
	if k, ok := e.(*sir.Const); ok && k.Value.Kind == sir.KindInt && fitsImm(k.Value.Int) {
		return int32(k.Value.Int), true
	}
	return 0, false
}

// intJump emits a jump to l taken when rel holds between e's operands.
func (g *fnComp) intJump(e *sir.Binary, rel relation, l *label) {
	kOps := [...]image.Op{image.OpJLtIntK, image.OpJLeIntK, image.OpJGtIntK, image.OpJGeIntK, image.OpJEqIntK, image.OpJNeIntK}
	if k, ok := smallInt(e.Y); ok {
		x := g.operand(e.X)
		g.setPos(e.Pos())
		g.jump(kOps[rel], int32(x), k, l)
		return
	}
	if k, ok := smallInt(e.X); ok {
		y := g.operand(e.Y)
		g.setPos(e.Pos())
		g.jump(kOps[rel.swap()], int32(y), k, l)
		return
	}
	x := g.operand(e.X)
	y := g.operand(e.Y)
	g.setPos(e.Pos())
	switch rel {
	case relLt:
		g.jump(image.OpJLtInt, int32(x), int32(y), l)
	case relLe:
		g.jump(image.OpJLeInt, int32(x), int32(y), l)
	case relGt:
		g.jump(image.OpJLtInt, int32(y), int32(x), l)
	case relGe:
		g.jump(image.OpJLeInt, int32(y), int32(x), l)
	case relEq:
		g.jump(image.OpJEqInt, int32(x), int32(y), l)
	case relNe:
		g.jump(image.OpJNeInt, int32(x), int32(y), l)
	}
}

// ---- Expressions ----

// operand returns a register holding e's value: a local's own register,
// or a new temporary that e is evaluated into. Reading a local in place is
// safe because no expression assigns a local.
func (g *fnComp) operand(e sir.Expr) int {
	if l, ok := e.(*sir.LocalRef); ok {
		return l.Slot
	}
	r := g.alloc()
	g.expr(e, r)
	return r
}

// firstOperand is operand for the operand an instruction evaluates first:
// when dst is a temporary it holds that operand's value, so a chain such as
// `1 + 2 + … + n`, nested n deep on the left, needs one register, not n.
// A temporary destination is never read by the expression that writes it
// (only a local is), so it is free until the instruction writes it.
func (g *fnComp) firstOperand(e sir.Expr, dst int32) int {
	if _, ok := e.(*sir.LocalRef); ok || int(dst) < g.f.NumSlots {
		return g.operand(e)
	}
	g.expr(e, int(dst))
	return int(dst)
}

// expr evaluates e into register dst. It writes dst only after reading
// every operand, so dst may be a local that e reads.
func (g *fnComp) expr(e sir.Expr, dst int) {
	mark := g.top
	defer func() { g.top = mark }()
	if e.Pos().IsValid() {
		g.cur = e.Pos()
	}
	d := int32(dst)
	switch e := e.(type) {
	case *sir.Const:
		g.setPos(e.Pos())
		if e.Value.Kind == sir.KindInt && fitsImm(e.Value.Int) {
			g.emit(image.OpLoadInt, d, int32(e.Value.Int), 0)
		} else {
			g.emit(image.OpLoadK, d, g.c.sirConst(e.Value), 0)
		}
	case *sir.LocalRef:
		if e.Slot != dst {
			g.setPos(e.Pos())
			g.emit(image.OpMove, d, int32(e.Slot), 0)
		}
	case *sir.StateRef:
		g.setPos(e.Pos())
		g.emit(image.OpLoadState, d, int32(e.Slot), 0)
	case *sir.Unary:
		x := g.firstOperand(e.X, d)
		g.setPos(e.Pos())
		op := [...]image.Op{sir.NotBool: image.OpNot, sir.NegInt: image.OpNegInt, sir.NegFloat: image.OpNegFloat, sir.NotInt: image.OpNotInt}[e.Op]
		g.emit(op, d, int32(x), 0)
	case *sir.Binary:
		g.binary(e, d)
	case *sir.And, *sir.Or:
		// Materialise the condition; dst is written only at the end.
		f, end := g.newLabel(), g.newLabel()
		g.cond(e, f, false)
		g.setPos(e.Pos())
		g.emit(image.OpLoadK, d, g.c.konst(image.Const{Kind: image.KindBool, Int: 1}), 0)
		g.jump(image.OpJump, 0, 0, end)
		g.bind(f)
		g.emit(image.OpLoadK, d, g.c.konst(image.Const{Kind: image.KindBool, Int: 0}), 0)
		g.bind(end)
	case *sir.Call:
		callee := g.c.p.Funcs[e.Func]
		if len(e.Args) != callee.NumParams {
			panic(fmt.Sprintf("call of %s with %d arguments", callee.Name, len(e.Args)))
		}
		base := g.argWindow(dst, max(len(e.Args), 1))
		for i, a := range e.Args {
			g.expr(a, base+i)
		}
		g.setPos(e.Pos())
		g.emit(image.OpCall, int32(base), int32(e.Func), 0)
		if base != dst {
			g.emit(image.OpMove, d, int32(base), 0)
		}
	case *sir.CallBuiltin:
		g.builtin(e, d)
	case *sir.CallPrim:
		base := g.window(len(e.Args))
		for i, a := range e.Args {
			g.expr(a, base+i)
		}
		g.setPos(e.Pos())
		g.emit(image.OpCallPrim, d, int32(e.Prim), int32(base))
	case *sir.Format:
		base := g.window(len(e.Parts))
		for i, x := range e.Parts {
			g.expr(x, base+i)
		}
		g.setPos(e.Pos())
		g.emit(image.OpFormat, d, int32(base), g.c.konst(image.Const{Kind: image.KindString, Str: image.FormatLayout(e.Specs)}))
	case *sir.MakeList:
		base := g.window(len(e.Elems))
		for i, x := range e.Elems {
			g.expr(x, base+i)
		}
		g.setPos(e.Pos())
		g.emit(image.OpNewList, d, int32(base), int32(len(e.Elems)))
	case *sir.MakeMap:
		g.setPos(e.Pos())
		if len(e.Keys) == 0 {
			key := g.c.p.Types[g.c.p.Types[e.Type()].Key].Kind
			g.emit(image.OpEmptyMap, d, int32(key), 0)
			return
		}
		base := g.allocN(2 * len(e.Keys))
		for i := range e.Keys {
			g.expr(e.Keys[i], base+2*i)
			g.expr(e.Values[i], base+2*i+1)
		}
		g.setPos(e.Pos())
		g.emit(image.OpNewMap, d, int32(base), int32(len(e.Keys)))
	case *sir.MakeStruct:
		n := len(e.Fields)
		base := g.window(n)
		for _, i := range evalOrder(n, e.Order) {
			g.expr(e.Fields[i], base+i)
		}
		g.setPos(e.Pos())
		g.emit(image.OpNewStruct, d, int32(base), int32(e.Type()))
	case *sir.MakeEnum:
		k := g.c.konst(image.Const{Kind: image.KindEnum, Type: image.TypeRef(e.Type()), Variant: e.Variant})
		if len(e.Args) == 0 {
			g.setPos(e.Pos())
			g.emit(image.OpLoadK, d, k, 0)
			return
		}
		base := g.allocN(len(e.Args))
		for i, x := range e.Args {
			g.expr(x, base+i)
		}
		g.setPos(e.Pos())
		g.emit(image.OpNewEnum, d, int32(base), k)
	case *sir.Index:
		x := g.operand(e.X)
		i := g.operand(e.Index)
		g.setPos(e.Pos())
		op := [...]image.Op{sir.IndexList: image.OpIndexList, sir.IndexMap: image.OpIndexMap,
			sir.IndexString: image.OpIndexStr, sir.IndexBytes: image.OpIndexStr}[e.Kind]
		g.emit(op, d, int32(x), int32(i))
	case *sir.FieldRef:
		x := g.operand(e.X)
		g.setPos(e.Pos())
		g.emit(image.OpField, d, int32(x), int32(e.Field))
	case *sir.Question:
		g.question(e, d)
	case *sir.Try:
		g.try(e, dst)
	default:
		panic(fmt.Sprintf("unexpected expression %T", e))
	}
}

// argWindow returns the first of n consecutive registers for call
// arguments: dst itself when it is the top temporary (the call's result
// then lands in place), otherwise new temporaries.
func (g *fnComp) argWindow(dst, n int) int {
	if g.isTopTemp(dst) {
		g.allocN(n - 1)
		return dst
	}
	return g.allocN(n)
}

var binaryOps = [...]image.Op{
	sir.IntAdd: image.OpAddInt, sir.IntSub: image.OpSubInt, sir.IntMul: image.OpMulInt,
	sir.IntDiv: image.OpDivInt, sir.IntRem: image.OpRemInt,
	sir.FloatAdd: image.OpAddFloat, sir.FloatSub: image.OpSubFloat, sir.FloatMul: image.OpMulFloat,
	sir.FloatDiv: image.OpDivFloat, sir.FloatRem: image.OpRemFloat,
	sir.StrConcat: image.OpConcatStr, sir.BytesConcat: image.OpConcatBytes, sir.ListConcat: image.OpConcatList,
	sir.IntLt: image.OpLtInt, sir.IntLe: image.OpLeInt, sir.IntGt: image.OpLtInt, sir.IntGe: image.OpLeInt,
	sir.FloatLt: image.OpLtFloat, sir.FloatLe: image.OpLeFloat, sir.FloatGt: image.OpLtFloat, sir.FloatGe: image.OpLeFloat,
	sir.StrLt: image.OpLtStr, sir.StrLe: image.OpLeStr, sir.StrGt: image.OpLtStr, sir.StrGe: image.OpLeStr,
	sir.IntAnd: image.OpAndInt, sir.IntOr: image.OpOrInt, sir.IntXor: image.OpXorInt,
	sir.IntShl: image.OpShlInt, sir.IntShr: image.OpShrInt,
}

func (g *fnComp) binary(e *sir.Binary, d int32) {
	// x + k, k + x and x - k with a small constant k.
	if e.Op == sir.IntAdd || e.Op == sir.IntSub {
		if k, ok := smallInt(e.Y); ok && (e.Op == sir.IntAdd || k != math.MinInt32) {
			if e.Op == sir.IntSub {
				k = -k
			}
			x := g.firstOperand(e.X, d)
			g.setPos(e.Pos())
			g.emit(image.OpAddIntK, d, int32(x), k)
			return
		}
		if k, ok := smallInt(e.X); ok && e.Op == sir.IntAdd {
			y := g.firstOperand(e.Y, d)
			g.setPos(e.Pos())
			g.emit(image.OpAddIntK, d, int32(y), k)
			return
		}
	}
	x := g.firstOperand(e.X, d)
	y := g.operand(e.Y)
	g.setPos(e.Pos())
	var op image.Op
	switch e.Op {
	case sir.Eq, sir.Ne:
		eq := e.Op == sir.Eq
		switch g.c.p.Types[e.X.Type()].Kind {
		case sir.KindInt, sir.KindBool:
			op = pick(eq, image.OpEqInt, image.OpNeInt)
		case sir.KindFloat:
			op = pick(eq, image.OpEqFloat, image.OpNeFloat)
		case sir.KindString, sir.KindBytes:
			op = pick(eq, image.OpEqStr, image.OpNeStr)
		default:
			op = pick(eq, image.OpEq, image.OpNe)
		}
	case sir.IntGt, sir.IntGe, sir.FloatGt, sir.FloatGe, sir.StrGt, sir.StrGe:
		// a > b is b < a, a >= b is b <= a (for floats too, NaN included).
		x, y = y, x
		op = binaryOps[e.Op]
	default:
		if int(e.Op) >= len(binaryOps) {
			panic(fmt.Sprintf("binary operation %s", e.Op))
		}
		op = binaryOps[e.Op]
	}
	g.emit(op, d, int32(x), int32(y))
}

func pick(c bool, a, b image.Op) image.Op {
	if c {
		return a
	}
	return b
}

func (g *fnComp) builtin(e *sir.CallBuiltin, d int32) {
	b := image.Builtin(e.Builtin)
	if b == image.BuiltinInvalid || b >= image.NumBuiltins || len(e.Args) != b.Arity() {
		panic(fmt.Sprintf("builtin %s with %d arguments", e.Builtin, len(e.Args)))
	}
	switch b {
	case image.BuiltinLenList, image.BuiltinLenMap, image.BuiltinLenStr:
		x := g.operand(e.Args[0])
		g.setPos(e.Pos())
		op := map[image.Builtin]image.Op{image.BuiltinLenList: image.OpLenList, image.BuiltinLenMap: image.OpLenMap, image.BuiltinLenStr: image.OpLenStr}[b]
		g.emit(op, d, int32(x), 0)
		return
	case image.BuiltinPush:
		xs := g.operand(e.Args[0])
		v := g.operand(e.Args[1])
		g.setPos(e.Pos())
		g.emit(image.OpPush, int32(xs), int32(v), 0)
		return
	}
	base := g.allocN(len(e.Args))
	for i, a := range e.Args {
		g.expr(a, base+i)
	}
	g.setPos(e.Pos())
	g.emit(image.OpCallB, d, int32(b), int32(base))
}

// question compiles `x?`: variant 1 (None or Err) returns from the
// function, as None or Err(e) of the function's own result type, ending
// the for loops it is in as a return does; otherwise the value is the
// payload of Some or Ok.
func (g *fnComp) question(e *sir.Question, d int32) {
	x := g.operand(e.X)
	g.setPos(e.Pos())
	ok := g.newLabel()
	g.jump(image.OpJNeVariant, int32(x), 1, ok)
	ret := g.c.p.Types[e.Ret]
	if ret.Kind != sir.KindEnum || len(ret.Variants) != 2 {
		panic(fmt.Sprintf("? in a function returning %s", ret.Kind))
	}
	r := g.alloc()
	k := g.c.konst(image.Const{Kind: image.KindEnum, Type: image.TypeRef(e.Ret), Variant: 1})
	if len(ret.Variants[1].Fields) == 0 {
		g.emit(image.OpLoadK, int32(r), k, 0)
	} else {
		g.emit(image.OpEnumField, int32(r), int32(x), 0)
		g.emit(image.OpNewEnum, int32(r), int32(r), k)
	}
	if g.tries > 0 {
		g.emit(image.OpTryDrop, int32(g.tries), 0, 0)
	}
	for i := len(g.loops) - 1; i >= 0; i-- {
		if l := g.loops[i]; l.iter >= 0 {
			g.emit(image.OpIterEnd, int32(l.iter), 0, 0)
		}
	}
	g.emit(image.OpRet, int32(r), 0, 0)
	g.bind(ok)
	g.emit(image.OpEnumField, d, int32(x), 0)
}

// try compiles `try x` into dst: OpTry names dst, the failure variant and
// the end; x runs; OpTryEnd wraps its value in Ok (or gives None). A
// caught trap resumes at the end with the failure in dst.
func (g *fnComp) try(e *sir.Try, dst int) {
	t := g.c.p.Types[e.Type()]
	if t.Kind != sir.KindEnum || len(t.Variants) != 2 {
		panic(fmt.Sprintf("try of type %s", t.Kind))
	}
	fail, ok := 1, 0 // Result: Err, Ok
	if e.Void {
		fail, ok = 0, 1 // Option<Error>: Some, None
	}
	kFail := g.c.konst(image.Const{Kind: image.KindEnum, Type: image.TypeRef(e.Type()), Variant: fail})
	kOk := g.c.konst(image.Const{Kind: image.KindEnum, Type: image.TypeRef(e.Type()), Variant: ok})
	end := g.newLabel()
	g.setPos(e.Pos())
	g.jump(image.OpTry, int32(dst), kFail, end)
	g.tries++
	g.expr(e.X, dst)
	g.tries--
	g.setPos(e.Pos())
	g.emit(image.OpTryEnd, int32(dst), kOk, 0)
	g.bind(end)
}

// publishAfter emits a timer, `publish T {…} after ms;`, whose payload
// fields are already in the window at base: the delay is evaluated after
// them.
func (g *fnComp) publishAfter(s *sir.Publish, base int) {
	delay := g.operand(s.After)
	g.setPos(s.Pos())
	g.emit(image.OpPublishAfter, int32(s.Topic), int32(base), int32(delay))
}
