package host

import (
	"testing"
)

var realEngines = []EngineKind{EngineNative, EngineWasm}

// TestScenariosEngines runs every scenario on both real engines: each
// must meet the scenario's expectations, which the fake engine meets too,
// and the journals must agree.
func TestScenariosEngines(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			img := compileAll(t, sc.src)
			for _, kind := range realEngines {
				t.Run(kind.String(), func(t *testing.T) {
					j := newLogJournal(img)
					opts := sc.options()
					opts.Engine = kind
					opts.Journal = j
					sc.check(t, runWith(t, img, opts))
					j.check(t)
				})
			}
		})
	}
}
