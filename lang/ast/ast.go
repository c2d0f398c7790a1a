package ast

import "github.com/hale-lang/hale/lang/format"

// ---- Files and declarations ----

// File is one parsed source file.
type File struct {
	Span
	Path    string // logical path
	Imports []*Import
	Decls   []Decl // in source order
	Stdlib  bool   // part of the embedded standard library
	Module  string // stdlib only: the module path, e.g. "std::time"
}

// Import is `import "lib/util.hl";`. Path is the string as written
// (relative to the importing file).
type Import struct {
	Span
	Path string
}

// Decl is a top-level declaration.
type Decl interface {
	Node
	declNode()
}

// Ident is a name at its use or declaration site. Sym is set by the checker
// for uses (and for declarations, to the declared symbol).
type Ident struct {
	Span
	Name string
	Sym  *Symbol
}

// Annotation is `@name(arg: expr, …)`.
type Annotation struct {
	Span
	Name *Ident
	Args []*AnnArg
}

// AnnArg is one `name: expr` argument of an annotation.
type AnnArg struct {
	Span
	Name  *Ident
	Value Expr
}

// ConstDecl is `const NAME: T = expr;`.
type ConstDecl struct {
	Span
	Name  *Ident
	Type  TypeExpr
	Value Expr
}

// TypeDecl is `type Name { f: T, … }` and, with Topic set, `topic Name { … }`.
type TypeDecl struct {
	Span
	Topic  bool
	Name   *Ident
	Fields []*FieldDecl
	T      *Type // set by the checker: the declared struct type
}

// FieldDecl is `name: T` in a type or topic declaration.
type FieldDecl struct {
	Span
	Name *Ident
	Type TypeExpr
}

// EnumDecl is `enum Name { A, B(T, …), … }`.
type EnumDecl struct {
	Span
	Name     *Ident
	Variants []*VariantDecl
	T        *Type // set by the checker
}

// VariantDecl is one enum variant.
type VariantDecl struct {
	Span
	Name  *Ident
	Types []TypeExpr
}

// FnDecl is a fn, at top level or inside a locus.
type FnDecl struct {
	Span
	Annotations []*Annotation
	Name        *Ident
	Params      []*Param
	Result      TypeExpr // nil: returns nothing
	Body        *Block   // nil only for stdlib @primitive declarations

	// Set by the checker.
	Sym      *Symbol // the fn's symbol (Kind SymFn, SymLocusFn or SymPrim)
	NumSlots int     // frame slots needed: parameters first (0..len(Params)-1), then every local
}

// Param is `name: T`.
type Param struct {
	Span
	Name *Ident // Name.Sym is the parameter's local symbol
	Type TypeExpr
}

// LocusDecl is `locus Name(params) { state, handlers, fns }`.
type LocusDecl struct {
	Span
	Annotations []*Annotation
	Name        *Ident
	HasParams   bool // written with parentheses, even empty ones
	Params      []*Param
	State       []*StateVar
	Handlers    []*Handler
	Fns         []*FnDecl

	// Set by the checker. Instance slots: locus parameters first, then state.
	Sym       *Symbol
	NumSlots  int
	Budget    int64 // @budget(steps: N), 0 without a budget
	InitSlots int   // frame slots needed to evaluate the state initialisers
}

// StateVar is `var name: T = expr;` in a locus body.
type StateVar struct {
	Span
	Name  *Ident // Name.Sym is the SymState symbol
	Type  TypeExpr
	Value Expr
}

// Handler is `on start { … }` or `on Topic(name) [if guard] [shared] { … }`.
type Handler struct {
	Span
	Start bool
	Topic *Ident // nil for start; Topic.Sym is the SymTopic
	Param *Ident // nil for start; Param.Sym is local slot 0
	// Guard is the expression after `if`, or nil. It is evaluated in its
	// own frame: the payload in slot 0 (Param's symbol is the body's),
	// the locus parameters in slots 1.., then its locals.
	Guard  Expr
	Shared bool // `shared`: the instance joins the topic's work group
	Body   *Block

	NumSlots   int // set by the checker
	GuardSlots int // set by the checker: the guard frame's slots
	// GuardParam is the guard frame's payload symbol (slot 0), set by
	// the checker; the guard's names resolve to it rather than to Param.
	GuardParam *Symbol
}

