package check

import (
	"github.com/hale-lang/hale/lang/ast"
)

// The built-in enum Json { Null, Bool(bool), Num(float), Str(string),
// Arr([Json]), Obj({string: Json}) } and the std::json builtins that read
// it. Like Error, a program's own top-level Json shadows it and the
// built-in stays reachable as std::Json.

// declareJSONType creates the built-in Json enum.
func (c *checker) declareJSONType() {
	name := "Json"
	if c.res.Scope["Json"] != nil {
		name = "std::Json"
	}
	t := &ast.Type{Kind: ast.Enum, Name: name}
	t.Variants = []*ast.Variant{
		{Name: "Null"},
		{Name: "Bool", Fields: []*ast.Type{ast.BoolType}},
		{Name: "Num", Fields: []*ast.Type{ast.FloatType}},
		{Name: "Str", Fields: []*ast.Type{ast.StringType}},
		{Name: "Arr", Fields: []*ast.Type{ast.ListOf(t)}},
		{Name: "Obj", Fields: []*ast.Type{ast.MapOf(ast.StringType, t)}},
	}
	for i, v := range t.Variants {
		c.variants[t] = append(c.variants[t], &ast.Symbol{Kind: ast.SymVariant, Name: name + "::" + v.Name, Type: t, Index: i})
	}
	c.jsonType = t
	sym := &ast.Symbol{Kind: ast.SymEnum, Name: name, Type: t}
	c.res.Scope["std::Json"] = sym
	if name == "Json" {
		c.res.Scope["Json"] = sym
	}
}

// jsonAccessors are the std::json builtins that read a Json value, with
// the type of what each gives inside its Option (nil: Json itself).
var jsonAccessors = map[string]*ast.Type{
	"std::json::as_str":  ast.StringType,
	"std::json::as_num":  ast.FloatType,
	"std::json::as_bool": ast.BoolType,
	"std::json::as_arr":  nil, // [Json]
	"std::json::as_obj":  nil, // {string: Json}
	"std::json::get":     nil,
	"std::json::at":      nil,
}

// jsonBuiltin checks parse, get, at and the as_* accessors.
func (b *builtinCall) jsonBuiltin() *ast.Type {
	c, j := b.c, b.c.jsonType
	switch b.name {
	case "std::json::parse":
		b.must(0, ast.StringType)
		return c.instance("Result", j)
	case "std::json::decode":
		return b.decode()
	}
	b.must(0, j)
	var inner *ast.Type
	switch b.name {
	case "std::json::get":
		b.must(1, ast.StringType)
		inner = j
	case "std::json::at":
		b.must(1, ast.IntType)
		inner = j
	case "std::json::as_arr":
		inner = ast.ListOf(j)
	case "std::json::as_obj":
		inner = ast.MapOf(ast.StringType, j)
	default:
		inner = jsonAccessors[b.name]
	}
	return c.instance("Option", inner)
}

// decode checks std::json::decode(s), whose result type Result<T> comes
// from the context alone.
func (b *builtinCall) decode() *ast.Type {
	c := b.c
	b.must(0, ast.StringType)
	want := b.want
	switch {
	case want == nil:
		c.errorf(b.e.Pos(), "E0304", "cannot infer the type std::json::decode reads; write it, e.g. let r: Result<Reply> = std::json::decode(s);")
		return ast.InvalidType
	case invalid(want):
		return ast.InvalidType
	case !want.IsResult():
		c.errorf(b.e.Pos(), "E0301", "std::json::decode gives a Result<T>, not %s", want)
		return ast.InvalidType
	}
	if c.refuseSecretType(b.e.Pos(), want.TypeArg(), "cannot be decoded from JSON") {
		return ast.InvalidType
	}
	if bad := c.undecodable(want.TypeArg(), map[*ast.Type]bool{}); bad != "" {
		c.errorf(b.e.Pos(), "E0316", "std::json::decode cannot read %s: %s", want.TypeArg(), bad)
		return ast.InvalidType
	}
	return want
}

// undecodable explains why no JSON text decodes as t, or gives "".
// Option<Option<T>> is refused: null could be None or Some(None).
func (c *checker) undecodable(t *ast.Type, seen map[*ast.Type]bool) string {
	if t == nil || seen[t] {
		return ""
	}
	switch t.Kind {
	case ast.List:
		return c.undecodable(t.Elem, seen)
	case ast.Map:
		if t.Key.Kind != ast.String {
			return t.String() + " has no JSON object form (maps decode with string keys only)"
		}
		return c.undecodable(t.Elem, seen)
	case ast.Struct, ast.Enum:
		seen[t] = true
		if t.IsOption() && t.TypeArg().IsOption() {
			return t.String() + " has no JSON form of its own (null would be both None and Some(None))"
		}
		if t == c.jsonType {
			return ""
		}
		for _, f := range t.Fields {
			if s := c.undecodable(f.Type, seen); s != "" {
				return s
			}
		}
		for _, v := range t.Variants {
			for _, f := range v.Fields {
				if s := c.undecodable(f, seen); s != "" {
					return s
				}
			}
		}
		return c.decodeHook(t)
	}
	return ""
}

// decodeHook is where a type that decode must refuse for its own reasons
// is named; it gives the reason, or "". A type holding a secret is
// refused before (E0340, refuseSecretType); this is the backstop.
func (c *checker) decodeHook(t *ast.Type) string {
	if c.isSecret(t) {
		return "a secret is never read from text"
	}
	return ""
}

// isDecodeCall reports whether e is a call of std::json::decode, whose
// type the context of an enclosing unwrap or unwrap_or gives.
func isDecodeCall(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	path, ok := call.Fun.(*ast.PathExpr)
	return ok && path.Joined() == "std::json::decode"
}
