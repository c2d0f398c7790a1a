package sir

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// shapeBase is the program the shape tests vary. Each variant below is
// the base with one edit (old -> new).
const shapeBase = `topic Order { id: int, amount: int }
topic Audit { note: string }
topic Line { text: string }

fn helper(x: int) -> int { return x * 2; }
fn unused() -> int { return 1; }

locus Shop(name: string) {
    var count: int = 0;
    on start { publish Order { id: 1, amount: helper(3) }; }
    on Line(l) { count += 1; }
}

locus Ledger {
    var total: int = 0;
    on Order(o) { total += o.amount; publish Audit { note: "ok" }; }
    fn report() -> string { return str(total); }
}

locus Auditor {
    on Audit(a) { print(a.note); }
}

main {
    spawn Shop("A") as shop;
    spawn Ledger;
    spawn Auditor on pool("audit");
    bind stdin to Line;
}
`

func shapeOf(t *testing.T, files map[string]string) *Shape {
	t.Helper()
	p, err := lowerFiles(files)
	if err != nil {
		t.Fatalf("%v\n%s", err, files["app.hl"])
	}
	return BuildShape(p)
}

func edit(t *testing.T, src, old, new string) string {
	t.Helper()
	if !strings.Contains(src, old) {
		t.Fatalf("edit: %q not in the program", old)
	}
	return strings.Replace(src, old, new, 1)
}

// TestShapeStable: edits that change no structure keep the hash.
func TestShapeStable(t *testing.T) {
	base := shapeOf(t, map[string]string{"app.hl": shapeBase}).Hash()

	// Reformatted: other spacing, line breaks and trailing commas.
	reformatted := strings.NewReplacer(
		"{ id: int, amount: int }", "{\n    id:int,\n    amount:   int,\n}",
		"    ", "\t",
		"return x * 2;", "return x*2;",
		"\n\n", "\n\n\n",
	).Replace(shapeBase)
	// Commented: line and block comments everywhere.
	commented := "// The shop.\n/* header */\n" + strings.NewReplacer(
		"fn helper", "/* doubles */ fn helper",
		"var count: int = 0;", "var count: int = 0; // orders seen",
		"main {", "// start-up\nmain { /* spawns */",
	).Replace(shapeBase)
	// Reordered: top-level declarations, locus members and state.
	decls := strings.Split(shapeBase, "\n\n")
	mainDecl := decls[len(decls)-1]
	rest := decls[:len(decls)-1]
	var rev []string
	for i := len(rest) - 1; i >= 0; i-- {
		rev = append(rev, rest[i])
	}
	reordered := strings.Join(rev, "\n\n") + "\n\n" + mainDecl
	reordered = edit(t, reordered, `    var total: int = 0;
    on Order(o) { total += o.amount; publish Audit { note: "ok" }; }
    fn report() -> string { return str(total); }`, `    fn report() -> string { return str(total); }
    on Order(o) { total += o.amount; publish Audit { note: "ok" }; }
    var total: int = 0;`)
	// Split into two files: the helper moves to an import.
	split := map[string]string{
		"app.hl": "import \"lib.hl\";\n" + edit(t, shapeBase, "fn helper(x: int) -> int { return x * 2; }\n", ""),
		"lib.hl": "fn helper(x: int) -> int { return x * 2; }\n",
	}
	// A body change that changes no call, publish or effect.
	body := edit(t, shapeBase, "return x * 2;", "let y = x + x; return y;")
	// State whose type is inferred from its initialiser: the shape sees
	// the type as if it were written.
	inferred := edit(t, edit(t, shapeBase, "var count: int = 0;", "var count = 0;"), "var total: int = 0;", "var total = 3 - 3;")

	for name, files := range map[string]map[string]string{
		"reformatted": {"app.hl": reformatted},
		"commented":   {"app.hl": commented},
		"reordered":   {"app.hl": reordered},
		"split":       split,
		"body":        {"app.hl": body},
		"inferred":    {"app.hl": inferred},
	} {
		if got := shapeOf(t, files).Hash(); got != base {
			t.Errorf("%s: hash changed", name)
		}
	}
}

