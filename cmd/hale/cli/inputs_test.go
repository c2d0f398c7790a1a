package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const inputsApp = "topic Line { text: string }\n" +
	"locus Main { on Line(l) { print(l.text); } }\nmain { spawn Main; bind stdin to Line; }\n"

// runIn runs hale in-process in dir with the given stdin and environment
// and returns the exit code and stderr.
func runIn(t *testing.T, dir string, stdin *os.File, vars map[string]string, args ...string) (int, string) {
	t.Helper()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	var in io.Reader = strings.NewReader("")
	if stdin != nil {
		in = stdin
	}
	code := Run(args, env{stdin: in, stdout: &stdout, stderr: &stderr,
		getenv: func(k string) string { return vars[k] }})
	return code, stderr.String()
}

// TestRecordingNeverReplacesStdin: LOTUS_OBS_RECORD naming the file that
// stdin is redirected from (here through a hard link) fails with exit 4
// before the program runs, and the file is kept.
func TestRecordingNeverReplacesStdin(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "app.hl"), inputsApp)
	write(t, filepath.Join(dir, "lines.txt"), "one\ntwo\n")
	if err := os.Link(filepath.Join(dir, "lines.txt"), filepath.Join(dir, "hard.txt")); err != nil {
		t.Skip("no hard links here:", err)
	}
	stdin, err := os.Open(filepath.Join(dir, "lines.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	code, stderr := runIn(t, dir, stdin, map[string]string{"LOTUS_OBS_RECORD": "hard.txt"}, "run", "--engine", "native", "app.hl")
	if code != ExitRecording || !strings.Contains(stderr, "LOTUS_OBS_RECORD=hard.txt is the same file as the standard input") {
		t.Errorf("exit %d, stderr %q; want exit 4 naming the standard input", code, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "lines.txt")); string(got) != "one\ntwo\n" {
		t.Errorf("the standard input's file now holds %q", got)
	}
	// Redirected from another file, the same run records.
	write(t, filepath.Join(dir, "empty.txt"), "")
	stdin2, _ := os.Open(filepath.Join(dir, "empty.txt"))
	defer stdin2.Close()
	if code, stderr := runIn(t, dir, stdin2, map[string]string{"LOTUS_OBS_RECORD": "run.halerec"}, "run", "--engine", "native", "app.hl"); code != 0 {
		t.Errorf("recording with stdin from another file: exit %d, %s", code, stderr)
	}
}

// TestReplayOutputNeverReplacesInputs: -o naming the recording being
// replayed through a hard link, or an imported source file, is a usage
// error, and both files are kept.
func TestReplayOutputNeverReplacesInputs(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "app.hl"), "import \"sub/lib.hl\";\nlocus Main { on start { print(str(twice(2))); } }\nmain { spawn Main; }\n")
	write(t, filepath.Join(dir, "sub", "lib.hl"), "fn twice(n: int) -> int { return 2 * n; }\n")
	if code, stderr := runIn(t, dir, nil, map[string]string{"LOTUS_OBS_RECORD": "run.halerec"}, "run", "--engine", "native", "app.hl"); code != 0 {
		t.Fatalf("record: exit %d, %s", code, stderr)
	}
	recorded, _ := os.ReadFile(filepath.Join(dir, "run.halerec"))
	if err := os.Link(filepath.Join(dir, "run.halerec"), filepath.Join(dir, "same.halerec")); err != nil {
		t.Skip("no hard links here:", err)
	}
	for _, tt := range []struct{ out, names string }{
		{"same.halerec", "the recording being replayed (run.halerec)"},
		{filepath.Join(dir, "sub", "..", "sub", "lib.hl"), "the program's source (sub/lib.hl)"},
	} {
		code, stderr := runIn(t, dir, nil, nil, "replay", "--engine", "native", "run.halerec", "app.hl", "--diff", "-o", tt.out)
		if code != ExitUsage || !strings.Contains(stderr, "-o "+tt.out+" is the same file as "+tt.names) {
			t.Errorf("-o %s: exit %d, stderr %q; want exit 2 naming %s", tt.out, code, stderr, tt.names)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "run.halerec")); !bytes.Equal(got, recorded) {
		t.Error("the recording being replayed was changed")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "sub", "lib.hl")); !strings.HasPrefix(string(got), "fn twice") {
		t.Errorf("the imported file now holds %q", got)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
