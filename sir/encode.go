package sir

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/hale-lang/hale/lang/ast"
)

// The canonical binary encoding of a Program.
//
// The encoding is a straight walk of the Program in slice order (there are
// no maps in a Program, so nothing depends on iteration order), which makes
// it stable across runs and machines: equal programs encode to equal bytes.
//
//	program  = magic "HSIR" uvarint(version) body
//	int      = zig-zag varint; counts, kinds and tags are uvarints or bytes
//	string   = uvarint(len) bytes
//	pos      = file offset line col, where file is an index into the table
//	           of file names seen so far, followed by the name itself when
//	           the index is the table's length (a new name)
//	value    = kind byte, then varint (int), 8 bytes little-endian IEEE
//	           bits (float), byte (bool) or string (string, bytes)
//	stmt     = tag byte pos fields; expr = tag byte pos type fields; a
//	           missing expression is tag 0
//
// Field order follows the struct declarations in sir.go. Unmarshal accepts
// exactly what MarshalBinary writes for a valid program and verifies the
// result with Validate.

const (
	binaryMagic   = "HSIR"
	binaryVersion = 3 // 2: handlers carry a guard and a shared flag; 3: nats bindings and exports
	// maxDepth bounds statement and expression nesting when decoding, so
	// that hostile input cannot exhaust the stack.
	maxDepth = 2000
)

// Statement tags.
const (
	tagLet byte = iota + 1
	tagSetLocal
	tagSetState
	tagSetIndex
	tagSetField
	tagExprStmt
	tagIf
	tagWhile
	tagForRange
	tagForList
	tagForMap
	tagMatch
	tagPublish
	tagReturn
	tagBreak
	tagContinue
	tagPublishAfter // a Publish with a delay: as tagPublish, then the delay
)

// Expression tags (0 is a missing expression).
const (
	tagConst byte = iota + 1
	tagLocalRef
	tagStateRef
	tagUnary
	tagBinary
	tagAnd
	tagOr
	tagCall
	tagCallBuiltin
	tagCallPrim
	tagMakeList
	tagMakeMap
	tagMakeStruct
	tagMakeEnum
	tagIndex
	tagFieldRef
	tagFormat
	tagQuestion
	tagTry
)

// MarshalBinary encodes the program canonically.
func (p *Program) MarshalBinary() ([]byte, error) {
	e := &encoder{files: map[string]int{}}
	e.buf = append(e.buf, binaryMagic...)
	e.uint(binaryVersion)
	if err := e.program(p); err != nil {
		return nil, err
	}
	return e.buf, nil
}

type encoder struct {
	buf   []byte
	files map[string]int
}

func (e *encoder) uint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) int(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *encoder) byte(b byte)   { e.buf = append(e.buf, b) }
func (e *encoder) count(n int)   { e.uint(uint64(n)) }
func (e *encoder) ref(t TypeRef) { e.int(int64(t)) }
func (e *encoder) idx(i int)     { e.int(int64(i)) }
func (e *encoder) str(s string)  { e.count(len(s)); e.buf = append(e.buf, s...) }
func (e *encoder) strs(s []string) {
	e.count(len(s))
	for _, x := range s {
		e.str(x)
	}
}
func (e *encoder) bool(b bool) {
	if b {
		e.byte(1)
	} else {
		e.byte(0)
	}
}
func (e *encoder) ints(v []int) {
	e.count(len(v))
	for _, x := range v {
		e.idx(x)
	}
}
func (e *encoder) refs(v []TypeRef) {
	e.count(len(v))
	for _, x := range v {
		e.ref(x)
	}
}

func (e *encoder) pos(p ast.Pos) {
	i, ok := e.files[p.File]
	if !ok {
		i = len(e.files)
		e.files[p.File] = i
	}
	e.count(i)
	if !ok {
		e.str(p.File)
	}
	e.idx(p.Offset)
	e.idx(p.Line)
	e.idx(p.Col)
}

func (e *encoder) value(v Value) {
	e.byte(byte(v.Kind))
	switch v.Kind {
	case KindInt:
		e.int(v.Int)
	case KindFloat:
		e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(v.Float))
	case KindBool:
		e.bool(v.Bool)
	case KindString, KindBytes:
		e.str(v.Str)
	}
}

