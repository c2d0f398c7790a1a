package codegen

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/hale-lang/hale/codegen/image"
)

// WriteAsm writes a readable disassembly of img, the output of
// `hale build app.hl --emit asm`. It is deterministic. Tables come first
// (files, types, constants, primitives, topics, loci, instances, ingress,
// consumers), then every function:
//
//	func f0 fib (fn) params 1 slots 1 frame 3 -> int
//	  0000* jge.int.k     r0, 2, @0002          ; app.hl:2:8
//	  0001  ret           r0                    ; app.hl:2:19
//
// Registers print as r<n> (the header names SIR's slots),
// instance slots as s<n>(<name>), constants as k<n>(<value>), jump
// targets as @<pc>, functions as f<n>(<name>); each instruction ends with
// its source position when it differs from the previous instruction's.
func WriteAsm(w io.Writer, img *image.Image) error {
	bw := bufio.NewWriter(w)
	a := &asm{img: img, w: bw}
	a.program()
	return bw.Flush()
}

type asm struct {
	img *image.Image
	w   *bufio.Writer
}

func (a *asm) printf(format string, args ...any) { fmt.Fprintf(a.w, format, args...) }

func (a *asm) typeName(t image.TypeRef) string {
	var b strings.Builder
	a.writeType(&b, t, 0)
	return b.String()
}

func (a *asm) writeType(b *strings.Builder, t image.TypeRef, depth int) {
	if t < 0 || int(t) >= len(a.img.Types) || depth > 64 {
		fmt.Fprintf(b, "t%d?", t)
		return
	}
	ty := &a.img.Types[t]
	switch ty.Kind {
	case image.KindList:
		b.WriteByte('[')
		a.writeType(b, ty.Elem, depth+1)
		b.WriteByte(']')
	case image.KindMap:
		b.WriteByte('{')
		a.writeType(b, ty.Key, depth+1)
		b.WriteString(": ")
		a.writeType(b, ty.Elem, depth+1)
		b.WriteByte('}')
	case image.KindStruct, image.KindEnum:
		b.WriteString(ty.Name)
	default:
		b.WriteString(ty.Kind.String())
	}
}

func (a *asm) constText(i int32) string {
	if i < 0 || int(i) >= len(a.img.Consts) {
		return "?"
	}
	k := &a.img.Consts[i]
	switch k.Kind {
	case image.KindInt:
		return strconv.FormatInt(k.Int, 10)
	case image.KindBool:
		return strconv.FormatBool(k.Int != 0)
	case image.KindFloat:
		if math.IsNaN(k.Float) || math.IsInf(k.Float, 0) {
			return strconv.FormatFloat(k.Float, 'g', -1, 64)
		}
		s := strconv.FormatFloat(k.Float, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eIN") {
			s += ".0"
		}
		return s
	case image.KindString:
		return strconv.Quote(k.Str)
	case image.KindBytes:
		return "b" + strconv.Quote(k.Str)
	case image.KindEnum:
		t := &a.img.Types[k.Type]
		return t.Name + "::" + t.Variants[k.Variant].Name
	}
	return "?"
}

func (a *asm) pos(p image.Pos) string {
	if p.Line == 0 {
		return "-"
	}
	file := "?"
	if int(p.File) < len(a.img.Files) {
		file = a.img.Files[p.File]
	}
	return fmt.Sprintf("%s:%d:%d", file, p.Line, p.Col)
}

func (a *asm) funcName(i int) string {
	if i < 0 || i >= len(a.img.Funcs) {
		return "f?"
	}
	return fmt.Sprintf("f%d(%s)", i, a.img.Funcs[i].Name)
}

