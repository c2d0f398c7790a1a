package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The ports of two benchmark suites, which compare Hale with other
// languages (docs/performance.md §5, whose §5.4 gives the aims):
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
// uses (CPython computes for 0.3 to 0.6 s of CPU beyond its start-up, so
// that the net ratios are not noise), the size of the published
// reference output the test compares with, and a larger size for
// BenchmarkVsCPythonLarge (CPython computes for 2 to 9 s; whole runs).
var gamePrograms = []struct {
	name     string
	benchArg string
	testArg  string
	largeArg string
}{
	{"nbody", "100000", "1000", "1000000"},
	{"spectralnorm", "300", "100", "1000"},
	{"fannkuchredux", "9", "7", "10"},
	{"binarytrees", "14", "10", "18"},
	{"fasta", "150000", "1000", "1000000"},
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
	{"pingpong", "pingpong 80000", 80000, 40},
	// 200,000 increments, the request and its answer.
	{"counting", "counted 200000", 200002, 20},
	// 200,000 passes of the token around 100 nodes (in Hale each pass
	// runs the guard of all 100 nodes and delivers to one).
	{"threadring", "ring done at node 0", 200000, 6},
	// 3,000 jobs, each to all 60 workers.
	{"forkjoin", "forkjoin 180000", 180000, 10},
}

// BenchmarkSavina runs the Savina ports side by side: Hale on the wasm
// engine and on the native one, the Go version and, when escript is
// installed, the Erlang/OTP version, each beside its empty run. For each
// VARIANT it reports VARIANT-msgs/s, the messages moved per second of CPU
// time (user + system) net of the empty run, and VARIANT-wall-msgs/s the
// same per second of wall time; then wasm/erl, native/erl, wasm/go and
// native/go, ratios of msgs/s (the aim is wasm/erl >= 0.5). Run it
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

// BenchmarkSavinaRecording runs each Savina port unrecorded (plain) and
// recorded (rec, LOTUS_OBS_RECORD) on both engines, side by side, and
// reports rec/plain of the wall and of the CPU medians (the aim is 1.3
// at most on the wasm engine). Run it with
//
//	go test ./cmd/hale/cli -run XXX -bench SavinaRecording -benchtime 3x -count 3
func BenchmarkSavinaRecording(b *testing.B) {
	g := newBench(b)
	for _, s := range savinaPrograms {
		for _, engine := range []string{"wasm", "native"} {
			b.Run(s.name+"/"+engine, func(b *testing.B) {
				art := filepath.Join(g.tmp, s.name+"-"+engine+".halerec")
				run := []string{"hale", "run", "--engine", engine, s.name + ".hl"}
				wall, cpu := g.sideBySideCPU(b, []benchCmd{
					{name: "plain", args: run, want: s.want},
					{name: "rec", args: run, env: []string{"LOTUS_OBS_RECORD=" + art}, want: s.want},
				})
				b.ReportMetric(float64(wall["rec"])/float64(wall["plain"]), "rec/plain")
				b.ReportMetric(float64(cpu["rec"])/float64(cpu["plain"]), "rec/plain-cpu")
			})
		}
	}
}

// BenchmarkInstances runs one message through many instances: 10,000 on
// the main bus (main10000.hl) and 1,000 pinned, each its own consumer
// and thread (pinned1000.hl), on both engines, reporting each run's wall
// and CPU time and its peak resident memory (VARIANT-peak-MB). The aims
// are 1 s for the first and 1.5 s and 500 MB for the second on the
// wasm engine. The pinned program takes minutes and gigabytes on the wasm
// engine today: run it alone, once,
//
//	go test ./cmd/hale/cli -run XXX -bench Instances -benchtime 1x
func BenchmarkInstances(b *testing.B) {
	g := newBench(b)
	for _, p := range []struct{ name, want string }{
		{"main10000", "acks 10000"},
		{"pinned1000", "acks 1000"},
	} {
		b.Run(p.name, func(b *testing.B) {
			peak := map[string][]float64{}
			for b.Loop() {
				for _, engine := range []string{"wasm", "native"} {
					mb := g.runPeak(b, benchCmd{name: engine, args: []string{"hale", "run", "--engine", engine, p.name + ".hl"}, want: p.want})
					peak[engine] = append(peak[engine], mb)
				}
			}
			for engine, mbs := range peak {
				slices.Sort(mbs)
				b.ReportMetric(mbs[len(mbs)/2], engine+"-peak-MB")
			}
		})
	}
}

