package check

import (
	"fmt"

	"github.com/hale-lang/hale/lang/ast"
)

func (c *checker) stmts(list []ast.Stmt) {
	for _, s := range list {
		c.stmt(s)
	}
}

// block checks a block in a new scope.
func (c *checker) block(b *ast.Block) {
	if b == nil {
		return
	}
	c.enter()
	c.stmts(b.Stmts)
	c.leave()
}

func (c *checker) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.Block:
		c.block(s)
	case *ast.LetStmt:
		var t *ast.Type
		name := "_"
		if s.Name != nil {
			name = s.Name.Name
		}
		if s.Type != nil {
			t = c.typeOf(s.Type)
			c.expectValue(&s.Value, t, fmt.Sprintf("in declaration of %q", name))
		} else {
			t = c.value(&s.Value, nil)
		}
		kind := "declared with let"
		if s.Mutable {
			kind = "declared with var"
		}
		c.noteSecretLocal(c.declareLocal(s.Name, t, s.Mutable, kind), s.Value)
	case *ast.AssignStmt:
		c.assign(s)
	case *ast.ExprStmt:
		c.expr(&s.X, nil)
		if !isStatementExpr(s.X) && s.X != nil {
			c.errorf(s.X.Pos(), "E0403", "expression is not a statement: only a call can stand alone")
		}
	case *ast.IfStmt:
		c.expectValue(&s.Cond, ast.BoolType, "as if condition")
		c.block(s.Then)
		if s.Else != nil {
			c.stmt(s.Else)
		}
	case *ast.WhileStmt:
		c.expectValue(&s.Cond, ast.BoolType, "as while condition")
		c.fn.loops++
		c.block(s.Body)
		c.fn.loops--
	case *ast.ForStmt:
		c.forStmt(s)
	case *ast.MatchStmt:
		c.match(s)
	case *ast.PublishStmt:
		if s.Topic == nil {
			c.fieldInits(s.Fields, ast.InvalidType, s.Pos(), "")
			c.publishDelay(s)
			return
		}
		t := ast.InvalidType
		if sym := c.topic(s.Topic); sym != nil {
			t = sym.Type
		}
		c.fieldInits(s.Fields, t, s.Topic.Pos(), "publish of "+s.Topic.Name)
		c.publishDelay(s)
	case *ast.ReturnStmt:
		res := c.fn.result
		switch {
		case s.Value == nil:
			if res.Kind != ast.Void && res.Kind != ast.Invalid {
				c.errorf(s.Pos(), "E0408", "missing return value: %s returns %s", c.fn.name, res)
			}
		case res.Kind == ast.Void:
			c.expr(&s.Value, nil)
			c.errorf(s.Value.Pos(), "E0407", "unexpected return value: %s returns nothing", c.fn.name)
		default:
			c.expectValue(&s.Value, res, "in return")
		}
	case *ast.BreakStmt:
		if c.fn.loops == 0 {
			c.errorf(s.Pos(), "E0404", "break outside a loop")
		}
	case *ast.ContinueStmt:
		if c.fn.loops == 0 {
			c.errorf(s.Pos(), "E0404", "continue outside a loop")
		}
	}
}

// assign checks `target op value;`. Targets are var locals, state, list
// and map elements, and struct fields.
func (c *checker) assign(s *ast.AssignStmt) {
	tt := c.target(&s.Target)
	ctx := "in assignment"
	if s.Op != ast.Assign {
		ctx = "in " + s.Op.String() + " assignment"
	}
	c.expectValue(&s.Value, tt, ctx)
	c.checkHeaderIndex(s.Target)
	if s.Op == ast.Assign || invalid(tt) {
		return
	}
	ok := isNumeric(tt) ||
		s.Op == ast.AddAssign && (tt.Kind == ast.String || tt.Kind == ast.Bytes || tt.Kind == ast.List)
	if isBitOp(s.Op.Binary()) {
		ok = tt.Kind == ast.Int
	}
	if !ok {
		c.errorf(s.Pos(), "E0402", "operator %s is not defined on %s", s.Op, tt)
	}
}