func (e *encoder) vars(vs []Var) {
	e.count(len(vs))
	for _, v := range vs {
		e.str(v.Name)
		e.ref(v.Type)
		e.idx(v.Slot)
	}
}

func (e *encoder) program(p *Program) error {
	e.str(p.Entry)
	e.strs(p.Files)
	e.count(len(p.Types))
	for _, t := range p.Types {
		if t == nil {
			return errors.New("sir: nil type")
		}
		e.byte(byte(t.Kind))
		e.ref(t.Elem)
		e.ref(t.Key)
		e.str(t.Name)
		e.bool(t.Topic)
		e.pos(t.Pos)
		e.count(len(t.Fields))
		for _, f := range t.Fields {
			e.str(f.Name)
			e.ref(f.Type)
		}
		e.count(len(t.Variants))
		for _, v := range t.Variants {
			e.str(v.Name)
			e.refs(v.Fields)
		}
	}
	e.count(len(p.Consts))
	for _, c := range p.Consts {
		e.str(c.Name)
		e.ref(c.Type)
		e.value(c.Value)
		e.pos(c.Pos)
	}
	e.count(len(p.Funcs))
	for _, f := range p.Funcs {
		if f == nil {
			return errors.New("sir: nil function")
		}
		e.str(f.Name)
		e.byte(byte(f.Kind))
		e.idx(f.Locus)
		e.idx(f.Topic)
		e.idx(f.NumParams)
		e.idx(f.NumSlots)
		e.count(len(f.Locals))
		for _, l := range f.Locals {
			e.str(l.Name)
			e.ref(l.Type)
		}
		e.ref(f.Result)
		e.strs(f.Effects)
		e.pos(f.Pos)
		if err := e.stmts(f.Body); err != nil {
			return fmt.Errorf("sir: %s: %w", f.Name, err)
		}
	}
	e.count(len(p.Loci))
	for _, l := range p.Loci {
		e.str(l.Name)
		e.vars(l.Params)
		e.vars(l.State)
		e.idx(l.NumSlots)
		e.idx(l.Init)
		e.idx(l.Start)
		e.count(len(l.Handlers))
		for _, h := range l.Handlers {
			e.idx(h.Topic)
			e.idx(h.Func)
			e.idx(h.Guard)
			e.bool(h.Shared)
		}
		e.ints(l.Fns)
		e.int(l.Budget)
		e.pos(l.Pos)
	}
	e.count(len(p.Instances))
	for _, in := range p.Instances {
		e.str(in.Name)
		e.idx(in.Locus)
		if err := e.exprs(in.Args); err != nil {
			return err
		}
		e.byte(byte(in.Placement.Kind))
		e.str(in.Placement.Pool)
		e.idx(in.Consumer)
		e.pos(in.Pos)
	}
	e.count(len(p.Topics))
	for _, t := range p.Topics {
		e.str(t.Name)
		e.ref(t.Type)
		e.ints(t.Subscribers)
		e.pos(t.Pos)
	}
	e.count(len(p.Ingress))
	for _, g := range p.Ingress {
		e.idx(g.Topic)
		e.idx(g.Consumer)
		e.pos(g.Pos)
		e.bool(g.NATS != nil)
		if g.NATS != nil {
			e.nats(g.NATS)
		}
	}
	e.count(len(p.Exports))
	for _, x := range p.Exports {
		e.idx(x.Topic)
		e.nats(&x.NATS)
		e.pos(x.Pos)
	}
	e.count(len(p.Prims))
	for _, pm := range p.Prims {
		e.str(pm.Name)
		e.idx(pm.ID)
		e.str(pm.Effect)
		e.refs(pm.Params)
		e.ref(pm.Result)
	}
	e.count(len(p.Consumers))
	for _, c := range p.Consumers {
		e.byte(byte(c.Kind))
		e.str(c.Name)
		e.ints(c.Instances)
	}
	return nil
}

func (e *encoder) stmts(list []Stmt) error {
	e.count(len(list))
	for _, s := range list {
		if err := e.stmt(s); err != nil {
			return err
		}
	}
	return nil
}