// TestShapeChanges: each structural edit changes the hash, and no two
// edits give the same hash.
func TestShapeChanges(t *testing.T) {
	base := shapeOf(t, map[string]string{"app.hl": shapeBase})
	// Each edit is a name then pairs of old and new text.
	edits := [][]string{
		{"add subscription", `on Audit(a) { print(a.note); }`, `on Audit(a) { print(a.note); }
    on Order(o) { }`},
		{"remove subscription", `    on Line(l) { count += 1; }
`, ""},
		{"add publish edge", `on Line(l) { count += 1; }`, `on Line(l) { count += 1; publish Audit { note: l.text }; }`},
		{"publish through a call", `return x * 2;`, `publish Audit { note: "h" }; return x * 2;`},
		{"placement pinned", `spawn Ledger;`, `spawn Ledger on pinned;`},
		{"placement pool", `spawn Auditor on pool("audit");`, `spawn Auditor on pool("other");`},
		{"add call edge", `fn report() -> string { return str(total); }`, `fn report() -> string { return str(unused()); }`},
		{"effect via prim", `fn unused() -> int { return 1; }`, `fn unused() -> int { return std::time::now_ms(); }`},
		{"effect only", `fn unused() -> int { return 1; }`, `fn unused() -> int { print("x"); return 1; }`},
		{"new state var", `var total: int = 0;`, `var total: int = 0;
    var last: int = 0;`},
		{"state type", `var count: int = 0;`, `var count: float = 0.0;`, `count += 1;`, `count += 1.0;`},
		{"inferred state type", `var total: int = 0;`, `var total = "";`, `total += o.amount;`, `total += str(o.amount);`,
			`return str(total);`, `return total;`},
		{"payload field", `topic Audit { note: string }`, `topic Audit { note: string, level: int }`,
			`publish Audit { note: "ok" }`, `publish Audit { note: "ok", level: 1 }`},
		{"new topic", `topic Line`, `topic Extra { x: int }
topic Line`},
		{"locus param", `locus Shop(name: string)`, `locus Shop(name: bytes)`, `Shop("A")`, `Shop(b"A")`},
		{"instance name", `spawn Shop("A") as shop;`, `spawn Shop("A") as store;`},
		{"spawn order", `    spawn Shop("A") as shop;
    spawn Ledger;`, `    spawn Ledger;
    spawn Shop("A") as shop;`},
		{"unbind stdin", `    bind stdin to Line;
`, ""},
	}
	seen := map[string]string{base.Hash(): "base"}
	for _, e := range edits {
		src := shapeBase
		for i := 1; i+1 < len(e); i += 2 {
			src = edit(t, src, e[i], e[i+1])
		}
		h := shapeOf(t, map[string]string{"app.hl": src}).Hash()
		if prev, ok := seen[h]; ok {
			t.Errorf("%s: same hash as %s", e[0], prev)
			continue
		}
		seen[h] = e[0]
	}
}

func TestShapeContents(t *testing.T) {
	s := shapeOf(t, map[string]string{"app.hl": shapeBase})
	var b bytes.Buffer
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"  Ledger\n    state total: int\n    on Order\n    fn report\n",
		"  Shop(name: string)\n    state count: int\n    on Line\n    on start\n",
		"  Order { id: int, amount: int }\n",
		"  Auditor: Auditor on pool(\"audit\")\n",
		"  consumer 0 main main: shop, Ledger\n  consumer 1 pool audit: Auditor\n  consumer 2 ingress stdin:Line\n",
		"subscriptions:\n  Auditor <- Audit\n  Ledger <- Order\n  shop <- Line\n",
		"publishes:\n  Ledger.on Order -> Audit\n  Shop.on start -> Order\n",
		"calls:\n  Shop.on start -> helper\n",
		"  handler Auditor.on Audit {io}\n",
		"  start Shop.on start {publish(Order)}\n",
		"\nshape hash: " + s.Hash() + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("shape text lacks %q:\n%s", want, text)
		}
	}
	if !strings.HasSuffix(text, "shape hash: "+s.Hash()+"\n") || len(s.Hash()) != 64 {
		t.Errorf("text does not end with the hash")
	}
}

