// Package sir is Hale's structured intermediate representation: the checked
// syntax tree lowered to a typed, name-resolved tree that a code generator
// can translate without looking anything up or re-deriving a type.
//
// Lower turns a checked *lang.Program (and its effect sets) into a
// *Program. In SIR:
//
//   - every type is one index (TypeRef) into Program.Types; the basic types
//     sit at fixed indices and list and map types are interned, so two
//     TypeRefs are the same type exactly when they are equal;
//   - every name is a slot (frame slot or instance slot), a function index,
//     a topic index, a primitive index or a folded constant;
//   - every operation says what it operates on (IntAdd, not "+"; IndexMap,
//     not "[]"; LenList, not "len"), so code generation is a table lookup;
//   - compound assignments are an explicit read, operation and store, with
//     any container and index evaluated once into hidden frame slots;
//   - every statement and expression keeps the source position that a trap
//     there must report.
//
// The package also prints a Program as text (WriteText, for
// `hale build --emit sir`), encodes it canonically (MarshalBinary,
// Unmarshal, Validate), and builds the program's shape graph and shape
// hash (BuildShape, ShapeOf), the structural identity that replay
// admission compares.
//
// Evaluation order, which SIR fixes for every consumer: operands, call
// arguments, list and map elements left to right; an assignment evaluates
// its container, then its index or key, then the value, then stores; struct
// literal and publish fields in source order (see MakeStruct.Order).
package sir

import (
	"strconv"
	"strings"

	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/check"
)

// ---- Program ----

// Program is one lowered Hale program: everything the code generator and
// the runtime need, with no reference back to the syntax tree.
type Program struct {
	// Entry is the logical path of the entry file.
	Entry string
	// Files are the logical paths of the user's files, entry first, in load
	// order (standard library files are not listed).
	Files []string

	// Types is the type table. Indices 0..NumBasic-1 are the basic types
	// (TVoid … TBytes); after them come structs, topics and enums in
	// declaration order, then list and map types as lowering first needs
	// them. Each list or map type occurs once.
	Types []*Type
	// Consts are the program's named constants, folded to values, in
	// declaration order. Uses are inlined as Const expressions; the table
	// is kept for printing and debugging.
	Consts []*ConstDecl
	// Funcs are all functions: the user's top-level fns in declaration
	// order; then for each locus in declaration order its init function,
	// its handlers (`on start` included) in declaration order and its
	// private fns; then the standard library
	// helpers written in Hale that the program reaches, in order of first
	// use. Call.Func indexes this slice.
	Funcs []*Func
	// Loci are the locus types in declaration order.
	Loci []*Locus
	// Instances are the spawned instances in main order.
	Instances []*Instance
	// Topics are the declared topics in declaration order.
	Topics []*Topic
	// Ingress are the `bind stdin to T` and `bind nats(…) … to T`
	// bindings in source order.
	Ingress []*Ingress
	// Exports are the `export T to nats(…)` items in source order.
	Exports []*Export
	// Prims are the host primitives the program calls (they cross the
	// gateway), sorted by name. CallPrim.Prim indexes this slice.
	Prims []*Prim
	// Consumers is the consumer table (docs/language.md): 0 main, then pools
	// in order of first appearance in main, then pinned instances, then
	// async_io instances, then ingress bindings. The main consumer is
	// always present, even when no instance is placed on it.
	Consumers []*Consumer
}

// ---- Types ----

// TypeRef is an index into Program.Types.
type TypeRef int32

// The basic types, at fixed indices of every Program's type table.
const (
	TVoid   TypeRef = iota // the "result" of a fn without one
	TInt                   // int
	TFloat                 // float
	TBool                  // bool
	TString                // string
	TBytes                 // bytes

	// NumBasic is the number of basic types at the start of the table.
	NumBasic = 6
)

// TypeKind classifies a Type. The numbering matches the value kinds of the
// virtual machine (void, int, float, bool, string, bytes, list, map,
// struct, enum) and is part of the binary encoding: never renumber.
type TypeKind uint8

// Type kinds.
const (
	KindVoid TypeKind = iota
	KindInt
	KindFloat
	KindBool
	KindString
	KindBytes
	KindList   // Elem
	KindMap    // Key, Elem
	KindStruct // Name, Fields; Topic for a topic's payload
	KindEnum   // Name, Variants
)

