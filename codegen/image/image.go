// Package image defines the program image: the compact, self-contained form
// of a Hale program that the interpreter (package vm) runs. The code
// generator (package codegen) builds an Image from SIR; MarshalBinary and
// Unmarshal give it a versioned binary form, so the host can hand the same
// bytes to the native interpreter and to the WebAssembly guest.
//
// An image holds, all addressed by small integer indices:
//
//   - the type table (Types), enough to build the runtime type descriptors
//     of package vm/value for every type, recursive ones included;
//   - the constant pool (Consts);
//   - the functions (Funcs): bytecode (Instr, opcodes in op.go), frame size,
//     a pc→position table whose positions index the file-name table
//     (Files), and the debug information: the statement starts (Stmts,
//     where a debugger stops) and each slot's local name, type and the pc
//     from which it holds its value (Locals);
//   - the loci, instances, topics, primitives, ingress bindings and the
//     consumer table.
//
// The indices of types, functions, topics, loci, instances, ingress
// bindings and consumers are those of the SIR program the image was
// compiled from. Below the compiler the image is the one form of the
// program: the runtime (vm/host) and replay read its topology, names,
// types and declaration positions from it, never from SIR. The code generator appends one synthetic
// function per instance (Kind FuncSpawn) after SIR's functions: it
// evaluates the instance's spawn arguments into its parameter slots.
//
// The package is pure data and encoding: it imports nothing that reads
// time, randomness, the environment, files or the network (nor fmt, which
// would pull in os), because the interpreter embeds it in the wasm guest.
// Unmarshal never panics, never allocates much more than its input, and
// validates every index (Validate), so the interpreter can trust an image
// that decoded.
package image

// Magic starts every encoded image; Version follows it as a uvarint. A
// change of the encoding or of the opcode table bumps Version.
const (
	Magic   = "hale\x00img"
	Version = 5 // 3: handlers carry a guard and a shared flag; 4: functions carry statement starts (Func.Stmts) and where each local starts (Local.Start); 5: nats bindings and exports
)

// Image is one compiled program.
type Image struct {
	// Entry is the logical path of the entry file.
	Entry string
	// Files are the logical paths that positions refer to (Pos.File
	// indexes it): the user's files in load order, then any standard
	// library file a position points into.
	Files     []string
	Types     []Type
	Consts    []Const
	Funcs     []Func
	Loci      []Locus
	Instances []Instance
	Topics    []Topic
	Ingress   []Ingress
	// Exports are the `export T to nats(…)` items, in source order.
	Exports   []Export
	Prims     []Prim
	Consumers []Consumer
	// SecretNames are the literal names given to std::os::secret anywhere
	// in the program, sorted: a recording withholds std::os::env of these
	// names under every env policy.
	SecretNames []string
}

// TypeRef indexes Image.Types. The basic types sit at the same fixed
// indices as in SIR: TVoid … TBytes.
type TypeRef int32

// The basic types, at fixed indices of every image's type table.
const (
	TVoid TypeRef = iota
	TInt
	TFloat
	TBool
	TString
	TBytes
	// NumBasic is the number of basic types at the start of the table.
	NumBasic = 6
)

// Kind classifies a type and a constant. The numbering is that of SIR's
// TypeKind and of vm/value's Kind (the canonical encoding's tag byte).
type Kind uint8

// Kinds.
const (
	KindVoid Kind = iota
	KindInt
	KindFloat
	KindBool
	KindString
	KindBytes
	KindList
	KindMap
	KindStruct
	KindEnum
	numKinds
)

var kindNames = [numKinds]string{"void", "int", "float", "bool", "string", "bytes", "list", "map", "struct", "enum"}

// String returns the kind's name ("int", "list", …).
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind?"
}

// Type is one entry of the type table. Lists and maps refer to types of
// lower index (so that unnamed types cannot form a cycle); structs and
// enums may refer to any type, themselves included.
type Type struct {
	Kind     Kind
	Elem     TypeRef   // list element; map value
	Key      TypeRef   // map key: int, string or bool
	Name     string    // struct, enum
	Fields   []Field   // struct
	Variants []Variant // enum
	Topic    bool      // struct declared with `topic`
}

// Field is a struct field.
type Field struct {
	Name string
	Type TypeRef
}

// Variant is an enum variant and the types of the values it carries.
type Variant struct {
	Name   string
	Fields []TypeRef
}

// Const is one entry of the constant pool: an int, float, bool, string or
// bytes value, or an enum variant (Type, Variant). An enum constant of a
// unit variant is that value; NewEnum uses an enum constant of any
// variant as the descriptor of the variant to build.
type Const struct {
	Kind    Kind
	Int     int64   // int; bool (0 or 1)
	Float   float64 // float (the bits are kept exactly)
	Str     string  // string, bytes
	Type    TypeRef // enum
	Variant int     // enum
}

// FuncKind says what a function was compiled from. The first five are
// SIR's function kinds.
type FuncKind uint8

// Function kinds.
const (
	FuncFn      FuncKind = iota // top-level fn
	FuncLocusFn                 // locus-private fn
	FuncHandler                 // topic handler: the payload in slot 0
	FuncStart                   // `on start`
	FuncInit                    // a locus's state initialisers
	FuncSpawn                   // an instance's spawn arguments, stored into its parameter slots
	// FuncGuard is a handler's guard: bool from the payload (register 0)
	// and copies of the locus parameters (registers 1..); it reads no
	// instance slot, so any consumer can run it for any subscriber.
	FuncGuard
	numFuncKinds
)

var funcKindNames = [numFuncKinds]string{"fn", "locus fn", "handler", "start", "init", "spawn", "guard"}

