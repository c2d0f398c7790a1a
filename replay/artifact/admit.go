package artifact

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Identity is what a program is checked against its recording by: its
// build-input digest and its shape hash, both as the program is compiled
// now.
type Identity struct {
	BuildDigest [32]byte
	ShapeHash   [32]byte
}

// Admission says how an artifact was admitted.
type Admission struct {
	BuildDigestDiffers bool // the build digest differs and --unverified admitted it
	ShapeHashDiffers   bool // the shape hash differs and --unverified admitted it
	// Warning is the line the CLI prints on stderr when an identity
	// mismatch was admitted; "" when the identity matched.
	Warning string
}

// Unverified reports whether the artifact was admitted despite an
// identity mismatch.
func (ad *Admission) Unverified() bool { return ad.BuildDigestDiffers || ad.ShapeHashDiffers }

// RefusalKind names the admission check an artifact failed.
type RefusalKind string

// Refusal kinds. The format kinds correspond one to one to the decoder's
// sentinel errors.
const (
	RefusedBadMagic  RefusalKind = "bad_magic" // ErrNotArtifact
	RefusedVersion   RefusalKind = "version"   // ErrVersion
	RefusedFraming   RefusalKind = "framing"   // ErrFraming
	RefusedCount     RefusalKind = "count"     // ErrCount
	RefusedChecksum  RefusalKind = "checksum"  // ErrChecksum
	RefusedTruncated RefusalKind = "truncated" // ErrTruncated
	RefusedIdentity  RefusalKind = "identity"  // ErrIdentity
	RefusedAsyncIO   RefusalKind = "async_io"  // ErrAsyncIO
	// RefusedInconsistent: well-formed, but its entries disagree with each
	// other or with the header, as `hale trace verify` checks (Verify).
	RefusedInconsistent RefusalKind = "inconsistent" // *Inconsistency
)

// Admission problems that are not format problems.
var (
	ErrIdentity = errors.New("program identity differs from the recording's")
	ErrAsyncIO  = errors.New("recording has async_io consumers")
)

// RefusalError is why admission (AdmitIndexed) refused an artifact. The CLI maps every
// RefusalError to exit code 2. errors.Is sees through it to the sentinel
// (ErrChecksum, ErrIdentity, ...) and errors.As to a *FormatError.
type RefusalError struct {
	Kind   RefusalKind
	Reason string // the message without the leading "refused: "
	Err    error  // a *FormatError, an *Inconsistency, ErrIdentity or ErrAsyncIO
}

func (e *RefusalError) Error() string { return "refused: " + e.Reason }

// Unwrap returns the underlying problem.
func (e *RefusalError) Unwrap() error { return e.Err }

// formatKinds maps the decoder's sentinels to refusal kinds.
var formatKinds = []struct {
	err  error
	kind RefusalKind
}{
	{ErrNotArtifact, RefusedBadMagic},
	{ErrVersion, RefusedVersion},
	{ErrFraming, RefusedFraming},
	{ErrCount, RefusedCount},
	{ErrChecksum, RefusedChecksum},
	{ErrTruncated, RefusedTruncated},
}

// admit is replay admission, before any application code runs. It
// decodes data strictly (so the bytes that are checked are the bytes that
// will be served: the artifact reads its entries from data, which must
// not change afterwards, and keeps only their index), checks that its
// entries are consistent as Artifact.Verify does, refuses a
// recording with async_io consumers, whose delivery order is not
// recorded, then compares the recorded program
// identity with want. A mismatch is refused unless unverified is set; it
// is then admitted, with a warning for stderr in Admission.Warning.
// Every refusal is a *RefusalError.
//
// The header's creation time plays no part in admission; its env policy
// must be one this hale knows.
func admit(data []byte, want Identity, unverified bool) (*Artifact, *Admission, error) {
	a, err := Index(data)
	return AdmitIndexed(a, err, want, unverified)
}

