package check

import (
	"fmt"

	"github.com/hale-lang/hale/lang/ast"
)

// The built-in generic enums Option<T> (Some(T), None) and Result<T>
// (Ok(T), Err(Error)), and the built-in struct Error { kind, message }.
// Instances are ordinary enum types named as written ("Option<int>",
// "Result<[string]>"), interned so that each instance has one *ast.Type
// and the rest of the toolchain (SIR, shape hash, value encoding) sees
// plain nominal enums.

// reservedTopLevel are the names no top-level declaration may take
// (E0205): the generic enums and their unqualified variants.
var reservedTopLevel = map[string]bool{
	"Option": true, "Result": true, "Some": true, "None": true, "Ok": true, "Err": true,
}

// ctorNames are the unqualified variant constructors, entered as builtins
// (so a local of the same name shadows them) and resolved by ctor.
var ctorNames = []string{"Some", "None", "Ok", "Err"}

// declareErrorType creates the built-in Error struct. A program's own
// top-level Error shadows it; the built-in stays reachable as std::Error
// (and is then named so in messages and str).
func (c *checker) declareErrorType() {
	name := "Error"
	if c.res.Scope["Error"] != nil {
		name = "std::Error"
	}
	t := &ast.Type{Kind: ast.Struct, Name: name, Fields: []*ast.Field{
		{Name: "kind", Type: ast.StringType},
		{Name: "message", Type: ast.StringType},
	}}
	c.errorType = t
	sym := &ast.Symbol{Kind: ast.SymStruct, Name: name, Type: t}
	c.res.Scope["std::Error"] = sym
	if name == "Error" {
		c.res.Scope["Error"] = sym
	}
}

// instance returns the interned type generic<arg> ("Option" or "Result").
// An invalid argument gives InvalidType, so one error causes no others.
func (c *checker) instance(generic string, arg *ast.Type) *ast.Type {
	if invalid(arg) {
		return ast.InvalidType
	}
	name := generic + "<" + arg.String() + ">"
	if t := c.generics[name]; t != nil {
		return t
	}
	t := &ast.Type{Kind: ast.Enum, Name: name, Generic: generic}
	if generic == "Option" {
		t.Variants = []*ast.Variant{{Name: "Some", Fields: []*ast.Type{arg}}, {Name: "None"}}
	} else {
		t.Variants = []*ast.Variant{{Name: "Ok", Fields: []*ast.Type{arg}}, {Name: "Err", Fields: []*ast.Type{c.errorType}}}
	}
	for i, v := range t.Variants {
		c.variants[t] = append(c.variants[t], &ast.Symbol{Kind: ast.SymVariant, Name: v.Name, Type: t, Index: i})
	}
	c.generics[name] = t
	return t
}

// genericType resolves `Option<T>` or `Result<T>` as written.
func (c *checker) genericType(te *ast.NamedType, name string) *ast.Type {
	if len(te.Args) != 1 {
		if len(te.Args) == 0 {
			c.errorf(te.Pos(), "E0210", "%s needs a type argument: %s<T>", name, name)
		} else {
			c.errorf(te.Pos(), "E0210", "%s takes 1 type argument, got %d", name, len(te.Args))
		}
		for _, a := range te.Args {
			c.typeOf(a)
		}
		return ast.InvalidType
	}
	arg := c.typeOf(te.Args[0])
	if arg.Kind == ast.Void || arg.Kind == ast.Func {
		return ast.InvalidType
	}
	return c.instance(name, arg)
}

// isCtor reports whether sym is one of the unqualified constructors
// Some, None, Ok and Err.
func isCtor(sym *ast.Symbol) bool {
	if sym == nil || sym.Kind != ast.SymBuiltin {
		return false
	}
	switch sym.Builtin {
	case "Some", "None", "Ok", "Err":
		return true
	}
	return false
}

// ctorOwner is the generic enum a constructor belongs to.
func ctorOwner(name string) string {
	if name == "Some" || name == "None" {
		return "Option"
	}
	return "Result"
}

// ctorExample is an example declaration for the message when nothing
// gives a constructor its type.
func ctorExample(name string) string {
	switch name {
	case "None":
		return "let x: Option<int> = None;"
	case "Ok":
		return "let r: Result<int> = Ok(1);"
	}
	return `let r: Result<int> = Err(Error { kind: "io", message: "…" });`
}