var typeKindNames = [...]string{"void", "int", "float", "bool", "string", "bytes", "list", "map", "struct", "enum"}

func (k TypeKind) String() string {
	if int(k) < len(typeKindNames) {
		return typeKindNames[k]
	}
	return "kind?"
}

// Type is one entry of the type table. Structs, topics and enums are
// nominal (one entry per declaration); lists and maps are structural and
// interned. A recursive type refers to itself by index.
type Type struct {
	Kind     TypeKind
	Elem     TypeRef   // KindList: element; KindMap: value
	Key      TypeRef   // KindMap: key (int, string or bool)
	Name     string    // KindStruct, KindEnum: declared name ("Point", "std::http::Response")
	Fields   []Field   // KindStruct: in declaration order
	Variants []Variant // KindEnum: in declaration order
	Topic    bool      // KindStruct: declared with `topic`
	Pos      ast.Pos   // KindStruct, KindEnum: declaration
}

// Field is a struct or topic field.
type Field struct {
	Name string
	Type TypeRef
}

// Variant is an enum variant; Fields are its payload types (none for a unit
// variant).
type Variant struct {
	Name   string
	Fields []TypeRef
}

// ---- Values and constants ----

// Value is a compile-time constant: an int, float, bool, string or bytes.
type Value struct {
	Kind  TypeKind // KindInt, KindFloat, KindBool, KindString or KindBytes
	Int   int64    // KindInt
	Float float64  // KindFloat
	Bool  bool     // KindBool
	Str   string   // KindString, KindBytes
}

// ConstDecl is a named constant with its folded value.
type ConstDecl struct {
	Name  string
	Type  TypeRef
	Value Value
	Pos   ast.Pos
}

// ---- Functions ----

// FuncKind says what a Func was lowered from.
type FuncKind uint8

// Function kinds.
const (
	FuncFn      FuncKind = iota // top-level fn (user code or standard library helper)
	FuncLocusFn                 // locus-private fn: runs on an instance, may use StateRef
	FuncHandler                 // `on Topic(p)`: one parameter, the payload, in slot 0
	FuncStart                   // `on start`: no parameters
	FuncInit                    // a locus's state initialisers (see Locus.Init)
	// FuncGuard is a handler's guard (`on T(p) if g`): a pure function
	// of the payload (slot 0) and copies of the locus parameters (slots
	// 1..len(Params)) returning bool. It reads no instance slot, so it
	// can run on the publisher's consumer for any subscriber.
	FuncGuard
)

var funcKindNames = [...]string{"fn", "locus fn", "handler", "start", "init", "guard"}

func (k FuncKind) String() string {
	if int(k) < len(funcKindNames) {
		return funcKindNames[k]
	}
	return "func?"
}

// Func is one function body. Parameters occupy frame slots
// 0..NumParams-1; locals and hidden slots (loop state, match scrutinees,
// assignment temporaries) follow, up to NumSlots.
type Func struct {
	// Name is qualified: "fib", "Ledger.report", "Ledger.on OrderPlaced",
	// "Ledger.on start", "Ledger.init", "std::strings::pad".
	Name      string
	Kind      FuncKind
	Locus     int // index into Program.Loci; -1 for a top-level fn
	Topic     int // FuncHandler: index into Program.Topics; -1 otherwise
	NumParams int
	NumSlots  int     // frame size, NumParams included
	Locals    []Local // one per frame slot (len NumSlots), for printing and debugging
	Result    TypeRef // TVoid when the function returns nothing
	Body      []Stmt
	Pos       ast.Pos
	// Effects is the inferred effect set (sorted effect names such as
	// "io", "time", "publish(OrderPlaced)"); nil when pure or unknown.
	Effects []string
}

// Local describes one frame slot. Hidden slots have names starting with
// '$' ("$for.list", "$for.idx", "$for.hi", "$tmp"); a slot the checker
// reserved that nothing uses has an empty name.
type Local struct {
	Name string
	Type TypeRef
}

// String returns the function's kind and name ("handler Ledger.on
// OrderPlaced"), for messages.
func (f *Func) String() string { return f.Kind.String() + " " + f.Name }

// ---- Loci, instances, topics ----

