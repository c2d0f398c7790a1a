package vm

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm/value"
)

// Trap messages that do not depend on the data (see the table in the
// package documentation).
const (
	msgOverflow   = "integer overflow"
	msgDivZero    = "division by zero"
	msgBudget     = "budget exhausted"
	msgStack      = "stack overflow"
	msgListIter   = "list changed during iteration"
	msgMapIter    = "map changed during iteration"
	msgPopEmpty   = "pop from empty list"
	msgSplitSep   = "split with empty separator"
	msgUnwrapNone = "unwrap of None"
)

// TrapError is an error with a trap kind (Kind…), which the interpreter
// gives the trap it becomes. Builtins return it; a host may return it from
// a primitive (an error without a kind becomes a trap of KindHost, which
// try does not catch).
type TrapError struct {
	Kind    string
	Message string
}

func (e *TrapError) Error() string    { return e.Message }
func (e *TrapError) TrapKind() string { return e.Kind }

func trapErr(kind, msg string) error { return &TrapError{Kind: kind, Message: msg} }

func indexMsg(i int64, n int, what string) string {
	return "index " + strconv.FormatInt(i, 10) + " out of range for " + what + " of length " + strconv.Itoa(n)
}

// quoted returns v as str() writes it inside a container: strings quoted
// and escaped, everything else as at top level.
func quoted(v value.Value) string {
	s := value.Format(value.NewList([]value.Value{v}))
	return s[1 : len(s)-1]
}

// shiftMsg is the trap of a shift by n, outside 0 to 63 (the text of
// package sir's constant folding too).
func shiftMsg(n int64) string {
	return "shift count " + strconv.FormatInt(n, 10) + " out of range (0 to 63)"
}

func keyMsg(k value.Value) string { return "key " + quoted(k) + " not found in map" }

func convMsg(from value.Value, to string) error {
	return trapErr(KindConvert, "cannot convert "+quoted(from)+" to "+to)
}

func sliceMsg(a, b int64, n int, what string) error {
	return trapErr(KindIndex, "slice bounds "+strconv.FormatInt(a, 10)+".."+strconv.FormatInt(b, 10)+
		" out of range for "+what+" of length "+strconv.Itoa(n))
}

func iterMsg(v value.Value) error {
	if v.Kind() == value.KindMap {
		return trapErr(KindState, msgMapIter)
	}
	return trapErr(KindState, msgListIter)
}

