package artifact

import (
	"bytes"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// sampleIdentity is the identity recorded in sample().
func sampleIdentity() Identity {
	h := sample().Header
	return Identity{BuildDigest: h.BuildDigest, ShapeHash: h.ShapeHash}
}

func TestAdmit(t *testing.T) {
	data := mustEncode(t, sample())
	a, ad, err := admit(data, sampleIdentity(), false)
	if err != nil {
		t.Fatal(err)
	}
	if a.Len() != len(sample().Entries) || ad.Unverified() || ad.Warning != "" {
		t.Errorf("admitted %d entries, admission %+v", a.Len(), ad)
	}
	// The admitted artifact keeps an index, not the entries; each entry
	// read through it is the one Decode decodes.
	if a.Entries != nil {
		t.Errorf("Admit kept %d decoded entries", len(a.Entries))
	}
	full, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range full.Entries {
		if got := a.Entry(i); !reflect.DeepEqual(got, want) {
			t.Errorf("entry %d read from the index is %#v, decoded %#v", i, got, want)
		}
	}
	// The header's creation time and env policy play no part.
	s := sample()
	s.Header.Created++
	s.Header.EnvPolicy = EnvFull
	if _, _, err := admit(mustEncode(t, s), sampleIdentity(), false); err != nil {
		t.Error(err)
	}
}

func TestAdmitDamage(t *testing.T) {
	valid := mustEncode(t, sample())
	h := sample().Header
	head := prefix(&h)
	// A publish body: consumer 0, seq 0, topic "T", message 0:0, payload "x".
	pub := []byte{0, 0, 1, 'T', 0, 0, 1, 'x', 0} // with its delay, 0
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	flipped := bytes.Clone(valid)
	flipped[bytes.LastIndex(valid, []byte("app.hl:9:5"))+3] ^= 0x40

	tests := []struct {
		name string
		data []byte
		kind RefusalKind
		err  error
		msg  string // regexp
	}{
		{"bad magic", cat([]byte("HALEREX\x00"), valid[8:]), RefusedBadMagic, ErrNotArtifact,
			`^refused: not a Hale artifact \(bad magic\)$`},
		{"newer version", cat([]byte(Magic), []byte{4}, valid[9:]), RefusedVersion, ErrVersion,
			`^refused: artifact format version 4 is newer than this hale supports \(3\)$`},
		{"flipped byte", flipped, RefusedChecksum, ErrChecksum, `^refused: checksum mismatch at offset \d+: `},
		{"truncated", valid[:len(valid)-40], RefusedTruncated, ErrTruncated, `^refused: truncated artifact: missing trailer; `},
		{"no trailer", cat(head, frame(2, pub)), RefusedTruncated, ErrTruncated, `^refused: truncated artifact: missing trailer; `},
		{"count mismatch", seal(cat(head, frame(2, pub)), 2, []ConsumerCount{{0, 1}}, VerdictQuiescent, 0), RefusedCount, ErrCount,
			`^refused: entry count mismatch: the trailer says 2 entries, the artifact has 1$`},
		{"bad framing", cat(valid, []byte{0}), RefusedFraming, ErrFraming, `^refused: bad framing at offset \d+: 1 bytes follow the trailer$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ad, err := admit(tt.data, sampleIdentity(), true)
			if a != nil || ad != nil {
				t.Error("admitted")
			}
			var re *RefusalError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a *RefusalError", err)
			}
			if re.Kind != tt.kind {
				t.Errorf("kind %s, want %s", re.Kind, tt.kind)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("error %v is not %v", err, tt.err)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Error("the format error is not reachable")
			}
			if !regexp.MustCompile(tt.msg).MatchString(err.Error()) {
				t.Errorf("message %q does not match %q", err, tt.msg)
			}
		})
	}
}

func TestAdmitIdentity(t *testing.T) {
	data := mustEncode(t, sample())
	// The sample's digest is 00 01 02 …, its shape hash ff fe fd ….
	otherBuild, otherShape := sampleIdentity(), sampleIdentity()
	otherBuild.BuildDigest[0] = 0x91
	otherShape.ShapeHash[0] = 0x3f
	both := Identity{BuildDigest: otherBuild.BuildDigest, ShapeHash: otherShape.ShapeHash}
	// Digests that share a long prefix are shown up to where they differ.
	late := sampleIdentity()
	late.ShapeHash[5] = 0

	tests := []struct {
		name    string
		want    Identity
		refusal string
		warning string
	}{
		{"build digest", otherBuild,
			"refused: the program's build digest differs from the recording's (recorded 0001…, now 9101…); " +
				"its source or the hale toolchain changed since it was recorded. Replay it anyway with --unverified",
			"warning: --unverified: build digest differs (recorded 0001…, now 9101…); replaying anyway as an experiment"},
		{"shape hash", otherShape,
			"refused: the program's shape hash differs from the recording's (recorded fffe…, now 3ffe…); " +
				"the program's structure changed since it was recorded. Replay it anyway with --unverified",
			"warning: --unverified: shape hash differs (recorded fffe…, now 3ffe…); replaying anyway as an experiment"},
		{"both", both,
			"refused: the program's build digest and shape hash differ from the recording's " +
				"(build digest recorded 0001…, now 9101…; shape hash recorded fffe…, now 3ffe…); " +
				"the program's structure changed since it was recorded. Replay it anyway with --unverified",
			"warning: --unverified: build digest differs (recorded 0001…, now 9101…) and shape hash differs " +
				"(recorded fffe…, now 3ffe…); replaying anyway as an experiment"},
		{"long common prefix", late,
			"refused: the program's shape hash differs from the recording's (recorded fffefdfcfbf…, now fffefdfcfb0…); " +
				"the program's structure changed since it was recorded. Replay it anyway with --unverified",
			"warning: --unverified: shape hash differs (recorded fffefdfcfbf…, now fffefdfcfb0…); replaying anyway as an experiment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ad, err := admit(data, tt.want, false)
			if a != nil || ad != nil {
				t.Error("admitted without --unverified")
			}
			var re *RefusalError
			if !errors.As(err, &re) || re.Kind != RefusedIdentity || !errors.Is(err, ErrIdentity) {
				t.Fatalf("error %v", err)
			}
			if err.Error() != tt.refusal {
				t.Errorf("refusal:\n got %s\nwant %s", err, tt.refusal)
			}

			a, ad, err = admit(data, tt.want, true)
			if err != nil || a == nil {
				t.Fatalf("--unverified: %v", err)
			}
			if !ad.Unverified() || ad.Warning != tt.warning {
				t.Errorf("warning:\n got %s\nwant %s", ad.Warning, tt.warning)
			}
			if ad.BuildDigestDiffers != (tt.want.BuildDigest != sampleIdentity().BuildDigest) ||
				ad.ShapeHashDiffers != (tt.want.ShapeHash != sampleIdentity().ShapeHash) {
				t.Errorf("admission %+v", ad)
			}
		})
	}
}

func TestAdmitAsyncIO(t *testing.T) {
	s := sample()
	s.Header.Consumers = append(s.Header.Consumers,
		Consumer{ID: 4, Kind: ConsumerAsyncIO, Name: "io", Instances: []string{"fetcher", "poller"}})
	// Refused even with --unverified and a matching identity.
	for _, unverified := range []bool{false, true} {
		a, _, err := admit(mustEncode(t, s), sampleIdentity(), unverified)
		var re *RefusalError
		if a != nil || !errors.As(err, &re) || re.Kind != RefusedAsyncIO || !errors.Is(err, ErrAsyncIO) {
			t.Fatalf("got %v", err)
		}
		want := "refused: the recording has async_io instances (fetcher, poller), whose delivery order is not recorded"
		if err.Error() != want {
			t.Errorf("got  %s\nwant %s", err, want)
		}
	}
}

func TestRefusedReport(t *testing.T) {
	other := sampleIdentity()
	other.ShapeHash[0] = 0x3f
	_, _, err := admit(mustEncode(t, sample()), other, false)
	r := RefusedReport(err)
	if r.Diverged() || r.Verdict != ReportRefused {
		t.Fatalf("%+v", r)
	}
	reason := "the program's shape hash differs from the recording's (recorded fffe…, now 3ffe…); " +
		"the program's structure changed since it was recorded. Replay it anyway with --unverified"
	var text, js bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if want := "replay REFUSED: " + reason + "\n"; text.String() != want {
		t.Errorf("text:\n got %s\nwant %s", text.String(), want)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	want := `{"verdict":"refused","consumers":0,"deliveries":0,"journal_calls":0,"journal_misses":0,"order_timeouts":0,` +
		`"unconsumed":0,"unexpected":0,"first_divergence":null,"reason":"` + reason + `"}` + "\n"
	if js.String() != want {
		t.Errorf("json:\n got %s\nwant %s", js.String(), want)
	}
	if r := RefusedReport(errors.New("open run.halerec: no such file")); r.Reason != "open run.halerec: no such file" {
		t.Errorf("reason %q", r.Reason)
	}
}

// An env policy this hale does not know is refused: serving env values
// depends on what the policy withheld.
func TestAdmitUnknownEnvPolicy(t *testing.T) {
	s := sample()
	s.Header.EnvPolicy = "withhelx"
	data, err := Encode(s)
	if err != nil {
		t.Skipf("the encoder refuses the policy itself: %v", err)
	}
	_, _, err = admit(data, sampleIdentity(), false)
	var re *RefusalError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, `env policy "withhelx"`) {
		t.Errorf("got %v, want a refusal naming the policy", err)
	}
}
