package replay

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm/host"
	"github.com/hale-lang/hale/vm/value"
)

// withheldArgs returns the arguments of a call as they are recorded and
// compared on replay, under every env policy; the live call still uses
// the real arguments:
//
//   - a net call's URL (the first argument of std::http::get and post,
//     the url of std::http::send's request) has the password of its
//     userinfo replaced by as many '*' as it has bytes;
//   - the value of each plain header of std::http::send whose name is a
//     credential header (artifact.WithheldHeader) is replaced by
//     withheldHeaderValue(its length), so that replay matches it by name
//     and length.
//
// Secret headers need nothing: the request holds only their parts. Other
// calls' arguments, and requests with nothing to withhold, come back
// unchanged (the same slice).
func withheldArgs(p stdlib.Primitive, args []byte) []byte {
	if p.Effect != stdlib.Net {
		return args
	}
	if p.Name == "std::http::send" {
		return withheldRequest(args)
	}
	n, ok := argCount(args)
	if !ok || n == 0 {
		return args
	}
	types := make([]*value.Type, n)
	for i := range types {
		types[i] = value.StringType
	}
	vs, err := value.DecodeTuple(args, types)
	if err != nil {
		return args
	}
	shown, withheld := host.WithholdURLPassword(vs[0].AsStr())
	if !withheld {
		return args
	}
	vs[0] = value.Str(shown)
	out, err := value.EncodeTuple(nil, vs)
	if err != nil {
		return args
	}
	return out
}

// withheldHeaderValue is what a credential header's value of n bytes is
// recorded as.
func withheldHeaderValue(n int) string { return fmt.Sprintf("[withheld: %d bytes]", n) }

// isWithheldHeaderValue reports whether s is a withheldHeaderValue.
func isWithheldHeaderValue(s string) bool {
	n, ok := strings.CutPrefix(s, "[withheld: ")
	if !ok {
		return false
	}
	n, ok = strings.CutSuffix(n, " bytes]")
	if !ok {
		return false
	}
	_, err := strconv.ParseUint(n, 10, 32)
	return err == nil
}

// withheldRequest is withheldArgs for std::http::send's one argument.
func withheldRequest(args []byte) []byte {
	vs, err := value.DecodeTuple(args, []*value.Type{host.RequestType})
	if err != nil {
		return args
	}
	req := vs[0].AsStruct()
	changed := false
	if shown, withheld := host.WithholdURLPassword(req.Field(1).AsStr()); withheld {
		req.SetField(1, value.Str(shown))
		changed = true
	}
	headers := req.Field(2).AsMap()
	for _, k := range headers.Keys().AsList().Elems() {
		if !artifact.WithheldHeader(k.AsStr()) {
			continue
		}
		v, _ := headers.Get(k)
		if isWithheldHeaderValue(v.AsStr()) {
			continue // already withheld: withholding is idempotent
		}
		headers.Set(k, value.Str(withheldHeaderValue(len(v.AsStr()))))
		changed = true
	}
	if !changed {
		return args
	}
	out, err := value.EncodeTuple(nil, vs)
	if err != nil {
		return args
	}
	return out
}

// argCount reads the element count that opens a tuple's canonical
// encoding; get and post take one to three strings.
func argCount(args []byte) (int, bool) {
	if len(args) == 0 || args[0] > 3 {
		return 0, false
	}
	return int(args[0]), true
}
