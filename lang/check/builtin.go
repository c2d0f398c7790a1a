package check

import (
	"fmt"

	"github.com/hale-lang/hale/lang/ast"
)

// builtinArity lists every builtin with its number of arguments. Builtins
// are generic, so each is typed by hand in builtin.
var builtinArity = map[string]int{
	"len": 1, "str": 1, "int": 1, "float": 1,
	"push": 2, "pop": 1, "insert": 3, "remove": 2,
	"has": 2, "keys": 1, "values": 1, "delete": 2,
	"slice": 3, "sort": 1,
	"contains": 2, "find": 2, "split": 2, "join": 2, "trim": 1, "upper": 1, "lower": 1,
	"starts_with": 2, "ends_with": 2, "replace": 3,
	"abs": 1, "min": 2, "max": 2,
	"assert": 2, "panic": 1, "print": 1,
	"std::json::encode": 1,
	"format":            -1, // variadic: checked by format
	"unwrap":            1, "unwrap_or": 2, "is_ok": 1, "is_err": 1, "is_some": 1, "is_none": 1,
	"get":              2,
	"std::json::parse": 1, "std::json::get": 2, "std::json::at": 2,
	"std::json::as_str": 1, "std::json::as_num": 1, "std::json::as_bool": 1,
	"std::json::as_arr": 1, "std::json::as_obj": 1, "std::json::decode": 1,
}

// builtinResult is the result type of builtins whose result does not
// depend on their arguments (used after an arity error).
var builtinResult = map[string]*ast.Type{
	"len": ast.IntType, "str": ast.StringType, "int": ast.IntType, "float": ast.FloatType,
	"push": ast.VoidType, "insert": ast.VoidType, "delete": ast.VoidType,
	"has": ast.BoolType, "contains": ast.BoolType, "find": ast.IntType,
	"split": ast.ListOf(ast.StringType), "join": ast.StringType,
	"trim": ast.StringType, "upper": ast.StringType, "lower": ast.StringType,
	"starts_with": ast.BoolType, "ends_with": ast.BoolType, "replace": ast.StringType,
	"assert": ast.VoidType, "panic": ast.VoidType, "print": ast.VoidType,
	"std::json::encode": ast.StringType, "format": ast.StringType,
	"is_ok": ast.BoolType, "is_err": ast.BoolType, "is_some": ast.BoolType, "is_none": ast.BoolType,
}

// builtin checks a call of a builtin and returns its result type. The
// callee expression gets the instantiated signature as its type.
func (c *checker) builtin(e *ast.CallExpr, name string, want *ast.Type) *ast.Type {
	if name == "format" {
		return c.format(e)
	}
	n := builtinArity[name]
	if len(e.Args) != n {
		c.errorf(e.Pos(), "E0306", "%q takes %s, got %d", name, plural(n, "argument"), len(e.Args))
		c.args(e.Args, nil, "")
		if r := builtinResult[name]; r != nil {
			return r
		}
		return ast.InvalidType
	}
	b := &builtinCall{c: c, e: e, name: name, types: make([]*ast.Type, n), want: want}
	result := b.check()
	e.Fun.SetType(&ast.Type{Kind: ast.Func, Params: b.types, Result: result})
	return result
}

// builtinCall is one call of a builtin whose arity is right.
type builtinCall struct {
	c     *checker
	e     *ast.CallExpr
	name  string
	types []*ast.Type // argument types, for the instantiated signature
	want  *ast.Type   // the type the context expects of the result, or nil
}

// arg checks argument i with an optional expected type.
func (b *builtinCall) arg(i int, want *ast.Type) *ast.Type {
	b.types[i] = b.c.value(&b.e.Args[i], want)
	return b.types[i]
}

// must checks argument i against an exact type.
func (b *builtinCall) must(i int, want *ast.Type) *ast.Type {
	b.types[i] = b.c.expectValue(&b.e.Args[i], want, fmt.Sprintf("in argument %d of %q", i+1, b.name))
	return b.types[i]
}

// bad reports argument i having the wrong kind of type.
func (b *builtinCall) bad(i int, t *ast.Type, need string) {
	if !invalid(t) {
		b.c.errorf(b.e.Args[i].Pos(), "E0316", "invalid argument %d of %q: want %s, got %s", i+1, b.name, need, t)
	}
}

// refuse reports argument i when its type holds a secret whose contents
// the builtin would read (E0340); it returns whether it did.
func (b *builtinCall) refuse(i int, t *ast.Type, what string) bool {
	return b.c.refuseSecret(b.e.Args[i], t, what)
}

// rest checks the arguments after the first when the first was rejected.
func (b *builtinCall) rest() {
	for i := 1; i < len(b.types); i++ {
		b.arg(i, nil)
	}
}