// target checks an assignment target and returns its type.
func (c *checker) target(pe *ast.Expr) *ast.Type {
	switch t := (*pe).(type) {
	case *ast.Name:
		typ := c.expr(pe, nil)
		if t.Ident == nil || t.Ident.Sym == nil {
			return ast.InvalidType
		}
		sym := t.Ident.Sym
		switch sym.Kind {
		case ast.SymLocal:
			if !sym.Mutable {
				c.errorf(t.Pos(), "E0401", "cannot assign to %q: it is %s", t.Ident.Name, c.localKind[sym])
				return typ
			}
		case ast.SymState:
		case ast.SymLocusParam:
			c.errorf(t.Pos(), "E0401", "cannot assign to locus parameter %q: locus parameters are read-only", t.Ident.Name)
		case ast.SymConst:
			c.errorf(t.Pos(), "E0401", "cannot assign to constant %q", t.Ident.Name)
		default:
			return ast.InvalidType // already reported: not a value
		}
		return typ
	case *ast.IndexExpr:
		typ := c.expr(pe, nil)
		if xt := t.X.TypeOf(); xt != nil && (xt.Kind == ast.String || xt.Kind == ast.Bytes) {
			c.errorf(t.Pos(), "E0401", "cannot assign to an element of %s: %s values are immutable", xt, xt)
			return ast.InvalidType
		}
		return typ
	case *ast.FieldExpr:
		return c.expr(pe, nil)
	case nil:
		return ast.InvalidType
	}
	c.expr(pe, nil)
	c.errorf((*pe).Pos(), "E0401", "cannot assign to this expression: assign to a var, state, xs[i], m[k] or p.f")
	return ast.InvalidType
}

// forStmt checks the three kinds of for loops. The loop names live in a
// scope around the body, so the body may shadow them.
func (c *checker) forStmt(s *ast.ForStmt) {
	c.enter()
	defer c.leave()
	s.HiddenSlot = c.hidden(hiddenLoopSlots)
	var kt, vt *ast.Type = ast.InvalidType, nil
	if s.Hi != nil {
		c.expectValue(&s.X, ast.IntType, "as range start")
		c.expectValue(&s.Hi, ast.IntType, "as range end")
		kt = ast.IntType
		if s.Val != nil {
			c.errorf(s.Val.Pos(), "E0405", "a loop over a range binds one name")
		}
	} else {
		xt := c.value(&s.X, nil)
		switch xt.Kind {
		case ast.List:
			kt = xt.Elem
			if s.Val != nil {
				c.errorf(s.Val.Pos(), "E0405", "a loop over a list binds one name")
			}
		case ast.Map:
			kt, vt = xt.Key, xt.Elem
		case ast.Invalid:
		default:
			if s.X != nil {
				c.errorf(s.X.Pos(), "E0405", "cannot iterate over %s: want a list, a map or a range a..b", xt)
			}
		}
	}
	if vt == nil {
		vt = ast.InvalidType
	}
	c.declareLocal(s.Key, kt, false, "a loop variable")
	if s.Val != nil {
		c.declareLocal(s.Val, vt, false, "a loop variable")
	}
	c.fn.loops++
	c.block(s.Body)
	c.fn.loops--
}

// hiddenLoopSlots is the number of hidden frame slots reserved for every
// for loop (the iterated value, the position, the end), starting at
// ForStmt.HiddenSlot.
const hiddenLoopSlots = 3

