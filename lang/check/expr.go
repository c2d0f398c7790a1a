package check

import (
	"fmt"
	"math"
	"strings"

	"github.com/hale-lang/hale/lang/ast"
)

// expr checks the expression in *pe and returns its type: InvalidType
// after an error, VoidType for a call of something that returns nothing.
// want, when not nil, is the type the context expects. It types empty
// literals and flows into literals and operands (bidirectional checking);
// a mismatch between the result and want is reported by the caller
// (expectValue), not here. expr may replace *pe: `-9223372036854775808` is
// folded into one IntLit.
func (c *checker) expr(pe *ast.Expr, want *ast.Type) *ast.Type {
	if *pe == nil {
		return ast.InvalidType
	}
	t := c.expr1(pe, want)
	if t == nil {
		t = ast.InvalidType
	}
	(*pe).SetType(t)
	return t
}

// value checks an expression that must produce a value.
func (c *checker) value(pe *ast.Expr, want *ast.Type) *ast.Type {
	t := c.expr(pe, want)
	if t.Kind == ast.Void {
		what := "this call"
		if call, ok := (*pe).(*ast.CallExpr); ok {
			if sym := call.Callee(); sym != nil {
				what = fmt.Sprintf("%q", shortName(sym))
			}
		}
		c.errorf((*pe).Pos(), "E0308", "%s returns nothing and cannot be used as a value", what)
		return ast.InvalidType
	}
	return t
}

// expectValue checks an expression that must produce a value of type want
// (any type when want is nil). context completes the message, e.g.
// `in argument 1 of "add"`.
func (c *checker) expectValue(pe *ast.Expr, want *ast.Type, context string) *ast.Type {
	t := c.value(pe, want)
	if want != nil && !identical(t, want) {
		if !ContainsSecret(want) && c.refuseSecret(*pe, t, "cannot be used as "+want.String()+" "+context) {
			return t
		}
		c.errorf((*pe).Pos(), "E0301", "cannot use %s as %s %s", t, want, context)
	}
	return t
}

// shortName is a symbol's name for messages about calls: fns of a locus
// without the locus prefix.
func shortName(sym *ast.Symbol) string {
	if sym.Kind == ast.SymLocusFn || sym.Kind == ast.SymState || sym.Kind == ast.SymLocusParam {
		if i := strings.LastIndexByte(sym.Name, '.'); i >= 0 {
			return sym.Name[i+1:]
		}
	}
	return sym.Name
}

func (c *checker) expr1(pe *ast.Expr, want *ast.Type) *ast.Type {
	switch e := (*pe).(type) {
	case *ast.IntLit:
		if e.Value > math.MaxInt64 {
			c.errorf(e.Pos(), "E0314", "integer literal %s overflows int", e.Raw)
		}
		return ast.IntType
	case *ast.FloatLit:
		return ast.FloatType
	case *ast.StringLit:
		return ast.StringType
	case *ast.BytesLit:
		return ast.BytesType
	case *ast.BoolLit:
		return ast.BoolType
	case *ast.Name:
		return c.name(e, want)
	case *ast.PathExpr:
		return c.pathValue(e)
	case *ast.StructLit:
		return c.structLit(e)
	case *ast.ListLit:
		return c.listLit(e, want)
	case *ast.MapLit:
		return c.mapLit(e, want)
	case *ast.UnaryExpr:
		return c.unary(pe, e, want)
	case *ast.BinaryExpr:
		return c.binary(e, want)
	case *ast.CallExpr:
		return c.call(e, want)
	case *ast.QuestionExpr:
		return c.question(e, want)
	case *ast.TryExpr:
		return c.tryExpr(e, want)
	case *ast.IndexExpr:
		return c.index(e)
	case *ast.FieldExpr:
		return c.field(e)
	}
	return ast.InvalidType
}

// name resolves a plain name used as a value.
func (c *checker) name(e *ast.Name, want *ast.Type) *ast.Type {
	id := e.Ident
	if id == nil {
		return ast.InvalidType
	}
	if id.Name == "_" {
		c.errorf(id.Pos(), "E0206", `cannot use "_" as a value`)
		return ast.InvalidType
	}
	sym := c.lookup(id.Name, id.Pos())
	if sym == nil {
		c.undefinedName(id, false)
		return ast.InvalidType
	}
	if isCtor(sym) {
		return c.ctorValue(id, want)
	}
	id.Sym = sym
	return c.symValue(sym, id.Pos(), id.Name)
}

