// Package fakellm is a stand-in for an OpenAI-compatible chat-completions
// API (POST /v1/chat/completions), so that examples/agent.hl can be tried
// and tested without an API key or a network. It listens on loopback only.
//
// It plays a model that always wants its tools first: when the last
// message of a request is the user's, it answers with two tool calls
// (lookup_stock and unit_price, for the first item it recognises in the
// question); when the last messages are the tools' results, it answers
// with a final text that quotes them. It checks what a real API checks and
// answers as one does: a wrong or missing bearer token gets 401 (and, like
// some real APIs, the error message echoes the token it was given, which
// is what Hale's secret scrubbing is for), a malformed request 400, and
// the first few requests can be made to fail with 503 or to stall past a
// client's timeout, to exercise an agent's retries.
//
// Its answers are deterministic (fixed ids, a fixed creation time and no
// Date header), so a test can compare a run's output exactly.
package fakellm

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Options configures a Server.
type Options struct {
	// Key is the bearer token the server accepts
	// (Authorization: Bearer KEY).
	Key string
	// FailFirst makes the first FailFirst requests get 503 Service
	// Unavailable.
	FailFirst int
	// StallFirst makes the StallFirst requests after those stall for
	// Stall before answering normally.
	StallFirst int
	Stall      time.Duration
	// Log, when set, is told the outcome of each request.
	Log func(format string, args ...any)
}

// Server is a running fake API.
type Server struct {
	// URL is the base URL (http://127.0.0.1:PORT), without /v1.
	URL string

	opts  Options
	srv   *httptest.Server
	mu    sync.Mutex
	calls int
}

// Start starts a server on a free loopback port.
func Start(opts Options) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakellm: %w", err)
	}
	s := &Server{opts: opts}
	s.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(s.serve)}}
	s.srv.Start()
	s.URL = s.srv.URL
	return s, nil
}

// Close stops the server; a stalled request is abandoned.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Calls reports how many chat-completion requests the server has received.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// The request body, as much of it as the fake reads.
type chatRequest struct {
	Model    string    `json:"model"`
	Messages []message `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

type message struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// The tools the fake model calls; a request must offer both.
var toolNames = []string{"lookup_stock", "unit_price"}

// Items the fake model recognises in a question, in order of preference.
var items = []string{"apples", "pears", "plums", "figs"}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header()["Date"] = nil
	if r.URL.Path != "/v1/chat/completions" {
		apiError(w, http.StatusNotFound, "invalid_request_error", "no such endpoint: "+r.URL.Path)
		return
	}
	if r.Method != http.MethodPost {
		apiError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use POST")
		return
	}
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()

	auth := r.Header.Get("Authorization")
	if auth != "Bearer "+s.opts.Key {
		// Real APIs echo (part of) the key they were given; this one
		// echoes all of it, the worst case for a client's recording.
		s.logf("request %d: 401, wrong key", n)
		apiError(w, http.StatusUnauthorized, "invalid_api_key",
			fmt.Sprintf("Incorrect API key provided: %q", strings.TrimPrefix(auth, "Bearer ")))
		return
	}
	if n <= s.opts.FailFirst {
		s.logf("request %d: 503, as asked (-fail)", n)
		apiError(w, http.StatusServiceUnavailable, "server_error", "The server is overloaded; try again")
		return
	}
	// Read the whole body first: only then does the server notice a
	// client that gives up, which ends a stall early.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if n <= s.opts.FailFirst+s.opts.StallFirst {
		s.logf("request %d: stalling for %s (-stall-first)", n, s.opts.Stall)
		select {
		case <-time.After(s.opts.Stall):
		case <-r.Context().Done():
			s.logf("request %d: the client gave up", n)
			return
		}
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "body is not JSON: "+err.Error())
		return
	}
	if err := validate(req); err != nil {
		s.logf("request %d: 400, %v", n, err)
		apiError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	reply, finish := answer(req)
	s.logf("request %d: 200, finish_reason %s", n, finish)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id":      fmt.Sprintf("chatcmpl-fake-%d", n),
		"object":  "chat.completion",
		"created": 1767225600,
		"model":   req.Model,
		"choices": []any{map[string]any{"index": 0, "message": reply, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 10 * len(req.Messages), "completion_tokens": 12, "total_tokens": 10*len(req.Messages) + 12},
	})
}

func validate(req chatRequest) error {
	if req.Model == "" {
		return fmt.Errorf("you must provide a model parameter")
	}
	if len(req.Messages) == 0 {
		return fmt.Errorf("messages must not be empty")
	}
	offered := map[string]bool{}
	for _, t := range req.Tools {
		if t.Type == "function" {
			offered[t.Function.Name] = true
		}
	}
	for _, name := range toolNames {
		if !offered[name] {
			return fmt.Errorf("this model needs the tool %q in tools", name)
		}
	}
	// Every tool result must answer a call of the assistant message
	// before it, as the real API requires.
	var open map[string]bool
	for i, m := range req.Messages {
		switch m.Role {
		case "assistant":
			open = map[string]bool{}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case "tool":
			if !open[m.ToolCallID] {
				return fmt.Errorf("messages[%d]: tool_call_id %q answers no tool call", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		case "system", "user":
		default:
			return fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("the assistant's tool calls must each be answered by a tool message")
	}
	return nil
}

// answer plays the model: tool calls for a question, a final text once the
// tools have answered.
func answer(req chatRequest) (message, string) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role != "tool" {
		question := ""
		if last.Content != nil {
			question = strings.ToLower(*last.Content)
		}
		item := items[0]
		for _, it := range items {
			if strings.Contains(question, it) || strings.Contains(question, strings.TrimSuffix(it, "s")) {
				item = it
				break
			}
		}
		args, _ := json.Marshal(map[string]string{"item": item})
		var calls []toolCall
		for i, name := range toolNames {
			c := toolCall{ID: fmt.Sprintf("call_%d", i+1), Type: "function"}
			c.Function.Name = name
			c.Function.Arguments = string(args)
			calls = append(calls, c)
		}
		return message{Role: "assistant", ToolCalls: calls}, "tool_calls"
	}
	// Quote the results of the last round of tool calls.
	var parts []string
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == "tool"; i-- {
		content := ""
		if req.Messages[i].Content != nil {
			content = *req.Messages[i].Content
		}
		parts = append([]string{content}, parts...)
	}
	text := "Here is what I found: " + strings.Join(parts, "; ") + "."
	return message{Role: "assistant", Content: &text}, "stop"
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Log != nil {
		s.opts.Log(format, args...)
	}
}

func apiError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": msg, "type": code, "code": code},
	})
}
