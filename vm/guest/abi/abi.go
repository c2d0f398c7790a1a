// Package abi is the binary interface between the interpreter guest
// (vm/guest, compiled to wasip1/wasm) and its host (vm/host): the names of
// the guest's exports and of its one import, the status words they
// exchange, and the encoding of a failed call. Both sides import it, so the
// protocol is written down once.
//
// # Host to guest (exports)
//
// Every export but alloc and result returns an int32 r:
//
//	r == 0   success, nothing to read
//	r  > 0   success; r bytes of output (an instance's state) start at result()
//	r  < 0   failure; -r bytes of an encoded failure (AppendFailure) start at result()
//
//	alloc(size u32) -> u32          address of the guest's input buffer, grown to hold size bytes
//	load(n u32, flags u32, limit i64) -> i32
//	                                the input buffer's first n bytes are an encoded program image;
//	                                flags LoadTier: call the tier's entry functions through the host;
//	                                limit: the machine's memory limit in bytes (vm.Machine.SetMemoryLimit)
//	init(inst u32) -> i32           evaluate instance inst's spawn arguments and state initialisers
//	deliver(inst u32, handler i32, n u32) -> i32
//	                                run inst's handler (vm.HandlerStart or a topic index) on the
//	                                payload in the input buffer's first n bytes
//	state(inst u32) -> i32          inst's state as canonical bytes (output)
//	breaks(n u32) -> i32            arm the debugger's breaks of the encoded vm.BreakSpec in the
//	                                input buffer's first n bytes (none: disarm)
//	result() -> u32                 address of the last call's output or failure bytes
//	machine(limit i64) -> i32       one more machine for the loaded image (same flags), with
//	                                that memory limit; r >= 0 is its number (load's is 0)
//	select(m u32) -> i32            the calls that follow (init, deliver, state, params,
//	                                setparams, guards) address machine m
//	batch() -> u32                  buffer publishes from now on (see Publish batches below) and
//	                                return the address of the batch box
//	delivermany(n u32) -> i32       after batch: run the deliveries listed in the input buffer's
//	                                first n bytes (AppendDelivery) in order, as deliver would, up
//	                                to the first that fails (its failure is the result, and the box's
//	                                third word the number run before it) or the first whose handler
//	                                crossed hale.prim other than for a batched publish; r >= 0 is
//	                                the number run
//
// One guest may host several machines (consumers) that share its Go
// runtime and decoded image: each machine keeps its own instances, memory
// account, registers and guard parameters. load discards every machine
// and selects the new machine 0.
//
// The input buffer stays where it is until the next alloc, so the host
// keeps its address and capacity and calls alloc only to grow it.
//
// # Guest to host (the one import)
//
//	hale.prim(id u32, args u32, argsLen u32, res u32, resCap u32) -> u64
//
// carries every vm.Host.Prim call: the primitive id (or vm.PrimPublish,
// vm.PrimPrint), the canonical argument bytes, and a result buffer of
// resCap bytes. The status word (Status) holds a kind (OK, Trap,
// Uncatchable: a trap message of a host error wrapped by vm.Uncatchable,
// or Interrupted: the run was interrupted, the handler ends without a
// trap) and a length n. When n <= resCap the n bytes (the canonical result, or the
// trap's message) are in the result buffer. When n > resCap nothing was
// written: the host keeps the bytes as the pending result and the guest
// calls prim(FetchID, 0, 0, buf, n) with a buffer of at least n bytes,
// which copies them and returns the same status. The primitive itself is
// never called twice, which matters for every call with an effect.
//
// With the id TierID, prim carries a call of a function of the
// interpreter's second tier (vm.EnableTier, package vm/internal/tier),
// which the host runs as compiled WebAssembly. It is not a primitive: it
// has no effect, is never journaled, and its answer (vm.TierDone or
// vm.TierFallback) depends only on the program and its arguments, except
// that the host may poll during it and answer with a Trap-kind status
// when the run is interrupted.
//
// # Publish batches
//
// After the host calls batch, the guest no longer crosses hale.prim for
// each publish (vm.PrimPublish; a timer, vm.PrimPublishAfter, still
// crosses at once). It appends the publish's arguments to a batch, each
// as a record: its length as 4 bytes little-endian, then the bytes
// PrimPublish would have carried (AppendBatchRecord, SplitBatch). The
// batch reaches the host, in order, before anything else the host would
// see after those publishes:
//
//   - before any other crossing of hale.prim (a primitive, a print, a
//     poll, a debugger's break, a tier call), the guest sends the batch
//     with the id BatchID (the args are the batch; the answer is OK, or
//     the error of the first publish that failed, which the guest then
//     returns from the call it was about to make, so that an interrupted
//     run ends the handler there);
//   - when the batch passes BatchFlush bytes, the same way, from the
//     publish that filled it;
//   - otherwise it is left in the guest when the export (init or
//     deliver) returns, successfully or not: the batch box, two uint32
//     little-endian words at the address batch returned, always holds the
//     batch's address and length, and the host reads and publishes the
//     batch after the export returns, before it looks at the result. The
//     next init or deliver empties it.
//
// So the host and its journal see every publish, primitive call and
// trap in exactly the order of the handler's run, as without a batch.
//
// With the id vm.PrimBreak, prim carries a debugger's break (package vm,
// debug.go): the args are an encoded vm.BreakInfo, and the host blocks
// until the user resumes, then answers with the breaks to arm next (an
// encoded vm.BreakSpec) or nothing.
package abi

