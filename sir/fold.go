package sir

import (
	"math"
	"strconv"
	"strings"

	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/diag"
)

// Diagnostic codes reported by Lower.
const (
	// CodeConstTrap: evaluating a const declaration's value traps
	// (overflow, division by zero).
	CodeConstTrap diag.Code = "E0801"
	// CodeNotConst: a const value is not a constant expression, or a const
	// refers to itself.
	CodeNotConst diag.Code = "E0802"
	// CodeInternal: the checked tree is inconsistent (a toolchain bug,
	// never the user's fault).
	CodeInternal diag.Code = "E0809"
)

// Constant folding. A const's value may use literals, other consts, the
// unary and binary operators, and nothing else; it is computed here with
// exactly the run-time semantics (int overflow and division by zero trap),
// so a const that would trap is a compile error at the offending operator.

type foldState uint8

const (
	foldUnvisited foldState = iota
	foldBusy
	foldDone
	foldFailed
)

type folded struct {
	state foldState
	value Value
}

// constValue returns the folded value of c, folding it on first use.
func (l *lowerer) constValue(c *ast.ConstDecl) (Value, bool) {
	f := l.consts[c]
	if f == nil {
		f = &folded{}
		l.consts[c] = f
	}
	switch f.state {
	case foldDone:
		return f.value, true
	case foldFailed:
		return Value{}, false
	case foldBusy:
		l.errs.Add(c.Name.Pos(), CodeNotConst, "const %s refers to itself", c.Name.Name)
		f.state = foldFailed
		return Value{}, false
	}
	f.state = foldBusy
	outer := l.constName
	l.constName = c.Name.Name
	v, ok := l.fold(c.Value)
	l.constName = outer
	if f.state == foldFailed { // a cycle was reported while folding
		return Value{}, false
	}
	if !ok {
		f.state = foldFailed
		return Value{}, false
	}
	f.state, f.value = foldDone, v
	return v, true
}

func (l *lowerer) notConst(e ast.Expr) (Value, bool) {
	l.errs.Add(e.Pos(), CodeNotConst, "%s is not a constant expression", l.foldedWhat())
	return Value{}, false
}

func (l *lowerer) constTrap(pos ast.Pos, msg string) (Value, bool) {
	l.errs.Add(pos, CodeConstTrap, "%s traps: %s", l.foldedWhat(), msg)
	return Value{}, false
}

// foldedWhat names what is being folded, for messages: a const's value,
// or (outside any const) a spawn loop's bound.
func (l *lowerer) foldedWhat() string {
	if l.constName == "" {
		return "a spawn loop bound"
	}
	return "value of const " + l.constName
}

// fold evaluates a constant expression.
func (l *lowerer) fold(e ast.Expr) (Value, bool) {
	switch e := e.(type) {
	case *ast.IntLit:
		v, ok := intLit(e)
		if !ok {
			return l.constTrap(e.Pos(), "integer literal "+e.Raw+" overflows int")
		}
		return IntValue(v), true
	case *ast.FloatLit:
		return FloatValue(e.Value), true
	case *ast.StringLit:
		return StringValue(e.Value), true
	case *ast.BytesLit:
		return BytesValue(e.Value), true
	case *ast.BoolLit:
		return BoolValue(e.Value), true
	case *ast.Name:
		if s := e.Ident.Sym; s != nil && s.Kind == ast.SymConst && s.Const != nil {
			return l.constValue(s.Const)
		}
		return l.notConst(e)
	case *ast.PathExpr:
		if s := e.Sym; s != nil && s.Kind == ast.SymConst && s.Const != nil {
			return l.constValue(s.Const)
		}
		return l.notConst(e)
	case *ast.UnaryExpr:
		if lit, ok := e.X.(*ast.IntLit); ok && e.Op == ast.Neg && lit.Value == 1<<63 {
			return IntValue(math.MinInt64), true
		}
		x, ok := l.fold(e.X)
		if !ok {
			return x, false
		}
		switch {
		case e.Op == ast.Not && x.Kind == KindBool:
			return BoolValue(!x.Bool), true
		case e.Op == ast.Not && x.Kind == KindInt:
			return IntValue(^x.Int), true
		case e.Op == ast.Neg && x.Kind == KindInt:
			if x.Int == math.MinInt64 {
				return l.constTrap(e.Pos(), "integer overflow")
			}
			return IntValue(-x.Int), true
		case e.Op == ast.Neg && x.Kind == KindFloat:
			return FloatValue(-x.Float), true
		}
		return l.notConst(e)
	case *ast.BinaryExpr:
		x, ok := l.fold(e.X)
		if !ok {
			return x, false
		}
		// && and || short-circuit here too: the right side of a decided
		// operator is not evaluated (so cannot trap).
		if x.Kind == KindBool && (e.Op == ast.AndAnd && !x.Bool || e.Op == ast.OrOr && x.Bool) {
			return x, true
		}
		y, ok := l.fold(e.Y)
		if !ok {
			return y, false
		}
		pos := e.OpPos
		if !pos.IsValid() {
			pos = e.Pos()
		}
		return l.foldBinary(e, pos, x, y)
	}
	return l.notConst(e)
}