// MainDecl is `main { spawn …; bind …; }`.
type MainDecl struct {
	Span
	Spawns []*Spawn // in source order, those inside spawn loops included
	Binds  []*Bind  // in source order
	// Exports are the `export T to nats(…)` items, in source order.
	Exports []*Export
	Loops   []*SpawnLoop // every spawn loop, nested ones included, in source order
	// Items holds the top-level spawns, binds and loops in source order;
	// expanding it (loops unrolled) gives "main order".
	Items []Node
}

// SpawnLoop is `for i in lo..hi { spawn …; }` in main: the bounds are
// constant and the body is unrolled at compile time.
type SpawnLoop struct {
	Span
	Var    *Ident // Var.Sym is an int SymLocal, read only by spawn arguments
	Lo, Hi Expr
	Body   []Node     // *Spawn, *SpawnLoop, or *Bind or *Export (which the checker rejects)
	Outer  *SpawnLoop // the enclosing loop, nil at the top of main
}

// PlacementKind says where an instance runs.
type PlacementKind uint8

// Placements.
const (
	PlaceMain PlacementKind = iota
	PlacePinned
	PlaceAsyncIO
	PlacePool
)

func (k PlacementKind) String() string {
	switch k {
	case PlacePinned:
		return "pinned"
	case PlaceAsyncIO:
		return "async_io"
	case PlacePool:
		return "pool"
	}
	return "main"
}

// Placement is the `on …` clause of a spawn; the default is PlaceMain.
type Placement struct {
	Span
	Kind PlacementKind
	Pool string // PlacePool: the pool name
}

// Spawn is `spawn Locus(args) as name on placement;`.
type Spawn struct {
	Span
	Locus     *Ident // Locus.Sym is the SymLocus
	HasArgs   bool   // written with parentheses
	Args      []Expr
	As        *Ident       // nil: the instance is named after the locus
	Index     []*Ident     // `as grid[i][j]`: the loop variables naming the instance
	Loops     []*SpawnLoop // the enclosing spawn loops, outermost first
	Placement *Placement   // nil: on main
}

// InstanceName is the spawned instance's name: the `as` name or the locus
// name. Inside a spawn loop it is the base name, without the indices.
func (s *Spawn) InstanceName() string {
	if s.As != nil {
		return s.As.Name
	}
	return s.Locus.Name
}

// Bind is `bind stdin to Topic;` or `bind nats(URL) subject "S" [queue
// "G"] to Topic;`.
type Bind struct {
	Span
	Topic *Ident     // Topic.Sym is the SymTopic
	Loop  *SpawnLoop // non-nil when written inside a spawn loop (an error)
	NATS  *NATS      // nil: stdin
}

// Export is `export Topic to nats(URL) subject "S";`: every message of
// Topic published in the process is also sent to the subject.
type Export struct {
	Span
	Topic *Ident     // Topic.Sym is the SymTopic
	Loop  *SpawnLoop // non-nil when written inside a spawn loop (an error)
	NATS  *NATS
}

// NATS is the `nats(URL) subject "S" [queue "G"]` part of a binding or an
// export. The URL is a literal (URL) or `env "NAME"` (URLEnv), read by the
// runtime at start-up.
type NATS struct {
	URL        string // the literal URL ("" with URLEnv)
	URLEnv     string // the environment variable naming the URL ("" with a literal)
	URLPos     Pos    // the URL literal or the env variable name
	Subject    string
	SubjectPos Pos
	Queue      string // "" without `queue`
	HasQueue   bool
	QueuePos   Pos
}

func (*ConstDecl) declNode() {}
func (*TypeDecl) declNode()  {}
func (*EnumDecl) declNode()  {}
func (*FnDecl) declNode()    {}
func (*LocusDecl) declNode() {}
func (*MainDecl) declNode()  {}

