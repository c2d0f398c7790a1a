// Package natsbus carries a Hale run's nats bindings and exports over a
// real NATS broker (docs/distributed.md): it is the host.Bus of `hale
// run`. The runtime (vm/host) knows only the host.Bus interface, so that
// neither it nor the WebAssembly guest depends on the NATS client.
//
//	bus := natsbus.New(natsbus.Options{Stderr: os.Stderr})
//	res, err := host.Run(ctx, img, host.Options{Bus: bus, ProcessID: pid, …})
//
// On the wire a message's body is the canonical encoding of the topic's
// payload, with two headers: Hale-Topic, the topic's name and the hash of
// its payload type (TypeHash), and Nats-Msg-Id, the sender's origin id
// `<process id>:<P:S>`. A receiver refuses (counts and logs on stderr,
// never decodes) a message whose type hash is not its topic's.
//
// Nothing is dropped silently: subscriptions have no pending limits (a
// slow process holds the backlog in memory and the runtime's flow control
// stalls the reader), and a lost connection is retried for
// Options.ReconnectWindow, after which the run fails naming the URL.
package natsbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm/host"
)

// DefaultReconnectWindow is how long a lost connection is retried before
// the run fails.
const DefaultReconnectWindow = 10 * time.Second

// Header names.
const (
	HeaderTopic = "Hale-Topic"
	HeaderMsgID = "Nats-Msg-Id"
)

// Options configures a Bus. The zero value is ready to use.
type Options struct {
	// ReconnectWindow bounds how long a lost connection is retried
	// (0: DefaultReconnectWindow).
	ReconnectWindow time.Duration
	// ConnectTimeout bounds the first connection (0: 2 s).
	ConnectTimeout time.Duration
	// Stderr receives a line for each refused message (nil discards).
	Stderr io.Writer
	// LookupEnv, when set, reads the variables that name URLs instead of
	// the run's own (host.BusSpec.LookupEnv).
	LookupEnv func(string) (string, bool)
}

// Bus is a host.Bus over NATS. Use a Bus for one run.
type Bus struct {
	opts     Options
	spec     host.BusSpec
	conns    []*conn
	bindings map[int]*binding // by img.Ingress index
	exports  []*export        // by img.Exports index
	sink     host.BusSink
	refused  atomic.Int64
	closing  atomic.Bool
	logMu    sync.Mutex
}

// conn is one connection, shared by every binding and export with the
// same URL.
type conn struct {
	url   string // as resolved, with its password
	shown string // for messages: the password replaced
	nc    *nats.Conn
	users []int // the bindings (img.Ingress indexes) on it, to name in a failure

	mu   sync.Mutex
	lost *time.Timer // running while disconnected
}

type binding struct {
	index   int
	conn    *conn
	subject string
	queue   string
	topic   string
	want    string // the expected type hash
	sub     *nats.Subscription
}

type export struct {
	conn    *conn
	subject string
	header  string // Hale-Topic
}

// New returns a Bus.
func New(opts Options) *Bus {
	if opts.ReconnectWindow <= 0 {
		opts.ReconnectWindow = DefaultReconnectWindow
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 2 * time.Second
	}
	return &Bus{opts: opts, bindings: map[int]*binding{}}
}

// Refused returns the number of messages refused so far (a type hash
// that is not the topic's, or a payload that does not decode).
func (b *Bus) Refused() int64 { return b.refused.Load() }

