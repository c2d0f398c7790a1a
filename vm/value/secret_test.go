package value

import (
	"strings"
	"testing"
)

func secretOf(raw ...string) Value {
	elems := make([]Value, len(raw))
	for i, s := range raw {
		elems[i] = Str(s)
	}
	return NewStruct(SecretType, []Value{NewList(elems)})
}

// TestJoinSecret: joining merges adjacent literals and drops empty ones;
// the JSON view lists the parts.
func TestJoinSecret(t *testing.T) {
	key := NewSecret(nil, []SecretPart{{Text: "KEY", Env: true}})
	org := NewSecret(nil, []SecretPart{{Text: "ORG", Env: true}})
	cases := []struct {
		v    Value
		json string
	}{
		{key, `{"secret":[{"env":"KEY"}]}`},
		{JoinSecret(Str("Bearer "), key), `{"secret":["Bearer ",{"env":"KEY"}]}`},
		{JoinSecret(JoinSecret(Str("a"), key), Str("b")), `{"secret":["a",{"env":"KEY"},"b"]}`},
		{JoinSecret(JoinSecret(key, Str(":")), org), `{"secret":[{"env":"KEY"},":",{"env":"ORG"}]}`},
		{JoinSecret(key, org), `{"secret":[{"env":"KEY"},{"env":"ORG"}]}`},
		{JoinSecret(JoinSecret(Str("x"), key), JoinSecret(Str("y"), org)), `{"secret":["x",{"env":"KEY"},"y",{"env":"ORG"}]}`},
		{JoinSecret(Str(""), JoinSecret(key, Str(""))), `{"secret":[{"env":"KEY"}]}`},
		{JoinSecret(Str("q\""), key), `{"secret":["q\"",{"env":"KEY"}]}`},
	}
	for i, c := range cases {
		got, err := AppendJSON(nil, c.v)
		if err != nil || string(got) != c.json {
			t.Errorf("case %d: %s, %v; want %s", i, got, err, c.json)
		}
	}
	if got := Format(JoinSecret(JoinSecret(Str("Bearer "), key), Str("\n"))); got != `secret("Bearer " + $KEY + "\n")` {
		t.Errorf("Format: %s", got)
	}
	if got := Format(secretOf()); got != "secret()" {
		t.Errorf("Format of no parts: %s", got)
	}
	// Equal parts encode equally, whichever way they were joined.
	a, _ := Encode(nil, JoinSecret(JoinSecret(Str("a"), key), Str("b")))
	b, _ := Encode(nil, JoinSecret(Str("a"), JoinSecret(key, Str("b"))))
	if string(a) != string(b) {
		t.Errorf("the same parts encode differently: %x and %x", a, b)
	}
}

// TestSecretDamaged: a secret whose parts break the form (as a damaged
// artifact could serve) joins and shows without a panic.
func TestSecretDamaged(t *testing.T) {
	for _, v := range []Value{secretOf(), secretOf("a", "K"), secretOf("", "K", "", "L")} {
		j := JoinSecret(v, JoinSecret(Str("x"), v))
		if _, err := AppendJSON(nil, j); err != nil {
			t.Errorf("%v: %v", v, err)
		}
		SecretParts(j)
	}
}

// FuzzSecretParts joins secrets of arbitrary parts lists: no panic, the
// parts of a join are those of its operands, and the JSON view is valid.
func FuzzSecretParts(f *testing.F) {
	f.Add("Bearer |KEY|", "|ORG|/x", true)
	f.Add("", "", false)
	f.Add("a|b|c|d", "|", true)
	f.Fuzz(func(t *testing.T, x, y string, asString bool) {
		xv := secretOf(strings.Split(x, "|")...)
		var yv Value
		if asString {
			yv = Str(y)
		} else {
			yv = secretOf(strings.Split(y, "|")...)
		}
		j := JoinSecret(xv, yv)
		var text, want strings.Builder
		for _, p := range SecretParts(j) {
			if p.Env {
				text.WriteString("${" + p.Text + "}")
			} else {
				text.WriteString(p.Text)
			}
		}
		for _, v := range []Value{xv, yv} {
			if v.Kind() == KindString {
				want.WriteString(v.AsStr())
				continue
			}
			for _, p := range SecretParts(v) {
				if p.Env {
					want.WriteString("${" + p.Text + "}")
				} else {
					want.WriteString(p.Text)
				}
			}
		}
		if text.String() != want.String() {
			t.Fatalf("join of %q and %q: parts %q, want %q", x, y, text.String(), want.String())
		}
		raw := secretRaw(j)
		if len(raw)%2 != 1 {
			t.Fatalf("join has %d raw parts", len(raw))
		}
		if _, err := AppendJSON(nil, j); err != nil {
			t.Fatal(err)
		}
	})
}