func (e *encoder) stmt(s Stmt) error {
	var err error
	// each encodes the expressions in order, keeping the first error.
	each := func(xs ...Expr) {
		for _, x := range xs {
			if err == nil {
				err = e.expr(x)
			}
		}
	}
	body := func(b []Stmt) {
		if err == nil {
			err = e.stmts(b)
		}
	}
	switch s := s.(type) {
	case *Let:
		e.byte(tagLet)
		e.pos(s.At)
		e.idx(s.Slot)
		each(s.Value)
	case *SetLocal:
		e.byte(tagSetLocal)
		e.pos(s.At)
		e.idx(s.Slot)
		each(s.Value)
	case *SetState:
		e.byte(tagSetState)
		e.pos(s.At)
		e.idx(s.Slot)
		each(s.Value)
	case *SetIndex:
		e.byte(tagSetIndex)
		e.pos(s.At)
		e.byte(byte(s.Kind))
		each(s.X, s.Index, s.Value)
	case *SetField:
		e.byte(tagSetField)
		e.pos(s.At)
		e.idx(s.Field)
		each(s.X, s.Value)
	case *ExprStmt:
		e.byte(tagExprStmt)
		e.pos(s.At)
		each(s.X)
	case *If:
		e.byte(tagIf)
		e.pos(s.At)
		each(s.Cond)
		body(s.Then)
		body(s.Else)
	case *While:
		e.byte(tagWhile)
		e.pos(s.At)
		each(s.Cond)
		body(s.Body)
	case *ForRange:
		e.byte(tagForRange)
		e.pos(s.At)
		e.idx(s.Slot)
		e.idx(s.HiSlot)
		each(s.Lo, s.Hi)
		body(s.Body)
	case *ForList:
		e.byte(tagForList)
		e.pos(s.At)
		e.idx(s.Slot)
		e.idx(s.ListSlot)
		e.idx(s.IdxSlot)
		each(s.List)
		body(s.Body)
	case *ForMap:
		e.byte(tagForMap)
		e.pos(s.At)
		e.idx(s.KeySlot)
		e.idx(s.ValSlot)
		e.idx(s.MapSlot)
		e.idx(s.IdxSlot)
		each(s.Map)
		body(s.Body)
	case *Match:
		e.byte(tagMatch)
		e.pos(s.At)
		e.byte(byte(s.Kind))
		e.idx(s.Slot)
		each(s.X)
		e.count(len(s.Arms))
		for _, a := range s.Arms {
			if a == nil {
				return errors.New("nil match arm")
			}
			e.pos(a.Pos)
			e.idx(a.Variant)
			e.int(a.Int)
			e.str(a.Str)
			e.bool(a.Bool)
			e.ints(a.Binds)
			body(a.Body)
		}
		e.bool(s.HasDefault)
		body(s.Default)
	case *Publish:
		// An immediate publish keeps the tag it always had, so that the
		// encoding (and program identity) of programs without timers
		// does not change.
		if s.After != nil {
			e.byte(tagPublishAfter)
		} else {
			e.byte(tagPublish)
		}
		e.pos(s.At)
		e.idx(s.Topic)
		if err == nil {
			err = e.exprs(s.Fields)
		}
		e.ints(s.Order)
		if s.After != nil {
			each(s.After)
		}
	case *Return:
		e.byte(tagReturn)
		e.pos(s.At)
		each(s.Value)
	case *Break:
		e.byte(tagBreak)
		e.pos(s.At)
	case *Continue:
		e.byte(tagContinue)
		e.pos(s.At)
	default:
		return fmt.Errorf("unknown statement %T", s)
	}
	return err
}

func (e *encoder) exprs(list []Expr) error {
	e.count(len(list))
	for _, x := range list {
		if x == nil {
			return errors.New("nil expression in a list")
		}
		if err := e.expr(x); err != nil {
			return err
		}
	}
	return nil
}

