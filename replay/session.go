package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// SessionOptions configure a replay session (Run).
type SessionOptions struct {
	// Options are the replayer's: hold timeout, supplied env values,
	// quiet, live effects, and the --at coordinate.
	Options
	// Info is the identity and files of the program being replayed,
	// stamped into the replay's own recording.
	Info HeaderInfo
	// Engine runs the program (default host.EngineWasm).
	Engine host.EngineKind
	// Stdout and Stderr receive what the program prints again; nil
	// discards.
	Stdout, Stderr io.Writer
	// Record makes the replay record itself and compares the two
	// recordings entry by entry, per consumer (`--diff`).
	Record bool
	// Output, when set, is where the replay's own recording is written
	// (`-o`); it implies Record.
	Output string
	// Started, when set, is called once, when the replayer's tables are
	// built and the program is about to run (or when Run returns before
	// that): the end of a start-up's HoldGC.
	Started func()
}

// Session is how a replay session ended.
type Session struct {
	// Report compares the recording with the replay; nil when the
	// session stopped at Options.At (View).
	Report *artifact.Report
	// View is the state at Options.At when the replay stopped there
	// without an inspector.
	View *AtView
}

// ErrOutput wraps the failure to create SessionOptions.Output: a place the
// replay cannot be written to is a bad argument, not a divergence.
var ErrOutput = errors.New("cannot record the replay")

// Run replays art, an admitted artifact (artifact.AdmitIndexed), by img,
// the program as compiled now, and compares the two runs.
//
// Without Record the replayer's own account decides (misses, timeouts,
// unconsumed inputs, unexpected deliveries, changed output or trap),
// which costs no second recording; only when it finds a divergence is
// the replay run again, silently and recorded, so that the report can
// show both sides of the first one. With Record (or Output, or live
// effects, which a second pass would perform again) the one pass is
// recorded and the two artifacts are compared entry by entry.
//
// A canceled ctx ends the session with an error wrapping
// context.Canceled; a program with async_io instances is refused
// (Replayable).
func Run(ctx context.Context, art *artifact.Artifact, img *image.Image, opts SessionOptions) (*Session, error) {
	if err := Replayable(img); err != nil {
		return nil, err
	}
	if art.Len() > maxReplayEntries {
		return nil, fmt.Errorf("the recording holds %d entries, more than a replay can hold (%d)", art.Len(), maxReplayEntries)
	}
	// The garbage collector's percent is lowered for the run once the
	// replayer's tables are built, which a start-up's HoldGC covers.
	restoreGC := func() {}
	var once sync.Once
	end := func() {
		if opts.Started != nil {
			once.Do(opts.Started)
		}
	}
	started := func() {
		restoreGC = LowerGC(art)
		end()
	}
	defer func() { restoreGC() }()
	defer end()
	record := opts.Record || opts.Output != "" || opts.AllowLiveEffects
	first, err := runPass(ctx, art, img, opts, record, opts.Output, opts.Stdout, opts.Stderr, started)
	if err != nil {
		return nil, err
	}
	defer first.cleanup()
	r, replayPath := first.r, first.path
	var seen *Finding // what the pass the user saw found first
	var stats *Stats  // r's, once asked (it walks every recorded delivery)
	if !record && opts.At == nil {
		first := r.Stats()
		stats = &first
		if !first.Clean() {
			seen = &first.Findings[0]
			stats = nil
			quiet := opts
			quiet.Quiet = true
			again, err := runPass(ctx, art, img, quiet, true, "", io.Discard, io.Discard, nil)
			if err != nil {
				return nil, err
			}
			defer again.cleanup()
			r, replayPath = again.r, again.path
		}
	}
	if opts.At != nil {
		if view := r.At(); view != nil {
			return &Session{View: view}, nil
		}
	}

	if stats == nil {
		s := r.Stats()
		stats = &s
	}
	var rep *artifact.Report
	if replayPath != "" {
		data, err := artifact.ReadFile(replayPath)
		if err != nil {
			return nil, fmt.Errorf("cannot read the replay's recording: %w", err)
		}
		replayed, err := artifact.Index(data)
		if err != nil {
			return nil, fmt.Errorf("the replay's recording is damaged: %w", err)
		}
		recorded, _ := NewValueDecoder(&art.Header)
		rep = artifact.Differ{Decode: chainDecoders(programDecoder(img), recorded)}.Diff(art, replayed)
	} else {
		rep = &artifact.Report{Verdict: artifact.ReportIdentical, Consumers: stats.Consumers,
			Deliveries: stats.Deliveries, JournalCalls: stats.JournalCalls,
			JournalMisses: stats.JournalMisses, Unconsumed: stats.Unconsumed, Unexpected: stats.Unexpected}
	}
	stats.Apply(rep)
	if seen != nil {
		// Consumers that diverge at the same moment can do so in another
		// order in the second pass; report first what the first pass,
		// whose output and trap the user saw, found first.
		rep.Prefer(seen.Kind, seen.At)
	}
	for _, d := range rep.Divergences {
		if d.Position == "" && d.Handler != nil {
			d.Position = handlerPosition(img, d.Handler)
		}
		if d.Position == "" && !d.End && !d.Startup {
			d.Position = recordedHandlerPosition(img, art, d.At)
		}
	}
	return &Session{Report: rep}, nil
}

