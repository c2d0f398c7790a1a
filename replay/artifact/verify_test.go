package artifact

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

func TestVerify(t *testing.T) {
	if err := sample().Verify(); err != nil {
		t.Fatalf("sample: %v", err)
	}
	if err := Verify(mustEncode(t, sample())); err != nil {
		t.Fatalf("sample bytes: %v", err)
	}

	// Two exit calls: the first decides the code, the later one is
	// recorded too.
	twice := sample()
	for i, e := range twice.Entries {
		if x, ok := e.Body.(Exit); ok {
			later := x
			later.Code = x.Code + 1
			twice.Entries = slices.Insert(twice.Entries, i+1, Entry{Consumer: e.Consumer, Seq: e.Seq + 1, Body: later})
			for j := i + 2; j < len(twice.Entries); j++ {
				if twice.Entries[j].Consumer == e.Consumer {
					twice.Entries[j].Seq++
				}
			}
			twice.Trailer.Entries++
			for k := range twice.Trailer.Counts {
				if twice.Trailer.Counts[k].Consumer == e.Consumer {
					twice.Trailer.Counts[k].Entries++
				}
			}
			break
		}
	}
	if err := twice.Verify(); err != nil {
		t.Errorf("two exits: %v", err)
	}

	tests := []struct {
		name  string
		edit  func(a *Artifact)
		entry int
		msg   string
	}{
		{"trap without a kind", func(a *Artifact) {
			x := a.Entries[11].Body.(Trap)
			x.TrapKind = ""
			a.Entries[11].Body = x
		}, 11, "trap entry without a trap kind (format version 3)"},
		{"unknown env policy", func(a *Artifact) { a.Header.EnvPolicy = "partial" },
			-1, `header: env policy "partial" is neither "withheld" nor "full"`},
		{"consumer not in table", func(a *Artifact) { a.Entries[5].Consumer = 9 },
			5, "consumer 9 is not in the consumer table"},
		{"seq not from 0", func(a *Artifact) { a.Entries[4].Seq = 1 },
			4, "consumer 3 has seq 1 where 0 was expected"},
		{"seq gap", func(a *Artifact) { a.Entries[12].Seq = 5 },
			12, "consumer 0 has seq 5 where 4 was expected"},
		{"publish by someone else", func(a *Artifact) { setBody(a, 3, Publish{Topic: "Job", Message: MessageID{1, 0}}) },
			3, "publish by consumer 0 has message identity 1:0 where 0:0 was expected"},
		{"publish count skips", func(a *Artifact) { setBody(a, 3, Publish{Topic: "Job", Message: MessageID{0, 1}}) },
			3, "publish by consumer 0 has message identity 0:1 where 0:0 was expected"},
		{"delivery before publish", func(a *Artifact) { a.Entries[3], a.Entries[5] = a.Entries[5], a.Entries[3] },
			3, "delivery of message 0:0, which was not published before it"},
		{"delivery of unknown message", func(a *Artifact) {
			setBody(a, 5, Delivery{Target: "Worker#0", Message: MessageID{0, 7}, Topic: "Job"})
		}, 5, "delivery of message 0:7, which was not published before it"},
		{"delivery on another topic", func(a *Artifact) {
			setBody(a, 5, Delivery{Target: "Worker#0", Message: MessageID{0, 0}, Topic: "Line"})
		}, 5, "delivery of message 0:0 on topic Line, which was published on topic Job"},
		{"delivery to a foreign instance", func(a *Artifact) {
			setBody(a, 5, Delivery{Target: "Ledger", Message: MessageID{0, 0}, Topic: "Job"})
		}, 5, "delivery to Ledger, which consumer 1 (pool workers) does not run"},
		{"trap at a future delivery", func(a *Artifact) {
			setBody(a, 11, Trap{Message: "boom", At: &Coordinate{2, 1}})
		}, 11, "coordinate 2:1 names a delivery not yet in the file"},
		{"exit code differs", func(a *Artifact) { a.Trailer.ExitCode = 4 },
			-1, "trailer: exit code 4 but no exit entry has that code (the first has 3)"},
		{"exit verdict without exit", func(a *Artifact) { a.Entries = a.Entries[:12] },
			-1, "trailer: verdict exit but the artifact has no exit entry"},
		{"trap verdict without trap", func(a *Artifact) {
			a.Trailer.Verdict = VerdictTrap
			a.Entries[11].Body = Unknown{Code: 99}
		}, -1, "trailer: verdict trap but the artifact has no trap entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := sample()
			tt.edit(a)
			// Go through the bytes, as trace verify does.
			err := Verify(mustEncode(t, a))
			var inc *Inconsistency
			if !errors.As(err, &inc) {
				t.Fatalf("error %v is not an *Inconsistency", err)
			}
			if inc.Entry != tt.entry || inc.Msg != tt.msg {
				t.Errorf("got entry %d %q\nwant entry %d %q", inc.Entry, inc.Msg, tt.entry, tt.msg)
			}
		})
	}
}

func TestVerifyIngress(t *testing.T) {
	// A message from an ingress consumer may be delivered without a
	// publish entry; one from any other consumer may not.
	a := sample()
	a.Entries[4].Body = Unknown{Code: 99} // drop the ingress publish 3:0
	if err := a.Verify(); err != nil {
		t.Errorf("ingress message: %v", err)
	}
	a.Header.Consumers[3].Kind = ConsumerPinned
	if err := a.Verify(); err == nil {
		t.Error("a message from a pinned consumer was delivered without a publish")
	}
}

func TestVerifyReportsFormatErrors(t *testing.T) {
	data := mustEncode(t, sample())
	if err := Verify(data[:len(data)-1]); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated: %v", err)
	}
}

func setBody(a *Artifact, i int, b Body) { a.Entries[i].Body = b }

func TestInconsistencyError(t *testing.T) {
	if got := (&Inconsistency{Entry: 7, Msg: "x"}).Error(); got != "entry 7: x" {
		t.Error(got)
	}
	if got := (&Inconsistency{Entry: -1, Msg: "trailer: x"}).Error(); got != "trailer: x" {
		t.Error(got)
	}
}

func TestDeliveries(t *testing.T) {
	a := sample()
	// A second delivery on consumer 1 is its number 1 and the fourth overall.
	a.Entries = append(a.Entries, Entry{1, 3, Delivery{Target: "Worker#1", Message: MessageID{0, 0}, Topic: "Job"}})
	got := a.Deliveries()
	want := []DeliveryRef{{0, Coordinate{0, 0}}, {5, Coordinate{1, 0}}, {8, Coordinate{2, 0}}, {13, Coordinate{1, 1}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
