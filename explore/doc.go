// Package explore is Hale's deterministic scheduler and schedule
// explorer (docs/testing.md): it runs a program with every consumer on
// one thread, one handler run per step, choosing at each step which
// consumer runs and which producer's oldest pending delivery it takes;
// it searches schedules with a strategy (random, pct, pos), detects
// failures, shrinks them and writes each as a self-contained `.replay`
// bundle that `hale replay x.replay --verify` re-executes.
//
// A run reaches the world only through its Journal (world): time is
// virtual, randomness comes from seeded ChaCha8 streams, and every other
// input comes from fixtures or, when a bundle is verified, from the
// bundle's transcript. Runs are driven through vm/host's Stepper, so that
// identities, routing, traps and quiescence are the runtime's own.
package explore
