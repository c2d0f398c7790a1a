package syntax

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/diag"
)

const (
	// maxErrors caps the diagnostics of one file; after a syntax error the
	// parser resumes at the next statement (or, outside a block, the next
	// top-level declaration), so later errors are usually real, but a long
	// tail of them helps nobody.
	maxErrors = 10
	// maxDepth bounds the nesting of expressions, types and blocks so that
	// hostile input cannot overflow the Go stack (which is fatal, not a
	// recoverable panic).
	maxDepth = 1000
	// maxChain bounds the nodes that loops, not recursion, stack up in
	// one expression: the operators of `a + b + c …` and the calls,
	// indexes and fields of `a.b(c)[d] …`. Each of them nests the tree
	// one level deeper on the left, and every phase after the parser
	// walks trees recursively, so a chain of millions would overflow its
	// stack. The tree of an expression is at most maxDepth + maxChain
	// deep.
	maxChain = 1 << 17
)

// Parse parses one user source file. path is the logical path stamped into
// every position. On a syntax error the returned list is non-empty and the
// file holds what was parsed (declarations that failed are left out); the
// tree is only meant to be used when the list is empty.
func Parse(path string, src []byte) (*ast.File, diag.List) {
	return parse(path, src, false, "")
}

// ParseStdlib parses a standard library file of module (e.g. "std::time").
// It is Parse plus one extension: a top-level fn may end with ";" instead
// of a body (Body is nil), as in `@primitive(effect: "time") fn now_ms() -> int;`.
// The file has Stdlib set and Module recorded.
func ParseStdlib(path, module string, src []byte) (*ast.File, diag.List) {
	return parse(path, src, true, module)
}

type parser struct {
	path   string
	src    string
	lines  []int // offset of the first byte of every line
	toks   []token
	i      int // index of the current token
	prev   int // end offset of the last consumed token
	errs   diag.List
	stdlib bool
	depth  int
	// tooDeep is set when nesting exceeded maxDepth: the error unwinds to
	// the top level instead of resuming at the next statement.
	tooDeep bool
	// chain counts the nodes the loops of parseBinary and parsePostfix
	// built in the outermost expression being parsed (exprs > 0).
	chain int
	exprs int
}

// bailout unwinds the parser to the enclosing declaration after an error.
type bailout struct{}

func parse(path string, src []byte, stdlib bool, module string) (*ast.File, diag.List) {
	p := &parser{path: path, src: string(src), stdlib: stdlib}
	p.lines = append(p.lines, 0)
	for i := 0; i < len(p.src); i++ {
		if p.src[i] == '\n' {
			p.lines = append(p.lines, i+1)
		}
	}
	f := &ast.File{Path: path, Stdlib: stdlib, Module: module}
	f.Span = ast.Span{From: p.pos(0), To: p.pos(len(p.src))}
	text := p.src
	if len(text) >= 3 && text[:3] == "\uFEFF" { // a leading byte order mark is ignored
		text = "   " + text[3:]
	}
	if !utf8.ValidString(text) {
		for i := 0; i < len(text); {
			r, n := utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError && n == 1 {
				p.errorAt(i, "E0111", "invalid UTF-8 encoding")
				return f, p.errs
			}
			i += n
		}
	}
	p.toks = p.lex(text)
	p.parseFile(f)
	return f, p.errs.Sort()
}

// ---- positions and tokens ----

// pos converts a byte offset to a position; Col counts bytes from 1.
func (p *parser) pos(off int) ast.Pos {
	line := sort.Search(len(p.lines), func(i int) bool { return p.lines[i] > off }) // first line starting after off
	return ast.Pos{File: p.path, Offset: off, Line: line, Col: off - p.lines[line-1] + 1}
}

func (p *parser) tok() *token { return &p.toks[p.i] }

func (p *parser) peek(n int) *token {
	if p.i+n < len(p.toks) {
		return &p.toks[p.i+n]
	}
	return &p.toks[len(p.toks)-1]
}

// is reports whether the current token is the keyword or operator s.
func (p *parser) is(s string) bool {
	t := p.tok()
	return (t.kind == kKeyword || t.kind == kPunct) && t.text == s
}

// isContextual reports whether the current token is the contextual
// keyword s: a name everywhere except where the grammar puts s (`after`
// after a publish's payload), so that programs may still use it as a name.
func (p *parser) isContextual(s string) bool {
	t := p.tok()
	return t.kind == kIdent && t.text == s
}

// isAt reports whether the token n ahead is the keyword or operator s.
func (p *parser) isAt(n int, s string) bool {
	t := p.peek(n)
	return (t.kind == kKeyword || t.kind == kPunct) && t.text == s
}

func (p *parser) next() *token {
	t := &p.toks[p.i]
	p.prev = t.end
	if t.kind != kEOF {
		p.i++
	}
	return t
}

func (p *parser) accept(s string) bool {
	if p.is(s) {
		p.next()
		return true
	}
	return false
}

// span returns the span from offset from to the end of the last consumed token.
func (p *parser) span(from int) ast.Span {
	return ast.Span{From: p.pos(from), To: p.pos(p.prev)}
}

// fail reports a syntax error at the current token and unwinds.
func (p *parser) fail(format string, args ...any) {
	p.failAt(p.tok().off, "E0101", format, args...)
}

func (p *parser) failAt(off int, code diag.Code, format string, args ...any) {
	// A bad token was reported by the lexer; a second message about the
	// same place would only repeat it.
	if p.tok().kind != kBad || p.tok().off != off {
		p.errorAt(off, code, format, args...)
	}
	panic(bailout{})
}

// failHint reports a syntax error at offset off with a hint and unwinds.
func (p *parser) failHint(off int, hint, format string, args ...any) {
	if len(p.errs) < maxErrors {
		p.errorAt(off, "E0101", format, args...)
		p.errs[len(p.errs)-1].Hints = []string{hint}
	}
	panic(bailout{})
}