// AdmitIndexed is replay admission (see admit) for an artifact already
// read by Index, a and err being what Index returned: reading the
// artifact can then overlap compiling the program whose identity it is
// checked against. Every refusal is a *RefusalError; a mismatched
// identity admitted with unverified comes with a warning in
// Admission.Warning.
func AdmitIndexed(a *Artifact, err error, want Identity, unverified bool) (*Artifact, *Admission, error) {
	if a == nil && err == nil {
		err = &FormatError{Err: ErrNotArtifact, Entry: -1, Msg: "no artifact was read"}
	}
	if err != nil {
		kind := RefusedFraming
		for _, fk := range formatKinds {
			if errors.Is(err, fk.err) {
				kind = fk.kind
				break
			}
		}
		return nil, nil, &RefusalError{Kind: kind, Reason: err.Error(), Err: err}
	}

	if p := a.Header.EnvPolicy; p != EnvWithheld && p != EnvFull {
		// Serving env values depends on what the policy withheld.
		return nil, nil, &RefusalError{Kind: RefusedFraming, Err: ErrFraming,
			Reason: fmt.Sprintf("the header's env policy %q is neither %q nor %q", p, EnvWithheld, EnvFull)}
	}

	if err := a.Verify(); err != nil {
		// A forged artifact with a fixed-up checksum passes the format
		// checks; what the replayer assumes of the entries is checked
		// here, with the message `hale trace verify` gives.
		return nil, nil, &RefusalError{Kind: RefusedInconsistent, Reason: "inconsistent: " + err.Error(), Err: err}
	}

	var async []string
	for _, c := range a.Header.Consumers {
		if c.Kind == ConsumerAsyncIO {
			async = append(async, c.Instances...)
			if len(c.Instances) == 0 {
				async = append(async, c.Name)
			}
		}
	}
	if len(async) > 0 {
		return nil, nil, &RefusalError{Kind: RefusedAsyncIO, Err: ErrAsyncIO,
			Reason: fmt.Sprintf("the recording has async_io instances (%s), whose delivery order is not recorded",
				strings.Join(async, ", "))}
	}

	ad := &Admission{
		BuildDigestDiffers: a.Header.BuildDigest != want.BuildDigest,
		ShapeHashDiffers:   a.Header.ShapeHash != want.ShapeHash,
	}
	if !ad.Unverified() {
		return a, ad, nil
	}
	build := differs(a.Header.BuildDigest, want.BuildDigest)
	shape := differs(a.Header.ShapeHash, want.ShapeHash)
	if unverified {
		var parts []string
		if ad.BuildDigestDiffers {
			parts = append(parts, "build digest differs ("+build+")")
		}
		if ad.ShapeHashDiffers {
			parts = append(parts, "shape hash differs ("+shape+")")
		}
		ad.Warning = "warning: --unverified: " + strings.Join(parts, " and ") + "; replaying anyway as an experiment"
		return a, ad, nil
	}
	var reason string
	switch {
	case ad.BuildDigestDiffers && ad.ShapeHashDiffers:
		reason = "the program's build digest and shape hash differ from the recording's (build digest " + build +
			"; shape hash " + shape + "); the program's structure changed since it was recorded"
	case ad.ShapeHashDiffers:
		reason = "the program's shape hash differs from the recording's (" + shape +
			"); the program's structure changed since it was recorded"
	default:
		reason = "the program's build digest differs from the recording's (" + build +
			"); its source or the hale toolchain changed since it was recorded"
	}
	return nil, nil, &RefusalError{Kind: RefusedIdentity, Err: ErrIdentity,
		Reason: reason + UnverifiedAdvice}
}

// UnverifiedAdvice ends the reason of a refusal of kind RefusedIdentity:
// the command line's way round it. A client that is not the command line
// (a debug adapter) strips it and gives its own.
const UnverifiedAdvice = ". Replay it anyway with --unverified"

// differs shows a recorded and a current digest: "recorded 3f2a…, now 91bc…".
func differs(recorded, now [32]byte) string {
	r, n := abbreviate(recorded, now)
	return "recorded " + r + ", now " + n
}

// abbreviate shows two different digests as short hex prefixes, 4 digits
// unless they share a longer prefix: the two abbreviations always differ.
func abbreviate(recorded, now [32]byte) (string, string) {
	r, n := hex.EncodeToString(recorded[:]), hex.EncodeToString(now[:])
	k := 4
	for k < len(r) && r[:k] == n[:k] {
		k++
	}
	cut := func(s string) string {
		if k >= len(s) {
			return s
		}
		return s[:k] + "…"
	}
	return cut(r), cut(n)
}
