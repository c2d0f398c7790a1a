package replay

import (
	"bytes"
	"testing"

	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm/host"
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

// TestWithheldRequest: std::http::send's request is recorded with its
// URL's password and the values of its credential headers withheld (by
// length), whatever their case; other headers, the secret headers' parts
// and the body stay; a request with nothing to withhold is the same slice.
func TestWithheldRequest(t *testing.T) {
	send, ok := stdlib.Lookup("std::http::send")
	if !ok {
		t.Fatal("no std::http::send")
	}
	request := func(url string, headers map[string]string, order ...string) []byte {
		h := value.NewMap(value.KindString, len(order))
		for _, k := range order {
			h.AsMap().Set(value.Str(k), value.Str(headers[k]))
		}
		sh := value.NewMap(value.KindString, 1)
		sh.AsMap().Set(value.Str("Authorization"), value.JoinSecret(value.Str("Bearer "), value.NewSecret(nil, []value.SecretPart{{Text: "API_KEY", Env: true}})))
		req := value.NewStruct(host.RequestType, []value.Value{value.Str("POST"), value.Str(url), h, sh, value.Str("body pw123"), value.Int(0)})
		b, err := value.EncodeTuple(nil, []value.Value{req})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	got := withheldArgs(send, request("http://bob:pw123@h/", map[string]string{"cookie": "s=1", "X-API-KEY": "k-12345", "X-Trace": "t"}, "cookie", "X-API-KEY", "X-Trace"))
	want := request("http://bob:*****@h/", map[string]string{"cookie": "[withheld: 3 bytes]", "X-API-KEY": "[withheld: 7 bytes]", "X-Trace": "t"}, "cookie", "X-API-KEY", "X-Trace")
	if !bytes.Equal(got, want) {
		t.Errorf("withheld request:\n got %x\nwant %x", got, want)
	}
	if again := withheldArgs(send, got); !bytes.Equal(again, got) {
		t.Errorf("withholding twice changed the request")
	}
	plain := request("http://h/", map[string]string{"Accept": "x"}, "Accept")
	if got := withheldArgs(send, plain); &got[0] != &plain[0] {
		t.Errorf("a request with nothing to withhold was copied")
	}
	if got := withheldArgs(send, []byte{1, 0xff}); !bytes.Equal(got, []byte{1, 0xff}) {
		t.Errorf("bad arguments changed: %x", got)
	}
}
