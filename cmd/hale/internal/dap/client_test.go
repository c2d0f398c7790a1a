package dap

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	godap "github.com/google/go-dap"
)

// testClient is a DAP client for tests: it sends requests as raw JSON (so
// tests can also send malformed ones) and decodes what comes back with
// go-dap's codec.
type testClient struct {
	t      testing.TB
	conn   net.Conn
	seq    int
	in     chan godap.Message
	events []godap.Message // events read while waiting for a response
	output []godap.OutputEventBody
	served chan error
}

// timeout bounds every wait: the machine is slow and shared, but a stuck
// session must fail the test, not hang it.
const timeout = 2 * time.Minute

// startServer serves DAP over an in-memory pipe and returns a client.
func startServer(t testing.TB, opts Options) *testClient {
	t.Helper()
	serverEnd, clientEnd := net.Pipe()
	c := &testClient{t: t, conn: clientEnd, in: make(chan godap.Message, 1024), served: make(chan error, 1)}
	go func() {
		c.served <- Serve(context.Background(), serverEnd, serverEnd, opts)
		serverEnd.Close()
	}()
	go c.readLoop()
	t.Cleanup(func() { clientEnd.Close() })
	return c
}

// dialClient connects to a server listening on addr.
func dialClient(t testing.TB, addr string) *testClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &testClient{t: t, conn: conn, in: make(chan godap.Message, 1024)}
	go c.readLoop()
	t.Cleanup(func() { conn.Close() })
	return c
}

func (c *testClient) readLoop() {
	r := bufio.NewReader(c.conn)
	defer close(c.in)
	for {
		data, err := godap.ReadBaseMessage(r)
		if err != nil {
			return
		}
		msg, err := godap.DecodeProtocolMessage(data)
		if err != nil {
			c.t.Errorf("the server sent a message go-dap cannot decode: %v\n%s", err, data)
			return
		}
		c.in <- msg
	}
}

// sendRaw sends a request with the given command and arguments (any JSON
// value, or a json.RawMessage) and returns its seq.
func (c *testClient) sendRaw(command string, args any) int {
	c.t.Helper()
	c.seq++
	msg := map[string]any{"seq": c.seq, "type": "request", "command": command}
	if args != nil {
		msg["arguments"] = args
	}
	data, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.conn.SetWriteDeadline(time.Now().Add(timeout))
	if err := godap.WriteBaseMessage(c.conn, data); err != nil {
		c.t.Fatalf("sending %s: %v", command, err)
	}
	return c.seq
}

func (c *testClient) next() godap.Message {
	c.t.Helper()
	select {
	case m, ok := <-c.in:
		if !ok {
			c.t.Fatalf("the server closed the connection")
		}
		return m
	case <-time.After(timeout):
		c.t.Fatalf("no message from the server within %v", timeout)
	}
	return nil
}

// call sends a request and returns its response, keeping the events that
// came before it. A failed response fails the test.
func (c *testClient) call(command string, args any) godap.Message {
	c.t.Helper()
	resp := c.callAny(command, args)
	if r := resp.(godap.ResponseMessage).GetResponse(); !r.Success {
		c.t.Fatalf("%s failed: %s", command, r.Message)
	}
	return resp
}

// callErr sends a request that must fail and returns the error message.
func (c *testClient) callErr(command string, args any) string {
	c.t.Helper()
	resp := c.callAny(command, args)
	r := resp.(godap.ResponseMessage).GetResponse()
	if r.Success {
		c.t.Fatalf("%s succeeded, want an error response", command)
	}
	er, ok := resp.(*godap.ErrorResponse)
	if !ok || er.Body.Error == nil || er.Body.Error.Format != r.Message {
		c.t.Errorf("%s: error response without a body error matching its message: %#v", command, resp)
	}
	return r.Message
}

func (c *testClient) callAny(command string, args any) godap.Message {
	c.t.Helper()
	seq := c.sendRaw(command, args)
	for {
		m := c.next()
		if r, ok := m.(godap.ResponseMessage); ok {
			resp := r.GetResponse()
			if resp.RequestSeq != seq || resp.Command != command {
				c.t.Fatalf("response to %s #%d while waiting for %s #%d", resp.Command, resp.RequestSeq, command, seq)
			}
			return m
		}
		c.events = append(c.events, m)
	}
}

// event returns the next event named name, skipping output events (which
// it keeps) and failing on any other event in between.
func (c *testClient) event(name string) godap.Message {
	c.t.Helper()
	for {
		var m godap.Message
		if len(c.events) > 0 {
			m, c.events = c.events[0], c.events[1:]
		} else {
			m = c.next()
		}
		ev, ok := m.(godap.EventMessage)
		if !ok {
			c.t.Fatalf("unexpected %T while waiting for event %s", m, name)
		}
		got := ev.GetEvent().Event
		if got == name {
			return m
		}
		if got == "output" {
			c.output = append(c.output, m.(*godap.OutputEvent).Body)
			continue
		}
		c.t.Fatalf("event %s while waiting for %s: %#v", got, name, m)
	}
}

