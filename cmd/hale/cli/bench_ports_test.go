package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The ports of two benchmark suites, for issue-style comparisons of Hale
// with other languages (docs/performance.md §5):
//
//   - the Computer Language Benchmarks Game: testdata/bench/NAME.hl and
//     NAME.py, the same algorithm in Hale and in plain single-threaded
//     Python 3, compared by BenchmarkVsCPython; TestGamePrograms checks
//     each on both engines at a small size against the suite's published
//     output (testdata/bench/reference/NAME-N.txt);
//   - the Savina actor benchmarks: testdata/bench/NAME.hl, with the same
//     four in Go (testdata/bench/savina/savina.go, goroutines and
//     channels) and Erlang (testdata/bench/savina/savina.erl), compared
//     by BenchmarkSavina in messages per second.

// gamePrograms are the Benchmarks Game ports: the size a benchmark run
// uses (the wasm engine takes about a second, more on a loaded machine)
// and the size of the published reference output the test compares with.
var gamePrograms = []struct {
	name     string
	benchArg string
	testArg  string
}{
	{"nbody", "30000", "1000"},
	{"spectralnorm", "160", "100"},
	{"fannkuchredux", "9", "7"},
	{"binarytrees", "12", "10"},
	{"fasta", "60000", "1000"},
}

// TestGamePrograms runs each Benchmarks Game port at its small size on
// both engines and compares what it prints, byte for byte, with the
// suite's reference output; the Python versions must print it too when
// python3 is installed.
func TestGamePrograms(t *testing.T) {
	py, _ := exec.LookPath("python3")
	for _, p := range gamePrograms {
		t.Run(p.name, func(t *testing.T) {
			ref, err := os.ReadFile(filepath.Join(benchDir, "reference", p.name+"-"+p.testArg+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			prog := filepath.Join(benchDir, p.name+".hl")
			for _, engine := range []string{"native", "wasm"} {
				var stdout, stderr bytes.Buffer
				e := env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
				if code := Run([]string{"run", "--engine", engine, prog, p.testArg}, e); code != ExitOK {
					t.Fatalf("hale run --engine %s %s %s: exit %d\n%s", engine, prog, p.testArg, code, stderr.Bytes())
				}
				if got := stdout.String(); got != string(ref) {
					t.Errorf("hale run --engine %s %s %s printed\n%s\nwant the reference output\n%s", engine, prog, p.testArg, firstDiff(got, string(ref)), ref)
				}
			}
			if py == "" {
				return
			}
			out, err := exec.Command(py, filepath.Join(benchDir, p.name+".py"), p.testArg).Output()
			if err != nil {
				t.Fatalf("python3 %s.py %s: %v", p.name, p.testArg, err)
			}
			if string(out) != string(ref) {
				t.Errorf("python3 %s.py %s printed\n%s", p.name, p.testArg, firstDiff(string(out), string(ref)))
			}
		})
	}
}

// firstDiff describes where got first differs from want, by line.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: %q, want %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// savinaPrograms are the Savina ports: what each prints, the messages one
// run moves (the same count in Hale, Go and Erlang), and how many runs
// the Go and Erlang processes make in one process (REPEATS), so that
// their work outlasts the noise of their start-up.
var savinaPrograms = []struct {
	name    string
	want    string
	msgs    int
	repeats int
}{
	// 40,000 round trips.
	{"pingpong", "pingpong 80000", 80000, 20},
	// 200,000 increments, the request and its answer.
	{"counting", "counted 200000", 200002, 10},
	// 4,000 passes of the token around 100 nodes (Hale delivers each to
	// all 100 nodes: 400,000 deliveries, see threadring.hl).
	{"threadring", "ring done at node 0", 4000, 200},
	// 3,000 jobs, each to all 60 workers.
	{"forkjoin", "forkjoin 180000", 180000, 10},
}

// BenchmarkSavina runs the Savina ports side by side: Hale on the wasm
// engine and on the native one, the Go version and, when escript is
// installed, the Erlang/OTP version, each beside its empty run. For each
// VARIANT it reports VARIANT-msgs/s, the messages moved per second of CPU
// time (user + system) net of the empty run, and VARIANT-wall-msgs/s the
// same per second of wall time; then wasm/erl, native/erl, wasm/go and
// native/go, ratios of msgs/s (Issue 18 aims at wasm/erl >= 0.5). Run it
// with
//
//	go test ./cmd/hale/cli -run XXX -bench Savina -benchtime 3x -count 3
func BenchmarkSavina(b *testing.B) {
	g := newBench(b)
	savina := filepath.Join(g.tmp, "savina")
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command to build the Go versions with")
	}
	if out, err := exec.Command(goBin, "build", "-o", savina, "./"+benchDir+"/savina").CombinedOutput(); err != nil {
		b.Fatalf("building the Go versions: %v\n%s", err, out)
	}
	escript, err := exec.LookPath("escript")
	if err != nil {
		b.Logf("SKIP the Erlang variants: escript is not installed (Debian: apt-get install erlang-nox)")
	}
	for _, s := range savinaPrograms {
		b.Run(s.name, func(b *testing.B) {
			reps := fmt.Sprint(s.repeats)
			cmds := []benchCmd{
				{name: "wasm-empty", args: []string{"hale", "run", "empty.hl"}},
				{name: "wasm", args: []string{"hale", "run", s.name + ".hl"}, want: s.want},
				{name: "native-empty", args: []string{"hale", "run", "--engine", "native", "empty.hl"}},
				{name: "native", args: []string{"hale", "run", "--engine", "native", s.name + ".hl"}, want: s.want},
				{name: "go-empty", args: []string{savina, "empty"}},
				{name: "go", args: []string{savina, s.name, reps}, want: s.want},
			}
			if escript != "" {
				cmds = append(cmds,
					benchCmd{name: "erl-empty", args: []string{escript, "savina/savina.erl", "empty"}},
					benchCmd{name: "erl", args: []string{escript, "savina/savina.erl", s.name, reps}, want: s.want})
			}
			wall, cpu := g.sideBySideCPU(b, cmds)
			rates := map[string]float64{}
			for _, v := range []struct {
				name string
				runs int
			}{{"wasm", 1}, {"native", 1}, {"go", s.repeats}, {"erl", s.repeats}} {
				if _, ok := cpu[v.name]; !ok {
					continue
				}
				msgs := float64(s.msgs * v.runs)
				rates[v.name] = msgs / cpu.net(v.name, v.name+"-empty").Seconds()
				b.ReportMetric(rates[v.name], v.name+"-msgs/s")
				b.ReportMetric(msgs/wall.net(v.name, v.name+"-empty").Seconds(), v.name+"-wall-msgs/s")
			}
			for _, r := range [][2]string{{"wasm", "erl"}, {"native", "erl"}, {"wasm", "go"}, {"native", "go"}} {
				if rates[r[1]] > 0 {
					b.ReportMetric(rates[r[0]]/rates[r[1]], r[0]+"/"+r[1])
				}
			}
		})
	}
}
