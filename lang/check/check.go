package check

import (
	"fmt"
	"strings"

	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/diag"
)

// Result holds the declarations of a checked program, in load order (the
// user's files first, then the standard library).
type Result struct {
	Consts []*ast.ConstDecl
	Types  []*ast.TypeDecl // structs and topics
	Enums  []*ast.EnumDecl
	Fns    []*ast.FnDecl // top-level fns, stdlib helpers and @primitive declarations
	Loci   []*ast.LocusDecl
	Main   *ast.MainDecl
	// Scope maps every top-level name to its symbol; standard library names
	// are qualified ("std::time::now_ms"). Builtins are not in it.
	Scope map[string]*ast.Symbol
	// SecretNames are the string literals given to std::os::secret
	// anywhere in the program, sorted: std::os::env of these names is
	// withheld from every recording.
	SecretNames []string
}

// Check resolves every name of the program and type-checks it, annotating
// the trees in place. files are the user's files with the entry file
// first; std are the standard library files (File.Stdlib set, File.Module
// naming the module). It returns every error it finds, unsorted; the
// Result is complete even when there are errors.
func Check(files, std []*ast.File) (*Result, diag.List) {
	c := &checker{
		res:        &Result{Scope: map[string]*ast.Symbol{}},
		variants:   map[*ast.Type][]*ast.Symbol{},
		generics:   map[string]*ast.Type{},
		builtins:   map[string]*ast.Symbol{},
		loci:       map[*ast.LocusDecl]*locusCtx{},
		localKind:  map[*ast.Symbol]string{},
		secretFrom: map[*ast.Symbol]string{},
	}
	for name := range builtinArity {
		c.builtins[name] = &ast.Symbol{Kind: ast.SymBuiltin, Name: name, Builtin: name}
	}
	for _, name := range ctorNames {
		c.builtins[name] = &ast.Symbol{Kind: ast.SymBuiltin, Name: name, Builtin: name}
	}
	var entry *ast.File
	if len(files) > 0 {
		entry = files[0]
	}
	c.collect(files, false)
	c.collect(std, true)
	c.declareErrorType()
	c.declareJSONType()
	c.declareSecretType()
	c.resolveTypeDecls()
	c.recursiveStructs()
	c.topicSecrets()
	c.signatures()
	c.consts()
	c.budgets()
	c.bodies()
	c.checkMain(entry)
	c.res.SecretNames = c.sortedSecretNames()
	return c.res, c.errs
}

// checker holds the state of one Check run.
type checker struct {
	errs diag.List
	res  *Result

	decls    []declInFile                // every top-level declaration with its file
	variants map[*ast.Type][]*ast.Symbol // enum type -> variant symbols
	builtins map[string]*ast.Symbol
	generics map[string]*ast.Type // interned Option and Result instances by name
	// errorType is the built-in struct Error { kind, message }.
	errorType *ast.Type
	// jsonType is the built-in enum Json.
	jsonType *ast.Type
	// secretType is the built-in secret (secret.go); secretFrom says
	// where the secret held by a local came from, and secretNames are
	// the literal names given to std::os::secret.
	secretType  *ast.Type
	secretFrom  map[*ast.Symbol]string
	secretNames map[string]bool
	mains       []mainInFile
	loci        map[*ast.LocusDecl]*locusCtx
	localKind   map[*ast.Symbol]string // how each local was declared, for messages
	// pendingBudgets are @budget arguments that are not integer literals,
	// read once the consts they may name are checked (see budgets).
	pendingBudgets []pendingBudget

	// Context of the code being checked.
	module string    // stdlib module of the current file ("" for user code)
	locus  *locusCtx // the enclosing locus, or nil
	fn     *funcCtx  // the enclosing fn, handler or initialiser frame
	scope  *scope    // innermost local scope, or nil
}

type declInFile struct {
	decl ast.Decl
	file *ast.File
}

type mainInFile struct {
	decl *ast.MainDecl
	file *ast.File
}

// locusCtx is the locus whose body is being checked.
type locusCtx struct {
	decl    *ast.LocusDecl
	members map[string]*ast.Symbol // params, state and fns by plain name
	params  []*ast.Type            // parameter types, by index
	state   []*ast.Type            // state types, by index
	// initState >= 0 while checking the initialiser of state var number
	// initState: only the parameters and earlier state vars are usable.
	initState int
	// guard is set while checking a handler's guard (`on T(x) if …`): it
	// may read the payload, the locus parameters and consts, not state
	// nor the locus's fns (E0530).
	guard bool
}

