package artifact

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
)

const sampleDigest = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
const sampleShape = "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0efeeedecebeae9e8e7e6e5e4e3e2e1e0"

func TestSummaryJSON(t *testing.T) {
	a, err := Salvage(mustEncode(t, sample()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(Summarize(a, err))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"format_version":3,"hale_version":"0.1.0","created":"2025-03-01T12:00:00.0000005Z",` +
		`"build_digest":"` + sampleDigest + `","shape_hash":"` + sampleShape + `","env_policy":"withheld","complete":true,` +
		`"consumers":[{"id":0,"kind":"main","name":"main","entries":5},{"id":1,"kind":"pool","name":"workers","entries":3},` +
		`{"id":2,"kind":"pinned","name":"Ledger","entries":4},{"id":3,"kind":"ingress","name":"stdin","entries":1}],` +
		`"entries":13,"by_kind":{"delivery":3,"exit":1,"ingress":0,"invocation":3,"output":2,"publish":2,"trap":1,"unknown":1}}`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSummaryTruncated(t *testing.T) {
	data := mustEncode(t, sample())
	a, err := Salvage(data[:len(data)/2])
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("Salvage: %v", err)
	}
	s := Summarize(a, err)
	if s.Complete || s.Entries != uint64(len(a.Entries)) || s.Problem != err.Error() {
		t.Errorf("summary %+v", s)
	}
	var sum uint64
	for _, c := range s.Consumers {
		sum += c.Entries
	}
	if sum != s.Entries {
		t.Errorf("consumer counts add up to %d, not %d", sum, s.Entries)
	}
	var text strings.Builder
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^complete +no: truncated artifact: missing trailer;`).MatchString(text.String()) {
		t.Errorf("text summary:\n%s", text.String())
	}
}

func TestSummaryText(t *testing.T) {
	a, err := Salvage(mustEncode(t, sample()))
	var b strings.Builder
	if err := Summarize(a, err).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `format version  3
hale version    0.1.0
created         2025-03-01T12:00:00.0000005Z
build digest    ` + sampleDigest + `
shape hash      ` + sampleShape + `
env policy      withheld
files           app.hl lib/util.hl
memory limit    256 MiB per consumer
complete        yes (verdict exit, exit code 3)
entries         13
  invocation    3
  publish       2
  delivery      3
  output        2
  trap          1
  exit          1
  ingress       0
  unknown       1
consumers       4
  id  kind     name     entries
  0   main     main     5
  1   pool     workers  3
  2   pinned   Ledger   4
  3   ingress  stdin    1
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestDump(t *testing.T) {
	a, err := Decode(mustEncode(t, sample()))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Dump(&b, a, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"index":0,"consumer":0,"seq":0,"kind":"delivery","target":"Main","message":"start","topic":"","coordinate":"0:0","delivery":0}`,
		`{"index":1,"consumer":0,"seq":1,"kind":"invocation","primitive":"std::time::now_ms","args_hex":"","outcome":"ok","result_hex":"028001"}`,
		`{"index":2,"consumer":0,"seq":2,"kind":"invocation","primitive":"std::env::get","args_hex":"` + hex.EncodeToString([]byte("HIDDEN_SECRET")) + `","outcome":"withheld","length":11}`,
		`{"index":3,"consumer":0,"seq":3,"kind":"publish","topic":"Job","message":"0:0","payload_hex":"010203","delay_ms":0}`,
		`{"index":4,"consumer":3,"seq":0,"kind":"publish","topic":"Line","message":"3:0","payload_hex":"68656c6c6f","delay_ms":0}`,
		`{"index":5,"consumer":1,"seq":0,"kind":"delivery","target":"Worker#0","message":"0:0","topic":"Job","coordinate":"1:0","delivery":1}`,
		`{"index":6,"consumer":1,"seq":1,"kind":"invocation","primitive":"std::random::int","args_hex":"09","outcome":"trap","message":"random: empty range","trap_kind":"arg"}`,
		`{"index":7,"consumer":1,"seq":2,"kind":"output","channel":"stdout","primitive":"std::io::println","args_hex":"776f726b696e67","outcome":"ok","result_hex":"776f726b696e670a","text":"working\n"}`,
		`{"index":8,"consumer":2,"seq":0,"kind":"delivery","target":"Ledger","message":"3:0","topic":"Line","coordinate":"2:0","delivery":2}`,
		`{"index":9,"consumer":2,"seq":1,"kind":"output","channel":"fs.write","primitive":"std::fs::write","args_hex":"6f75742e747874","outcome":"ok","result_hex":"00"}`,
		`{"index":10,"consumer":2,"seq":2,"kind":"unknown","code":42,"data_hex":"010203"}`,
		`{"index":11,"consumer":2,"seq":3,"kind":"trap","message":"division by zero","position":"app.hl:17:16","stack":["at app.hl:17:16 in Ledger.on Line","at app.hl:30:3 in Ledger.add"],"coordinate":"2:0","trap_kind":"arith"}`,
		`{"index":12,"consumer":0,"seq":4,"kind":"exit","code":3,"position":"app.hl:9:5","coordinate":"0:0"}`,
	}
	got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), b.String())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

