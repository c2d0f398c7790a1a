package sir

import (
	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/format"
)

// format lowers a call of the format builtin to one Format expression: the
// literal's text as string constants and the values in order, each with
// its placeholder's spec packed into an int (-1 for `{}` and for text), so
// the values are evaluated in order, the result is built in one
// allocation, and nothing parses the literal at run time. A call that is
// one plain string placeholder is that string; plain text is a constant.
func (c *fnCtx) format(e *ast.CallExpr, b ExprBase) Expr {
	if e.Format == nil || len(e.Args) == 0 {
		c.l.internal(e.Pos(), "format call without a checked literal")
		return &Const{ExprBase: b}
	}
	values := c.args(e.Args[1:])
	at := e.Args[0].Pos()
	str := func(s string) Expr {
		return &Const{ExprBase: ExprBase{at, TString}, Value: StringValue(s)}
	}
	plain := format.Spec{Precision: -1}
	f := &Format{ExprBase: ExprBase{at, TString}}
	for _, p := range e.Format {
		if p.Arg < 0 {
			f.Parts = append(f.Parts, str(p.Text))
			f.Specs = append(f.Specs, -1)
			continue
		}
		v := values[p.Arg]
		f.Parts = append(f.Parts, v)
		if p.Spec == plain {
			f.Specs = append(f.Specs, -1)
			continue
		}
		k := c.l.kindOf(v.Type())
		f.Specs = append(f.Specs, p.Spec.Pack(k == KindInt || k == KindFloat))
	}
	switch {
	case len(f.Parts) == 0:
		return str("")
	case len(f.Parts) == 1 && f.Specs[0] < 0 && c.l.kindOf(f.Parts[0].Type()) == KindString:
		return f.Parts[0]
	}
	return f
}
