package image

// Instr is one bytecode instruction: an opcode and up to three operands.
// What each operand means (a register, an immediate, a constant, a jump
// target, …) is fixed per opcode by OpInfo. Registers index the current
// frame (R[i]); S[i] is instance slot i of the running instance; K[i] is
// constant i; pc targets index the function's Code.
type Instr struct {
	Op      Op
	A, B, C int32
}

// Op is an opcode. The numbering is part of the image encoding: append,
// never renumber, and bump Version when the meaning of one changes.
type Op uint8

// Opcodes, each with its effect. Arithmetic on ints traps on overflow;
// comparisons produce bools; "jump" sets pc. The register operands of an
// operation are all read before its result is written, so a destination
// may be one of its sources.
const (
	OpNop Op = iota // no effect

	OpMove       // R[A] = R[B]
	OpLoadK      // R[A] = K[B]
	OpLoadInt    // R[A] = int(B)
	OpLoadState  // R[A] = S[B]
	OpStoreState // S[A] = R[B]

	OpAddInt  // R[A] = R[B] + R[C]
	OpSubInt  // R[A] = R[B] - R[C]
	OpMulInt  // R[A] = R[B] * R[C]
	OpDivInt  // R[A] = R[B] / R[C] (truncated; zero divisor traps)
	OpRemInt  // R[A] = R[B] % R[C] (sign of the dividend; zero divisor traps)
	OpAddIntK // R[A] = R[B] + C
	OpNegInt  // R[A] = -R[B]

	OpAddFloat // R[A] = R[B] + R[C]
	OpSubFloat // R[A] = R[B] - R[C]
	OpMulFloat // R[A] = R[B] * R[C]
	OpDivFloat // R[A] = R[B] / R[C]
	OpRemFloat // R[A] = math.Mod(R[B], R[C])
	OpNegFloat // R[A] = -R[B]
	OpNot      // R[A] = !R[B]

	OpConcatStr   // R[A] = R[B] + R[C] (strings)
	OpConcatBytes // R[A] = R[B] + R[C] (bytes)
	OpConcatList  // R[A] = new list of R[B]'s then R[C]'s elements

	OpEq      // R[A] = R[B] == R[C] (structural, any type)
	OpNe      // R[A] = R[B] != R[C] (structural, any type)
	OpEqInt   // R[A] = R[B] == R[C] (int or bool)
	OpNeInt   // R[A] = R[B] != R[C] (int or bool)
	OpEqFloat // R[A] = R[B] == R[C] (IEEE)
	OpNeFloat // R[A] = R[B] != R[C] (IEEE)
	OpEqStr   // R[A] = R[B] == R[C] (string or bytes)
	OpNeStr   // R[A] = R[B] != R[C] (string or bytes)
	OpLtInt   // R[A] = R[B] < R[C]
	OpLeInt   // R[A] = R[B] <= R[C]
	OpLtFloat // R[A] = R[B] < R[C]
	OpLeFloat // R[A] = R[B] <= R[C]
	OpLtStr   // R[A] = R[B] < R[C] (by bytes)
	OpLeStr   // R[A] = R[B] <= R[C] (by bytes)

	OpJump       // jump C
	OpJumpT      // if R[A] { jump C }
	OpJumpF      // if !R[A] { jump C }
	OpJLtInt     // if R[A] < R[B] { jump C }
	OpJLeInt     // if R[A] <= R[B] { jump C }
	OpJEqInt     // if R[A] == R[B] { jump C } (int or bool)
	OpJNeInt     // if R[A] != R[B] { jump C } (int or bool)
	OpJLtIntK    // if R[A] < B { jump C }
	OpJLeIntK    // if R[A] <= B { jump C }
	OpJGtIntK    // if R[A] > B { jump C }
	OpJGeIntK    // if R[A] >= B { jump C }
	OpJEqIntK    // if R[A] == B { jump C }
	OpJNeIntK    // if R[A] != B { jump C }
	OpJNeStrK    // if R[A] != K[B] { jump C } (strings)
	OpJNeVariant // if variant(R[A]) != B { jump C }
	OpEnumField  // R[A] = value C of the enum variant in R[B]
	OpLoopRange  // R[A] += 1; if R[A] < R[B] { jump C } (R[A] < R[B] held before, so no overflow)

	OpCall     // call Funcs[B] with a frame starting at R[A] (the arguments are R[A]…); its result goes to R[A]
	OpCallB    // R[A] = builtin B(R[C], R[C+1], …)
	OpCallPrim // R[A] = Prims[B](R[C], R[C+1], …) through the host
	OpRet      // return R[A]
	OpRetVoid  // return

	OpNewList   // R[A] = [R[B], …, R[B+C-1]]
	OpNewMap    // R[A] = {R[B]: R[B+1], …}: C pairs, C > 0, inserted in order
	OpEmptyMap  // R[A] = {} with keys of kind B (int, string or bool)
	OpNewStruct // R[A] = struct of type C with fields R[B]… in declaration order
	OpNewEnum   // R[A] = the variant of constant K[C] carrying R[B]…

	OpIndexList    // R[A] = R[B][R[C]] (list)
	OpIndexMap     // R[A] = R[B][R[C]] (map; a missing key traps)
	OpIndexStr     // R[A] = R[B][R[C]] (string or bytes: the byte as an int)
	OpSetIndexList // R[A][R[B]] = R[C] (list)
	OpSetIndexMap  // R[A][R[B]] = R[C] (map)
	OpField        // R[A] = R[B].field C
	OpSetField     // R[A].field B = R[C]
	OpLenList      // R[A] = len(R[B]) (list)
	OpLenMap       // R[A] = len(R[B]) (map)
	OpLenStr       // R[A] = len(R[B]) (string or bytes)
	OpPush         // push(R[A], R[B])

	OpIterList  // begin a for loop over the list R[A]; R[A+1] = 0 (the index)
	OpForList   // if R[B+1] < len(R[B]) { R[A] = R[B][R[B+1]]; R[B+1] += 1; jump C }
	OpIterMap   // begin a for loop over the map R[A]; R[A+1] = 0 (the position)
	OpForMap    // if R[B+1] < len(R[B]) { R[A] = key R[B+1] of R[B]; R[B+1] += 1; jump C }
	OpForMapVal // R[A] = the value at position R[B+1]-1 of the map R[B]
	OpIterEnd   // end the for loop over R[A] (a list or a map)

	OpPublish // publish a Topics[A] payload with fields R[B]… through the host

	OpAndInt // R[A] = R[B] & R[C]
	OpOrInt  // R[A] = R[B] | R[C]
	OpXorInt // R[A] = R[B] ^ R[C]
	OpShlInt // R[A] = R[B] << R[C] (bits shifted out are dropped; a count outside 0..63 traps)
	OpShrInt // R[A] = R[B] >> R[C] (arithmetic; a count outside 0..63 traps)
	OpNotInt // R[A] = ^R[B] (bitwise complement)

	OpFormat // R[A] = the text of R[B], R[B+1], …, one per spec of the format layout K[C] (FormatLayout)
	// try E: OpTry begins it; a trap try catches (vm.Catchable) raised
	// before the matching OpTryEnd or OpTryDrop, in this frame or any it
	// calls, unwinds to this frame, ends the for loops begun since, sets
	// R[A] to the variant of constant K[B] (Err of a Result, or Some of an
	// Option<Error>) carrying Error { kind, message }, and jumps to C.
	OpTry     // begin a try (see above)
	OpTryEnd  // end the innermost try: R[A] = the variant of K[B] carrying R[A] (Ok), or K[B] itself when it carries nothing (None)
	OpTryDrop // end the A innermost tries (a ? returning from inside them)

	OpPublishAfter // publish a Topics[A] payload with fields R[B]… after R[C] milliseconds (a timer; 0: at once, negative traps)

	numOps
)