// TestDumpDecoder checks the hook: its views appear next to the hex, and
// it is asked with the right field and hint.
func TestDumpDecoder(t *testing.T) {
	a, err := Decode(mustEncode(t, sample()))
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	decode := func(field, hint string, data []byte) (any, bool) {
		asked = append(asked, field+" "+hint)
		if field == "args" {
			return nil, false // no view: the key is left out
		}
		return map[string]any{"len": len(data)}, true
	}
	var b bytes.Buffer
	if err := Dump(&b, a, decode); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if want := `"payload_hex":"010203","payload":{"len":3},"delay_ms":0}`; !strings.HasSuffix(lines[3], want) {
		t.Errorf("publish line %s lacks %s", lines[3], want)
	}
	if want := `"result_hex":"028001","result":{"len":3}}`; !strings.HasSuffix(lines[1], want) {
		t.Errorf("invocation line %s lacks %s", lines[1], want)
	}
	if strings.Contains(b.String(), `"args":`) {
		t.Error("a failed decode left an args view")
	}
	wantAsked := "args std::time::now_ms,result std::time::now_ms,args std::env::get,payload Job,payload Line," +
		"args std::random::int,args std::io::println,result std::io::println,args std::fs::write,result std::fs::write"
	if got := strings.Join(asked, ","); got != wantAsked {
		t.Errorf("decoder asked\n%s\nwant\n%s", got, wantAsked)
	}
}

// hasControl reports whether s holds a character a terminal could obey:
// anything below space but tab and newline, DEL, a C1 control.
func hasControl(s string) bool {
	for _, r := range s {
		if r < ' ' && r != '\t' && r != '\n' || r >= 0x7f && r <= 0x9f {
			return true
		}
	}
	return false
}

// TestReportsEscapeControlCharacters: the strings of an artifact reach
// the trace summary, the dump and the replay report escaped, whatever
// they hold (a forged artifact, a program's output).
func TestReportsEscapeControlCharacters(t *testing.T) {
	art := sample()
	art.Header.Consumers[1].Name = "work\x1b]0;owned\aers"
	art.Header.Files[0] = "app\x1b[2J.hl"
	art.Entries[7].Body = Output{Channel: ChannelStdout, Primitive: "std::io::println", Args: []byte("x"), Outcome: OK, Result: []byte("del\x7f csi\u009b esc\x1b\n")}
	a, err := Salvage(mustEncode(t, art))
	if err != nil {
		t.Fatal(err)
	}
	var summary strings.Builder
	if err := Summarize(a, nil).WriteText(&summary); err != nil {
		t.Fatal(err)
	}
	if hasControl(summary.String()) || !strings.Contains(summary.String(), `work\x1b]0;owned\aers`) || !strings.Contains(summary.String(), `app\x1b[2J.hl`) {
		t.Errorf("summary:\n%q", summary.String())
	}
	var dump strings.Builder
	if err := Dump(&dump, a, nil); err != nil {
		t.Fatal(err)
	}
	if hasControl(dump.String()) || !strings.Contains(dump.String(), `"text":"del\u007f csi\u009b esc\u001b\n"`) {
		t.Errorf("dump:\n%s", dump.String())
	}
	rep := &Report{Verdict: ReportDiverged, Divergences: []*Divergence{{
		At: Coordinate{Consumer: 1, N: 2}, Sentence: "consumer 1: output #1 was \"\x1b[31mred\" in the recording", Position: "app\x1b.hl:1:1",
	}}}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if hasControl(text.String()) || !strings.Contains(text.String(), `was "\x1b[31mred" in the recording`) {
		t.Errorf("report:\n%q", text.String())
	}
	var js bytes.Buffer
	rep.Divergences[0].Recorded = "\u0085"
	if err := rep.WriteJSON(&js); err != nil || hasControl(js.String()) {
		t.Errorf("report JSON %v:\n%q", err, js.String())
	}
	refused := RefusedReport(errors.New("bad \x1b header"))
	text.Reset()
	if err := refused.WriteText(&text); err != nil || text.String() != "replay REFUSED: bad \\x1b header\n" {
		t.Errorf("refusal %v: %q", err, text.String())
	}
}