// ---- Types as written ----

// TypeExpr is a type as written in source.
type TypeExpr interface {
	Node
	typeNode()
}

// NamedType is `int`, `Point`, or a qualified `std::http::Response`.
type NamedType struct {
	Span
	Path []string   // one element except for qualified names
	Args []TypeExpr // type arguments: Option<T>, Result<T> (the only generic types)
	T    *Type      // set by the checker
}

// ListType is `[T]`.
type ListType struct {
	Span
	Elem TypeExpr
}

// MapType is `{K: V}`.
type MapType struct {
	Span
	Key   TypeExpr
	Value TypeExpr
}

func (*NamedType) typeNode() {}
func (*ListType) typeNode()  {}
func (*MapType) typeNode()   {}

// ---- Statements ----

// Stmt is a statement.
type Stmt interface {
	Node
	stmtNode()
}

// Block is `{ stmts }`.
type Block struct {
	Span
	Stmts []Stmt
}

// LetStmt is `let x: T = e;` or, with Mutable, `var x: T = e;`.
type LetStmt struct {
	Span
	Mutable bool
	Name    *Ident // Name.Sym is the new local
	Type    TypeExpr
	Value   Expr
}

// AssignOp is the operator of an assignment.
type AssignOp uint8

// Assignment operators.
const (
	Assign    AssignOp = iota // =
	AddAssign                 // +=
	SubAssign                 // -=
	MulAssign                 // *=
	DivAssign                 // /=
	RemAssign                 // %=
	AndAssign                 // &=
	OrAssign                  // |=
	XorAssign                 // ^=
	ShlAssign                 // <<=
	ShrAssign                 // >>=
)

