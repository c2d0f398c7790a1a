package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

// HTTP limits of std::http.
const (
	httpTimeout      = 30 * time.Second
	httpMaxRedirects = 10
	httpMaxBody      = 64 << 20
)

func defaultHTTPClient() *http.Client {
	return &http.Client{
		Timeout: httpTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > httpMaxRedirects { // via holds the requests so far: the 10th redirect is the 11th request
				// Any status is a Response: the program gets the 11th
				// redirect itself rather than a trap.
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
}

// ResponseType is std::http::Response, as the runtime encodes it:
// { status: int, body: string, headers: {string: string} }.
var ResponseType = &value.Type{
	Kind: value.KindStruct,
	Name: "std::http::Response",
	Fields: []value.Field{
		{Name: "status", Type: value.IntType},
		{Name: "body", Type: value.StringType},
		{Name: "headers", Type: value.MapOf(value.StringType, value.StringType)},
	},
}

func primHTTPGet(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::http::get", args, stringType)
	if err != nil {
		return nil, err
	}
	return c.send(httpRequest{method: http.MethodGet, url: vs[0].AsStr(), timeout: httpTimeout})
}

func primHTTPPost(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::http::post", args, stringType, stringType, stringType)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	if ct := vs[2].AsStr(); ct != "" {
		h.Set("Content-Type", ct)
	}
	return c.send(httpRequest{method: http.MethodPost, url: vs[0].AsStr(), header: h, body: vs[1].AsStr(), hasBody: true, timeout: httpTimeout})
}

// httpRequest is one request of std::http.
type httpRequest struct {
	method, url string
	header      http.Header
	body        string
	hasBody     bool // send body even when empty (post)
	timeout     time.Duration
	// secretNames are the headers whose values hold secrets: dropped on
	// a redirect to another host.
	secretNames []string
	// scrub replaces the echoes of the secrets sent (nil: none).
	scrub *scrubber
}

// send performs one request. Any status is a Response; a request that
// gets no response (bad URL, refused connection, timeout, too many
// redirects) traps with a message naming the URL: kind timeout when the
// time ran out, io otherwise. The headers map has the canonical header
// names in sorted order, each with its values joined by ", ", so that
// equal responses encode equally. Echoes of secrets are scrubbed from the
// body, the header values and a trap's message before anything is
// returned.
func (c *consumer) send(hr httpRequest) ([]byte, error) {
	method, rawURL := hr.method, hr.url
	fail := func(err error) error {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		// The message is recorded, and a URL's password never is.
		shown, _ := WithholdURLPassword(rawURL)
		var ne interface{ Timeout() bool }
		switch {
		case errors.Is(err, context.Canceled) && c.r.ctx.Err() != nil:
			// the run is being interrupted: no try may catch that
			return errors.New(hr.scrub.scrub(fmt.Sprintf("cannot %s %q: %v", method, shown, err)))
		case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
			// Go's own wording ("context deadline exceeded (Client.Timeout
			// exceeded while awaiting headers)") names its internals, not
			// the bound the program set.
			msg := fmt.Sprintf("cannot %s %q: no response within %d ms", method, shown, hr.timeout.Milliseconds())
			return &vm.TrapError{Kind: vm.KindTimeout, Message: hr.scrub.scrub(msg)}
		}
		return &vm.TrapError{Kind: vm.KindIO, Message: hr.scrub.scrub(fmt.Sprintf("cannot %s %q: %v", method, shown, err))}
	}
	var body io.Reader
	if hr.hasBody || hr.body != "" {
		body = strings.NewReader(hr.body)
	}
	ctx, cancel := context.WithTimeout(c.r.ctx, hr.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, rawURL, body)
	if err != nil {
		return nil, fail(err)
	}
	for k, v := range hr.header {
		req.Header[k] = v
	}
	client := c.r.http
	if client.Timeout != 0 && client.Timeout < hr.timeout {
		// The call's own timeout bounds it (by the context), also when
		// it is longer than the client's default.
		cl := *client
		cl.Timeout = 0
		client = &cl
	}
	if len(hr.secretNames) > 0 {
		client = withoutSecretsOnRedirect(client, hr.secretNames)
	}
	c.r.out.flush() // the call may take a while
	resp, err := client.Do(req)
	if err != nil {
		return nil, fail(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, httpMaxBody+1))
	if err != nil {
		return nil, fail(fmt.Errorf("reading the response: %w", err))
	}
	if len(data) > httpMaxBody {
		return nil, fail(fmt.Errorf("response body larger than %d bytes", httpMaxBody))
	}
	names := make([]string, 0, len(resp.Header))
	for name := range resp.Header {
		names = append(names, name)
	}
	sort.Strings(names)
	headers := value.NewMap(value.KindString, len(names))
	for _, name := range names {
		headers.AsMap().Set(value.Str(name), value.Str(hr.scrub.scrub(strings.Join(resp.Header[name], ", "))))
	}
	return encodeValue(value.NewStruct(ResponseType, []value.Value{
		value.Int(int64(resp.StatusCode)),
		value.Str(hr.scrub.scrub(string(data))),
		headers,
	}))
}

// withoutSecretsOnRedirect returns a copy of client whose redirects keep
// its own policy and drop the secret headers when the redirect goes to
// another host than the request's.
func withoutSecretsOnRedirect(client *http.Client, secretNames []string) *http.Client {
	cl := *client
	base := client.CheckRedirect
	cl.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
			for _, name := range secretNames {
				req.Header.Del(name)
			}
		}
		if base != nil {
			return base(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cl
}