// builtin computes builtin b on args (which may hold more registers than
// b takes).
func (m *Machine) builtin(b image.Builtin, args []value.Value) (value.Value, error) {
	switch b {
	case image.BuiltinPrint:
		return value.Value{}, m.print(args[0])
	case image.BuiltinStr:
		return value.Str(value.Format(args[0])), nil
	case image.BuiltinIntOfFloat:
		f := args[0].AsFloat()
		// The float range of int64 is [-2^63, 2^63): 2^63 itself is out.
		if !(f >= -(1<<63) && f < 1<<63) {
			return value.Value{}, convMsg(args[0], "int")
		}
		return value.Int(int64(f)), nil
	case image.BuiltinIntOfString:
		i, err := strconv.ParseInt(args[0].AsStr(), 10, 64)
		if err != nil {
			return value.Value{}, convMsg(args[0], "int")
		}
		return value.Int(i), nil
	case image.BuiltinFloatOfInt:
		return value.Float(float64(args[0].AsInt())), nil
	case image.BuiltinFloatOfString:
		f, err := strconv.ParseFloat(args[0].AsStr(), 64)
		if err != nil {
			return value.Value{}, convMsg(args[0], "float")
		}
		return value.Float(f), nil
	case image.BuiltinLenList:
		return value.Int(int64(args[0].AsList().Len())), nil
	case image.BuiltinLenMap:
		return value.Int(int64(args[0].AsMap().Len())), nil
	case image.BuiltinLenStr:
		return value.Int(int64(len(args[0].AsStr()))), nil
	case image.BuiltinPush:
		if err := args[0].AsList().Push(args[1]); err != nil {
			return value.Value{}, trapErr(KindState, msgListIter)
		}
		return value.Value{}, nil
	case image.BuiltinPop:
		v, err := args[0].AsList().Pop()
		if err == value.ErrEmpty {
			return v, trapErr(KindIndex, msgPopEmpty)
		} else if err != nil {
			return v, trapErr(KindState, msgListIter)
		}
		return v, nil
	case image.BuiltinInsert:
		l, i := args[0].AsList(), args[1].AsInt()
		if l.Iterating() {
			return value.Value{}, trapErr(KindState, msgListIter)
		}
		if i < 0 || i > int64(l.Len()) {
			return value.Value{}, trapErr(KindIndex, indexMsg(i, l.Len(), "list"))
		}
		return value.Value{}, l.Insert(int(i), args[2])
	case image.BuiltinRemove:
		l, i := args[0].AsList(), args[1].AsInt()
		if l.Iterating() {
			return value.Value{}, trapErr(KindState, msgListIter)
		}
		if uint64(i) >= uint64(l.Len()) {
			return value.Value{}, trapErr(KindIndex, indexMsg(i, l.Len(), "list"))
		}
		return l.Remove(int(i))
	case image.BuiltinHas:
		return value.Bool(args[0].AsMap().Has(args[1])), nil
	case image.BuiltinKeys:
		return args[0].AsMap().Keys(), nil
	case image.BuiltinValues:
		return args[0].AsMap().Values(), nil
	case image.BuiltinDelete:
		if err := args[0].AsMap().Delete(args[1]); err != nil {
			return value.Value{}, trapErr(KindState, msgMapIter)
		}
		return value.Value{}, nil
	case image.BuiltinSliceList:
		l := args[0].AsList()
		lo, hi := args[1].AsInt(), args[2].AsInt()
		if lo < 0 || lo > hi || hi > int64(l.Len()) {
			return value.Value{}, sliceMsg(lo, hi, l.Len(), "list")
		}
		return value.NewList(l.Elems()[lo:hi]), nil
	case image.BuiltinSliceStr, image.BuiltinSliceBytes:
		s := args[0].AsStr()
		lo, hi := args[1].AsInt(), args[2].AsInt()
		if lo < 0 || lo > hi || hi > int64(len(s)) {
			return value.Value{}, sliceMsg(lo, hi, len(s), args[0].Kind().String())
		}
		if b == image.BuiltinSliceBytes {
			return value.BytesOf(s[lo:hi]), nil
		}
		if (lo < int64(len(s)) && !utf8.RuneStart(s[lo])) || (hi < int64(len(s)) && !utf8.RuneStart(s[hi])) {
			return value.Value{}, trapErr(KindIndex, "slice "+strconv.FormatInt(lo, 10)+".."+strconv.FormatInt(hi, 10)+" cuts a UTF-8 character")
		}
		return value.Str(s[lo:hi]), nil
	case image.BuiltinSort:
		src := args[0].AsList().Elems()
		out := value.NewList(src)
		slices.SortStableFunc(out.AsList().Elems(), value.Compare)
		return out, nil
	case image.BuiltinContainsStr:
		return value.Bool(strings.Contains(args[0].AsStr(), args[1].AsStr())), nil
	case image.BuiltinContainsList:
		for _, x := range args[0].AsList().Elems() {
			eq, err := value.Equal(x, args[1])
			if err != nil {
				return value.Value{}, trapErr(KindArg, err.Error())
			}
			if eq {
				return value.Bool(true), nil
			}
		}
		return value.Bool(false), nil
	case image.BuiltinFind:
		return value.Int(int64(strings.Index(args[0].AsStr(), args[1].AsStr()))), nil
	case image.BuiltinSplit:
		sep := args[1].AsStr()
		if sep == "" {
			return value.Value{}, trapErr(KindArg, msgSplitSep)
		}
		parts := strings.Split(args[0].AsStr(), sep)
		out := value.NewListLen(len(parts))
		elems := out.AsList().Elems()
		for i, p := range parts {
			elems[i] = value.Str(p)
		}
		return out, nil
	case image.BuiltinJoin:
		return value.JoinStrs(args[0].AsList().Elems(), args[1].AsStr()), nil
	case image.BuiltinTrim:
		return value.Str(strings.TrimSpace(args[0].AsStr())), nil
	case image.BuiltinUpper:
		return value.Str(strings.ToUpper(args[0].AsStr())), nil
	case image.BuiltinLower:
		return value.Str(strings.ToLower(args[0].AsStr())), nil
	case image.BuiltinStartsWith:
		return value.Bool(strings.HasPrefix(args[0].AsStr(), args[1].AsStr())), nil
	case image.BuiltinEndsWith:
		return value.Bool(strings.HasSuffix(args[0].AsStr(), args[1].AsStr())), nil
	case image.BuiltinReplace:
		return value.Str(strings.ReplaceAll(args[0].AsStr(), args[1].AsStr(), args[2].AsStr())), nil
	case image.BuiltinAbsInt:
		i := args[0].AsInt()
		if i == math.MinInt64 {
			return value.Value{}, trapErr(KindArith, msgOverflow)
		}
		if i < 0 {
			i = -i
		}
		return value.Int(i), nil
	case image.BuiltinAbsFloat:
		return value.Float(math.Abs(args[0].AsFloat())), nil
	case image.BuiltinMinInt:
		return value.Int(min(args[0].AsInt(), args[1].AsInt())), nil
	case image.BuiltinMinFloat:
		return value.Float(min(args[0].AsFloat(), args[1].AsFloat())), nil
	case image.BuiltinMaxInt:
		return value.Int(max(args[0].AsInt(), args[1].AsInt())), nil
	case image.BuiltinMaxFloat:
		return value.Float(max(args[0].AsFloat(), args[1].AsFloat())), nil
	case image.BuiltinAssert:
		if !args[0].AsBool() {
			return value.Value{}, trapErr(KindAssert, args[1].AsStr())
		}
		return value.Value{}, nil
	case image.BuiltinPanic:
		return value.Value{}, trapErr(KindPanic, args[0].AsStr())
	case image.BuiltinJSONEncode:
		js, err := value.AppendJSON(nil, args[0])
		if err != nil {
			return value.Value{}, trapErr(KindArg, err.Error())
		}
		return value.Str(string(js)), nil
	case image.BuiltinSqrt:
		return value.Float(math.Sqrt(args[0].AsFloat())), nil
	case image.BuiltinFloor:
		return value.Float(math.Floor(args[0].AsFloat())), nil
	case image.BuiltinCeil:
		return value.Float(math.Ceil(args[0].AsFloat())), nil
	// Pow, Log, Exp and the trigonometric functions come from fmath, whose
	// results are the same bits on every machine (math's are not), through
	// the one function compiled code calls too (TierMath).
	case image.BuiltinPow, image.BuiltinAtan2, image.BuiltinHypot:
		return value.Float(mathBuiltin(b, args[0].AsFloat(), args[1].AsFloat())), nil
	case image.BuiltinLog, image.BuiltinExp, image.BuiltinSin, image.BuiltinCos, image.BuiltinTan,
		image.BuiltinAsin, image.BuiltinAcos, image.BuiltinAtan:
		return value.Float(mathBuiltin(b, args[0].AsFloat(), 0)), nil

	// Option (Some 0, None 1) and Result (Ok 0, Err 1).
	case image.BuiltinUnwrap:
		x := args[0]
		if x.Variant() == 0 {
			return x.Payload()[0], nil
		}
		if p := x.Payload(); len(p) == 1 { // Err(e): e's kind and message
			e := p[0].AsStruct()
			kind := e.Field(0).AsStr()
			if !Catchable(kind) {
				// The never-caught kinds name the runtime's own traps
				// (budget, stack, memory…); an Error the program built
				// cannot claim one, so it stays a catchable panic.
				kind = KindPanic
			}
			return value.Value{}, trapErr(kind, e.Field(1).AsStr())
		}
		return value.Value{}, trapErr(KindPanic, msgUnwrapNone)
	case image.BuiltinUnwrapOr:
		if args[0].Variant() == 0 {
			return args[0].Payload()[0], nil
		}
		return args[1], nil
	case image.BuiltinIsSome, image.BuiltinIsOk:
		return value.Bool(args[0].Variant() == 0), nil
	case image.BuiltinIsNone, image.BuiltinIsErr:
		return value.Bool(args[0].Variant() == 1), nil
	case image.BuiltinGetMap:
		v, ok := args[0].AsMap().Get(args[1])
		if !ok {
			return args[2], nil
		}
		return value.NewEnum(args[2].EnumType(), 0, []value.Value{v}), nil
	case image.BuiltinGetList:
		l, i := args[0].AsList(), args[1].AsInt()
		if uint64(i) >= uint64(l.Len()) {
			return args[2], nil
		}
		return value.NewEnum(args[2].EnumType(), 0, []value.Value{l.At(int(i))}), nil
	case image.BuiltinJSONParse, image.BuiltinJSONGet, image.BuiltinJSONAt, image.BuiltinJSONAsStr,
		image.BuiltinJSONAsNum, image.BuiltinJSONAsBool, image.BuiltinJSONAsArr, image.BuiltinJSONAsObj,
		image.BuiltinJSONDecode:
		return m.jsonBuiltin(b, args)
	case image.BuiltinSecretJoin:
		return value.JoinSecret(args[0], args[1]), nil
	}
	return value.Value{}, trapErr(KindInternal, "internal error: bad builtin "+b.String())
}