func (a *asm) program() {
	img := a.img
	a.printf("; hale program image v%d, entry %s\n", image.Version, img.Entry)
	a.printf("\nfiles:\n")
	for i, f := range img.Files {
		a.printf("  %d %s\n", i, f)
	}
	a.printf("\ntypes:\n")
	for i := image.NumBasic; i < len(img.Types); i++ {
		t := &img.Types[i]
		switch t.Kind {
		case image.KindStruct:
			kw := "type"
			if t.Topic {
				kw = "topic"
			}
			var fs []string
			for _, f := range t.Fields {
				fs = append(fs, f.Name+": "+a.typeName(f.Type))
			}
			a.printf("  t%d %s %s { %s }\n", i, kw, t.Name, strings.Join(fs, ", "))
		case image.KindEnum:
			var vs []string
			for _, v := range t.Variants {
				s := v.Name
				if len(v.Fields) > 0 {
					var ts []string
					for _, f := range v.Fields {
						ts = append(ts, a.typeName(f))
					}
					s += "(" + strings.Join(ts, ", ") + ")"
				}
				vs = append(vs, s)
			}
			a.printf("  t%d enum %s { %s }\n", i, t.Name, strings.Join(vs, ", "))
		default:
			a.printf("  t%d %s\n", i, a.typeName(image.TypeRef(i)))
		}
	}
	a.printf("\nconsts:\n")
	for i := range img.Consts {
		a.printf("  k%d %s %s\n", i, img.Consts[i].Kind, a.constText(int32(i)))
	}
	a.printf("\nprims:\n")
	for i, p := range img.Prims {
		var ps []string
		for _, t := range p.Params {
			ps = append(ps, a.typeName(t))
		}
		a.printf("  p%d %s id %d (%s) -> %s\n", i, p.Name, p.ID, strings.Join(ps, ", "), a.typeName(p.Result))
	}
	a.printf("\ntopics:\n")
	for i, t := range img.Topics {
		a.printf("  T%d %s payload %s subscribers %v\n", i, t.Name, a.typeName(t.Type), t.Subscribers)
	}
	a.printf("\nloci:\n")
	for i := range img.Loci {
		l := &img.Loci[i]
		a.printf("  L%d %s slots %d init %s", i, l.Name, l.NumSlots, a.funcName(l.Init))
		if l.Start >= 0 {
			a.printf(" start %s", a.funcName(l.Start))
		}
		if l.Budget > 0 {
			a.printf(" budget %d", l.Budget)
		}
		a.printf("\n")
		for _, v := range l.Params {
			a.printf("    param s%d %s: %s\n", v.Slot, v.Name, a.typeName(v.Type))
		}
		for _, v := range l.State {
			a.printf("    state s%d %s: %s\n", v.Slot, v.Name, a.typeName(v.Type))
		}
		for _, h := range l.Handlers {
			extra := ""
			if h.Guard >= 0 {
				extra += " if " + a.funcName(h.Guard)
			}
			if h.Shared {
				extra += " shared"
			}
			a.printf("    on %s %s%s\n", img.Topics[h.Topic].Name, a.funcName(h.Func), extra)
		}
		for _, f := range l.Fns {
			a.printf("    fn %s\n", a.funcName(f))
		}
	}
	a.printf("\ninstances:\n")
	places := [...]string{"main", "pinned", "async_io", "pool"}
	for i, in := range img.Instances {
		place := "?"
		if int(in.Placement) < len(places) {
			place = places[in.Placement]
		}
		if in.Placement == image.PlacePool {
			place += "(" + strconv.Quote(in.Pool) + ")"
		}
		a.printf("  I%d %s locus L%d spawn %s on %s consumer %d\n", i, in.Name, in.Locus, a.funcName(in.Spawn), place, in.Consumer)
	}
	if len(img.Ingress) > 0 {
		a.printf("\ningress:\n")
		for i, in := range img.Ingress {
			if in.NATS != nil {
				a.printf("  %d nats %q to T%d consumer %d\n", i, in.NATS.Subject, in.Topic, in.Consumer)
				continue
			}
			a.printf("  %d stdin to T%d consumer %d\n", i, in.Topic, in.Consumer)
		}
	}
	if len(img.Exports) > 0 {
		a.printf("\nexports:\n")
		for i, x := range img.Exports {
			a.printf("  %d T%d to nats %q\n", i, x.Topic, x.NATS.Subject)
		}
	}
	a.printf("\nconsumers:\n")
	kinds := [...]string{"main", "pool", "pinned", "async_io", "ingress"}
	for i, c := range img.Consumers {
		kind := "?"
		if int(c.Kind) < len(kinds) {
			kind = kinds[c.Kind]
		}
		a.printf("  %d %s %q instances %v\n", i, kind, c.Name, c.Instances)
	}
	for i := range img.Funcs {
		a.function(i)
	}
}

func (a *asm) function(i int) {
	f := &a.img.Funcs[i]
	a.printf("\nfunc f%d %s (%s) params %d slots %d frame %d", i, f.Name, f.Kind, f.NumParams, f.NumSlots, f.FrameSize)
	if f.Result != image.TVoid {
		a.printf(" -> %s", a.typeName(f.Result))
	}
	a.printf("\n")
	for r, l := range f.Locals {
		if l.Name != "" {
			a.printf("  ; r%d %s: %s\n", r, l.Name, a.typeName(l.Type))
		}
	}
	last := ""
	for pc, in := range f.Code {
		info, _ := image.OpInfo(in.Op)
		var ops []string
		for j, kind := range [3]image.Operand{info.A, info.B, info.C} {
			x := [3]int32{in.A, in.B, in.C}[j]
			if kind == image.None {
				continue
			}
			ops = append(ops, a.operand(f, kind, x))
		}
		mark := " " // a statement start (Func.Stmts), where a debugger stops, is marked *
		if f.StmtAt(pc) >= 0 {
			mark = "*"
		}
		line := fmt.Sprintf("  %04d%s %-13s %s", pc, mark, info.Name, strings.Join(ops, ", "))
		if p := a.pos(f.PosAt(pc)); p != last {
			line = fmt.Sprintf("%-52s ; %s", line, p)
			last = p
		}
		a.printf("%s\n", strings.TrimRight(line, " "))
	}
}

func (a *asm) operand(f *image.Func, kind image.Operand, x int32) string {
	img := a.img
	switch kind {
	case image.Reg:
		return fmt.Sprintf("r%d", x)
	case image.Imm, image.Count:
		return strconv.Itoa(int(x))
	case image.KIdx:
		return fmt.Sprintf("k%d(%s)", x, a.constText(x))
	case image.TypeIdx:
		return fmt.Sprintf("t%d(%s)", x, a.typeName(image.TypeRef(x)))
	case image.FuncIdx:
		return a.funcName(int(x))
	case image.PrimIdx:
		if int(x) < len(img.Prims) {
			return fmt.Sprintf("p%d(%s)", x, img.Prims[x].Name)
		}
	case image.TopicIx:
		if int(x) < len(img.Topics) {
			return fmt.Sprintf("T%d(%s)", x, img.Topics[x].Name)
		}
	case image.BuiltIx:
		return image.Builtin(x).String()
	case image.Slot:
		if f.Locus >= 0 && f.Locus < len(img.Loci) {
			l := &img.Loci[f.Locus]
			for _, vs := range [][]image.Var{l.Params, l.State} {
				for _, v := range vs {
					if v.Slot == int(x) {
						return fmt.Sprintf("s%d(%s)", x, v.Name)
					}
				}
			}
		}
		return fmt.Sprintf("s%d", x)
	case image.Target:
		return fmt.Sprintf("@%04d", x)
	case image.KeyKind:
		return image.Kind(x).String()
	}
	return fmt.Sprintf("?%d", x)
}
