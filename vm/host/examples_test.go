package host

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hale-lang/hale/codegen/image"
)

// TestEnginesAgreeOnExamples runs the example programs on both engines
// with the same inputs (arguments, stdin, a fixed clock and entropy) and
// compares their output and, consumer by consumer, their journals:
// invocations with arguments and results, publishes, deliveries. Where
// several consumers race (orders.hl) only what each consumer did in its
// own order is compared, with output lines as a sorted set (or, where
// the lines themselves depend on the interleaving, their number).
func TestEnginesAgreeOnExamples(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.hl")
	if len(files) == 0 {
		t.Skip("no examples")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("page " + r.URL.Path))
	}))
	defer srv.Close()
	inputs := map[string]struct {
		args  []string
		stdin string
		racy  bool // the output's content depends on how consumers interleave
	}{
		"orders.hl":    {racy: true},
		"inventory.hl": {racy: true},
		"bank.hl":      {racy: true}, // the lost update traps in most runs
		"wordcount.hl": {stdin: "the cat\nThe dog  and the CAT\n\nend"},
		"fetch.hl":     {args: []string{srv.URL + "/a", srv.URL + "/missing", srv.URL + "/bb"}},
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			img := compileAll(t, string(src))
			in := inputs[name]
			type run struct {
				o outcome
				j *logJournal
			}
			var runs []run
			for _, kind := range realEngines {
				j := newLogJournal(img)
				o := runWith(t, img, Options{
					Engine:  kind,
					Args:    in.args,
					Stdin:   strings.NewReader(in.stdin),
					Clock:   &fakeClock{now: time.UnixMilli(1_700_000_000_000), ticked: time.Millisecond},
					Entropy: bytes.NewReader(bytes.Repeat([]byte{42}, 4096)),
					Journal: j,
				})
				if o.err != nil {
					t.Fatalf("%v: %v", kind, o.err)
				}
				j.check(t)
				runs = append(runs, run{o, j})
			}
			a, b := runs[0], runs[1]
			racing := racingConsumers(img)
			if racing && in.racy && (a.o.res.Verdict != b.o.res.Verdict || a.o.res.Verdict == VerdictTrap) {
				// Whether and where it traps depends on the interleaving,
				// so how far each consumer got does too; package replay
				// compares the engines on recordings of such runs.
				t.Skipf("%s ended %s on one engine and %s on the other: its outcome depends on the interleaving", name, a.o.res.Verdict, b.o.res.Verdict)
			}
			if a.o.res.Code != b.o.res.Code || a.o.res.Verdict != b.o.res.Verdict {
				t.Errorf("native %+v, wasm %+v", a.o.res, b.o.res)
			}
			switch {
			case racing && in.racy:
				// What is printed depends on the interleaving; only
				// how much does not.
				if strings.Count(a.o.stdout, "\n") != strings.Count(b.o.stdout, "\n") {
					t.Errorf("stdout differs:\nnative:\n%s\nwasm:\n%s", a.o.stdout, b.o.stdout)
				}
			case racing:
				if !reflect.DeepEqual(sortedLines(a.o.stdout), sortedLines(b.o.stdout)) {
					t.Errorf("stdout lines differ:\nnative:\n%s\nwasm:\n%s", a.o.stdout, b.o.stdout)
				}
			default:
				if a.o.stdout != b.o.stdout || a.o.stderr != b.o.stderr {
					t.Errorf("output differs:\nnative:\n%s%s\nwasm:\n%s%s", a.o.stdout, a.o.stderr, b.o.stdout, b.o.stderr)
				}
			}
			if a.o.stdout == "" {
				t.Errorf("no output")
			}
			for c := range img.Consumers {
				ea, eb := a.j.events(c), b.j.events(c)
				if racing {
					// Deliveries interleave differently; what a
					// consumer publishes and calls does not depend on
					// it only for producers that nobody feeds.
					ea, eb = a.j.kinds(c, "invoke"), b.j.kinds(c, "invoke")
					if len(ea) != len(eb) {
						t.Errorf("consumer %d: %d vs %d invocations", c, len(ea), len(eb))
					}
					continue
				}
				if !reflect.DeepEqual(ea, eb) {
					t.Errorf("consumer %d journals differ:\nnative:\n%s\nwasm:\n%s", c, strings.Join(ea, "\n"), strings.Join(eb, "\n"))
				}
			}
			t.Logf("%d consumers, deliveries %v, output %d bytes", len(img.Consumers), a.o.res.Handled, len(a.o.stdout))
		})
	}
}

// racingConsumers reports whether more than one consumer handles
// deliveries, so that their interleaving may differ between runs.
func racingConsumers(prog *image.Image) bool {
	n := 0
	for _, c := range prog.Consumers {
		if c.Kind != image.ConsumerIngress && len(c.Instances) > 0 {
			n++
		}
	}
	return n > 1
}