func (l *lowerer) foldBinary(e *ast.BinaryExpr, pos ast.Pos, x, y Value) (Value, bool) {
	if x.Kind != y.Kind {
		return l.notConst(e)
	}
	switch e.Op {
	case ast.Eq:
		return BoolValue(x.equal(y)), true
	case ast.Ne:
		return BoolValue(!x.equal(y)), true
	case ast.AndAnd, ast.OrOr:
		if x.Kind != KindBool {
			return l.notConst(e)
		}
		return y, true // x did not decide (see fold)
	}
	switch x.Kind {
	case KindInt:
		if e.Op >= ast.Lt && e.Op <= ast.Ge {
			return BoolValue(compare(e.Op, cmpInt(x.Int, y.Int))), true
		}
		r, msg := intArith(e.Op, x.Int, y.Int)
		if msg != "" {
			return l.constTrap(pos, msg)
		}
		return IntValue(r), true
	case KindFloat:
		a, b := x.Float, y.Float
		switch e.Op {
		case ast.Lt:
			return BoolValue(a < b), true
		case ast.Le:
			return BoolValue(a <= b), true
		case ast.Gt:
			return BoolValue(a > b), true
		case ast.Ge:
			return BoolValue(a >= b), true
		case ast.Add:
			return FloatValue(a + b), true
		case ast.Sub:
			return FloatValue(a - b), true
		case ast.Mul:
			return FloatValue(a * b), true
		case ast.Div:
			return FloatValue(a / b), true
		case ast.Rem:
			return FloatValue(math.Mod(a, b)), true
		}
	case KindString, KindBytes:
		switch e.Op {
		case ast.Add:
			return Value{Kind: x.Kind, Str: x.Str + y.Str}, true
		case ast.Lt, ast.Le, ast.Gt, ast.Ge:
			if x.Kind == KindString {
				c := 0
				if x.Str < y.Str {
					c = -1
				} else if x.Str > y.Str {
					c = 1
				}
				return BoolValue(compare(e.Op, c)), true
			}
		}
	}
	return l.notConst(e)
}

// intLit returns the value of an integer literal. The checker folds
// -9223372036854775808 into one literal whose Value is 1<<63 and whose Raw
// text starts with '-'.
func intLit(e *ast.IntLit) (int64, bool) {
	if e.Value <= math.MaxInt64 {
		return int64(e.Value), true
	}
	if e.Value == 1<<63 && strings.HasPrefix(e.Raw, "-") {
		return math.MinInt64, true
	}
	return 0, false
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compare(op ast.BinaryOp, c int) bool {
	switch op {
	case ast.Lt:
		return c < 0
	case ast.Le:
		return c <= 0
	case ast.Gt:
		return c > 0
	}
	return c >= 0
}

// shiftTrap is the trap message of a shift by count, outside 0 to 63.
// The interpreter (package vm) gives the same text.
func shiftTrap(count int64) string {
	return "shift count " + strconv.FormatInt(count, 10) + " out of range (0 to 63)"
}

// intArith computes x op y for + - * / % & | ^ << >> with Hale's semantics; msg is the
// trap message when it traps.
func intArith(op ast.BinaryOp, x, y int64) (r int64, msg string) {
	switch op {
	case ast.Add:
		r = x + y
		if (x >= 0) == (y >= 0) && (r >= 0) != (x >= 0) {
			return 0, "integer overflow"
		}
		return r, ""
	case ast.Sub:
		r = x - y
		if (x >= 0) != (y >= 0) && (r >= 0) != (x >= 0) {
			return 0, "integer overflow"
		}
		return r, ""
	case ast.Mul:
		if x == 0 || y == 0 {
			return 0, ""
		}
		r = x * y
		if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
			return 0, "integer overflow"
		}
		return r, ""
	case ast.Div, ast.Rem:
		if y == 0 {
			return 0, "division by zero"
		}
		if x == math.MinInt64 && y == -1 {
			return 0, "integer overflow"
		}
		if op == ast.Div {
			return x / y, ""
		}
		return x % y, ""
	case ast.BitAnd:
		return x & y, ""
	case ast.BitOr:
		return x | y, ""
	case ast.BitXor:
		return x ^ y, ""
	case ast.Shl, ast.Shr:
		if y < 0 || y > 63 {
			return 0, shiftTrap(y)
		}
		if op == ast.Shl {
			return x << y, ""
		}
		return x >> y, ""
	}
	return 0, "not an integer operator"
}

// IntValue returns an int constant.
func IntValue(i int64) Value { return Value{Kind: KindInt, Int: i} }

// FloatValue returns a float constant.
func FloatValue(f float64) Value { return Value{Kind: KindFloat, Float: f} }

// BoolValue returns a bool constant.
func BoolValue(b bool) Value { return Value{Kind: KindBool, Bool: b} }

// StringValue returns a string constant.
func StringValue(s string) Value { return Value{Kind: KindString, Str: s} }

// BytesValue returns a bytes constant.
func BytesValue(s string) Value { return Value{Kind: KindBytes, Str: s} }

// Type returns the basic type of the constant.
func (v Value) Type() TypeRef {
	switch v.Kind {
	case KindInt:
		return TInt
	case KindFloat:
		return TFloat
	case KindBool:
		return TBool
	case KindString:
		return TString
	case KindBytes:
		return TBytes
	}
	return TVoid
}

// equal is Hale's == on constants (floats by IEEE comparison).
func (v Value) equal(w Value) bool {
	if v.Kind != w.Kind {
		return false
	}
	switch v.Kind {
	case KindInt:
		return v.Int == w.Int
	case KindFloat:
		return v.Float == w.Float
	case KindBool:
		return v.Bool == w.Bool
	}
	return v.Str == w.Str
}