func TestShapeJSON(t *testing.T) {
	s := shapeOf(t, map[string]string{"app.hl": shapeBase})
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != 1 {
		t.Errorf("JSON spans %d lines, want one", n)
	}
	var obj map[string]any
	if err := json.Unmarshal(b.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"shape_hash", "loci", "types", "topics", "instances", "placement",
		"ingress", "subscriptions", "publishes", "calls", "effects"} {
		v, ok := obj[key]
		if !ok || v == nil {
			t.Errorf("key %s missing or null", key)
		}
	}
	if obj["shape_hash"] != s.Hash() {
		t.Errorf("shape_hash %v, want %s", obj["shape_hash"], s.Hash())
	}
	subs := obj["subscriptions"].([]any)
	if first := subs[0].(map[string]any); first["instance"] != "Auditor" || first["topic"] != "Audit" {
		t.Errorf("first subscription %v", first)
	}
	pubs := obj["publishes"].([]any)
	if first := pubs[0].(map[string]any); first["handler"] != "Ledger.on Order" || first["topic"] != "Audit" {
		t.Errorf("first publish %v", first)
	}
	// An empty program still has every list, as [].
	e := shapeOf(t, map[string]string{"app.hl": "main {}"})
	b.Reset()
	_ = e.WriteJSON(&b)
	if strings.Contains(b.String(), "null") {
		t.Errorf("empty shape JSON has null: %s", b.String())
	}
}

func TestShapeDot(t *testing.T) {
	s := shapeOf(t, map[string]string{"app.hl": shapeBase})
	var b bytes.Buffer
	if err := s.WriteDot(&b); err != nil {
		t.Fatal(err)
	}
	dot := b.String()
	for _, want := range []string{
		"digraph shape {\n",
		`"instance:shop" [shape=box, label="shop\nShop on main"];`,
		`"topic:Order" [shape=ellipse, label="Order"];`,
		`"topic:Order" -> "instance:Ledger";`,
		`"instance:shop" -> "topic:Order" [style=dashed];`,
		`"instance:Ledger" -> "topic:Audit" [style=dashed];`,
		`"stdin" -> "topic:Line";`,
	} {
		if !strings.Contains(dot, want) {
			t.Errorf("dot lacks %q:\n%s", want, dot)
		}
	}
	if !strings.HasSuffix(dot, "}\n") {
		t.Error("dot is not closed")
	}
}

// TestShapeGuardsAndShared: a guard (as its normalised SIR) and the
// shared flag are in the hash; reformatting a guard is not.
func TestShapeGuardsAndShared(t *testing.T) {
	src := `topic Job { worker: int }
fn ok(n: int) -> bool { return n >= 0; }
locus Worker(slot: int) {
    on Job(j) if j.worker == slot && ok(j.worker) { }
}
locus Member { on Job(j) shared { } }
main { spawn Worker(1); spawn Member; }
`
	base := shapeOf(t, map[string]string{"app.hl": src})
	if !slices.Contains(base.Loci[1].Handlers, "Job if and(eq(l0:j.worker, l1:slot), call ok(l0:j.worker))") || !slices.Contains(base.Loci[0].Handlers, "Job shared") {
		t.Fatalf("handlers %q, %q", base.Loci[0].Handlers, base.Loci[1].Handlers)
	}
	same := shapeOf(t, map[string]string{"app.hl": edit(t, src, "if j.worker == slot && ok(j.worker)", "if (j.worker == slot)\n        && ok( j.worker )")})
	if same.Hash() != base.Hash() {
		t.Errorf("reformatting a guard changed the hash")
	}
	for name, changed := range map[string]string{
		"guard operator": edit(t, src, "j.worker == slot", "j.worker != slot"),
		"guard dropped":  edit(t, src, " if j.worker == slot && ok(j.worker)", ""),
		"shared dropped": edit(t, src, "on Job(j) shared", "on Job(j)"),
		"shared added":   edit(t, src, "ok(j.worker) {", "ok(j.worker) shared {"),
	} {
		if shapeOf(t, map[string]string{"app.hl": changed}).Hash() == base.Hash() {
			t.Errorf("%s: the hash did not change", name)
		}
	}
}
