package syntax

import (
	"strconv"
	"strings"

	"github.com/hale-lang/hale/lang/ast"
)

// Dump renders a syntax tree as a compact s-expression, for tests and
// debugging: `(fn add (a int) (b int) -> int (block (return (+ a b))))`.
// Positions are not shown. Literals print their decoded values (0xff as
// 255, strings quoted Go-style).
func Dump(n ast.Node) string {
	var d dumper
	d.node(n)
	return d.String()
}

type dumper struct{ strings.Builder }

func (d *dumper) open(head string) { d.WriteString("(" + head) }
func (d *dumper) close()           { d.WriteByte(')') }
func (d *dumper) sp()              { d.WriteByte(' ') }
func (d *dumper) word(s string)    { d.sp(); d.WriteString(s) }

// child writes " " and the node, or " _" for a nil node.
func (d *dumper) child(n ast.Node) {
	d.sp()
	d.node(n)
}

func (d *dumper) node(n ast.Node) {
	switch n := n.(type) {
	case nil:
		d.WriteString("_")
	case *ast.File:
		d.open("file")
		for _, imp := range n.Imports {
			d.child(imp)
		}
		for _, decl := range n.Decls {
			d.child(decl)
		}
		d.close()
	case *ast.Import:
		d.open("import " + strconv.Quote(n.Path))
		d.close()
	case *ast.Ident:
		if n == nil {
			d.WriteString("_")
			return
		}
		d.WriteString(n.Name)
	case *ast.Annotation:
		d.open("@" + n.Name.Name)
		for _, a := range n.Args {
			d.sp()
			d.open(a.Name.Name)
			d.child(a.Value)
			d.close()
		}
		d.close()
	case *ast.ConstDecl:
		d.open("const " + n.Name.Name)
		d.typ(n.Type)
		d.expr(n.Value)
		d.close()
	case *ast.TypeDecl:
		if n.Topic {
			d.open("topic " + n.Name.Name)
		} else {
			d.open("type " + n.Name.Name)
		}
		for _, f := range n.Fields {
			d.sp()
			d.open(f.Name.Name)
			d.typ(f.Type)
			d.close()
		}
		d.close()
	case *ast.EnumDecl:
		d.open("enum " + n.Name.Name)
		for _, v := range n.Variants {
			if len(v.Types) == 0 {
				d.word(v.Name.Name)
				continue
			}
			d.sp()
			d.open(v.Name.Name)
			for _, t := range v.Types {
				d.typ(t)
			}
			d.close()
		}
		d.close()
	case *ast.FnDecl:
		d.open("fn")
		for _, a := range n.Annotations {
			d.child(a)
		}
		d.word(n.Name.Name)
		d.params(n.Params)
		if n.Result != nil {
			d.word("->")
			d.typ(n.Result)
		}
		if n.Body != nil {
			d.child(n.Body)
		} else {
			d.word(";")
		}
		d.close()
	case *ast.LocusDecl:
		d.open("locus")
		for _, a := range n.Annotations {
			d.child(a)
		}
		d.word(n.Name.Name)
		if n.HasParams {
			d.params(n.Params)
		}
		for _, s := range n.State {
			d.sp()
			d.open("state " + s.Name.Name)
			d.typ(s.Type)
			d.expr(s.Value)
			d.close()
		}
		for _, h := range n.Handlers {
			d.child(h)
		}
		for _, f := range n.Fns {
			d.child(f)
		}
		d.close()
	case *ast.Handler:
		if n.Start {
			d.open("on start")
		} else {
			head := "on " + n.Topic.Name + " " + n.Param.Name
			if n.Shared {
				head += " shared"
			}
			d.open(head)
		}
		if n.Guard != nil {
			d.open("guard")
			d.expr(n.Guard)
			d.close()
		}
		d.child(n.Body)
		d.close()
	case *ast.MainDecl:
		d.open("main")
		for _, s := range n.Spawns {
			d.child(s)
		}
		for _, b := range n.Binds {
			d.child(b)
		}
		for _, x := range n.Exports {
			d.child(x)
		}
		d.close()
	case *ast.Spawn:
		d.open("spawn " + n.Locus.Name)
		if n.HasArgs {
			d.sp()
			d.open("args")
			for _, a := range n.Args {
				d.expr(a)
			}
			d.close()
		}
		if n.As != nil {
			name := n.As.Name
			for _, ix := range n.Index {
				name += "[" + ix.Name + "]"
			}
			d.word("as " + name)
		}
		for _, l := range n.Loops {
			d.word("in-loop " + l.Var.Name)
		}
		if n.Placement != nil {
			d.word("on " + n.Placement.Kind.String())
			if n.Placement.Kind == ast.PlacePool {
				d.WriteString("(" + strconv.Quote(n.Placement.Pool) + ")")
			}
		}
		d.close()
	case *ast.Bind:
		d.open("bind " + n.Topic.Name)
		d.nats(n.NATS)
		d.close()
	case *ast.Export:
		d.open("export " + n.Topic.Name)
		d.nats(n.NATS)
		d.close()

	case *ast.NamedType:
		d.WriteString(strings.Join(n.Path, "::"))
		if len(n.Args) > 0 {
			d.WriteByte('<')
			for i, a := range n.Args {
				if i > 0 {
					d.WriteString(", ")
				}
				d.node(a)
			}
			d.WriteByte('>')
		}
	case *ast.ListType:
		d.WriteByte('[')
		d.node(n.Elem)
		d.WriteByte(']')
	case *ast.MapType:
		d.WriteByte('{')
		d.node(n.Key)
		d.WriteString(": ")
		d.node(n.Value)
		d.WriteByte('}')

	case *ast.Block:
		d.open("block")
		for _, s := range n.Stmts {
			d.child(s)
		}
		d.close()
	case *ast.LetStmt:
		if n.Mutable {
			d.open("var " + n.Name.Name)
		} else {
			d.open("let " + n.Name.Name)
		}
		d.typ(n.Type)
		d.expr(n.Value)
		d.close()
	case *ast.AssignStmt:
		d.open(n.Op.String())
		d.expr(n.Target)
		d.expr(n.Value)
		d.close()
	case *ast.ExprStmt:
		d.open("expr")
		d.expr(n.X)
		d.close()
	case *ast.IfStmt:
		d.open("if")
		d.expr(n.Cond)
		d.child(n.Then)
		if n.Else != nil {
			d.child(n.Else)
		}
		d.close()
	case *ast.WhileStmt:
		d.open("while")
		d.expr(n.Cond)
		d.child(n.Body)
		d.close()
	case *ast.ForStmt:
		d.open("for " + n.Key.Name)
		if n.Val != nil {
			d.word(n.Val.Name)
		}
		d.word("in")
		d.expr(n.X)
		if n.Hi != nil {
			d.word("..")
			d.expr(n.Hi)
		}
		d.child(n.Body)
		d.close()
	case *ast.MatchStmt:
		d.open("match")
		d.expr(n.X)
		for _, a := range n.Arms {
			d.child(a)
		}
		d.close()
	case *ast.Arm:
		d.open("arm")
		d.child(n.Pattern)
		d.child(n.Body)
		d.close()
	case *ast.Pattern:
		switch n.Kind {
		case ast.PatWildcard:
			d.WriteString("_")
		case ast.PatInt:
			d.WriteString(strconv.FormatInt(n.Int, 10))
		case ast.PatString:
			d.WriteString(strconv.Quote(n.Str))
		case ast.PatBool:
			d.WriteString(strconv.FormatBool(n.Bool))
		case ast.PatVariant:
			name := n.Name.Name
			if n.Enum != nil {
				name = n.Enum.Name + "::" + name
			}
			if n.Binds == nil {
				d.WriteString(name)
				return
			}
			d.open(name)
			for _, b := range n.Binds {
				d.word(b.Name)
			}
			d.close()
		}
	case *ast.PublishStmt:
		d.open("publish " + n.Topic.Name)
		d.fields(n.Fields)
		if n.After != nil {
			d.sp()
			d.open("after")
			d.expr(n.After)
			d.close()
		}
		d.close()
	case *ast.ReturnStmt:
		d.open("return")
		if n.Value != nil {
			d.expr(n.Value)
		}
		d.close()
	case *ast.BreakStmt:
		d.WriteString("(break)")
	case *ast.ContinueStmt:
		d.WriteString("(continue)")

	case *ast.IntLit:
		d.WriteString(strconv.FormatUint(n.Value, 10))
	case *ast.FloatLit:
		s := strconv.FormatFloat(n.Value, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		d.WriteString(s)
	case *ast.StringLit:
		d.WriteString(strconv.Quote(n.Value))
	case *ast.BytesLit:
		d.WriteString("b" + strconv.Quote(n.Value))
	case *ast.BoolLit:
		d.WriteString(strconv.FormatBool(n.Value))
	case *ast.Name:
		d.WriteString(n.Ident.Name)
	case *ast.PathExpr:
		d.WriteString(n.Joined())
	case *ast.StructLit:
		d.open("struct " + strings.Join(n.Type.Path, "::"))
		d.fields(n.Fields)
		d.close()
	case *ast.ListLit:
		d.open("list")
		for _, e := range n.Elems {
			d.expr(e)
		}
		d.close()
	case *ast.MapLit:
		d.open("map")
		for _, e := range n.Entries {
			d.sp()
			d.open("")
			d.node(e.Key)
			d.expr(e.Value)
			d.close()
		}
		d.close()
	case *ast.UnaryExpr:
		d.open(n.Op.String())
		d.expr(n.X)
		d.close()
	case *ast.QuestionExpr:
		d.open("?")
		d.expr(n.X)
		d.close()
	case *ast.TryExpr:
		d.open("try")
		d.expr(n.X)
		d.close()
	case *ast.BinaryExpr:
		d.open(n.Op.String())
		d.expr(n.X)
		d.expr(n.Y)
		d.close()
	case *ast.CallExpr:
		d.open("call")
		d.expr(n.Fun)
		for _, a := range n.Args {
			d.expr(a)
		}
		d.close()
	case *ast.IndexExpr:
		d.open("index")
		d.expr(n.X)
		d.expr(n.Index)
		d.close()
	case *ast.FieldExpr:
		d.open(".")
		d.expr(n.X)
		d.word(n.Name.Name)
		d.close()
	default:
		d.WriteString("?")
	}
}

// expr and typ write " " and the node, handling nil interfaces.
func (d *dumper) expr(e ast.Expr) {
	d.sp()
	if e == nil {
		d.WriteString("_")
		return
	}
	d.node(e)
}

func (d *dumper) typ(t ast.TypeExpr) {
	d.sp()
	if t == nil {
		d.WriteString("_")
		return
	}
	d.node(t)
}

func (d *dumper) params(ps []*ast.Param) {
	d.sp()
	d.open("params")
	for _, p := range ps {
		d.sp()
		d.open(p.Name.Name)
		d.typ(p.Type)
		d.close()
	}
	d.close()
}

func (d *dumper) fields(fs []*ast.FieldInit) {
	for _, f := range fs {
		d.sp()
		d.open(f.Name.Name)
		d.expr(f.Value)
		d.close()
	}
}

// nats writes a binding's or export's NATS endpoint, if any.
func (d *dumper) nats(n *ast.NATS) {
	if n == nil {
		return
	}
	if n.URLEnv != "" {
		d.word("nats(env " + strconv.Quote(n.URLEnv) + ")")
	} else {
		d.word("nats(" + strconv.Quote(n.URL) + ")")
	}
	d.word("subject " + strconv.Quote(n.Subject))
	if n.HasQueue {
		d.word("queue " + strconv.Quote(n.Queue))
	}
}