// Locus is a locus type.
type Locus struct {
	Name string
	// Params are the locus parameters, in instance slots 0..len(Params)-1.
	Params []Var
	// State are the state variables, in the instance slots after the
	// parameters, in declaration order.
	State []Var
	// NumSlots is the number of instance slots (parameters plus state).
	NumSlots int
	// Init is the index of the FuncInit function that evaluates the state
	// initialisers, in declaration order, into the state slots. The host
	// first stores the instance's arguments into the parameter slots, then
	// runs Init (it is not step-counted). Every locus has one.
	Init int
	// Start is the index of the `on start` handler, or -1.
	Start int
	// Handlers are the topic handlers in declaration order.
	Handlers []HandlerRef
	// Fns are the indices of the locus-private fns in declaration order.
	Fns []int
	// Budget caps interpreter steps per handler run (@budget); 0 is none.
	Budget int64
	Pos    ast.Pos
}

// Var is a locus parameter or state variable and its instance slot.
type Var struct {
	Name string
	Type TypeRef
	Slot int
}

// HandlerRef ties a subscribed topic to the function that handles it.
type HandlerRef struct {
	Topic int // index into Program.Topics
	Func  int // index into Program.Funcs
	// Guard is the FuncGuard function deciding, at publish time, whether
	// an instance gets the message; -1 without a guard.
	Guard int
	// Shared: the instances of this locus join the topic's work group,
	// whose members share the messages round-robin.
	Shared bool
}

// HandlerFor returns the index of the function handling topic, or -1.
func (l *Locus) HandlerFor(topic int) int {
	for _, h := range l.Handlers {
		if h.Topic == topic {
			return h.Func
		}
	}
	return -1
}

// Placement says where an instance runs (ast.PlaceMain, PlacePinned,
// PlaceAsyncIO or PlacePool with Pool the pool's name).
type Placement struct {
	Kind ast.PlacementKind
	Pool string
}

// Instance is one `spawn` in main.
type Instance struct {
	Name  string
	Locus int // index into Program.Loci
	// Args are the locus arguments, evaluated in order with an empty frame
	// and no instance before any handler runs; they never use a slot.
	Args      []Expr
	Placement Placement
	Consumer  int // index into Program.Consumers
	Pos       ast.Pos
}

// Topic is a declared topic.
type Topic struct {
	Name string
	Type TypeRef // the payload struct (Types[Type].Topic is true)
	// Subscribers are the instances (indices into Program.Instances) whose
	// locus handles this topic, in main order: the delivery order of one
	// publish.
	Subscribers []int
	Pos         ast.Pos
}

// Ingress is one `bind stdin to T` or `bind nats(…) subject "S" to T`.
type Ingress struct {
	Topic    int   // index into Program.Topics
	Consumer int   // index into Program.Consumers
	NATS     *NATS // nil: stdin
	Pos      ast.Pos
}

// Export is one `export T to nats(…) subject "S"`.
type Export struct {
	Topic int // index into Program.Topics
	NATS  NATS
	Pos   ast.Pos
}

// NATS is where a binding or an export meets NATS. The URL is read by the
// runtime, from URL or from the environment variable URLEnv.
type NATS struct {
	URL     string // a literal URL ("" with URLEnv)
	URLEnv  string // the environment variable naming the URL
	Subject string
	Queue   string // "" for none (bindings only)
}

// IngressName is the consumer name of an ingress binding: "stdin:T", or
// "nats:S:T" for subject S.
func IngressName(n *NATS, topic string) string {
	if n == nil {
		return "stdin:" + topic
	}
	return "nats:" + n.Subject + ":" + topic
}

// Prim is a host primitive the program calls: a call that crosses the
// gateway and that replay records or serves.
type Prim struct {
	Name   string // qualified, e.g. "std::time::now_ms"
	ID     int    // the standard library's numeric primitive id; -1 when it has none
	Effect string // "time", "io", …
	Params []TypeRef
	Result TypeRef
}

// ConsumerKind classifies a consumer.
type ConsumerKind uint8

// Consumer kinds, in consumer-id order.
const (
	ConsumerMain    ConsumerKind = iota // the main cooperative bus (id 0)
	ConsumerPool                        // a named pool
	ConsumerPinned                      // one pinned instance
	ConsumerAsyncIO                     // one async_io instance (unrecorded order)
	ConsumerIngress                     // a stdin or nats binding: produces, never consumes
)

var consumerKindNames = [...]string{"main", "pool", "pinned", "async_io", "ingress"}

func (k ConsumerKind) String() string {
	if int(k) < len(consumerKindNames) {
		return consumerKindNames[k]
	}
	return "consumer?"
}