// symValue is the type of a symbol used as a value; fns, builtins, types
// and loci are not values.
func (c *checker) symValue(sym *ast.Symbol, pos ast.Pos, written string) *ast.Type {
	switch sym.Kind {
	case ast.SymLocal, ast.SymState, ast.SymLocusParam, ast.SymConst:
		if sym.Type == nil {
			return ast.InvalidType
		}
		return sym.Type
	case ast.SymFn, ast.SymLocusFn, ast.SymPrim:
		c.errorf(pos, "E0204", "fn %q is not a value; call it: %s(…)", written, written)
	case ast.SymBuiltin:
		c.errorf(pos, "E0204", "builtin %q is not a value; call it: %s(…)", written, written)
	case ast.SymStruct, ast.SymTopic:
		c.errorf(pos, "E0204", "type %q is not a value; write a literal: %s { … }", written, written)
	case ast.SymEnum:
		c.errorf(pos, "E0204", "enum %q is not a value; name a variant: %s::…", written, written)
	case ast.SymLocus:
		c.errorf(pos, "E0204", "locus %q is not a value", written)
	case ast.SymVariant:
		v := sym.Type.Variants[sym.Index]
		if len(v.Fields) > 0 {
			c.errorf(pos, "E0317", "variant %q takes %s; write %s(…)", written, plural(len(v.Fields), "value"), written)
		}
		return sym.Type
	}
	return ast.InvalidType
}

// resolvePath resolves a qualified name: a builtin (std::json::encode), a
// standard library declaration, or an enum variant. It reports an error
// and returns nil when the path names nothing.
func (c *checker) resolvePath(e *ast.PathExpr) *ast.Symbol {
	if len(e.Parts) < 2 {
		return nil
	}
	for _, p := range e.Parts {
		if p == nil {
			return nil
		}
	}
	joined := e.Joined()
	sym := c.builtins[joined]
	if sym == nil {
		sym = c.res.Scope[joined]
	}
	if sym == nil {
		n := len(e.Parts)
		var enum *ast.Symbol
		if n == 2 {
			enum = c.lookupTop(e.Parts[0].Name)
		} else {
			prefix := &ast.PathExpr{Parts: e.Parts[:n-1]}
			enum = c.res.Scope[prefix.Joined()]
		}
		last := e.Parts[n-1]
		switch {
		case enum == nil:
			c.undefinedPath(e.Pos(), e.End(), joined)
			return nil
		case enum.Kind != ast.SymEnum:
			c.errorf(e.Pos(), "E0203", "%s is not an enum, so %q names nothing", describe(enum), joined)
			return nil
		}
		e.Parts[n-2].Sym = enum
		idx := enum.Type.VariantIndex(last.Name)
		if idx < 0 || idx >= len(c.variants[enum.Type]) {
			c.errorf(last.Pos(), "E0209", "enum %q has no variant %q", enum.Name, last.Name)
			c.endAt(last.End())
			c.suggest(last.Name, variantNames(enum.Type))
			return nil
		}
		sym = c.variants[enum.Type][idx]
	}
	e.Parts[len(e.Parts)-1].Sym = sym
	e.Sym = sym
	return sym
}

func (c *checker) pathValue(e *ast.PathExpr) *ast.Type {
	sym := c.resolvePath(e)
	if sym == nil {
		return ast.InvalidType
	}
	return c.symValue(sym, e.Pos(), e.Joined())
}

// structLit checks `Name { f: e, … }`.
func (c *checker) structLit(e *ast.StructLit) *ast.Type {
	if e.Type == nil {
		c.fieldInits(e.Fields, ast.InvalidType, e.Pos(), "")
		return ast.InvalidType
	}
	t := c.namedType(e.Type)
	e.Type.T = t
	name := strings.Join(e.Type.Path, "::")
	if t.Kind != ast.Struct && t.Kind != ast.Invalid {
		c.errorf(e.Type.Pos(), "E0312", "cannot write a literal of %s: only structs and topics have literals", t)
		t = ast.InvalidType
	}
	c.fieldInits(e.Fields, t, e.Type.Pos(), name+" literal")
	if c.isSecret(t) {
		c.errorf(e.Type.Pos(), "E0312", "cannot write a literal of secret: a secret comes from std::os::secret, joined with strings by +")
		return ast.InvalidType
	}
	return t
}

