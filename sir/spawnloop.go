package sir

import (
	"strconv"

	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/diag"
)

// MaxInstances bounds the instances one program's main may spawn, spawn
// loops included: the topology is built, hashed and stored in every
// artifact, so its size is kept reasonable.
const MaxInstances = 100_000

// CodeTooManyInstances: main spawns more than MaxInstances instances.
const CodeTooManyInstances diag.Code = "E0803"

// spawnAt is one instance a spawn statement makes: a plain spawn makes
// one; a spawn inside loops makes one per iteration, named with the loop
// variables' values (`workers[3]`, `grid[1][2]`).
type spawnAt struct {
	spawn *ast.Spawn
	name  string
	vals  map[*ast.Symbol]int64 // the loop variables' values, nil outside loops
}

// loopRange is a spawn loop's folded bounds.
type loopRange struct{ lo, hi int64 }

func (r loopRange) count() int64 {
	if r.hi <= r.lo {
		return 0
	}
	// hi-lo may overflow int64 when the bounds are far apart.
	if n := r.hi - r.lo; n > 0 {
		return n
	}
	return MaxInstances + 1
}

// expandMain unrolls main's spawn loops into "main order": source order,
// each loop's body once per value of its variable, from lo up to hi-1.
// The bounds are folded with the run-time semantics (the checker made sure
// they are constant). A program spawning more than MaxInstances instances
// is an error at the item that crosses the limit.
func (l *lowerer) expandMain(m *ast.MainDecl) []spawnAt {
	if len(m.Items) == 0 { // a tree built without the parser: plain spawns
		var out []spawnAt
		for _, s := range m.Spawns {
			out = append(out, spawnAt{spawn: s, name: s.InstanceName()})
		}
		return out
	}
	ranges := map[*ast.SpawnLoop]loopRange{}
	ok := true
	outer := l.constName
	l.constName = "" // messages name "a spawn loop bound"
	for _, lp := range m.Loops {
		lo, okLo := l.fold(lp.Lo)
		hi, okHi := l.fold(lp.Hi)
		if !okLo || !okHi || lo.Kind != KindInt || hi.Kind != KindInt {
			ok = false
			continue
		}
		ranges[lp] = loopRange{lo.Int, hi.Int}
	}
	l.constName = outer
	if !ok {
		return nil
	}
	var total int64
	for _, it := range m.Items {
		total += countItems([]ast.Node{it}, ranges)
		if total > MaxInstances {
			l.errs.Add(it.Pos(), CodeTooManyInstances, "main spawns more than %d instances (counting spawn loops' iterations)", MaxInstances)
			return nil
		}
	}
	var out []spawnAt
	var walk func(items []ast.Node, vals map[*ast.Symbol]int64)
	walk = func(items []ast.Node, vals map[*ast.Symbol]int64) {
		for _, it := range items {
			switch it := it.(type) {
			case *ast.Spawn:
				name := it.InstanceName()
				for _, ix := range it.Index {
					name += "[" + strconv.FormatInt(vals[ix.Sym], 10) + "]"
				}
				out = append(out, spawnAt{spawn: it, name: name, vals: vals})
			case *ast.SpawnLoop:
				r := ranges[it]
				for v := r.lo; v < r.hi; v++ {
					inner := make(map[*ast.Symbol]int64, len(vals)+1)
					for k, x := range vals {
						inner[k] = x
					}
					inner[it.Var.Sym] = v
					walk(it.Body, inner)
				}
			}
		}
	}
	walk(m.Items, nil)
	return out
}

// countItems counts the instances items spawn, saturating just past
// MaxInstances so that no product overflows.
func countItems(items []ast.Node, ranges map[*ast.SpawnLoop]loopRange) int64 {
	var n int64
	for _, it := range items {
		switch it := it.(type) {
		case *ast.Spawn:
			n++
		case *ast.SpawnLoop:
			body := countItems(it.Body, ranges)
			iters := ranges[it].count()
			if body > 0 && iters > (MaxInstances+1)/body {
				return MaxInstances + 1
			}
			n += body * iters
		}
		if n > MaxInstances {
			return MaxInstances + 1
		}
	}
	return n
}
