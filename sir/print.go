package sir

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/hale-lang/hale/lang/ast"
)

// WriteText writes the program in SIR's text form, the output of
// `hale build app.hl --emit sir`. The form is deterministic: the same
// program always prints the same bytes. Sections come in a fixed order
// (types, consts, prims, topics, loci, instances, ingress, consumers, then
// every function); frame slots print as l<slot>:<name>, instance slots as
// s<slot>:<name>, operations by their SIR names (add.int, len.list), and
// each statement ends with its source position as `// line:col` (with the
// file when it differs from the function's).
func (p *Program) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	pr := &printer{p: p, w: bw}
	pr.program()
	return bw.Flush()
}

// Text returns the program's text form.
func (p *Program) Text() string {
	var b strings.Builder
	_ = p.WriteText(&b)
	return b.String()
}

type printer struct {
	p      *Program
	w      *bufio.Writer
	fn     *Func
	locus  *Locus
	indent int
	shape  bool // for the shape graph: functions by name, without their index
}

func (pr *printer) printf(format string, args ...any) { fmt.Fprintf(pr.w, format, args...) }

func (pr *printer) line(format string, args ...any) {
	for i := 0; i < pr.indent; i++ {
		pr.w.WriteString("  ")
	}
	pr.printf(format, args...)
	pr.w.WriteByte('\n')
}

// TypeName renders a type as Hale source writes it: int, [string],
// {string: [int]}, Point.
func (p *Program) TypeName(t TypeRef) string {
	var b strings.Builder
	p.writeType(&b, t, 0)
	return b.String()
}

func (p *Program) writeType(b *strings.Builder, t TypeRef, depth int) {
	if t < 0 || int(t) >= len(p.Types) || depth > 64 {
		fmt.Fprintf(b, "t%d?", t)
		return
	}
	ty := p.Types[t]
	switch ty.Kind {
	case KindList:
		b.WriteByte('[')
		p.writeType(b, ty.Elem, depth+1)
		b.WriteByte(']')
	case KindMap:
		b.WriteByte('{')
		p.writeType(b, ty.Key, depth+1)
		b.WriteString(": ")
		p.writeType(b, ty.Elem, depth+1)
		b.WriteByte('}')
	case KindStruct, KindEnum:
		b.WriteString(ty.Name)
	default:
		b.WriteString(ty.Kind.String())
	}
}

func (pr *printer) tn(t TypeRef) string { return pr.p.TypeName(t) }

