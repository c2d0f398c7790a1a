package image

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// The binary form of an image is Magic, uvarint(Version), then the
// sections in the order of the Image fields. Integers are uvarints when
// they cannot be negative and zigzag varints (encoding/binary's Varint)
// when they can; a string is uvarint(len) and its bytes; a list is
// uvarint(n) and n items; a bool is one byte 0 or 1; a float is its 8 IEEE
// bytes, little-endian. The form is deterministic: one image, one encoding.

// MarshalBinary returns the binary form of img. It fails when img does not
// validate, so that every encoding it produces decodes.
func (img *Image) MarshalBinary() ([]byte, error) {
	if err := img.Validate(); err != nil {
		return nil, err
	}
	e := &encoder{buf: make([]byte, 0, 1024)}
	e.raw(Magic)
	e.uint(Version)
	e.str(img.Entry)
	e.uint(uint64(len(img.Files)))
	for _, f := range img.Files {
		e.str(f)
	}
	e.uint(uint64(len(img.Types)))
	for i := range img.Types {
		e.typ(&img.Types[i])
	}
	e.uint(uint64(len(img.Consts)))
	for i := range img.Consts {
		e.konst(&img.Consts[i])
	}
	e.uint(uint64(len(img.Funcs)))
	for i := range img.Funcs {
		e.fn(&img.Funcs[i])
	}
	e.uint(uint64(len(img.Loci)))
	for i := range img.Loci {
		e.locus(&img.Loci[i])
	}
	e.uint(uint64(len(img.Instances)))
	for _, in := range img.Instances {
		e.str(in.Name)
		e.uint(uint64(in.Locus))
		e.uint(uint64(in.Spawn))
		e.byte(in.Placement)
		e.str(in.Pool)
		e.uint(uint64(in.Consumer))
	}
	e.uint(uint64(len(img.Topics)))
	for _, t := range img.Topics {
		e.str(t.Name)
		e.uint(uint64(t.Type))
		e.ints(t.Subscribers)
	}
	e.uint(uint64(len(img.Ingress)))
	for _, in := range img.Ingress {
		e.uint(uint64(in.Topic))
		e.uint(uint64(in.Consumer))
		if in.NATS == nil {
			e.byte(0)
			continue
		}
		e.byte(1)
		e.nats(in.NATS)
	}
	e.uint(uint64(len(img.Exports)))
	for i := range img.Exports {
		e.uint(uint64(img.Exports[i].Topic))
		e.nats(&img.Exports[i].NATS)
	}
	e.uint(uint64(len(img.Prims)))
	for _, p := range img.Prims {
		e.str(p.Name)
		e.uint(uint64(p.ID))
		e.uint(uint64(len(p.Params)))
		for _, t := range p.Params {
			e.uint(uint64(t))
		}
		e.uint(uint64(p.Result))
	}
	e.uint(uint64(len(img.Consumers)))
	for _, c := range img.Consumers {
		e.byte(c.Kind)
		e.str(c.Name)
		e.ints(c.Instances)
	}
	e.uint(uint64(len(img.SecretNames)))
	for _, s := range img.SecretNames {
		e.str(s)
	}
	return e.buf, nil
}

type encoder struct{ buf []byte }

func (e *encoder) raw(s string)  { e.buf = append(e.buf, s...) }
func (e *encoder) byte(b uint8)  { e.buf = append(e.buf, b) }
func (e *encoder) uint(u uint64) { e.buf = binary.AppendUvarint(e.buf, u) }
func (e *encoder) int(i int64)   { e.buf = binary.AppendVarint(e.buf, i) }
func (e *encoder) str(s string)  { e.uint(uint64(len(s))); e.raw(s) }
func (e *encoder) float(f float64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(f))
}

func (e *encoder) bool(b bool) {
	if b {
		e.byte(1)
	} else {
		e.byte(0)
	}
}

func (e *encoder) ints(xs []int) {
	e.uint(uint64(len(xs)))
	for _, x := range xs {
		e.uint(uint64(x))
	}
}

func (e *encoder) typ(t *Type) {
	e.byte(uint8(t.Kind))
	switch t.Kind {
	case KindList:
		e.uint(uint64(t.Elem))
	case KindMap:
		e.uint(uint64(t.Key))
		e.uint(uint64(t.Elem))
	case KindStruct:
		e.str(t.Name)
		e.bool(t.Topic)
		e.uint(uint64(len(t.Fields)))
		for _, f := range t.Fields {
			e.str(f.Name)
			e.uint(uint64(f.Type))
		}
	case KindEnum:
		e.str(t.Name)
		e.uint(uint64(len(t.Variants)))
		for _, v := range t.Variants {
			e.str(v.Name)
			e.uint(uint64(len(v.Fields)))
			for _, f := range v.Fields {
				e.uint(uint64(f))
			}
		}
	}
}