// Consumer is one unit that owns a delivery order (or, for ingress, a
// producer sequence).
type Consumer struct {
	Kind ConsumerKind
	// Name is "main", the pool name, the pinned or async_io instance's
	// name, or IngressName for an ingress binding.
	Name string
	// Instances hosted, in main order (none for ingress).
	Instances []int
}

// ---- Statements ----

// Stmt is a SIR statement.
type Stmt interface {
	Pos() ast.Pos
	stmtNode()
}

// StmtBase holds the source position every statement carries.
type StmtBase struct {
	At ast.Pos
}

// Pos returns the statement's source position.
func (b *StmtBase) Pos() ast.Pos { return b.At }

// Let stores Value into frame slot Slot (a `let`/`var` declaration or a
// lowering temporary).
type Let struct {
	StmtBase
	Slot  int
	Value Expr
}

// SetLocal assigns a `var` local: frame slot Slot = Value.
type SetLocal struct {
	StmtBase
	Slot  int
	Value Expr
}

// SetState assigns a state variable: instance slot Slot = Value.
type SetState struct {
	StmtBase
	Slot  int
	Value Expr
}

// SetIndex is `X[Index] = Value` on a list (Kind IndexList: an
// out-of-range index traps) or a map (Kind IndexMap: inserts or replaces,
// keeping an existing key's place). X, Index and Value are evaluated in
// that order.
type SetIndex struct {
	StmtBase
	Kind  IndexKind // IndexList or IndexMap
	X     Expr
	Index Expr
	Value Expr
}

// SetField is `X.field = Value` with Field the field index. X is evaluated
// before Value.
type SetField struct {
	StmtBase
	X     Expr
	Field int
	Value Expr
}

// ExprStmt evaluates X (a call) and drops its result.
type ExprStmt struct {
	StmtBase
	X Expr
}

// If runs Then when Cond holds, otherwise Else (empty when absent; an
// `else if` is an If inside Else).
type If struct {
	StmtBase
	Cond Expr
	Then []Stmt
	Else []Stmt
}

// While runs Body while Cond holds.
type While struct {
	StmtBase
	Cond Expr
	Body []Stmt
}

// ForRange is `for i in Lo..Hi`: Lo and Hi are evaluated once, in that
// order (Hi into hidden slot HiSlot); Slot takes Lo, Lo+1, … while below
// Hi. The loop variable is read-only in the body, so Slot itself may serve
// as the counter; `continue` goes to the increment.
type ForRange struct {
	StmtBase
	Slot   int // the loop variable
	HiSlot int // hidden: the end bound
	Lo, Hi Expr
	Body   []Stmt
}

// ForList is `for x in List`: the list is evaluated once into ListSlot and
// iterated by the index in IdxSlot, each element stored into Slot.
// Changing the list's length while iterating traps (docs/language.md).
type ForList struct {
	StmtBase
	Slot     int // the element variable
	ListSlot int // hidden: the list
	IdxSlot  int // hidden: the next index
	List     Expr
	Body     []Stmt
}

// ForMap is `for k, v in Map` (ValSlot -1 for `for k in Map`): the map is
// evaluated once into MapSlot and iterated in insertion order by the
// position in IdxSlot. Changing the map while iterating traps.
type ForMap struct {
	StmtBase
	KeySlot int
	ValSlot int // -1 when only keys are bound
	MapSlot int // hidden: the map
	IdxSlot int // hidden: the next position
	Map     Expr
	Body    []Stmt
}

// MatchKind is what a Match switches on.
type MatchKind uint8

// Match kinds.
const (
	MatchEnum MatchKind = iota
	MatchInt
	MatchString
	MatchBool
)

var matchKindNames = [...]string{"enum", "int", "string", "bool"}

func (k MatchKind) String() string {
	if int(k) < len(matchKindNames) {
		return matchKindNames[k]
	}
	return "match?"
}

// Match evaluates X once into hidden slot Slot and runs the first arm whose
// pattern matches, or Default. The checker guarantees exhaustiveness, so
// when HasDefault is false some arm always matches. Arms after a wildcard
// are dropped.
type Match struct {
	StmtBase
	Kind       MatchKind
	X          Expr
	Slot       int // hidden: the scrutinee
	Arms       []*Arm
	HasDefault bool
	Default    []Stmt // the `_` arm's body
}