func (pr *printer) program() {
	p := pr.p
	pr.line("sir %s", p.Entry)
	if len(p.Files) > 0 {
		pr.line("files %s", strings.Join(p.Files, " "))
	}

	pr.line("")
	pr.line("types:")
	pr.indent++
	for i := NumBasic; i < len(p.Types); i++ {
		pr.line("t%d %s", i, pr.typeDef(p.Types[i]))
	}
	pr.indent--

	if len(p.Consts) > 0 {
		pr.line("")
		pr.line("consts:")
		pr.indent++
		for _, c := range p.Consts {
			pr.line("%s: %s = %s", c.Name, pr.tn(c.Type), c.Value)
		}
		pr.indent--
	}

	if len(p.Prims) > 0 {
		pr.line("")
		pr.line("prims:")
		pr.indent++
		for i, pm := range p.Prims {
			params := make([]string, len(pm.Params))
			for j, t := range pm.Params {
				params[j] = pr.tn(t)
			}
			eff := pm.Effect
			if eff == "" {
				eff = "pure"
			}
			pr.line("p%d %s(%s)%s id %d effect %s", i, pm.Name, strings.Join(params, ", "), pr.result(pm.Result), pm.ID, eff)
		}
		pr.indent--
	}

	pr.line("")
	pr.line("topics:")
	pr.indent++
	for i, t := range p.Topics {
		subs := make([]string, len(t.Subscribers))
		for j, s := range t.Subscribers {
			subs[j] = pr.instName(s)
		}
		pr.line("topic%d %s: t%d subscribers [%s]", i, t.Name, t.Type, strings.Join(subs, ", "))
	}
	pr.indent--

	pr.line("")
	pr.line("loci:")
	pr.indent++
	for i, l := range p.Loci {
		params := make([]string, len(l.Params))
		for j, v := range l.Params {
			params[j] = fmt.Sprintf("s%d:%s: %s", v.Slot, v.Name, pr.tn(v.Type))
		}
		budget := ""
		if l.Budget > 0 {
			budget = fmt.Sprintf(" budget %d", l.Budget)
		}
		pr.line("locus%d %s(%s) slots %d%s", i, l.Name, strings.Join(params, ", "), l.NumSlots, budget)
		pr.indent++
		for _, v := range l.State {
			pr.line("state s%d:%s: %s", v.Slot, v.Name, pr.tn(v.Type))
		}
		pr.line("init %s", pr.funcName(l.Init))
		if l.Start >= 0 {
			pr.line("start %s", pr.funcName(l.Start))
		}
		for _, h := range l.Handlers {
			extra := ""
			if h.Guard >= 0 {
				extra += " if " + pr.funcName(h.Guard)
			}
			if h.Shared {
				extra += " shared"
			}
			pr.line("on %s %s%s", pr.topicName(h.Topic), pr.funcName(h.Func), extra)
		}
		for _, f := range l.Fns {
			pr.line("fn %s", pr.funcName(f))
		}
		pr.indent--
	}
	pr.indent--

	pr.line("")
	pr.line("instances:")
	pr.indent++
	for i, in := range p.Instances {
		args := make([]string, len(in.Args))
		for j, a := range in.Args {
			args[j] = pr.expr(a)
		}
		locus := "?"
		if in.Locus >= 0 && in.Locus < len(p.Loci) {
			locus = p.Loci[in.Locus].Name
		}
		pr.line("i%d %s = %s(%s) on %s consumer %d  // %s", i, in.Name, locus, strings.Join(args, ", "),
			in.Placement, in.Consumer, pr.pos(in.Pos))
	}
	pr.indent--

	if len(p.Ingress) > 0 {
		pr.line("")
		pr.line("ingress:")
		pr.indent++
		for _, g := range p.Ingress {
			if g.NATS != nil {
				pr.line("%s -> %s consumer %d  // %s", g.NATS, pr.topicName(g.Topic), g.Consumer, pr.pos(g.Pos))
				continue
			}
			pr.line("stdin -> %s consumer %d  // %s", pr.topicName(g.Topic), g.Consumer, pr.pos(g.Pos))
		}
		pr.indent--
	}
	if len(p.Exports) > 0 {
		pr.line("")
		pr.line("exports:")
		pr.indent++
		for _, x := range p.Exports {
			pr.line("%s -> %s  // %s", pr.topicName(x.Topic), &x.NATS, pr.pos(x.Pos))
		}
		pr.indent--
	}

	pr.line("")
	pr.line("consumers:")
	pr.indent++
	for i, c := range p.Consumers {
		insts := make([]string, len(c.Instances))
		for j, s := range c.Instances {
			insts[j] = pr.instName(s)
		}
		pr.line("c%d %s %s [%s]", i, c.Kind, c.Name, strings.Join(insts, ", "))
	}
	pr.indent--

	for i, f := range p.Funcs {
		pr.line("")
		pr.function(i, f)
	}
}

func (pl Placement) String() string {
	if pl.Kind == ast.PlacePool {
		return "pool(" + strconv.Quote(pl.Pool) + ")"
	}
	return pl.Kind.String()
}

func (pr *printer) typeDef(t *Type) string {
	var b strings.Builder
	switch t.Kind {
	case KindStruct:
		if t.Topic {
			b.WriteString("topic ")
		} else {
			b.WriteString("struct ")
		}
		b.WriteString(t.Name)
		b.WriteString(" {")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, " %s: %s", f.Name, pr.tn(f.Type))
		}
		b.WriteString(" }")
	case KindEnum:
		b.WriteString("enum ")
		b.WriteString(t.Name)
		b.WriteString(" {")
		for i, v := range t.Variants {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte(' ')
			b.WriteString(v.Name)
			if len(v.Fields) > 0 {
				fs := make([]string, len(v.Fields))
				for j, ft := range v.Fields {
					fs[j] = pr.tn(ft)
				}
				fmt.Fprintf(&b, "(%s)", strings.Join(fs, ", "))
			}
		}
		b.WriteString(" }")
	case KindList:
		fmt.Fprintf(&b, "list [%s]", pr.tn(t.Elem))
	case KindMap:
		fmt.Fprintf(&b, "map {%s: %s}", pr.tn(t.Key), pr.tn(t.Elem))
	default:
		b.WriteString(t.Kind.String())
	}
	return b.String()
}

func (pr *printer) result(t TypeRef) string {
	if t == TVoid {
		return ""
	}
	return " -> " + pr.tn(t)
}

