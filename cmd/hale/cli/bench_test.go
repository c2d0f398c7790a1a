package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// These benchmarks run the real hale binary, built once per benchmark
// into a temporary folder, as separate processes on the programs of
// testdata/bench, so start-up (process, runtime, wasm module load) is
// measured as a user sees it. Each iteration runs every command of a
// benchmark once, in turn, so that the commands compared share the same
// machine load; the figures are the benchMedians over the iterations:
//
//	NAME-ms    wall time of one run of the command NAME
//	NAME-cpums CPU time (user + system) of that process
//
// plus ratios and rates computed from the benchMedians. Run them with a
// fixed iteration count, e.g.
//
//	go test ./cmd/hale/cli -run XXX -bench . -benchtime 10x
//
// ns/op is the time of one whole iteration and is not a figure to quote.

// benchDir holds the benchmark programs.
const benchDir = "testdata/bench"

// benchCmd is one process a benchmark runs.
type benchCmd struct {
	name string
	args []string // argv; args[0] is "hale", "python3" or a path
	env  []string // added to the environment
	want string   // must appear in the output
	// before, when set, runs before each run, outside the measurement
	// (emptying the cache of a cold start).
	before func()
}

// benchRig is a benchmark's built binary and folders.
type benchRig struct {
	hale  string
	cache string // warm XDG_CACHE_HOME
	tmp   string
}

// newBench builds hale and fills its compilation cache.
func newBench(b *testing.B) *benchRig {
	b.Helper()
	tmp := b.TempDir()
	g := &benchRig{hale: filepath.Join(tmp, "hale"), cache: filepath.Join(tmp, "cache"), tmp: tmp}
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command to build hale with")
	}
	cmd := exec.Command(goBin, "build", "-o", g.hale, "github.com/hale-lang/hale/cmd/hale")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building hale: %v\n%s", err, out)
	}
	g.run(b, benchCmd{name: "warm-up", args: []string{"hale", "run", "empty.hl"}})
	return g
}