// expect consumes the keyword or operator s, or fails with
// `expected "s" <where>, found …`.
func (p *parser) expect(s, where string) *token {
	if !p.is(s) {
		if where != "" {
			where = " " + where
		}
		if s == ";" {
			p.failSemi("expected %q%s, found %s", s, where, p.found())
		}
		p.fail("expected %q%s, found %s", s, where, p.found())
	}
	return p.next()
}

// failSemi reports a missing ";". When the next token is on a later line,
// the error points just past the previous token, at the end of the line
// that lacks the ";" (as rustc does), rather than at the next statement.
func (p *parser) failSemi(format string, args ...any) {
	off := p.tok().off
	if p.i > 0 && p.tok().kind != kBad && p.pos(p.prev).Line < p.pos(off).Line {
		off = p.prev
	}
	p.failAt(off, "E0101", format, args...)
}

// found describes the current token for an error message.
func (p *parser) found() string {
	t := p.tok()
	text := t.text
	if utf8.RuneCountInString(text) > 24 {
		text = string([]rune(text)[:20]) + "…"
	}
	switch t.kind {
	case kEOF:
		return "end of file"
	case kIdent:
		return fmt.Sprintf("identifier %q", text)
	case kKeyword:
		return fmt.Sprintf("keyword %q", text)
	case kInt, kFloat:
		return "number " + text
	case kString:
		return "string " + text
	case kBytes:
		return "bytes " + text
	case kPunct:
		if text == ".." {
			return `".." (a range is only allowed in a for head)`
		}
		return strconv.Quote(text)
	}
	return strconv.Quote(text)
}

func (p *parser) ident(what string) *ast.Ident {
	t := p.tok()
	if t.kind != kIdent {
		p.fail("expected %s, found %s", what, p.found())
	}
	p.next()
	return &ast.Ident{Span: p.span(t.off), Name: t.text}
}

// fieldName parses the name of a struct or topic field, at its declaration,
// in a struct literal or publish, or after ".". Keywords are allowed here
// (`topic Moved { to: Point }`, `m.to`): the position is unambiguous and
// field names are part of a topic's payload that other programs may see.
func (p *parser) fieldName(what string) *ast.Ident {
	t := p.tok()
	if t.kind != kIdent && t.kind != kKeyword {
		p.fail("expected %s, found %s", what, p.found())
	}
	p.next()
	return &ast.Ident{Span: p.span(t.off), Name: t.text}
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.tooDeep = true
		p.failAt(p.tok().off, "E0110", "nesting too deep (more than %d levels)", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

// chained counts one more node stacked on the left of an expression's
// tree (see maxChain); at is the offset of its operator.
func (p *parser) chained(at int) {
	p.chain++
	if p.chain > maxChain {
		p.failAt(at, "E0110", "expression nested too deep (more than %d operators, calls, indexes and fields in one expression); split it with variables", maxChain)
	}
}

// commaList parses `elem { "," elem } [","] close`, the opening token
// already consumed; with min1 at least one element is required. noun names
// an element in error messages.
func (p *parser) commaList(close, noun string, min1 bool, elem func()) {
	if min1 || !p.is(close) {
		elem()
		for p.accept(",") && !p.is(close) {
			elem()
		}
	}
	if !p.is(close) {
		p.fail("expected \",\" or %q after %s, found %s", close, noun, p.found())
	}
	p.next()
}

// ---- declarations ----

func (p *parser) parseFile(f *ast.File) {
	seenDecl := false
	for p.tok().kind != kEOF && len(p.errs) < maxErrors {
		start := p.i
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(bailout); !ok {
						panic(r)
					}
					p.depth, p.exprs = 0, 0
					p.tooDeep = false
					if p.i == start {
						p.next()
					}
					p.sync()
				}
			}()
			if p.is("import") {
				imp := p.parseImport()
				if seenDecl {
					p.errorAt(imp.From.Offset, "E0108", "import must come before all declarations")
					return
				}
				f.Imports = append(f.Imports, imp)
				return
			}
			seenDecl = true
			if d := p.parseDecl(); d != nil {
				f.Decls = append(f.Decls, d)
			}
		}()
	}
}

// sync skips to the next token that can start a top-level declaration at
// the beginning of a line.
func (p *parser) sync() {
	for {
		t := p.tok()
		if t.kind == kEOF {
			return
		}
		if (t.kind == kKeyword || t.kind == kPunct) && p.pos(t.off).Col == 1 {
			switch t.text {
			case "import", "const", "type", "enum", "topic", "fn", "locus", "main", "@":
				return
			}
		}
		p.next()
	}
}

func (p *parser) parseImport() *ast.Import {
	from := p.next().off
	t := p.tok()
	if t.kind != kString {
		p.fail("expected a path string after \"import\", found %s", p.found())
	}
	p.next()
	p.expect(";", "after import")
	return &ast.Import{Span: p.span(from), Path: t.sval}
}

func (p *parser) parseDecl() ast.Decl {
	t := p.tok()
	switch {
	case p.is("@") || p.is("fn") || p.is("locus"):
		from := t.off
		anns := p.parseAnnotations()
		switch {
		case p.is("fn"):
			return p.parseFn(from, anns, p.stdlib)
		case p.is("locus"):
			return p.parseLocus(from, anns)
		}
		p.fail("expected \"fn\" or \"locus\" after annotation, found %s", p.found())
	case p.is("const"):
		return p.parseConst()
	case p.is("type") || p.is("topic"):
		return p.parseTypeDecl()
	case p.is("enum"):
		return p.parseEnum()
	case p.is("main"):
		return p.parseMain()
	}
	p.fail("expected declaration, found %s", p.found())
	return nil
}

