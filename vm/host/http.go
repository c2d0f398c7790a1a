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

// responseType is std::http::Response { status: int, body: string,
// headers: {string: string} }.
var responseType = &value.Type{
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
	return c.httpCall(http.MethodGet, vs[0].AsStr(), nil, "")
}

func primHTTPPost(c *consumer, args []byte) ([]byte, error) {
	vs, err := decodeArgs("std::http::post", args, stringType, stringType, stringType)
	if err != nil {
		return nil, err
	}
	return c.httpCall(http.MethodPost, vs[0].AsStr(), strings.NewReader(vs[1].AsStr()), vs[2].AsStr())
}

// httpCall performs one request. Any status is a Response; a request that
// gets no response (bad URL, refused connection, timeout, too many
// redirects) traps with a message naming the URL. The headers map has
// the canonical header names in sorted order, each with its values
// joined by ", ", so that equal responses encode equally.
func (c *consumer) httpCall(method, rawURL string, body io.Reader, contentType string) ([]byte, error) {
	fail := func(err error) error {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		// The message is recorded, and a URL's password never is.
		shown, _ := WithholdURLPassword(rawURL)
		kind := vm.KindIO
		var ne interface{ Timeout() bool }
		switch {
		case errors.Is(err, context.Canceled):
			// the run is being interrupted: no try may catch that
			return fmt.Errorf("cannot %s %q: %v", method, shown, err)
		case errors.As(err, &ne) && ne.Timeout():
			kind = vm.KindTimeout
		}
		return &vm.TrapError{Kind: kind, Message: fmt.Sprintf("cannot %s %q: %v", method, shown, err)}
	}
	req, err := http.NewRequestWithContext(c.r.ctx, method, rawURL, body)
	if err != nil {
		return nil, fail(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	c.r.out.flush() // the call may take a while
	resp, err := c.r.http.Do(req)
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
		headers.AsMap().Set(value.Str(name), value.Str(strings.Join(resp.Header[name], ", ")))
	}
	return encodeValue(value.NewStruct(responseType, []value.Value{
		value.Int(int64(resp.StatusCode)),
		value.Str(string(data)),
		headers,
	}))
}