// Arm is one non-wildcard match arm.
type Arm struct {
	Pos     ast.Pos
	Variant int    // MatchEnum: variant index
	Int     int64  // MatchInt
	Str     string // MatchString
	Bool    bool   // MatchBool
	// Binds (MatchEnum) has one frame slot per payload value of the
	// variant, -1 where the pattern binds nothing (`_` or no name).
	Binds []int
	Body  []Stmt
}

// Publish is `publish T { … }`: Fields are the payload's field values in
// declaration order, evaluated in the order given by Order (as in
// MakeStruct); the payload is built and published on topic Topic. After,
// when set, is the delay in milliseconds (an int evaluated after the
// fields) of a timer, `publish T {…} after ms;`.
type Publish struct {
	StmtBase
	Topic  int // index into Program.Topics
	Fields []Expr
	Order  []int
	After  Expr // nil: immediate
}

// Return leaves the function; Value is nil for `return;`.
type Return struct {
	StmtBase
	Value Expr
}

// Break leaves the innermost loop.
type Break struct{ StmtBase }

// Continue goes to the next iteration of the innermost loop.
type Continue struct{ StmtBase }

func (*Let) stmtNode()      {}
func (*SetLocal) stmtNode() {}
func (*SetState) stmtNode() {}
func (*SetIndex) stmtNode() {}
func (*SetField) stmtNode() {}
func (*ExprStmt) stmtNode() {}
func (*If) stmtNode()       {}
func (*While) stmtNode()    {}
func (*ForRange) stmtNode() {}
func (*ForList) stmtNode()  {}
func (*ForMap) stmtNode()   {}
func (*Match) stmtNode()    {}
func (*Publish) stmtNode()  {}
func (*Return) stmtNode()   {}
func (*Break) stmtNode()    {}
func (*Continue) stmtNode() {}

// ---- Expressions ----

// Expr is a SIR expression. Expressions never need frame slots of their
// own: everything that does is a statement.
type Expr interface {
	Pos() ast.Pos
	Type() TypeRef
	exprNode()
}

// ExprBase holds what every expression carries: the position a trap in it
// reports and the type of its value.
type ExprBase struct {
	At ast.Pos
	Ty TypeRef
}

// Pos returns the expression's source position.
func (b *ExprBase) Pos() ast.Pos { return b.At }

// Type returns the expression's type.
func (b *ExprBase) Type() TypeRef { return b.Ty }

// Const is a literal or a folded named constant (Name is the constant's
// name, "" for a literal).
type Const struct {
	ExprBase
	Value Value
	Name  string
}

// LocalRef reads frame slot Slot.
type LocalRef struct {
	ExprBase
	Slot int
}

// StateRef reads instance slot Slot (a locus parameter or state variable)
// of the running instance.
type StateRef struct {
	ExprBase
	Slot int
}

// UnaryOp is a typed unary operation.
type UnaryOp uint8

// Unary operations.
const (
	NotBool  UnaryOp = iota // !b
	NegInt                  // -i (traps on MIN)
	NegFloat                // -f
	NotInt                  // !i (bitwise complement)
	numUnaryOps
)

var unaryOpNames = [...]string{"not", "neg.int", "neg.float", "not.int"}

func (op UnaryOp) String() string {
	if int(op) < len(unaryOpNames) {
		return unaryOpNames[op]
	}
	return "unary?"
}

// Unary applies Op to X.
type Unary struct {
	ExprBase
	Op UnaryOp
	X  Expr
}

// BinaryOp is a typed binary operation. `&&` and `||` are not binary
// operations: they are And and Or, which short-circuit.
type BinaryOp uint8

// Binary operations. Int arithmetic traps on overflow, and IntDiv and
// IntRem on a zero divisor (and MIN / -1); IntDiv truncates toward zero,
// IntRem takes the dividend's sign. FloatRem is Go's math.Mod. Eq and Ne
// compare any two values of one type structurally (map equality ignores
// order). The ordered comparisons exist for int, float and string (by
// bytes). IntShl and IntShr trap on a count outside 0 to 63; IntShl drops
// the bits shifted out and IntShr is arithmetic (it copies the sign bit).
// New operations are appended: the numbering is part of the encoding.
const (
	IntAdd BinaryOp = iota
	IntSub
	IntMul
	IntDiv
	IntRem
	FloatAdd
	FloatSub
	FloatMul
	FloatDiv
	FloatRem
	StrConcat
	BytesConcat
	ListConcat // a new list: X's elements then Y's
	Eq
	Ne
	IntLt
	IntLe
	IntGt
	IntGe
	FloatLt
	FloatLe
	FloatGt
	FloatGe
	StrLt
	StrLe
	StrGt
	StrGe
	IntAnd
	IntOr
	IntXor
	IntShl
	IntShr
	numBinaryOps
)