func (e *encoder) konst(k *Const) {
	e.byte(uint8(k.Kind))
	switch k.Kind {
	case KindInt, KindBool:
		e.int(k.Int)
	case KindFloat:
		e.float(k.Float)
	case KindString, KindBytes:
		e.str(k.Str)
	case KindEnum:
		e.uint(uint64(k.Type))
		e.uint(uint64(k.Variant))
	}
}

func (e *encoder) fn(f *Func) {
	e.str(f.Name)
	e.byte(uint8(f.Kind))
	e.int(int64(f.Locus))
	e.int(int64(f.Topic))
	e.uint(uint64(f.NumParams))
	e.uint(uint64(f.NumSlots))
	e.uint(uint64(f.FrameSize))
	e.uint(uint64(f.Result))
	e.uint(uint64(len(f.Locals)))
	for _, l := range f.Locals {
		e.str(l.Name)
		e.uint(uint64(l.Type))
		e.uint(uint64(l.Start))
	}
	e.uint(uint64(len(f.Code)))
	for _, in := range f.Code {
		e.byte(uint8(in.Op))
		e.int(int64(in.A))
		e.int(int64(in.B))
		e.int(int64(in.C))
	}
	e.uint(uint64(f.Decl.File))
	e.uint(uint64(f.Decl.Line))
	e.uint(uint64(f.Decl.Col))
	e.posTable(f.Pos)
	e.posTable(f.Stmts)
}

// posTable encodes a table sorted by pc (Func.Pos, Func.Stmts).
func (e *encoder) posTable(t []PosEntry) {
	e.uint(uint64(len(t)))
	prev := int32(0)
	for _, p := range t {
		e.uint(uint64(p.PC - prev)) // sorted: deltas are small and >= 0
		prev = p.PC
		e.uint(uint64(p.File))
		e.uint(uint64(p.Line))
		e.uint(uint64(p.Col))
	}
}

func (e *encoder) vars(vs []Var) {
	e.uint(uint64(len(vs)))
	for _, v := range vs {
		e.str(v.Name)
		e.uint(uint64(v.Type))
		e.uint(uint64(v.Slot))
	}
}

func (e *encoder) locus(l *Locus) {
	e.str(l.Name)
	e.vars(l.Params)
	e.vars(l.State)
	e.uint(uint64(l.NumSlots))
	e.uint(uint64(l.Init))
	e.int(int64(l.Start))
	e.uint(uint64(len(l.Handlers)))
	for _, h := range l.Handlers {
		e.uint(uint64(h.Topic))
		e.uint(uint64(h.Func))
		e.int(int64(h.Guard))
		shared := uint64(0)
		if h.Shared {
			shared = 1
		}
		e.uint(shared)
	}
	e.ints(l.Fns)
	e.int(l.Budget)
}

// FormatError reports bytes that are not an image this package can read.
type FormatError struct {
	Offset int
	Msg    string
	Err    error // ErrVersion for an image of another version, else nil
}

