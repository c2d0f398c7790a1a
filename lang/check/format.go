package check

import (
	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/format"
)

// format checks a call of the format builtin: a string literal, parsed
// here once (the lowering reads the pieces from the call), then one value
// per placeholder whose type fits the placeholder's spec.
func (c *checker) format(e *ast.CallExpr) *ast.Type {
	types := make([]*ast.Type, len(e.Args))
	for i := range e.Args {
		types[i] = c.value(&e.Args[i], nil)
		if i > 0 {
			c.refuseSecret(e.Args[i], types[i], "cannot be formatted")
		}
	}
	e.Fun.SetType(&ast.Type{Kind: ast.Func, Params: types, Result: ast.StringType})
	if len(e.Args) == 0 {
		c.errorf(e.Pos(), "E0306", `"format" takes a string literal and one argument per placeholder, got no arguments`)
		return ast.StringType
	}
	lit, ok := e.Args[0].(*ast.StringLit)
	if !ok {
		if !invalid(types[0]) {
			c.errorf(e.Args[0].Pos(), "E0330", `the first argument of "format" must be a string literal, not %s`, describeFormatArg(types[0]))
			c.endAt(e.Args[0].End())
		}
		return ast.StringType
	}
	pieces, perr := format.Parse(lit.Value)
	if perr != nil {
		c.errorf(literalPos(lit, perr.Offset), "E0330", "%s", perr.Msg)
		return ast.StringType
	}
	holes := 0
	for _, p := range pieces {
		if p.Arg >= 0 {
			holes++
		}
	}
	fine := true
	if values := len(e.Args) - 1; values != holes {
		c.errorf(lit.Pos(), "E0306", "format literal has %s but is followed by %s", plural(holes, "placeholder"), plural(values, "argument"))
		c.endAt(lit.End())
		fine = false
	}
	for _, p := range pieces {
		if p.Arg < 0 || p.Arg+1 >= len(types) || invalid(types[p.Arg+1]) {
			continue
		}
		t := types[p.Arg+1]
		if why := p.Spec.Fits(formatKind(t)); why != "" {
			c.errorf(literalPos(lit, p.Offset), "E0331", "placeholder %d of the format literal does not fit its argument of type %s: %s", p.Arg+1, t, why)
			if end := literalPos(lit, p.End); end != lit.Pos() {
				c.endAt(end)
			}
			fine = false
		}
	}
	if fine {
		e.Format = pieces
	}
	return ast.StringType
}

// formatKind classifies a type for format.Spec.Fits.
func formatKind(t *ast.Type) format.Kind {
	switch t.Kind {
	case ast.Int:
		return format.Int
	case ast.Float:
		return format.Float
	}
	return format.Other
}

// describeFormatArg names what stands where the literal should be.
func describeFormatArg(t *ast.Type) string {
	if t.Kind == ast.String {
		return "a string computed at run time"
	}
	return "a value of type " + t.String()
}

// literalPos is the position of byte off of a string literal's value when
// the literal is written on one line without escapes (so the value's
// bytes are the source's); otherwise the literal's own position.
func literalPos(lit *ast.StringLit, off int) ast.Pos {
	from, to := lit.Pos(), lit.End()
	if from.Line != to.Line || to.Offset-from.Offset != len(lit.Value)+2 {
		return from
	}
	p := from
	p.Col += 1 + off
	p.Offset += 1 + off
	return p
}