func (e *encoder) expr(x Expr) error {
	if x == nil {
		e.byte(0)
		return nil
	}
	head := func(tag byte) {
		e.byte(tag)
		e.pos(x.Pos())
		e.ref(x.Type())
	}
	switch x := x.(type) {
	case *Const:
		head(tagConst)
		e.value(x.Value)
		e.str(x.Name)
		return nil
	case *LocalRef:
		head(tagLocalRef)
		e.idx(x.Slot)
		return nil
	case *StateRef:
		head(tagStateRef)
		e.idx(x.Slot)
		return nil
	case *Unary:
		head(tagUnary)
		e.byte(byte(x.Op))
		return e.expr(x.X)
	case *Binary:
		head(tagBinary)
		e.byte(byte(x.Op))
		return e.pair(x.X, x.Y)
	case *And:
		head(tagAnd)
		return e.pair(x.X, x.Y)
	case *Or:
		head(tagOr)
		return e.pair(x.X, x.Y)
	case *Call:
		head(tagCall)
		e.idx(x.Func)
		return e.exprs(x.Args)
	case *CallBuiltin:
		head(tagCallBuiltin)
		e.byte(byte(x.Builtin))
		return e.exprs(x.Args)
	case *CallPrim:
		head(tagCallPrim)
		e.idx(x.Prim)
		e.str(x.Name)
		return e.exprs(x.Args)
	case *MakeList:
		head(tagMakeList)
		return e.exprs(x.Elems)
	case *MakeMap:
		head(tagMakeMap)
		if len(x.Keys) != len(x.Values) {
			return errors.New("map literal with unequal keys and values")
		}
		if err := e.exprs(x.Keys); err != nil {
			return err
		}
		return e.exprs(x.Values)
	case *MakeStruct:
		head(tagMakeStruct)
		if err := e.exprs(x.Fields); err != nil {
			return err
		}
		e.ints(x.Order)
		return nil
	case *MakeEnum:
		head(tagMakeEnum)
		e.idx(x.Variant)
		return e.exprs(x.Args)
	case *Index:
		head(tagIndex)
		e.byte(byte(x.Kind))
		return e.pair(x.X, x.Index)
	case *FieldRef:
		head(tagFieldRef)
		e.idx(x.Field)
		return e.expr(x.X)
	case *Format:
		head(tagFormat)
		e.count(len(x.Specs))
		for _, s := range x.Specs {
			e.int(s)
		}
		return e.exprs(x.Parts)
	case *Try:
		head(tagTry)
		e.bool(x.Void)
		return e.expr(x.X)
	case *Question:
		head(tagQuestion)
		e.ref(x.Ret)
		return e.expr(x.X)
	}
	return fmt.Errorf("unknown expression %T", x)
}

func (e *encoder) pair(x, y Expr) error {
	if err := e.expr(x); err != nil {
		return err
	}
	return e.expr(y)
}

// ---- Decoding ----

// Unmarshal decodes a program written by MarshalBinary and checks it with
// Validate. It never panics, and it allocates no more than a small
// multiple of len(data): every count is checked against the bytes left.
func Unmarshal(data []byte) (*Program, error) {
	d := &decoder{data: data}
	if len(data) < len(binaryMagic) || string(data[:len(binaryMagic)]) != binaryMagic {
		return nil, errors.New("sir: not a SIR program (bad magic)")
	}
	d.off = len(binaryMagic)
	if v := d.uint(); d.err == nil && v != binaryVersion {
		return nil, fmt.Errorf("sir: unsupported encoding version %d (this toolchain reads %d)", v, binaryVersion)
	}
	p := d.program()
	if d.err == nil && d.off != len(d.data) {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return nil, d.err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

type decoder struct {
	data  []byte
	off   int
	err   error
	files []string
	depth int
}

func (d *decoder) fail(msg string) {
	if d.err == nil {
		d.err = fmt.Errorf("sir: malformed program at byte %d: %s", d.off, msg)
	}
}

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.data[d.off:])
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.data[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	return v
}

// idx decodes an int that must fit in 32 bits (indices, slots, positions).
func (d *decoder) idx() int {
	v := d.int()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("index out of range")
		return 0
	}
	return int(v)
}

func (d *decoder) ref() TypeRef { return TypeRef(d.idx()) }

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.data) {
		d.fail("unexpected end")
		return 0
	}
	b := d.data[d.off]
	d.off++
	return b
}

func (d *decoder) bool() bool {
	switch d.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail("bad bool")
	return false
}

// count decodes a length; each element takes at least min bytes, so a
// count larger than what is left is malformed (and never allocated).
func (d *decoder) count(min int) int {
	n := d.uint()
	if d.err != nil {
		return 0
	}
	if n > uint64((len(d.data)-d.off)/min) {
		d.fail("count exceeds input")
		return 0
	}
	return int(n)
}

func (d *decoder) str() string {
	n := d.count(1)
	if d.err != nil {
		return ""
	}
	s := string(d.data[d.off : d.off+n])
	d.off += n
	return s
}