var binaryOpNames = [...]string{
	"add.int", "sub.int", "mul.int", "div.int", "rem.int",
	"add.float", "sub.float", "mul.float", "div.float", "rem.float",
	"concat.str", "concat.bytes", "concat.list", "eq", "ne",
	"lt.int", "le.int", "gt.int", "ge.int",
	"lt.float", "le.float", "gt.float", "ge.float",
	"lt.str", "le.str", "gt.str", "ge.str",
	"and.int", "or.int", "xor.int", "shl.int", "shr.int",
}

func (op BinaryOp) String() string {
	if int(op) < len(binaryOpNames) {
		return binaryOpNames[op]
	}
	return "binary?"
}

// Binary applies Op to X and Y, evaluated in that order. Its position is
// the operator's.
type Binary struct {
	ExprBase
	Op   BinaryOp
	X, Y Expr
}

// And is `X && Y`: Y is evaluated only when X is true.
type And struct {
	ExprBase
	X, Y Expr
}

// Or is `X || Y`: Y is evaluated only when X is false.
type Or struct {
	ExprBase
	X, Y Expr
}

// Call calls Program.Funcs[Func]. A call to a locus-private fn runs on the
// calling instance.
type Call struct {
	ExprBase
	Func int
	Args []Expr
}

// CallBuiltin calls a builtin implemented by the virtual machine itself.
type CallBuiltin struct {
	ExprBase
	Builtin Builtin
	Args    []Expr
}

// CallPrim calls a host primitive through the gateway: Prim indexes
// Program.Prims and Name repeats its name.
type CallPrim struct {
	ExprBase
	Prim int
	Name string
	Args []Expr
}

// MakeList builds a new list of Elems (Ty is the list type).
type MakeList struct {
	ExprBase
	Elems []Expr
}

// MakeMap builds a new map; entries are inserted in order, a repeated key
// replacing the earlier value in its place. Keys[i] is evaluated before
// Values[i], entry by entry.
type MakeMap struct {
	ExprBase
	Keys   []Expr
	Values []Expr
}

// MakeStruct builds a struct of type Ty. Fields are the field values in
// declaration order. Order is the evaluation order, as field indices (the
// source order of the literal); nil means declaration order. Lowering sets
// Order only when the two differ and the difference could be observed.
type MakeStruct struct {
	ExprBase
	Fields []Expr
	Order  []int
}

// MakeEnum builds variant Variant of enum type Ty with payload Args.
type MakeEnum struct {
	ExprBase
	Variant int
	Args    []Expr
}

// IndexKind is the kind of container an Index or SetIndex works on.
type IndexKind uint8

// Index kinds.
const (
	IndexList   IndexKind = iota // element; out of range traps
	IndexMap                     // value; a missing key traps
	IndexString                  // the byte at the index, as an int
	IndexBytes                   // the byte at the index, as an int
)

var indexKindNames = [...]string{"list", "map", "string", "bytes"}

func (k IndexKind) String() string {
	if int(k) < len(indexKindNames) {
		return indexKindNames[k]
	}
	return "index?"
}

// Index is `X[Index]`.
type Index struct {
	ExprBase
	Kind  IndexKind
	X     Expr
	Index Expr
}

// FieldRef is `X.f` with Field the field index in X's struct type.
type FieldRef struct {
	ExprBase
	X     Expr
	Field int
}

// Question is `X?`: X is an Option or a Result. For Some(v) or Ok(v) it
// gives v; for None it returns None of Ret, the enclosing function's
// result type, and for Err(e) it returns Err(e) of Ret, ending the for
// loops it is in as a return does.
type Question struct {
	ExprBase
	X   Expr
	Ret TypeRef
}

func (*Question) exprNode() {}

// Try is `try X`: Ok(X) when X returns, or Err(Error { kind, message }) of
// a catchable trap raised while X runs (in X or anything it calls), which
// unwinds to here. When X has no value (Void) the type is Option<Error>:
// None on success, Some(error) on a trap.
type Try struct {
	ExprBase
	X    Expr
	Void bool
}

