package check

import (
	"strings"

	"github.com/hale-lang/hale/lang/ast"
)

// basicTypes maps the built-in type names to their shared types.
var basicTypes = map[string]*ast.Type{
	"int":    ast.IntType,
	"float":  ast.FloatType,
	"bool":   ast.BoolType,
	"string": ast.StringType,
	"bytes":  ast.BytesType,
}

// typeOf resolves a type as written. It returns InvalidType after
// reporting an error (and for a nil TypeExpr from a broken tree).
func (c *checker) typeOf(te ast.TypeExpr) *ast.Type {
	switch te := te.(type) {
	case *ast.NamedType:
		t := c.namedType(te)
		te.T = t
		return t
	case *ast.ListType:
		if te == nil {
			return ast.InvalidType
		}
		return ast.ListOf(c.typeOf(te.Elem))
	case *ast.MapType:
		if te == nil {
			return ast.InvalidType
		}
		k := c.typeOf(te.Key)
		v := c.typeOf(te.Value)
		if !validKey(k) {
			c.errorf(te.Key.Pos(), "E0305", "invalid map key type %s: keys must be int, string or bool", k)
			k = ast.InvalidType
		}
		return ast.MapOf(k, v)
	}
	return ast.InvalidType
}

// validKey reports whether t can be a map key (Invalid passes, to avoid a
// second error).
func validKey(t *ast.Type) bool {
	switch t.Kind {
	case ast.Int, ast.String, ast.Bool, ast.Invalid:
		return true
	}
	return false
}

func (c *checker) namedType(te *ast.NamedType) *ast.Type {
	if te == nil || len(te.Path) == 0 {
		return ast.InvalidType
	}
	name := strings.Join(te.Path, "::")
	if len(te.Path) == 1 && (name == "Option" || name == "Result") {
		return c.genericType(te, name)
	}
	if len(te.Args) > 0 {
		c.errorf(te.Pos(), "E0210", "type %q takes no type arguments (only Option and Result do)", name)
		for _, a := range te.Args {
			c.typeOf(a)
		}
	}
	if len(te.Path) == 1 {
		if t := basicTypes[name]; t != nil {
			return t
		}
		if name == SecretTypeName {
			return c.secretType
		}
	}
	var sym *ast.Symbol
	if len(te.Path) == 1 {
		sym = c.lookupTop(name)
	} else {
		sym = c.res.Scope[name]
	}
	if sym == nil {
		c.errorf(te.Pos(), "E0201", "undefined type %q", name)
		c.endAt(te.End())
		if len(te.Path) == 1 {
			c.suggest(name, append(c.topLevelOf(ast.SymStruct, ast.SymTopic, ast.SymEnum), "bool", "bytes", "float", "int", "secret", "string"))
		}
		return ast.InvalidType
	}
	switch sym.Kind {
	case ast.SymStruct, ast.SymTopic, ast.SymEnum:
		return sym.Type
	}
	c.errorf(te.Pos(), "E0203", "%s is not a type", describe(sym))
	return ast.InvalidType
}

// identical is ast.Identical with Invalid matching anything, so that one
// error does not cause others.
func identical(a, b *ast.Type) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind == ast.Invalid || b.Kind == ast.Invalid {
		return true
	}
	if a == b {
		return true
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case ast.List:
		return identical(a.Elem, b.Elem)
	case ast.Map:
		return identical(a.Key, b.Key) && identical(a.Elem, b.Elem)
	case ast.Struct, ast.Enum, ast.Func:
		return ast.Identical(a, b)
	}
	return true
}

// invalid reports whether t is missing or Invalid, anywhere inside.
func invalid(t *ast.Type) bool {
	if t == nil {
		return true
	}
	switch t.Kind {
	case ast.Invalid:
		return true
	case ast.List:
		return invalid(t.Elem)
	case ast.Map:
		return invalid(t.Key) || invalid(t.Elem)
	}
	return false
}

func isNumeric(t *ast.Type) bool { return t.Kind == ast.Int || t.Kind == ast.Float }

func isOrdered(t *ast.Type) bool {
	return t.Kind == ast.Int || t.Kind == ast.Float || t.Kind == ast.String
}

// isValue reports whether t can be the type of a value (not void, not a fn).
func isValue(t *ast.Type) bool { return t.Kind != ast.Void && t.Kind != ast.Func }

// resolveTypeDecls resolves the fields of every struct and topic and the
// payloads of every enum variant. All type names are declared by now, so
// declarations may refer to each other in any order.
func (c *checker) resolveTypeDecls() {
	for _, d := range c.decls {
		c.setFile(d.file)
		switch decl := d.decl.(type) {
		case *ast.TypeDecl:
			seen := map[string]*ast.FieldDecl{}
			for _, f := range decl.Fields {
				if f == nil || f.Name == nil {
					continue
				}
				t := c.typeOf(f.Type)
				if prev := seen[f.Name.Name]; prev != nil {
					c.errorf(f.Name.Pos(), "E0202", "duplicate field %q (first declared at %s)", f.Name.Name, prev.Name.Pos())
					continue
				}
				seen[f.Name.Name] = f
				decl.T.Fields = append(decl.T.Fields, &ast.Field{Name: f.Name.Name, Type: t})
			}
		case *ast.EnumDecl:
			seen := map[string]*ast.VariantDecl{}
			for _, v := range decl.Variants {
				if v == nil || v.Name == nil {
					continue
				}
				var ts []*ast.Type
				for _, te := range v.Types {
					ts = append(ts, c.typeOf(te))
				}
				if prev := seen[v.Name.Name]; prev != nil {
					c.errorf(v.Name.Pos(), "E0202", "duplicate variant %q (first declared at %s)", v.Name.Name, prev.Name.Pos())
					continue
				}
				seen[v.Name.Name] = v
				idx := len(decl.T.Variants)
				decl.T.Variants = append(decl.T.Variants, &ast.Variant{Name: v.Name.Name, Fields: ts})
				sym := &ast.Symbol{Kind: ast.SymVariant, Name: decl.T.Name + "::" + v.Name.Name,
					Pos: v.Name.Pos(), Type: decl.T, Index: idx}
				v.Name.Sym = sym
				c.variants[decl.T] = append(c.variants[decl.T], sym)
			}
		}
	}
	c.module = ""
}

// recursiveStructs reports struct types that contain themselves through
// struct-typed fields alone: no value of such a type can be built. (A list,
// map or enum on the way breaks the cycle.)
func (c *checker) recursiveStructs() {
	const (
		unvisited = iota
		active
		done
	)
	state := map[*ast.Type]int{}
	var stack []*ast.Type
	var visit func(t *ast.Type)
	visit = func(t *ast.Type) {
		state[t] = active
		stack = append(stack, t)
		for _, f := range t.Fields {
			ft := f.Type
			if ft.Kind != ast.Struct {
				continue
			}
			switch state[ft] {
			case unvisited:
				visit(ft)
			case active:
				i := len(stack) - 1
				for i > 0 && stack[i] != ft {
					i--
				}
				var names []string
				for _, s := range stack[i:] {
					names = append(names, s.Name)
				}
				names = append(names, ft.Name)
				c.errorf(ft.Decl, "E0322", "invalid recursive type %q: %s (a value would contain itself; use a list or an enum)",
					ft.Name, strings.Join(names, " -> "))
			}
		}
		stack = stack[:len(stack)-1]
		state[t] = done
	}
	for _, d := range c.res.Types {
		if d.T != nil && state[d.T] == unvisited {
			visit(d.T)
		}
	}
}
