package vm_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/internal/tier"
	"github.com/hale-lang/hale/vm/value"
)

// oomSrc keeps every list it makes: its data grows without end.
const oomSrc = `
locus M { on start { var xs: [[int]] = []; while true { push(xs, [1,2,3,4,5,6,7,8]); } } }
main { spawn M; }
`

// A handler whose data outgrows the machine's memory limit traps with
// "out of memory" at the push that crossed it, quickly, and at the same
// step every time: the accounting counts the program's values, not the
// Go runtime's memory.
func TestMemoryLimitTraps(t *testing.T) {
	img := compile(t, oomSrc)
	var first *vm.Trap
	var steps int64
	for run := range 2 {
		m := initMachine(t, img, &pollHost{})
		m.SetMemoryLimit(8 << 20)
		start := time.Now()
		err := m.Deliver(0, vm.HandlerStart, nil)
		var tr *vm.Trap
		if !errors.As(err, &tr) || tr.Message != "out of memory: the consumer's data outgrew its limit of 8 MiB" {
			t.Fatalf("got %v, want the out of memory trap", err)
		}
		if len(tr.Stack) != 1 || tr.Stack[0].Func != "M.on start" || !strings.HasPrefix(tr.Stack[0].Pos, "app.hl:2:") {
			t.Errorf("stack %+v", tr.Stack)
		}
		if took := time.Since(start); took > 20*time.Second { // generous: under -race on a busy machine
			t.Errorf("took %v to trap", took)
		}
		if run == 1 && (m.Steps() != steps || tr.Stack[0] != first.Stack[0]) {
			t.Errorf("trapped at step %d (%s), then at step %d (%s)", steps, first.Stack[0].Pos, m.Steps(), tr.Stack[0].Pos)
		}
		first, steps = tr, m.Steps()
	}
}

// Data that stays under the limit never traps, however much garbage the
// program makes: the limit is on what is held, not on what was allocated.
func TestMemoryLimitCountsLiveData(t *testing.T) {
	img := compile(t, `
locus M {
    var keep: [string] = [];
    on start {
        var i = 0;
        while i < 200000 {
            let xs = [i, i, i, i, i, i, i, i];
            let s = str(xs) + str(xs);
            if i % 1000 == 0 { push(keep, s); }
            i += 1;
        }
        print(str(len(keep)));
    }
}
main { spawn M; }
`)
	h := &fakeHost{}
	m := initMachine(t, img, h)
	m.SetMemoryLimit(1 << 20)
	if err := m.Deliver(0, vm.HandlerStart, nil); err != nil {
		t.Fatal(err)
	}
	if h.out.String() != "200\n" {
		t.Errorf("printed %q", h.out.String())
	}
}

// treesSrc keeps a tree of enum variants and structs per round: its data
// grows until the limit.
const treesSrc = `
enum Tree { Empty, Node(Tree, Tree), Leaf(Box) }
type Box { n: int, label: string }
fn make(d: int) -> Tree {
    if d == 0 { return Tree::Leaf(Box { n: d, label: "leaf" }); }
    if d == 1 { return Tree::Node(Tree::Empty, make(d - 1)); }
    return Tree::Node(make(d - 1), make(d - 1));
}
locus M {
    var made: int = 0;
    on start { var ts: [Tree] = []; while true { push(ts, make(8)); made += 1; } }
}
main { spawn M; }
`

// The memory accounting is part of what a run computes: the charges of
// the values made and the measures of what is held decide the step at
// which a handler runs out of memory, which every engine and every
// representation of values must keep. These figures pin it for enum
// variants and structs.
func TestMemoryLimitTrapStep(t *testing.T) {
	img := compile(t, treesSrc)
	m := initMachine(t, img, &pollHost{})
	m.SetMemoryLimit(4 << 20)
	err := m.Deliver(0, vm.HandlerStart, nil)
	var tr *vm.Trap
	if !errors.As(err, &tr) || tr.Kind != vm.KindMemory {
		t.Fatalf("got %v, want the out of memory trap", err)
	}
	state, err := m.State(0)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := value.DecodeTuple(state, m.StateTypes(0))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{strconv.FormatInt(vs[0].AsInt(), 10)}
	for _, f := range tr.Stack {
		got = append(got, f.Func+"@"+f.Pos)
	}
	// 110 trees made, and the trap in the 111th at this node.
	want := []string{"110", "make@app.hl:7:12", "make@app.hl:7:36", "make@app.hl:7:23", "make@app.hl:7:36", "make@app.hl:7:36", "M.on start@app.hl:11:59"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("trapped at %q, want %q", got, want)
	}
}

