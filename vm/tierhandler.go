package vm

import "unsafe"

// FastAddrs answers what a topic handler that the second tier compiled
// whole (tier.PlanHandlers), which the wasm engine's host runs without
// the interpreter, needs of instance inst: the address of its slots (0
// when it has none), of the machine's memory charge counter (a
// delivery's decoding charges it), and ready: whether topic's reused
// payload struct is made (before, the interpreter must run the delivery,
// which makes it, so that the memory measured is the same with compiled
// handlers as without), and of the machine's guard tables
// (GuardTables), from which a compiled handler publishes a guarded
// topic. ok is false when inst is not an initialised instance.
func (m *Machine) FastAddrs(inst, topic int) (slots, charged, guards uintptr, ready, ok bool) {
	if inst < 0 || inst >= len(m.insts) || !m.insts[inst].inited || m.busy {
		return 0, 0, 0, false, false
	}
	in := &m.insts[inst]
	if len(in.slots) > 0 {
		slots = uintptr(unsafe.Pointer(&in.slots[0]))
	}
	if topic >= 0 && topic < len(m.payloads) {
		ready = m.payloads[topic] != nil
	}
	return slots, uintptr(unsafe.Pointer(&m.mem.charged)), m.GuardTables(), ready, true
}