// fieldInits checks the fields of a struct literal or a publish: every
// field exactly once, no unknown fields. It records FieldInit.Index.
func (c *checker) fieldInits(fields []*ast.FieldInit, t *ast.Type, pos ast.Pos, what string) {
	seen := map[string]*ast.FieldInit{}
	for _, fi := range fields {
		if fi == nil {
			continue
		}
		if fi.Name == nil || t.Kind != ast.Struct {
			fi.Index = -1
			c.value(&fi.Value, nil)
			continue
		}
		name := fi.Name.Name
		idx := t.FieldIndex(name)
		if idx < 0 {
			fi.Index = -1
			c.errorf(fi.Name.Pos(), "E0309", "unknown field %q in %s", name, what)
			c.value(&fi.Value, nil)
			continue
		}
		fi.Index = idx
		if prev := seen[name]; prev != nil {
			c.errorf(fi.Name.Pos(), "E0311", "duplicate field %q in %s (first at %s)", name, what, prev.Pos())
			c.value(&fi.Value, t.Fields[idx].Type)
			continue
		}
		seen[name] = fi
		c.expectValue(&fi.Value, t.Fields[idx].Type, fmt.Sprintf("in field %q of %s", name, what))
		if name == "headers" && isRequestType(t) {
			c.checkHeaderLiteral(fi.Value)
		}
	}
	if t.Kind != ast.Struct {
		return
	}
	var missing []string
	for _, f := range t.Fields {
		if seen[f.Name] == nil {
			missing = append(missing, f.Name)
		}
	}
	if len(missing) == 1 {
		c.errorf(pos, "E0310", "missing field %s in %s", quoteList(missing), what)
	} else if len(missing) > 1 {
		c.errorf(pos, "E0310", "missing fields %s in %s", quoteList(missing), what)
	}
}

// isEmptyLit reports whether e is `[]` or `{}`, whose type comes only from
// the context.
func isEmptyLit(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.ListLit:
		return len(e.Elems) == 0
	case *ast.MapLit:
		return len(e.Entries) == 0
	}
	return false
}

// needsTarget reports whether e takes its type only from the context: an
// empty literal, or a bare None, Ok(…) or Err(…).
func needsTarget(e ast.Expr) bool {
	if isEmptyLit(e) {
		return true
	}
	switch ctorName(e) {
	case "None", "Ok", "Err":
		return true
	}
	return false
}

// ctorName returns "Some", "None", "Ok" or "Err" when e is written as one
// of those constructors (a bare name or a call of one), else "".
func ctorName(e ast.Expr) string {
	var id *ast.Ident
	switch e := e.(type) {
	case *ast.Name:
		id = e.Ident
	case *ast.CallExpr:
		if n, ok := e.Fun.(*ast.Name); ok {
			id = n.Ident
		}
	}
	if id == nil {
		return ""
	}
	switch id.Name {
	case "Some", "None", "Ok", "Err":
		return id.Name
	}
	return ""
}

// emptyLit types `[]` or `{}` from want. kind is List or Map.
func (c *checker) emptyLit(pos ast.Pos, kind ast.TypeKind, want *ast.Type) *ast.Type {
	lit, eg := "[]", "let xs: [int] = [];"
	noun := "list"
	if kind == ast.Map {
		lit, eg, noun = "{}", "let m: {string: int} = {};", "map"
	}
	switch {
	case want == nil:
		c.errorf(pos, "E0304", "cannot infer the type of empty %s; write the type, e.g. %s", noun, eg)
		return ast.InvalidType
	case want.Kind == kind:
		return want
	case want.Kind != ast.Invalid:
		c.errorf(pos, "E0301", "cannot use %s (empty %s) as %s", lit, noun, want)
	}
	return ast.InvalidType
}

// firstTyped returns the index of the first expression that is not an
// empty literal (0 if all are).
func firstTyped(es []ast.Expr) int {
	for i, e := range es {
		if !isEmptyLit(e) {
			return i
		}
	}
	return 0
}

func (c *checker) listLit(e *ast.ListLit, want *ast.Type) *ast.Type {
	if len(e.Elems) == 0 {
		return c.emptyLit(e.Pos(), ast.List, want)
	}
	result := want
	var elem *ast.Type
	first := -1
	if want != nil && want.Kind == ast.List {
		elem = want.Elem
	} else {
		first = firstTyped(e.Elems)
		elem = c.value(&e.Elems[first], nil)
		result = ast.ListOf(elem)
	}
	for i := range e.Elems {
		if i != first {
			c.expectValue(&e.Elems[i], elem, "in list element")
		}
	}
	return result
}

