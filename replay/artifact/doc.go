// Package artifact is the recording artifact's format, and nothing of the
// runtime: the writer the recorder uses while the program runs, the strict
// and lenient readers, the index, verification, coordinates, the
// comparison of two artifacts, and the inspection behind `hale trace
// summary|dump|verify`. It imports no other Hale package, so that any
// tool can read and write artifacts without the toolchain.
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
//		rec.Append(consumer, artifact.Invocation{Primitive: name, Args: args, Result: res})
//	}
//
// Append encodes the entry on the caller's goroutine and queues it; the
// Append that completes a batch writes it, one write at a time, unless
// a write is going on (a flush timer writes what waits below a batch).
// Each consumer may have at most Options.Buffer entries waiting; beyond
// that Append blocks until the writer catches up (entries are never
// dropped). Close writes the trailer,
// syncs the file and renames it into place; a failure anywhere leaves no
// file that looks complete.
//
// Reading. Decode is strict: any problem (magic, version, framing,
// counts, checksum, missing trailer) is a *FormatError naming the byte
// offset. Index is as strict but reads only each entry's head (Heads),
// decoding fields on demand; it is what replay admission uses. Salvage is
// lenient and is what trace summary and dump use: it returns every
// complete entry before the first problem, with Complete reporting
// whether the artifact was whole. Artifact.Verify checks the entries
// against each other.
//
// Replaying. AdmitIndexed is replay admission: the strict read, a refusal
// of recordings with async_io consumers, then the program's identity
// (build digest and shape hash) against the recorded one; every refusal
// is a *RefusalError with a RefusalKind. ParseCoordinate and
// Artifact.Resolve turn the C:N and N coordinates of `--at` into delivery
// entries. Differ.Diff compares a recording with the replay's own
// recording, consumer by consumer in both directions, and returns the
// Report that `hale replay` prints; diff.go explains how divergences are
// found, classified and ordered.
//
// Payloads, arguments and results are canonical value bytes to this
// package, decoded only through the optional ValueDecoder hook; the
// header's type table is read up to its value types (TypeTable), which
// package replay decodes.
package artifact
