package stdlib

import (
	"sort"
	"strings"
	"testing"

	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/syntax"
)

// decl is one @primitive declaration found in the embedded sources.
type decl struct {
	name   string // qualified
	effect Effect
	sig    string // as written, normalised: "(ms: int)", "(n: int) -> int"
}

// declarations parses every embedded file with the parser's stdlib mode
// and returns its @primitive declarations.
func declarations(t *testing.T) []decl {
	t.Helper()
	var out []decl
	for _, f := range Files() {
		file, errs := syntax.ParseStdlib(f.Path, f.Module, f.Src)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", f.Path, errs)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FnDecl)
			if !ok {
				continue
			}
			effect, annotated := primitiveEffect(t, fn)
			if annotated != (fn.Body == nil) {
				t.Errorf("%s: fn %s: @primitive and a missing body go together", fn.Pos(), fn.Name.Name)
			}
			if !annotated {
				continue
			}
			out = append(out, decl{name: f.Module + "::" + fn.Name.Name, effect: effect, sig: signature(fn)})
		}
	}
	return out
}

// primitiveEffect returns the effect of fn's @primitive annotation.
func primitiveEffect(t *testing.T, fn *ast.FnDecl) (Effect, bool) {
	for _, an := range fn.Annotations {
		if an.Name.Name != "primitive" {
			continue
		}
		if len(an.Args) != 1 || an.Args[0].Name.Name != "effect" {
			t.Errorf("%s: @primitive needs exactly one argument, effect", an.Pos())
			return "", true
		}
		lit, ok := an.Args[0].Value.(*ast.StringLit)
		if !ok {
			t.Errorf("%s: @primitive effect must be a string literal", an.Pos())
			return "", true
		}
		return Effect(lit.Value), true
	}
	return "", false
}

func signature(fn *ast.FnDecl) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, p := range fn.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Name.Name + ": " + typeText(p.Type))
	}
	b.WriteByte(')')
	if fn.Result != nil {
		b.WriteString(" -> " + typeText(fn.Result))
	}
	return b.String()
}

func typeText(t ast.TypeExpr) string {
	switch t := t.(type) {
	case *ast.NamedType:
		name := strings.Join(t.Path, "::")
		if len(t.Args) > 0 {
			var args []string
			for _, a := range t.Args {
				args = append(args, typeText(a))
			}
			name += "<" + strings.Join(args, ", ") + ">"
		}
		return name
	case *ast.ListType:
		return "[" + typeText(t.Elem) + "]"
	case *ast.MapType:
		return "{" + typeText(t.Key) + ": " + typeText(t.Value) + "}"
	}
	return "?"
}

// TestTableMatchesDeclarations checks that the Go table and the @primitive
// declarations agree in both directions, effects included.
func TestTableMatchesDeclarations(t *testing.T) {
	declared := map[string]decl{}
	for _, d := range declarations(t) {
		if _, dup := declared[d.name]; dup {
			t.Errorf("%s declared twice", d.name)
		}
		declared[d.name] = d
		p, ok := Lookup(d.name)
		if !ok {
			t.Errorf("%s is declared @primitive but missing from the table", d.name)
			continue
		}
		if p.Effect != d.effect {
			t.Errorf("%s: declared effect %q, table effect %q", d.name, d.effect, p.Effect)
		}
	}
	undeclared := map[string]bool{"print": true, "std::json::encode": true}
	for _, p := range All() {
		if _, ok := declared[p.Name]; !ok && !undeclared[p.Name] {
			t.Errorf("%s is in the table but not declared in any std/*.hl", p.Name)
		}
		if _, ok := declared[p.Name]; ok && undeclared[p.Name] {
			t.Errorf("%s must not be declared in Hale", p.Name)
		}
	}
}