func (op AssignOp) String() string {
	return [...]string{"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}[op]
}

// Binary returns the binary operator a compound assignment applies.
func (op AssignOp) Binary() BinaryOp {
	return [...]BinaryOp{0, Add, Sub, Mul, Div, Rem, BitAnd, BitOr, BitXor, Shl, Shr}[op]
}

// AssignStmt is `target op value;`.
type AssignStmt struct {
	Span
	Target Expr // Ident (var or state), IndexExpr or FieldExpr
	Op     AssignOp
	Value  Expr
}

// ExprStmt is `expr;` (the checker requires a call).
type ExprStmt struct {
	Span
	X Expr
}

// IfStmt is `if c { } else …`. Else is nil, *Block or *IfStmt.
type IfStmt struct {
	Span
	Cond Expr
	Then *Block
	Else Stmt
}

// WhileStmt is `while c { }`.
type WhileStmt struct {
	Span
	Cond Expr
	Body *Block
}

// ForStmt is one of `for x in list`, `for k, v in map`, `for k in map`,
// `for i in a..b`. Hi is set only for a range.
type ForStmt struct {
	Span
	Key  *Ident // the first name; its Sym is a local
	Val  *Ident // the second name or nil
	X    Expr   // the list, map or range start
	Hi   Expr   // range end, or nil
	Body *Block

	// Set by the checker: extra hidden frame slots the loop may use (the
	// iterated value, the index, the range end).
	HiddenSlot int
}

// MatchStmt is `match e { arms }`.
type MatchStmt struct {
	Span
	X    Expr
	Arms []*Arm
}

// Arm is `pattern => { … }`.
type Arm struct {
	Span
	Pattern *Pattern
	Body    *Block
}

// PatternKind classifies a match pattern.
type PatternKind uint8

// Pattern kinds.
const (
	PatWildcard PatternKind = iota // _
	PatInt                         // 42 or -42
	PatString                      // "text"
	PatBool                        // true, false
	PatVariant                     // Enum::Variant(a, b), or unqualified Some(x), None, Ok(v), Err(e)
)

// Pattern is one match pattern.
type Pattern struct {
	Span
	Kind  PatternKind
	Int   int64
	Str   string
	Bool  bool
	Enum  *Ident   // PatVariant: the enum name (nil for Some, None, Ok and Err)
	Name  *Ident   // PatVariant: the variant name
	Binds []*Ident // PatVariant: bound names (Sym are locals); "_" binds nothing

	Variant int // set by the checker: the variant index
}

// PublishStmt is `publish Topic { f: e, … };` or, with a delay in
// milliseconds, `publish Topic { f: e, … } after ms;`.
type PublishStmt struct {
	Span
	Topic  *Ident // Topic.Sym is the SymTopic
	Fields []*FieldInit
	After  Expr // the delay in milliseconds; nil for an immediate publish
}

// ReturnStmt is `return;` or `return e;`.
type ReturnStmt struct {
	Span
	Value Expr
}

// BreakStmt is `break;`.
type BreakStmt struct{ Span }

// ContinueStmt is `continue;`.
type ContinueStmt struct{ Span }

func (*Block) stmtNode()        {}
func (*LetStmt) stmtNode()      {}
func (*AssignStmt) stmtNode()   {}
func (*ExprStmt) stmtNode()     {}
func (*IfStmt) stmtNode()       {}
func (*WhileStmt) stmtNode()    {}
func (*ForStmt) stmtNode()      {}
func (*MatchStmt) stmtNode()    {}
func (*PublishStmt) stmtNode()  {}
func (*ReturnStmt) stmtNode()   {}
func (*BreakStmt) stmtNode()    {}
func (*ContinueStmt) stmtNode() {}

// ---- Expressions ----

// Expr is an expression. TypeOf returns the type the checker gave it.
type Expr interface {
	Node
	TypeOf() *Type
	SetType(*Type)
	exprNode()
}

// Typed is embedded in every expression to hold its checked type.
type Typed struct {
	T *Type
}

// TypeOf returns the checked type (nil before checking).
func (t *Typed) TypeOf() *Type { return t.T }

// SetType records the checked type.
func (t *Typed) SetType(ty *Type) { t.T = ty }

// IntLit is an integer literal. Value holds the magnitude; a literal
// above MaxInt64 is only valid as the operand of unary minus
// (-9223372036854775808), which the checker folds.
type IntLit struct {
	Span
	Typed
	Raw   string
	Value uint64
}

// FloatLit is a float literal.
type FloatLit struct {
	Span
	Typed
	Raw   string
	Value float64
}

// StringLit is a string literal with escapes decoded.
type StringLit struct {
	Span
	Typed
	Value string
}

// BytesLit is a bytes literal with escapes decoded.
type BytesLit struct {
	Span
	Typed
	Value string
}

// BoolLit is `true` or `false`.
type BoolLit struct {
	Span
	Typed
	Value bool
}

// Name is a use of a plain identifier as an expression.
type Name struct {
	Span
	Typed
	Ident *Ident
}

// PathExpr is a qualified name: std::time::now_ms, Verdict::Accept.
// Parts has at least two elements. Sym is set by the checker.
type PathExpr struct {
	Span
	Typed
	Parts []*Ident
	Sym   *Symbol
}

// Joined returns the path written with "::".
func (p *PathExpr) Joined() string {
	s := ""
	for i, part := range p.Parts {
		if i > 0 {
			s += "::"
		}
		s += part.Name
	}
	return s
}

// StructLit is `Name { f: e, … }` (also a topic's payload struct).
type StructLit struct {
	Span
	Typed
	Type   *NamedType
	Fields []*FieldInit
}

// FieldInit is `name: expr` in a struct literal or publish.
type FieldInit struct {
	Span
	Name  *Ident
	Value Expr
	Index int // set by the checker: the field's index in the struct
}

// ListLit is `[a, b]`.
type ListLit struct {
	Span
	Typed
	Elems []Expr
}

// MapLit is `{k: v, …}`.
type MapLit struct {
	Span
	Typed
	Entries []*MapEntry
}

// MapEntry is `k: v` in a map literal.
type MapEntry struct {
	Span
	Key   Expr
	Value Expr
}

// UnaryOp is a prefix operator.
type UnaryOp uint8

// Unary operators.
const (
	Not UnaryOp = iota // ! (logical on a bool, bitwise complement on an int)
	Neg                // -
)

func (op UnaryOp) String() string { return [...]string{"!", "-"}[op] }

// UnaryExpr is `!x` or `-x`.
type UnaryExpr struct {
	Span
	Typed
	Op UnaryOp
	X  Expr
}

// BinaryOp is an infix operator.
type BinaryOp uint8

// Binary operators.
const (
	OrOr   BinaryOp = iota // ||
	AndAnd                 // &&
	Eq                     // ==
	Ne                     // !=
	Lt                     // <
	Le                     // <=
	Gt                     // >
	Ge                     // >=
	Add                    // +
	Sub                    // -
	Mul                    // *
	Div                    // /
	Rem                    // %
	BitAnd                 // &
	BitOr                  // |
	BitXor                 // ^
	Shl                    // <<
	Shr                    // >>
)

var binaryOpNames = [...]string{"||", "&&", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"}

func (op BinaryOp) String() string { return binaryOpNames[op] }

// Precedence returns the binding strength of op: higher binds tighter.
func (op BinaryOp) Precedence() int {
	switch op {
	case OrOr:
		return 1
	case AndAnd:
		return 2
	case Eq, Ne:
		return 3
	case Lt, Le, Gt, Ge:
		return 4
	case BitOr:
		return 5
	case BitXor:
		return 6
	case BitAnd:
		return 7
	case Shl, Shr:
		return 8
	case Add, Sub:
		return 9
	}
	return 10 // * / %
}

// BinaryExpr is `x op y`. All binary operators are left-associative.
type BinaryExpr struct {
	Span
	Typed
	Op    BinaryOp
	OpPos Pos
	X, Y  Expr
}

// CallExpr is `fun(args)`. Fun is a *Name or *PathExpr; the checker rejects
// other callees.
type CallExpr struct {
	Span
	Typed
	Fun  Expr
	Args []Expr
	// Format is the parsed literal of a call of the format builtin, set
	// by the checker when the literal is well formed.
	Format []format.Piece
}

// Callee returns the symbol the call resolves to (nil before checking or
// when Fun is not a name).
func (c *CallExpr) Callee() *Symbol {
	switch f := c.Fun.(type) {
	case *Name:
		return f.Ident.Sym
	case *PathExpr:
		return f.Sym
	}
	return nil
}

// IndexExpr is `x[i]`.
type IndexExpr struct {
	Span
	Typed
	X     Expr
	Index Expr
}

// FieldExpr is `x.name`.
type FieldExpr struct {
	Span
	Typed
	X     Expr
	Name  *Ident
	Index int // set by the checker: the field index
}

// QuestionExpr is `x?`: the Ok (or Some) value of x, or an early return of
// its Err (or None) from the enclosing fn.
type QuestionExpr struct {
	Span
	Typed
	X Expr
}

func (*QuestionExpr) exprNode() {}

// TryExpr is `try x`: Ok(value) of x, or Err(Error { kind, message }) of a
// trap raised while x runs; for an x without a value, None or Some(error).
type TryExpr struct {
	Span
	Typed
	X    Expr
	Void bool // set by the checker: x has no value (the type is Option<Error>)
}

func (*TryExpr) exprNode() {}

func (*IntLit) exprNode()     {}
func (*FloatLit) exprNode()   {}
func (*StringLit) exprNode()  {}
func (*BytesLit) exprNode()   {}
func (*BoolLit) exprNode()    {}
func (*Name) exprNode()       {}
func (*PathExpr) exprNode()   {}
func (*StructLit) exprNode()  {}
func (*ListLit) exprNode()    {}
func (*MapLit) exprNode()     {}
func (*UnaryExpr) exprNode()  {}
func (*BinaryExpr) exprNode() {}
func (*CallExpr) exprNode()   {}
func (*IndexExpr) exprNode()  {}
func (*FieldExpr) exprNode()  {}
