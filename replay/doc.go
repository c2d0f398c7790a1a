// Package replay owns the recording artifact of a Hale run: its binary
// format, the recorder that writes it while the program runs, the
// inspection behind `hale trace summary|dump|verify`, and the admission
// and comparison behind `hale replay`.
//
// An artifact is a header (program identity and the consumer table), a
// sequence of entries (the run's replayable decisions, each stamped with
// its consumer and that consumer's sequence number) and a trailer (exact
// counts, the verdict and a BLAKE3 checksum). docs/artifact.md describes
// the byte layout precisely enough to write an independent reader.
//
// Writing. The runtime holds a *Recorder, nil when LOTUS_OBS_RECORD is
// unset, so each instrumentation site is one branch:
//
//	if rec != nil {
//		rec.Append(consumer, replay.Invocation{Primitive: name, Args: args, Result: res})
//	}
//
// Append encodes the entry on the caller's goroutine, then queues it for
// the recorder's single writer goroutine. Each consumer may have at most
// Options.Buffer entries waiting; beyond that Append blocks until the
// writer catches up (entries are never dropped). Close writes the trailer,
// syncs the file and renames it into place; a failure anywhere leaves no
// file that looks complete.
//
// Reading. Decode is strict and is what replay admission uses: any
// problem (magic, version, framing, counts, checksum, missing trailer) is
// a *FormatError naming the byte offset. Salvage is lenient and is what
// trace summary and dump use: it returns every complete entry before the
// first problem, with Complete reporting whether the artifact was whole.
// Artifact.Verify checks the entries against each other.
//
// Replaying. Admit is replay admission: a strict Decode, a refusal of
// recordings with async_io consumers, then the program's identity (build
// digest and shape hash) against the recorded one; every refusal is a
// *RefusalError with a RefusalKind. ParseCoordinate and Artifact.Resolve
// turn the C:N and N coordinates of `--at` into delivery entries. Diff
// compares a recording with the replay's own recording, consumer by
// consumer in both directions, and returns the Report that `hale replay`
// prints; diff.go explains how divergences are found, classified and
// ordered.
//
// Running. RecordingJournal plugs into the runtime's journal seam
// (vm/host.Journal) and turns every event of a live run into entries;
// Replayer is the runtime's Journal, Order and Input during a replay: it
// serves recorded results, holds early deliveries and injects recorded
// stdin (replayer.go explains how). These two files and header.go are the
// only ones that know the program (its SIR, the standard library's
// primitive table and the value encoding); the format, the recorder, the
// trace inspection, admission and Diff treat payloads, arguments and
// results as canonical value bytes, decoded only through the optional
// ValueDecoder hook.
package replay
