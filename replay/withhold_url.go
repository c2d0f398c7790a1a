package replay

import (
	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm/host"
	"github.com/hale-lang/hale/vm/value"
)

// withheldArgs returns the arguments of a call as they are recorded and
// compared on replay: for a net call (std::http::get and post, whose
// first argument is the URL), the password of the URL's userinfo is
// replaced by as many '*' as it has bytes, under every env policy; the
// live call still uses the real URL. Other calls' arguments, and a URL
// without a password, come back unchanged (the same slice).
func withheldArgs(p stdlib.Primitive, args []byte) []byte {
	if p.Effect != stdlib.Net {
		return args
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

// argCount reads the element count that opens a tuple's canonical
// encoding; net primitives take one to three strings.
func argCount(args []byte) (int, bool) {
	if len(args) == 0 || args[0] > 3 {
		return 0, false
	}
	return int(args[0]), true
}
