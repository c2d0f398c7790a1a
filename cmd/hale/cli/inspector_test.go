package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectorEscapes: the inspector shows payloads and states, which
// hold the program's own text, escaped: no control character reaches the
// terminal.
func TestInspectorEscapes(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "app.hl"), `topic Job { s: string }
locus Work {
    var last: string = "";
    on start {
        publish Job { s: "del\u{7f}\u{1b}]0;owned\u{7}er\u{9b}" };
        publish Job { s: "second" };
    }
    on Job(j) { last = j.s; }
}
main { spawn Work; }
`)
	if code, stderr := runIn(t, dir, nil, map[string]string{"LOTUS_OBS_RECORD": "run.halerec"}, "run", "app.hl"); code != 0 {
		t.Fatalf("recording: exit %d: %s", code, stderr)
	}
	var out, stderr bytes.Buffer
	code := Run([]string{"replay", "--engine", "native", "run.halerec", "app.hl", "--at", "0:1", "--inspect"},
		env{stdin: strings.NewReader("msg\nbogus\nn\nstate\nq\n"), stdout: &out, stderr: &stderr, getenv: func(string) string { return "" }})
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr.String(), out.String())
	}
	for _, c := range out.String() {
		if c < ' ' && c != '\n' || c >= 0x7f && c <= 0x9f {
			t.Fatalf("the inspector wrote %q:\n%q", c, out.String())
		}
	}
	for _, want := range []string{`"s": "del\u007f\u001b]0;owned\u0007er\u009b"`, `unknown command "bogus"`, `{"last":"del\u007f\u001b]0;owned\u0007er\u009b"}`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the inspector's output lacks %s:\n%s", want, out.String())
		}
	}
}
