package timeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hale-lang/hale/replay/artifact"
)

// recording builds an artifact the way the runtime lays one out: Main
// (consumer 0) starts, publishes Ping twice from its start handler; a pool
// (consumer 1) handles each Ping and publishes a Pong that Main handles;
// the second Pong traps; an exit follows. It is encoded and decoded, so
// the timeline is built from real artifact bytes.
func recording(t testing.TB) *artifact.Artifact {
	t.Helper()
	h := artifact.Header{HaleVersion: "test", EnvPolicy: artifact.EnvWithheld,
		Consumers: []artifact.Consumer{{ID: 0, Kind: artifact.ConsumerMain, Name: "main"}, {ID: 1, Kind: artifact.ConsumerPool, Name: "Worker"}}}
	var es []artifact.Entry
	seq := map[uint32]uint64{}
	add := func(c uint32, b artifact.Body) {
		es = append(es, artifact.Entry{Consumer: c, Seq: seq[c], Body: b})
		seq[c]++
	}
	msg := func(p uint32, s uint64) artifact.MessageID { return artifact.MessageID{Producer: p, Seq: s} }
	add(0, artifact.Delivery{Target: "Main", Start: true})                                       // 0  box 0:0
	add(0, artifact.Publish{Topic: "Ping", Message: msg(0, 0), Payload: []byte{1}})              // 1
	add(0, artifact.Publish{Topic: "Ping", Message: msg(0, 1), Payload: []byte{2}})              // 2
	add(1, artifact.Delivery{Target: "Worker", Message: msg(0, 0), Topic: "Ping"})               // 3  box 1:0
	add(1, artifact.Publish{Topic: "Pong", Message: msg(1, 0), Payload: []byte{3}})              // 4
	add(1, artifact.Delivery{Target: "Worker", Message: msg(0, 1), Topic: "Ping"})               // 5  box 1:1
	add(0, artifact.Delivery{Target: "Main", Message: msg(1, 0), Topic: "Pong"})                 // 6  box 0:1
	add(1, artifact.Publish{Topic: "Pong", Message: msg(1, 1), Payload: []byte{4}})              // 7
	add(0, artifact.Delivery{Target: "Main", Message: msg(1, 1), Topic: "Pong"})                 // 8  box 0:2
	add(0, artifact.Trap{TrapKind: "arith", Message: "division by zero", Position: "app.hl:9:3", // 9
		At: &artifact.Coordinate{Consumer: 0, N: 2}})
	add(0, artifact.Exit{Code: 3, Position: "app.hl:1:1"}) // 10
	return encodeDecode(t, &artifact.Artifact{Header: h, Entries: es, Trailer: artifact.Trailer{Verdict: artifact.VerdictTrap, ExitCode: 3}})
}

