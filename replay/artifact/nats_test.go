package artifact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// natsSample is a format 3 artifact of a process with a nats binding
// (consumer 1) and an export: one message received, one sent.
func natsSample() *Artifact {
	a := sample()
	a.Header.ProcessID = 0x0123456789abcdef
	a.Header.Consumers = []Consumer{{ID: 0, Kind: ConsumerMain, Name: "main", Instances: []string{"W"}}, {ID: 1, Kind: ConsumerIngress, Name: "nats:jobs:Job"}}
	a.Header.Bindings = []Binding{
		{Kind: BindingIngress, Topic: "Job", Subject: "jobs", Queue: "workers", Consumer: 1},
		{Kind: BindingEgress, Topic: "Done", Subject: "done"},
	}
	payload := []byte{8, 1, 1, 2} // any bytes: the artifact does not decode payloads
	args := []byte{3, 4, 4, 'd', 'o', 'n', 'e', 4, 6, 'a', 'b', ':', '0', ':', '0', 5, 1, 9}
	a.Entries = []Entry{
		{1, 0, Ingress{Subject: "jobs", MsgID: "fedcba9876543210:0:3", Payload: payload}},
		{1, 1, Publish{Topic: "Job", Message: MessageID{1, 0}, Payload: payload}},
		{0, 0, Delivery{Target: "W", Message: MessageID{1, 0}, Topic: "Job"}},
		{0, 1, Publish{Topic: "Done", Message: MessageID{0, 0}, Payload: []byte{8, 0}}},
		{0, 2, Output{Channel: ChannelNATS, Primitive: NATSPrimitive, Args: args, Outcome: OK, Result: []byte{0}}},
	}
	a.Trailer = Trailer{Verdict: VerdictCanceled, ExitCode: 130}
	return a
}

// TestNATSFormat3 round-trips the format 3 additions (process id,
// bindings, ingress entries) through Encode, Decode and Index, and shows
// them in trace summary and dump.
func TestNATSFormat3(t *testing.T) {
	data := mustEncode(t, natsSample())
	for name, decode := range map[string]func([]byte) (*Artifact, error){"Decode": Decode, "Index": Index} {
		got, err := decode(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Version != 3 || got.Header.ProcessID != 0x0123456789abcdef || len(got.Header.Bindings) != 2 || got.Header.Bindings[0].Queue != "workers" {
			t.Errorf("%s: header %+v", name, got.Header)
		}
		x, ok := got.Entry(0).Body.(Ingress)
		if !ok || x.Subject != "jobs" || x.MsgID != "fedcba9876543210:0:3" {
			t.Errorf("%s: entry 0 %+v", name, got.Entry(0).Body)
		}
		if again := mustEncode(t, got); !bytes.Equal(again, data) {
			t.Errorf("%s: re-encoding changed the bytes", name)
		}
		if err := got.Verify(); err != nil {
			t.Errorf("%s: verify: %v", name, err)
		}
	}
	a, err := Salvage(data)
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(a, nil)
	js, _ := json.Marshal(s)
	for _, want := range []string{`"process_id":"0123456789abcdef"`, `"ingress":1`,
		`"bindings":[{"kind":"bind","topic":"Job","subject":"jobs","queue":"workers","consumer":1,"messages":1},{"kind":"export","topic":"Done","subject":"done","messages":1}]`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("summary JSON lacks %s:\n%s", want, js)
		}
	}
	var text strings.Builder
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"process id      0123456789abcdef", "bindings     2", "  bind    Job    jobs     workers  1         1", "  export  Done   done     -        -         1"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("summary text lacks %q:\n%s", want, text.String())
		}
	}
	var dump strings.Builder
	if err := Dump(&dump, a, nil); err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(dump.String(), "\n", 2)[0]
	if want := `{"index":0,"consumer":1,"seq":0,"kind":"ingress","subject":"jobs","msg_id":"fedcba9876543210:0:3","topic":"Job","payload_hex":"08010102"}`; first != want {
		t.Errorf("dump line 0:\n%s\nwant\n%s", first, want)
	}
	if sub, id, p, err := NATSArgs(natsSample().Entries[4].Body.(Output).Args); err != nil || sub != "done" || id != "ab:0:0" || !bytes.Equal(p, []byte{9}) {
		t.Errorf("NATSArgs = %q %q %x %v", sub, id, p, err)
	}
}

// TestFormat2CannotHoldIngress: an ingress entry needs format 3.
func TestFormat2CannotHoldIngress(t *testing.T) {
	a := natsSample()
	a.Version = 2
	if _, err := Encode(a); err == nil || !strings.Contains(err.Error(), "cannot hold an ingress entry") {
		t.Errorf("format 2 with an ingress entry: %v", err)
	}
}

// TestLink matches one recording's nats outputs with another's ingress
// entries by Nats-Msg-Id, and lists what was sent but never received and
// what came from elsewhere.
func TestLink(t *testing.T) {
	args := func(subject, id string, payload ...byte) []byte {
		b := []byte{3, 4, byte(len(subject))}
		b = append(b, subject...)
		b = append(b, 4, byte(len(id)))
		b = append(b, id...)
		b = append(b, 5, byte(len(payload)))
		return append(b, payload...)
	}
	sender := natsSample()
	sender.Entries = []Entry{
		{0, 0, Output{Channel: ChannelNATS, Primitive: NATSPrimitive, Args: args("jobs", "aa:0:0", 1), Outcome: OK}},
		{0, 1, Output{Channel: ChannelNATS, Primitive: NATSPrimitive, Args: args("jobs", "aa:0:1", 2), Outcome: OK}},
		{0, 2, Output{Channel: ChannelStdout, Primitive: "print", Args: []byte{}, Outcome: OK, Result: []byte("x\n")}},
	}
	receiver := natsSample()
	receiver.Entries = []Entry{
		{1, 0, Ingress{Subject: "jobs", MsgID: "aa:0:1", Payload: []byte{2}}},
		{1, 1, Publish{Topic: "Job", Message: MessageID{1, 0}, Payload: []byte{2}}},
		{1, 2, Ingress{Subject: "jobs", MsgID: "zz:0:0", Payload: []byte{9}}},
	}
	rep := Link([]*Artifact{sender, receiver}, []string{"a.halerec", "b.halerec"})
	if len(rep.Matched) != 1 || rep.Matched[0] != (LinkMatch{MsgID: "aa:0:1", Subject: "jobs", From: "a.halerec", Sent: 1, To: "b.halerec", Received: 0, Message: "1:0", SamePayload: true}) {
		t.Errorf("matched %+v", rep.Matched)
	}
	if len(rep.Unreceived) != 1 || rep.Unreceived[0] != (LinkEnd{"aa:0:0", "jobs", "a.halerec", 0}) {
		t.Errorf("unreceived %+v", rep.Unreceived)
	}
	if len(rep.Foreign) != 1 || rep.Foreign[0] != (LinkEnd{"zz:0:0", "jobs", "b.halerec", 2}) {
		t.Errorf("foreign %+v", rep.Foreign)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := `matched 1 message
  a.halerec #1 -> b.halerec #0 (as 1:0)  jobs  aa:0:1
sent, never received: 1
  a.halerec #0  jobs  aa:0:0
received from outside these recordings: 1
  b.halerec #2  jobs  zz:0:0
`
	if text.String() != want {
		t.Errorf("text\n%s\nwant\n%s", text.String(), want)
	}
}
