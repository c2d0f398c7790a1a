package fakellm

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, url, key, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("reply is not JSON: %v\n%s", err, raw)
	}
	return resp.StatusCode, v
}

const tools = `"tools":[{"type":"function","function":{"name":"lookup_stock"}},{"type":"function","function":{"name":"unit_price"}}]`

func TestToolCallsThenFinalAnswer(t *testing.T) {
	s, err := Start(Options{Key: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	status, v := post(t, s.URL, "k1", `{"model":"m","messages":[{"role":"user","content":"How many pears?"}],`+tools+`}`)
	if status != 200 {
		t.Fatalf("status %d: %v", status, v)
	}
	msg := v["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	calls := msg["tool_calls"].([]any)
	if len(calls) != 2 || msg["content"] != nil {
		t.Fatalf("want two tool calls and null content, got %v", msg)
	}
	args := calls[0].(map[string]any)["function"].(map[string]any)["arguments"]
	if args != `{"item":"pears"}` {
		t.Errorf("arguments %v, want the item named in the question", args)
	}
	body := `{"model":"m","messages":[{"role":"user","content":"How many pears?"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup_stock","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"unit_price","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"7 in stock"},{"role":"tool","tool_call_id":"call_2","content":"0.40 each"}],` + tools + `}`
	status, v = post(t, s.URL, "k1", body)
	if status != 200 {
		t.Fatalf("status %d: %v", status, v)
	}
	msg = v["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if msg["content"] != "Here is what I found: 7 in stock; 0.40 each." {
		t.Errorf("final answer %q", msg["content"])
	}
	if s.Calls() != 2 {
		t.Errorf("Calls() = %d, want 2", s.Calls())
	}
}

func TestRefusals(t *testing.T) {
	s, err := Start(Options{Key: "k1", FailFirst: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ok := `{"model":"m","messages":[{"role":"user","content":"q"}],` + tools + `}`
	if status, _ := post(t, s.URL, "k1", ok); status != 503 {
		t.Errorf("first request: status %d, want 503 (FailFirst)", status)
	}
	status, v := post(t, s.URL, "wrong-key", ok)
	if status != 401 || !strings.Contains(v["error"].(map[string]any)["message"].(string), "wrong-key") {
		t.Errorf("wrong key: status %d %v, want 401 echoing the key", status, v)
	}
	if status, _ := post(t, s.URL, "k1", `{"model":"m","messages":[{"role":"user","content":"q"}]}`); status != 400 {
		t.Errorf("no tools: status %d, want 400", status)
	}
	orphan := `{"model":"m","messages":[{"role":"user","content":"q"},{"role":"tool","tool_call_id":"x","content":"r"}],` + tools + `}`
	if status, _ := post(t, s.URL, "k1", orphan); status != 400 {
		t.Errorf("orphan tool result: status %d, want 400", status)
	}
	if status, _ := post(t, s.URL, "k1", ok); status != 200 {
		t.Errorf("good request after the failure: status %d", status)
	}
}

func TestStallOutlastsAClientTimeout(t *testing.T) {
	s, err := Start(Options{Key: "k", StallFirst: 1, Stall: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := &http.Client{Timeout: 100 * time.Millisecond}
	req, _ := http.NewRequest("POST", s.URL+"/v1/chat/completions", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer k")
	start := time.Now()
	if _, err := c.Do(req); err == nil {
		t.Fatal("a stalled request answered before the client's timeout")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the client waited %v", d)
	}
}