func (p *parser) parseAnnotations() []*ast.Annotation {
	var anns []*ast.Annotation
	for p.is("@") {
		from := p.next().off
		a := &ast.Annotation{Name: p.ident("annotation name after \"@\"")}
		if p.accept("(") {
			p.commaList(")", "annotation argument", true, func() {
				argFrom := p.tok().off
				name := p.ident("annotation argument name")
				p.expect(":", "after annotation argument name")
				v := p.parseExpr(false)
				a.Args = append(a.Args, &ast.AnnArg{Span: p.span(argFrom), Name: name, Value: v})
			})
		}
		a.Span = p.span(from)
		anns = append(anns, a)
	}
	return anns
}

func (p *parser) parseConst() *ast.ConstDecl {
	from := p.next().off
	d := &ast.ConstDecl{Name: p.ident("constant name")}
	p.expect(":", "and a type after constant name")
	d.Type = p.parseType()
	p.expect("=", "after constant type")
	d.Value = p.parseExpr(false)
	p.expect(";", "after constant value")
	d.Span = p.span(from)
	return d
}

func (p *parser) parseTypeDecl() *ast.TypeDecl {
	kw := p.next()
	d := &ast.TypeDecl{Topic: kw.text == "topic"}
	d.Name = p.ident(kw.text + " name")
	p.expect("{", "after "+kw.text+" name")
	p.commaList("}", "field", false, func() {
		from := p.tok().off
		name := p.fieldName("field name")
		p.expect(":", "after field name")
		typ := p.parseType()
		d.Fields = append(d.Fields, &ast.FieldDecl{Span: p.span(from), Name: name, Type: typ})
	})
	d.Span = p.span(kw.off)
	return d
}

func (p *parser) parseEnum() *ast.EnumDecl {
	from := p.next().off
	d := &ast.EnumDecl{Name: p.ident("enum name")}
	p.expect("{", "after enum name")
	p.commaList("}", "variant", true, func() {
		vfrom := p.tok().off
		v := &ast.VariantDecl{Name: p.ident("variant name")}
		if p.accept("(") {
			p.commaList(")", "variant type", true, func() {
				v.Types = append(v.Types, p.parseType())
			})
		}
		v.Span = p.span(vfrom)
		d.Variants = append(d.Variants, v)
	})
	d.Span = p.span(from)
	return d
}

// parseFn parses a fn from "fn" on; from is the offset of its first
// annotation (or of "fn"). bodyless allows `;` instead of a body.
func (p *parser) parseFn(from int, anns []*ast.Annotation, bodyless bool) *ast.FnDecl {
	p.expect("fn", "")
	d := &ast.FnDecl{Annotations: anns, Name: p.ident("fn name")}
	p.expect("(", "after fn name")
	d.Params = p.parseParams()
	if p.accept("->") {
		d.Result = p.parseType()
	}
	switch {
	case p.is(";") && bodyless:
		p.next()
	case p.is(";"):
		p.failAt(p.tok().off, "E0109", "fn %s has no body (only standard library primitives may omit it)", d.Name.Name)
	case p.is("{"):
		d.Body = p.parseBlock()
	default:
		if d.Result == nil {
			p.fail("expected \"->\" or \"{\" after fn parameters, found %s", p.found())
		}
		p.fail("expected \"{\" to begin fn body, found %s", p.found())
	}
	d.Span = p.span(from)
	return d
}

// parseParams parses parameters after "(" through ")".
func (p *parser) parseParams() []*ast.Param {
	var params []*ast.Param
	p.commaList(")", "parameter", false, func() {
		from := p.tok().off
		name := p.ident("parameter name")
		p.expect(":", "and a type after parameter name")
		typ := p.parseType()
		params = append(params, &ast.Param{Span: p.span(from), Name: name, Type: typ})
	})
	return params
}

func (p *parser) parseLocus(from int, anns []*ast.Annotation) *ast.LocusDecl {
	p.expect("locus", "")
	d := &ast.LocusDecl{Annotations: anns, Name: p.ident("locus name")}
	if p.accept("(") {
		d.HasParams = true
		d.Params = p.parseParams()
	}
	p.expect("{", "to begin locus body")
	for !p.is("}") {
		t := p.tok()
		switch {
		case p.is("var"):
			p.next()
			s := &ast.StateVar{Name: p.ident("state variable name")}
			if p.accept(":") {
				s.Type = p.parseType()
			}
			p.expect("=", "after state variable (state needs an initial value)")
			s.Value = p.parseExpr(false)
			p.expect(";", "after state initial value")
			s.Span = p.span(t.off)
			d.State = append(d.State, s)
		case p.is("on"):
			d.Handlers = append(d.Handlers, p.parseHandler())
		case p.is("@") || p.is("fn"):
			anns := p.parseAnnotations()
			if !p.is("fn") {
				p.fail("expected \"fn\" after annotation in locus body, found %s", p.found())
			}
			d.Fns = append(d.Fns, p.parseFn(t.off, anns, false))
		case t.kind == kEOF:
			p.fail("expected \"}\" to close locus %s, found end of file", d.Name.Name)
		default:
			p.fail("expected state variable, handler or fn in locus body, found %s", p.found())
		}
	}
	p.next()
	d.Span = p.span(from)
	return d
}

func (p *parser) parseHandler() *ast.Handler {
	from := p.next().off
	h := &ast.Handler{}
	if p.accept("start") {
		h.Start = true
	} else {
		if p.tok().kind != kIdent {
			p.fail("expected \"start\" or a topic name after \"on\", found %s", p.found())
		}
		h.Topic = p.ident("topic name")
		p.expect("(", "after topic name in handler")
		h.Param = p.ident("message parameter name")
		p.expect(")", "after message parameter")
		if p.accept("if") {
			// As in an if head, a struct literal must stand in parentheses.
			h.Guard = p.parseExpr(true)
			p.checkHeadStruct("guard")
		}
		// "shared" is a keyword only here: elsewhere it is a plain name.
		if t := p.tok(); t.kind == kIdent && t.text == "shared" {
			p.next()
			h.Shared = true
		}
	}
	h.Body = p.parseBlock()
	h.Span = p.span(from)
	return h
}

