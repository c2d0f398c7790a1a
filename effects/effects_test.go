package effects

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hale-lang/hale/lang"
	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/stdlib"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// load loads testdata/name and fails the test on a load error.
func load(t *testing.T, name string) *lang.Program {
	t.Helper()
	p, err := lang.LoadFS(os.DirFS("testdata"), name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return p
}

// TestGolden analyses every testdata/*.hl and compares the WriteText
// listing, followed by the diagnostics, with testdata/*.golden.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.hl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test programs: %v", err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(strings.TrimSuffix(name, ".hl"), func(t *testing.T) {
			info, diags := Analyze(load(t, name))
			var b bytes.Buffer
			if err := info.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if len(diags) > 0 {
				b.WriteString("-- errors --\n")
				for _, d := range diags.Sort() {
					b.WriteString(d.Error() + "\n")
				}
			}
			golden := strings.TrimSuffix(file, ".hl") + ".golden"
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got := b.String(); got != string(want) {
				t.Errorf("%s differs:\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}

func TestWriteJSON(t *testing.T) {
	info, diags := Analyze(load(t, "imports.hl"))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	var b bytes.Buffer
	if err := info.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	want := `{"entries":[` +
		`{"kind":"handler","name":"Ticker.on start","position":"imports.hl:7:5","effects":["publish(Tick)","time"]},` +
		`{"kind":"handler","name":"Ticker.on Tick","position":"imports.hl:8:5","effects":["io"]},` +
		`{"kind":"fn","name":"now","position":"lib/clock.hl:1:4","effects":["time"]},` +
		`{"kind":"fn","name":"log_tick","position":"lib/clock.hl:3:4","effects":["io"]}` +
		"]}\n"
	if b.String() != want {
		t.Errorf("WriteJSON:\n got %s\nwant %s", b.String(), want)
	}

	// An empty listing is still an object with an array.
	b.Reset()
	if err := (&Info{}).WriteJSON(&b); err != nil || b.String() != "{\"entries\":[]}\n" {
		t.Errorf("empty WriteJSON = %q, %v", b.String(), err)
	}
}

// TestQueries exercises Fn, Handler, Init, Calls and Publishes on
// publish.hl.
func TestQueries(t *testing.T) {
	p := load(t, "publish.hl")
	info, diags := Analyze(p)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	fns := map[string]*ast.FnDecl{}
	handlers := map[string]*ast.Handler{}
	loci := map[string]*ast.LocusDecl{}
	for _, e := range info.Entries() {
		if e.Fn != nil {
			fns[e.Name] = e.Fn
		} else {
			handlers[e.Name] = e.Handler
		}
	}
	for _, l := range p.Loci {
		loci[l.Name.Name] = l
	}

	if got := info.Fn(fns["place"]).String(); got != "{publish(Audit), publish(OrderPlaced)}" {
		t.Errorf("Fn(place) = %s", got)
	}
	if got := info.Handler(handlers["Ledger.on OrderPlaced"]).String(); got != "{publish(Audit), time}" {
		t.Errorf("Handler(Ledger.on OrderPlaced) = %s", got)
	}
	if got := strings.Join(info.Publishes(handlers["Shop.on start"]), " "); got != "Audit OrderPlaced" {
		t.Errorf("Publishes(Shop.on start) = %s", got)
	}
	if got := info.Publishes(fns["Ledger.report"]); len(got) != 0 {
		t.Errorf("Publishes(Ledger.report) = %v", got)
	}
	if got := info.Init(loci["Ledger"]); !got.Pure() {
		t.Errorf("Init(Ledger) = %s", got)
	}

	// Direct calls only, in source order, with positions.
	var calls []string
	for _, c := range info.Calls(fns["Ledger.stamp"]) {
		calls = append(calls, c.Callee.Name+"@"+c.Pos.String())
	}
	want := "audit@publish.hl:28:9 str@publish.hl:28:15 str@publish.hl:28:34 std::time::now_ms@publish.hl:28:38"
	if got := strings.Join(calls, " "); got != want {
		t.Errorf("Calls(Ledger.stamp) =\n %s\nwant\n %s", got, want)
	}
	if got := info.Calls(handlers["Ledger.on start"]); len(got) != 1 || got[0].Callee.Kind != ast.SymBuiltin {
		t.Errorf("Calls(Ledger.on start) = %+v", got)
	}

	// A @primitive declaration reports its own effect.
	for _, fn := range p.Fns {
		if fn.Sym != nil && fn.Sym.Name == "std::http::get" {
			if got := info.Fn(fn).String(); got != "{net}" {
				t.Errorf("Fn(std::http::get) = %s", got)
			}
		}
	}
}

// TestDeterministicMessage pins the exact text of E0701.
func TestDeterministicMessage(t *testing.T) {
	_, diags := Analyze(load(t, "deterministic.hl"))
	want := `deterministic.hl:9:4: @deterministic fn "score" reaches nondeterministic effect time: ` +
		`score -> helper -> std::time::now_ms (deterministic.hl:4:29) [E0701]`
	for _, d := range diags {
		if d.Error() == want {
			return
		}
	}
	t.Errorf("no diagnostic\n %s\nin\n%v", want, diags)
}

// TestStdlibHidden checks that standard library internals never appear in
// the listing and that a program without user fns lists nothing.
func TestStdlibHidden(t *testing.T) {
	info, diags := Analyze(load(t, "primitives.hl"))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	for _, e := range info.Entries() {
		if strings.HasPrefix(e.Pos.File, "std/") || strings.Contains(e.Name, "::") {
			t.Errorf("stdlib entry listed: %+v", e)
		}
	}
	if info, diags := Analyze(nil); len(diags) > 0 || len(info.Entries()) != 0 {
		t.Errorf("Analyze(nil) = %v, %v", info.Entries(), diags)
	}
}

func TestSet(t *testing.T) {
	s := NewSet(stdlib.Time, stdlib.IO, stdlib.Publish("OrderPlaced"), stdlib.IO)
	if got := s.String(); got != "{io, publish(OrderPlaced), time}" {
		t.Errorf("String = %s", got)
	}
	if s.Len() != 3 || !s.Has(stdlib.Time) || s.Has(stdlib.Net) || !s.Has("publish(OrderPlaced)") {
		t.Errorf("Len/Has wrong for %s", s)
	}
	if got := (Set{}).String(); got != "{}" {
		t.Errorf("empty String = %s", got)
	}
	if sl := (Set{}).Slice(); sl == nil || len(sl) != 0 {
		t.Errorf("empty Slice = %#v", sl)
	}
	u := NewSet(stdlib.Net).Union(s)
	if got := u.String(); got != "{io, net, publish(OrderPlaced), time}" {
		t.Errorf("Union = %s", got)
	}
	if s.String() != "{io, publish(OrderPlaced), time}" {
		t.Errorf("Union changed its receiver: %s", s)
	}
	sl := s.Slice()
	sl[0] = "changed"
	if s.Has("changed") {
		t.Errorf("Slice shares storage")
	}
	if got := strings.Join(u.Topics(), " "); got != "OrderPlaced" {
		t.Errorf("Topics = %s", got)
	}
	if got := strings.Join(u.nondeterministic(), " "); got != "net time" {
		t.Errorf("nondeterministic = %s", got)
	}
	if !NewSet(stdlib.IO, stdlib.Time).Equal(NewSet(stdlib.Time, stdlib.IO)) || s.Equal(u) {
		t.Errorf("Equal wrong")
	}
}

func TestWriteTextAlignment(t *testing.T) {
	info := &Info{entries: []Entry{
		{Kind: KindFn, Name: "score", Effects: Set{}},
		{Kind: KindHandler, Name: "Ledger.on OrderPlaced", Effects: NewSet(stdlib.Publish("Audit"), stdlib.Time)},
		{Kind: KindLocusFn, Name: "Ledger.report", Effects: NewSet(stdlib.IO)},
	}}
	var b bytes.Buffer
	if err := info.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"fn score                       {}\n" +
		"handler Ledger.on OrderPlaced  {publish(Audit), time}\n" +
		"locus fn Ledger.report         {io}\n"
	if b.String() != want {
		t.Errorf("WriteText:\n%s\nwant\n%s", b.String(), want)
	}
}

// TestBackstops covers the rules the checker already makes unreachable
// from source (a const value cannot call anything, every primitive has a
// table entry) by grafting calls into a loaded program.
func TestBackstops(t *testing.T) {
	p := load(t, "initialisers.hl")
	var stampCall ast.Expr // `stamp()` from Ledger.total's initialiser
	for _, l := range p.Loci {
		stampCall = l.State[0].Value
	}
	pos := ast.Pos{File: "graft.hl", Line: 1, Col: 1}
	unknown := &ast.CallExpr{
		Span: ast.Span{From: pos},
		Fun: &ast.PathExpr{Parts: []*ast.Ident{{Name: "std"}, {Name: "time"}, {Name: "nope"}},
			Sym: &ast.Symbol{Kind: ast.SymPrim, Name: "std::time::nope"}},
	}
	entry := p.Files[0]
	entry.Decls = append(entry.Decls,
		&ast.ConstDecl{Name: &ast.Ident{Name: "NOW"}, Value: stampCall},
		&ast.FnDecl{Name: &ast.Ident{Name: "graft", Span: ast.Span{From: pos}},
			Body: &ast.Block{Stmts: []ast.Stmt{&ast.ExprStmt{X: unknown}}}},
	)
	_, diags := Analyze(p)
	var got []string
	for _, d := range diags {
		if d.Code == CodeConstEffect || d.Code == CodeUnknownPrimitive {
			got = append(got, d.Error())
		}
	}
	want := []string{
		`graft.hl:1:1: primitive "std::time::nope" has no entry in the primitive table [E0705]`,
		`initialisers.hl:11:22: const "NOW" has effect time; const values must be pure [E0704]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
