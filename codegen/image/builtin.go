package image

// Builtin identifies a function the interpreter implements itself (the
// operand of OpCallB). The numbering is SIR's Builtin numbering (the code
// generator's tests check the two tables agree) and part of the image
// encoding: append, never renumber.
type Builtin uint8

// Builtins; see docs/language.md and SIR's Builtin for their meaning.
const (
	BuiltinInvalid Builtin = iota
	BuiltinPrint
	BuiltinStr
	BuiltinIntOfFloat
	BuiltinIntOfString
	BuiltinFloatOfInt
	BuiltinFloatOfString
	BuiltinLenList
	BuiltinLenMap
	BuiltinLenStr
	BuiltinPush
	BuiltinPop
	BuiltinInsert
	BuiltinRemove
	BuiltinHas
	BuiltinKeys
	BuiltinValues
	BuiltinDelete
	BuiltinSliceList
	BuiltinSliceStr
	BuiltinSliceBytes
	BuiltinSort
	BuiltinContainsStr
	BuiltinContainsList
	BuiltinFind
	BuiltinSplit
	BuiltinJoin
	BuiltinTrim
	BuiltinUpper
	BuiltinLower
	BuiltinStartsWith
	BuiltinEndsWith
	BuiltinReplace
	BuiltinAbsInt
	BuiltinAbsFloat
	BuiltinMinInt
	BuiltinMinFloat
	BuiltinMaxInt
	BuiltinMaxFloat
	BuiltinAssert
	BuiltinPanic
	BuiltinJSONEncode
	BuiltinSqrt
	BuiltinFloor
	BuiltinCeil
	BuiltinPow
	BuiltinLog
	BuiltinExp
	BuiltinSin
	BuiltinCos
	BuiltinTan
	BuiltinAsin
	BuiltinAcos
	BuiltinAtan
	BuiltinAtan2
	BuiltinHypot
	BuiltinUnwrap
	BuiltinUnwrapOr
	BuiltinIsSome
	BuiltinIsNone
	BuiltinIsOk
	BuiltinIsErr
	BuiltinGetMap
	BuiltinGetList
	BuiltinJSONParse
	BuiltinJSONGet
	BuiltinJSONAt
	BuiltinJSONAsStr
	BuiltinJSONAsNum
	BuiltinJSONAsBool
	BuiltinJSONAsArr
	BuiltinJSONAsObj
	BuiltinJSONDecode
	BuiltinSecretJoin
	NumBuiltins
)

type builtinInfo struct {
	name  string
	arity int
}

var builtins = [NumBuiltins]builtinInfo{
	{"invalid", 0}, {"print", 1}, {"str", 1}, {"int.float", 1}, {"int.string", 1},
	{"float.int", 1}, {"float.string", 1},
	{"len.list", 1}, {"len.map", 1}, {"len.str", 1}, {"push", 2}, {"pop", 1}, {"insert", 3}, {"remove", 2},
	{"has", 2}, {"keys", 1}, {"values", 1}, {"delete", 2},
	{"slice.list", 3}, {"slice.str", 3}, {"slice.bytes", 3},
	{"sort", 1}, {"contains.str", 2}, {"contains.list", 2}, {"find", 2}, {"split", 2}, {"join", 2}, {"trim", 1},
	{"upper", 1}, {"lower", 1}, {"starts_with", 2}, {"ends_with", 2}, {"replace", 3},
	{"abs.int", 1}, {"abs.float", 1}, {"min.int", 2}, {"min.float", 2}, {"max.int", 2}, {"max.float", 2},
	{"assert", 2}, {"panic", 1}, {"std::json::encode", 1},
	{"std::math::sqrt", 1}, {"std::math::floor", 1}, {"std::math::ceil", 1}, {"std::math::pow", 2},
	{"std::math::log", 1}, {"std::math::exp", 1},
	{"std::math::sin", 1}, {"std::math::cos", 1}, {"std::math::tan", 1}, {"std::math::asin", 1},
	{"std::math::acos", 1}, {"std::math::atan", 1}, {"std::math::atan2", 2}, {"std::math::hypot", 2},
	{"unwrap", 1}, {"unwrap_or", 2}, {"is_some", 1}, {"is_none", 1}, {"is_ok", 1}, {"is_err", 1},
	{"get.map", 3}, {"get.list", 3},
	{"std::json::parse", 2}, {"std::json::get", 3}, {"std::json::at", 3}, {"std::json::as_str", 2},
	{"std::json::as_num", 2}, {"std::json::as_bool", 2}, {"std::json::as_arr", 2}, {"std::json::as_obj", 2},
	{"std::json::decode", 2},
	{"secret.join", 2},
}

// String returns the builtin's name, as SIR prints it ("len.list").
func (b Builtin) String() string {
	if b < NumBuiltins {
		return builtins[b].name
	}
	return "builtin?"
}

// Arity returns the number of arguments the builtin takes (0 for an
// unknown builtin).
func (b Builtin) Arity() int {
	if b < NumBuiltins {
		return builtins[b].arity
	}
	return 0
}