func (d *decoder) strs() []string  { return list(d, d.str) }
func (d *decoder) ints() []int     { return list(d, d.idx) }
func (d *decoder) refs() []TypeRef { return list(d, d.ref) }

// list reads a count, then that many elements with elem; nil when empty.
func list[T any](d *decoder, elem func() T) []T {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	out := make([]T, n)
	for i := range out {
		out[i] = elem()
	}
	return out
}

func (d *decoder) pos() ast.Pos {
	i := d.uint()
	if d.err != nil {
		return ast.Pos{}
	}
	var p ast.Pos
	switch {
	case i < uint64(len(d.files)):
		p.File = d.files[i]
	case i == uint64(len(d.files)):
		p.File = d.str()
		d.files = append(d.files, p.File)
	default:
		d.fail("bad file index")
		return p
	}
	p.Offset = d.idx()
	p.Line = d.idx()
	p.Col = d.idx()
	return p
}

func (d *decoder) value() Value {
	v := Value{Kind: TypeKind(d.byte())}
	switch v.Kind {
	case KindInt:
		v.Int = d.int()
	case KindFloat:
		if len(d.data)-d.off < 8 {
			d.fail("short float")
			return v
		}
		v.Float = math.Float64frombits(binary.LittleEndian.Uint64(d.data[d.off:]))
		d.off += 8
	case KindBool:
		v.Bool = d.bool()
	case KindString, KindBytes:
		v.Str = d.str()
	case KindVoid:
	default:
		d.fail("bad constant kind")
	}
	return v
}

func (d *decoder) vars() []Var {
	n := d.count(3)
	if n == 0 {
		return nil
	}
	out := make([]Var, n)
	for i := range out {
		out[i] = Var{Name: d.str(), Type: d.ref(), Slot: d.idx()}
	}
	return out
}

func (d *decoder) program() *Program {
	p := &Program{Entry: d.str(), Files: d.strs()}
	if n := d.count(8); n > 0 {
		p.Types = make([]*Type, n)
		for i := range p.Types {
			t := &Type{Kind: TypeKind(d.byte()), Elem: d.ref(), Key: d.ref(), Name: d.str(), Topic: d.bool(), Pos: d.pos()}
			if nf := d.count(2); nf > 0 {
				t.Fields = make([]Field, nf)
				for j := range t.Fields {
					t.Fields[j] = Field{Name: d.str(), Type: d.ref()}
				}
			}
			if nv := d.count(2); nv > 0 {
				t.Variants = make([]Variant, nv)
				for j := range t.Variants {
					t.Variants[j] = Variant{Name: d.str(), Fields: d.refs()}
				}
			}
			p.Types[i] = t
		}
	}
	if n := d.count(4); n > 0 {
		p.Consts = make([]*ConstDecl, n)
		for i := range p.Consts {
			p.Consts[i] = &ConstDecl{Name: d.str(), Type: d.ref(), Value: d.value(), Pos: d.pos()}
		}
	}
	if n := d.count(10); n > 0 {
		p.Funcs = make([]*Func, n)
		for i := range p.Funcs {
			f := &Func{Name: d.str(), Kind: FuncKind(d.byte()), Locus: d.idx(), Topic: d.idx(), NumParams: d.idx(), NumSlots: d.idx()}
			if nl := d.count(2); nl > 0 {
				f.Locals = make([]Local, nl)
				for j := range f.Locals {
					f.Locals[j] = Local{Name: d.str(), Type: d.ref()}
				}
			}
			f.Result = d.ref()
			f.Effects = d.strs()
			f.Pos = d.pos()
			f.Body = d.stmts()
			p.Funcs[i] = f
		}
	}
	if n := d.count(10); n > 0 {
		p.Loci = make([]*Locus, n)
		for i := range p.Loci {
			l := &Locus{Name: d.str(), Params: d.vars(), State: d.vars(), NumSlots: d.idx(), Init: d.idx(), Start: d.idx()}
			if nh := d.count(2); nh > 0 {
				l.Handlers = make([]HandlerRef, nh)
				for j := range l.Handlers {
					l.Handlers[j] = HandlerRef{Topic: d.idx(), Func: d.idx(), Guard: d.idx(), Shared: d.bool()}
				}
			}
			l.Fns = d.ints()
			l.Budget = d.int()
			l.Pos = d.pos()
			p.Loci[i] = l
		}
	}
	if n := d.count(6); n > 0 {
		p.Instances = make([]*Instance, n)
		for i := range p.Instances {
			in := &Instance{Name: d.str(), Locus: d.idx(), Args: d.exprs()}
			in.Placement = Placement{Kind: ast.PlacementKind(d.byte()), Pool: d.str()}
			in.Consumer = d.idx()
			in.Pos = d.pos()
			p.Instances[i] = in
		}
	}
	if n := d.count(4); n > 0 {
		p.Topics = make([]*Topic, n)
		for i := range p.Topics {
			p.Topics[i] = &Topic{Name: d.str(), Type: d.ref(), Subscribers: d.ints(), Pos: d.pos()}
		}
	}
	if n := d.count(4); n > 0 {
		p.Ingress = make([]*Ingress, n)
		for i := range p.Ingress {
			p.Ingress[i] = &Ingress{Topic: d.idx(), Consumer: d.idx(), Pos: d.pos()}
			if d.bool() {
				p.Ingress[i].NATS = d.nats()
			}
		}
	}
	if n := d.count(6); n > 0 {
		p.Exports = make([]*Export, n)
		for i := range p.Exports {
			p.Exports[i] = &Export{Topic: d.idx(), NATS: *d.nats(), Pos: d.pos()}
		}
	}
	if n := d.count(5); n > 0 {
		p.Prims = make([]*Prim, n)
		for i := range p.Prims {
			p.Prims[i] = &Prim{Name: d.str(), ID: d.idx(), Effect: d.str(), Params: d.refs(), Result: d.ref()}
		}
	}
	if n := d.count(3); n > 0 {
		p.Consumers = make([]*Consumer, n)
		for i := range p.Consumers {
			p.Consumers[i] = &Consumer{Kind: ConsumerKind(d.byte()), Name: d.str(), Instances: d.ints()}
		}
	}
	return p
}