func (p *parser) parseMain() *ast.MainDecl {
	from := p.next().off
	d := &ast.MainDecl{}
	p.expect("{", "after \"main\"")
	d.Items = p.parseMainItems(d, nil)
	p.next()
	d.Span = p.span(from)
	return d
}

// parseMainItems parses spawns, binds and spawn loops up to the closing
// "}" (left for the caller), inside loop (nil at the top of main).
func (p *parser) parseMainItems(d *ast.MainDecl, loop *ast.SpawnLoop) []ast.Node {
	var items []ast.Node
	for !p.is("}") {
		switch {
		case p.is("spawn"):
			s := p.parseSpawn()
			for l := loop; l != nil; l = l.Outer {
				s.Loops = append([]*ast.SpawnLoop{l}, s.Loops...)
			}
			d.Spawns = append(d.Spawns, s)
			items = append(items, s)
		case p.is("bind"):
			bfrom := p.next().off
			b := &ast.Bind{Loop: loop}
			if p.isContextual("nats") {
				b.NATS = p.parseNATS(true)
				p.expect("to", "after a nats binding's subject")
			} else {
				if !p.is("stdin") {
					p.fail("expected \"stdin\" or \"nats\" after \"bind\", found %s", p.found())
				}
				p.next()
				p.expect("to", "after \"bind stdin\"")
			}
			b.Topic = p.ident("topic name")
			p.expect(";", "after bind")
			b.Span = p.span(bfrom)
			d.Binds = append(d.Binds, b)
			items = append(items, b)
		case p.isContextual("export") && p.peek(1).kind == kIdent:
			xfrom := p.next().off
			x := &ast.Export{Topic: p.ident("topic name after \"export\""), Loop: loop}
			p.expect("to", "after the exported topic")
			if !p.isContextual("nats") {
				p.fail("expected \"nats\" after \"export %s to\", found %s", x.Topic.Name, p.found())
			}
			x.NATS = p.parseNATS(false)
			p.expect(";", "after export")
			x.Span = p.span(xfrom)
			d.Exports = append(d.Exports, x)
			items = append(items, x)
		case p.is("for"):
			lfrom := p.next().off
			l := &ast.SpawnLoop{Var: p.ident("loop variable name after \"for\""), Outer: loop}
			p.expect("in", "after the loop variable")
			l.Lo = p.parseExpr(true)
			p.expect("..", "in a spawn loop's range (for i in 0..N)")
			l.Hi = p.parseExpr(true)
			p.expect("{", "after a spawn loop's range")
			d.Loops = append(d.Loops, l)
			p.enter() // nesting is bounded like expressions'
			l.Body = p.parseMainItems(d, l)
			p.leave()
			p.next()
			l.Span = p.span(lfrom)
			items = append(items, l)
		case p.tok().kind == kEOF:
			p.fail("expected \"}\" to close main, found end of file")
		default:
			p.fail("expected \"spawn\", \"bind\", \"export\" or \"for\" in main, found %s", p.found())
		}
	}
	return items
}

// parseNATS parses `nats(URL) subject "S"`, then `queue "G"` when
// queue is allowed (a binding). The URL is a string literal or `env
// "NAME"`. `nats`, `subject`, `queue` and `env` are names everywhere else.
func (p *parser) parseNATS(queue bool) *ast.NATS {
	n := &ast.NATS{}
	p.next() // nats
	p.expect("(", "after \"nats\"")
	if p.isContextual("env") {
		p.next()
		t := p.tok()
		if t.kind != kString {
			p.fail("expected the name of an environment variable as a string after \"env\", found %s", p.found())
		}
		n.URLEnv, n.URLPos = t.sval, p.pos(t.off)
		p.next()
	} else {
		t := p.tok()
		if t.kind != kString {
			p.fail("expected a NATS URL string or env \"NAME\" in nats(…), found %s", p.found())
		}
		n.URL, n.URLPos = t.sval, p.pos(t.off)
		p.next()
	}
	p.expect(")", "after the NATS URL")
	if !p.isContextual("subject") {
		p.fail("expected \"subject\" after nats(…), found %s", p.found())
	}
	p.next()
	t := p.tok()
	if t.kind != kString {
		p.fail("expected a subject string after \"subject\", found %s", p.found())
	}
	n.Subject, n.SubjectPos = t.sval, p.pos(t.off)
	p.next()
	if queue && p.isContextual("queue") {
		p.next()
		t := p.tok()
		if t.kind != kString {
			p.fail("expected a queue group name string after \"queue\", found %s", p.found())
		}
		n.Queue, n.HasQueue, n.QueuePos = t.sval, true, p.pos(t.off)
		p.next()
	}
	return n
}

func (p *parser) parseSpawn() *ast.Spawn {
	from := p.next().off
	s := &ast.Spawn{Locus: p.ident("locus name after \"spawn\"")}
	if p.accept("(") {
		s.HasArgs = true
		p.commaList(")", "argument", false, func() {
			s.Args = append(s.Args, p.parseExpr(false))
		})
	}
	if p.accept("as") {
		s.As = p.ident("instance name after \"as\"")
		for p.accept("[") {
			s.Index = append(s.Index, p.ident("loop variable in an instance name's index"))
			p.expect("]", "after the index of an instance name")
		}
	}
	if p.is("on") {
		pfrom := p.next().off
		pl := &ast.Placement{}
		switch {
		case p.accept("main"):
			pl.Kind = ast.PlaceMain
		case p.accept("pinned"):
			pl.Kind = ast.PlacePinned
		case p.accept("async_io"):
			pl.Kind = ast.PlaceAsyncIO
		case p.accept("pool"):
			pl.Kind = ast.PlacePool
			p.expect("(", "after \"pool\"")
			t := p.tok()
			if t.kind != kString {
				p.fail("expected pool name string, found %s", p.found())
			}
			p.next()
			pl.Pool = t.sval
			p.expect(")", "after pool name")
		default:
			p.fail("expected placement (main, pinned, async_io or pool(\"name\")) after \"on\", found %s", p.found())
		}
		pl.Span = p.span(pfrom)
		s.Placement = pl
	}
	if !p.is(";") {
		p.failSemi("expected \";\" after spawn, found %s", p.found())
	}
	p.next()
	s.Span = p.span(from)
	return s
}