func encodeDecode(t testing.TB, a *artifact.Artifact) *artifact.Artifact {
	t.Helper()
	data, err := artifact.Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	back, err := artifact.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// fanOut is a recording of n deliveries: main's block publishes n Ping
// (outside any handler), each delivered to one of two Worker consumers.
func fanOut(t testing.TB, n int) *artifact.Artifact {
	t.Helper()
	h := artifact.Header{HaleVersion: "test", EnvPolicy: artifact.EnvWithheld,
		Consumers: []artifact.Consumer{{ID: 0, Kind: artifact.ConsumerMain, Name: "main"}, {ID: 1, Kind: artifact.ConsumerPool, Name: "A"}, {ID: 2, Kind: artifact.ConsumerPool, Name: "B"}}}
	es := make([]artifact.Entry, 0, 2*n)
	seq := map[uint32]uint64{}
	add := func(c uint32, b artifact.Body) {
		es = append(es, artifact.Entry{Consumer: c, Seq: seq[c], Body: b})
		seq[c]++
	}
	for i := range n {
		id := artifact.MessageID{Producer: 0, Seq: uint64(i)}
		add(0, artifact.Publish{Topic: "Ping", Message: id, Payload: []byte(fmt.Sprint(i))})
		add(uint32(1+i%2), artifact.Delivery{Target: "W", Message: id, Topic: "Ping"})
	}
	return encodeDecode(t, &artifact.Artifact{Header: h, Entries: es, Trailer: artifact.Trailer{Verdict: artifact.VerdictQuiescent}})
}

func TestBuildLanesBoxesArrowsMarks(t *testing.T) {
	tl := Build(recording(t), nil)
	var lanes []string
	for _, l := range tl.Lanes {
		lanes = append(lanes, l.Label())
	}
	if got, want := strings.Join(lanes, "|"), "0 main (main)|1 Worker (pool)"; got != want {
		t.Errorf("lanes %q, want %q", got, want)
	}
	var boxes []string
	for _, b := range tl.Boxes {
		boxes = append(boxes, fmt.Sprintf("%s %s %s [%d,%d)", b.Coordinate, b.Target, b.Topic, b.Step, b.End))
	}
	want := "0:0 Main start [0,3)|1:0 Worker Ping [3,5)|1:1 Worker Ping [5,8)|0:1 Main Pong [6,7)|0:2 Main Pong [8,11)"
	if got := strings.Join(boxes, "|"); got != want {
		t.Errorf("boxes\n got %s\nwant %s", got, want)
	}
	var arrows []string
	for _, a := range tl.Arrows {
		arrows = append(arrows, fmt.Sprintf("%s %d->%d", a.Message, a.FromBox, a.ToBox))
	}
	if got, want := strings.Join(arrows, "|"), "0:0 0->1|0:1 0->2|1:0 1->3|1:1 2->4"; got != want {
		t.Errorf("arrows %q, want %q", got, want)
	}
	if len(tl.Marks) != 2 || tl.Marks[0].Kind != "trap" || tl.Marks[0].Box != 4 || tl.Marks[1].Kind != "exit" || tl.Marks[1].Text != "exit 3" {
		t.Errorf("marks %+v", tl.Marks)
	}
	// Without a decoder the payload is its hex, as a JSON string.
	if got := string(tl.Boxes[1].Payload); got != `"01"` {
		t.Errorf("payload %s, want \"01\"", got)
	}
}

func TestBuildUsesTheDecoderAndListsUnlistedConsumers(t *testing.T) {
	a := recording(t)
	a.Header.Consumers = a.Header.Consumers[:1] // consumer 1 is now unlisted
	decode := func(field, hint string, data []byte) (any, bool) {
		return map[string]any{"topic": hint, "n": int(data[0])}, field == "payload"
	}
	tl := Build(a, decode)
	if len(tl.Lanes) != 2 || tl.Lanes[1].Label() != "1 (unlisted)" {
		t.Errorf("lanes %+v", tl.Lanes)
	}
	if got := string(tl.Boxes[3].Payload); got != `{"n":3,"topic":"Pong"}` {
		t.Errorf("payload %s", got)
	}
}

// checkTraceEventFormat checks what Perfetto and chrome://tracing need of
// a trace: the keys each phase requires, every flow's start and finish
// paired by id with the finish bound to the enclosing slice and neither
// before the other, both inside a slice of their thread, and the slices
// of one thread not overlapping.
func checkTraceEventFormat(t *testing.T, data []byte) (slices, flows, instants int, threads map[int]string) {
	t.Helper()
	for _, p := range traceProblems(data, &slices, &flows, &instants, &threads) {
		t.Error(p)
	}
	return slices, flows, instants, threads
}

// traceProblems is checkTraceEventFormat's check: it lists the problems
// it finds and counts the slices, paired flows and instants.
func traceProblems(data []byte, slices, flows, instants *int, threadsOut *map[int]string) (problems []string) {
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var file struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&file); err != nil {
		return []string{fmt.Sprintf("not JSON: %v", err)}
	}
	if file.TraceEvents == nil {
		return []string{"no traceEvents array"}
	}
	num := func(e map[string]any, k string) int {
		n, ok := e[k].(json.Number)
		if !ok {
			errorf("event %v: %q is not a number", e, k)
			return -1
		}
		v, err := n.Int64()
		if err != nil {
			errorf("event %v: %q: %v", e, k, err)
		}
		return int(v)
	}
	require := func(e map[string]any, keys ...string) {
		for _, k := range keys {
			if _, ok := e[k]; !ok {
				errorf("%v event lacks %q: %v", e["ph"], k, e)
			}
		}
	}
	type span struct{ from, to int }
	type flow struct {
		s, f         bool
		sTs, fTs     int
		sTid, fTid   int
		sName, fName string
	}
	threads := map[int]string{}
	*threadsOut = threads
	spans := map[int][]span{}
	fl := map[int]*flow{}
	var points []struct{ tid, ts int }
	for _, e := range file.TraceEvents {
		require(e, "ph", "name", "pid")
		switch e["ph"] {
		case "M":
			require(e, "tid", "args")
			if e["name"] == "thread_name" {
				args, _ := e["args"].(map[string]any)
				name, _ := args["name"].(string)
				threads[num(e, "tid")] = name
			}
		case "X":
			require(e, "tid", "ts", "dur")
			if num(e, "dur") <= 0 {
				errorf("slice with dur %d: %v", num(e, "dur"), e)
			}
			spans[num(e, "tid")] = append(spans[num(e, "tid")], span{num(e, "ts"), num(e, "ts") + num(e, "dur")})
			*slices++
		case "s", "f":
			require(e, "tid", "ts", "id", "cat")
			id := num(e, "id")
			if fl[id] == nil {
				fl[id] = &flow{}
			}
			x := fl[id]
			if e["ph"] == "s" {
				if x.s {
					errorf("flow id %d started twice", id)
				}
				x.s, x.sTs, x.sTid, x.sName = true, num(e, "ts"), num(e, "tid"), e["name"].(string)
			} else {
				if x.f {
					errorf("flow id %d finished twice", id)
				}
				if e["bp"] != "e" {
					errorf("flow finish %d not bound to the enclosing slice (bp %v)", id, e["bp"])
				}
				x.f, x.fTs, x.fTid, x.fName = true, num(e, "ts"), num(e, "tid"), e["name"].(string)
			}
			points = append(points, struct{ tid, ts int }{num(e, "tid"), num(e, "ts")})
		case "i":
			require(e, "tid", "ts", "s")
			*instants++
		default:
			errorf("unexpected phase %v", e["ph"])
		}
	}
	for id, x := range fl {
		if !x.s || !x.f {
			errorf("flow %d unpaired (start %v, finish %v)", id, x.s, x.f)
			continue
		}
		if x.sName != x.fName || x.fTs < x.sTs {
			errorf("flow %d: start %q at %d, finish %q at %d", id, x.sName, x.sTs, x.fName, x.fTs)
		}
		*flows++
	}
	for tid, ss := range spans {
		if threads[tid] == "" {
			errorf("thread %d has slices but no thread_name", tid)
		}
		for i := range ss {
			for j := i + 1; j < len(ss); j++ {
				if ss[i].from < ss[j].to && ss[j].from < ss[i].to {
					errorf("thread %d: slices [%d,%d) and [%d,%d) overlap", tid, ss[i].from, ss[i].to, ss[j].from, ss[j].to)
				}
			}
		}
	}
	for _, p := range points {
		inside := false
		for _, s := range spans[p.tid] {
			inside = inside || (s.from <= p.ts && p.ts < s.to)
		}
		if !inside {
			errorf("flow event at %d on thread %d is inside no slice", p.ts, p.tid)
		}
	}
	return problems
}