func (*Try) exprNode() {}

func (*Const) exprNode()       {}
func (*LocalRef) exprNode()    {}
func (*StateRef) exprNode()    {}
func (*Unary) exprNode()       {}
func (*Binary) exprNode()      {}
func (*And) exprNode()         {}
func (*Or) exprNode()          {}
func (*Call) exprNode()        {}
func (*CallBuiltin) exprNode() {}
func (*CallPrim) exprNode()    {}
func (*MakeList) exprNode()    {}
func (*MakeMap) exprNode()     {}
func (*MakeStruct) exprNode()  {}
func (*MakeEnum) exprNode()    {}
func (*Index) exprNode()       {}
func (*FieldRef) exprNode()    {}
func (*Format) exprNode()      {}

// Format is the text of Parts in order, built at once: the lowering of a
// call of the format builtin. Part i is str(Parts[i]) (a string as it is)
// when Specs[i] is negative, else laid out by the placeholder spec that
// Specs[i] packs (package lang/format): an int or a float by its number
// form, any other value as its str form padded to the width.
type Format struct {
	ExprBase
	Parts []Expr
	Specs []int64
}

// ---- Builtins ----

// Builtin identifies a function the virtual machine implements itself
// (no gateway crossing, except that Print writes output). Overloaded
// source builtins are split by operand type. The numbering is part of the
// binary encoding: append, never renumber.
type Builtin uint8

// Builtins. Arguments are as in the source call; "in place" mutates the
// first argument.
const (
	BuiltinInvalid       Builtin = iota
	BuiltinPrint                 // print(x): str(x) and a newline to stdout (effect io)
	BuiltinStr                   // str(x) -> string
	BuiltinIntOfFloat            // int(f): truncates; NaN or out of range traps
	BuiltinIntOfString           // int(s): parses; bad text traps
	BuiltinFloatOfInt            // float(i)
	BuiltinFloatOfString         // float(s): parses; bad text traps
	BuiltinLenList               // len(xs)
	BuiltinLenMap                // len(m)
	BuiltinLenStr                // len(s) for a string or bytes value: its byte count
	BuiltinPush                  // push(xs, v): in place
	BuiltinPop                   // pop(xs) -> T: in place; empty traps
	BuiltinInsert                // insert(xs, i, v): in place
	BuiltinRemove                // remove(xs, i) -> T: in place
	BuiltinHas                   // has(m, k) -> bool
	BuiltinKeys                  // keys(m) -> [K]
	BuiltinValues                // values(m) -> [V]
	BuiltinDelete                // delete(m, k): in place, no-op when missing
	BuiltinSliceList             // slice(xs, a, b) -> [T]
	BuiltinSliceStr              // slice(s, a, b) -> string: cutting a UTF-8 character traps
	BuiltinSliceBytes            // slice(b, a, b) -> bytes
	BuiltinSort                  // sort(xs) -> [T]: new, stable; ints, floats or strings
	BuiltinContainsStr           // contains(s, sub) -> bool
	BuiltinContainsList          // contains(xs, v) -> bool (structural equality)
	BuiltinFind                  // find(s, sub) -> int
	BuiltinSplit                 // split(s, sep) -> [string]; empty sep traps
	BuiltinJoin                  // join(xs, sep) -> string
	BuiltinTrim                  // trim(s) -> string
	BuiltinUpper                 // upper(s) -> string
	BuiltinLower                 // lower(s) -> string
	BuiltinStartsWith            // starts_with(s, p) -> bool
	BuiltinEndsWith              // ends_with(s, p) -> bool
	BuiltinReplace               // replace(s, old, new) -> string
	BuiltinAbsInt                // abs(i): MIN traps
	BuiltinAbsFloat              // abs(f)
	BuiltinMinInt                // min(a, b)
	BuiltinMinFloat              // min(a, b)
	BuiltinMaxInt                // max(a, b)
	BuiltinMaxFloat              // max(a, b)
	BuiltinAssert                // assert(c, msg): traps with msg unless c
	BuiltinPanic                 // panic(msg): traps with msg
	BuiltinJSONEncode            // std::json::encode(v) -> string
	BuiltinSqrt                  // std::math::sqrt(f)
	BuiltinFloor                 // std::math::floor(f)
	BuiltinCeil                  // std::math::ceil(f)
	BuiltinPow                   // std::math::pow(a, b)
	BuiltinLog                   // std::math::log(f)
	BuiltinExp                   // std::math::exp(f)
	BuiltinSin                   // std::math::sin(f)
	BuiltinCos                   // std::math::cos(f)
	BuiltinTan                   // std::math::tan(f)
	BuiltinAsin                  // std::math::asin(f)
	BuiltinAcos                  // std::math::acos(f)
	BuiltinAtan                  // std::math::atan(f)
	BuiltinAtan2                 // std::math::atan2(y, x)
	BuiltinHypot                 // std::math::hypot(x, y)
	BuiltinUnwrap                // unwrap(x): Some or Ok value; Err(e) traps with e's kind and message, None with panic "unwrap of None"
	BuiltinUnwrapOr              // unwrap_or(x, d): Some or Ok value, else d
	BuiltinIsSome                // is_some(o) -> bool
	BuiltinIsNone                // is_none(o) -> bool
	BuiltinIsOk                  // is_ok(r) -> bool
	BuiltinIsErr                 // is_err(r) -> bool
	BuiltinGetMap                // get(m, k, none) -> Option<V>: none is None of the result type (it carries the type)
	BuiltinGetList               // get(xs, i, none) -> Option<T>: likewise
	BuiltinJSONParse             // std::json::parse(s, err) -> Result<Json>: err is an Err of the result type (it carries the type)
	BuiltinJSONGet               // std::json::get(j, key, none) -> Option<Json>
	BuiltinJSONAt                // std::json::at(j, i, none) -> Option<Json>
	BuiltinJSONAsStr             // std::json::as_str(j, none) -> Option<string>
	BuiltinJSONAsNum             // std::json::as_num(j, none) -> Option<float>
	BuiltinJSONAsBool            // std::json::as_bool(j, none) -> Option<bool>
	BuiltinJSONAsArr             // std::json::as_arr(j, none) -> Option<[Json]>
	BuiltinJSONAsObj             // std::json::as_obj(j, none) -> Option<{string: Json}>
	BuiltinJSONDecode            // std::json::decode(s, err) -> Result<T>: err's type is the target
	BuiltinSecretJoin            // x + y where one is a secret and the other a string or a secret -> secret
	NumBuiltins
)