func (d *decoder) enter() bool {
	d.depth++
	if d.depth > maxDepth {
		d.fail("nesting too deep")
		return false
	}
	return true
}

func (d *decoder) stmts() []Stmt {
	n := d.count(2)
	if n == 0 || !d.enter() {
		return nil
	}
	defer func() { d.depth-- }()
	out := make([]Stmt, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		if s := d.stmt(); s != nil {
			out = append(out, s)
		}
	}
	return out
}

func (d *decoder) stmt() Stmt {
	tag := d.byte()
	if d.err != nil {
		return nil
	}
	at := StmtBase{d.pos()}
	switch tag {
	case tagLet:
		return &Let{StmtBase: at, Slot: d.idx(), Value: d.expr()}
	case tagSetLocal:
		return &SetLocal{StmtBase: at, Slot: d.idx(), Value: d.expr()}
	case tagSetState:
		return &SetState{StmtBase: at, Slot: d.idx(), Value: d.expr()}
	case tagSetIndex:
		return &SetIndex{StmtBase: at, Kind: IndexKind(d.byte()), X: d.expr(), Index: d.expr(), Value: d.expr()}
	case tagSetField:
		return &SetField{StmtBase: at, Field: d.idx(), X: d.expr(), Value: d.expr()}
	case tagExprStmt:
		return &ExprStmt{StmtBase: at, X: d.expr()}
	case tagIf:
		return &If{StmtBase: at, Cond: d.expr(), Then: d.stmts(), Else: d.stmts()}
	case tagWhile:
		return &While{StmtBase: at, Cond: d.expr(), Body: d.stmts()}
	case tagForRange:
		return &ForRange{StmtBase: at, Slot: d.idx(), HiSlot: d.idx(), Lo: d.expr(), Hi: d.expr(), Body: d.stmts()}
	case tagForList:
		return &ForList{StmtBase: at, Slot: d.idx(), ListSlot: d.idx(), IdxSlot: d.idx(), List: d.expr(), Body: d.stmts()}
	case tagForMap:
		return &ForMap{StmtBase: at, KeySlot: d.idx(), ValSlot: d.idx(), MapSlot: d.idx(), IdxSlot: d.idx(), Map: d.expr(), Body: d.stmts()}
	case tagMatch:
		m := &Match{StmtBase: at, Kind: MatchKind(d.byte()), Slot: d.idx(), X: d.expr()}
		if n := d.count(7); n > 0 {
			m.Arms = make([]*Arm, n)
			for i := range m.Arms {
				m.Arms[i] = &Arm{Pos: d.pos(), Variant: d.idx(), Int: d.int(), Str: d.str(), Bool: d.bool(), Binds: d.ints(), Body: d.stmts()}
			}
		}
		m.HasDefault = d.bool()
		m.Default = d.stmts()
		return m
	case tagPublish:
		return &Publish{StmtBase: at, Topic: d.idx(), Fields: d.exprs(), Order: d.ints()}
	case tagPublishAfter:
		return &Publish{StmtBase: at, Topic: d.idx(), Fields: d.exprs(), Order: d.ints(), After: d.expr()}
	case tagReturn:
		return &Return{StmtBase: at, Value: d.expr()}
	case tagBreak:
		return &Break{StmtBase: at}
	case tagContinue:
		return &Continue{StmtBase: at}
	}
	d.fail("unknown statement tag")
	return nil
}