// ctorValue types a bare `None` (or a wrongly bare Some, Ok or Err) from
// want, and points id at the variant's symbol.
func (c *checker) ctorValue(id *ast.Ident, want *ast.Type) *ast.Type {
	name := id.Name
	if name != "None" {
		c.errorf(id.Pos(), "E0317", "variant %q takes 1 value; write %s(…)", name, name)
		return ast.InvalidType
	}
	t := c.ctorTarget(id.Pos(), name, want)
	if t.Kind == ast.Invalid {
		return t
	}
	id.Sym = c.variants[t][1]
	return t
}

// ctorTarget returns the Option or Result type that want gives a
// constructor, or reports that nothing gives one.
func (c *checker) ctorTarget(pos ast.Pos, name string, want *ast.Type) *ast.Type {
	owner := ctorOwner(name)
	switch {
	case want != nil && want.Generic == owner:
		return want
	case want == nil:
		c.errorf(pos, "E0304", "cannot infer the type of %s; write the type, e.g. %s", name, ctorExample(name))
	case want.Kind != ast.Invalid:
		c.errorf(pos, "E0301", "cannot use %s (a variant of %s<T>) as %s", name, owner, want)
	}
	return ast.InvalidType
}

// ctorCall checks `Some(x)`, `Ok(v)` or `Err(e)`. Some takes its type
// from x when nothing else gives one; Ok and Err need the context.
func (c *checker) ctorCall(e *ast.CallExpr, id *ast.Ident, want *ast.Type) *ast.Type {
	name := id.Name
	if name == "None" {
		c.errorf(e.Pos(), "E0317", "variant \"None\" has no values; write None without parentheses")
		c.args(e.Args, nil, "")
		return ast.InvalidType
	}
	if len(e.Args) != 1 {
		c.errorf(e.Pos(), "E0306", "%q takes 1 value, got %d", name, len(e.Args))
		c.args(e.Args, nil, "")
		return ast.InvalidType
	}
	var t *ast.Type
	switch {
	case name == "Some" && (want == nil || !want.IsOption()):
		arg := c.value(&e.Args[0], nil)
		t = c.instance("Option", arg)
		if want != nil && !invalid(want) && !invalid(t) && !identical(t, want) {
			c.errorf(e.Pos(), "E0301", "cannot use %s as %s", t, want)
			return ast.InvalidType
		}
	default:
		t = c.ctorTarget(e.Pos(), name, want)
		if t.Kind == ast.Invalid {
			c.args(e.Args, nil, "")
			return t
		}
		idx := 0
		if name == "Err" {
			idx = 1
		}
		c.args(e.Args, t.Variants[idx].Fields, name)
	}
	if t.Kind == ast.Invalid {
		return t
	}
	idx := t.VariantIndex(name)
	id.Sym = c.variants[t][idx]
	e.Fun.SetType(&ast.Type{Kind: ast.Func, Params: t.Variants[idx].Fields, Result: t})
	return t
}

// genericPattern checks an unqualified pattern (Some(x), None, Ok(v),
// Err(e)) against the scrutinee type and declares its bindings. It
// returns the pattern's text, or "" when the pattern is wrong.
func (c *checker) genericPattern(p *ast.Pattern, xt *ast.Type) string {
	name := p.Name.Name
	text := name
	switch name {
	case "Some", "None", "Ok", "Err":
	default:
		c.errorf(p.Pos(), "E0411", "pattern %s needs its enum: write Enum::%s (only Some, None, Ok and Err stand alone)", name, name)
		c.declareBinds(p, nil)
		return ""
	}
	owner := ctorOwner(name)
	if xt.Kind == ast.Invalid {
		c.declareBinds(p, nil)
		return ""
	}
	if xt.Generic != owner {
		c.errorf(p.Pos(), "E0411", "pattern %s does not fit %s", text, xt)
		c.declareBinds(p, nil)
		return ""
	}
	idx := xt.VariantIndex(name)
	p.Variant = idx
	p.Name.Sym = c.variants[xt][idx]
	fields := xt.Variants[idx].Fields
	if len(p.Binds) != len(fields) {
		if len(fields) == 0 {
			c.errorf(p.Pos(), "E0411", "pattern %s binds %s, but %s has no values", text, plural(len(p.Binds), "name"), name)
		} else {
			c.errorf(p.Pos(), "E0411", "pattern %s binds %s, but %s has 1 value; write %s(x)", text, plural(len(p.Binds), "name"), name, name)
		}
	}
	c.declareBinds(p, fields)
	return text
}

// variantText is how a missing arm is named: Verdict::Accept, or None.
func variantText(t *ast.Type, v *ast.Variant) string {
	if t.Generic != "" {
		return v.Name
	}
	return fmt.Sprintf("%s::%s", t.Name, v.Name)
}