// ---- types ----

// parseType parses a type. Extension to the grammar of docs/language.md: a
// named type may be qualified, `std::http::Response`, giving a NamedType
// whose Path has several parts.
func (p *parser) parseType() ast.TypeExpr {
	p.enter()
	defer p.leave()
	t := p.tok()
	switch {
	case t.kind == kIdent:
		n := &ast.NamedType{Path: []string{p.next().text}}
		for p.accept("::") {
			n.Path = append(n.Path, p.ident("type name after \"::\"").Name)
		}
		if p.accept("<") {
			n.Args = append(n.Args, p.parseType())
			p.closeAngle()
		}
		n.Span = p.span(t.off)
		return n
	case p.is("["):
		p.next()
		l := &ast.ListType{Elem: p.parseType()}
		p.expect("]", "after list element type")
		l.Span = p.span(t.off)
		return l
	case p.is("{"):
		p.next()
		m := &ast.MapType{Key: p.parseType()}
		p.expect(":", "after map key type")
		m.Value = p.parseType()
		p.expect("}", "after map value type")
		m.Span = p.span(t.off)
		return m
	}
	p.fail("expected type, found %s", p.found())
	return nil
}

// closeAngle expects the ">" that closes a type argument list. A ">>"
// (or ">=", ">>=") token closes one and leaves the rest in its place, so
// that `Option<Option<int>>` parses.
func (p *parser) closeAngle() {
	t := p.tok()
	if t.kind == kPunct && len(t.text) > 1 && t.text[0] == '>' {
		t.text = t.text[1:]
		t.off++
		p.prev = t.off
		return
	}
	p.expect(">", "to close the type argument list")
}

// ---- statements ----

func (p *parser) parseBlock() *ast.Block {
	p.enter()
	defer p.leave()
	open := p.expect("{", "to begin block")
	b := &ast.Block{}
	for !p.is("}") {
		if p.tok().kind == kEOF {
			op := p.pos(open.off)
			p.fail("expected \"}\" to close the block opened at %d:%d, found end of file", op.Line, op.Col)
		}
		if st := p.parseStmtOrSync(); st != nil {
			b.Stmts = append(b.Stmts, st)
		}
		if len(p.errs) >= maxErrors {
			panic(bailout{})
		}
	}
	p.next()
	b.Span = p.span(open.off)
	return b
}

// parseStmtOrSync parses one statement. After a syntax error in it, it
// skips to the start of the next statement and returns nil, so that several
// errors in one fn are all reported. An error about nesting depth unwinds
// further, to the top level.
func (p *parser) parseStmtOrSync() (st ast.Stmt) {
	start, depth, exprs := p.i, p.depth, p.exprs
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok || p.tooDeep {
				panic(r)
			}
			p.depth, p.exprs = depth, exprs
			if p.i == start {
				p.next()
			}
			p.syncStmt(start)
			if p.tok().kind == kEOF {
				// The rest of the file was skipped: the block's missing
				// "}" would only repeat the error.
				panic(bailout{})
			}
			st = nil
		}
	}()
	return p.parseStmt()
}

// syncStmt skips to the start of the next statement: past a ";" or a
// closing "}" (at the end of a line) outside any braces, or to a keyword
// that starts a statement, or to the "}" that closes the enclosing block.
// The statement began at token start: braces it opened and did not close
// before the error are still open. Parentheses and brackets are not
// counted: no statement can be inside them, and an unclosed one is a
// common error.
func (p *parser) syncStmt(start int) {
	nest := 0
	for _, t := range p.toks[start:p.i] {
		if t.kind == kPunct {
			switch t.text {
			case "{":
				nest++
			case "}":
				nest = max(nest-1, 0)
			}
		}
	}
	for {
		t := p.tok()
		if t.kind == kEOF {
			return
		}
		if nest == 0 && t.kind == kKeyword && stmtKeywords[t.text] {
			return
		}
		if t.kind == kPunct {
			switch t.text {
			case "{":
				nest++
			case "}":
				if nest == 0 {
					return // the end of the enclosing block
				}
				nest--
				if nest == 0 && p.pos(p.peek(1).off).Line > p.pos(t.off).Line {
					p.next()
					return
				}
			case ";":
				if nest == 0 {
					p.next()
					return
				}
			}
		}
		p.next()
	}
}