// Replayable refuses a program that cannot be replayed: one with async_io
// instances, whose delivery order is not recorded.
func Replayable(img *image.Image) error {
	var names []string
	for _, inst := range img.Instances {
		if inst.Placement == image.PlaceAsyncIO {
			names = append(names, inst.Name)
		}
	}
	if len(names) > 0 {
		return fmt.Errorf("the program has async_io instances (%s), whose delivery order is not recorded", strings.Join(names, ", "))
	}
	return nil
}

// chainDecoders decodes with the first decoder that can: the program's
// own types first, then the recording's (a changed program may no longer
// call a primitive the recording shows).
func chainDecoders(ds ...artifact.ValueDecoder) artifact.ValueDecoder {
	return func(field, hint string, data []byte) (any, bool) {
		for _, d := range ds {
			if d == nil {
				continue
			}
			if v, ok := d(field, hint, data); ok {
				return v, true
			}
		}
		return nil, false
	}
}

// pass is one run of a replay.
type pass struct {
	r       *Replayer
	res     host.Result
	path    string // the replay's own recording; "" when not recorded
	cleanup func()
}

// runPass runs the program once under a Replayer for art; with record it
// records the replay to output (or to a temporary file). started, when
// not nil, is called when the replayer is built, before the program runs.
func runPass(ctx context.Context, art *artifact.Artifact, img *image.Image, opts SessionOptions,
	record bool, output string, stdout, stderr io.Writer, started func()) (*pass, error) {
	p := &pass{path: output, cleanup: func() {}}
	ro := opts.Options
	if record {
		if p.path == "" {
			tmp, err := os.MkdirTemp("", "hale-replay-")
			if err != nil {
				return nil, fmt.Errorf("cannot create a temporary folder: %w", err)
			}
			p.cleanup = func() { os.RemoveAll(tmp) }
			p.path = filepath.Join(tmp, "replayed.halerec")
		}
		header, err := replayHeader(art, img, opts.Info)
		if err != nil {
			p.cleanup()
			return nil, fmt.Errorf("cannot record the replay: %w", err)
		}
		rec, err := artifact.Create(p.path, header, artifact.Options{})
		if err != nil {
			p.cleanup()
			if output != "" {
				return nil, fmt.Errorf("%w: %w", ErrOutput, err)
			}
			return nil, fmt.Errorf("cannot record the replay: %w", err)
		}
		ro.Record = rec
	}
	p.r = NewReplayer(art, img, ro)
	if started != nil {
		started()
	}
	hopts := host.Options{Engine: opts.Engine, Stdout: stdout, Stderr: stderr}
	p.r.Install(&hopts)
	res, runErr := host.Run(ctx, img, hopts)
	p.res = res
	if rj := p.r.Recording(); rj != nil {
		if err := rj.Close(); err != nil && runErr == nil {
			p.cleanup()
			return nil, fmt.Errorf("cannot record the replay: %w", err)
		}
	}
	if runErr != nil {
		p.cleanup()
		if errors.Is(runErr, context.Canceled) {
			return nil, runErr
		}
		return nil, fmt.Errorf("replay failed: %w", runErr)
	}
	return p, nil
}

// recordedHandlerPosition is the source position of the handler that ran
// recorded delivery at; "" when the recording has no such delivery.
func recordedHandlerPosition(img *image.Image, art *artifact.Artifact, at artifact.Coordinate) string {
	ref, err := art.Resolve(artifact.Target{Consumer: at.Consumer, N: at.N})
	if err != nil {
		return ""
	}
	d, ok := art.Entry(ref.Entry).Body.(artifact.Delivery)
	if !ok {
		return ""
	}
	return handlerPosition(img, &d)
}

// handlerPosition names the source position of the handler a delivery
// runs, as "app.hl:31:9 in Ledger.on OrderPlaced"; "" when the program has
// no such instance or handler.
func handlerPosition(img *image.Image, d *artifact.Delivery) string {
	for _, inst := range img.Instances {
		if inst.Name != d.Target {
			continue
		}
		locus := img.Loci[inst.Locus]
		fn := -1
		if d.Start {
			fn = locus.Start
		} else {
			for t, topic := range img.Topics {
				if topic.Name == d.Topic {
					fn = locus.HandlerFor(t)
				}
			}
		}
		if fn < 0 || fn >= len(img.Funcs) {
			return ""
		}
		f := &img.Funcs[fn]
		return positionText(img, f.Decl) + " in " + f.Name
	}
	return ""
}

// positionText formats an image position as ast.Pos does: file:line:col,
// the file alone for a position without a line, line:col without a file.
func positionText(img *image.Image, p image.Pos) string {
	file := ""
	if int(p.File) < len(img.Files) && p.File >= 0 {
		file = img.Files[p.File]
	}
	switch {
	case p.Line == 0 && file != "":
		return file
	case file == "":
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d:%d", file, p.Line, p.Col)
}

// StartRecording starts recording a live run of img as settings say
// (artifact.FromEnv): it creates the recorder at settings.Path with a
// header from info and settings.EnvPolicy, and returns the journal to
// install as host.Options.Journal. Without a path it returns nil: the run
// has no recorder at all.
//
// Close the journal after the run; a failure there is a failed recording.
func StartRecording(settings artifact.Settings, img *image.Image, info HeaderInfo) (*RecordingJournal, error) {
	if settings.Path == "" {
		return nil, nil
	}
	info.EnvPolicy = settings.EnvPolicy
	header, err := NewHeader(img, info)
	if err != nil {
		return nil, err
	}
	rec, err := artifact.Create(settings.Path, header, artifact.Options{})
	if err != nil {
		return nil, err
	}
	return NewRecordingJournal(rec, img, settings.EnvPolicy), nil
}