// stopped waits for a stopped event and checks its reason.
func (c *testClient) stopped(reason string) godap.StoppedEventBody {
	c.t.Helper()
	ev := c.event("stopped").(*godap.StoppedEvent)
	if ev.Body.Reason != reason {
		c.t.Fatalf("stopped with reason %q (%s), want %q", ev.Body.Reason, ev.Body.Description, reason)
	}
	if !ev.Body.AllThreadsStopped {
		c.t.Errorf("stopped event without allThreadsStopped: %#v", ev.Body)
	}
	return ev.Body
}

// exited waits for the end of the run: exited (returning its code), then
// terminated.
func (c *testClient) exited() int {
	c.t.Helper()
	code := c.event("exited").(*godap.ExitedEvent).Body.ExitCode
	c.event("terminated")
	return code
}

// stdout is what the output events of category stdout said so far.
func (c *testClient) stdout() string {
	var b strings.Builder
	for _, o := range c.output {
		if o.Category == "stdout" {
			b.WriteString(o.Output)
		}
	}
	return b.String()
}

// drainOutput moves output events already received into c.output.
func (c *testClient) drainOutput() {
	for {
		select {
		case m, ok := <-c.in:
			if !ok {
				return
			}
			c.events = append(c.events, m)
		default:
			kept := c.events[:0]
			for _, m := range c.events {
				if o, ok := m.(*godap.OutputEvent); ok {
					c.output = append(c.output, o.Body)
				} else {
					kept = append(kept, m)
				}
			}
			c.events = kept
			return
		}
	}
}

// The typed views of responses the tests read.

func (c *testClient) threads() []godap.Thread {
	c.t.Helper()
	return c.call("threads", nil).(*godap.ThreadsResponse).Body.Threads
}

func (c *testClient) stack(thread int) []godap.StackFrame {
	c.t.Helper()
	return c.call("stackTrace", map[string]any{"threadId": thread}).(*godap.StackTraceResponse).Body.StackFrames
}

func (c *testClient) scopes(frame int) []godap.Scope {
	c.t.Helper()
	return c.call("scopes", map[string]any{"frameId": frame}).(*godap.ScopesResponse).Body.Scopes
}

func (c *testClient) variables(ref int) []godap.Variable {
	c.t.Helper()
	return c.call("variables", map[string]any{"variablesReference": ref}).(*godap.VariablesResponse).Body.Variables
}

func (c *testClient) evaluate(frame int, expr string) godap.EvaluateResponseBody {
	c.t.Helper()
	return c.call("evaluate", map[string]any{"frameId": frame, "expression": expr, "context": "watch"}).(*godap.EvaluateResponse).Body
}

func (c *testClient) setBreakpoints(path string, lines ...int) []godap.Breakpoint {
	c.t.Helper()
	bps := make([]map[string]any, len(lines))
	for i, l := range lines {
		bps[i] = map[string]any{"line": l}
	}
	resp := c.call("setBreakpoints", map[string]any{"source": map[string]any{"path": path}, "breakpoints": bps})
	return resp.(*godap.SetBreakpointsResponse).Body.Breakpoints
}

// initialize sends initialize as VS Code does and returns the capabilities.
func (c *testClient) initialize() godap.Capabilities {
	c.t.Helper()
	resp := c.call("initialize", map[string]any{
		"clientID": "hale-test", "adapterID": "hale", "linesStartAt1": true, "columnsStartAt1": true,
		"pathFormat": "path", "supportsVariableType": true,
	})
	return resp.(*godap.InitializeResponse).Body
}

// launch sends launch and reads its events: capabilities (returned, nil
// when none) and initialized.
func (c *testClient) launch(args map[string]any) *godap.Capabilities {
	c.t.Helper()
	c.call("launch", args)
	var caps *godap.Capabilities
	m := c.eventAny()
	if ev, ok := m.(*godap.CapabilitiesEvent); ok {
		caps = &ev.Body.Capabilities
		m = c.eventAny()
	}
	if _, ok := m.(*godap.InitializedEvent); !ok {
		c.t.Fatalf("after launch: %#v, want the initialized event", m)
	}
	return caps
}

// eventAny returns the next event other than output.
func (c *testClient) eventAny() godap.Message {
	c.t.Helper()
	for {
		var m godap.Message
		if len(c.events) > 0 {
			m, c.events = c.events[0], c.events[1:]
		} else {
			m = c.next()
		}
		if o, ok := m.(*godap.OutputEvent); ok {
			c.output = append(c.output, o.Body)
			continue
		}
		return m
	}
}

// disconnect ends the session and checks that the server returns.
func (c *testClient) disconnect() {
	c.t.Helper()
	c.call("disconnect", map[string]any{"terminateDebuggee": true})
	if c.served != nil {
		select {
		case err := <-c.served:
			if err != nil {
				c.t.Errorf("Serve: %v", err)
			}
		case <-time.After(timeout):
			c.t.Fatalf("Serve did not return after disconnect")
		}
	}
}
