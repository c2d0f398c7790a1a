//go:build race

package replay_test

import "github.com/hale-lang/hale/vm/host"

// Under the race detector the native interpreter trips checkptr (its
// instruction pointer is advanced past the end of the code before the
// loop checks it), so the integration tests run on the wasm engine,
// whose host side, the part under test here, is the same.
func init() { engine, raceBuild = host.EngineWasm, true }