// match checks a match statement: patterns fit the scrutinee, no
// duplicate or unreachable arms, and the arms are exhaustive.
func (c *checker) match(s *ast.MatchStmt) {
	xt := c.value(&s.X, nil)
	switch xt.Kind {
	case ast.Enum, ast.Bool, ast.Int, ast.String, ast.Invalid:
	default:
		c.errorf(s.X.Pos(), "E0412", "cannot match on a value of type %s: want an enum, bool, int or string", xt)
		xt = ast.InvalidType
	}
	var wildcard *ast.Arm
	seen := map[string]*ast.Arm{} // by pattern text
	covered := map[int]bool{}     // enum variants
	for _, arm := range s.Arms {
		if arm == nil || arm.Pattern == nil {
			continue
		}
		p := arm.Pattern
		if wildcard != nil {
			c.errorf(p.Pos(), "E0410", "unreachable arm: the \"_\" arm at %s matches everything", wildcard.Pos())
		}
		c.enter()
		key := ""
		switch p.Kind {
		case ast.PatWildcard:
			if wildcard == nil {
				wildcard = arm
			}
		case ast.PatInt:
			key = fmt.Sprint(p.Int)
			c.fits(p, key, xt, ast.Int)
		case ast.PatString:
			key = fmt.Sprintf("%q", p.Str)
			c.fits(p, key, xt, ast.String)
		case ast.PatBool:
			key = fmt.Sprint(p.Bool)
			c.fits(p, key, xt, ast.Bool)
		case ast.PatVariant:
			key = c.variantPattern(p, xt)
			if key != "" {
				covered[p.Variant] = true
			}
		}
		if key != "" {
			if prev := seen[key]; prev != nil {
				c.errorf(p.Pos(), "E0410", "duplicate arm %s (first at %s)", key, prev.Pos())
			} else {
				seen[key] = arm
			}
		}
		c.block(arm.Body)
		c.leave()
	}
	if wildcard != nil || invalid(xt) {
		return
	}
	var missing []string
	switch xt.Kind {
	case ast.Enum:
		for i, v := range xt.Variants {
			if !covered[i] {
				missing = append(missing, variantText(xt, v))
			}
		}
	case ast.Bool:
		for _, b := range []string{"true", "false"} {
			if seen[b] == nil {
				missing = append(missing, b)
			}
		}
	default:
		c.errorf(s.Pos(), "E0409", "match on %s is not exhaustive: add a \"_\" arm", xt)
		return
	}
	if len(missing) > 0 {
		c.errorf(s.Pos(), "E0409", "match on %s is not exhaustive: missing %s", xt, quoteList(missing))
	}
}

// fits reports a literal pattern whose kind does not match the scrutinee.
func (c *checker) fits(p *ast.Pattern, text string, xt *ast.Type, kind ast.TypeKind) {
	if xt.Kind != kind && xt.Kind != ast.Invalid {
		c.errorf(p.Pos(), "E0411", "pattern %s does not fit %s", text, xt)
	}
}

// variantPattern checks `Enum::Variant(binds)` against the scrutinee type
// and declares the bound names. It returns the pattern's text, or "" when
// the pattern is wrong.
func (c *checker) variantPattern(p *ast.Pattern, xt *ast.Type) string {
	p.Variant = -1
	if p.Enum == nil && p.Name != nil {
		return c.genericPattern(p, xt)
	}
	if p.Enum == nil || p.Name == nil {
		c.declareBinds(p, nil)
		return ""
	}
	text := p.Enum.Name + "::" + p.Name.Name
	sym := c.lookupTop(p.Enum.Name)
	switch {
	case sym == nil:
		c.errorf(p.Enum.Pos(), "E0201", "undefined enum %q", p.Enum.Name)
		c.endAt(p.Enum.End())
		c.suggest(p.Enum.Name, c.topLevelOf(ast.SymEnum))
		c.declareBinds(p, nil)
		return ""
	case sym.Kind != ast.SymEnum:
		p.Enum.Sym = sym
		c.errorf(p.Enum.Pos(), "E0203", "%s is not an enum", describe(sym))
		c.declareBinds(p, nil)
		return ""
	}
	p.Enum.Sym = sym
	enum := sym.Type
	idx := enum.VariantIndex(p.Name.Name)
	if idx < 0 || idx >= len(c.variants[enum]) {
		c.errorf(p.Name.Pos(), "E0209", "enum %q has no variant %q", sym.Name, p.Name.Name)
		c.endAt(p.Name.End())
		c.suggest(p.Name.Name, variantNames(enum))
		c.declareBinds(p, nil)
		return ""
	}
	p.Variant = idx
	p.Name.Sym = c.variants[enum][idx]
	fields := enum.Variants[idx].Fields
	if len(p.Binds) != len(fields) {
		hint := ""
		if len(p.Binds) < len(fields) {
			hint = " (use _ to ignore one)"
		}
		c.errorf(p.Pos(), "E0411", "pattern %s binds %s, but the variant has %s%s",
			text, plural(len(p.Binds), "name"), plural(len(fields), "value"), hint)
	}
	c.declareBinds(p, fields)
	if xt.Kind != ast.Invalid && xt != enum {
		c.errorf(p.Pos(), "E0411", "pattern %s does not fit %s", text, xt)
		return ""
	}
	return text
}

