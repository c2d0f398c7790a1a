package sir

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hale-lang/hale/effects"
	"github.com/hale-lang/hale/lang"
	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/diag"
)

func TestConstErrors(t *testing.T) {
	tests := []struct {
		src  string
		pos  string // file:line:col of the diagnostic
		code diag.Code
		msg  string
	}{
		{"const A: int = 9223372036854775807 + 1;\nmain {}", "app.hl:1:36", CodeConstTrap, "value of const A traps: integer overflow"},
		{"const A: int = 1 / 0;\nmain {}", "app.hl:1:18", CodeConstTrap, "division by zero"},
		{"const A: int = 7 % (3 - 3);\nmain {}", "app.hl:1:18", CodeConstTrap, "division by zero"},
		{"const M: int = -9223372036854775808;\nconst A: int = M / -1;\nmain {}", "app.hl:2:18", CodeConstTrap, "integer overflow"},
		{"const M: int = -9223372036854775808;\nconst A: int = -M;\nmain {}", "app.hl:2:16", CodeConstTrap, "integer overflow"},
		{"const B: int = 3037000500 * 3037000500;\nmain {}", "app.hl:1:27", CodeConstTrap, "integer overflow"},
		{"const A: int = 1;\nconst B: int = A - 9223372036854775807 - 3;\nmain {}", "app.hl:2:40", CodeConstTrap, "value of const B traps"},
		{"const A: int = 1 << 64;\nmain {}", "app.hl:1:18", CodeConstTrap, "value of const A traps: shift count 64 out of range (0 to 63)"},
		{"const N: int = -1;\nconst A: int = 8 >> N;\nmain {}", "app.hl:2:18", CodeConstTrap, "shift count -1 out of range"},
	}
	for _, tt := range tests {
		_, err := lowerFiles(map[string]string{"app.hl": tt.src})
		list, ok := err.(diag.List)
		if !ok || len(list) != 1 {
			t.Errorf("%q: got %v, want one diagnostic", tt.src, err)
			continue
		}
		e := list[0]
		if e.Pos.String() != tt.pos || e.Code != tt.code || !strings.Contains(e.Msg, tt.msg) {
			t.Errorf("%q: got %s, want %s: …%s… [%s]", tt.src, e, tt.pos, tt.msg, tt.code)
		}
	}
}

func TestConstFolding(t *testing.T) {
	p := loadSrc(t, `
const A: int = -9223372036854775808;
const B: int = (A + 1) / -2 % 1000;
const C: float = 1.0 / 0.0;
const D: float = 7.5 % 2.0;
const E: bool = !(B < 0) || 1 / 0 == 1;
const F: bool = false && 1 / 0 == 1;
const G: string = "a" + "b";
const H: bytes = b"\x01" + b"\xff";
const I: bool = G < "b" && H == b"\x01\xff" && G != "x";
main {}`)
	want := map[string]string{
		"A": "-9223372036854775808", "B": "903", "C": "inf", "D": "1.5",
		"E": "true", "F": "false", "G": `"ab"`, "H": `b"\x01\xff"`, "I": "true",
	}
	if len(p.Consts) != len(want) {
		t.Fatalf("got %d consts, want %d", len(p.Consts), len(want))
	}
	for _, c := range p.Consts {
		if got := c.Value.String(); got != want[c.Name] {
			t.Errorf("%s = %s, want %s", c.Name, got, want[c.Name])
		}
	}
}

// countExprs counts the expressions of f that satisfy pred.
func countExprs(f *Func, pred func(Expr) bool) int {
	n := 0
	walkFunc(f, func(Stmt) {}, func(e Expr) {
		if pred(e) {
			n++
		}
	})
	return n
}

func funcNamed(t *testing.T, p *Program, name string) *Func {
	t.Helper()
	for _, f := range p.Funcs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no function %s", name)
	return nil
}

