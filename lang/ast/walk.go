package ast

// Inspect traverses the tree rooted at n in depth-first source order,
// calling f for every node; when f returns false the node's children are
// skipped. Nil children are not visited.
func Inspect(n Node, f func(Node) bool) {
	if n == nil || !f(n) {
		return
	}
	switch n := n.(type) {
	case *File:
		for _, d := range n.Decls {
			Inspect(d, f)
		}
	case *ConstDecl:
		Inspect(n.Name, f)
		inspectType(n.Type, f)
		inspectExpr(n.Value, f)
	case *TypeDecl:
		Inspect(n.Name, f)
		for _, fd := range n.Fields {
			Inspect(fd, f)
		}
	case *FieldDecl:
		Inspect(n.Name, f)
		inspectType(n.Type, f)
	case *EnumDecl:
		Inspect(n.Name, f)
		for _, v := range n.Variants {
			Inspect(v, f)
		}
	case *VariantDecl:
		Inspect(n.Name, f)
		for _, t := range n.Types {
			inspectType(t, f)
		}
	case *FnDecl:
		for _, a := range n.Annotations {
			Inspect(a, f)
		}
		Inspect(n.Name, f)
		for _, p := range n.Params {
			Inspect(p, f)
		}
		inspectType(n.Result, f)
		if n.Body != nil {
			Inspect(n.Body, f)
		}
	case *Annotation:
		Inspect(n.Name, f)
		for _, a := range n.Args {
			Inspect(a, f)
		}
	case *AnnArg:
		Inspect(n.Name, f)
		inspectExpr(n.Value, f)
	case *Param:
		Inspect(n.Name, f)
		inspectType(n.Type, f)
	case *LocusDecl:
		for _, a := range n.Annotations {
			Inspect(a, f)
		}
		Inspect(n.Name, f)
		for _, p := range n.Params {
			Inspect(p, f)
		}
		for _, s := range n.State {
			Inspect(s, f)
		}
		for _, h := range n.Handlers {
			Inspect(h, f)
		}
		for _, fn := range n.Fns {
			Inspect(fn, f)
		}
	case *StateVar:
		Inspect(n.Name, f)
		inspectType(n.Type, f)
		inspectExpr(n.Value, f)
	case *Handler:
		if n.Topic != nil {
			Inspect(n.Topic, f)
		}
		if n.Param != nil {
			Inspect(n.Param, f)
		}
		inspectExpr(n.Guard, f)
		Inspect(n.Body, f)
	case *MainDecl:
		for _, s := range n.Spawns {
			Inspect(s, f)
		}
		for _, b := range n.Binds {
			Inspect(b, f)
		}
		for _, x := range n.Exports {
			Inspect(x, f)
		}
		for _, l := range n.Loops {
			Inspect(l, f)
		}
	case *SpawnLoop:
		Inspect(n.Var, f)
		inspectExpr(n.Lo, f)
		inspectExpr(n.Hi, f)
	case *Spawn:
		Inspect(n.Locus, f)
		for _, a := range n.Args {
			inspectExpr(a, f)
		}
		if n.As != nil {
			Inspect(n.As, f)
		}
		for _, ix := range n.Index {
			Inspect(ix, f)
		}
		if n.Placement != nil {
			Inspect(n.Placement, f)
		}
	case *Bind:
		Inspect(n.Topic, f)
	case *Export:
		Inspect(n.Topic, f)
	case *ListType:
		inspectType(n.Elem, f)
	case *MapType:
		inspectType(n.Key, f)
		inspectType(n.Value, f)
	case *Block:
		for _, s := range n.Stmts {
			Inspect(s, f)
		}
	case *LetStmt:
		Inspect(n.Name, f)
		inspectType(n.Type, f)
		inspectExpr(n.Value, f)
	case *AssignStmt:
		inspectExpr(n.Target, f)
		inspectExpr(n.Value, f)
	case *ExprStmt:
		inspectExpr(n.X, f)
	case *IfStmt:
		inspectExpr(n.Cond, f)
		Inspect(n.Then, f)
		if n.Else != nil {
			Inspect(n.Else, f)
		}
	case *WhileStmt:
		inspectExpr(n.Cond, f)
		Inspect(n.Body, f)
	case *ForStmt:
		Inspect(n.Key, f)
		if n.Val != nil {
			Inspect(n.Val, f)
		}
		inspectExpr(n.X, f)
		inspectExpr(n.Hi, f)
		Inspect(n.Body, f)
	case *MatchStmt:
		inspectExpr(n.X, f)
		for _, a := range n.Arms {
			Inspect(a, f)
		}
	case *Arm:
		Inspect(n.Pattern, f)
		Inspect(n.Body, f)
	case *Pattern:
		if n.Enum != nil {
			Inspect(n.Enum, f)
		}
		if n.Name != nil {
			Inspect(n.Name, f)
		}
		for _, b := range n.Binds {
			Inspect(b, f)
		}
	case *PublishStmt:
		Inspect(n.Topic, f)
		for _, fi := range n.Fields {
			Inspect(fi, f)
		}
		inspectExpr(n.After, f)
	case *ReturnStmt:
		inspectExpr(n.Value, f)
	case *Name:
		Inspect(n.Ident, f)
	case *PathExpr:
		for _, p := range n.Parts {
			Inspect(p, f)
		}
	case *StructLit:
		Inspect(n.Type, f)
		for _, fi := range n.Fields {
			Inspect(fi, f)
		}
	case *FieldInit:
		Inspect(n.Name, f)
		inspectExpr(n.Value, f)
	case *ListLit:
		for _, e := range n.Elems {
			inspectExpr(e, f)
		}
	case *MapLit:
		for _, e := range n.Entries {
			Inspect(e, f)
		}
	case *MapEntry:
		inspectExpr(n.Key, f)
		inspectExpr(n.Value, f)
	case *UnaryExpr:
		inspectExpr(n.X, f)
	case *QuestionExpr:
		inspectExpr(n.X, f)
	case *TryExpr:
		inspectExpr(n.X, f)
	case *BinaryExpr:
		inspectExpr(n.X, f)
		inspectExpr(n.Y, f)
	case *CallExpr:
		inspectExpr(n.Fun, f)
		for _, a := range n.Args {
			inspectExpr(a, f)
		}
	case *IndexExpr:
		inspectExpr(n.X, f)
		inspectExpr(n.Index, f)
	case *FieldExpr:
		inspectExpr(n.X, f)
		Inspect(n.Name, f)
	}
}

// inspectExpr and inspectType skip nil interface values, which Inspect
// cannot detect once they are wrapped in the Node interface.
func inspectExpr(e Expr, f func(Node) bool) {
	if e != nil {
		Inspect(e, f)
	}
}

func inspectType(t TypeExpr, f func(Node) bool) {
	if t != nil {
		Inspect(t, f)
	}
}