// TestSignatures pins every primitive's signature to the language
// reference (§6): a change to a declaration must be a change to the
// language.
func TestSignatures(t *testing.T) {
	want := map[string]string{
		"std::time::now_ms":       "() -> int",
		"std::time::monotonic_ns": "() -> int",
		"std::time::sleep_ms":     "(ms: int)",
		"std::rand::next_int":     "(n: int) -> int",
		"std::rand::next_float":   "() -> float",
		"std::os::getrandom":      "(n: int) -> bytes",
		"std::os::env":            "(name: string, default: string) -> string",
		"std::os::args":           "() -> [string]",
		"std::fs::read_text":      "(p: string) -> string",
		"std::fs::read_bytes":     "(p: string) -> bytes",
		"std::fs::exists":         "(p: string) -> bool",
		"std::fs::list_dir":       "(p: string) -> [string]",
		"std::fs::write_text":     "(p: string, s: string)",
		"std::fs::append_text":    "(p: string, s: string)",
		"std::http::get":          "(url: string) -> Response",
		"std::http::post":         "(url: string, body: string, content_type: string) -> Response",
		"std::io::println":        "(s: string)",
		"std::io::eprintln":       "(s: string)",
		"std::process::exit":      "(code: int)",
		"std::math::sqrt":         "(x: float) -> float",
		"std::math::floor":        "(x: float) -> float",
		"std::math::ceil":         "(x: float) -> float",
		"std::math::pow":          "(x: float, y: float) -> float",
		"std::math::log":          "(x: float) -> float",
		"std::math::exp":          "(x: float) -> float",
		"std::math::sin":          "(x: float) -> float",
		"std::math::cos":          "(x: float) -> float",
		"std::math::tan":          "(x: float) -> float",
		"std::math::asin":         "(x: float) -> float",
		"std::math::acos":         "(x: float) -> float",
		"std::math::atan":         "(x: float) -> float",
		"std::math::atan2":        "(y: float, x: float) -> float",
		"std::math::hypot":        "(x: float, y: float) -> float",
		"std::os::secret":         "(name: string) -> Option<secret>",
		"std::http::send":         "(req: Request) -> Response",
	}
	got := map[string]string{}
	for _, d := range declarations(t) {
		got[d.name] = d.sig
	}
	for name, sig := range want {
		if got[name] != sig {
			t.Errorf("%s: signature %q, want %q", name, got[name], sig)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: declared but not in the language reference", name)
		}
	}
}

// TestIDsAreFrozen pins every ID. Appending a primitive means adding a line
// here; changing an existing line breaks every program image and artifact.
func TestIDsAreFrozen(t *testing.T) {
	frozen := []struct {
		id   uint16
		name string
	}{
		{2, "print"},
		{3, "std::time::now_ms"}, {4, "std::time::monotonic_ns"}, {5, "std::time::sleep_ms"},
		{6, "std::rand::next_int"}, {7, "std::rand::next_float"},
		{8, "std::os::getrandom"}, {9, "std::os::env"}, {10, "std::os::args"},
		{11, "std::fs::read_text"}, {12, "std::fs::read_bytes"}, {13, "std::fs::exists"},
		{14, "std::fs::list_dir"}, {15, "std::fs::write_text"}, {16, "std::fs::append_text"},
		{17, "std::http::get"}, {18, "std::http::post"},
		{19, "std::io::println"}, {20, "std::io::eprintln"},
		{21, "std::process::exit"},
		{22, "std::math::sqrt"}, {23, "std::math::floor"}, {24, "std::math::ceil"},
		{25, "std::math::pow"}, {26, "std::math::log"}, {27, "std::math::exp"},
		{28, "std::json::encode"},
		{29, "std::math::sin"}, {30, "std::math::cos"}, {31, "std::math::tan"}, {32, "std::math::asin"},
		{33, "std::math::acos"}, {34, "std::math::atan"}, {35, "std::math::atan2"}, {36, "std::math::hypot"},
		{37, "std::os::secret"}, {38, "std::http::send"},
	}
	if len(frozen) != len(All()) {
		t.Errorf("table has %d primitives, frozen list %d: add new ones to the list", len(All()), len(frozen))
	}
	for _, f := range frozen {
		p, ok := ByID(f.id)
		if !ok || p.Name != f.name {
			t.Errorf("ByID(%d) = %q, %v; want %q", f.id, p.Name, ok, f.name)
		}
		q, ok := Lookup(f.name)
		if !ok || q.ID != f.id {
			t.Errorf("Lookup(%q).ID = %d, %v; want %d", f.name, q.ID, ok, f.id)
		}
	}
	seen := map[uint16]string{}
	for _, p := range table {
		if p.ID == 0 || p.ID == PublishID {
			t.Errorf("%s has reserved ID %d", p.Name, p.ID)
		}
		if other, dup := seen[p.ID]; dup {
			t.Errorf("ID %d used by %s and %s", p.ID, other, p.Name)
		}
		seen[p.ID] = p.Name
	}
	if _, ok := ByID(PublishID); ok {
		t.Errorf("ByID(PublishID) found a primitive")
	}
}

