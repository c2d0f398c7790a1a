package host

import (
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/hale-lang/hale/vm/value"
)

func TestWithholdURLPassword(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://alice:s3cr3t@example.com/x", "http://alice:******@example.com/x"},
		{"https://alice:p%40ss@example.com:8443/a/b?q=1#f", "https://alice:******@example.com:8443/a/b?q=1#f"},
		{"http://:token@host/", "http://:*****@host/"},
		{"http://a:b:c@host", "http://a:***@host"},       // the first ':' ends the user name
		{"http://a:b@c@host/", "http://a:***@host/"},     // the last '@' ends the userinfo
		{"//alice:pw@host/x", "//alice:**@host/x"},       // no scheme, still an authority
		{"HTTP://alice:pw@host", "HTTP://alice:**@host"}, // any scheme
		{"http://alice@host/", "http://alice@host/"},     // no password
		{"http://alice:@host/", "http://alice:@host/"},   // an empty one
		{"http://host/path?u=alice:pw@x", "http://host/path?u=alice:pw@x"},
		{"http://host/a:b@c", "http://host/a:b@c"},
		{"http://host#alice:pw@x", "http://host#alice:pw@x"},
		{"mailto:alice:pw@host", "mailto:alice:pw@host"}, // opaque: no userinfo
		{"1http://alice:pw@host", "1http://alice:pw@host"},
		{"not a url", "not a url"},
		{"", ""},
	}
	for _, tt := range tests {
		got, withheld := WithholdURLPassword(tt.in)
		if got != tt.want || withheld != (tt.in != tt.want) {
			t.Errorf("WithholdURLPassword(%q) = %q, %v; want %q", tt.in, got, withheld, tt.want)
		}
	}
}

// FuzzWithholdURLPassword compares with net/url, which decides what a
// request sends as credentials: when it finds a password, the withheld
// URL parses to the same URL with that password replaced by '*'s; when
// it finds none, the string is unchanged.
func FuzzWithholdURLPassword(f *testing.F) {
	for _, s := range []string{"http://alice:s3cr3t@example.com/x", "//a:b@c", "http://a:b@c@d/e?f#g",
		"https://u:p%20w@h:1/?q", "http://h/p?x=a:b@c", "x:y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, withheld := WithholdURLPassword(raw)
		if len(got) != len(raw) {
			t.Fatalf("length changed: %q -> %q", raw, got)
		}
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		pw, has := "", false
		if u.User != nil {
			pw, has = u.User.Password()
		}
		if !has || pw == "" {
			if withheld || got != raw {
				t.Fatalf("%q has no password for net/url, but became %q", raw, got)
			}
			return
		}
		if !withheld {
			t.Fatalf("%q: net/url finds password %q, it was not withheld", raw, pw)
		}
		w, err := url.Parse(got)
		if err != nil {
			t.Fatalf("%q withheld as %q, which does not parse: %v", raw, got, err)
		}
		wpw, _ := w.User.Password()
		if strings.Trim(wpw, "*") != "" || w.User.Username() != u.User.Username() || w.Host != u.Host ||
			w.Path != u.Path || w.RawQuery != u.RawQuery || w.Fragment != u.Fragment || w.Scheme != u.Scheme {
			t.Fatalf("%q withheld as %q: %+v, want %+v with the password in '*'s", raw, got, w, u)
		}
	})
}

// TestHTTPTrapWithholdsURLPassword: a request that gets no response
// traps naming the URL, without its password (the message is recorded).
func TestHTTPTrapWithholdsURLPassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := gateway(t, Options{})
	_, err = callPrim(c, "std::http::get", value.Str("http://alice:hunter2@"+addr+"/"))
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), `"http://alice:*******@`+addr+`/"`) {
		t.Errorf("trap %v: want the URL with its password withheld", err)
	}
}
