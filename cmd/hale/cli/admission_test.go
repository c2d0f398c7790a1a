package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/zeebo/blake3"

	"github.com/hale-lang/hale/replay/artifact"
)

// admissionApp publishes on two topics; the main bus runs Sink (both
// topics) and Deaf (only A), and Sink exits with code 3 on B.
const admissionApp = `topic A { n: int }
topic B { n: int }
locus Src { on start { publish A { n: 1 }; publish B { n: 2 }; } }
locus Sink { on A(a) { print("a"); } on B(b) { std::process::exit(3); } }
locus Deaf { on A(a) { print("deaf"); } }
main { spawn Src on pinned; spawn Sink; spawn Deaf; }
`

// admissionTrapApp traps in the handler of A.
const admissionTrapApp = `topic A { n: int }
locus Src { on start { publish A { n: 1 }; } }
locus Sink { on A(a) { panic("boom"); } }
main { spawn Src on pinned; spawn Sink; }
`

// TestReplayRefusesInconsistentArtifacts forges, from real recordings,
// one artifact per rule of `hale trace verify`, re-encoded so that its
// checksum and counts are right again: `hale replay` refuses each (exit
// 2) with the message `hale trace verify` gives, before the program runs.
func TestReplayRefusesInconsistentArtifacts(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "app.hl"), admissionApp)
	write(t, filepath.Join(dir, "trap.hl"), admissionTrapApp)
	for _, prog := range []string{"app", "trap"} {
		code, stderr := runIn(t, dir, nil, map[string]string{"LOTUS_OBS_RECORD": prog + ".halerec"}, "run", "--engine", "native", prog+".hl")
		if code != 3 {
			t.Fatalf("recording %s: exit %d, %s", prog, code, stderr)
		}
	}
	load := func(prog string) *artifact.Artifact {
		data, err := os.ReadFile(filepath.Join(dir, prog+".halerec"))
		if err != nil {
			t.Fatal(err)
		}
		a, err := artifact.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	// find returns the index of the first entry for which ok holds.
	find := func(a *artifact.Artifact, ok func(artifact.Entry) bool) int {
		for i, e := range a.Entries {
			if ok(e) {
				return i
			}
		}
		t.Fatal("no such entry")
		return -1
	}
	delivery := func(topic string) func(artifact.Entry) bool {
		return func(e artifact.Entry) bool { d, ok := e.Body.(artifact.Delivery); return ok && d.Topic == topic }
	}
	editDelivery := func(a *artifact.Artifact, topic string, edit func(*artifact.Delivery)) {
		i := find(a, delivery(topic))
		d := a.Entries[i].Body.(artifact.Delivery)
		edit(&d)
		a.Entries[i].Body = d
	}
	tests := []struct {
		name, prog string
		forge      func(a *artifact.Artifact)
		msg        string // what trace verify says (after "inconsistent: ")
	}{
		{"unknown consumer kind", "app", func(a *artifact.Artifact) { a.Header.Consumers[0].Kind = "phnned" },
			`header: consumer 0 has unknown kind "phnned"`},
		{"consumer listed twice", "app", func(a *artifact.Artifact) { a.Header.Consumers[1].ID = a.Header.Consumers[0].ID },
			"header: consumer 0 is listed twice"},
		{"consumer not in the table", "app", func(a *artifact.Artifact) { a.Entries[len(a.Entries)-1].Consumer = 42 },
			"consumer 42 is not in the consumer table"},
		{"seq gap", "app", func(a *artifact.Artifact) {
			i := find(a, func(e artifact.Entry) bool { return e.Seq == 1 })
			a.Entries[i].Seq = 2
		}, "has seq 2 where 1 was expected"},
		{"publish identity", "app", func(a *artifact.Artifact) {
			i := find(a, func(e artifact.Entry) bool { _, ok := e.Body.(artifact.Publish); return ok })
			p := a.Entries[i].Body.(artifact.Publish)
			p.Message.Seq = 5
			a.Entries[i].Body = p
		}, "has message identity 1:5 where 1:0 was expected"},
		{"delivery to an instance its consumer does not run", "app", func(a *artifact.Artifact) {
			editDelivery(a, "A", func(d *artifact.Delivery) { d.Target = "Src" })
		}, "delivery to Src, which consumer 0 (main main) does not run"},
		{"delivery to an instance that does not subscribe", "app", func(a *artifact.Artifact) {
			editDelivery(a, "B", func(d *artifact.Delivery) { d.Target = "Deaf" })
		}, "delivery of topic B to Deaf, which does not subscribe to it"},
		{"delivery on another topic", "app", func(a *artifact.Artifact) {
			editDelivery(a, "B", func(d *artifact.Delivery) { d.Topic = "A" })
		}, "delivery of message 1:1 on topic A, which was published on topic B"},
		{"delivery of a message never published", "app", func(a *artifact.Artifact) {
			editDelivery(a, "A", func(d *artifact.Delivery) { d.Message.Seq = 9 })
		}, "delivery of message 1:9, which was not published before it"},
		{"exit at a delivery not in the file", "app", func(a *artifact.Artifact) {
			i := find(a, func(e artifact.Entry) bool { _, ok := e.Body.(artifact.Exit); return ok })
			x := a.Entries[i].Body.(artifact.Exit)
			x.At = &artifact.Coordinate{Consumer: 0, N: 7}
			a.Entries[i].Body = x
		}, "coordinate 0:7 names a delivery not yet in the file"},
		{"exit code differs", "app", func(a *artifact.Artifact) { a.Trailer.ExitCode = 4 },
			"trailer: exit code 4 but no exit entry has that code (the first has 3)"},
		{"trap at a delivery not in the file", "trap", func(a *artifact.Artifact) {
			i := find(a, func(e artifact.Entry) bool { _, ok := e.Body.(artifact.Trap); return ok })
			x := a.Entries[i].Body.(artifact.Trap)
			x.At = &artifact.Coordinate{Consumer: 0, N: 3}
			a.Entries[i].Body = x
		}, "coordinate 0:3 names a delivery not yet in the file"},
		{"trap verdict without a trap", "app", func(a *artifact.Artifact) { a.Trailer.Verdict = artifact.VerdictTrap; a.Trailer.ExitCode = 3 },
			"trailer: verdict trap but the artifact has no trap entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := load(tt.prog)
			tt.forge(a)
			data, err := artifact.Encode(a)
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, "forged.halerec"), string(data))
			code, verifyErr := runIn(t, dir, nil, nil, "trace", "verify", "forged.halerec")
			if code != ExitFailure || !strings.HasPrefix(verifyErr, "hale: forged.halerec: inconsistent: ") || !strings.Contains(verifyErr, tt.msg) {
				t.Fatalf("trace verify: exit %d, %q; want exit 1 with %q", code, verifyErr, tt.msg)
			}
			problem := strings.TrimSuffix(strings.TrimPrefix(verifyErr, "hale: forged.halerec: inconsistent: "), "\n")
			code, stderr := runIn(t, dir, nil, nil, "replay", "--engine", "native", "forged.halerec", tt.prog+".hl")
			want := "hale: forged.halerec: refused: inconsistent: " + problem + "\n"
			if code != ExitUsage || stderr != want {
				t.Errorf("replay: exit %d, stderr %q\nwant exit 2, stderr %q", code, stderr, want)
			}
			// --json says the same in its reason.
			code, _ = runIn(t, dir, nil, nil, "replay", "--engine", "native", "--json", "forged.halerec", tt.prog+".hl")
			if code != ExitUsage {
				t.Errorf("replay --json: exit %d, want 2", code)
			}
		})
	}
}