// funcCtx is one frame: a fn, a handler, or the evaluation of state
// initialisers or spawn arguments.
type funcCtx struct {
	name   string    // for messages
	result *ast.Type // VoidType when nothing is returned
	slots  int       // next free frame slot
	loops  int       // depth of enclosing loops
}

// scope is one block of local names.
type scope struct {
	parent *scope
	names  map[string]*ast.Symbol
}

func (c *checker) errorf(pos ast.Pos, code diag.Code, format string, args ...any) {
	c.errs.Add(pos, code, format, args...)
}

// qualify returns the scope key of a top-level name declared in file f.
func qualify(f *ast.File, name string) string {
	if f.Stdlib && f.Module != "" {
		return f.Module + "::" + name
	}
	return name
}

// isBasicName reports whether name is one of the built-in type names,
// which cannot be redeclared.
func isBasicName(name string) bool {
	switch name {
	case "int", "float", "bool", "string", "bytes":
		return true
	}
	return false
}

// collect enters every top-level declaration of files into the scope.
func (c *checker) collect(files []*ast.File, std bool) {
	for _, f := range files {
		if f == nil {
			continue
		}
		for _, d := range f.Decls {
			if d == nil {
				continue
			}
			c.decls = append(c.decls, declInFile{d, f})
			c.declare(d, f)
		}
	}
}

func (c *checker) declare(d ast.Decl, f *ast.File) {
	var sym *ast.Symbol
	var name *ast.Ident
	switch d := d.(type) {
	case *ast.ConstDecl:
		c.res.Consts = append(c.res.Consts, d)
		name = d.Name
		sym = &ast.Symbol{Kind: ast.SymConst, Const: d, Type: ast.InvalidType}
	case *ast.TypeDecl:
		c.res.Types = append(c.res.Types, d)
		name = d.Name
		t := &ast.Type{Kind: ast.Struct, Topic: d.Topic}
		d.T = t
		kind := ast.SymStruct
		if d.Topic {
			kind = ast.SymTopic
		}
		sym = &ast.Symbol{Kind: kind, Type: t}
	case *ast.EnumDecl:
		c.res.Enums = append(c.res.Enums, d)
		name = d.Name
		t := &ast.Type{Kind: ast.Enum}
		d.T = t
		sym = &ast.Symbol{Kind: ast.SymEnum, Type: t}
	case *ast.FnDecl:
		c.res.Fns = append(c.res.Fns, d)
		name = d.Name
		kind := ast.SymFn
		if d.Body == nil && f.Stdlib {
			kind = ast.SymPrim
		}
		sym = &ast.Symbol{Kind: kind, Fn: d, Type: &ast.Type{Kind: ast.Func, Result: ast.VoidType}}
		d.Sym = sym
	case *ast.LocusDecl:
		c.res.Loci = append(c.res.Loci, d)
		name = d.Name
		sym = &ast.Symbol{Kind: ast.SymLocus, Locus: d}
		d.Sym = sym
	case *ast.MainDecl:
		c.mains = append(c.mains, mainInFile{d, f})
		return
	default:
		return
	}
	if name == nil {
		return
	}
	q := qualify(f, name.Name)
	sym.Name = q
	sym.Pos = name.Pos()
	name.Sym = sym
	if sym.Type != nil && (sym.Type.Kind == ast.Struct || sym.Type.Kind == ast.Enum) {
		sym.Type.Name = q
		sym.Type.Decl = name.Pos()
	}
	switch {
	case isBasicName(name.Name):
		c.errorf(name.Pos(), "E0205", "cannot declare %q: it names a built-in type", name.Name)
		return
	case name.Name == "_":
		c.errorf(name.Pos(), "E0205", "cannot declare %q at top level", name.Name)
		return
	case name.Name == SecretTypeName && (sym.Kind == ast.SymStruct || sym.Kind == ast.SymEnum || sym.Kind == ast.SymTopic):
		c.errorf(name.Pos(), "E0205", "cannot declare type %q: it names the built-in type of secrets", name.Name)
		return
	case reservedTopLevel[name.Name] && !f.Stdlib:
		c.errorf(name.Pos(), "E0205", "cannot declare %q: it names a built-in generic enum or its variant (Option, Result, Some, None, Ok, Err)", name.Name)
		return
	}
	if prev := c.res.Scope[q]; prev != nil {
		c.errorf(name.Pos(), "E0202", "duplicate declaration of %q (first declared at %s)", q, prev.Pos)
		return
	}
	c.res.Scope[q] = sym
}

