package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hale-lang/hale/replay"
)

// TestInspectorEscapes: the inspector shows the names and payloads of a
// recording, which may be forged, escaped: no control character reaches
// the terminal.
func TestInspectorEscapes(t *testing.T) {
	var out strings.Builder
	inspect := newInspector(env{stdin: strings.NewReader("msg\nbogus\nq\n"), stdout: &out}).inspect
	ins := &replay.Inspection{View: &replay.AtView{
		Coordinate: "1:2",
		Pending: replay.PendingDelivery{Target: "Work\x1b]0;owned\aer", Message: "0:1", Topic: "Job\u009b",
			Payload: json.RawMessage(`{"s":"del` + "\x7f" + `"}`)},
	}}
	if got := inspect(ins); got != replay.InspectHalt {
		t.Fatalf("action %v, want halt", got)
	}
	for _, c := range out.String() {
		if c < ' ' && c != '\n' || c >= 0x7f && c <= 0x9f {
			t.Fatalf("the inspector wrote %q:\n%q", c, out.String())
		}
	}
	for _, want := range []string{`target Work\x1b]0;owned\aer, message 0:1, topic Job\u009b)`, `"target": "Work\u001b]0;owned\u0007er"`, `"s": "del\u007f"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the inspector's output lacks %s:\n%s", want, out.String())
		}
	}
}