func (c *checker) mapLit(e *ast.MapLit, want *ast.Type) *ast.Type {
	if len(e.Entries) == 0 {
		return c.emptyLit(e.Pos(), ast.Map, want)
	}
	result := want
	var key, val *ast.Type
	var first *ast.MapEntry
	if want != nil && want.Kind == ast.Map {
		key, val = want.Key, want.Elem
	} else {
		// Infer the key and value types from the first entry whose parts
		// are not empty literals.
		for _, en := range e.Entries {
			if en != nil && !isEmptyLit(en.Key) && !isEmptyLit(en.Value) {
				first = en
				break
			}
		}
		if first == nil {
			first = e.Entries[0]
		}
		if first == nil {
			return ast.InvalidType
		}
		key = c.value(&first.Key, nil)
		val = c.value(&first.Value, nil)
		if !validKey(key) {
			c.errorf(first.Key.Pos(), "E0305", "invalid map key type %s: keys must be int, string or bool", key)
			key = ast.InvalidType
		}
		result = ast.MapOf(key, val)
	}
	for _, en := range e.Entries {
		if en == nil || en == first {
			continue
		}
		c.expectValue(&en.Key, key, "as map key")
		c.expectValue(&en.Value, val, "as map value")
	}
	return result
}

func (c *checker) unary(pe *ast.Expr, e *ast.UnaryExpr, want *ast.Type) *ast.Type {
	if lit, ok := e.X.(*ast.IntLit); ok && e.Op == ast.Neg && lit.Value == 1<<63 {
		// -9223372036854775808: fold into one literal whose Value, read as
		// int64, is math.MinInt64.
		*pe = &ast.IntLit{Span: e.Span, Raw: "-" + lit.Raw, Value: lit.Value}
		return ast.IntType
	}
	switch e.Op {
	case ast.Not:
		if want == nil || want.Kind != ast.Int {
			want = ast.BoolType
		}
		t := c.value(&e.X, want)
		if t.Kind == ast.Int {
			return ast.IntType // bitwise complement
		}
		if t.Kind != ast.Bool && t.Kind != ast.Invalid {
			c.errorf(e.Pos(), "E0302", "operator ! is not defined on %s (it takes a bool or an int)", t)
		}
		return ast.BoolType
	default:
		t := c.value(&e.X, want)
		if !isNumeric(t) && t.Kind != ast.Invalid {
			c.errorf(e.Pos(), "E0302", "operator - is not defined on %s", t)
			return ast.InvalidType
		}
		return t
	}
}

func isComparison(op ast.BinaryOp) bool { return op >= ast.Eq && op <= ast.Ge }

// isBitOp reports whether op is one of the int-only bit operators.
func isBitOp(op ast.BinaryOp) bool { return op >= ast.BitAnd && op <= ast.Shr }

func (c *checker) binary(e *ast.BinaryExpr, want *ast.Type) *ast.Type {
	opPos := e.OpPos
	if !opPos.IsValid() {
		opPos = e.Pos()
	}
	if e.Op == ast.OrOr || e.Op == ast.AndAnd {
		for _, pe := range []*ast.Expr{&e.X, &e.Y} {
			t := c.value(pe, ast.BoolType)
			if t.Kind != ast.Bool && t.Kind != ast.Invalid {
				c.errorf((*pe).Pos(), "E0302", "operator %s requires bool operands, got %s", e.Op, t)
			}
		}
		return ast.BoolType
	}
	var hint *ast.Type
	if !isComparison(e.Op) {
		hint = want
	}
	var xt, yt *ast.Type
	if needsTarget(e.X) && !needsTarget(e.Y) {
		yt = c.value(&e.Y, hint)
		xt = c.value(&e.X, yt)
	} else {
		xt = c.value(&e.X, hint)
		yt = c.value(&e.Y, xt)
	}
	fail := ast.InvalidType
	if isComparison(e.Op) {
		fail = ast.BoolType
	}
	if invalid(xt) || invalid(yt) {
		return fail
	}
	if e.Op == ast.Add && (c.isSecret(xt) || c.isSecret(yt)) {
		return c.secretJoin(xt, yt, opPos)
	}
	if isComparison(e.Op) && (c.refuseSecret(e.X, xt, "cannot be compared") || c.refuseSecret(e.Y, yt, "cannot be compared")) {
		return fail
	}
	if !identical(xt, yt) {
		c.errorf(opPos, "E0303", "mismatched types %s and %s for operator %s", xt, yt, e.Op)
		return fail
	}
	ok := false
	switch e.Op {
	case ast.Eq, ast.Ne:
		ok = isValue(xt)
	case ast.Lt, ast.Le, ast.Gt, ast.Ge:
		ok = isOrdered(xt)
	case ast.Add:
		ok = isNumeric(xt) || xt.Kind == ast.String || xt.Kind == ast.Bytes || xt.Kind == ast.List
	case ast.BitAnd, ast.BitOr, ast.BitXor, ast.Shl, ast.Shr:
		ok = xt.Kind == ast.Int
	default:
		ok = isNumeric(xt)
	}
	if !ok {
		c.errorf(opPos, "E0302", "operator %s is not defined on %s", e.Op, xt)
		if xt.Kind == ast.Bool && (e.Op == ast.BitAnd || e.Op == ast.BitOr) {
			c.hint(fmt.Sprintf(`did you mean "%s%s"?`, e.Op, e.Op))
		}
		return fail
	}
	if isComparison(e.Op) {
		return ast.BoolType
	}
	return xt
}