var builtinNames = [...]string{
	"invalid", "print", "str", "int.float", "int.string", "float.int", "float.string",
	"len.list", "len.map", "len.str", "push", "pop", "insert", "remove",
	"has", "keys", "values", "delete", "slice.list", "slice.str", "slice.bytes",
	"sort", "contains.str", "contains.list", "find", "split", "join", "trim",
	"upper", "lower", "starts_with", "ends_with", "replace",
	"abs.int", "abs.float", "min.int", "min.float", "max.int", "max.float",
	"assert", "panic", "std::json::encode",
	"std::math::sqrt", "std::math::floor", "std::math::ceil", "std::math::pow",
	"std::math::log", "std::math::exp",
	"std::math::sin", "std::math::cos", "std::math::tan", "std::math::asin",
	"std::math::acos", "std::math::atan", "std::math::atan2", "std::math::hypot",
	"unwrap", "unwrap_or", "is_some", "is_none", "is_ok", "is_err", "get.map", "get.list",
	"std::json::parse", "std::json::get", "std::json::at", "std::json::as_str", "std::json::as_num",
	"std::json::as_bool", "std::json::as_arr", "std::json::as_obj", "std::json::decode",
	"secret.join",
}

// String returns the builtin's SIR name ("len.list", "push",
// "std::math::sqrt").
func (b Builtin) String() string {
	if int(b) < len(builtinNames) {
		return builtinNames[b]
	}
	return "builtin?"
}

// String writes the endpoint as in the source, `nats("URL") subject "S"
// queue "G"`, with any password in the URL replaced by "xxxxx".
func (n *NATS) String() string {
	var b strings.Builder
	if n.URLEnv != "" {
		b.WriteString("nats(env " + strconv.Quote(n.URLEnv) + ")")
	} else {
		b.WriteString("nats(" + strconv.Quote(check.RedactURL(n.URL)) + ")")
	}
	b.WriteString(" subject " + strconv.Quote(n.Subject))
	if n.Queue != "" {
		b.WriteString(" queue " + strconv.Quote(n.Queue))
	}
	return b.String()
}