func (pr *printer) funcName(i int) string {
	if pr.shape && i >= 0 && i < len(pr.p.Funcs) {
		return pr.p.Funcs[i].Name
	}
	if i >= 0 && i < len(pr.p.Funcs) {
		return fmt.Sprintf("f%d:%s", i, pr.p.Funcs[i].Name)
	}
	return fmt.Sprintf("f%d?", i)
}

func (pr *printer) topicName(i int) string {
	if i >= 0 && i < len(pr.p.Topics) {
		return pr.p.Topics[i].Name
	}
	return fmt.Sprintf("topic%d?", i)
}

func (pr *printer) instName(i int) string {
	if i >= 0 && i < len(pr.p.Instances) {
		return pr.p.Instances[i].Name
	}
	return fmt.Sprintf("i%d?", i)
}

// pos prints a position, dropping the file when it is the current
// function's.
func (pr *printer) pos(p ast.Pos) string {
	if pr.fn != nil && p.File == pr.fn.Pos.File {
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	return p.String()
}

func (pr *printer) function(i int, f *Func) {
	pr.fn = f
	pr.locus = nil
	if f.Locus >= 0 && f.Locus < len(pr.p.Loci) {
		pr.locus = pr.p.Loci[f.Locus]
	}
	params := make([]string, 0, f.NumParams)
	for s := 0; s < f.NumParams; s++ {
		params = append(params, fmt.Sprintf("%s: %s", pr.local(s), pr.tn(pr.localType(s))))
	}
	eff := "{" + strings.Join(f.Effects, ", ") + "}"
	pr.line("func f%d %s %s(%s)%s slots %d effects %s  // %s", i, f.Kind, f.Name,
		strings.Join(params, ", "), pr.result(f.Result), f.NumSlots, eff, f.Pos)
	pr.indent++
	pr.stmts(f.Body)
	pr.indent--
	pr.fn = nil
}

func (pr *printer) local(s int) string {
	if pr.fn != nil && s >= 0 && s < len(pr.fn.Locals) && pr.fn.Locals[s].Name != "" {
		return fmt.Sprintf("l%d:%s", s, pr.fn.Locals[s].Name)
	}
	return fmt.Sprintf("l%d", s)
}

func (pr *printer) localType(s int) TypeRef {
	if pr.fn != nil && s >= 0 && s < len(pr.fn.Locals) {
		return pr.fn.Locals[s].Type
	}
	return TVoid
}

func (pr *printer) state(s int) string {
	if pr.locus != nil {
		for _, v := range pr.locus.Params {
			if v.Slot == s {
				return fmt.Sprintf("s%d:%s", s, v.Name)
			}
		}
		for _, v := range pr.locus.State {
			if v.Slot == s {
				return fmt.Sprintf("s%d:%s", s, v.Name)
			}
		}
	}
	return fmt.Sprintf("s%d", s)
}

func (pr *printer) stmts(list []Stmt) {
	for _, s := range list {
		pr.stmt(s)
	}
}

func (pr *printer) block(head string, body []Stmt, at ast.Pos) {
	pr.line("%s {  // %s", head, pr.pos(at))
	pr.indent++
	pr.stmts(body)
	pr.indent--
}

func (pr *printer) stmt(s Stmt) {
	at := pr.pos(s.Pos())
	switch s := s.(type) {
	case *Let:
		pr.line("let %s = %s  // %s", pr.local(s.Slot), pr.expr(s.Value), at)
	case *SetLocal:
		pr.line("set %s = %s  // %s", pr.local(s.Slot), pr.expr(s.Value), at)
	case *SetState:
		pr.line("set %s = %s  // %s", pr.state(s.Slot), pr.expr(s.Value), at)
	case *SetIndex:
		pr.line("set.%s %s[%s] = %s  // %s", s.Kind, pr.expr(s.X), pr.expr(s.Index), pr.expr(s.Value), at)
	case *SetField:
		pr.line("set %s.%s = %s  // %s", pr.expr(s.X), pr.fieldName(s.X.Type(), s.Field), pr.expr(s.Value), at)
	case *ExprStmt:
		pr.line("%s  // %s", pr.expr(s.X), at)
	case *If:
		pr.block("if "+pr.expr(s.Cond), s.Then, s.Pos())
		if len(s.Else) > 0 {
			pr.line("} else {")
			pr.indent++
			pr.stmts(s.Else)
			pr.indent--
		}
		pr.line("}")
	case *While:
		pr.block("while "+pr.expr(s.Cond), s.Body, s.Pos())
		pr.line("}")
	case *ForRange:
		pr.block(fmt.Sprintf("for %s in %s..%s (hi %s)", pr.local(s.Slot), pr.expr(s.Lo), pr.expr(s.Hi), pr.local(s.HiSlot)), s.Body, s.Pos())
		pr.line("}")
	case *ForList:
		pr.block(fmt.Sprintf("for %s in list %s (list %s, idx %s)", pr.local(s.Slot), pr.expr(s.List), pr.local(s.ListSlot), pr.local(s.IdxSlot)), s.Body, s.Pos())
		pr.line("}")
	case *ForMap:
		vars := pr.local(s.KeySlot)
		if s.ValSlot >= 0 {
			vars += ", " + pr.local(s.ValSlot)
		}
		pr.block(fmt.Sprintf("for %s in map %s (map %s, idx %s)", vars, pr.expr(s.Map), pr.local(s.MapSlot), pr.local(s.IdxSlot)), s.Body, s.Pos())
		pr.line("}")
	case *Match:
		pr.line("match.%s %s (%s) {  // %s", s.Kind, pr.expr(s.X), pr.local(s.Slot), at)
		pr.indent++
		for _, a := range s.Arms {
			pr.block(pr.pattern(s, a)+" =>", a.Body, a.Pos)
			pr.line("}")
		}
		if s.HasDefault {
			pr.line("_ => {")
			pr.indent++
			pr.stmts(s.Default)
			pr.indent--
			pr.line("}")
		}
		pr.indent--
		pr.line("}")
	case *Publish:
		var ty TypeRef = -1
		if s.Topic >= 0 && s.Topic < len(pr.p.Topics) {
			ty = pr.p.Topics[s.Topic].Type
		}
		if s.After != nil {
			pr.line("publish %s %s after %s  // %s", pr.topicName(s.Topic), pr.fields(ty, s.Fields, s.Order), pr.expr(s.After), at)
			break
		}
		pr.line("publish %s %s  // %s", pr.topicName(s.Topic), pr.fields(ty, s.Fields, s.Order), at)
	case *Return:
		if s.Value == nil {
			pr.line("return  // %s", at)
		} else {
			pr.line("return %s  // %s", pr.expr(s.Value), at)
		}
	case *Break:
		pr.line("break  // %s", at)
	case *Continue:
		pr.line("continue  // %s", at)
	default:
		pr.line("?%T  // %s", s, at)
	}
}

func (pr *printer) pattern(m *Match, a *Arm) string {
	switch m.Kind {
	case MatchInt:
		return strconv.FormatInt(a.Int, 10)
	case MatchString:
		return strconv.Quote(a.Str)
	case MatchBool:
		return strconv.FormatBool(a.Bool)
	}
	ty := pr.nominal(m.X.Type())
	name := fmt.Sprintf("v%d", a.Variant)
	enum := "?"
	if ty != nil {
		enum = ty.Name
		if a.Variant >= 0 && a.Variant < len(ty.Variants) {
			name = ty.Variants[a.Variant].Name
		}
	}
	s := enum + "::" + name
	if len(a.Binds) > 0 {
		bs := make([]string, len(a.Binds))
		for i, b := range a.Binds {
			if b < 0 {
				bs[i] = "_"
			} else {
				bs[i] = pr.local(b)
			}
		}
		s += "(" + strings.Join(bs, ", ") + ")"
	}
	return s
}

func (pr *printer) nominal(t TypeRef) *Type {
	if t >= 0 && int(t) < len(pr.p.Types) {
		if ty := pr.p.Types[t]; ty.Kind == KindStruct || ty.Kind == KindEnum {
			return ty
		}
	}
	return nil
}

func (pr *printer) fieldName(t TypeRef, i int) string {
	if ty := pr.nominal(t); ty != nil && i >= 0 && i < len(ty.Fields) {
		return ty.Fields[i].Name
	}
	return fmt.Sprintf("#%d", i)
}

// fields prints struct or publish field values in declaration order,
// followed by the evaluation order when it differs.
func (pr *printer) fields(t TypeRef, fields []Expr, order []int) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = pr.fieldName(t, i) + ": " + pr.expr(f)
	}
	s := "{ " + strings.Join(parts, ", ") + " }"
	if len(fields) == 0 {
		s = "{}"
	}
	if order != nil {
		os := make([]string, len(order))
		for i, o := range order {
			os[i] = strconv.Itoa(o)
		}
		s += " order [" + strings.Join(os, " ") + "]"
	}
	return s
}