func (b *builtinCall) check() *ast.Type {
	name, arg, must, bad, rest := b.name, b.arg, b.must, b.bad, b.rest
	c := b.c
	switch name {
	case "len":
		t := arg(0, nil)
		if c.isSecret(t) {
			c.refuseSecret(b.e.Args[0], t, "has no length the program can read")
			return ast.IntType
		}
		switch t.Kind {
		case ast.List, ast.Map, ast.String, ast.Bytes:
		default:
			bad(0, t, "a list, map, string or bytes")
		}
		return ast.IntType
	case "str":
		b.refuse(0, arg(0, nil), "cannot be converted to a string")
		return ast.StringType
	case "int":
		t := arg(0, nil)
		if b.refuse(0, t, "cannot be converted to int") {
			return ast.IntType
		}
		if t.Kind != ast.Float && t.Kind != ast.String && t.Kind != ast.Invalid {
			c.errorf(b.e.Args[0].Pos(), "E0315", "cannot convert %s to int: int(x) converts a float or a string", t)
		}
		return ast.IntType
	case "float":
		t := arg(0, nil)
		if b.refuse(0, t, "cannot be converted to float") {
			return ast.FloatType
		}
		if t.Kind != ast.Int && t.Kind != ast.String && t.Kind != ast.Invalid {
			c.errorf(b.e.Args[0].Pos(), "E0315", "cannot convert %s to float: float(x) converts an int or a string", t)
		}
		return ast.FloatType
	case "push", "pop", "insert", "remove":
		t := arg(0, nil)
		if t.Kind != ast.List {
			bad(0, t, "a list")
			rest()
			if name == "push" || name == "insert" {
				return ast.VoidType
			}
			return ast.InvalidType
		}
		switch name {
		case "push":
			must(1, t.Elem)
			return ast.VoidType
		case "pop":
			return t.Elem
		case "insert":
			must(1, ast.IntType)
			must(2, t.Elem)
			return ast.VoidType
		default: // remove
			must(1, ast.IntType)
			return t.Elem
		}
	case "has", "keys", "values", "delete":
		t := arg(0, nil)
		if t.Kind != ast.Map {
			bad(0, t, "a map")
			rest()
			switch name {
			case "has":
				return ast.BoolType
			case "delete":
				return ast.VoidType
			}
			return ast.InvalidType
		}
		switch name {
		case "has":
			must(1, t.Key)
			return ast.BoolType
		case "keys":
			return ast.ListOf(t.Key)
		case "values":
			return ast.ListOf(t.Elem)
		default: // delete
			must(1, t.Key)
			return ast.VoidType
		}
	case "slice":
		t := arg(0, nil)
		if b.refuse(0, t, "cannot be sliced") {
			must(1, ast.IntType)
			must(2, ast.IntType)
			return ast.InvalidType
		}
		must(1, ast.IntType)
		must(2, ast.IntType)
		switch t.Kind {
		case ast.List, ast.String, ast.Bytes:
			return t
		}
		bad(0, t, "a list, string or bytes")
		return ast.InvalidType
	case "sort":
		t := arg(0, nil)
		if b.refuse(0, t, "cannot be sorted") {
			return t
		}
		if t.Kind == ast.List && (isOrdered(t.Elem) || t.Elem.Kind == ast.Invalid) {
			return t
		}
		bad(0, t, "a list of int, float or string")
		return ast.InvalidType
	case "contains":
		t := arg(0, nil)
		if b.refuse(0, t, "cannot be searched") {
			rest()
			return ast.BoolType
		}
		switch t.Kind {
		case ast.String:
			must(1, ast.StringType)
		case ast.List:
			must(1, t.Elem)
		default:
			bad(0, t, "a string or a list")
			rest()
		}
		return ast.BoolType
	case "find", "split", "starts_with", "ends_with", "replace", "trim", "upper", "lower":
		for i := 0; i < builtinArity[name]; i++ {
			must(i, ast.StringType)
		}
		return builtinResult[name]
	case "join":
		must(0, ast.ListOf(ast.StringType))
		must(1, ast.StringType)
		return ast.StringType
	case "abs", "min", "max":
		t := arg(0, nil)
		if !isNumeric(t) {
			bad(0, t, "an int or a float")
			rest()
			return ast.InvalidType
		}
		if name != "abs" {
			must(1, t)
		}
		return t
	case "assert":
		must(0, ast.BoolType)
		must(1, ast.StringType)
		return ast.VoidType
	case "panic":
		must(0, ast.StringType)
		return ast.VoidType
	case "print":
		b.refuse(0, arg(0, nil), "cannot be printed")
		return ast.VoidType
	case "std::json::encode":
		b.refuse(0, arg(0, nil), "cannot be encoded as JSON")
		return ast.StringType
	case "unwrap", "unwrap_or":
		// The expected type flows in: `let n: int = unwrap(Ok(3));`.
		var want *ast.Type
		if name := ctorName(b.e.Args[0]); name != "" && b.want != nil && isValue(b.want) {
			want = c.instance(ctorOwner(name), b.want)
		} else if isDecodeCall(b.e.Args[0]) && b.want != nil && isValue(b.want) {
			want = c.instance("Result", b.want)
		}
		t := arg(0, want)
		if t.Generic == "" {
			bad(0, t, "an Option or a Result")
			rest()
			return ast.InvalidType
		}
		if name == "unwrap_or" {
			must(1, t.TypeArg())
		}
		return t.TypeArg()
	case "is_ok", "is_err", "is_some", "is_none":
		t := arg(0, nil)
		owner, need := "Result", "a Result"
		if name == "is_some" || name == "is_none" {
			owner, need = "Option", "an Option"
		}
		if t.Generic != owner {
			bad(0, t, need)
		}
		return ast.BoolType
	case "std::json::parse", "std::json::get", "std::json::at", "std::json::as_str", "std::json::as_num",
		"std::json::as_bool", "std::json::as_arr", "std::json::as_obj", "std::json::decode":
		return b.jsonBuiltin()
	case "get":
		t := arg(0, nil)
		switch t.Kind {
		case ast.Map:
			must(1, t.Key)
			return c.instance("Option", t.Elem)
		case ast.List:
			must(1, ast.IntType)
			return c.instance("Option", t.Elem)
		}
		bad(0, t, "a map or a list")
		rest()
		return ast.InvalidType
	}
	return ast.InvalidType
}
