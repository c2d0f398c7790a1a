package ast

// SymbolKind classifies what a name refers to.
type SymbolKind uint8

// Symbol kinds. The checker resolves every Ident and PathExpr to one.
const (
	SymLocal      SymbolKind = iota + 1 // let/var, fn/handler parameter, for and match bindings: Slot is the frame slot
	SymState                            // locus state var: Slot is the instance slot
	SymLocusParam                       // locus parameter (read-only): Slot is the instance slot
	SymConst                            // top-level const: Const
	SymFn                               // top-level fn written in Hale (user code or stdlib helpers): Fn
	SymLocusFn                          // locus-private fn: Fn, Locus
	SymPrim                             // std primitive implemented by the runtime: Fn (the @primitive declaration)
	SymBuiltin                          // builtin fn (len, str, push, int, ...): Builtin
	SymStruct                           // struct type: Type
	SymEnum                             // enum type: Type
	SymVariant                          // enum variant: Type (the enum), Index
	SymTopic                            // topic: Type (its payload struct)
	SymLocus                            // locus type: Locus
)

var symbolKindNames = [...]string{
	SymLocal: "local", SymState: "state", SymLocusParam: "locus parameter",
	SymConst: "const", SymFn: "fn", SymLocusFn: "locus fn", SymPrim: "primitive",
	SymBuiltin: "builtin", SymStruct: "type", SymEnum: "enum", SymVariant: "variant",
	SymTopic: "topic", SymLocus: "locus",
}

func (k SymbolKind) String() string {
	if int(k) < len(symbolKindNames) && symbolKindNames[k] != "" {
		return symbolKindNames[k]
	}
	return "?"
}

// Symbol is a named entity. One Symbol exists per declaration; every use
// of the name points at it.
type Symbol struct {
	Kind    SymbolKind
	Name    string // as declared; qualified for std (std::time::now_ms) and locus members (Ledger.report)
	Pos     Pos    // declaration
	Type    *Type  // value type (locals, state, params, consts); Func type for fns and prims; the declared type for types, topics, variants
	Slot    int    // SymLocal: frame slot; SymState, SymLocusParam: instance slot
	Mutable bool   // SymLocal declared with var, SymState

	Fn      *FnDecl    // SymFn, SymLocusFn, SymPrim
	Const   *ConstDecl // SymConst
	Locus   *LocusDecl // SymLocus; SymLocusFn, SymState, SymLocusParam: the owning locus
	Index   int        // SymVariant: variant index
	Builtin string     // SymBuiltin: its name ("len", "push", "int", "std::json::encode", ...)
}
