// Package host runs Hale programs: it is the runtime around the
// interpreter. It owns the consumers of docs/language.md (the main bus,
// pools, pinned and async_io instances, ingress bindings), their delivery
// queues and goroutines, start-up, publishing and fan-out, quiescence,
// exit and traps, and the host side of every primitive (time, rand,
// entropy, env, args, fs, http, io, exit).
//
// The interpreter runs in an Engine, one per consumer. The default engine
// is the interpreter compiled to WebAssembly (package vm/guest, embedded
// as guest.wasm) under wazero: the guest sees only fake, deterministic
// WASI clocks and randomness, no environment, arguments or files, and one
// import, hale.prim, through which every primitive call, publish and print
// crosses (protocol in package vm/guest/abi). A test checks that the
// module imports nothing else. The native engine runs the same
// interpreter in-process; both give identical results.
//
// Run is the entry point:
//
//	res, err := host.Run(ctx, img, host.Options{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin, Args: args})
//	os.Exit(res.Code)
//
// Record and replay plug in through the Journal, Order and Input seams
// (journal.go): the runtime reports every invocation, publish, delivery,
// trap and the end to the Journal, which may serve results instead of
// performing the calls; the Order picks each consumer's next delivery;
// the Input supplies ingress lines. Without them each site costs one nil
// check. Timers (`publish T {…} after ms`) wait in a TimerQueue (timer.go)
// until they are due: by default a real one on the monotonic clock; a
// replay uses ImmediateTimers, and a virtual clock may bring its own
// through Options.Timers.
//
// The guest is rebuilt with `go generate ./vm/host`; a test fails when
// the committed guest.wasm is stale.
package host