import (
	"encoding/binary"
	"errors"

	"github.com/hale-lang/hale/vm"
)

// Names of the import and the exports.
const (
	ImportModule = "hale"
	ImportPrim   = "prim"

	ExportAlloc   = "alloc"
	ExportLoad    = "load"
	ExportInit    = "init"
	ExportDeliver = "deliver"
	ExportState   = "state"
	ExportResult  = "result"
	// Guards (vm/guard.go): an instance's parameter tuple, the table of
	// every instance's (EncodeParamTable), the guard bits of a payload.
	ExportParams    = "params"
	ExportSetParams = "setparams"
	ExportGuards    = "guards"
	// ExportBreaks arms a debugger's breaks (vm.Machine.SetBreaks): the
	// input buffer's first n bytes are an encoded vm.BreakSpec.
	ExportBreaks = "breaks"
	// Several machines in one guest (see the package comment).
	ExportMachine = "machine"
	ExportSelect  = "select"
	// ExportBatch turns on publish batches (see the package comment).
	ExportBatch = "batch"
	// ExportDeliverMany runs several deliveries in one call.
	ExportDeliverMany = "delivermany"
	// ExportFastInfo answers what a handler the second tier compiled
	// whole, run by the host, needs of an instance (vm.Machine.FastAddrs).
	ExportFastInfo = "fastinfo"
)

// EncodeParamTable encodes the parameter table Machine.SetGuardParams
// takes: uvarint(count), then per instance uvarint(0) for nil or
// uvarint(len+1) and the bytes.
func EncodeParamTable(table [][]byte) []byte {
	b := binary.AppendUvarint(nil, uint64(len(table)))
	for _, t := range table {
		if t == nil {
			b = append(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(t))+1)
		b = append(b, t...)
	}
	return b
}

// DecodeParamTable decodes EncodeParamTable's bytes.
func DecodeParamTable(b []byte) ([][]byte, error) {
	bad := errors.New("guest: bad parameter table")
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, bad
	}
	b = b[k:]
	table := make([][]byte, n)
	for i := range table {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k)+1 {
			return nil, bad
		}
		b = b[k:]
		if l == 0 {
			continue
		}
		table[i] = append([]byte{}, b[:l-1]...)
		b = b[l-1:]
	}
	if len(b) != 0 {
		return nil, bad
	}
	return table, nil
}

