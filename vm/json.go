package vm

import (
	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm/value"
)

// jsonBuiltin computes the std::json builtins that read JSON. Each has a
// last argument of its result type that carries the type: None of the
// Option it gives, or Err(…) of the Result it gives, whose Ok payload type
// is the target (Json for parse). They are pure and run in the
// interpreter, never through the host.
func (m *Machine) jsonBuiltin(b image.Builtin, args []value.Value) (value.Value, error) {
	switch b {
	case image.BuiltinJSONParse, image.BuiltinJSONDecode:
		rt := args[1].EnumType() // Result<T>
		var v value.Value
		var cost int64
		var err error
		if b == image.BuiltinJSONParse {
			v, cost, err = value.ParseJSON(args[0].AsStr(), rt.Variants[0].Fields[0])
		} else {
			v, cost, err = value.DecodeJSON(args[0].AsStr(), rt.Variants[0].Fields[0])
		}
		m.charge(cost)
		if err != nil {
			e := value.NewStruct(rt.Variants[1].Fields[0], []value.Value{value.Str(KindConvert), value.Str(err.Error())})
			return value.NewEnum(rt, 1, []value.Value{e}), nil
		}
		return value.NewEnum(rt, 0, []value.Value{v}), nil
	}
	j, none := args[0], args[len(args)-1]
	var x value.Value
	switch b {
	case image.BuiltinJSONGet:
		if j.Variant() != value.JSONObj {
			return none, nil
		}
		v, ok := j.Payload()[0].AsMap().Get(args[1])
		if !ok {
			return none, nil
		}
		x = v
	case image.BuiltinJSONAt:
		if j.Variant() != value.JSONArr {
			return none, nil
		}
		l, i := j.Payload()[0].AsList(), args[1].AsInt()
		if uint64(i) >= uint64(l.Len()) {
			return none, nil
		}
		x = l.At(int(i))
	default:
		if j.Variant() != jsonAsVariant[b-image.BuiltinJSONAsStr] {
			return none, nil
		}
		x = j.Payload()[0]
	}
	return value.NewEnum(none.EnumType(), 0, []value.Value{x}), nil
}

// jsonAsVariant is the Json variant each of as_str … as_obj reads, in the
// order of their builtin numbers.
var jsonAsVariant = [...]int{value.JSONStr, value.JSONNum, value.JSONBool, value.JSONArr, value.JSONObj}
