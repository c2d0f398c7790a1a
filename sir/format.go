package sir

import (
	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/format"
)

// format lowers a call of the format builtin to one concatenation of its
// literal's text and of its values' conversions, left to right, so the
// values are evaluated in order, the result is built in one allocation,
// and nothing parses the literal at run time. A placeholder without a spec is str(v) (v itself for a string);
// one with a spec calls format.int, format.float or format.str with the
// spec packed into an int constant.
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
	parts := make([]Expr, 0, len(e.Format))
	for _, p := range e.Format {
		if p.Arg < 0 {
			parts = append(parts, str(p.Text))
		} else {
			parts = append(parts, c.formatValue(values[p.Arg], p))
		}
	}
	switch len(parts) {
	case 0:
		return str("")
	case 1:
		return parts[0]
	}
	return &Concat{ExprBase: ExprBase{at, TString}, Parts: parts}
}

// formatValue converts one placeholder's value to its text.
func (c *fnCtx) formatValue(v Expr, p format.Piece) Expr {
	at := v.Pos()
	call := func(bi Builtin, args ...Expr) Expr {
		return &CallBuiltin{ExprBase: ExprBase{at, TString}, Builtin: bi, Args: args}
	}
	k := c.l.kindOf(v.Type())
	plain := p.Spec == format.Spec{Precision: -1}
	if plain {
		if k == KindString {
			return v
		}
		return call(BuiltinStr, v)
	}
	spec := func(number bool) Expr {
		return &Const{ExprBase: ExprBase{at, TInt}, Value: IntValue(p.Spec.Pack(number))}
	}
	switch k {
	case KindInt:
		return call(BuiltinFormatInt, v, spec(true))
	case KindFloat:
		return call(BuiltinFormatFloat, v, spec(true))
	case KindString:
		return call(BuiltinFormatStr, v, spec(false))
	}
	return call(BuiltinFormatStr, call(BuiltinStr, v), spec(false))
}