func (p *parser) parseStmt() ast.Stmt {
	t := p.tok()
	from := t.off
	if t.kind == kKeyword {
		switch t.text {
		case "let", "var":
			p.next()
			s := &ast.LetStmt{Mutable: t.text == "var", Name: p.ident("variable name after \"" + t.text + "\"")}
			if p.accept(":") {
				s.Type = p.parseType()
			}
			p.expect("=", "after variable name (a variable needs an initial value)")
			s.Value = p.parseExpr(false)
			p.expect(";", "after variable initial value")
			s.Span = p.span(from)
			return s
		case "if":
			return p.parseIf()
		case "while":
			p.next()
			s := &ast.WhileStmt{Cond: p.parseExpr(true)}
			s.Body = p.headBlock("while")
			s.Span = p.span(from)
			return s
		case "for":
			p.next()
			s := &ast.ForStmt{Key: p.ident("loop variable name after \"for\"")}
			if p.accept(",") {
				s.Val = p.ident("second loop variable name")
			}
			p.expect("in", "after loop variables")
			s.X = p.parseExpr(true)
			if p.accept("..") {
				s.Hi = p.parseExpr(true)
			}
			s.Body = p.headBlock("for")
			s.Span = p.span(from)
			return s
		case "match":
			return p.parseMatch()
		case "publish":
			p.next()
			s := &ast.PublishStmt{Topic: p.ident("topic name after \"publish\"")}
			p.expect("{", "after topic name in publish")
			s.Fields = p.parseFieldInits()
			if p.isContextual("after") {
				p.next()
				s.After = p.parseExpr(false)
			}
			p.expect(";", "after publish")
			s.Span = p.span(from)
			return s
		case "return":
			p.next()
			s := &ast.ReturnStmt{}
			if !p.is(";") {
				s.Value = p.parseExpr(false)
			}
			p.expect(";", "after return")
			s.Span = p.span(from)
			return s
		case "break":
			p.next()
			p.expect(";", "after \"break\"")
			return &ast.BreakStmt{Span: p.span(from)}
		case "continue":
			p.next()
			p.expect(";", "after \"continue\"")
			return &ast.ContinueStmt{Span: p.span(from)}
		case "else":
			p.fail("\"else\" without a preceding if")
		}
	}
	if p.is(";") {
		p.fail("expected statement, found \";\"")
	}
	if p.is("{") && (p.peek(1).kind == kKeyword && stmtKeywords[p.peek(1).text] || p.peek(1).text == "}" && p.peek(2).text != ".") {
		p.fail("a block cannot stand alone as a statement")
	}
	if t.kind == kIdent && t.text == "switch" && p.switchHead() {
		p.failHint(t.off, `use "match": match x { 1 => { … }, _ => { … } }`, "Hale has no switch statement")
	}
	x := p.parseExpr(false)
	p.habits(x)
	if op, ok := assignOps[p.tok().text]; ok && p.tok().kind == kPunct {
		p.next()
		s := &ast.AssignStmt{Target: x, Op: op, Value: p.parseExpr(false)}
		p.expect(";", "after assignment")
		s.Span = p.span(from)
		return s
	}
	if !p.is(";") {
		p.failSemi("expected \";\" after expression, found %s", p.found())
	}
	p.next()
	return &ast.ExprStmt{Span: p.span(from), X: x}
}

// switchHead reports whether the tokens after an identifier "switch" at
// the start of a statement look like a C or Go switch: `switch x {` or
// `switch (x) {`, not a call of a fn named switch.
func (p *parser) switchHead() bool {
	next := p.peek(1)
	if next.kind != kPunct {
		return true
	}
	if next.text != "(" {
		return false
	}
	nest := 0
	for i := p.i + 1; i < len(p.toks); i++ {
		t := &p.toks[i]
		if t.kind != kPunct {
			continue
		}
		switch t.text {
		case "(":
			nest++
		case ")":
			nest--
			if nest == 0 {
				return i+1 < len(p.toks) && p.toks[i+1].kind == kPunct && p.toks[i+1].text == "{"
			}
		case ";", "{", "}":
			return false
		}
	}
	return false
}

// habits reports, with a hint, operators that other languages have and
// Hale does not, found after the expression x at the start of a statement.
func (p *parser) habits(x ast.Expr) {
	t := p.tok()
	if t.kind != kPunct {
		return
	}
	target := p.src[x.Pos().Offset:p.prev]
	switch t.text {
	case "++":
		p.failHint(t.off, fmt.Sprintf("write %q", target+" += 1;"), "Hale has no \"++\" operator")
	case ":=":
		p.failHint(t.off, fmt.Sprintf("declare it with %q (or \"var\" to change it later)", "let "+target+" = …;"),
			"\":=\" is not an operator in Hale")
	}
}

// stmtKeywords start statements; after a "{" at the start of a statement
// they show a bare block, which Hale does not have.
var stmtKeywords = map[string]bool{
	"let": true, "var": true, "if": true, "while": true, "for": true, "match": true,
	"publish": true, "return": true, "break": true, "continue": true,
}

var assignOps = map[string]ast.AssignOp{
	"=": ast.Assign, "+=": ast.AddAssign, "-=": ast.SubAssign,
	"*=": ast.MulAssign, "/=": ast.DivAssign, "%=": ast.RemAssign,
	"&=": ast.AndAssign, "|=": ast.OrAssign, "^=": ast.XorAssign,
	"<<=": ast.ShlAssign, ">>=": ast.ShrAssign,
}

func (p *parser) parseIf() *ast.IfStmt {
	p.enter()
	defer p.leave()
	from := p.next().off
	s := &ast.IfStmt{Cond: p.parseExpr(true)}
	s.Then = p.headBlock("if")
	if p.accept("else") {
		switch {
		case p.is("if"):
			s.Else = p.parseIf()
		case p.is("{"):
			s.Else = p.parseBlock()
		default:
			p.fail("expected \"if\" or \"{\" after \"else\", found %s", p.found())
		}
	}
	s.Span = p.span(from)
	return s
}

// headBlock parses the block after an if, while or for head.
func (p *parser) headBlock(what string) *ast.Block {
	p.checkHeadStruct(what)
	return p.parseBlock()
}