// run runs c once and returns its wall and CPU time.
func (g *benchRig) run(b *testing.B, c benchCmd) (wall, cpu time.Duration) {
	b.Helper()
	args := slices.Clone(c.args)
	if args[0] == "hale" {
		args[0] = g.hale
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = benchDir
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+g.cache, "LOTUS_OBS_RECORD=")
	cmd.Env = append(cmd.Env, c.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall = time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(c.args, " "), err, out.Bytes())
	}
	if !strings.Contains(out.String(), c.want) {
		b.Fatalf("%s: output %q does not contain %q", strings.Join(c.args, " "), out.Bytes(), c.want)
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// benchMedians are a benchmark's median wall times by command name.
type benchMedians map[string]time.Duration

// sideBySide runs every command once per iteration, in turn, reports the
// median wall and CPU time of each and returns the wall benchMedians.
func (g *benchRig) sideBySide(b *testing.B, cmds []benchCmd) benchMedians {
	b.Helper()
	wall, _ := g.sideBySideCPU(b, cmds)
	return wall
}

// sideBySideCPU is sideBySide returning the CPU benchMedians (user +
// system) as well.
func (g *benchRig) sideBySideCPU(b *testing.B, cmds []benchCmd) (wall, cpu benchMedians) {
	b.Helper()
	walls := map[string][]time.Duration{}
	cpus := map[string][]time.Duration{}
	for b.Loop() {
		for _, c := range cmds {
			if c.before != nil {
				b.StopTimer()
				c.before()
				b.StartTimer()
			}
			wall, cpu := g.run(b, c)
			walls[c.name] = append(walls[c.name], wall)
			cpus[c.name] = append(cpus[c.name], cpu)
		}
	}
	wall, cpu = benchMedians{}, benchMedians{}
	for _, c := range cmds {
		wall[c.name] = benchMedian(walls[c.name])
		cpu[c.name] = benchMedian(cpus[c.name])
		b.ReportMetric(benchMS(wall[c.name]), c.name+"-ms")
		b.ReportMetric(benchMS(cpu[c.name]), c.name+"-cpums")
	}
	return wall, cpu
}

func benchMedian(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func benchMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// net is a command's time minus its baseline's (start-up), at least 1µs.
func (m benchMedians) net(name, base string) time.Duration {
	return max(m[name]-m[base], time.Microsecond)
}

// BenchmarkStartup measures `hale run` of small programs: cold is the
// first run on a machine (an empty compilation cache, so the wasm
// interpreter is compiled), warm every later run; native-empty runs the
// in-process engine, which needs no wasm module.
func BenchmarkStartup(b *testing.B) {
	g := newBench(b)
	cold := filepath.Join(g.tmp, "cold")
	g.sideBySide(b, []benchCmd{
		{name: "cold-empty", args: []string{"hale", "run", "empty.hl"}, env: []string{"XDG_CACHE_HOME=" + cold},
			before: func() { os.RemoveAll(cold) }},
		{name: "warm-empty", args: []string{"hale", "run", "empty.hl"}},
		{name: "warm-hello", args: []string{"hale", "run", "hello.hl"}, want: "hello"},
		{name: "native-empty", args: []string{"hale", "run", "--engine", "native", "empty.hl"}},
	})
	os.RemoveAll(cold)
}

// BenchmarkVsCPython runs fib(30), a 10^6 loop, 10^6 format calls
// (f-strings in Python), 10 parses of a 1 MB JSON reply
// (std::json::parse, json.loads in Python) and the Benchmarks Game ports
// (n-body, spectral-norm, fannkuch-redux, binary-trees, fasta; see
// bench_ports_test.go) with hale on both engines and with python3, each
// beside its empty-program baseline.
// Ratios: wasm/py and native/py compare whole runs; net-wasm/py and
// net-native/py compare the runs minus their baselines (the computation
// without the start-up); the -cpu ratios compare CPU time (user + system)
// the same ways, which is the figure to read on a loaded machine.
func BenchmarkVsCPython(b *testing.B) {
	py := python3(b)
	g := newBench(b)
	workloads := []struct{ name, arg, want string }{
		{"fib30", "", "832040"}, {"loop", "", "499999500000"}, {"format", "", "34518986"},
		{"json_reply", "", "1015335 947080"},
		{"strbuild", "", "1988890 299999,"}, {"wordfreq", "", "64 3157 4096 45 1000 213"},
	}
	for _, p := range gamePrograms {
		// want "": the whole of CPython's output, which hale must print.
		workloads = append(workloads, struct{ name, arg, want string }{p.name, p.benchArg, ""})
	}
	for _, w := range workloads {
		b.Run(w.name, func(b *testing.B) {
			args := func(prog ...string) []string {
				if w.arg != "" {
					prog = append(prog, w.arg)
				}
				return prog
			}
			want := w.want
			if want == "" {
				out, err := exec.Command(py, args(filepath.Join(benchDir, w.name+".py"))...).Output()
				if err != nil {
					b.Fatalf("python3 %s.py %s: %v", w.name, w.arg, err)
				}
				want = string(out)
			}
			wall, cpu := g.sideBySideCPU(b, []benchCmd{
				{name: "wasm-empty", args: []string{"hale", "run", "empty.hl"}},
				{name: "wasm", args: args("hale", "run", w.name+".hl"), want: want},
				{name: "native-empty", args: []string{"hale", "run", "--engine", "native", "empty.hl"}},
				{name: "native", args: args("hale", "run", "--engine", "native", w.name+".hl"), want: want},
				{name: "py-empty", args: []string{py, "-c", "pass"}},
				{name: "py", args: args(py, w.name+".py"), want: want},
			})
			for _, m := range []struct {
				medians benchMedians
				suffix  string
			}{{wall, ""}, {cpu, "-cpu"}} {
				b.ReportMetric(float64(m.medians["wasm"])/float64(m.medians["py"]), "wasm/py"+m.suffix)
				b.ReportMetric(float64(m.medians["native"])/float64(m.medians["py"]), "native/py"+m.suffix)
				pyNet := m.medians.net("py", "py-empty")
				b.ReportMetric(float64(m.medians.net("wasm", "wasm-empty"))/float64(pyNet), "net-wasm/py"+m.suffix)
				b.ReportMetric(float64(m.medians.net("native", "native-empty"))/float64(pyNet), "net-native/py"+m.suffix)
			}
		})
	}
}

// python3 returns the path of CPython's interpreter itself, not of a
// wrapper such as a pyenv shim, whose start-up would be counted against
// Python; the benchmark skips when there is none.
func python3(b *testing.B) string {
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	py := strings.TrimSpace(string(out))
	if err != nil || py == "" {
		b.Skip("python3 is not installed")
	}
	return py
}

// BenchmarkVsCPythonLarge runs the Benchmarks Game ports at their large
// sizes (gamePrograms), whole runs on the wasm engine against CPython,
// reporting wasm/py-cpu, the ratio of CPU times with start-up included:
// the figures a user who times `hale run` and `python3` at a size that
// computes for seconds sees. The small sizes of BenchmarkVsCPython did
// not show two tier cliffs (spectral-norm from 600 on ran interpreted,
// docs/performance.md §5.35).
func BenchmarkVsCPythonLarge(b *testing.B) {
	py := python3(b)
	g := newBench(b)
	for _, p := range gamePrograms {
		b.Run(p.name, func(b *testing.B) {
			want, err := exec.Command(py, filepath.Join(benchDir, p.name+".py"), p.largeArg).Output()
			if err != nil {
				b.Fatalf("python3 %s.py %s: %v", p.name, p.largeArg, err)
			}
			wall, cpu := g.sideBySideCPU(b, []benchCmd{
				{name: "wasm", args: []string{"hale", "run", p.name + ".hl", p.largeArg}, want: string(want)},
				{name: "py", args: []string{py, p.name + ".py", p.largeArg}, want: string(want)},
			})
			b.ReportMetric(float64(wall["wasm"])/float64(wall["py"]), "wasm/py")
			b.ReportMetric(float64(cpu["wasm"])/float64(cpu["py"]), "wasm/py-cpu")
		})
	}
}

// BenchmarkRecordReplayCLI runs the message-heavy programs (200,000
// main-bus deliveries; msgs_rand also makes 200,000 journaled calls)
// with `hale run` unrecorded (plain) and recorded (rec, LOTUS_OBS_RECORD),
// then replays the recording with `hale replay --quiet` (replay) and
// `hale replay --quiet --diff` (replay-diff, which also records the
// replay and compares the two artifacts entry by entry); and sleep.hl
// (1 s of sleeps) recorded and replayed. Ratios: rec/plain, replay/rec,
// replay-diff/rec; msgs/s is 200,000 over the unrecorded run minus the
// empty program's run.
func BenchmarkRecordReplayCLI(b *testing.B) {
	g := newBench(b)
	for _, engine := range []string{"wasm", "native"} {
		for _, prog := range []string{"msgs", "msgs_rand"} {
			b.Run(prog+"/"+engine, func(b *testing.B) {
				art := filepath.Join(g.tmp, prog+"-"+engine+".halerec")
				run := []string{"hale", "run", "--engine", engine}
				m := g.sideBySide(b, []benchCmd{
					{name: "empty", args: append(run, "empty.hl")},
					{name: "plain", args: append(run, prog+".hl"), want: "handled 200000"},
					{name: "rec", args: append(run, prog+".hl"), env: []string{"LOTUS_OBS_RECORD=" + art}, want: "handled 200000"},
					{name: "replay", args: []string{"hale", "replay", "--quiet", "--engine", engine, art, prog + ".hl"}, want: "replay OK"},
					{name: "replay-diff", args: []string{"hale", "replay", "--quiet", "--diff", "--engine", engine, art, prog + ".hl"}, want: "replay OK"},
				})
				b.ReportMetric(float64(m["rec"])/float64(m["plain"]), "rec/plain")
				b.ReportMetric(float64(m["replay"])/float64(m["rec"]), "replay/rec")
				b.ReportMetric(float64(m["replay-diff"])/float64(m["rec"]), "replay-diff/rec")
				b.ReportMetric(200000/m.net("plain", "empty").Seconds(), "msgs/s")
				if fi, err := os.Stat(art); err == nil {
					b.ReportMetric(float64(fi.Size()), "artifact-bytes")
				}
			})
		}
	}
	b.Run("sleep", func(b *testing.B) {
		art := filepath.Join(g.tmp, "sleep.halerec")
		m := g.sideBySide(b, []benchCmd{
			{name: "rec", args: []string{"hale", "run", "sleep.hl"}, env: []string{"LOTUS_OBS_RECORD=" + art}, want: "slept 20 times"},
			{name: "replay", args: []string{"hale", "replay", art, "sleep.hl"}, want: "slept 20 times"},
		})
		b.ReportMetric(float64(m["replay"])/float64(m["rec"]), "replay/rec")
	})
}

// TestBenchPrograms keeps the benchmark programs honest without running
// the benchmarks: every one passes `hale check`, and the quick ones print
// what the benchmarks expect on the native engine.
func TestBenchPrograms(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(benchDir, "*.hl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no benchmark programs in %s: %v", benchDir, err)
	}
	want := map[string]string{
		"empty.hl":      "",
		"hello.hl":      "hello\n",
		"fib30.hl":      "832040\n",
		"loop.hl":       "499999500000\n",
		"format.hl":     "34518986\n",
		"json_reply.hl": "1015335 947080\n",
		"strbuild.hl":   "1988890 299999,\n",
		"wordfreq.hl":   "64 3157 4096 45 1000 213\n",
		"msgs.hl":       "handled 200000\n",
		"msgs_rand.hl":  "handled 200000\n",
		"main10000.hl":  "acks 10000\n",
	}
	// The Savina ports (bench_ports_test.go), at their full sizes.
	for _, s := range savinaPrograms {
		want[s.name+".hl"] = s.want + "\n"
	}
	for _, f := range files {
		var stdout, stderr bytes.Buffer
		e := env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
		if code := Run([]string{"check", f}, e); code != ExitOK {
			t.Errorf("hale check %s: exit %d\n%s", f, code, stderr.Bytes())
			continue
		}
		out, ok := want[filepath.Base(f)]
		if !ok {
			continue
		}
		stdout.Reset()
		if code := Run([]string{"run", "--engine", "native", f}, e); code != ExitOK || stdout.String() != out {
			t.Errorf("hale run --engine native %s: exit %d, output %q, want %q\n%s", f, code, stdout.Bytes(), out, stderr.Bytes())
		}
	}
}

// writeManyFns writes a program of one-line functions
// `fn fK() -> int { return K; }`, as many as fill about mb megabytes,
// and a main that calls one of them, and returns its path.
func writeManyFns(tb testing.TB, dir string, mb int) string {
	tb.Helper()
	var b strings.Builder
	for k := 0; b.Len() < mb<<20; k++ {
		fmt.Fprintf(&b, "fn f%d() -> int { return %d; }\n", k, k)
	}
	b.WriteString("locus M { on start { print(f1()); } }\nmain { spawn M; }\n")
	path := filepath.Join(dir, fmt.Sprintf("fns_%dmb.hl", mb))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkHugeSource runs `hale check` and `hale run` on generated
// programs of 1, 5 and 10 MB of one-line functions (28,000 to 290,000
// of them), so that compile time can be seen to grow linearly with the
// size of the source: check-1mb-ms … run-10mb-ms, with their CPU times.
// Run it with
//
//	go test ./cmd/hale/cli -run XXX -bench HugeSource -benchtime 1x
func BenchmarkHugeSource(b *testing.B) {
	g := newBench(b)
	var cmds []benchCmd
	for _, mb := range []int{1, 5, 10} {
		path := writeManyFns(b, g.tmp, mb)
		cmds = append(cmds,
			benchCmd{name: fmt.Sprintf("check-%dmb", mb), args: []string{"hale", "check", path}},
			benchCmd{name: fmt.Sprintf("run-%dmb", mb), args: []string{"hale", "run", path}, want: "1\n"})
	}
	g.sideBySide(b, cmds)
}