// quoteList renders names as "a", "b" and "c".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// plural returns word with an "s" unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// enter opens a local scope.
func (c *checker) enter() { c.scope = &scope{parent: c.scope, names: map[string]*ast.Symbol{}} }

// leave closes the innermost local scope.
func (c *checker) leave() {
	if c.scope != nil {
		c.scope = c.scope.parent
	}
}

// declareLocal gives a new local its own frame slot and, unless the name is
// the blank "_", enters it in the innermost scope. Redeclaring a name in the
// same scope is an error.
// kind describes the local for messages ("declared with let").
func (c *checker) declareLocal(id *ast.Ident, t *ast.Type, mutable bool, kind string) *ast.Symbol {
	if id == nil {
		return nil
	}
	if t == nil {
		t = ast.InvalidType
	}
	sym := &ast.Symbol{Kind: ast.SymLocal, Name: id.Name, Pos: id.Pos(), Type: t, Mutable: mutable}
	if c.fn != nil {
		sym.Slot = c.fn.slots
		c.fn.slots++
	}
	id.Sym = sym
	c.localKind[sym] = kind
	if id.Name == "_" || c.scope == nil {
		return sym
	}
	if prev := c.scope.names[id.Name]; prev != nil {
		c.errorf(id.Pos(), "E0202", "duplicate declaration of %q (first declared at %s)", id.Name, prev.Pos)
		return sym
	}
	c.scope.names[id.Name] = sym
	return sym
}

// hidden reserves n consecutive frame slots and returns the first.
func (c *checker) hidden(n int) int {
	if c.fn == nil {
		return 0
	}
	s := c.fn.slots
	c.fn.slots += n
	return s
}

// lookup resolves a plain name used in an expression: locals, then the
// enclosing locus's members, then (in the standard library) the current
// module, then top-level names, then builtins. It returns nil for an
// undefined name. pos is used for errors about names that exist but cannot
// be used here (later state in a state initialiser).
func (c *checker) lookup(name string, pos ast.Pos) *ast.Symbol {
	for s := c.scope; s != nil; s = s.parent {
		if sym := s.names[name]; sym != nil {
			return sym
		}
	}
	if l := c.locus; l != nil {
		if sym := l.members[name]; sym != nil {
			if l.guard {
				switch sym.Kind {
				case ast.SymState:
					c.errorf(pos, "E0530", "a guard cannot read state %q: it runs on the publisher, before the message is delivered; it sees the payload, the locus parameters and consts", name)
				case ast.SymLocusFn:
					c.errorf(pos, "E0530", "a guard cannot call locus fn %q; it may call top-level fns without effects", name)
				}
			}
			if l.initState >= 0 {
				switch sym.Kind {
				case ast.SymState:
					if sym.Slot-len(l.decl.Params) >= l.initState {
						c.errorf(pos, "E0207", "state %q cannot be used here: a state initialiser sees only the locus parameters and earlier state", name)
					}
				case ast.SymLocusFn:
					c.errorf(pos, "E0207", "locus fn %q cannot be called in a state initialiser", name)
				}
			}
			return sym
		}
	}
	if c.module != "" {
		if sym := c.res.Scope[c.module+"::"+name]; sym != nil {
			return sym
		}
	} else if sym := c.res.Scope[name]; sym != nil {
		return sym
	}
	return c.builtins[name]
}

// lookupTop resolves a top-level name (types, topics, loci) from the
// current file: in the standard library the current module comes first.
func (c *checker) lookupTop(name string) *ast.Symbol {
	if c.module != "" {
		if sym := c.res.Scope[c.module+"::"+name]; sym != nil {
			return sym
		}
		return nil
	}
	return c.res.Scope[name]
}

// describe names a symbol's kind for messages: `fn "add"`.
func describe(sym *ast.Symbol) string {
	return fmt.Sprintf("%s %q", sym.Kind, sym.Name)
}