// TestReplayRefusesLargeDamagedArtifacts damages a recording of
// msgs.hl (400,000 entries, 10 MB: indexed in two halves with the
// checksum hashed beside them, and read under the collector's start-up
// hold) near its end, where the damage is found last: a changed byte
// under the old checksum, a bad flag under a fixed-up one, a delivery
// of a message never published, a cut-off file. `hale replay` refuses
// each, on both engines, with exit 2 and the decoder's or Verify's
// message, prints nothing of the program, and leaves the collector's
// percent as it found it; the intact recording replays.
func TestReplayRefusesLargeDamagedArtifacts(t *testing.T) {
	if testing.Short() {
		t.Skip("records 200,000 messages")
	}
	src, err := os.ReadFile(filepath.Join(benchDir, "msgs.hl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "msgs.hl"), string(src))
	if code, stderr := runIn(t, dir, nil, map[string]string{"LOTUS_OBS_RECORD": "msgs.halerec"}, "run", "--engine", "native", "msgs.hl"); code != 0 {
		t.Fatalf("recording: exit %d, %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "msgs.halerec"))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 8<<20 {
		t.Fatalf("the recording is %d bytes, want more than 8 MiB", len(data))
	}
	reseal := func(d []byte) []byte {
		sum := blake3.Sum256(d[:len(d)-32])
		copy(d[len(d)-32:], sum[:])
		return d
	}
	// The last delivery's start flag: its target "Counter", then 0.
	flag := bytes.LastIndex(data, []byte("\x07Counter\x00")) + len("\x07Counter")
	tick := bytes.LastIndex(data, []byte("tick"))
	if flag < len(data)/2 || tick < len(data)/2 {
		t.Fatalf("no delivery or payload near the end (%d, %d of %d)", flag, tick, len(data))
	}
	unpublished := func() []byte {
		a, err := artifact.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		for i := len(a.Entries) - 1; ; i-- {
			if d, ok := a.Entries[i].Body.(artifact.Delivery); ok && !d.Start {
				d.Message.Seq = 1 << 40
				a.Entries[i].Body = d
				break
			}
		}
		out, err := artifact.Encode(a)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	cases := []struct {
		name string
		data []byte
	}{
		{"a changed byte under the old checksum", func() []byte { d := bytes.Clone(data); d[tick] = 'x'; return d }()},
		{"a bad flag under a fixed-up checksum", func() []byte { d := bytes.Clone(data); d[flag] = 2; return reseal(d) }()},
		{"a delivery of a message never published", unpublished()},
		{"a cut-off file", data[:len(data)-100]},
	}
	percent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	before := percent()
	for _, tc := range cases {
		// What admission says of it.
		a, ierr := artifact.Index(tc.data)
		msg := ""
		switch {
		case ierr != nil:
			msg = "refused: " + ierr.Error()
		default:
			verr := a.Verify()
			if verr == nil {
				t.Fatalf("%s: admission finds nothing", tc.name)
			}
			msg = "refused: inconsistent: " + verr.Error()
		}
		t.Logf("%s: %s", tc.name, msg)
		write(t, filepath.Join(dir, "damaged.halerec"), string(tc.data))
		for _, engine := range []string{"native", "wasm"} {
			var stdout, stderr bytes.Buffer
			t.Chdir(dir)
			code := Run([]string{"replay", "--engine", engine, "damaged.halerec", "msgs.hl"},
				env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }})
			if want := "hale: damaged.halerec: " + msg + "\n"; code != ExitUsage || stderr.String() != want || stdout.Len() != 0 {
				t.Errorf("%s, %s: exit %d, stdout %q, stderr %q\nwant exit 2, no output, stderr %q", tc.name, engine, code, stdout.String(), stderr.String(), want)
			}
			if p := percent(); p != before {
				t.Errorf("%s, %s: the collector's percent is %d after the refusal, was %d", tc.name, engine, p, before)
			}
		}
	}
	if code, stderr := runIn(t, dir, nil, nil, "replay", "--quiet", "--engine", "native", "msgs.halerec", "msgs.hl"); code != 0 {
		t.Fatalf("the intact recording: exit %d, %s", code, stderr)
	}
	if p := percent(); p != before {
		t.Errorf("the collector's percent is %d after a replay, was %d", p, before)
	}
}
