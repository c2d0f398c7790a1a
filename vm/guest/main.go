//go:build wasip1

// Command guest is the Hale interpreter (package vm) built for
// GOOS=wasip1 GOARCH=wasm as a reactor module: the host (package vm/host)
// instantiates it once per consumer under wazero and drives it through the
// exports below. The guest reaches the world only through its one import,
// hale.prim, which carries every vm.Host.Prim call; the protocol is
// described in package vm/guest/abi. It is built by `go generate
// ./vm/host`, which writes vm/host/guest.wasm.
//
// The guest keeps one or more machines (each the instances one consumer
// hosts; exports address the selected one), one input buffer that the host writes images and payloads into, and the
// bytes of the last result or failure. Every export recovers from a Go
// panic and reports it as an error, so a bug in the interpreter surfaces
// as a message rather than a dead module. deliver, the export called for
// every message, leaves that to vm.Machine.Deliver, which recovers from
// a panic in the handler's run and reports it as an internal-error trap;
// what it does before the run (checking its arguments, decoding the
// payload) does not panic. Its own deferred recovery was an eighth of
// the guest's cost of an empty delivery (docs/performance.md §4.1).
package main

import (
	"errors"
	"unsafe"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/guest/abi"
)

// main is never called: a reactor runs its package initialisers in
// _initialize and then serves exports.
func main() {}

var (
	machine  *vm.Machine   // the selected machine
	machines []*vm.Machine // every machine, by number
	in       []byte        // the input buffer: images and payloads
	out      []byte        // output or failure bytes of the last export call
	gate     gateway
)

//go:wasmimport hale prim
func prim(id uint32, args unsafe.Pointer, argsLen uint32, res unsafe.Pointer, resCap uint32) uint64

// writeBarrier is the Go runtime's write barrier flag (runtime/mgc.go,
// which allows this pull by name): its first byte is set while the
// collector marks. The second tier's compiled code stores a pointer
// into the heap itself only while it is clear (vm.SetTierWriteBarrier;
// docs/design.md §7, "Compiled pointer stores").
//
//go:linkname writeBarrier runtime.writeBarrier
var writeBarrier struct {
	enabled bool
	pad     [3]byte
	alignme uint64
}

func init() { vm.SetTierWriteBarrier(unsafe.Pointer(&writeBarrier.enabled)) }

// gateway implements vm.Host over the hale.prim import.
type gateway struct {
	buf []byte // result buffer, grown to the largest result seen
	// batching: publishes join pubs, the batch, rather than crossing
	// hale.prim one by one (abi: publish batches).
	batching bool
	pubs     []byte
	// crossings counts the calls that crossed hale.prim for anything but
	// a batched publish or a tier call: deliverMany ends after a handler
	// that made one.
	crossings uint32
}

// box is the batch box: the address and length of gate.pubs, kept
// current at every publish, which the host reads after init and deliver;
// then, after deliverMany, the number of deliveries it ran to their end.
var box [3]uint32

// batch turns publish batches on and returns the address of the box.
//
//go:wasmexport batch
func batch() uint32 {
	gate.batching = true
	// Room for a full batch from the start: a handler compiled whole
	// (vm/internal/tier, handler.go) appends only within the capacity.
	gate.pubs = make([]byte, 0, abi.BatchFlush+4<<10)
	// A loop region's compiled publishes append to it too.
	vm.SetTierBatch(unsafe.Pointer(&gate.pubs), unsafe.Pointer(&box[0]))
	return uint32(uintptr(unsafe.Pointer(&box[0])))
}

