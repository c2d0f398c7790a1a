package sir

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestShapeNATS: nats bindings and exports are in the shape (text, JSON,
// DOT) and its hash, with the URL shown redacted and not hashed.
func TestShapeNATS(t *testing.T) {
	src := edit(t, shapeBase, "bind stdin to Line;", `bind stdin to Line;
    bind nats("nats://user:hunter2@127.0.0.1:4222") subject "orders" queue "w" to Order;
    export Audit to nats(env "HALE_NATS_URL") subject "audit";`)
	s := shapeOf(t, map[string]string{"app.hl": src})
	var text, js, dot bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"nats:\n",
		`  bind "orders" queue "w" -> Order (nats nats://user:xxxxx@127.0.0.1:4222)`,
		`  export Audit -> "audit" (nats env HALE_NATS_URL)`,
		"consumer 3 ingress nats:orders:Order",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text shape lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "hunter2") {
		t.Errorf("the password reached the shape:\n%s", text.String())
	}
	if err := s.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var obj struct {
		NATS []ShapeNATS `json:"nats"`
	}
	if err := json.Unmarshal(js.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	if len(obj.NATS) != 2 || obj.NATS[0] != (ShapeNATS{"bind", "Order", "orders", "w", "nats://user:xxxxx@127.0.0.1:4222"}) ||
		obj.NATS[1] != (ShapeNATS{"export", "Audit", "audit", "", "env HALE_NATS_URL"}) {
		t.Errorf("JSON nats = %+v", obj.NATS)
	}
	if err := s.WriteDot(&dot); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"nats:orders" -> "topic:Order";`, `"topic:Audit" -> "nats:audit";`} {
		if !strings.Contains(dot.String(), want) {
			t.Errorf("DOT lacks %q:\n%s", want, dot.String())
		}
	}

	// The hash sees subjects, queues and topics, not the URL.
	base := shapeOf(t, map[string]string{"app.hl": shapeBase}).Hash()
	if s.Hash() == base {
		t.Error("adding nats bindings did not change the shape hash")
	}
	for _, c := range []struct {
		old, new string
		same     bool
	}{
		{`127.0.0.1:4222`, `10.0.0.1:4222`, true},
		{`env "HALE_NATS_URL"`, `env "OTHER"`, true},
		{`subject "orders"`, `subject "orders2"`, false},
		{`queue "w"`, `queue "v"`, false},
		{`export Audit`, `export Line`, false},
	} {
		h := shapeOf(t, map[string]string{"app.hl": edit(t, src, c.old, c.new)}).Hash()
		if (h == s.Hash()) != c.same {
			t.Errorf("%s -> %s: same hash = %v, want %v", c.old, c.new, h == s.Hash(), c.same)
		}
	}
}