// String returns the kind's name.
func (k FuncKind) String() string {
	if k < numFuncKinds {
		return funcKindNames[k]
	}
	return "func?"
}

// Func is one function's code. Its frame is a window of FrameSize
// registers on the machine's value stack: the parameters in registers
// 0..NumParams-1, SIR's locals up to NumSlots, then the code generator's
// temporaries.
type Func struct {
	// Name is qualified: "fib", "Ledger.on OrderPlaced", "main" for a
	// spawn function.
	Name      string
	Kind      FuncKind
	Locus     int // index into Loci, -1 for a top-level fn
	Topic     int // FuncHandler: index into Topics; -1 otherwise
	NumParams int
	NumSlots  int // SIR's frame slots (parameters and locals)
	FrameSize int // NumSlots plus temporaries
	Result    TypeRef
	Locals    []Local // one per SIR slot, for disassembly and debugging
	Code      []Instr
	// Decl is the position of the function's declaration (a handler's
	// `on`), which names the handler in replay reports.
	Decl Pos
	// Pos maps pcs to source positions: entry i covers the pcs from
	// Pos[i].PC up to the next entry's PC. Entries are sorted by PC and the
	// first has PC 0 (when Code is not empty).
	Pos []PosEntry
	// Stmts are the function's statement starts, sorted by PC: the pc of
	// each statement's first instruction and the statement's position. A
	// debugger stops at these pcs (a line breakpoint, a step); a
	// statement that compiles to no instruction has none.
	Stmts []PosEntry
}

// StmtAt returns the index in Stmts of the statement starting at pc, or -1.
func (f *Func) StmtAt(pc int) int {
	lo, hi := 0, len(f.Stmts)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if int(f.Stmts[mid].PC) < pc {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(f.Stmts) && int(f.Stmts[lo].PC) == pc {
		return lo
	}
	return -1
}

// Local names a frame slot (the register of the same index).
type Local struct {
	Name string
	Type TypeRef
	// Start is the pc from which the slot holds the local's value: 0 for
	// a parameter (or a slot set by a loop), else the pc after the `let`
	// or `var` that first defines it. A debugger shows a local only from
	// there on (before, the register holds what an earlier call left).
	Start int32
}

// PosEntry is one row of a function's pc→position table.
type PosEntry struct {
	PC int32
	Pos
}

// Pos is a source position: File indexes Image.Files; Line and Col count
// from 1 (0 when unknown).
type Pos struct {
	File int32
	Line int32
	Col  int32
}

// PosAt returns the position of the instruction at pc.
func (f *Func) PosAt(pc int) Pos {
	lo, hi := 0, len(f.Pos) // find the last entry with PC <= pc
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if int(f.Pos[mid].PC) <= pc {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return Pos{}
	}
	return f.Pos[lo-1].Pos
}

// Locus is a locus type.
type Locus struct {
	Name     string
	Params   []Var // instance slots 0..len(Params)-1
	State    []Var // the following instance slots, in declaration order
	NumSlots int
	Init     int // function evaluating the state initialisers
	Start    int // `on start` handler, or -1
	Handlers []Handler
	Fns      []int // locus-private fns
	Budget   int64 // steps per handler run; 0 is no limit
}

// Var is a locus parameter or state variable.
type Var struct {
	Name string
	Type TypeRef
	Slot int
}

// Handler ties a topic to the function handling it.
type Handler struct {
	Topic int
	Func  int
	Guard int // the FuncGuard deciding, at publish time, who gets a message; -1 for none
	// Shared: the locus's instances form the topic's work group (each
	// message goes to one member, round-robin per producer).
	Shared bool
}

// HandlerFor returns the function handling topic, or -1.
func (l *Locus) HandlerFor(topic int) int {
	for _, h := range l.Handlers {
		if h.Topic == topic {
			return h.Func
		}
	}
	return -1
}

// Placement kinds, numbered as lang/ast's PlacementKind.
const (
	PlaceMain uint8 = iota
	PlacePinned
	PlaceAsyncIO
	PlacePool
)

// Instance is one spawned instance.
type Instance struct {
	Name      string
	Locus     int
	Spawn     int   // the FuncSpawn function storing the spawn arguments
	Placement uint8 // PlaceMain …
	Pool      string
	Consumer  int
}

// Topic is a declared topic.
type Topic struct {
	Name        string
	Type        TypeRef // payload struct
	Subscribers []int   // instances, in main order
}

// Ingress is a `bind stdin to T` or, with NATS set, a `bind nats(…)
// subject "S" [queue "G"] to T`.
type Ingress struct {
	Topic    int
	Consumer int
	NATS     *NATS // nil: stdin
}

// Export is an `export T to nats(…) subject "S"`: every message of the
// topic published in the process is also sent to the subject.
type Export struct {
	Topic int
	NATS  NATS
}

// NATS is where a binding or an export meets NATS: the runtime reads the
// URL from URL, or from the environment variable URLEnv when it is set.
type NATS struct {
	URL     string
	URLEnv  string
	Subject string
	Queue   string // "" for none
}

// Prim is a host primitive the program calls.
type Prim struct {
	Name   string
	ID     uint16 // the standard library's primitive id, sent to the host
	Params []TypeRef
	Result TypeRef
}

// Consumer kinds, numbered as SIR's ConsumerKind.
const (
	ConsumerMain uint8 = iota
	ConsumerPool
	ConsumerPinned
	ConsumerAsyncIO
	ConsumerIngress
)

// Consumer is one entry of the consumer table (copied from SIR).
type Consumer struct {
	Kind      uint8
	Name      string
	Instances []int
}