func (g *gateway) Prim(id uint16, args []byte) ([]byte, error) {
	if id == vm.PrimPublish && g.batching {
		// A publish has no result: it joins the batch, which the host
		// reads when the export returns (abi: publish batches).
		g.pubs = abi.AppendBatchRecord(g.pubs, args)
		box[0], box[1] = uint32(uintptr(unsafe.Pointer(&g.pubs[0]))), uint32(len(g.pubs))
		if len(g.pubs) < abi.BatchFlush {
			return nil, nil
		}
		return nil, g.flush()
	}
	g.crossings++
	if len(g.pubs) > 0 {
		// Everything the handler published so far reaches the host
		// before this call does.
		if err := g.flush(); err != nil {
			return nil, err
		}
	}
	if len(g.buf) == 0 {
		return g.call(uint32(id), args, true)
	}
	// One call of the import; a call with no result (a publish, a print)
	// ends here, without another Go call: in the guest each costs tens
	// of nanoseconds.
	status := prim(uint32(id), bytesPtr(args), uint32(len(args)), unsafe.Pointer(&g.buf[0]), uint32(len(g.buf)))
	if status == abi.Status(abi.OK, 0) {
		return nil, nil
	}
	return g.answer(status, true)
}

// tier calls a function of the second tier (vm.TierCaller). The machine
// reads the answer at once, so it is not copied.
func (g *gateway) tier(args []byte) ([]byte, error) {
	if len(g.pubs) > 0 {
		// The host may poll during the call: it sees the batch first.
		if err := g.flush(); err != nil {
			return nil, err
		}
	}
	return g.call(abi.TierID, args, false)
}

// flush hands the batch of publishes to the host (abi.BatchID) and
// empties it. The error is the first failed publish's.
func (g *gateway) flush() error {
	pubs := g.pubs
	g.pubs, box[1] = g.pubs[:0], 0
	_, err := g.call(abi.BatchID, pubs, false)
	return err
}

// emptyBatch drops the batch the host read after the last export call.
func emptyBatch() {
	if len(gate.pubs) > 0 {
		gate.pubs, box[1] = gate.pubs[:0], 0
	}
}

// call crosses the gateway; keep: return a copy of the result, which the
// caller may keep, rather than a view of the buffer.
func (g *gateway) call(id uint32, args []byte, keep bool) ([]byte, error) {
	if len(g.buf) == 0 {
		g.buf = make([]byte, 512)
	}
	return g.answer(prim(id, bytesPtr(args), uint32(len(args)), unsafe.Pointer(&g.buf[0]), uint32(len(g.buf))), keep)
}

// answer reads the result of a call of the import whose status word is
// status; keep as for call.
func (g *gateway) answer(status uint64, keep bool) ([]byte, error) {
	kind, n := abi.SplitStatus(status)
	if int(n) > len(g.buf) {
		// The host holds the result: fetch it into a buffer that fits,
		// without calling the primitive again.
		g.buf = make([]byte, n)
		kind, n = abi.SplitStatus(prim(abi.FetchID, nil, 0, unsafe.Pointer(&g.buf[0]), n))
		if int(n) > len(g.buf) {
			return nil, errors.New("guest: host result grew while fetching it")
		}
	}
	switch kind {
	case abi.OK:
		if n == 0 {
			return nil, nil
		}
		if !keep {
			return g.buf[:n], nil
		}
		// A fresh copy: the machine may keep what it is given.
		return append([]byte(nil), g.buf[:n]...), nil
	case abi.Trap:
		return nil, abi.DecodeTrapMessage(g.buf[:n])
	case abi.Uncatchable:
		return nil, vm.Uncatchable(errors.New(string(g.buf[:n])))
	case abi.Interrupted:
		return nil, vm.ErrInterrupted
	}
	return nil, errors.New("guest: " + string(g.buf[:n]))
}

func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// alloc grows the input buffer to hold at least size bytes and returns its
// address, which stays valid until the next alloc.
//
//go:wasmexport alloc
func alloc(size uint32) uint32 {
	if int(size) > cap(in) {
		in = make([]byte, max(int(size), 2*cap(in), 4096))
	}
	in = in[:cap(in)]
	return uint32(uintptr(unsafe.Pointer(&in[0])))
}

// result returns the address of the last call's output or failure bytes.
//
//go:wasmexport result
func result() uint32 {
	if len(out) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&out[0])))
}

// input returns the first n bytes of the input buffer, or nil when n is
// out of range.
func input(n uint32) ([]byte, bool) {
	if int(n) > len(in) {
		return nil, false
	}
	return in[:n], true
}