// runPeak runs c once, reports its wall and CPU time (NAME-ms,
// NAME-cpums; with several iterations, the last one's) and returns its
// peak resident memory in megabytes.
func (g *benchRig) runPeak(b *testing.B, c benchCmd) float64 {
	b.Helper()
	args := slices.Clone(c.args)
	if args[0] == "hale" {
		args[0] = g.hale
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = benchDir
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+g.cache, "LOTUS_OBS_RECORD=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(c.args, " "), err, out.Bytes())
	}
	if !strings.Contains(out.String(), c.want) {
		b.Fatalf("%s: output %q does not contain %q", strings.Join(c.args, " "), out.Bytes(), c.want)
	}
	b.ReportMetric(benchMS(wall), c.name+"-ms")
	b.ReportMetric(benchMS(cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime()), c.name+"-cpums")
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // kilobytes on Linux
}

// TestSavinaPorts keeps the Go and Erlang versions of the Savina ports
// honest without running the benchmark: each builds (or, for Erlang,
// compiles) and prints, once per repeat, the line the Hale program
// prints. The Erlang half is skipped when escript is not installed.
func TestSavinaPorts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the Go and Erlang versions")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the Go versions with")
	}
	savina := filepath.Join(t.TempDir(), "savina")
	if out, err := exec.Command(goBin, "build", "-o", savina, "./"+benchDir+"/savina").CombinedOutput(); err != nil {
		t.Fatalf("building the Go versions: %v\n%s", err, out)
	}
	escript, _ := exec.LookPath("escript")
	for _, s := range savinaPrograms {
		t.Run(s.name, func(t *testing.T) {
			want := strings.Repeat(s.want+"\n", 2)
			runs := [][]string{{savina, s.name, "2"}}
			if escript != "" {
				runs = append(runs, []string{escript, "savina/savina.erl", s.name, "2"})
			} else {
				t.Log("escript is not installed (Debian: apt-get install erlang-nox): the Erlang version is not checked")
			}
			for _, argv := range runs {
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Dir = benchDir
				out, err := cmd.CombinedOutput()
				if err != nil || string(out) != want {
					t.Errorf("%s: %v, output %q, want %q", strings.Join(argv, " "), err, out, want)
				}
			}
		})
	}
}

// BenchmarkPortsInProcess runs each port inside the test process, the
// way `hale run` does, on each engine, so that -cpuprofile shows where
// its time goes (on the wasm engine the guest is one opaque block of
// compiled code; the host's side of it is visible):
//
//	go test ./cmd/hale/cli -run XXX -bench 'PortsInProcess/native/forkjoin' -benchtime 3x -cpuprofile cpu.out
//	go tool pprof -top -cum cpu.out
func BenchmarkPortsInProcess(b *testing.B) {
	type port struct{ name, arg string }
	var ports []port
	for _, p := range gamePrograms {
		ports = append(ports, port{p.name, p.benchArg})
	}
	for _, s := range savinaPrograms {
		ports = append(ports, port{s.name, ""})
	}
	for _, engine := range []string{"native", "wasm"} {
		for _, p := range ports {
			b.Run(engine+"/"+p.name, func(b *testing.B) {
				args := []string{"run", "--engine", engine, filepath.Join(benchDir, p.name+".hl")}
				if p.arg != "" {
					args = append(args, p.arg)
				}
				for b.Loop() {
					var stderr bytes.Buffer
					e := env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" }}
					if code := Run(args, e); code != ExitOK {
						b.Fatalf("hale %s: exit %d\n%s", strings.Join(args, " "), code, stderr.Bytes())
					}
				}
			})
		}
	}
}
