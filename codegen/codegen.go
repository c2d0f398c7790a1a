// Package codegen lowers SIR (package sir) to the program image (package
// codegen/image) that the interpreter (package vm) runs, and prints images
// as readable assembly (WriteAsm, for `hale build --emit asm`).
//
// Compile turns each SIR function into register bytecode. A frame is a
// window of registers on the interpreter's value stack: SIR's slots first
// (parameters, locals, SIR's hidden slots), then temporaries, allocated
// by the code generator in stack order as expressions need them, so the
// frame size is known before the function runs. Operands that are locals
// are read in place; the first operand of an operation whose destination
// is a temporary is evaluated into that destination (a temporary is free
// until the operation writes it), so a chain `a + b + c + …` needs one
// register however long it is; every other operand is evaluated into a
// fresh temporary, given back when the operation is emitted. A call evaluates its arguments into consecutive temporaries
// at the top of the frame; the callee's frame starts at the first of them
// (the arguments become its parameters without a copy) and its result
// lands there.
//
// Conditions compile to jumps: comparisons of ints fuse with the branch
// (jlt.int, jge.int.k, …), `&&`, `||` and `!` become control flow. Loops
// test at the bottom, so an iteration costs one instruction besides its
// body: the condition's jump, loop.range for `for i in a..b`, for.list or
// for.map for a `for` over a list or map. Those keep the container and the
// position in two temporaries and mark the container as iterated (so
// changing it traps) until the loop ends, whichever way it ends. Code that
// follows a jump or return and that no jump reaches is not emitted.
//
// Indices of types, functions, loci, instances, topics, ingress bindings
// and consumers are SIR's. One synthetic function per instance (named
// "main", kind FuncSpawn, appended after SIR's functions) evaluates the
// instance's spawn arguments into its parameter slots.
package codegen

import (
	"fmt"
	"math"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/diag"
	"github.com/hale-lang/hale/sir"
)

// Diagnostic codes of the limits of an image that a checked program can
// exceed (E09xx: code generation; docs/language.md lists them).
const (
	// CodeFrameTooLarge: a function needs more than image.MaxFrame
	// registers, e.g. a list literal of 70,000 computed elements.
	CodeFrameTooLarge diag.Code = "E0901"
	// CodeCodeTooLong: a function compiles to more than 2^31-1
	// instructions.
	CodeCodeTooLong diag.Code = "E0902"
)

// Compile lowers p to a program image. It fails only on a SIR program that
// breaks SIR's invariants, or on one that exceeds a limit of the image (a
// frame of more than image.MaxFrame registers): that error is a
// *diag.Error at the expression that outgrew the limit, which
// `hale check` reports like any other diagnostic.
func Compile(p *sir.Program) (img *image.Image, err error) {
	if p == nil {
		return nil, fmt.Errorf("codegen: no program")
	}
	c := &compiler{
		p:      p,
		img:    &image.Image{Entry: p.Entry},
		files:  map[string]int32{},
		consts: map[constKey]int32{},
	}
	defer func() {
		// An inconsistent SIR program must not crash the toolchain.
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("codegen: internal error: %v", r)
		}
	}()
	for _, f := range p.Files {
		c.file(f)
	}
	c.types()
	c.topology()
	for i, sf := range p.Funcs {
		c.img.Funcs = append(c.img.Funcs, image.Func{})
		if err := c.function(i, sf); err != nil {
			return nil, err
		}
	}
	for i, in := range p.Instances {
		c.img.Instances[i].Spawn = len(c.img.Funcs)
		c.img.Funcs = append(c.img.Funcs, image.Func{})
		if err := c.spawn(len(c.img.Funcs)-1, in); err != nil {
			return nil, err
		}
	}
	if err := c.img.Validate(); err != nil {
		return nil, fmt.Errorf("codegen: %w", err)
	}
	return c.img, nil
}

type compiler struct {
	p      *sir.Program
	img    *image.Image
	files  map[string]int32
	consts map[constKey]int32
}

type constKey struct {
	kind    image.Kind
	i       int64
	bits    uint64
	s       string
	typ     image.TypeRef
	variant int
}

func (c *compiler) file(name string) int32 {
	if i, ok := c.files[name]; ok {
		return i
	}
	i := int32(len(c.img.Files))
	c.img.Files = append(c.img.Files, name)
	c.files[name] = i
	return i
}

func (c *compiler) pos(p ast.Pos) image.Pos {
	if !p.IsValid() {
		return image.Pos{}
	}
	return image.Pos{File: c.file(p.File), Line: int32(p.Line), Col: int32(p.Col)}
}