//go:wasmexport load
func load(n, flags uint32, memLimit int64) (r int32) {
	defer recoverInto(&r)
	data, ok := input(n)
	if !ok {
		return fail(errors.New("guest: image length out of range"))
	}
	// The input buffer is reused for payloads: the image must not alias it.
	img, err := image.Unmarshal(append([]byte(nil), data...))
	if err != nil {
		return fail(err)
	}
	machine, machines = nil, nil
	m, err := vm.New(img, &gate)
	if err != nil {
		return fail(err)
	}
	if flags&abi.LoadTier != 0 {
		m.EnableTier(gate.tier)
	}
	m.SetMemoryLimit(memLimit)
	machine, machines = m, []*vm.Machine{m}
	return done()
}

// addMachine makes one more machine for the loaded image, a sibling of
// machine 0 (vm.Machine.Sibling: it shares the prepared image), and
// returns its number; it leaves the selection as it was.
//
//go:wasmexport machine
func addMachine(memLimit int64) (r int32) {
	defer recoverInto(&r)
	if len(machines) == 0 {
		return fail(errNoImage)
	}
	m := machines[0].Sibling(&gate)
	m.SetMemoryLimit(memLimit)
	machines = append(machines, m)
	out = out[:0]
	return int32(len(machines) - 1)
}

// selectMachine makes machine number m the one the other exports address.
//
//go:wasmexport select
func selectMachine(m uint32) (r int32) {
	defer recoverInto(&r)
	if int(m) >= len(machines) {
		return fail(errors.New("guest: no such machine"))
	}
	machine = machines[m]
	return done()
}

//go:wasmexport init
func initInstance(inst uint32) (r int32) {
	defer recoverInto(&r)
	if machine == nil {
		return fail(errNoImage)
	}
	emptyBatch()
	if err := machine.Init(int(inst)); err != nil {
		return fail(err)
	}
	return done()
}

//go:wasmexport deliver
func deliver(inst uint32, handler int32, n uint32) int32 {
	// No deferred recovery: see the package comment.
	if machine == nil {
		return fail(errNoImage)
	}
	emptyBatch()
	payload, ok := input(n)
	if !ok {
		return fail(errors.New("guest: payload length out of range"))
	}
	if err := machine.Deliver(int(inst), int(handler), payload); err != nil {
		return fail(err)
	}
	return done()
}

// deliverMany runs the deliveries listed in the input buffer's first n
// bytes (abi.AppendDelivery), in order, each as deliver would, and
// returns how many it ran: it stops after the first handler that crossed
// hale.prim for anything but a batched publish (a primitive, a print, a
// timer: the run may have stopped meanwhile, and the host looks before
// it hands over the rest), or at the first that failed, whose failure it
// returns as deliver does, with the number of deliveries before it in
// box[2]. The publishes of all of them are in the batch, in order.
//
//go:wasmexport delivermany
func deliverMany(n uint32) int32 {
	box[2] = 0
	if machine == nil {
		return fail(errNoImage)
	}
	emptyBatch()
	list, ok := input(n)
	if !ok {
		return fail(errors.New("guest: delivery list length out of range"))
	}
	crossings := gate.crossings
	ran := int32(0)
	for len(list) > 0 {
		inst, handler, payload, rest, ok := abi.SplitDelivery(list)
		if !ok {
			return fail(errors.New("guest: bad delivery list"))
		}
		list = rest
		if err := machine.Deliver(int(inst), int(handler), payload); err != nil {
			return fail(err)
		}
		ran++
		box[2] = uint32(ran)
		if gate.crossings != crossings {
			break
		}
	}
	out = out[:0]
	return ran
}

//go:wasmexport state
func state(inst uint32) (r int32) {
	defer recoverInto(&r)
	return instanceBytes(inst, (*vm.Machine).State)
}

//go:wasmexport params
func params(inst uint32) (r int32) {
	defer recoverInto(&r)
	return instanceBytes(inst, (*vm.Machine).Params)
}