// Connect implements host.Bus: it resolves every URL and connects once
// per distinct URL. A refused connection is an error naming the URL
// without its password.
func (b *Bus) Connect(ctx context.Context, spec host.BusSpec) error {
	b.spec = spec
	if b.opts.LookupEnv != nil {
		spec.LookupEnv = b.opts.LookupEnv
	}
	img := spec.Image
	byURL := map[string]*conn{}
	get := func(n *image.NATS, what string) (*conn, error) {
		u, err := ResolveURL(n, spec.LookupEnv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if c := byURL[u]; c != nil {
			return c, nil
		}
		c := &conn{url: u, shown: Redact(u)}
		if err := b.dial(c); err != nil {
			return nil, err
		}
		byURL[u] = c
		b.conns = append(b.conns, c)
		return c, nil
	}
	for i, in := range img.Ingress {
		if in.NATS == nil {
			continue
		}
		c, err := get(in.NATS, fmt.Sprintf("nats binding %q", in.NATS.Subject))
		if err != nil {
			b.Close()
			return err
		}
		t := img.Topics[in.Topic]
		c.users = append(c.users, i)
		b.bindings[i] = &binding{index: i, conn: c, subject: in.NATS.Subject, queue: in.NATS.Queue, topic: t.Name, want: TypeHash(img, t.Type)}
	}
	for _, x := range img.Exports {
		c, err := get(&x.NATS, fmt.Sprintf("nats export %q", x.NATS.Subject))
		if err != nil {
			b.Close()
			return err
		}
		t := img.Topics[x.Topic]
		b.exports = append(b.exports, &export{conn: c, subject: x.NATS.Subject, header: t.Name + " " + TypeHash(img, t.Type)})
	}
	return nil
}

// dial makes c's connection, with the reconnect policy.
func (b *Bus) dial(c *conn) error {
	nc, err := nats.Connect(c.url,
		nats.Name("hale"),
		nats.NoEcho(), // a process never receives its own messages
		nats.Timeout(b.opts.ConnectTimeout),
		nats.MaxReconnects(-1), // the window below bounds the retrying
		nats.ReconnectWait(100*time.Millisecond),
		nats.ReconnectJitter(50*time.Millisecond, 50*time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, _ error) { b.disconnected(c) }),
		nats.ReconnectHandler(func(*nats.Conn) { b.reconnected(c) }),
		nats.ClosedHandler(func(*nats.Conn) {
			if !b.closing.Load() {
				b.failConn(c, fmt.Errorf("nats: the connection to %s was closed", c.shown))
			}
		}),
		nats.ErrorHandler(func(_ *nats.Conn, s *nats.Subscription, err error) {
			// With no pending limits a slow consumer cannot happen;
			// anything else the server says is worth showing.
			b.logf("nats: %s: %v\n", c.shown, err)
		}),
	)
	if err != nil {
		return fmt.Errorf("nats: cannot connect to %s: %v", c.shown, redactErr(err, c.url, c.shown))
	}
	c.nc = nc
	return nil
}

// disconnected starts the reconnect window of c.
func (b *Bus) disconnected(c *conn) {
	if b.closing.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost != nil {
		return
	}
	window := b.opts.ReconnectWindow
	c.lost = time.AfterFunc(window, func() {
		b.failConn(c, fmt.Errorf("nats: lost the connection to %s and could not reconnect within %s", c.shown, window))
	})
}

// reconnected stops c's reconnect window.
func (b *Bus) reconnected(c *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost != nil {
		c.lost.Stop()
		c.lost = nil
	}
}

// failConn ends the run: c is gone for good.
func (b *Bus) failConn(c *conn, err error) {
	if b.closing.Load() || b.sink == nil {
		return
	}
	at := -1
	if len(c.users) > 0 {
		at = c.users[0]
	}
	b.sink.Fail(at, err)
}

// Subscribe implements host.Bus: one subscription per binding (a queue
// subscription with `queue`), without pending limits.
func (b *Bus) Subscribe(sink host.BusSink) error {
	b.sink = sink
	for _, bd := range b.bindings {
		bd := bd
		handler := func(m *nats.Msg) { b.receive(bd, m) }
		var err error
		if bd.queue != "" {
			bd.sub, err = bd.conn.nc.QueueSubscribe(bd.subject, bd.queue, handler)
		} else {
			bd.sub, err = bd.conn.nc.Subscribe(bd.subject, handler)
		}
		if err == nil {
			err = bd.sub.SetPendingLimits(-1, -1)
		}
		if err != nil {
			return fmt.Errorf("nats: cannot subscribe to %q at %s: %v", bd.subject, bd.conn.shown, err)
		}
	}
	// The subscriptions are in place on the server before the program
	// could expect anything of them.
	for _, c := range b.conns {
		if err := c.nc.FlushTimeout(b.opts.ConnectTimeout); err != nil {
			return fmt.Errorf("nats: %s: %v", c.shown, err)
		}
	}
	return nil
}