func TestCompoundAssignEvaluatesOnce(t *testing.T) {
	p := loadSrc(t, `
type Box { xs: [int] }
fn f() -> int { return 0; }
fn g() -> Box { return Box { xs: [1] }; }
fn a(xs: [int]) { xs[f()] += 1; }
fn b() { g().xs[f()] *= 2; }
fn c(m: {string: int}) { m[str(f())] -= 1; }
fn d(xs: [int]) { xs[f()] = xs[f()]; }
main {}`)
	isCall := func(e Expr) bool { _, ok := e.(*Call); return ok }
	for name, calls := range map[string]int{"a": 1, "b": 2, "c": 1, "d": 2} {
		f := funcNamed(t, p, name)
		if got := countExprs(f, isCall); got != calls {
			t.Errorf("%s: %d calls in SIR, want %d:\n%s", name, got, calls, p.Text())
		}
	}
	// a: the index goes to a hidden slot, then one SetIndex reads it twice.
	body := funcNamed(t, p, "a").Body
	if len(body) != 2 { // let $tmp = f(); set.list
		t.Fatalf("a: %d statements, want 2", len(body))
	}
	let, ok1 := body[0].(*Let)
	set, ok2 := body[1].(*SetIndex)
	if !ok1 || !ok2 {
		t.Fatalf("a: got %T, %T; want *Let, *SetIndex", body[0], body[1])
	}
	ix, ok := set.Index.(*LocalRef)
	if !ok || ix.Slot != let.Slot || set.Kind != IndexList {
		t.Errorf("a: SetIndex index is %#v, want a read of slot %d", set.Index, let.Slot)
	}
	bin, ok := set.Value.(*Binary)
	if !ok || bin.Op != IntAdd {
		t.Fatalf("a: value is %#v, want add.int", set.Value)
	}
	if cur, ok := bin.X.(*Index); !ok || cur.Index.(*LocalRef).Slot != let.Slot {
		t.Errorf("a: compound read is %#v", bin.X)
	}
	if f := funcNamed(t, p, "a"); let.Slot < f.NumParams || let.Slot >= f.NumSlots || !strings.HasPrefix(f.Locals[let.Slot].Name, "$") {
		t.Errorf("a: temporary slot %d is not hidden (frame %d slots, locals %v)", let.Slot, f.NumSlots, f.Locals)
	}
}