// instanceBytes answers an export that reads bytes of one instance: their
// length, with the bytes in the output buffer.
func instanceBytes(inst uint32, read func(*vm.Machine, int) ([]byte, error)) int32 {
	if machine == nil {
		return fail(errNoImage)
	}
	b, err := read(machine, int(inst))
	if err != nil {
		return fail(err)
	}
	out = append(out[:0], b...)
	return int32(len(out))
}

//go:wasmexport setparams
func setParams(n uint32) (r int32) {
	defer recoverInto(&r)
	if machine == nil {
		return fail(errNoImage)
	}
	data, ok := input(n)
	if !ok {
		return fail(errors.New("guest: parameter table length out of range"))
	}
	table, err := abi.DecodeParamTable(data)
	if err != nil {
		return fail(err)
	}
	if err := machine.SetGuardParams(table); err != nil {
		return fail(err)
	}
	return done()
}

//go:wasmexport guards
func guards(topic, n uint32) (r int32) {
	defer recoverInto(&r)
	if machine == nil {
		return fail(errNoImage)
	}
	payload, ok := input(n)
	if !ok {
		return fail(errors.New("guest: payload length out of range"))
	}
	b, err := machine.Guards(int(topic), payload)
	if err != nil {
		return fail(err)
	}
	// A result of 0 bytes reads as "no output": lead with a byte.
	out = append(append(out[:0], 1), b...)
	return int32(len(out))
}

//go:wasmexport breaks
func breaks(n uint32) (r int32) {
	defer recoverInto(&r)
	if machine == nil {
		return fail(errNoImage)
	}
	spec, ok := input(n)
	if !ok {
		return fail(errors.New("guest: break spec length out of range"))
	}
	if err := machine.SetBreaks(spec); err != nil {
		return fail(err)
	}
	return done()
}

// step runs a batch of instructions of a compiled loop region in place
// (tier.GuestStep; arg is tier.StepArg's first pc and count): the
// region's compiled code calls it directly, while the guest waits in
// hale.prim for the region's tier call.
//
//go:wasmexport hale_step
func step(arg, used int64) int64 { return vm.TierStep(arg, used) }

var errNoImage = errors.New("guest: no image loaded")

func done() int32 {
	out = out[:0]
	return 0
}

func fail(err error) int32 {
	out = abi.AppendFailure(out[:0], err)
	return -int32(len(out))
}

// recoverInto turns a panic in an export into a failure result.
func recoverInto(r *int32) {
	if p := recover(); p != nil {
		msg := "interpreter: internal error"
		switch v := p.(type) {
		case error:
			msg += ": " + v.Error()
		case string:
			msg += ": " + v
		}
		*r = fail(errors.New(msg))
	}
}

// fastTable is fastinfo's answer.
var fastTable [6]uint64

// fastInfo answers what a handler compiled whole by the second tier,
// which the host calls directly, needs of instance inst of the selected
// machine for a delivery of topic: the address of fastTable, holding the
// addresses of the instance's slots, of the machine's memory charge
// counter, of the publish batch's slice header and of the batch box, and
// whether the machine has made topic's payload struct (1, else 0), then
// the address of the machine's guard tables (vm.Machine.GuardTables); or
// 0 when the instance is not initialised.
//
//go:wasmexport fastinfo
func fastInfo(inst, topic uint32) uint32 {
	if machine == nil {
		return 0
	}
	slots, charged, guards, ready, ok := machine.FastAddrs(int(inst), int(topic))
	if !ok {
		return 0
	}
	fastTable = [6]uint64{uint64(slots), uint64(charged), uint64(uintptr(unsafe.Pointer(&gate.pubs))),
		uint64(uintptr(unsafe.Pointer(&box[0]))), 0, uint64(guards)}
	if ready {
		fastTable[4] = 1
	}
	return uint32(uintptr(unsafe.Pointer(&fastTable[0])))
}

// mathCall runs a float builtin of std::math for the second tier's
// compiled code (tier.GuestMath: the builtin's number, the arguments'
// bits), with the interpreter's own function, so that compiled code
// gets the same bits on every engine. It neither allocates nor panics.
//
//go:wasmexport hale_math
func mathCall(b, x, y uint64) uint64 { return vm.TierMath(b, x, y) }