func TestPerfettoFollowsTheTraceEventFormat(t *testing.T) {
	tl := Build(recording(t), nil)
	var buf bytes.Buffer
	if err := tl.WritePerfetto(&buf, "run.halerec"); err != nil {
		t.Fatal(err)
	}
	slices, flows, instants, threads := checkTraceEventFormat(t, buf.Bytes())
	if slices != 5 || flows != 4 || instants != 2 || len(threads) != 2 {
		t.Errorf("slices %d flows %d instants %d threads %v; want 5, 4, 2 and 2 threads", slices, flows, instants, threads)
	}
	if threads[1] != "0 main (main)" || threads[2] != "1 Worker (pool)" {
		t.Errorf("threads %v", threads)
	}
}

func TestPerfettoPublishOutsideAHandlerGetsASlice(t *testing.T) {
	tl := Build(fanOut(t, 50), nil)
	var buf bytes.Buffer
	if err := tl.WritePerfetto(&buf, "fan.halerec"); err != nil {
		t.Fatal(err)
	}
	// 50 deliveries and 50 one-step publish slices on main's thread.
	slices, flows, _, _ := checkTraceEventFormat(t, buf.Bytes())
	if slices != 100 || flows != 50 {
		t.Errorf("slices %d flows %d, want 100 and 50", slices, flows)
	}
}