func (e *FormatError) Error() string {
	return "image: byte " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Unwrap returns e.Err.
func (e *FormatError) Unwrap() error { return e.Err }

// ErrVersion is wrapped by the error of Unmarshal for an image of another
// version (errors.Is(err, ErrVersion)), such as one cached by an older
// toolchain.
var ErrVersion = errors.New("image: unsupported version")

// Unmarshal decodes an image encoded by MarshalBinary and validates it. It
// never panics, and it allocates no more than a small multiple of
// len(data): every count is checked against the bytes left before
// anything is allocated for it.
func Unmarshal(data []byte) (img *Image, err error) {
	d := &decoder{data: data}
	if len(data) < len(Magic) || string(data[:len(Magic)]) != Magic {
		return nil, &FormatError{Offset: 0, Msg: "not a Hale program image"}
	}
	d.off = len(Magic)
	if v := d.uint(); d.err == nil && v != Version {
		return nil, &FormatError{len(Magic), "unsupported image version " + strconv.FormatUint(v, 10) + " (want " + strconv.Itoa(Version) + ")", ErrVersion}
	}
	img = &Image{}
	img.Entry = d.str()
	img.Files = makeSlice[string](d.count(1))
	for i := range img.Files {
		img.Files[i] = d.str()
	}
	img.Types = makeSlice[Type](d.count(1))
	for i := range img.Types {
		d.typ(&img.Types[i])
	}
	img.Consts = makeSlice[Const](d.count(2))
	for i := range img.Consts {
		d.konst(&img.Consts[i])
	}
	// a function takes at least 11 bytes (one per field)
	img.Funcs = makeSlice[Func](d.count(11))
	for i := range img.Funcs {
		d.fn(&img.Funcs[i])
	}
	img.Loci = makeSlice[Locus](d.count(9))
	for i := range img.Loci {
		d.locus(&img.Loci[i])
	}
	img.Instances = makeSlice[Instance](d.count(6))
	for i := range img.Instances {
		in := &img.Instances[i]
		in.Name = d.str()
		in.Locus = d.index()
		in.Spawn = d.index()
		in.Placement = d.byte()
		in.Pool = d.str()
		in.Consumer = d.index()
	}
	img.Topics = makeSlice[Topic](d.count(3))
	for i := range img.Topics {
		t := &img.Topics[i]
		t.Name = d.str()
		t.Type = d.tref()
		t.Subscribers = d.ints()
	}
	img.Ingress = makeSlice[Ingress](d.count(3))
	for i := range img.Ingress {
		img.Ingress[i].Topic = d.index()
		img.Ingress[i].Consumer = d.index()
		switch d.byte() {
		case 0:
		case 1:
			img.Ingress[i].NATS = d.nats()
		default:
			d.fail("bad ingress source")
		}
	}
	img.Exports = makeSlice[Export](d.count(5))
	for i := range img.Exports {
		img.Exports[i].Topic = d.index()
		img.Exports[i].NATS = *d.nats()
	}
	img.Prims = makeSlice[Prim](d.count(4))
	for i := range img.Prims {
		p := &img.Prims[i]
		p.Name = d.str()
		id := d.uint()
		if id > math.MaxUint16 {
			d.fail("primitive id out of range")
		}
		p.ID = uint16(id)
		if n := d.count(1); n > 0 {
			p.Params = make([]TypeRef, n)
			for j := range p.Params {
				p.Params[j] = d.tref()
			}
		}
		p.Result = d.tref()
	}
	img.Consumers = makeSlice[Consumer](d.count(3))
	for i := range img.Consumers {
		c := &img.Consumers[i]
		c.Kind = d.byte()
		c.Name = d.str()
		c.Instances = d.ints()
	}
	if n := d.count(1); n > 0 {
		img.SecretNames = make([]string, n)
		for i := range img.SecretNames {
			img.SecretNames[i] = d.str()
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	if d.off != len(data) {
		return nil, &FormatError{Offset: d.off, Msg: "trailing bytes"}
	}
	if err := img.Validate(); err != nil {
		return nil, err
	}
	return img, nil
}

// decoder reads the binary form. The first error sticks: later reads
// return zero values, so the decoding code needs no error checks between
// fields, and every count is zero after an error, so nothing more is
// allocated.
type decoder struct {
	data []byte
	off  int
	err  error
}

func (d *decoder) fail(msg string) {
	if d.err == nil {
		d.err = &FormatError{Offset: d.off, Msg: msg}
	}
}

func (d *decoder) byte() uint8 {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.data) {
		d.fail("truncated")
		return 0
	}
	b := d.data[d.off]
	d.off++
	return b
}

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	u, n := binary.Uvarint(d.data[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	return u
}

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	i, n := binary.Varint(d.data[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	return i
}

// i32 reads a varint that must fit in int32.
func (d *decoder) i32() int32 {
	i := d.int()
	if i < math.MinInt32 || i > math.MaxInt32 {
		d.fail("operand out of range")
		return 0
	}
	return int32(i)
}

// index reads a non-negative int of at most 31 bits (any index or count).
func (d *decoder) index() int {
	u := d.uint()
	if u > math.MaxInt32 {
		d.fail("index out of range")
		return 0
	}
	return int(u)
}

// sindex reads an index that may be -1.
func (d *decoder) sindex() int {
	i := d.int()
	if i < -1 || i > math.MaxInt32 {
		d.fail("index out of range")
		return 0
	}
	return int(i)
}

func (d *decoder) tref() TypeRef { return TypeRef(d.index()) }

// count reads a count of items that take at least min bytes each.
func (d *decoder) count(min int) int {
	n := d.uint()
	if d.err != nil {
		return 0
	}
	if n > uint64((len(d.data)-d.off)/min) {
		d.fail("count " + strconv.FormatUint(n, 10) + " exceeds the input")
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

func (d *decoder) float() float64 {
	if d.err != nil {
		return 0
	}
	if len(d.data)-d.off < 8 {
		d.fail("truncated")
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(d.data[d.off:]))
	d.off += 8
	return f
}

func (d *decoder) ints() []int {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	xs := make([]int, n)
	for i := range xs {
		xs[i] = d.index()
	}
	return xs
}

func (d *decoder) typ(t *Type) {
	t.Kind = Kind(d.byte())
	switch t.Kind {
	case KindList:
		t.Elem = d.tref()
	case KindMap:
		t.Key = d.tref()
		t.Elem = d.tref()
	case KindStruct:
		t.Name = d.str()
		t.Topic = d.bool()
		if n := d.count(2); n > 0 {
			t.Fields = make([]Field, n)
			for i := range t.Fields {
				t.Fields[i].Name = d.str()
				t.Fields[i].Type = d.tref()
			}
		}
	case KindEnum:
		t.Name = d.str()
		if n := d.count(2); n > 0 {
			t.Variants = make([]Variant, n)
			for i := range t.Variants {
				v := &t.Variants[i]
				v.Name = d.str()
				if m := d.count(1); m > 0 {
					v.Fields = make([]TypeRef, m)
					for j := range v.Fields {
						v.Fields[j] = d.tref()
					}
				}
			}
		}
	}
}

func (d *decoder) konst(k *Const) {
	k.Kind = Kind(d.byte())
	switch k.Kind {
	case KindInt, KindBool:
		k.Int = d.int()
	case KindFloat:
		k.Float = d.float()
	case KindString, KindBytes:
		k.Str = d.str()
	case KindEnum:
		k.Type = d.tref()
		k.Variant = d.index()
	default:
		d.fail("bad constant kind")
	}
}

func (d *decoder) fn(f *Func) {
	f.Name = d.str()
	f.Kind = FuncKind(d.byte())
	f.Locus = d.sindex()
	f.Topic = d.sindex()
	f.NumParams = d.index()
	f.NumSlots = d.index()
	f.FrameSize = d.index()
	f.Result = d.tref()
	if n := d.count(3); n > 0 {
		f.Locals = make([]Local, n)
		for i := range f.Locals {
			f.Locals[i].Name = d.str()
			f.Locals[i].Type = d.tref()
			f.Locals[i].Start = int32(d.index())
		}
	}
	if n := d.count(4); n > 0 {
		f.Code = make([]Instr, n)
		for i := range f.Code {
			in := &f.Code[i]
			in.Op = Op(d.byte())
			in.A = d.i32()
			in.B = d.i32()
			in.C = d.i32()
		}
	}
	f.Decl.File = int32(d.index())
	f.Decl.Line = int32(d.index())
	f.Decl.Col = int32(d.index())
	f.Pos = d.posTable()
	f.Stmts = d.posTable()
}

// posTable decodes a table sorted by pc (Func.Pos, Func.Stmts).
func (d *decoder) posTable() []PosEntry {
	n := d.count(4)
	if n == 0 {
		return nil
	}
	t := make([]PosEntry, n)
	pc := int64(0)
	for i := range t {
		p := &t[i]
		pc += int64(d.index())
		if pc > math.MaxInt32 {
			d.fail("pc out of range")
		}
		p.PC = int32(pc)
		p.File = int32(d.index())
		p.Line = int32(d.index())
		p.Col = int32(d.index())
	}
	return t
}

func (d *decoder) vars() []Var {
	n := d.count(3)
	if n == 0 {
		return nil
	}
	vs := make([]Var, n)
	for i := range vs {
		vs[i].Name = d.str()
		vs[i].Type = d.tref()
		vs[i].Slot = d.index()
	}
	return vs
}

func (d *decoder) locus(l *Locus) {
	l.Name = d.str()
	l.Params = d.vars()
	l.State = d.vars()
	l.NumSlots = d.index()
	l.Init = d.index()
	l.Start = d.sindex()
	if n := d.count(2); n > 0 {
		l.Handlers = make([]Handler, n)
		for i := range l.Handlers {
			l.Handlers[i].Topic = d.index()
			l.Handlers[i].Func = d.index()
			l.Handlers[i].Guard = d.sindex()
			l.Handlers[i].Shared = d.uint() != 0
		}
	}
	l.Fns = d.ints()
	l.Budget = d.int()
}

// makeSlice returns a slice of n zero items, nil when n is 0 (as the code
// generator leaves empty tables), so that decoding gives back the image
// that was encoded.
func makeSlice[T any](n int) []T {
	if n == 0 {
		return nil
	}
	return make([]T, n)
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
