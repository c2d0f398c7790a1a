package value

// DecodeJSON reads s as a value of type t (see std::json::decode).
func DecodeJSON(s string, t *Type) (Value, int64, error) {
	return Value{}, 0, &JSONError{Msg: "decode: not implemented"}
}
