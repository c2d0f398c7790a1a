package replay

import (
	"bytes"
	"testing"

	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm/value"
)

func TestWithheldArgs(t *testing.T) {
	prim := func(name string) stdlib.Primitive {
		p, ok := stdlib.Lookup(name)
		if !ok {
			t.Fatalf("no primitive %s", name)
		}
		return p
	}
	tuple := func(ss ...string) []byte {
		vs := make([]value.Value, len(ss))
		for i, s := range ss {
			vs[i] = value.Str(s)
		}
		b, err := value.EncodeTuple(nil, vs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		prim string
		args []byte
		want []byte
	}{
		// The URL of both net calls; the body and content type of a post
		// are values like any other.
		{"std::http::get", tuple("http://bob:pw123@h/"), tuple("http://bob:*****@h/")},
		{"std::http::post", tuple("http://bob:pw123@h/", "pw123", "text/plain"), tuple("http://bob:*****@h/", "pw123", "text/plain")},
		{"std::http::get", tuple("http://h/?pw=pw123"), tuple("http://h/?pw=pw123")},
		// Another effect's string argument that looks like a URL is not one.
		{"std::fs::write_text", tuple("http://bob:pw123@h/", "x"), tuple("http://bob:pw123@h/", "x")},
		// Arguments that are not strings are left alone.
		{"std::http::get", []byte{1, 0xff}, []byte{1, 0xff}},
	}
	for _, tt := range tests {
		got := withheldArgs(prim(tt.prim), tt.args)
		if !bytes.Equal(got, tt.want) {
			t.Errorf("%s %x: got %x, want %x", tt.prim, tt.args, got, tt.want)
		}
		if again := withheldArgs(prim(tt.prim), got); !bytes.Equal(again, got) {
			t.Errorf("%s: withholding twice changed %x to %x", tt.prim, got, again)
		}
	}
}
