package explore

import (
	"fmt"

	"github.com/hale-lang/hale/vm/host"
	"github.com/hale-lang/hale/vm/value"
)

// secret answers std::os::secret(name): present if and only if the `env`
// fixture names the variable, or always when there is no `env` file. As
// in a live run, the program gets the secret as the variable's name;
// nothing resolves it, since requests go to the fixtures.
func (w *world) secret(args []byte) ([]byte, error) {
	vs, err := value.DecodeTuple(args, []*value.Type{value.StringType})
	if err != nil {
		return nil, fmt.Errorf("std::os::secret: bad arguments: %v", err)
	}
	name := vs[0].AsStr()
	if w.fx.HasEnv {
		if _, ok := w.fx.Env[name]; !ok {
			return value.Encode(nil, value.NewEnum(host.OptionSecretType, 1, nil))
		}
	}
	s := value.NewSecret(nil, []value.SecretPart{{Text: name, Env: true}})
	return value.Encode(nil, value.NewEnum(host.OptionSecretType, 0, []value.Value{s}))
}

// send answers std::http::send(req) from http.json by its method and URL.
func (w *world) send(args []byte) ([]byte, error) {
	vs, err := value.DecodeTuple(args, []*value.Type{host.RequestType})
	if err != nil {
		return nil, fmt.Errorf("std::http::send: bad arguments: %v", err)
	}
	f := vs[0].AsStruct()
	return w.http(f.Field(0).AsStr(), f.Field(1).AsStr())
}
