package check_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/hale-lang/hale/lang/ast"
)

// dumpAnnotations prints what the checker recorded on a tree: the symbol
// of every identifier (with slots), the type of every expression, and the
// slot counts, indexes and budgets of declarations and statements.
func dumpAnnotations(f *ast.File) string {
	var b strings.Builder
	line := func(n ast.Node, format string, args ...any) {
		p := n.Pos()
		fmt.Fprintf(&b, "%d:%d %s\n", p.Line, p.Col, fmt.Sprintf(format, args...))
	}
	sym := func(s *ast.Symbol) string {
		if s == nil {
			return "<nil>"
		}
		out := s.Kind.String() + " " + s.Name
		switch s.Kind {
		case ast.SymLocal, ast.SymState, ast.SymLocusParam:
			out += fmt.Sprintf(" slot=%d", s.Slot)
			if s.Mutable {
				out += " mutable"
			}
		case ast.SymVariant:
			out += fmt.Sprintf(" index=%d", s.Index)
		case ast.SymBuiltin:
			out += " builtin=" + s.Builtin
		}
		if s.Type != nil {
			out += " : " + s.Type.String()
		}
		return out
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			line(n, "ident %s -> %s", n.Name, sym(n.Sym))
		case *ast.FnDecl:
			line(n, "fn %s slots=%d", n.Name.Name, n.NumSlots)
		case *ast.LocusDecl:
			line(n, "locus %s slots=%d init=%d budget=%d", n.Name.Name, n.NumSlots, n.InitSlots, n.Budget)
		case *ast.Handler:
			line(n, "handler start=%v slots=%d", n.Start, n.NumSlots)
		case *ast.ForStmt:
			line(n, "for hidden=%d", n.HiddenSlot)
		case *ast.Pattern:
			if n.Kind == ast.PatVariant {
				line(n, "pattern variant=%d", n.Variant)
			}
		case *ast.FieldInit:
			line(n, "field init %s index=%d", n.Name.Name, n.Index)
		case *ast.FieldExpr:
			line(n, "field %s index=%d : %s", n.Name.Name, n.Index, n.TypeOf())
			return true
		case *ast.NamedType:
			line(n, "type %s = %s", strings.Join(n.Path, "::"), n.T)
		case *ast.PathExpr:
			line(n, "path %s -> %s : %s", n.Joined(), sym(n.Sym), n.TypeOf())
			return false
		case *ast.IntLit:
			line(n, "int %s value=%d : %s", n.Raw, int64(n.Value), n.TypeOf())
		case ast.Expr:
			line(n, "%T : %s", n, n.TypeOf())
		}
		return true
	})
	return b.String()
}

const annotateSrc = `
const LIMIT: int = 10;
type Point { x: int, y: int }
enum Verdict { Accept, Reject(string) }
topic Order { id: int, amount: int }

fn score(xs: [int], bonus: int) -> int {
    var s = bonus;
    for x in xs { let y = x * 2; s += y; }
    for k, v in {"a": 1} { s += v + len(k); }
    let low = -9223372036854775808;
    return s + low;
}

fn judge(v: Verdict) -> string {
    match v {
        Verdict::Accept => { return "ok"; },
        Verdict::Reject(why) => { let p = Point { y: 2, x: 1 }; return why + str(p.y); },
    }
}

@budget(steps: 500)
locus Ledger(currency: string, first: int) {
    var total: int = first;
    var seen: {int: bool} = {};
    on Order(o) {
        let t = o.amount;
        total += t;
        seen[o.id] = true;
        publish Order { amount: 1, id: 2 };
    }
    on start { print(report()); }
    fn report() -> string { return currency + str(total); }
}

main {
    spawn Ledger("EUR", LIMIT);
}
`

// TestAnnotations checks symbols, slots, types and indexes against
// testdata/annotate.golden.
func TestAnnotations(t *testing.T) {
	f, _, errs := checkSource(t, annotateSrc)
	if len(errs) > 0 {
		t.Fatalf("errors:\n%v", errs)
	}
	golden(t, "annotate.golden", dumpAnnotations(f))
}

// TestFoldMinInt checks that -9223372036854775808 becomes one literal
// whose value is math.MinInt64.
func TestFoldMinInt(t *testing.T) {
	f, _, errs := checkSource(t, "const M: int = -9223372036854775808;\nmain {}\n")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	c := f.Decls[0].(*ast.ConstDecl)
	lit, ok := c.Value.(*ast.IntLit)
	if !ok {
		t.Fatalf("value is %T, want *ast.IntLit", c.Value)
	}
	if int64(lit.Value) != math.MinInt64 || lit.Raw != "-9223372036854775808" || lit.TypeOf() != ast.IntType {
		t.Errorf("folded literal = %+v", lit)
	}
	if lit.Pos().Col != 16 || lit.End().Col != 36 {
		t.Errorf("folded span = %v..%v, want 1:16..1:36", lit.Pos(), lit.End())
	}
}

// TestResultLists checks the declaration lists and the scope.
func TestResultLists(t *testing.T) {
	src := `
const A: int = 1;
type P { x: int }
topic T { s: string }
enum E { X }
fn f() {}
locus L { fn g() {} }
main { spawn L; bind stdin to T; }
`
	_, res, errs := checkSource(t, src)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	// The fake standard library adds std::text::SEP, std::http::Response,
	// std::http::Request and std::text::Mode.
	if len(res.Consts) != 1+1 || len(res.Types) != 2+2 || len(res.Enums) != 1+1 || len(res.Loci) != 1 || res.Main == nil {
		t.Errorf("lists: %d consts, %d types, %d enums, %d loci, main %v",
			len(res.Consts), len(res.Types), len(res.Enums), len(res.Loci), res.Main != nil)
	}
	// User fns come first, then the standard library's.
	if res.Fns[0].Name.Name != "f" || res.Fns[0].Sym.Kind != ast.SymFn {
		t.Errorf("first fn = %s", res.Fns[0].Name.Name)
	}
	for name, kind := range map[string]ast.SymbolKind{
		"A": ast.SymConst, "P": ast.SymStruct, "T": ast.SymTopic, "E": ast.SymEnum,
		"f": ast.SymFn, "L": ast.SymLocus,
		"std::time::now_ms": ast.SymPrim, "std::text::twice": ast.SymFn,
		"std::http::Response": ast.SymStruct, "std::text::SEP": ast.SymConst,
	} {
		s := res.Scope[name]
		if s == nil || s.Kind != kind || s.Name != name {
			t.Errorf("scope[%q] = %+v, want kind %s", name, s, kind)
		}
	}
	for _, name := range []string{"g", "L.g", "len", "now_ms", "X"} {
		if res.Scope[name] != nil {
			t.Errorf("scope has %q", name)
		}
	}
	if rt := res.Scope["std::http::Response"].Type; rt.Name != "std::http::Response" || rt.String() != "std::http::Response" {
		t.Errorf("Response type named %q", rt.Name)
	}
	if res.Scope["std::time::now_ms"].Fn.NumSlots != 0 {
		t.Errorf("primitive slots")
	}
}