// builtinCost is what builtin b charges to the memory limit for its
// result v: the shallow size of a value it made, a slot for a list it
// grew, nothing for one it found (pop, remove) or a scalar.
func builtinCost(b image.Builtin, v value.Value) int64 {
	switch b {
	case image.BuiltinPush, image.BuiltinInsert:
		return value.SizeSlot
	case image.BuiltinStr, image.BuiltinKeys, image.BuiltinValues, image.BuiltinSliceList,
		image.BuiltinSort, image.BuiltinSplit, image.BuiltinJoin, image.BuiltinTrim,
		image.BuiltinUpper, image.BuiltinLower, image.BuiltinReplace, image.BuiltinJSONEncode,
		image.BuiltinSecretJoin:
		return value.ShallowSize(v)
	}
	return 0
}

// print sends str(v) to the host as a canonical string, without the
// newline (the host adds it).
func (m *Machine) print(v value.Value) error {
	m.text = value.AppendFormat(m.text[:0], v)
	buf := append(m.buf[:0], byte(value.KindString))
	buf = binary.AppendUvarint(buf, uint64(len(m.text)))
	buf = append(buf, m.text...)
	m.buf = buf
	_, err := m.host.Prim(PrimPrint, buf)
	return err
}

// callPrim calls a host primitive with the canonical tuple of its
// arguments (and, for std::process::exit, the position of the call at ip
// after them) and decodes its result.
func (m *Machine) callPrim(p *primCode, args []value.Value, ip unsafe.Pointer) (value.Value, error) {
	args = args[:p.nargs]
	if p.withPos {
		fc := &m.funcs[m.frames[len(m.frames)-1].fn]
		pos := m.posString(fc.fn.PosAt(pcOf(fc.codePtr(), ip) - 1))
		args = append(append(make([]value.Value, 0, len(args)+1), args...), value.Str(pos))
	}
	buf, err := value.EncodeTuple(m.buf[:0], args)
	m.buf = buf
	if err != nil {
		return value.Value{}, trapErr(KindArg, err.Error())
	}
	res, err := m.host.Prim(p.id, buf)
	if err != nil {
		return value.Value{}, err
	}
	if p.result.Kind == value.KindVoid {
		if len(res) == 0 || (len(res) == 1 && res[0] == byte(value.KindVoid)) {
			return value.Value{}, nil
		}
		return value.Value{}, trapErr(KindHost, "bad result from "+p.name+": want none")
	}
	v, err := value.Decode(res, p.result)
	if err != nil {
		return value.Value{}, trapErr(KindHost, "bad result from "+p.name+": "+err.Error())
	}
	m.charge(int64(len(res)) + value.ShallowSize(v))
	return v, nil
}