// deadSlotSrc makes a list of 400,000 ints (9.6 MB as the limit counts)
// in a function that returns only its length, then keeps 350,000 ints
// (8.4 MB) and makes garbage, so that the machine measures with the
// returned call's slots still holding the big list.
const deadSlotSrc = `
fn big(k: int, m: int) -> int {
    var xs: [int] = [];
    var i = 0;
    while i < k { push(xs, i * m); i += 1; }
    return len(xs);
}
locus M {
    on start {
        let n = big(400000, 1);
        var keep: [int] = [];
        var i = 0;
        while i < 350000 { push(keep, i); i += 1; }
        var j = 0;
        while j < 200000 { let g = [j, j, j, j]; j += 1; }
        print(str(n + len(keep)));
    }
}
main { spawn M; }
`

// A measure counts the registers live where each frame stands, not what
// a returned call left in the slots above its caller: the big list of
// deadSlotSrc is garbage once big returns, so 9.6 + 8.4 MB made never
// hold more than 16 MiB at once. (Counting every slot up to the stack's
// high-water mark trapped here, and made the count depend on whether a
// call ran interpreted or compiled, which leaves no slots behind.)
func TestMemoryLimitSkipsDeadSlots(t *testing.T) {
	img := compile(t, deadSlotSrc)
	h := &fakeHost{}
	m := initMachine(t, img, h)
	m.SetMemoryLimit(16 << 20)
	if err := m.Deliver(0, vm.HandlerStart, nil); err != nil {
		t.Fatalf("got %v, want no trap", err)
	}
	if h.out.String() != "750000\n" {
		t.Errorf("printed %q", h.out.String())
	}
	// Keeping the big list live (its length read at the end) does trap.
	live := strings.NewReplacer(
		"-> int {", "-> [int] {",
		"return len(xs);", "return xs;",
		"print(str(n + len(keep)));", "print(str(len(n) + len(keep)));",
	).Replace(deadSlotSrc)
	m = initMachine(t, compile(t, live), &fakeHost{})
	m.SetMemoryLimit(16 << 20)
	var tr *vm.Trap
	if err := m.Deliver(0, vm.HandlerStart, nil); !errors.As(err, &tr) || tr.Kind != vm.KindMemory {
		t.Fatalf("with the list live: got %v, want the out of memory trap", err)
	}
}

// image.LiveAfter solves the liveness equations on every function of the
// examples: the registers live after an instruction are those its
// successors read, or hold live without writing them, and no register
// outside the frame is ever live.
func TestLiveAfterHoldsTheEquations(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.hl")
	if len(files) < 5 {
		t.Fatalf("examples: %v", files)
	}
	srcs := []string{deadSlotSrc, treesSrc, oomSrc}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, string(b))
	}
	checked := 0
	for _, src := range srcs {
		img := compile(t, src)
		for fi := range img.Funcs {
			f := &img.Funcs[fi]
			live := image.LiveAfter(img, f)
			for pc, in := range f.Code {
				want := make([]uint64, live.Words())
				succ := func(s int) {
					if s >= len(f.Code) {
						return
					}
					after := append([]uint64(nil), live.After(s)...)
					if w := image.Writes(img, f.Code[s]); w.N > 0 {
						for r := w.Base; r < w.Base+w.N && int(r) < f.FrameSize; r++ {
							after[r/64] &^= 1 << (r % 64)
						}
					}
					for _, w := range image.Reads(img, f.Code[s], nil) {
						for r := w.Base; r < w.Base+w.N; r++ {
							after[r/64] |= 1 << (r % 64)
						}
					}
					for i := range want {
						want[i] |= after[i]
					}
				}
				if !in.Op.Terminal() {
					succ(pc + 1)
				}
				if in.Op.IsJump() {
					succ(int(in.C))
				}
				// Every register operand is read or written.
				info, _ := image.OpInfo(in.Op)
				acc := append(image.Reads(img, in, nil), image.Writes(img, in))
				for j, kind := range []image.Operand{info.A, info.B, info.C} {
					r := []int32{in.A, in.B, in.C}[j]
					// (a try's A is written where it catches, not on
					// the way to the next instruction)
					found := kind != image.Reg || in.Op == image.OpTry && j == 0
					for _, w := range acc {
						found = found || r == w.Base || (r > w.Base && r < w.Base+w.N) // a window of none still names its base
					}
					if !found {
						t.Fatalf("%s pc %d (%s): operand %c, register %d, neither read nor written", f.Name, pc, in.Op, "ABC"[j], r)
					}
				}
				got := live.After(pc)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s pc %d (%s): live %b, want %b", f.Name, pc, in.Op, got, want)
					}
				}
				for r := f.FrameSize; r < 64*live.Words(); r++ {
					if got[r/64]&(1<<(r%64)) != 0 {
						t.Fatalf("%s pc %d: register %d past the frame of %d is live", f.Name, pc, r, f.FrameSize)
					}
				}
				checked++
			}
		}
	}
	t.Logf("%d instructions checked", checked)
}