func TestStructLiteralOrder(t *testing.T) {
	p := loadSrc(t, `
type P { a: int, b: int, c: int }
fn f(x: int) -> int { return x; }
fn quiet(x: int) -> P { return P { c: 1, b: x, a: f(2) }; }
fn loud() -> P { return P { c: f(3), a: f(1), b: 2 }; }
fn same() -> P { return P { a: f(1), b: f(2), c: f(3) }; }
main {}`)
	for name, want := range map[string][]int{"quiet": nil, "loud": {2, 0, 1}, "same": nil} {
		var got *MakeStruct
		walkFunc(funcNamed(t, p, name), func(Stmt) {}, func(e Expr) {
			if m, ok := e.(*MakeStruct); ok {
				got = m
			}
		})
		if got == nil {
			t.Fatalf("%s: no struct literal", name)
		}
		if !equalInts(got.Order, want) {
			t.Errorf("%s: order %v, want %v", name, got.Order, want)
		}
		// Fields are in declaration order whatever the source order.
		if c, ok := got.Fields[2].(*Call); name == "loud" && (!ok || c.Args[0].(*Const).Value.Int != 3) {
			t.Errorf("%s: field c is %#v", name, got.Fields[2])
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLowerLayout(t *testing.T) {
	p := loadSrc(t, `
topic T { n: int }
topic U { s: string }
fn top() {}
locus L(k: int) {
    var a: int = k;
    var b: [int] = [];
    on U(u) { }
    on start { }
    on T(t) { helper(); }
    fn helper() { b = [a]; }
}
locus M { on T(t) { } }
main {
    spawn M as m1 on pool("p");
    spawn L(1) as l1;
    spawn M as m2 on pinned;
    spawn L(2) as l2 on pool("p");
    bind stdin to U;
}`)
	var names []string
	for _, f := range p.Funcs {
		names = append(names, f.Name)
	}
	want := "top L.init L.on U L.on start L.on T L.helper M.init M.on T"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("funcs %q, want %q", got, want)
	}
	l := p.Loci[0]
	if l.Init != 1 || l.Start != 3 || l.HandlerFor(1) != 2 || l.HandlerFor(0) != 4 || l.NumSlots != 3 {
		t.Errorf("locus L: %+v", l)
	}
	if h := p.Funcs[4]; h.NumParams != 1 || h.Kind != FuncHandler || h.Topic != 0 || h.Locus != 0 {
		t.Errorf("L.on T: %+v", h)
	}
	if s := p.Funcs[3]; s.NumParams != 0 || s.Kind != FuncStart || s.Topic != -1 {
		t.Errorf("L.on start: %+v", s)
	}
	// Subscribers in main order; consumers: main, pools, pinned, ingress.
	if got := p.Topics[0].Subscribers; !equalInts(got, []int{0, 1, 2, 3}) {
		t.Errorf("T subscribers %v", got)
	}
	if got := p.Topics[1].Subscribers; !equalInts(got, []int{1, 3}) {
		t.Errorf("U subscribers %v", got)
	}
	var cons []string
	for _, c := range p.Consumers {
		cons = append(cons, c.Kind.String()+":"+c.Name)
	}
	if got := strings.Join(cons, " "); got != "main:main pool:p pinned:m2 ingress:stdin:U" {
		t.Errorf("consumers %q", got)
	}
	for i, want := range []int{1, 0, 2, 1} {
		if p.Instances[i].Consumer != want {
			t.Errorf("instance %s on consumer %d, want %d", p.Instances[i].Name, p.Instances[i].Consumer, want)
		}
	}
	if len(p.Ingress) != 1 || p.Ingress[0].Topic != 1 || p.Ingress[0].Consumer != 3 {
		t.Errorf("ingress %+v", p.Ingress)
	}
	// The state initialiser reads the parameter slot.
	init := p.Funcs[l.Init]
	if st, ok := init.Body[0].(*SetState); !ok || st.Slot != 1 || st.Value.(*StateRef).Slot != 0 {
		t.Errorf("L.init: %s", p.Text())
	}
}

func TestLowerDeterministic(t *testing.T) {
	for name, files := range testdataPrograms(t) {
		var first []byte
		for i := 0; i < 5; i++ {
			p, err := lowerFiles(files)
			if err != nil {
				t.Fatal(err)
			}
			b, err := p.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = b
			} else if !bytes.Equal(b, first) {
				t.Fatalf("%s: lowering %d encodes differently", name, i)
			}
		}
	}
}

// TestLowerBadTree feeds Lower trees the checker never produces: it must
// report internal errors, not panic.
func TestLowerBadTree(t *testing.T) {
	if _, err := Lower(nil, nil); err == nil {
		t.Error("Lower(nil) succeeded")
	}
	unresolved := &ast.FnDecl{
		Name: &ast.Ident{Name: "f"},
		Body: &ast.Block{Stmts: []ast.Stmt{
			&ast.ReturnStmt{Value: &ast.Name{Ident: &ast.Ident{Name: "x"}}},
			&ast.ExprStmt{X: &ast.CallExpr{Fun: &ast.Name{Ident: &ast.Ident{Name: "g"}}}},
		}},
	}
	p := &lang.Program{Entry: "app.hl", Files: []*ast.File{{Path: "app.hl", Decls: []ast.Decl{unresolved}}}}
	_, err := Lower(p, nil)
	list, ok := err.(diag.List)
	if !ok || len(list) == 0 || list[0].Code != CodeInternal {
		t.Fatalf("got %v, want internal diagnostics", err)
	}
}

func TestBuiltinNames(t *testing.T) {
	if len(builtinNames) != int(NumBuiltins) {
		t.Fatalf("%d builtin names for %d builtins", len(builtinNames), NumBuiltins)
	}
	seen := map[string]bool{}
	for b := Builtin(0); b < NumBuiltins; b++ {
		if seen[b.String()] {
			t.Errorf("builtin name %s repeated", b)
		}
		seen[b.String()] = true
	}
	if len(binaryOpNames) != int(numBinaryOps) {
		t.Fatalf("%d binary operation names for %d operations", len(binaryOpNames), numBinaryOps)
	}
}

// TestLowerWithoutEffects: effect sets are optional; without them every
// Func.Effects is empty and the rest is unchanged.
func TestLowerWithoutEffects(t *testing.T) {
	fsys := fstest.MapFS{"app.hl": {Data: []byte(`
fn f() -> int { return std::time::now_ms(); }
main {}`)}}
	lp, err := lang.LoadFS(fsys, "app.hl")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Lower(lp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := p.Funcs[0]; f.Effects != nil || len(p.Prims) != 1 || p.Prims[0].Effect != "time" || p.Prims[0].ID != 3 {
		t.Errorf("got effects %v, prims %+v", f.Effects, p.Prims[0])
	}
	fx, _ := effects.Analyze(lp)
	s, err := ShapeOf(lp, fx)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Effects[0].Effects; len(got) != 1 || got[0] != "time" {
		t.Errorf("shape effects %v", got)
	}
}