// call checks a call of a fn, locus fn, primitive, builtin or variant.
func (c *checker) call(e *ast.CallExpr, want *ast.Type) *ast.Type {
	var sym *ast.Symbol
	switch f := e.Fun.(type) {
	case *ast.Name:
		if f.Ident == nil {
			break
		}
		if f.Ident.Name == "_" {
			c.errorf(f.Pos(), "E0206", `cannot use "_" as a value`)
			break
		}
		sym = c.lookup(f.Ident.Name, f.Ident.Pos())
		if sym == nil {
			c.undefinedName(f.Ident, true)
		}
		if isCtor(sym) {
			return c.ctorCall(e, f.Ident, want)
		}
		f.Ident.Sym = sym
	case *ast.PathExpr:
		sym = c.resolvePath(f)
	default:
		if c.methodCall(e) {
			return ast.InvalidType
		}
		c.expr(&e.Fun, nil)
		c.errorf(e.Pos(), "E0307", "cannot call this expression: only fns, builtins and enum variants can be called")
	}
	if sym == nil {
		c.args(e.Args, nil, "")
		return ast.InvalidType
	}
	written := sym.Name
	if p, ok := e.Fun.(*ast.PathExpr); ok {
		written = p.Joined()
	} else if n, ok := e.Fun.(*ast.Name); ok {
		written = n.Ident.Name
	}
	switch sym.Kind {
	case ast.SymBuiltin:
		return c.builtin(e, sym.Builtin, want)
	case ast.SymFn, ast.SymLocusFn, ast.SymPrim:
		ft := sym.Type
		if ft == nil || ft.Kind != ast.Func {
			c.args(e.Args, nil, "")
			return ast.InvalidType
		}
		e.Fun.SetType(ft)
		c.noteSecretCall(e)
		if len(e.Args) != len(ft.Params) {
			c.errorf(e.Pos(), "E0306", "%q takes %s, got %d", written, plural(len(ft.Params), "argument"), len(e.Args))
		}
		c.args(e.Args, ft.Params, written)
		return ft.Result
	case ast.SymVariant:
		enum := sym.Type
		v := enum.Variants[sym.Index]
		e.Fun.SetType(&ast.Type{Kind: ast.Func, Params: v.Fields, Result: enum})
		switch {
		case len(v.Fields) == 0:
			c.errorf(e.Pos(), "E0317", "variant %q has no values; write %s without parentheses", written, written)
		case len(e.Args) != len(v.Fields):
			c.errorf(e.Pos(), "E0306", "%q takes %s, got %d", written, plural(len(v.Fields), "value"), len(e.Args))
		}
		c.args(e.Args, v.Fields, written)
		return enum
	case ast.SymStruct, ast.SymTopic:
		c.errorf(e.Pos(), "E0307", "cannot call type %q; write a literal: %s { … }", written, written)
	default:
		c.errorf(e.Pos(), "E0307", "cannot call %s %q", sym.Kind, written)
	}
	c.args(e.Args, nil, "")
	return ast.InvalidType
}