// TestInterpreterInlineOps keeps tier.InterpreterInline, the opcodes
// after which the interpreter never measures memory (a handler compiled
// whole hands a delivery back where the interpreter would measure),
// equal to the cases of execAt's switch: every other instruction goes
// through cold, which measures.
func TestInterpreterInlineOps(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "run.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	inline := map[string]bool{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != "execAt" {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok {
				return true
			}
			if sel, ok := sw.Tag.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Op" {
				return true
			}
			for _, st := range sw.Body.List {
				for _, e := range st.(*ast.CaseClause).List {
					if sel, ok := e.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && x.Name == "image" {
							inline[sel.Sel.Name] = true
						}
					}
				}
			}
			return false
		})
	}
	if len(inline) < 20 {
		t.Fatalf("found %d cases in execAt's switch", len(inline))
	}
	// The opcodes' names, from their const block (one iota from OpNop).
	opf, err := parser.ParseFile(token.NewFileSet(), "../codegen/image/op.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	name := map[image.Op]string{}
	for _, d := range opf.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST || len(gd.Specs) == 0 || gd.Specs[0].(*ast.ValueSpec).Names[0].Name != "OpNop" {
			continue
		}
		for i, sp := range gd.Specs {
			name[image.Op(i)] = sp.(*ast.ValueSpec).Names[0].Name
		}
	}
	if name[image.OpPublishAfter] != "OpPublishAfter" || name[image.OpMove] != "OpMove" {
		t.Fatalf("the opcodes' const block did not parse as expected: %v", name)
	}
	listed := map[string]bool{}
	for op := range tier.InterpreterInline {
		listed[name[op]] = true
		if !inline[name[op]] {
			t.Errorf("tier.InterpreterInline has %s, which execAt does not run itself", name[op])
		}
	}
	for n := range inline {
		if !listed[n] {
			t.Errorf("execAt runs image.%s itself; tier.InterpreterInline lacks it", n)
		}
	}
}

// allowanceSrc keeps 100,000 ints (2,400,032 bytes as the limit counts
// them) and then makes 400,000 lists of four ints as garbage (51 MB
// charged).
const allowanceSrc = `
locus M {
    var keep: [int] = [];
    on start {
        for i in 0..100000 { push(keep, i); }
        var j = 0;
        while j < 400000 { let g = [j, j, j, j]; j += 1; }
        print(str(len(keep)));
    }
}
main { spawn M; }
`

// A machine measures when what it made since its last measure could have
// taken its data past the limit (the data can grow only by what is
// charged), and within a sixteenth of the limit every sixteenth of it:
// far from its limit it seldom measures, and the allowance after a
// measure is the room left.
func TestMemoryAllowance(t *testing.T) {
	img := compile(t, allowanceSrc)
	const kept = 32 + 24*100000
	for _, c := range []struct {
		name    string
		limit   int64
		minWant int64 // the allowance after the run, at least…
		maxWant int64 // …and at most
	}{
		// Far from the limit: the room left (the registers live at the
		// measure, a list of four among them, count a little).
		{"far", 16 << 20, 16<<20 - kept - 1024, 16<<20 - kept},
		// Within a sixteenth of it: a sixteenth.
		{"near", kept + 100<<10, (kept + 100<<10) / 16, (kept + 100<<10) / 16},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &fakeHost{}
			m := initMachine(t, img, h)
			m.SetMemoryLimit(c.limit)
			if _, a := m.MemoryCounters(); a != c.limit {
				t.Fatalf("allowance before any measure %d, want the whole limit %d", a, c.limit)
			}
			if err := m.Deliver(0, vm.HandlerStart, nil); err != nil {
				t.Fatal(err)
			}
			if h.out.String() != "100000\n" {
				t.Fatalf("printed %q", h.out.String())
			}
			charged, a := m.MemoryCounters()
			if a < c.minWant || a > c.maxWant {
				t.Fatalf("allowance after the run %d, want %d to %d", a, c.minWant, c.maxWant)
			}
			if charged > a {
				t.Fatalf("charged %d past the allowance %d without a measure", charged, a)
			}
		})
	}
}

// The tier's arena grows as large as a sixteenth more than the memory
// limit (never less than 64 MiB), so that a tree within the limit is
// made in compiled code: binary-trees 20 (its trees of depth 20 take
// 168 MB) went from 43 to 26 s under a 1 GiB limit.
func TestArenaLargest(t *testing.T) {
	img := compile(t, allowanceSrc)
	m := initMachine(t, img, &fakeHost{})
	for _, c := range []struct{ limit, want int64 }{
		{0, 64 << 20},
		{1 << 20, 64 << 20},
		{64 << 20, 68 << 20},
		{256 << 20, 272 << 20},
		{1 << 30, 1088 << 20},
		{256<<20 + 3, 272 << 20}, // a multiple of 8
	} {
		m.SetMemoryLimit(c.limit)
		if got := vm.ArenaLargest(m); int64(got) != c.want {
			t.Errorf("limit %d: the arena grows to %d bytes, want %d", c.limit, got, c.want)
		}
	}
}
