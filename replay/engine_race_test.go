//go:build race

package replay_test

import "github.com/hale-lang/hale/vm/host"

// Under the race detector the integration tests run on the wasm engine,
// the default one: its host side (consumers, journal, replayer) is the
// part under test here, and the native engine runs under the race
// detector in package vm/host's tests.
func init() { engine, raceBuild = host.EngineWasm, true }
