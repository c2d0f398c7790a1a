package cli

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/spf13/cobra"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/lang/diag"
	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/host"
)

func init() { commands = append(commands, newRunCmd) }

func newRunCmd(e env) *cobra.Command {
	var engine string
	cmd := &cobra.Command{
		Use:   "run [--engine wasm|native] app.hl [--] [arg...]",
		Short: "Run a program (set LOTUS_OBS_RECORD=run.halerec to record it)",
		Long: "Run compiles and runs the program until it is quiescent, calls std::process::exit\n" +
			"or traps. Arguments after the file are the program's std::os::args(); flags after\n" +
			"the file belong to the program, and a -- right after the file is dropped.\n" +
			"With LOTUS_OBS_RECORD set, the run is recorded to that path.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, err := host.ParseEngine(engine)
			if err != nil {
				return exitf(ExitUsage, "%v", err)
			}
			release := holdStartupGC()
			defer release()
			host.Prepare(kind)
			go func() { host.WaitPrepared(kind); release() }()
			progArgs := args[1:]
			if len(progArgs) > 0 && progArgs[0] == "--" {
				progArgs = progArgs[1:]
			}
			c, err := compile(e, args[0])
			if err != nil {
				return err
			}
			// Warnings do not stop a run, but a run is where most users
			// would first see them (W0101: a credential in a plain header).
			if len(c.Program.Warnings) > 0 {
				fmt.Fprint(e.stderr, diag.Render(c.Program.Warnings, c.Program.Source))
			}
			limit, err := memoryLimit(e)
			if err != nil {
				return err
			}
			opts := host.Options{
				Engine:      kind,
				Stdin:       e.stdin,
				Stdout:      e.stdout,
				Stderr:      e.stderr,
				Args:        progArgs,
				MemoryLimit: limit,
			}
			var pid uint64
			if host.HasNATS(c.Image) {
				bus, err := natsBus(e)
				if err != nil {
					return err
				}
				opts.Bus, pid = bus, newProcessID()
				opts.ProcessID = pid
			}
			rec, err := startRecording(e, args[0], c, limit, pid)
			if err != nil {
				return err
			}
			if rec != nil {
				opts.Journal = rec
			}
			ctx, stop := interruptContext()
			defer stop()
			res, runErr := host.Run(ctx, c.Image, opts)
			if rec != nil {
				// Recording failure wins over every other outcome
				// (exit 4), and never leaves a file that looks complete.
				// A run that never got going leaves no recording either,
				// and its own error is the one to report.
				if err := rec.Close(); err != nil && !(runErr != nil && errors.Is(err, replay.ErrRunNotEnded)) {
					return exitf(ExitRecording, "recording failed: %v", err)
				}
			}
			if errors.Is(runErr, context.Canceled) {
				return exitf(ExitInterrupted, "interrupted")
			}
			if runErr != nil {
				return exitf(ExitFailure, "%v", runErr)
			}
			if res.Code != 0 {
				return silentExit(res.Code)
			}
			return nil
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVar(&engine, "engine", defaultEngine(e), "interpreter engine: wasm (sandboxed) or native (in-process); default $HALE_ENGINE, else wasm")
	return cmd
}

// identity is what a recording of c says about the program and the
// toolchain.
func identity(c *hale.Compiled) replay.HeaderInfo {
	return replay.HeaderInfo{HaleVersion: hale.Version, BuildDigest: c.BuildDigest(), ShapeHash: c.ShapeHash, Files: c.Files}
}

// startRecording installs the recorder when LOTUS_OBS_RECORD is set and
// non-empty; otherwise it returns nil and the run has no recorder at all.
func startRecording(e env, path string, c *hale.Compiled, memLimit int64, processID uint64) (*replay.RecordingJournal, error) {
	settings, err := artifact.FromEnv(e.getenv)
	if err != nil {
		return nil, exitf(ExitUsage, "%v", err)
	}
	if settings.Path == "" {
		return nil, nil // no recorder, and no build digest to compute
	}
	ins := sourceInputs(path, c)
	if in, ok := stdinInput(e.stdin); ok {
		ins = append(ins, in)
	}
	if err := checkRecordingTarget(settings.Path, ins); err != nil {
		return nil, err
	}
	info := identity(c)
	info.MemoryLimit = memLimit
	info.ProcessID = processID
	rec, err := replay.StartRecording(settings, c.Image, info)
	if err != nil {
		return nil, exitf(ExitRecording, "recording failed: %v", err)
	}
	return rec, nil
}

// memoryLimit is each consumer's memory limit: $HALE_MEMORY_LIMIT when
// set, otherwise the default. A bad value is a usage error.
func memoryLimit(e env) (int64, error) {
	v := e.getenv("HALE_MEMORY_LIMIT")
	if v == "" {
		return vm.DefaultMemoryLimit, nil
	}
	limit, err := host.ParseMemoryLimit(v)
	if err != nil {
		return 0, exitf(ExitUsage, "HALE_MEMORY_LIMIT: %v", err)
	}
	return limit, nil
}

// defaultEngine is the engine used without --engine: $HALE_ENGINE when
// set (the conformance suite runs every script under both engines this
// way), otherwise wasm.
func defaultEngine(e env) string {
	if v := e.getenv("HALE_ENGINE"); v != "" {
		return v
	}
	return "wasm"
}

// startupGCLimit bounds the memory holdStartupGC lets the start-up take
// before Go's collector runs anyway.
const startupGCLimit = 512 << 20

// holdStartupGC turns Go's collector off while the wasm engine loads (the
// interpreter guest decoded and checked, its compiled code read from the
// cache: tens of MB that live to the end of the run, which collections
// would only walk, 8% of a warm `hale run`'s CPU time; performance.md
// §5.34), within a memory limit of startupGCLimit, and returns the
// function that puts the collector's percent and memory limit back as
// they were; it may be called more than once, from any goroutine.
func holdStartupGC() (release func()) {
	prevLimit := debug.SetMemoryLimit(-1)
	debug.SetMemoryLimit(min(prevLimit, startupGCLimit))
	prevPercent := debug.SetGCPercent(-1)
	var once sync.Once
	return func() {
		once.Do(func() {
			debug.SetGCPercent(prevPercent)
			debug.SetMemoryLimit(prevLimit)
		})
	}
}
