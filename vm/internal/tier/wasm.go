package tier

// The few pieces of the WebAssembly binary format the compiler writes.

const (
	typeI32 = 0x7F
	typeI64 = 0x7E
)

// Opcodes.
const (
	opBlock   = 0x02
	opLoop    = 0x03
	opIf      = 0x04
	opElse    = 0x05
	opEnd     = 0x0B
	opBr      = 0x0C
	opBrIf    = 0x0D
	opBrTable = 0x0E
	opReturn  = 0x0F
	opCall    = 0x10
	opSelect  = 0x1B
	opDrop    = 0x1A

	opLocalGet  = 0x20
	opLocalSet  = 0x21
	opLocalTee  = 0x22
	opGlobalGet = 0x23
	opGlobalSet = 0x24

	opI32Load   = 0x28
	opI64Load   = 0x29
	opI32Load8U = 0x2D
	opI32Store  = 0x36
	opI64Store  = 0x37
	opI32Add    = 0x6A
	opI32Mul    = 0x6C
	opI32Ne     = 0x47
	opI64GeU    = 0x5A
	opI64LtU    = 0x54

	opI32Const = 0x41
	opI64Const = 0x42

	opI32Eqz = 0x45
	opI32Or  = 0x72
	opI64Eqz = 0x50
	opI64Eq  = 0x51
	opI64Ne  = 0x52
	opI64LtS = 0x53
	opI64GtS = 0x55
	opI64GtU = 0x56
	opI64LeS = 0x57
	opI64GeS = 0x59
	opI64LeU = 0x58
	opF64Eq  = 0x61
	opF64Ne  = 0x62
	opF64Lt  = 0x63
	opF64Le  = 0x65

	opI64Add  = 0x7C
	opI64Sub  = 0x7D
	opI64Mul  = 0x7E
	opI64DivS = 0x7F
	opI64RemS = 0x81
	opI64And  = 0x83
	opI64Or   = 0x84
	opI64Xor  = 0x85
	opI64Shl  = 0x86
	opI64ShrS = 0x87

	opF64Abs   = 0x99
	opF64Neg   = 0x9A
	opF64Ceil  = 0x9B
	opF64Floor = 0x9C
	opF64Sqrt  = 0x9F
	opF64Add   = 0xA0
	opF64Sub   = 0xA1
	opF64Mul   = 0xA2
	opF64Div   = 0xA3

	opI32WrapI64        = 0xA7
	opI64ExtendI32U     = 0xAD
	opF64ConvertI64S    = 0xB9
	opI64ReinterpretF64 = 0xBD
	opF64ReinterpretI64 = 0xBF
)

// buffer accumulates encoded bytes.
type buffer struct {
	b []byte
	// off is the local of register 0: 0 in a function (its registers
	// are its first locals), 2 in a region (after its two parameters).
	off uint32
	// dirtyBase is the local of a region's first dirty flag.
	dirtyBase uint32
	// outAt (i32), outN and outKey (i64) are the locals regionOut
	// uses: free between instructions.
	outAt, outN, outKey uint32
	// hnd writes the parts of a handler compiled whole (handler.go).
	hnd *handlerGen
	// rb is the batch state of a region that publishes (region.go).
	rb *regionBatch
	// funcMath is the function index of the guest's math (GuestMath).
	funcMath uint32
	// fastL is the first of a region's four locals of regionFast.
	fastL uint32
	// allocs are the plan's allocating functions (Plan.Allocs).
	allocs []bool
}

// reg returns the local of register r.
func (w *buffer) reg(r int32) uint32 { return uint32(r) + w.off }

func (w *buffer) reset()           { w.b = w.b[:0] }
func (w *buffer) byte(c byte)      { w.b = append(w.b, c) }
func (w *buffer) op(c byte)        { w.b = append(w.b, c) }
func (w *buffer) bytes(p []byte)   { w.b = append(w.b, p...) }
func (w *buffer) name(s string)    { w.u32(uint32(len(s))); w.b = append(w.b, s...) }
func (w *buffer) i32Const(v int32) { w.op(opI32Const); w.s64(int64(v)) }
func (w *buffer) i64Const(v int64) { w.op(opI64Const); w.s64(v) }

// u32 writes an unsigned LEB128.
func (w *buffer) u32(v uint32) {
	for v >= 0x80 {
		w.b = append(w.b, byte(v)|0x80)
		v >>= 7
	}
	w.b = append(w.b, byte(v))
}

// s64 writes a signed LEB128.
func (w *buffer) s64(v int64) {
	for {
		c := byte(v & 0x7F)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			w.b = append(w.b, c)
			return
		}
		w.b = append(w.b, c|0x80)
	}
}

// section appends section id with the contents of s.
func (w *buffer) section(id byte, s *buffer) {
	w.byte(id)
	w.u32(uint32(len(s.b)))
	w.bytes(s.b)
}

// globalAdd writes global g += d.
func (w *buffer) globalAdd(g uint32, d int64) {
	w.op(opGlobalGet)
	w.u32(g)
	w.i64Const(d)
	w.op(opI64Add)
	w.op(opGlobalSet)
	w.u32(g)
}

// mem writes a load or store with a byte offset (alignment hint 0).
func (w *buffer) mem(op byte, offset uint32) {
	w.op(op)
	w.u32(0)
	w.u32(offset)
}

// stopIf consumes an i32 condition and stops the call when it holds.
func (w *buffer) stopIf() {
	w.op(opIf)
	w.byte(0x40)
	w.stop()
	w.op(opEnd)
}

// stop hands the call back to the interpreter: it sets the stop global
// and returns from the function (every caller then returns too).
func (w *buffer) stop() {
	w.i64Const(1)
	w.op(opGlobalSet)
	w.u32(globalStop)
	w.i64Const(0)
	w.op(opReturn)
}

// returnIfStopped returns at once, after a call, when the callee (or one
// of its own) stopped the call (see stop).
func (w *buffer) returnIfStopped() {
	w.op(opGlobalGet)
	w.u32(globalStop)
	w.op(opI32WrapI64)
	w.op(opIf)
	w.byte(0x40)
	w.i64Const(0)
	w.op(opReturn)
	w.op(opEnd)
}

// charge takes cost steps from the fuel, asking the host (refill, function
// 0) for more when it runs below zero, and stops the call when the host
// refuses.
func (w *buffer) charge(cost int64) {
	w.op(opGlobalGet)
	w.u32(globalFuel)
	w.i64Const(cost)
	w.op(opI64Sub)
	w.op(opGlobalSet)
	w.u32(globalFuel)
	w.fuelBelowZero()
	w.op(opIf)
	w.byte(0x40)
	w.op(opGlobalGet)
	w.u32(globalFuel)
	w.op(opCall)
	w.u32(0)
	w.op(opGlobalSet)
	w.u32(globalFuel)
	w.fuelBelowZero()
	w.stopIf()
	w.op(opEnd)
}

// fuelBelowZero pushes fuel < 0.
func (w *buffer) fuelBelowZero() {
	w.op(opGlobalGet)
	w.u32(globalFuel)
	w.i64Const(0)
	w.op(opI64LtS)
}