// FetchID is the prim id that copies the host's pending result. It is
// outside the 16-bit range of primitive ids.
const FetchID uint32 = 0xFFFF_FFFF

// TierID is the prim id of a call of the second tier (see the package
// comment). It is outside the 16-bit range of primitive ids.
const TierID uint32 = 0xFFFF_FFFE

// BatchID is the prim id that hands the host a batch of publishes (see
// the package comment). It is outside the 16-bit range of primitive ids.
const BatchID uint32 = 0xFFFF_FFFD

// BatchFlush is the size in bytes past which the guest hands its batch
// of publishes over at once rather than at the export's end.
const BatchFlush = 16 << 10

// AppendBatchRecord appends one publish's arguments to a batch.
func AppendBatchRecord(batch, args []byte) []byte {
	n := len(args)
	batch = append(batch, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	return append(batch, args...)
}

// SplitBatch returns the first record of a batch and the rest; ok is
// false when the batch is empty or malformed (a length past its end).
// Each record is capped at its own end, so appending to it cannot
// overwrite the next.
func SplitBatch(batch []byte) (rec, rest []byte, ok bool) {
	if len(batch) < 4 {
		return nil, nil, false
	}
	n := uint64(batch[0]) | uint64(batch[1])<<8 | uint64(batch[2])<<16 | uint64(batch[3])<<24
	if n > uint64(len(batch)-4) {
		return nil, nil, false
	}
	end := 4 + int(n)
	return batch[4:end:end], batch[end:], true
}

// AppendDelivery appends one delivery to a list for delivermany: the
// instance and the handler as 4 bytes little-endian each, the payload's
// length as 4 bytes, then the payload.
func AppendDelivery(list []byte, inst, handler int, payload []byte) []byte {
	h, n := uint32(int32(handler)), len(payload)
	list = append(list, byte(inst), byte(inst>>8), byte(inst>>16), byte(inst>>24),
		byte(h), byte(h>>8), byte(h>>16), byte(h>>24),
		byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	return append(list, payload...)
}

// SplitDelivery returns the first delivery of a list and the rest; ok
// is false when the list is empty or malformed.
func SplitDelivery(list []byte) (inst uint32, handler int32, payload, rest []byte, ok bool) {
	if len(list) < 12 {
		return 0, 0, nil, nil, false
	}
	le := func(b []byte) uint32 { return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24 }
	n := uint64(le(list[8:]))
	if n > uint64(len(list)-12) {
		return 0, 0, nil, nil, false
	}
	end := 12 + int(n)
	return le(list), int32(le(list[4:])), list[12:end:end], list[end:], true
}

// LoadTier is the load flag that turns the second tier on.
const LoadTier uint32 = 1

// Kinds of a prim status word.
const (
	OK   uint32 = 0 // the bytes are the canonical result
	Trap uint32 = 1 // the bytes are a trap: see AppendTrapMessage
	Bad  uint32 = 2 // protocol violation (bad address, fetch with nothing pending); bytes are a message
	// Uncatchable: the bytes are the message of a trap no `try` may catch
	// (a host error wrapped by vm.Uncatchable).
	Uncatchable uint32 = 3
	// Interrupted: the run was interrupted (vm.ErrInterrupted); the call
	// did not run and the handler ends without a trap. Bytes are a message.
	Interrupted uint32 = 4
)

// Status packs a prim status word: the kind in the high 32 bits, the
// length in the low 32.
func Status(kind uint32, n int) uint64 { return uint64(kind)<<32 | uint64(uint32(n)) }

// SplitStatus unpacks a status word.
func SplitStatus(s uint64) (kind, n uint32) { return uint32(s >> 32), uint32(s) }

// First byte of an encoded failure.
const (
	failTrap            = 1 // a *vm.Trap: message, then the frames
	failError           = 2 // any other error (bad image, bad index, guest panic): message
	failUncatchableTrap = 3 // a *vm.Trap with Uncatchable set, encoded as failTrap
)

// AppendFailure appends the encoding of err: a *vm.Trap keeps its message
// and stack; any other error keeps its message and becomes a plain error
// on the other side.
//
//	trap   0x01 str(message) uvarint(frames) frames × (str(func) str(pos)) str(kind)
//	error  0x02 str(message)
//	trap   0x03 as 0x01, for a trap with Uncatchable set
//	str(s) uvarint(len(s)) bytes of s
func AppendFailure(buf []byte, err error) []byte {
	var t *vm.Trap
	if errors.As(err, &t) {
		tag := byte(failTrap)
		if t.Uncatchable {
			tag = failUncatchableTrap
		}
		buf = append(buf, tag)
		buf = appendStr(buf, t.Message)
		buf = binary.AppendUvarint(buf, uint64(len(t.Stack)))
		for _, f := range t.Stack {
			buf = appendStr(appendStr(buf, f.Func), f.Pos)
		}
		return appendStr(buf, t.Kind)
	}
	return appendStr(append(buf, failError), err.Error())
}

func appendStr(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}

// ErrMalformed is returned by DecodeFailure for bytes AppendFailure did not
// produce.
var ErrMalformed = errors.New("abi: malformed failure")

// DecodeFailure decodes the bytes of AppendFailure: a *vm.Trap, or an
// error with the encoded message. It accepts only what AppendFailure
// writes (minimal varints, no trailing bytes) and never panics.
func DecodeFailure(data []byte) error {
	if len(data) == 0 {
		return ErrMalformed
	}
	d := reader{data: data[1:]}
	msg := d.str()
	switch data[0] {
	case failError:
		if d.bad || len(d.data) != 0 {
			return ErrMalformed
		}
		return errors.New(msg)
	case failTrap, failUncatchableTrap:
		n := d.uvarint()
		if n > uint64(len(d.data)/2) { // every frame takes at least two bytes
			return ErrMalformed
		}
		t := &vm.Trap{Message: msg, Uncatchable: data[0] == failUncatchableTrap}
		if n > 0 {
			t.Stack = make([]vm.Frame, n)
		}
		for i := range t.Stack {
			t.Stack[i].Func = d.str()
			t.Stack[i].Pos = d.str()
		}
		t.Kind = d.str()
		if d.bad || len(d.data) != 0 {
			return ErrMalformed
		}
		return t
	}
	return ErrMalformed
}

type reader struct {
	data []byte
	bad  bool
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.data)
	if n <= 0 || n != uvarintLen(v) { // malformed, or not the minimal encoding
		r.bad = true
		r.data = nil
		return 0
	}
	r.data = r.data[n:]
	return v
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

func (r *reader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.data)) {
		r.bad = true
		r.data = nil
		return ""
	}
	s := string(r.data[:n])
	r.data = r.data[n:]
	return s
}

// AppendTrapMessage appends the bytes of a Trap status: the error a host
// primitive failed with, with its trap kind when it has one (see
// vm.TrapError; "" otherwise).
//
//	uvarint(len(kind)) kind message
func AppendTrapMessage(buf []byte, err error) []byte {
	kind := ""
	var k interface{ TrapKind() string }
	if errors.As(err, &k) {
		kind = k.TrapKind()
	}
	return append(appendStr(buf, kind), err.Error()...)
}

// DecodeTrapMessage decodes the bytes of AppendTrapMessage: a
// *vm.TrapError when there is a kind, a plain error otherwise.
func DecodeTrapMessage(data []byte) error {
	d := reader{data: data}
	kind := d.str()
	if d.bad {
		return errors.New(string(data))
	}
	if kind == "" {
		return errors.New(string(d.data))
	}
	return &vm.TrapError{Kind: kind, Message: string(d.data)}
}