// declareBinds declares the names bound by a variant pattern; "_" binds
// nothing (its Sym stays nil).
func (c *checker) declareBinds(p *ast.Pattern, fields []*ast.Type) {
	for i, b := range p.Binds {
		if b == nil || b.Name == "_" {
			continue
		}
		t := ast.InvalidType
		if i < len(fields) {
			t = fields[i]
		}
		c.declareLocal(b, t, false, "a match binding")
	}
}

// terminates reports whether every path through s ends (docs/language.md):
// return, panic(…), `while true` without break, an if with an else whose
// branches all end, or a match whose arms all end. A block ends when any
// of its statements ends (later statements are unreachable).
func terminates(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.Block:
		if s == nil {
			return false
		}
		for _, st := range s.Stmts {
			if terminates(st) {
				return true
			}
		}
	case *ast.ReturnStmt:
		return true
	case *ast.ExprStmt:
		if call, ok := s.X.(*ast.CallExpr); ok {
			sym := call.Callee()
			return sym != nil && sym.Kind == ast.SymBuiltin && sym.Builtin == "panic"
		}
	case *ast.WhileStmt:
		lit, ok := s.Cond.(*ast.BoolLit)
		return ok && lit.Value && !breaks(s.Body)
	case *ast.IfStmt:
		return s.Else != nil && s.Then != nil && terminates(s.Then) && terminates(s.Else)
	case *ast.MatchStmt:
		if len(s.Arms) == 0 {
			return false
		}
		for _, a := range s.Arms {
			if a == nil || a.Body == nil || !terminates(a.Body) {
				return false
			}
		}
		return true
	}
	return false
}

// breaks reports whether s contains a break that leaves the loop whose
// body s is (breaks inside nested loops do not count).
func breaks(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.Block:
		if s == nil {
			return false
		}
		for _, st := range s.Stmts {
			if breaks(st) {
				return true
			}
		}
	case *ast.BreakStmt:
		return true
	case *ast.IfStmt:
		return (s.Then != nil && breaks(s.Then)) || (s.Else != nil && breaks(s.Else))
	case *ast.MatchStmt:
		for _, a := range s.Arms {
			if a != nil && a.Body != nil && breaks(a.Body) {
				return true
			}
		}
	}
	return false
}

// isStatementExpr reports whether x may stand alone as a statement: a
// call, a call followed by ? (whose early return is the point), or a try
// of one (which discards the outcome).
func isStatementExpr(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.CallExpr:
		return true
	case *ast.QuestionExpr:
		return isStatementExpr(x.X)
	case *ast.TryExpr:
		return isStatementExpr(x.X)
	}
	return false
}

// publishDelay checks the delay of `publish T {…} after ms;`: an int, in
// milliseconds.
func (c *checker) publishDelay(s *ast.PublishStmt) {
	if s.After != nil {
		c.expectValue(&s.After, ast.IntType, "in \"after\" (the delay in milliseconds)")
	}
}