func (d *decoder) exprs() []Expr {
	n := d.count(2)
	if n == 0 {
		return nil
	}
	out := make([]Expr, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		x := d.expr()
		if x == nil {
			d.fail("missing expression in a list")
			return nil
		}
		out = append(out, x)
	}
	return out
}

func (d *decoder) expr() Expr {
	tag := d.byte()
	if d.err != nil || tag == 0 {
		return nil
	}
	if !d.enter() {
		return nil
	}
	defer func() { d.depth-- }()
	b := ExprBase{At: d.pos(), Ty: d.ref()}
	var x Expr
	switch tag {
	case tagConst:
		x = &Const{ExprBase: b, Value: d.value(), Name: d.str()}
	case tagLocalRef:
		x = &LocalRef{ExprBase: b, Slot: d.idx()}
	case tagStateRef:
		x = &StateRef{ExprBase: b, Slot: d.idx()}
	case tagUnary:
		x = &Unary{ExprBase: b, Op: UnaryOp(d.byte()), X: d.expr()}
	case tagBinary:
		x = &Binary{ExprBase: b, Op: BinaryOp(d.byte()), X: d.expr(), Y: d.expr()}
	case tagAnd:
		x = &And{ExprBase: b, X: d.expr(), Y: d.expr()}
	case tagOr:
		x = &Or{ExprBase: b, X: d.expr(), Y: d.expr()}
	case tagCall:
		x = &Call{ExprBase: b, Func: d.idx(), Args: d.exprs()}
	case tagCallBuiltin:
		x = &CallBuiltin{ExprBase: b, Builtin: Builtin(d.byte()), Args: d.exprs()}
	case tagCallPrim:
		x = &CallPrim{ExprBase: b, Prim: d.idx(), Name: d.str(), Args: d.exprs()}
	case tagMakeList:
		x = &MakeList{ExprBase: b, Elems: d.exprs()}
	case tagMakeMap:
		x = &MakeMap{ExprBase: b, Keys: d.exprs(), Values: d.exprs()}
	case tagMakeStruct:
		x = &MakeStruct{ExprBase: b, Fields: d.exprs(), Order: d.ints()}
	case tagMakeEnum:
		x = &MakeEnum{ExprBase: b, Variant: d.idx(), Args: d.exprs()}
	case tagIndex:
		x = &Index{ExprBase: b, Kind: IndexKind(d.byte()), X: d.expr(), Index: d.expr()}
	case tagFieldRef:
		x = &FieldRef{ExprBase: b, Field: d.idx(), X: d.expr()}
	case tagFormat:
		specs := list(d, d.int)
		x = &Format{ExprBase: b, Specs: specs, Parts: d.exprs()}
	case tagTry:
		x = &Try{ExprBase: b, Void: d.bool(), X: d.expr()}
	case tagQuestion:
		x = &Question{ExprBase: b, Ret: d.ref(), X: d.expr()}
	default:
		d.fail("unknown expression tag")
		return nil
	}
	return x
}

// nats writes a NATS endpoint: URL, URL variable, subject, queue.
func (e *encoder) nats(n *NATS) {
	e.str(n.URL)
	e.str(n.URLEnv)
	e.str(n.Subject)
	e.str(n.Queue)
}

func (d *decoder) nats() *NATS {
	return &NATS{URL: d.str(), URLEnv: d.str(), Subject: d.str(), Queue: d.str()}
}
