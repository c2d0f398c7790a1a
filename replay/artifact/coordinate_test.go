package artifact

import (
	"strings"
	"testing"
)

var coordinateTests = []struct {
	in   string
	want Target
	err  string
}{
	{in: "2:41", want: Target{Consumer: 2, N: 41}},
	{in: "0:0", want: Target{}},
	{in: "0", want: Target{Bare: true}},
	{in: "57", want: Target{Bare: true, N: 57}},
	{in: "007", want: Target{Bare: true, N: 7}},
	{in: "4294967295:18446744073709551615", want: Target{Consumer: 1<<32 - 1, N: 1<<64 - 1}},
	{in: "18446744073709551615", want: Target{Bare: true, N: 1<<64 - 1}},
	{in: "", err: `bad coordinate "": want C:N or N`},
	{in: "x", err: `bad coordinate "x": want C:N or N`},
	{in: "2:", err: `bad coordinate "2:": want C:N or N`},
	{in: ":41", err: `bad coordinate ":41": want C:N or N`},
	{in: "1:2:3", err: `bad coordinate "1:2:3": want C:N or N`},
	{in: "-1", err: `bad coordinate "-1": want C:N or N`},
	{in: "+1", err: `bad coordinate "+1": want C:N or N`},
	{in: " 1", err: `bad coordinate " 1": want C:N or N`},
	{in: "1 :2", err: `bad coordinate "1 :2": want C:N or N`},
	{in: "1.5", err: `bad coordinate "1.5": want C:N or N`},
	{in: "0x10", err: `bad coordinate "0x10": want C:N or N`},
	{in: "١", err: `bad coordinate "١": want C:N or N`},
	{in: "4294967296:0", err: `bad coordinate "4294967296:0": consumer 4294967296 is too large`},
	{in: "1:18446744073709551616", err: `bad coordinate "1:18446744073709551616": delivery number 18446744073709551616 is too large`},
	{in: "18446744073709551616", err: `bad coordinate "18446744073709551616": delivery number 18446744073709551616 is too large`},
}

func TestParseCoordinate(t *testing.T) {
	for _, tt := range coordinateTests {
		got, err := ParseCoordinate(tt.in)
		switch {
		case tt.err != "":
			if err == nil || err.Error() != tt.err {
				t.Errorf("%q: error %v, want %s", tt.in, err, tt.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.in, err)
		case got != tt.want:
			t.Errorf("%q: got %+v, want %+v", tt.in, got, tt.want)
		}
	}
	if s := (Target{Consumer: 2, N: 41}).String(); s != "2:41" {
		t.Error(s)
	}
	if s := (Target{Bare: true, N: 57}).String(); s != "57" {
		t.Error(s)
	}
}

func TestResolve(t *testing.T) {
	// sample's deliveries: 0 is 0:0 (entry 0), 1 is 1:0 (entry 5), 2 is 2:0 (entry 8).
	a := sample()
	tests := []struct {
		in    string
		entry int
		at    string
		err   string
	}{
		{in: "0", entry: 0, at: "0:0"},
		{in: "1", entry: 5, at: "1:0"},
		{in: "2", entry: 8, at: "2:0"},
		{in: "1:0", entry: 5, at: "1:0"},
		{in: "2:0", entry: 8, at: "2:0"},
		{in: "3", err: "coordinate 3 is past the end: the recording has 3 deliveries"},
		{in: "2:1", err: "coordinate 2:1 is past the end: consumer 2 handled 1 delivery"},
		{in: "3:0", err: "coordinate 3:0 is past the end: consumer 3 handled 0 deliveries"},
		{in: "9:0", err: "coordinate 9:0 names no consumer: the recording has no consumer 9"},
	}
	for _, tt := range tests {
		tg, err := ParseCoordinate(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := a.Resolve(tg)
		switch {
		case tt.err != "":
			if err == nil || err.Error() != tt.err {
				t.Errorf("%s: error %v, want %s", tt.in, err, tt.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.in, err)
		case ref.Entry != tt.entry || ref.At.String() != tt.at:
			t.Errorf("%s: got entry %d at %s, want entry %d at %s", tt.in, ref.Entry, ref.At, tt.entry, tt.at)
		}
	}

	// The example of the brief: consumer 2 handled 12 deliveries.
	var steps []step
	for k := range 12 {
		steps = append(steps, step{2, deliver("Ledger", 3, uint64(k), "Line")})
	}
	b := build(steps)
	if _, err := b.Resolve(Target{Consumer: 2, N: 41}); err == nil ||
		err.Error() != "coordinate 2:41 is past the end: consumer 2 handled 12 deliveries" {
		t.Errorf("got %v", err)
	}
	if ref, err := b.Resolve(Target{Consumer: 2, N: 11}); err != nil || ref.Entry != 11 {
		t.Errorf("2:11: %v %v", ref, err)
	}
	var nilArtifact *Artifact
	if _, err := nilArtifact.Resolve(Target{}); err == nil {
		t.Error("resolved in a nil artifact")
	}
}

// FuzzParseCoordinate: no input panics; an accepted one prints back to
// a coordinate that parses to the same target, and resolving it in an
// artifact either finds a delivery with that coordinate or says why not.
func FuzzParseCoordinate(f *testing.F) {
	for _, tt := range coordinateTests {
		f.Add(tt.in)
	}
	a := sample()
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseCoordinate(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "bad coordinate ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		again, err := ParseCoordinate(tg.String())
		if err != nil || again != tg {
			t.Fatalf("%q parsed to %+v, which prints as %q and parses to %+v (%v)", s, tg, tg.String(), again, err)
		}
		ref, err := a.Resolve(tg)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "coordinate "+tg.String()+" ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		if _, ok := a.Entries[ref.Entry].Body.(Delivery); !ok {
			t.Fatalf("%s resolved to entry %d, not a delivery", s, ref.Entry)
		}
		if !tg.Bare && (ref.At.Consumer != tg.Consumer || ref.At.N != tg.N) {
			t.Fatalf("%s resolved to %s", s, ref.At)
		}
	})
}
