package vm

import (
	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm/value"
)

// Guards of one shape, the commonest (`on Token(t) if t.to == id`), are
// evaluated without the dispatch loop: a guard whose whole code is
//
//	field  rX, r0, F     ; a field of the payload
//	eq.int rY, rA, rB    ; compared with a parameter (or itself)
//	ret    rY
//
// writes the same registers, returns the same bool and counts the same
// three steps as the interpreter would; it cannot trap, so only a budget
// with fewer than three steps left runs it through the loop (which then
// traps at the exact step), and so does a machine with a debugger, whose
// breaks are patched into the code the loop runs. A ring of 100 such guards per publish spent
// nearly all its time entering and leaving the loop.

// fieldEqGuard is a guard of that shape; ok is false for any other.
type fieldEqGuard struct {
	ok         bool
	field      int32 // F
	x, y, a, b int32 // the registers
}

// fieldEqOn is false only in tests that compare the fast path with the
// dispatch loop.
var fieldEqOn = true

// fieldEqSteps is the steps a fieldEqGuard takes.
const fieldEqSteps = 3

// fieldEqShape returns fn's shape (see fieldEqGuard).
func fieldEqShape(f *image.Func) fieldEqGuard {
	c := f.Code
	if f.Kind != image.FuncGuard || len(c) != 3 || c[0].Op != image.OpField || c[1].Op != image.OpEqInt || c[2].Op != image.OpRet {
		return fieldEqGuard{}
	}
	g := fieldEqGuard{ok: true, field: c[0].C, x: c[0].A, y: c[1].A, a: c[1].B, b: c[1].C}
	// The payload is r0 and the parameters r1…: the compared registers
	// must hold the field or an int or bool parameter (the checker typed
	// eq.int's operands; a parameter register is one of them).
	operand := func(r int32) bool { return r == g.x || r >= 1 && int(r) < f.NumParams }
	if c[0].B != 0 || g.x < 1 || int(g.x) >= f.FrameSize || g.y < 0 || int(g.y) >= f.FrameSize ||
		!operand(g.a) || !operand(g.b) || c[2].A != g.y {
		return fieldEqGuard{}
	}
	return g
}

// fieldEq returns the shape of guard function fn, working the shapes of
// every function out on first use.
func (m *Machine) fieldEq(fn int) fieldEqGuard {
	if !fieldEqOn {
		return fieldEqGuard{}
	}
	if m.fieldEqs == nil {
		m.fieldEqs = make([]fieldEqGuard, len(m.img.Funcs))
		for i := range m.img.Funcs {
			m.fieldEqs[i] = fieldEqShape(&m.img.Funcs[i])
		}
	}
	return m.fieldEqs[fn]
}

// runFieldEq runs guard g on the frame at base (the payload and the
// parameters in place) as the interpreter would, and returns its result.
func (m *Machine) runFieldEq(g fieldEqGuard, base int) bool {
	regs := m.stack[base:]
	regs[g.x] = regs[0].AsStruct().Field(int(g.field))
	r := value.Bool(regs[g.a].AsInt() == regs[g.b].AsInt())
	regs[g.y] = r
	regs[0] = r
	return r.AsBool()
}