// publish sends a payload of topic built from fields to the host:
// uvarint(topic) then the canonical struct.
func (m *Machine) publish(topic int, fields []value.Value) error {
	n := len(m.types[m.img.Topics[topic].Type].Fields)
	m.buf = append(binary.AppendUvarint(m.buf[:0], uint64(topic)), byte(value.KindStruct))
	// A struct is encoded as the tuple of its fields after its tag.
	if !m.appendScalarTuple(fields[:n]) {
		buf, err := value.EncodeTuple(m.buf, fields[:n])
		m.buf = buf
		if err != nil {
			return trapErr(KindArg, err.Error())
		}
	}
	_, err := m.host.Prim(PrimPublish, m.buf)
	return err
}

// negativeDelay is the trap of a timer with a negative delay.
func negativeDelay(ms int64) error {
	return trapErr(KindArg, "negative delay "+strconv.FormatInt(ms, 10)+" ms in publish after")
}

// publishAfter sends a timer, `publish T {…} after ms;`, to the host:
// uvarint(topic), uvarint(ms), then the canonical struct (the guard bits,
// for a guarded topic, come before it: publishGuarded). A delay of 0 is
// a plain publish; a negative one traps with kind arg before anything is
// sent, so the message takes no identity.
func (m *Machine) publishAfter(topic int, fields []value.Value, ms int64) error {
	switch {
	case ms < 0:
		return negativeDelay(ms)
	case ms == 0:
		return m.publish(topic, fields)
	}
	n := len(m.types[m.img.Topics[topic].Type].Fields)
	buf := binary.AppendUvarint(m.buf[:0], uint64(topic))
	buf = binary.AppendUvarint(buf, uint64(ms))
	buf = append(buf, byte(value.KindStruct))
	buf, err := value.EncodeTuple(buf, fields[:n])
	m.buf = buf
	if err != nil {
		return trapErr(KindArg, err.Error())
	}
	_, err = m.host.Prim(PrimPublishAfter, buf)
	return err
}
