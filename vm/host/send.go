package host

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

// std::os::secret and std::http::send: the host side of secrets
// (docs/language.md, "Secrets"). The guest holds a secret as its parts,
// literal text and environment variable names; the host substitutes the
// variables' values only here, when it sends a request, and scrubs every
// echo of them from what comes back before the result is journaled or
// given to the program.

// OptionSecretType is Option<secret>, the result of std::os::secret, as
// the runtime encodes it.
var OptionSecretType = &value.Type{Kind: value.KindEnum, Name: "Option<secret>", Variants: []value.Variant{
	{Name: "Some", Fields: []*value.Type{value.SecretType}},
	{Name: "None"},
}}

// RequestType is std::http::Request.
var RequestType = &value.Type{
	Kind: value.KindStruct,
	Name: "std::http::Request",
	Fields: []value.Field{
		{Name: "method", Type: value.StringType},
		{Name: "url", Type: value.StringType},
		{Name: "headers", Type: value.MapOf(value.StringType, value.StringType)},
		{Name: "secret_headers", Type: value.MapOf(value.StringType, value.SecretType)},
		{Name: "body", Type: value.StringType},
		{Name: "timeout_ms", Type: value.IntType},
	},
}

// Fields of RequestType.
const (
	reqMethod = iota
	reqURL
	reqHeaders
	reqSecretHeaders
	reqBody
	reqTimeout
)

// primSecret is std::os::secret(name): Some of a secret whose one part is
// the variable, or None when the variable is unset or empty. The value is
// read only to know whether it is there.
func primSecret(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::os::secret", args, stringType)
	if err != nil {
		return nil, err
	}
	name := vs[0].AsStr()
	if v, ok := c.r.lookupEnv(name); !ok || v == "" {
		return encodeValue(value.NewEnum(OptionSecretType, 1, nil))
	}
	s := value.NewSecret(nil, []value.SecretPart{{Text: name, Env: true}})
	return encodeValue(value.NewEnum(OptionSecretType, 0, []value.Value{s}))
}

// secretHeader is one entry of secret_headers, resolved for sending.
type secretHeader struct {
	name  string
	parts []value.SecretPart
	value string   // the bytes sent
	envs  []string // the variables it names, in order
	vals  []string // their values
}

// resolveSecret substitutes the variables of a secret header from the
// environment; a variable unset (or empty) traps with kind io, naming it.
func (c *consumer) resolveSecret(name string, v value.Value) (secretHeader, error) {
	h := secretHeader{name: name, parts: value.SecretParts(v)}
	var b strings.Builder
	for _, p := range h.parts {
		if !p.Env {
			b.WriteString(p.Text)
			continue
		}
		val, ok := c.r.lookupEnv(p.Text)
		if !ok || val == "" {
			return h, &vm.TrapError{Kind: vm.KindIO, Message: fmt.Sprintf("std::http::send: secret header %q: environment variable %s is not set", name, p.Text)}
		}
		b.WriteString(val)
		h.envs = append(h.envs, p.Text)
		h.vals = append(h.vals, val)
	}
	h.value = b.String()
	return h, nil
}

// scrubber replaces every echo of the sent secrets: the whole value of
// each secret header and the value of each of its variables, longest
// first, by "[secret NAME]" (NAME the variable, or the variables joined by
// "+" for a whole value made of several).
type scrubber struct {
	olds, news []string
}

func newScrubber(hs []secretHeader) *scrubber {
	type pair struct{ old, new string }
	var pairs []pair
	seen := map[string]bool{}
	add := func(old, new string) {
		if old == "" || seen[old] {
			return
		}
		seen[old] = true
		pairs = append(pairs, pair{old, new})
	}
	for _, h := range hs {
		if len(h.envs) > 0 {
			add(h.value, "[secret "+strings.Join(h.envs, "+")+"]")
		}
		for i, v := range h.vals {
			add(v, "[secret "+h.envs[i]+"]")
		}
	}
	// Longest first, so that a whole value is replaced before a part of
	// it; equal lengths by text, so the result never depends on map order.
	sort.Slice(pairs, func(i, j int) bool {
		if len(pairs[i].old) != len(pairs[j].old) {
			return len(pairs[i].old) > len(pairs[j].old)
		}
		return pairs[i].old < pairs[j].old
	})
	s := &scrubber{}
	for _, p := range pairs {
		s.olds = append(s.olds, p.old)
		s.news = append(s.news, p.new)
	}
	return s
}