// TestJournalKinds checks that the journal treatment follows from the
// effect, as the replay contract lays it out.
func TestJournalKinds(t *testing.T) {
	want := map[Effect]JournalKind{
		Time: Input, Rand: Input, Entropy: Input, Env: Input, Args: Input, FSRead: Input,
		FSWrite: Virtual, Net: Virtual,
		IO: Output, Exit: Output,
		NoEffect: Pure,
	}
	for _, p := range All() {
		if !Known(p.Effect) {
			t.Errorf("%s: unknown effect %q", p.Name, p.Effect)
		}
		if w := want[p.Effect]; p.Journal != w {
			t.Errorf("%s: journal %v, want %v", p.Name, p.Journal, w)
		}
		if p.SkipOnReplay != (p.Name == "std::time::sleep_ms") {
			t.Errorf("%s: SkipOnReplay = %v", p.Name, p.SkipOnReplay)
		}
	}
	if p, _ := Lookup("print"); p.Effect != IO || p.Journal != Output {
		t.Errorf("print = %+v, want io output", p)
	}
}

func TestAllSorted(t *testing.T) {
	all := All()
	if !sort.SliceIsSorted(all, func(i, j int) bool { return all[i].Name < all[j].Name }) {
		t.Errorf("All() is not sorted by name")
	}
	all[0].Name = "changed"
	if All()[0].Name == "changed" {
		t.Errorf("All() shares its slice with the table")
	}
}

func TestFiles(t *testing.T) {
	var paths, modules []string
	for _, f := range Files() {
		paths = append(paths, f.Path)
		modules = append(modules, f.Module)
		if len(f.Src) == 0 {
			t.Errorf("%s is empty", f.Path)
		}
	}
	wantPaths := []string{"std/fs.hl", "std/http.hl", "std/io.hl", "std/json.hl", "std/math.hl", "std/os.hl", "std/process.hl", "std/rand.hl", "std/time.hl"}
	if strings.Join(paths, " ") != strings.Join(wantPaths, " ") {
		t.Errorf("paths = %v, want %v", paths, wantPaths)
	}
	wantModules := "std::fs std::http std::io std::json std::math std::os std::process std::rand std::time"
	if got := strings.Join(modules, " "); got != wantModules {
		t.Errorf("modules = %s, want %s", got, wantModules)
	}
}

func TestNondeterministic(t *testing.T) {
	var got []string
	for _, e := range append(Effects(), NoEffect, Publish("X")) {
		if Nondeterministic(e) {
			got = append(got, string(e))
		}
	}
	if want := "time rand entropy env args fs.read fs.write net"; strings.Join(got, " ") != want {
		t.Errorf("nondeterministic = %v, want %s", got, want)
	}
}

func TestPublishEffect(t *testing.T) {
	e := Publish("OrderPlaced")
	if e != "publish(OrderPlaced)" {
		t.Errorf("Publish = %q", e)
	}
	if topic, ok := e.Topic(); !ok || topic != "OrderPlaced" {
		t.Errorf("Topic() = %q, %v", topic, ok)
	}
	if _, ok := Time.Topic(); ok {
		t.Errorf("time has a topic")
	}
}

// TestResponseType pins std::http::Response to the language reference.
func TestResponseType(t *testing.T) {
	var found bool
	for _, f := range Files() {
		if f.Module != "std::http" {
			continue
		}
		file, errs := syntax.ParseStdlib(f.Path, f.Module, f.Src)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", f.Path, errs)
		}
		for _, d := range file.Decls {
			td, ok := d.(*ast.TypeDecl)
			if !ok || td.Name.Name != "Response" {
				continue
			}
			found = true
			var fields []string
			for _, fd := range td.Fields {
				fields = append(fields, fd.Name.Name+": "+typeText(fd.Type))
			}
			if got, want := strings.Join(fields, ", "), "status: int, body: string, headers: {string: string}"; td.Topic || got != want {
				t.Errorf("Response { %s } (topic %v), want { %s }", got, td.Topic, want)
			}
		}
	}
	if !found {
		t.Errorf("std/http.hl declares no type Response")
	}
}