// Operand says what an instruction operand holds.
type Operand uint8

// Operand kinds.
const (
	None    Operand = iota // unused (zero)
	Reg                    // a register of the frame
	Imm                    // a signed immediate
	KIdx                   // a constant pool index
	TypeIdx                // a type table index
	FuncIdx                // a function index
	PrimIdx                // a primitive table index
	TopicIx                // a topic index
	BuiltIx                // a builtin
	Slot                   // an instance slot of the function's locus
	Target                 // a pc of the same function
	Count                  // a count (>= 0)
	KeyKind                // a map key kind: int, string or bool
)

// Info describes an opcode: its mnemonic and its operands.
type Info struct {
	Name    string
	A, B, C Operand
}

var infos = [numOps]Info{
	OpNop:        {"nop", None, None, None},
	OpMove:       {"move", Reg, Reg, None},
	OpLoadK:      {"loadk", Reg, KIdx, None},
	OpLoadInt:    {"loadint", Reg, Imm, None},
	OpLoadState:  {"loadstate", Reg, Slot, None},
	OpStoreState: {"storestate", Slot, Reg, None},

	OpAddInt:  {"add.int", Reg, Reg, Reg},
	OpSubInt:  {"sub.int", Reg, Reg, Reg},
	OpMulInt:  {"mul.int", Reg, Reg, Reg},
	OpDivInt:  {"div.int", Reg, Reg, Reg},
	OpRemInt:  {"rem.int", Reg, Reg, Reg},
	OpAddIntK: {"add.int.k", Reg, Reg, Imm},
	OpNegInt:  {"neg.int", Reg, Reg, None},

	OpAddFloat: {"add.float", Reg, Reg, Reg},
	OpSubFloat: {"sub.float", Reg, Reg, Reg},
	OpMulFloat: {"mul.float", Reg, Reg, Reg},
	OpDivFloat: {"div.float", Reg, Reg, Reg},
	OpRemFloat: {"rem.float", Reg, Reg, Reg},
	OpNegFloat: {"neg.float", Reg, Reg, None},
	OpNot:      {"not", Reg, Reg, None},

	OpConcatStr:   {"concat.str", Reg, Reg, Reg},
	OpConcatBytes: {"concat.bytes", Reg, Reg, Reg},
	OpConcatList:  {"concat.list", Reg, Reg, Reg},

	OpEq:      {"eq", Reg, Reg, Reg},
	OpNe:      {"ne", Reg, Reg, Reg},
	OpEqInt:   {"eq.int", Reg, Reg, Reg},
	OpNeInt:   {"ne.int", Reg, Reg, Reg},
	OpEqFloat: {"eq.float", Reg, Reg, Reg},
	OpNeFloat: {"ne.float", Reg, Reg, Reg},
	OpEqStr:   {"eq.str", Reg, Reg, Reg},
	OpNeStr:   {"ne.str", Reg, Reg, Reg},
	OpLtInt:   {"lt.int", Reg, Reg, Reg},
	OpLeInt:   {"le.int", Reg, Reg, Reg},
	OpLtFloat: {"lt.float", Reg, Reg, Reg},
	OpLeFloat: {"le.float", Reg, Reg, Reg},
	OpLtStr:   {"lt.str", Reg, Reg, Reg},
	OpLeStr:   {"le.str", Reg, Reg, Reg},

	OpJump:       {"jump", None, None, Target},
	OpJumpT:      {"jump.t", Reg, None, Target},
	OpJumpF:      {"jump.f", Reg, None, Target},
	OpJLtInt:     {"jlt.int", Reg, Reg, Target},
	OpJLeInt:     {"jle.int", Reg, Reg, Target},
	OpJEqInt:     {"jeq.int", Reg, Reg, Target},
	OpJNeInt:     {"jne.int", Reg, Reg, Target},
	OpJLtIntK:    {"jlt.int.k", Reg, Imm, Target},
	OpJLeIntK:    {"jle.int.k", Reg, Imm, Target},
	OpJGtIntK:    {"jgt.int.k", Reg, Imm, Target},
	OpJGeIntK:    {"jge.int.k", Reg, Imm, Target},
	OpJEqIntK:    {"jeq.int.k", Reg, Imm, Target},
	OpJNeIntK:    {"jne.int.k", Reg, Imm, Target},
	OpJNeStrK:    {"jne.str.k", Reg, KIdx, Target},
	OpJNeVariant: {"jne.variant", Reg, Count, Target},
	OpEnumField:  {"enum.field", Reg, Reg, Count},
	OpLoopRange:  {"loop.range", Reg, Reg, Target},

	OpCall:     {"call", Reg, FuncIdx, None},
	OpCallB:    {"callb", Reg, BuiltIx, Reg},
	OpCallPrim: {"callprim", Reg, PrimIdx, Reg},
	OpRet:      {"ret", Reg, None, None},
	OpRetVoid:  {"ret.void", None, None, None},

	OpNewList:   {"new.list", Reg, Reg, Count},
	OpNewMap:    {"new.map", Reg, Reg, Count},
	OpEmptyMap:  {"empty.map", Reg, KeyKind, None},
	OpNewStruct: {"new.struct", Reg, Reg, TypeIdx},
	OpNewEnum:   {"new.enum", Reg, Reg, KIdx},

	OpIndexList:    {"index.list", Reg, Reg, Reg},
	OpIndexMap:     {"index.map", Reg, Reg, Reg},
	OpIndexStr:     {"index.str", Reg, Reg, Reg},
	OpSetIndexList: {"setindex.list", Reg, Reg, Reg},
	OpSetIndexMap:  {"setindex.map", Reg, Reg, Reg},
	OpField:        {"field", Reg, Reg, Count},
	OpSetField:     {"setfield", Reg, Count, Reg},
	OpLenList:      {"len.list", Reg, Reg, None},
	OpLenMap:       {"len.map", Reg, Reg, None},
	OpLenStr:       {"len.str", Reg, Reg, None},
	OpPush:         {"push", Reg, Reg, None},

	OpIterList:  {"iter.list", Reg, None, None},
	OpForList:   {"for.list", Reg, Reg, Target},
	OpIterMap:   {"iter.map", Reg, None, None},
	OpForMap:    {"for.map", Reg, Reg, Target},
	OpForMapVal: {"for.map.val", Reg, Reg, None},
	OpIterEnd:   {"iter.end", Reg, None, None},

	OpPublish: {"publish", TopicIx, Reg, None},

	OpAndInt: {"and.int", Reg, Reg, Reg},
	OpOrInt:  {"or.int", Reg, Reg, Reg},
	OpXorInt: {"xor.int", Reg, Reg, Reg},
	OpShlInt: {"shl.int", Reg, Reg, Reg},
	OpShrInt: {"shr.int", Reg, Reg, Reg},
	OpNotInt: {"not.int", Reg, Reg, None},

	OpFormat:  {"format", Reg, Reg, KIdx},
	OpTry:     {"try", Reg, KIdx, Target},
	OpTryEnd:  {"try.end", Reg, KIdx, None},
	OpTryDrop: {"try.drop", Count, None, None},

	OpPublishAfter: {"publish.after", TopicIx, Reg, Reg},
}

// NumOps is the number of opcodes.
const NumOps = int(numOps)

// OpInfo returns the description of op; ok is false for an unknown opcode.
func OpInfo(op Op) (info Info, ok bool) {
	if op >= numOps {
		return Info{Name: "op?"}, false
	}
	return infos[op], true
}

// String returns the opcode's mnemonic ("add.int").
func (op Op) String() string {
	i, _ := OpInfo(op)
	return i.Name
}

// IsJump reports whether op may transfer control to its C operand.
func (op Op) IsJump() bool {
	return op < numOps && infos[op].C == Target
}

// Terminal reports whether control never falls through op to the next
// instruction.
func (op Op) Terminal() bool {
	return op == OpJump || op == OpRet || op == OpRetVoid
}
