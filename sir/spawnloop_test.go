package sir

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hale-lang/hale/lang/diag"
)

// spawnLoopSrc spawns through nested loops, with a plain spawn between
// them, so main order interleaves loop bodies and source order.
const spawnLoopSrc = `const N: int = 3;
topic Job { n: int }
locus Worker(id: int) { on Job(j) { } }
locus Cell(row: int, col: int) { on Job(j) { } }
locus Sink { }
main {
    for i in 0..N - 1 {
        spawn Worker(i) as workers[i] on pool("w");
        for j in -1..1 {
            spawn Cell(i, j) as grid[i][j] on pinned;
        }
    }
    spawn Sink;
    for k in 5..5 { spawn Worker(k) as none[k]; }
}
`

// TestSpawnLoopExpansion: loops unroll in main order, names carry the
// index values, arguments read the loop variables as constants.
func TestSpawnLoopExpansion(t *testing.T) {
	p := loadSrc(t, spawnLoopSrc)
	var names, args []string
	for _, in := range p.Instances {
		names = append(names, in.Name)
		var a []string
		for _, x := range in.Args {
			c, ok := x.(*Const)
			if !ok {
				t.Fatalf("%s: argument %T, want a constant", in.Name, x)
			}
			a = append(a, c.Value.String())
		}
		args = append(args, strings.Join(a, ","))
	}
	wantNames := "workers[0] grid[0][-1] grid[0][0] workers[1] grid[1][-1] grid[1][0] Sink"
	if got := strings.Join(names, " "); got != wantNames {
		t.Errorf("instances %s\nwant      %s", got, wantNames)
	}
	wantArgs := "0 0,-1 0,0 1 1,-1 1,0 "
	if got := strings.Join(args, " "); got != wantArgs {
		t.Errorf("arguments %q, want %q", got, wantArgs)
	}
	var consumers []string
	for _, c := range p.Consumers {
		consumers = append(consumers, c.Kind.String()+":"+c.Name)
	}
	want := "main:main pool:w pinned:grid[0][-1] pinned:grid[0][0] pinned:grid[1][-1] pinned:grid[1][0]"
	if got := strings.Join(consumers, " "); got != want {
		t.Errorf("consumers %s\nwant      %s", got, want)
	}
}

// TestSpawnLoopLimit: more than MaxInstances instances is an error at the
// item that crosses the limit, however the count is reached (and without
// unrolling or overflowing).
func TestSpawnLoopLimit(t *testing.T) {
	tests := []struct {
		main string
		pos  string
		code diag.Code
		msg  string
	}{
		{"for i in 0..100001 { spawn W as w[i]; }", "app.hl:3:8", CodeTooManyInstances, "main spawns more than 100000 instances"},
		{"spawn W as a;\n for i in 0..100000 { spawn W as w[i]; }", "app.hl:4:2", CodeTooManyInstances, "more than 100000"},
		{"for i in 0..1000 { for j in 0..1000 { spawn W as w[i][j]; } }", "app.hl:3:8", CodeTooManyInstances, "more than 100000"},
		{"for i in -9223372036854775807..9223372036854775807 { spawn W as w[i]; }", "app.hl:3:8", CodeTooManyInstances, "more than 100000"},
		{"for i in 0..M { for j in 0..M { for k in 0..M { spawn W as w[i][j][k]; } } }", "app.hl:3:8", CodeTooManyInstances, "more than 100000"},
		{"for i in 0..M * M * M { spawn W as w[i]; }", "app.hl:3:22", CodeConstTrap, "a spawn loop bound traps: integer overflow"},
	}
	for _, tt := range tests {
		src := "const M: int = 3037000500;\nlocus W { }\nmain { " + tt.main + " }"
		_, err := lowerFiles(map[string]string{"app.hl": src})
		list, ok := err.(diag.List)
		if !ok || len(list) != 1 {
			t.Errorf("%q: got %v, want one diagnostic", tt.main, err)
			continue
		}
		if e := list[0]; e.Pos.String() != tt.pos || e.Code != tt.code || !strings.Contains(e.Msg, tt.msg) {
			t.Errorf("%q: got %s, want %s: …%s… [%s]", tt.main, e, tt.pos, tt.msg, tt.code)
		}
	}
	// Exactly the limit is allowed.
	p := loadSrc(t, "locus W { }\nmain { for i in 0..100000 { spawn W as w[i]; } }")
	if n := len(p.Instances); n != MaxInstances || p.Instances[n-1].Name != "w[99999]" {
		t.Errorf("%d instances, last %s", n, p.Instances[n-1].Name)
	}
}

// TestSpawnLoopShape: the shape sees every instance: the hash changes with
// a bound, and text, JSON and DOT list the indexed names.
func TestSpawnLoopShape(t *testing.T) {
	base := shapeOf(t, map[string]string{"app.hl": spawnLoopSrc})
	again := shapeOf(t, map[string]string{"app.hl": strings.ReplaceAll(spawnLoopSrc, "    ", "  ")})
	if base.Hash() != again.Hash() {
		t.Error("reformatting changed the hash")
	}
	seen := map[string]string{base.Hash(): "base"}
	for _, e := range [][2]string{
		{"const N: int = 3;", "const N: int = 4;"},
		{"for j in -1..1", "for j in -1..2"},
		{"as grid[i][j] on pinned", "as cells[i][j] on pinned"},
		{`as workers[i] on pool("w")`, `as workers[i] on pool("v")`},
	} {
		h := shapeOf(t, map[string]string{"app.hl": edit(t, spawnLoopSrc, e[0], e[1])}).Hash()
		if prev, ok := seen[h]; ok {
			t.Errorf("%s: same hash as %s", e[1], prev)
		}
		seen[h] = e[1]
	}

	var text, js, dot bytes.Buffer
	if err := base.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  grid[1][-1]: Cell on pinned\n",
		"  workers[1]: Worker on pool(\"w\")\n",
		"  consumer 1 pool w: workers[0], workers[1]\n",
		"  consumer 4 pinned grid[1][-1]: grid[1][-1]\n",
		"  grid[0][0] <- Job\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("shape text lacks %q:\n%s", want, text.String())
		}
	}
	if err := base.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var obj struct {
		Instances []struct{ Name string } `json:"instances"`
	}
	if err := json.Unmarshal(js.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range obj.Instances {
		names = append(names, in.Name)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "grid[0][-1]") || !strings.Contains(got, "workers[1]") || len(names) != 7 {
		t.Errorf("JSON instances %s", got)
	}
	if err := base.WriteDot(&dot); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"instance:grid[1][-1]" [shape=box, label="grid[1][-1]\nCell on pinned"];`,
		`"topic:Job" -> "instance:workers[0]";`,
	} {
		if !strings.Contains(dot.String(), want) {
			t.Errorf("dot lacks %q:\n%s", want, dot.String())
		}
	}
}
