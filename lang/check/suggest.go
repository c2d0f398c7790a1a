package check

import (
	"sort"
	"strconv"
	"strings"

	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/diag"
)

// Hints for unknown names: the closest known name of the right kind
// (`did you mean "count"?`, see diag.Closest), and for a few words that
// other languages have and Hale does not, what to write instead.

// hint adds hints to the diagnostic reported last.
func (c *checker) hint(hints ...string) { c.errs.Hint(hints...) }

// endAt records where the text of the diagnostic reported last ends.
func (c *checker) endAt(end ast.Pos) {
	if len(c.errs) > 0 {
		c.errs[len(c.errs)-1].End = end
	}
}

// suggest adds `did you mean "x"?` to the last diagnostic when a candidate
// is close to name.
func (c *checker) suggest(name string, candidates []string) {
	if best := diag.Closest(name, candidates); best != "" {
		c.hint(`did you mean "` + best + `"?`)
	}
}

// foreignWords are names from other languages, with what Hale has instead.
var foreignWords = map[string]string{
	"null": `Hale has no null: a value that may be missing is an Option, and None is the missing value`,
	"nil":  `Hale has no nil: a value that may be missing is an Option, and None is the missing value`,
}

// undefinedName reports an unknown plain name used as a value or (with
// call set) called, with a hint: a known name of the same use.
func (c *checker) undefinedName(id *ast.Ident, call bool) {
	c.errorf(id.Pos(), "E0201", "undefined name %q", id.Name)
	c.endAt(id.End())
	if h := foreignWords[id.Name]; h != "" {
		c.hint(h)
		return
	}
	c.suggest(id.Name, c.visibleNames(func(sym *ast.Symbol) bool {
		switch sym.Kind {
		case ast.SymLocal, ast.SymState, ast.SymLocusParam, ast.SymConst:
			return !call
		case ast.SymFn, ast.SymLocusFn, ast.SymPrim, ast.SymBuiltin:
			return call
		}
		return false
	}))
}

// visibleNames lists the names an expression can use here: locals, the
// locus's members, the current module's or the program's top-level names,
// and the builtins. keep, when not nil, filters by symbol.
func (c *checker) visibleNames(keep func(*ast.Symbol) bool) []string {
	var out []string
	add := func(name string, sym *ast.Symbol) {
		if keep == nil || keep(sym) {
			out = append(out, name)
		}
	}
	for s := c.scope; s != nil; s = s.parent {
		for name, sym := range s.names {
			add(name, sym)
		}
	}
	if l := c.locus; l != nil {
		for name, sym := range l.members {
			add(name, sym)
		}
	}
	for key, sym := range c.res.Scope {
		if c.module != "" {
			if rest, ok := strings.CutPrefix(key, c.module+"::"); ok && !strings.Contains(rest, "::") {
				add(rest, sym)
			}
		} else if !strings.Contains(key, "::") {
			add(key, sym)
		}
	}
	for name, sym := range c.builtins {
		if !strings.Contains(name, "::") {
			add(name, sym)
		}
	}
	sort.Strings(out) // map order must not leak into anything
	return out
}

// undefinedPath reports an unknown qualified name, std::math::sinn,
// suggesting a known one with the same prefix.
func (c *checker) undefinedPath(pos, end ast.Pos, joined string) {
	c.errorf(pos, "E0201", "undefined name %q", joined)
	c.endAt(end)
	i := strings.LastIndex(joined, "::")
	prefix, last := joined[:i+2], joined[i+2:]
	var names []string
	for _, m := range []map[string]*ast.Symbol{c.builtins, c.res.Scope} {
		for key := range m {
			if rest, ok := strings.CutPrefix(key, prefix); ok && !strings.Contains(rest, "::") {
				names = append(names, rest)
			}
		}
	}
	if best := diag.Closest(last, names); best != "" {
		c.hint(`did you mean "` + prefix + best + `"?`)
		return
	}
	if strings.Count(joined, "::") == 1 { // Enum::Variant with a misspelt enum
		enum := joined[:i]
		if best := diag.Closest(enum, c.topLevelOf(ast.SymEnum)); best != "" {
			c.hint(`did you mean "` + best + "::" + last + `"?`)
		}
		return
	}
	// A misspelt module, std::maths::sqrt: the closest module that has
	// the name.
	module := joined[:i]
	var modules []string
	seen := map[string]bool{}
	for _, m := range []map[string]*ast.Symbol{c.builtins, c.res.Scope} {
		for key := range m {
			if j := strings.LastIndex(key, "::"); j > 0 && key[j+2:] == last && !seen[key[:j]] {
				seen[key[:j]] = true
				modules = append(modules, key[:j])
			}
		}
	}
	if best := diag.Closest(module, modules); best != "" {
		c.hint(`did you mean "` + best + "::" + last + `"?`)
	}
}

// topLevelOf lists the top-level names of the given kinds visible from
// the current file.
func (c *checker) topLevelOf(kinds ...ast.SymbolKind) []string {
	var out []string
	for key, sym := range c.res.Scope {
		name := key
		if c.module != "" {
			rest, ok := strings.CutPrefix(key, c.module+"::")
			if !ok {
				continue
			}
			name = rest
		}
		if strings.Contains(name, "::") {
			continue
		}
		for _, k := range kinds {
			if sym.Kind == k {
				out = append(out, name)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

func fieldNames(t *ast.Type) []string {
	var out []string
	for _, f := range t.Fields {
		out = append(out, f.Name)
	}
	return out
}

func variantNames(t *ast.Type) []string {
	var out []string
	for _, v := range t.Variants {
		out = append(out, v.Name)
	}
	return out
}

// methodCall reports `xs.push(v)`: Hale has no methods, and a fn or
// builtin of that name is called with the receiver as its first argument.
// It returns false when e is not such a call.
func (c *checker) methodCall(e *ast.CallExpr) bool {
	fe, ok := e.Fun.(*ast.FieldExpr)
	if !ok || fe.Name == nil || fe.X == nil {
		return false
	}
	sym := c.lookup(fe.Name.Name, fe.Name.Pos())
	if sym == nil || sym.Kind != ast.SymBuiltin && sym.Kind != ast.SymFn && sym.Kind != ast.SymPrim && sym.Kind != ast.SymLocusFn {
		return false
	}
	c.value(&fe.X, nil)
	c.args(e.Args, nil, "")
	args := []string{exprText(fe.X)}
	for _, a := range e.Args {
		args = append(args, exprText(a))
	}
	c.errorf(fe.Name.Pos(), "E0307", "Hale has no methods: %q is a fn, not a field", fe.Name.Name)
	c.hint("write " + fe.Name.Name + "(" + strings.Join(args, ", ") + ")")
	return true
}

// exprText writes short expressions back as source for hints; anything
// longer becomes "…".
func exprText(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Name:
		if e.Ident != nil {
			return e.Ident.Name
		}
	case *ast.PathExpr:
		return e.Joined()
	case *ast.IntLit:
		return e.Raw
	case *ast.FloatLit:
		return e.Raw
	case *ast.BoolLit:
		if e.Value {
			return "true"
		}
		return "false"
	case *ast.StringLit:
		if len(e.Value) <= 20 {
			return strconv.Quote(e.Value)
		}
	case *ast.FieldExpr:
		if e.Name != nil {
			return exprText(e.X) + "." + e.Name.Name
		}
	}
	return "…"
}