// checkHeadStruct explains the likely mistake when a head ends in a name
// and is followed by `{ f:`: no block or match body starts that way, so it
// is a struct literal that needs parentheses.
func (p *parser) checkHeadStruct(what string) {
	if !p.is("{") || p.peek(1).kind != kIdent && p.peek(1).kind != kKeyword || p.peek(2).kind != kPunct || p.peek(2).text != ":" {
		return
	}
	j := p.i - 1
	if j < 0 || p.toks[j].kind != kIdent {
		return
	}
	for j >= 2 && p.toks[j-1].text == "::" && p.toks[j-1].kind == kPunct && p.toks[j-2].kind == kIdent {
		j -= 2
	}
	p.failAt(p.toks[j].off, "E0101", "struct literal not allowed in %s head; put it in parentheses", what)
}

func (p *parser) parseMatch() *ast.MatchStmt {
	from := p.next().off
	s := &ast.MatchStmt{X: p.parseExpr(true)}
	p.checkHeadStruct("match")
	p.expect("{", "after match value")
	p.commaList("}", "match arm", true, func() {
		afrom := p.tok().off
		a := &ast.Arm{Pattern: p.parsePattern()}
		p.expect("=>", "after pattern")
		a.Body = p.parseBlock()
		a.Span = p.span(afrom)
		s.Arms = append(s.Arms, a)
	})
	s.Span = p.span(from)
	return s
}

func (p *parser) parsePattern() *ast.Pattern {
	t := p.tok()
	pat := &ast.Pattern{}
	switch {
	case t.kind == kIdent && t.text == "_":
		p.next()
		pat.Kind = ast.PatWildcard
	case t.kind == kInt || p.is("-") && p.peek(1).kind == kInt:
		neg := p.accept("-")
		it := p.next()
		pat.Kind = ast.PatInt
		switch {
		case neg && it.ival == 1<<63:
			pat.Int = math.MinInt64
		case it.ival > math.MaxInt64:
			p.failAt(t.off, "E0107", "integer pattern %s is out of range", p.src[t.off:it.end])
		case neg:
			pat.Int = -int64(it.ival)
		default:
			pat.Int = int64(it.ival)
		}
	case t.kind == kString:
		p.next()
		pat.Kind, pat.Str = ast.PatString, t.sval
	case p.is("true") || p.is("false"):
		p.next()
		pat.Kind, pat.Bool = ast.PatBool, t.text == "true"
	case t.kind == kIdent && !p.isAt(1, "::"):
		// Some(x), None, Ok(v), Err(e): the built-in generic enums' variants
		// are written unqualified (the checker rejects other names).
		pat.Kind = ast.PatVariant
		pat.Name = p.ident("variant name")
		if p.accept("(") {
			p.commaList(")", "binding", true, func() {
				pat.Binds = append(pat.Binds, p.ident("binding name"))
			})
		}
	case t.kind == kIdent:
		pat.Kind = ast.PatVariant
		pat.Enum = p.ident("enum name")
		p.expect("::", "after enum name in pattern (variants are written Enum::Variant)")
		pat.Name = p.ident("variant name")
		if p.accept("(") {
			p.commaList(")", "binding", true, func() {
				pat.Binds = append(pat.Binds, p.ident("binding name"))
			})
		}
	default:
		p.fail("expected pattern, found %s", p.found())
	}
	pat.Span = p.span(t.off)
	return pat
}

// parseFieldInits parses `f: e, …` after "{" through "}".
func (p *parser) parseFieldInits() []*ast.FieldInit {
	var fields []*ast.FieldInit
	p.commaList("}", "field", false, func() {
		from := p.tok().off
		name := p.fieldName("field name")
		p.expect(":", "after field name")
		v := p.parseExpr(false)
		fields = append(fields, &ast.FieldInit{Span: p.span(from), Name: name, Value: v})
	})
	return fields
}

// ---- expressions ----

var binaryOps = map[string]ast.BinaryOp{
	"||": ast.OrOr, "&&": ast.AndAnd, "==": ast.Eq, "!=": ast.Ne,
	"<": ast.Lt, "<=": ast.Le, ">": ast.Gt, ">=": ast.Ge,
	"+": ast.Add, "-": ast.Sub, "*": ast.Mul, "/": ast.Div, "%": ast.Rem,
	"&": ast.BitAnd, "|": ast.BitOr, "^": ast.BitXor, "<<": ast.Shl, ">>": ast.Shr,
}

// parseExpr parses an expression. With head set the expression is the head
// of an if, while, for or match, where a struct literal may only appear
// inside parentheses (or brackets, braces, call arguments), as in Rust.
func (p *parser) parseExpr(head bool) ast.Expr {
	p.enter()
	if p.exprs == 0 {
		p.chain = 0
	}
	p.exprs++
	defer func() { p.exprs--; p.leave() }()
	return p.parseBinary(1, head)
}

// parseBinary is precedence climbing: it parses operands joined by
// operators that bind at least as tightly as minPrec, left-associatively.
func (p *parser) parseBinary(minPrec int, head bool) ast.Expr {
	x := p.parseUnary(head)
	for {
		t := p.tok()
		op, ok := binaryOps[t.text]
		if !ok || t.kind != kPunct || op.Precedence() < minPrec {
			return x
		}
		if n := p.peek(1); op == ast.Sub && n.kind == kPunct && n.text == "-" && n.off == t.end && p.peek(2).text == ";" {
			// x--; lexes as two minus signs glued together before the ";".
			p.failHint(t.off, fmt.Sprintf("write %q", p.src[x.Pos().Offset:t.off]+" -= 1;"), "Hale has no \"--\" operator")
		}
		p.chained(t.off)
		p.next()
		y := p.parseBinary(op.Precedence()+1, head)
		x = &ast.BinaryExpr{
			Span: ast.Span{From: x.Pos(), To: y.End()},
			Op:   op, OpPos: p.pos(t.off), X: x, Y: y,
		}
	}
}