func (c *compiler) konst(k image.Const) int32 {
	key := constKey{kind: k.Kind, i: k.Int, bits: math.Float64bits(k.Float), s: k.Str, typ: k.Type, variant: k.Variant}
	if i, ok := c.consts[key]; ok {
		return i
	}
	i := int32(len(c.img.Consts))
	c.img.Consts = append(c.img.Consts, k)
	c.consts[key] = i
	return i
}

func (c *compiler) sirConst(v sir.Value) int32 {
	switch v.Kind {
	case sir.KindInt:
		return c.konst(image.Const{Kind: image.KindInt, Int: v.Int})
	case sir.KindFloat:
		return c.konst(image.Const{Kind: image.KindFloat, Float: v.Float})
	case sir.KindBool:
		b := int64(0)
		if v.Bool {
			b = 1
		}
		return c.konst(image.Const{Kind: image.KindBool, Int: b})
	case sir.KindString:
		return c.konst(image.Const{Kind: image.KindString, Str: v.Str})
	case sir.KindBytes:
		return c.konst(image.Const{Kind: image.KindBytes, Str: v.Str})
	}
	panic(fmt.Sprintf("constant of kind %s", v.Kind))
}

func (c *compiler) types() {
	for _, t := range c.p.Types {
		it := image.Type{Kind: image.Kind(t.Kind), Elem: image.TypeRef(t.Elem), Key: image.TypeRef(t.Key), Name: t.Name, Topic: t.Topic}
		for _, f := range t.Fields {
			it.Fields = append(it.Fields, image.Field{Name: f.Name, Type: image.TypeRef(f.Type)})
		}
		for _, v := range t.Variants {
			iv := image.Variant{Name: v.Name}
			for _, f := range v.Fields {
				iv.Fields = append(iv.Fields, image.TypeRef(f))
			}
			it.Variants = append(it.Variants, iv)
		}
		c.img.Types = append(c.img.Types, it)
	}
}

func vars(vs []sir.Var) []image.Var {
	var out []image.Var
	for _, v := range vs {
		out = append(out, image.Var{Name: v.Name, Type: image.TypeRef(v.Type), Slot: v.Slot})
	}
	return out
}

// topology copies loci, instances, topics, ingress, primitives and
// consumers, keeping SIR's indices.
func (c *compiler) topology() {
	p, img := c.p, c.img
	for _, l := range p.Loci {
		il := image.Locus{
			Name: l.Name, Params: vars(l.Params), State: vars(l.State), NumSlots: l.NumSlots,
			Init: l.Init, Start: l.Start, Fns: append([]int(nil), l.Fns...), Budget: l.Budget,
		}
		for _, h := range l.Handlers {
			il.Handlers = append(il.Handlers, image.Handler{Topic: h.Topic, Func: h.Func, Guard: h.Guard, Shared: h.Shared})
		}
		img.Loci = append(img.Loci, il)
	}
	for _, in := range p.Instances {
		img.Instances = append(img.Instances, image.Instance{
			Name: in.Name, Locus: in.Locus, Placement: uint8(in.Placement.Kind), Pool: in.Placement.Pool, Consumer: in.Consumer,
		})
	}
	for _, t := range p.Topics {
		img.Topics = append(img.Topics, image.Topic{Name: t.Name, Type: image.TypeRef(t.Type), Subscribers: append([]int(nil), t.Subscribers...)})
	}
	for _, in := range p.Ingress {
		ii := image.Ingress{Topic: in.Topic, Consumer: in.Consumer}
		if n := in.NATS; n != nil {
			ii.NATS = &image.NATS{URL: n.URL, URLEnv: n.URLEnv, Subject: n.Subject, Queue: n.Queue}
		}
		img.Ingress = append(img.Ingress, ii)
	}
	for _, x := range p.Exports {
		n := x.NATS
		img.Exports = append(img.Exports, image.Export{Topic: x.Topic, NATS: image.NATS{URL: n.URL, URLEnv: n.URLEnv, Subject: n.Subject, Queue: n.Queue}})
	}
	for _, pr := range p.Prims {
		if pr.ID < 0 || pr.ID > math.MaxUint16 {
			panic(fmt.Sprintf("primitive %s has no id", pr.Name))
		}
		ip := image.Prim{Name: pr.Name, ID: uint16(pr.ID), Result: image.TypeRef(pr.Result)}
		for _, t := range pr.Params {
			ip.Params = append(ip.Params, image.TypeRef(t))
		}
		img.Prims = append(img.Prims, ip)
	}
	for _, cs := range p.Consumers {
		img.Consumers = append(img.Consumers, image.Consumer{Kind: uint8(cs.Kind), Name: cs.Name, Instances: append([]int(nil), cs.Instances...)})
	}
}