// TestCheckerCatchesBrokenTraces makes sure the validator above fails on
// what it is meant to catch.
func TestCheckerCatchesBrokenTraces(t *testing.T) {
	valid := `{"traceEvents":[{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"a"}},{"name":"x","ph":"X","pid":1,"tid":1,"ts":0,"dur":2},{"name":"m","cat":"c","ph":"s","pid":1,"tid":1,"ts":0,"id":1},{"name":"m","cat":"c","ph":"f","bp":"e","pid":1,"tid":1,"ts":1,"id":1}]}`
	var s, f, i int
	var th map[int]string
	if p := traceProblems([]byte(valid), &s, &f, &i, &th); len(p) != 0 || s != 1 || f != 1 {
		t.Errorf("a valid trace: problems %q, slices %d, flows %d", p, s, f)
	}
	for name, trace := range map[string]string{
		"finish before start": `{"traceEvents":[{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"a"}},{"name":"x","ph":"X","pid":1,"tid":1,"ts":0,"dur":2},{"name":"m","cat":"c","ph":"s","pid":1,"tid":1,"ts":1,"id":1},{"name":"m","cat":"c","ph":"f","bp":"e","pid":1,"tid":1,"ts":0,"id":1}]}`,
		"flow outside slices": `{"traceEvents":[{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"a"}},{"name":"x","ph":"X","pid":1,"tid":1,"ts":0,"dur":2},{"name":"m","cat":"c","ph":"s","pid":1,"tid":1,"ts":0,"id":1},{"name":"m","cat":"c","ph":"f","bp":"e","pid":1,"tid":1,"ts":5,"id":1}]}`,
		"unpaired flow":       `{"traceEvents":[{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"a"}},{"name":"x","ph":"X","pid":1,"tid":1,"ts":0,"dur":2},{"name":"m","cat":"c","ph":"s","pid":1,"tid":1,"ts":0,"id":1}]}`,
		"overlap":             `{"traceEvents":[{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"a"}},{"name":"x","ph":"X","pid":1,"tid":1,"ts":0,"dur":2},{"name":"y","ph":"X","pid":1,"tid":1,"ts":1,"dur":2}]}`,
		"slice no dur":        `{"traceEvents":[{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"a"}},{"name":"x","ph":"X","pid":1,"tid":1,"ts":0}]}`,
	} {
		var slices, flows, instants int
		var threads map[int]string
		if len(traceProblems([]byte(trace), &slices, &flows, &instants, &threads)) == 0 {
			t.Errorf("%s: the checker passed a broken trace", name)
		}
	}
}

func writeHTML(t *testing.T, tl *Timeline) string {
	t.Helper()
	var buf bytes.Buffer
	if err := tl.WriteHTML(&buf, "run.halerec", ""); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// embedded counts what the page's embedded data asks the script to draw.
func embedded(t *testing.T, page string) (lanes, boxes, arrows, marks, omitted int) {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="timeline-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no embedded timeline data")
	}
	var p htmlPage
	if err := json.Unmarshal([]byte(m[1]), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Runs) != 1 {
		t.Fatalf("%d runs in a single run's page", len(p.Runs))
	}
	d := p.Runs[0]
	return len(d.Lanes), len(d.Boxes), len(d.Arrows), len(d.Marks), d.Omitted
}