// args checks call arguments against parameter types (missing ones are
// checked without an expected type).
func (c *checker) args(args []ast.Expr, params []*ast.Type, callee string) {
	for i := range args {
		if i < len(params) {
			c.expectValue(&args[i], params[i], fmt.Sprintf("in argument %d of %q", i+1, callee))
		} else {
			c.value(&args[i], nil)
		}
	}
}

func (c *checker) index(e *ast.IndexExpr) *ast.Type {
	xt := c.value(&e.X, nil)
	switch xt.Kind {
	case ast.List:
		c.expectValue(&e.Index, ast.IntType, "as list index")
		return xt.Elem
	case ast.Map:
		c.expectValue(&e.Index, xt.Key, "as map key")
		return xt.Elem
	case ast.String, ast.Bytes:
		c.expectValue(&e.Index, ast.IntType, "as index")
		return ast.IntType
	case ast.Invalid:
	default:
		c.errorf(e.Pos(), "E0313", "cannot index a value of type %s", xt)
	}
	c.value(&e.Index, nil)
	return ast.InvalidType
}

func (c *checker) field(e *ast.FieldExpr) *ast.Type {
	xt := c.value(&e.X, nil)
	e.Index = -1
	if xt.Kind == ast.Invalid || e.Name == nil {
		return ast.InvalidType
	}
	if xt.Kind != ast.Struct || c.isSecret(xt) {
		c.errorf(e.Name.Pos(), "E0321", "type %s has no fields (looking for %q)", xt, e.Name.Name)
		return ast.InvalidType
	}
	idx := xt.FieldIndex(e.Name.Name)
	if idx < 0 {
		c.errorf(e.Name.Pos(), "E0309", "unknown field %q in %s", e.Name.Name, xt)
		c.endAt(e.Name.End())
		c.suggest(e.Name.Name, fieldNames(xt))
		return ast.InvalidType
	}
	e.Index = idx
	return xt.Fields[idx].Type
}

// question checks `x?`: x is a Result or an Option, and the enclosing fn
// returns the same generic enum (of any type), so that the Err or None can
// be returned from it. The type is the Ok or Some value's.
func (c *checker) question(e *ast.QuestionExpr, want *ast.Type) *ast.Type {
	var result *ast.Type
	if c.fn != nil {
		result = c.fn.result
	}
	// The target type flows through: in a fn returning Result<U>,
	// `let n: int = Ok(1)?;` types Ok(1) as Result<int>.
	var xwant *ast.Type
	if want != nil && result != nil && result.Generic != "" {
		xwant = c.instance(result.Generic, want)
	}
	xt := c.value(&e.X, xwant)
	if invalid(xt) {
		return ast.InvalidType
	}
	if t, ok := e.X.(*ast.TryExpr); ok && t.Void {
		c.errorf(e.X.End(), "E0323", "operator ? on a try of an expression without a value: its Option<Error> is None on success; match on it instead")
		return ast.InvalidType
	}
	if xt.Generic == "" {
		c.errorf(e.X.End(), "E0323", "operator ? needs a Result or an Option, got %s", xt)
		return ast.InvalidType
	}
	where := "here"
	if c.fn != nil {
		where = c.fn.name
	}
	switch {
	case result == nil || result.Kind == ast.Void:
		c.errorf(e.X.End(), "E0323", "operator ? cannot return from %s, which returns nothing: handle the %s with match, or use unwrap", where, failure(xt))
	case result.Kind == ast.Invalid:
	case result.Generic != xt.Generic:
		c.errorf(e.X.End(), "E0323", "operator ? on %s needs a fn returning %s<…>, but %s returns %s: handle the %s with match, or use unwrap", xt, xt.Generic, where, result, failure(xt))
	}
	return xt.TypeArg()
}

// failure names the variant that ? returns early: Err or None.
func failure(t *ast.Type) string {
	if t.IsOption() {
		return "None"
	}
	return "Err"
}

// tryExpr checks `try x`: Result<T> for x of type T, or Option<Error> when
// x has no value (a call of a fn without a result).
func (c *checker) tryExpr(e *ast.TryExpr, want *ast.Type) *ast.Type {
	var xwant *ast.Type
	if want != nil && want.IsResult() {
		xwant = want.TypeArg()
	}
	t := c.expr(&e.X, xwant)
	switch {
	case invalid(t):
		return ast.InvalidType
	case t.Kind == ast.Void:
		e.Void = true
		return c.instance("Option", c.errorType)
	case !isValue(t):
		return ast.InvalidType
	}
	return c.instance("Result", t)
}