func (p *parser) parseUnary(head bool) ast.Expr {
	t := p.tok()
	if p.is("try") {
		p.enter()
		defer p.leave()
		p.next()
		x := p.parseUnary(head)
		if q, ok := x.(*ast.QuestionExpr); ok && p.src[q.Pos().Offset] != '(' {
			p.errorAt(q.End().Offset-1, "E0101", "ambiguous try with ?: write (try E)? to return its Err, or try (E?) to catch the trap of E?")
		}
		return &ast.TryExpr{Span: ast.Span{From: p.pos(t.off), To: x.End()}, X: x}
	}
	if p.is("!") || p.is("-") {
		p.enter()
		defer p.leave()
		p.next()
		op := ast.Not
		if t.text == "-" {
			op = ast.Neg
		}
		x := p.parseUnary(head)
		return &ast.UnaryExpr{Span: ast.Span{From: p.pos(t.off), To: x.End()}, Op: op, X: x}
	}
	return p.parsePostfix(head)
}

func (p *parser) parsePostfix(head bool) ast.Expr {
	x := p.parsePrimary(head)
	for {
		if p.is("(") || p.is("[") || p.is(".") {
			p.chained(p.tok().off)
		}
		switch {
		case p.is("("):
			p.next()
			c := &ast.CallExpr{Fun: x}
			p.commaList(")", "argument", false, func() {
				c.Args = append(c.Args, p.parseExpr(false))
			})
			c.Span = ast.Span{From: x.Pos(), To: p.pos(p.prev)}
			x = c
		case p.is("["):
			p.next()
			ix := &ast.IndexExpr{X: x, Index: p.parseExpr(false)}
			p.expect("]", "after index")
			ix.Span = ast.Span{From: x.Pos(), To: p.pos(p.prev)}
			x = ix
		case p.is("?"):
			p.next()
			x = &ast.QuestionExpr{Span: ast.Span{From: x.Pos(), To: p.pos(p.prev)}, X: x}
		case p.is("."):
			p.next()
			f := &ast.FieldExpr{X: x, Name: p.fieldName("field name after \".\"")}
			f.Span = ast.Span{From: x.Pos(), To: p.pos(p.prev)}
			x = f
		default:
			return x
		}
	}
}

func (p *parser) parsePrimary(head bool) ast.Expr {
	t := p.tok()
	switch t.kind {
	case kInt:
		p.next()
		return &ast.IntLit{Span: p.span(t.off), Raw: t.text, Value: t.ival}
	case kFloat:
		p.next()
		return &ast.FloatLit{Span: p.span(t.off), Raw: t.text, Value: t.fval}
	case kString:
		p.next()
		return &ast.StringLit{Span: p.span(t.off), Value: t.sval}
	case kBytes:
		p.next()
		return &ast.BytesLit{Span: p.span(t.off), Value: t.sval}
	case kIdent:
		return p.parseName(head)
	case kKeyword:
		if t.text == "true" || t.text == "false" {
			p.next()
			return &ast.BoolLit{Span: p.span(t.off), Value: t.text == "true"}
		}
	case kPunct:
		switch t.text {
		case "(":
			p.next()
			x := p.parseExpr(false)
			p.expect(")", "to close \"(\"")
			// There is no paren node: the inner expression's span grows to
			// cover the parentheses, so every node starts at its first token.
			setSpan(x, p.span(t.off))
			return x
		case "[":
			p.next()
			l := &ast.ListLit{}
			p.commaList("]", "list element", false, func() {
				l.Elems = append(l.Elems, p.parseExpr(false))
			})
			l.Span = p.span(t.off)
			return l
		case "{":
			p.next()
			m := &ast.MapLit{}
			p.commaList("}", "map entry", false, func() {
				efrom := p.tok().off
				k := p.parseExpr(false)
				p.expect(":", "after map key")
				v := p.parseExpr(false)
				m.Entries = append(m.Entries, &ast.MapEntry{Span: p.span(efrom), Key: k, Value: v})
			})
			m.Span = p.span(t.off)
			return m
		}
	}
	p.fail("expected expression, found %s", p.found())
	return nil
}

// parseName parses a name, a path a::b::c, or (outside a head) a struct
// literal `Path { f: e, … }`.
func (p *parser) parseName(head bool) ast.Expr {
	from := p.tok().off
	parts := []*ast.Ident{p.ident("name")}
	for p.accept("::") {
		parts = append(parts, p.ident("name after \"::\""))
	}
	pathSpan := p.span(from)
	if !head && p.is("{") {
		p.next()
		typ := &ast.NamedType{Span: pathSpan}
		for _, part := range parts {
			typ.Path = append(typ.Path, part.Name)
		}
		s := &ast.StructLit{Type: typ, Fields: p.parseFieldInits()}
		s.Span = p.span(from)
		return s
	}
	if len(parts) == 1 {
		return &ast.Name{Span: pathSpan, Ident: parts[0]}
	}
	return &ast.PathExpr{Span: pathSpan, Parts: parts}
}

// setSpan replaces the span of an expression node.
func setSpan(x ast.Expr, s ast.Span) {
	switch x := x.(type) {
	case *ast.IntLit:
		x.Span = s
	case *ast.FloatLit:
		x.Span = s
	case *ast.StringLit:
		x.Span = s
	case *ast.BytesLit:
		x.Span = s
	case *ast.BoolLit:
		x.Span = s
	case *ast.Name:
		x.Span = s
	case *ast.PathExpr:
		x.Span = s
	case *ast.StructLit:
		x.Span = s
	case *ast.ListLit:
		x.Span = s
	case *ast.MapLit:
		x.Span = s
	case *ast.UnaryExpr:
		x.Span = s
	case *ast.BinaryExpr:
		x.Span = s
	case *ast.CallExpr:
		x.Span = s
	case *ast.IndexExpr:
		x.Span = s
	case *ast.FieldExpr:
		x.Span = s
	case *ast.QuestionExpr:
		x.Span = s
	case *ast.TryExpr:
		x.Span = s
	}
}