func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"http://", "https://", "<script src", "<link", "@import", "url(http"} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("page is not self-contained: it holds %q", bad)
		}
	}
}

func TestHTMLIsSelfContainedAndCarriesTheTimeline(t *testing.T) {
	page := writeHTML(t, Build(recording(t), nil))
	checkSelfContained(t, page)
	lanes, boxes, arrows, marks, omitted := embedded(t, page)
	if lanes != 2 || boxes != 5 || arrows != 4 || marks != 2 || omitted != 0 {
		t.Errorf("embedded lanes %d boxes %d arrows %d marks %d omitted %d; want 2 5 4 2 0", lanes, boxes, arrows, marks, omitted)
	}
	if strings.Contains(page, "left out") {
		t.Error("a small recording says it left deliveries out")
	}
}

// TestHTMLEscapesTheArtifactsStrings: a forged artifact's names cannot
// end the script element or inject markup.
func TestHTMLEscapesTheArtifactsStrings(t *testing.T) {
	a := recording(t)
	a.Header.Consumers[1].Name = `</script><script src="https://evil.example/x.js"></script>`
	page := writeHTML(t, Build(a, nil))
	if strings.Count(page, "</script>") != 2 {
		t.Errorf("the artifact's text closed a script element:\n%s", page)
	}
}

// TestHTMLOfTenThousandDeliveriesStaysBounded: past HTMLLimit the page
// draws the first HTMLLimit deliveries and says how many it left out.
func TestHTMLOfTenThousandDeliveriesStaysBounded(t *testing.T) {
	tl := Build(fanOut(t, 10000), nil)
	page := writeHTML(t, tl)
	checkSelfContained(t, page)
	if len(page) > 2<<20 {
		t.Errorf("page of 10,000 deliveries is %d bytes, want at most 2 MiB", len(page))
	}
	lanes, boxes, arrows, _, omitted := embedded(t, page)
	if lanes != 3 || boxes != HTMLLimit || arrows != HTMLLimit || omitted != 10000-HTMLLimit {
		t.Errorf("lanes %d boxes %d arrows %d omitted %d", lanes, boxes, arrows, omitted)
	}
	want := "showing the first 5000 of 10000 deliveries; 5000 left out"
	if !strings.Contains(page, want) || !strings.Contains(tl.LimitMessage(), want) {
		t.Errorf("page does not say %q", want)
	}
	if c := tl.HTMLCounts(); c.Boxes != HTMLLimit || c.Omitted != 5000 {
		t.Errorf("HTMLCounts %+v", c)
	}
}

// browser finds a headless-capable Chromium on PATH.
func browser() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// renderedCounts renders the page in headless Chromium and counts the
// elements the script drew, by their data attributes.
func renderedCounts(t *testing.T, page string) (lanes, boxes, arrows, marks int, dom string) {
	dom, count := render(t, page)
	return count("data-lane"), count("data-box"), count("data-arrow"), count("data-mark"), dom
}

// render renders the page in headless Chromium and returns the DOM it
// built (scripts left out) and a counter of the elements carrying an
// attribute.
func render(t *testing.T, page string) (dom string, count func(attr string) int) {
	t.Helper()
	chrome := browser()
	if chrome == "" {
		t.Skip("no chromium, chromium-browser or google-chrome on PATH: the HTML view is checked from its embedded data only (.ci/run installs Debian's chromium)")
	}
	path := filepath.Join(t.TempDir(), "view.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(chrome, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=10000", "--dump-dom", "file://"+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s --dump-dom: %v\n%s", chrome, err, stderr.String())
	}
	// The scripts are left out: their text spells the attributes too.
	dom = regexp.MustCompile(`(?s)<script\b.*?</script>`).ReplaceAllString(string(out), "")
	if !strings.Contains(dom, "<svg") {
		t.Fatalf("the page drew no SVG:\n%.2000s", dom)
	}
	count = func(attr string) int {
		return len(regexp.MustCompile(`<[a-z0-9]+ [^>]*\b`+attr+`="`).FindAllString(dom, -1))
	}
	return dom, count
}