func (pr *printer) exprs(list []Expr) string {
	parts := make([]string, len(list))
	for i, e := range list {
		parts[i] = pr.expr(e)
	}
	return strings.Join(parts, ", ")
}

func (pr *printer) expr(e Expr) string {
	switch e := e.(type) {
	case nil:
		return "<nil>"
	case *Const:
		if e.Name != "" {
			return e.Name + "=" + e.Value.String()
		}
		return e.Value.String()
	case *LocalRef:
		return pr.local(e.Slot)
	case *StateRef:
		return pr.state(e.Slot)
	case *Unary:
		return fmt.Sprintf("%s(%s)", e.Op, pr.expr(e.X))
	case *Binary:
		return fmt.Sprintf("%s(%s, %s)", e.Op, pr.expr(e.X), pr.expr(e.Y))
	case *And:
		return fmt.Sprintf("and(%s, %s)", pr.expr(e.X), pr.expr(e.Y))
	case *Or:
		return fmt.Sprintf("or(%s, %s)", pr.expr(e.X), pr.expr(e.Y))
	case *Call:
		return fmt.Sprintf("call %s(%s)", pr.funcName(e.Func), pr.exprs(e.Args))
	case *CallBuiltin:
		return fmt.Sprintf("%s(%s)", e.Builtin, pr.exprs(e.Args))
	case *CallPrim:
		return fmt.Sprintf("prim %s(%s)", e.Name, pr.exprs(e.Args))
	case *MakeList:
		return fmt.Sprintf("%s [%s]", pr.tn(e.Ty), pr.exprs(e.Elems))
	case *Format:
		parts := make([]string, len(e.Parts))
		for i, x := range e.Parts {
			parts[i] = pr.expr(x)
			if i < len(e.Specs) && e.Specs[i] >= 0 {
				parts[i] += fmt.Sprintf(" spec %#x", e.Specs[i])
			}
		}
		return "format(" + strings.Join(parts, ", ") + ")"
	case *MakeMap:
		parts := make([]string, len(e.Keys))
		for i := range e.Keys {
			v := "<nil>"
			if i < len(e.Values) {
				v = pr.expr(e.Values[i])
			}
			parts[i] = pr.expr(e.Keys[i]) + ": " + v
		}
		return fmt.Sprintf("%s {%s}", pr.tn(e.Ty), strings.Join(parts, ", "))
	case *MakeStruct:
		return pr.tn(e.Ty) + " " + pr.fields(e.Ty, e.Fields, e.Order)
	case *MakeEnum:
		name := fmt.Sprintf("v%d", e.Variant)
		if ty := pr.nominal(e.Ty); ty != nil && e.Variant >= 0 && e.Variant < len(ty.Variants) {
			name = ty.Variants[e.Variant].Name
		}
		s := pr.tn(e.Ty) + "::" + name
		if len(e.Args) > 0 {
			s += "(" + pr.exprs(e.Args) + ")"
		}
		return s
	case *Index:
		return fmt.Sprintf("index.%s(%s, %s)", e.Kind, pr.expr(e.X), pr.expr(e.Index))
	case *FieldRef:
		return pr.expr(e.X) + "." + pr.fieldName(e.X.Type(), e.Field)
	case *Question:
		return pr.expr(e.X) + "?"
	case *Try:
		return "try " + pr.expr(e.X)
	}
	return fmt.Sprintf("?%T", e)
}

// String renders the constant as a Hale literal: 42, 1.5, 1e+21, NaN,
// true, "text", b"\x00".
func (v Value) String() string {
	switch v.Kind {
	case KindInt:
		return strconv.FormatInt(v.Int, 10)
	case KindFloat:
		return formatFloat(v.Float)
	case KindBool:
		return strconv.FormatBool(v.Bool)
	case KindString:
		return strconv.Quote(v.Str)
	case KindBytes:
		var b strings.Builder
		b.WriteString(`b"`)
		for i := 0; i < len(v.Str); i++ {
			c := v.Str[i]
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c >= 0x20 && c < 0x7f:
				b.WriteByte(c)
			default:
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
		b.WriteByte('"')
		return b.String()
	}
	return "void"
}

func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eN") {
		s += ".0"
	}
	return s
}
