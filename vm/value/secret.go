package value

// A secret (docs/language.md, "Secrets") is a struct of the built-in type
// named "secret" with one field, parts: a list of strings that alternate
// literal text and environment variable names, starting and ending with
// literal text (which may be empty). "Bearer " + the secret of
// OPENAI_API_KEY is ["Bearer ", "OPENAI_API_KEY", ""]. No value of a
// variable is ever in it: the host substitutes the values when it sends
// an HTTP request.

// SecretTypeName is the name of the built-in secret type.
const SecretTypeName = "secret"

// SecretType is the secret type as the host builds it (the image has its
// own, equal one).
var SecretType = &Type{Kind: KindStruct, Name: SecretTypeName, Fields: []Field{{Name: "parts", Type: ListOf(StringType)}}}

// IsSecretType reports whether t is the built-in secret type: no declared
// type may take its name.
func IsSecretType(t *Type) bool {
	return t != nil && t.Kind == KindStruct && t.Name == SecretTypeName && len(t.Fields) == 1
}

// SecretPart is one part of a secret: literal text, or the name of an
// environment variable (Env set).
type SecretPart struct {
	Text string
	Env  bool
}

// SecretParts returns the parts of secret v, empty literals dropped.
func SecretParts(v Value) []SecretPart {
	raw := secretRaw(v)
	var out []SecretPart
	for i, s := range raw {
		env := i%2 == 1
		if !env && s == "" {
			continue
		}
		out = append(out, SecretPart{Text: s, Env: env})
	}
	return out
}

// secretRaw returns the alternating parts list of secret v (a string is
// one literal). A parts list that breaks the form (from a damaged
// artifact: empty, or ending with a variable) is completed with an empty
// literal, so that every secret has a last literal.
func secretRaw(v Value) []string {
	if v.Kind() != KindStruct {
		return []string{v.AsStr()}
	}
	s := v.AsStruct()
	if s.Len() != 1 || s.Field(0).Kind() != KindList {
		return []string{""}
	}
	l := s.Field(0).AsList()
	out := make([]string, l.Len(), l.Len()+1)
	for i := range out {
		if e := l.At(i); e.Kind() == KindString {
			out[i] = e.AsStr()
		}
	}
	if len(out)%2 == 0 {
		out = append(out, "")
	}
	return out
}

// NewSecret returns the secret of type t (nil for SecretType) with the
// given parts: adjacent literals merge, and empty literals drop.
func NewSecret(t *Type, parts []SecretPart) Value {
	if t == nil {
		t = SecretType
	}
	raw := []string{""}
	for _, p := range parts {
		if p.Env {
			raw = append(raw, p.Text, "")
		} else {
			raw[len(raw)-1] += p.Text
		}
	}
	elems := make([]Value, len(raw))
	for i, s := range raw {
		elems[i] = Str(s)
	}
	return NewStruct(t, []Value{NewList(elems)})
}

// JoinSecret is x + y where x or y is a secret and the other a string or
// a secret: a new secret, x's parts then y's.
func JoinSecret(x, y Value) Value {
	var t *Type
	if x.Kind() == KindStruct {
		t = x.AsStruct().Type()
	} else if y.Kind() == KindStruct {
		t = y.AsStruct().Type()
	}
	a, b := secretRaw(x), secretRaw(y)
	raw := make([]string, 0, len(a)+len(b)-1)
	raw = append(raw, a[:len(a)-1]...)
	raw = append(raw, a[len(a)-1]+b[0])
	raw = append(raw, b[1:]...)
	elems := make([]Value, len(raw))
	for i, s := range raw {
		elems[i] = Str(s)
	}
	if t == nil {
		t = SecretType
	}
	return NewStruct(t, []Value{NewList(elems)})
}

// appendSecretFormat writes the text form of a secret, which programs
// cannot ask for (str of a secret is a compile error) but messages about
// a call show: secret("Bearer " + $API_KEY), secret() for no parts.
func appendSecretFormat(buf []byte, v Value) []byte {
	buf = append(buf, "secret("...)
	for i, p := range SecretParts(v) {
		if i > 0 {
			buf = append(buf, " + "...)
		}
		if p.Env {
			buf = append(buf, '$')
			buf = append(buf, p.Text...)
		} else {
			buf = appendQuoted(buf, p.Text)
		}
	}
	return append(buf, ')')
}

// appendSecretJSON writes the JSON view of a secret:
// {"secret":["Bearer ",{"env":"OPENAI_API_KEY"}]}.
func appendSecretJSON(buf []byte, v Value) []byte {
	buf = append(buf, `{"secret":[`...)
	for i, p := range SecretParts(v) {
		if i > 0 {
			buf = append(buf, ',')
		}
		if p.Env {
			buf = append(buf, `{"env":`...)
			buf = appendJSONString(buf, p.Text)
			buf = append(buf, '}')
		} else {
			buf = appendJSONString(buf, p.Text)
		}
	}
	return append(buf, "]}"...)
}