func TestHTMLRendersInChromium(t *testing.T) {
	tl := Build(recording(t), nil)
	lanes, boxes, arrows, marks, _ := renderedCounts(t, writeHTML(t, tl))
	if lanes != 2 || boxes != 5 || arrows != 4 || marks != 2 {
		t.Errorf("rendered lanes %d boxes %d arrows %d marks %d; want 2 5 4 2", lanes, boxes, arrows, marks)
	}
}

func TestHTMLOfTenThousandDeliveriesRendersInChromium(t *testing.T) {
	tl := Build(fanOut(t, 10000), nil)
	lanes, boxes, arrows, _, dom := renderedCounts(t, writeHTML(t, tl))
	if lanes != 3 || boxes != HTMLLimit || arrows != HTMLLimit {
		t.Errorf("rendered lanes %d boxes %d arrows %d", lanes, boxes, arrows)
	}
	if !regexp.MustCompile(`data-limit="5000"[^>]*>showing the first 5000 of 10000 deliveries`).MatchString(dom) {
		t.Error("the rendered page does not say how many deliveries it left out")
	}
}

// diffed is the recording of recording(t) and a replay of it that
// published another payload in Worker's second handler (entry 7): the
// first divergence is in box 1:1 on both sides.
func diffed(t *testing.T) (rec, rep *Timeline, d Divergence) {
	a := recording(t)
	b := recording(t)
	p := b.Entries[7].Body.(artifact.Publish)
	p.Payload = []byte{9}
	b.Entries[7].Body = p
	return Build(a, nil), Build(b, nil), Divergence{RecordedEntry: 7, ReplayedEntry: 7, At: "1:1",
		Sentence: "consumer 1: delivery #1 published Pong with another payload"}
}

func TestDiffHTMLMarksTheFirstDivergenceInBothRuns(t *testing.T) {
	rec, rep, d := diffed(t)
	var buf bytes.Buffer
	if err := WriteDiffHTML(&buf, "run.halerec", rec, rep, d); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	checkSelfContained(t, page)
	m := regexp.MustCompile(`(?s)id="timeline-data">(.*?)</script>`).FindStringSubmatch(page)
	var p htmlPage
	if m == nil || json.Unmarshal([]byte(m[1]), &p) != nil {
		t.Fatal("no embedded page data")
	}
	if len(p.Runs) != 2 || p.Runs[0].Run != "recorded" || p.Runs[1].Run != "replayed" || p.Divergence != d.Sentence {
		t.Fatalf("page %+v", p)
	}
	for _, r := range p.Runs {
		if r.Divergent != 2 || r.Boxes[r.Divergent].Coordinate != "1:1" {
			t.Errorf("%s: divergent box %d, want 2 (1:1)", r.Run, r.Divergent)
		}
	}
	// A side without an entry is marked at the coordinate.
	if got := rep.boxOf(-1, "0:2"); got != 4 {
		t.Errorf("boxOf(-1, 0:2) = %d, want 4", got)
	}
	if got := rep.boxOf(-1, "9:9"); got != -1 {
		t.Errorf("boxOf(-1, 9:9) = %d, want -1", got)
	}

	dom, count := render(t, page)
	if count("data-run") != 2 || count("data-box") != 10 || count("data-arrow") != 8 {
		t.Errorf("rendered runs %d boxes %d arrows %d; want 2, 10, 8", count("data-run"), count("data-box"), count("data-arrow"))
	}
	if n := len(regexp.MustCompile(`data-divergence="1:1"`).FindAllString(dom, -1)); n != 2 {
		t.Errorf("%d boxes marked diverged, want 2", n)
	}
	if !strings.Contains(dom, "first divergence: consumer 1: delivery #1 published Pong") {
		t.Error("the rendered page does not state the divergence")
	}
}