// scrub returns text with every echo replaced.
func (s *scrubber) scrub(text string) string {
	if s == nil {
		return text
	}
	for i, old := range s.olds {
		if strings.Contains(text, old) {
			text = strings.ReplaceAll(text, old, s.news[i])
		}
	}
	return text
}

// primHTTPSend is std::http::send(req).
func primHTTPSend(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::http::send", args, RequestType)
	if err != nil {
		return nil, err
	}
	f := vs[0].AsStruct()
	timeoutMs := f.Field(reqTimeout).AsInt()
	if timeoutMs < 0 {
		return nil, &vm.TrapError{Kind: vm.KindArg, Message: fmt.Sprintf("std::http::send: timeout_ms must not be negative, got %d", timeoutMs)}
	}
	timeout := httpTimeout
	if timeoutMs > 0 {
		timeout = time.Duration(min(timeoutMs, int64(24*time.Hour/time.Millisecond))) * time.Millisecond
	}
	header := http.Header{}
	plain := f.Field(reqHeaders).AsMap()
	seen := map[string]string{} // canonical name -> name as written in headers
	for _, k := range plain.Keys().AsList().Elems() {
		v, _ := plain.Get(k)
		name := k.AsStr()
		if err := checkHeader(name, v.AsStr()); err != nil {
			return nil, err
		}
		seen[http.CanonicalHeaderKey(name)] = name
		header.Set(name, v.AsStr())
	}
	var secrets []secretHeader
	sm := f.Field(reqSecretHeaders).AsMap()
	for _, k := range sm.Keys().AsList().Elems() {
		v, _ := sm.Get(k)
		name := k.AsStr()
		if prev, dup := seen[http.CanonicalHeaderKey(name)]; dup {
			return nil, &vm.TrapError{Kind: vm.KindArg, Message: fmt.Sprintf("std::http::send: header %q is in both headers (as %q) and secret_headers", name, prev)}
		}
		h, err := c.resolveSecret(name, v)
		if err != nil {
			return nil, err
		}
		if err := checkHeader(name, ""); err != nil {
			return nil, err
		}
		if strings.ContainsAny(h.value, "\r\n") {
			return nil, &vm.TrapError{Kind: vm.KindArg, Message: fmt.Sprintf("std::http::send: the value of secret header %q holds a line break", name)}
		}
		seen[http.CanonicalHeaderKey(name)] = name
		header.Set(name, h.value)
		secrets = append(secrets, h)
	}
	call := httpRequest{
		method:  f.Field(reqMethod).AsStr(),
		url:     f.Field(reqURL).AsStr(),
		header:  header,
		body:    f.Field(reqBody).AsStr(),
		timeout: timeout,
		scrub:   newScrubber(secrets),
	}
	for _, h := range secrets {
		call.secretNames = append(call.secretNames, h.name)
	}
	if call.method == "" {
		return nil, &vm.TrapError{Kind: vm.KindArg, Message: "std::http::send: empty method"}
	}
	return c.send(call)
}

// checkHeader refuses a header name or value that cannot be sent.
func checkHeader(name, val string) error {
	if name == "" || strings.ContainsAny(name, " \t\r\n:") {
		return &vm.TrapError{Kind: vm.KindArg, Message: fmt.Sprintf("std::http::send: invalid header name %s", strconv.Quote(name))}
	}
	if strings.ContainsAny(val, "\r\n") {
		return &vm.TrapError{Kind: vm.KindArg, Message: fmt.Sprintf("std::http::send: the value of header %q holds a line break", name)}
	}
	return nil
}