// receive checks one message and hands it to the runtime.
func (b *Bus) receive(bd *binding, m *nats.Msg) {
	got := m.Header.Get(HeaderTopic)
	if hash := got[strings.LastIndexByte(got, ' ')+1:]; got == "" || hash != bd.want {
		n := b.refused.Add(1)
		b.logf("nats: refused a message on subject %q for topic %s: %s %q, expected type hash %s (%d refused)\n",
			m.Subject, bd.topic, HeaderTopic, got, bd.want, n)
		return
	}
	if _, err := b.sink.Receive(bd.index, m.Subject, m.Header.Get(HeaderMsgID), m.Data); err != nil {
		n := b.refused.Add(1)
		b.logf("nats: refused a message on subject %q for topic %s: %v (%d refused)\n", m.Subject, bd.topic, err, n)
	}
}

// Send implements host.Bus.
func (b *Bus) Send(x int, msgID string, payload []byte) error {
	ex := b.exports[x]
	m := nats.NewMsg(ex.subject)
	m.Header.Set(HeaderTopic, ex.header)
	m.Header.Set(HeaderMsgID, msgID)
	m.Data = payload
	if err := ex.conn.nc.PublishMsg(m); err != nil {
		return fmt.Errorf("nats: cannot send to subject %q at %s: %v", ex.subject, ex.conn.shown, err)
	}
	return nil
}

// Flush implements host.Bus: every message sent has reached the broker
// (or the connection's buffer could not be flushed within the reconnect
// window).
func (b *Bus) Flush() error {
	var errs []error
	for _, c := range b.conns {
		if c.nc == nil || c.nc.IsClosed() {
			continue
		}
		if err := c.nc.FlushTimeout(b.opts.ReconnectWindow); err != nil {
			errs = append(errs, fmt.Errorf("cannot flush the messages sent to %s: %v", c.shown, err))
		}
	}
	return errors.Join(errs...)
}

// Close implements host.Bus.
func (b *Bus) Close() {
	b.closing.Store(true)
	for _, c := range b.conns {
		c.mu.Lock()
		if c.lost != nil {
			c.lost.Stop()
		}
		c.mu.Unlock()
		if c.nc != nil {
			c.nc.Close()
		}
	}
}

func (b *Bus) logf(format string, args ...any) {
	if b.opts.Stderr == nil {
		return
	}
	b.logMu.Lock()
	defer b.logMu.Unlock()
	fmt.Fprintf(b.opts.Stderr, format, args...)
}

// ResolveURL returns the URL of a binding or export: its literal, or the
// value of its environment variable (an error when unset or empty).
func ResolveURL(n *image.NATS, lookupEnv func(string) (string, bool)) (string, error) {
	if n.URLEnv == "" {
		return n.URL, nil
	}
	if lookupEnv != nil {
		if v, ok := lookupEnv(n.URLEnv); ok && v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("the environment variable %s, which names the NATS URL, is not set", n.URLEnv)
}

// Redact returns a URL (or a comma-separated list of URLs) with its whole
// user information replaced by "xxxxx": a password, a user name, and a
// token (nats://TOKEN@host, NATS's token form, where the secret is in the
// user-name place) never reach an error message, stderr or a recording.
func Redact(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			u.User = url.User("xxxxx")
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}

// redactErr hides the user information of raw (shown is Redact(raw)) in
// an error message: every copy of the URL, and each user name, password
// or token on its own, as a client library may quote them.
func redactErr(err error, raw, shown string) string {
	msg := err.Error()
	if raw == shown {
		return msg
	}
	msg = strings.ReplaceAll(msg, raw, shown)
	for _, p := range strings.Split(raw, ",") {
		if u, perr := url.Parse(strings.TrimSpace(p)); perr == nil && u.User != nil {
			if pw, has := u.User.Password(); has && pw != "" {
				msg = strings.ReplaceAll(msg, pw, "xxxxx")
			}
			if name := u.User.Username(); name != "" {
				msg = strings.ReplaceAll(msg, name+"@", "xxxxx@")
				msg = strings.ReplaceAll(msg, name+":", "xxxxx:")
			}
		}
	}
	return msg
}

var _ host.Bus = (*Bus)(nil)
