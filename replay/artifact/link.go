package artifact

import (
	"fmt"
	"io"
	"strings"

	"github.com/hale-lang/hale/internal/termsafe"
)

// Link follows messages across processes (`hale trace link`): each
// message a recording sent to a nats export (an output on ChannelNATS) is
// matched, by its Nats-Msg-Id, with the ingress entries of the other
// recordings that received it. With a queue group a message reaches one
// member, so give every member's recording to see where each went.

// LinkReport is the result of Link. The JSON keys are part of the CLI's
// contract.
type LinkReport struct {
	// Matched are the messages sent by one recording and received by
	// another, in the sender's file order (one row per receipt).
	Matched []LinkMatch `json:"matched"`
	// Unreceived are the messages sent that no other recording received.
	Unreceived []LinkEnd `json:"unreceived"`
	// Foreign are the messages received whose sender is none of the
	// recordings (another process, or a client without Hale).
	Foreign []LinkEnd `json:"foreign"`
}

// LinkMatch is one message sent by From and received by To.
type LinkMatch struct {
	MsgID   string `json:"msg_id"`
	Subject string `json:"subject"`
	From    string `json:"from"` // the sender's file
	Sent    int    `json:"sent_entry"`
	To      string `json:"to"` // the receiver's file
	// Received is the receiver's ingress entry; Message the identity P:S
	// the receiving binding published it under ("" if the recording
	// stops before that publish).
	Received int    `json:"received_entry"`
	Message  string `json:"message"`
	// SamePayload reports whether the bytes received are those sent.
	SamePayload bool `json:"same_payload"`
}

// LinkEnd is one side of a message without its other side: an entry of
// File.
type LinkEnd struct {
	MsgID   string `json:"msg_id"`
	Subject string `json:"subject"`
	File    string `json:"file"`
	Entry   int    `json:"entry"`
}

type linkSent struct {
	LinkEnd
	payload []byte
}

type linkReceipt struct {
	LinkEnd
	payload []byte
	message string
}

// Link matches the nats messages of the artifacts, named by names (their
// files), in both directions.
func Link(arts []*Artifact, names []string) *LinkReport {
	rep := &LinkReport{Matched: []LinkMatch{}, Unreceived: []LinkEnd{}, Foreign: []LinkEnd{}}
	var sent []linkSent
	received := map[string][]linkReceipt{}
	var order []linkReceipt
	for k, a := range arts {
		a = a.full()
		next := map[uint32]int{} // per consumer: the index of the last ingress entry
		for i, e := range a.Entries {
			switch x := e.Body.(type) {
			case Output:
				if x.Channel != ChannelNATS || x.Outcome != OK {
					continue
				}
				subject, id, payload, err := NATSArgs(x.Args)
				if err != nil {
					continue
				}
				sent = append(sent, linkSent{LinkEnd{id, subject, names[k], i}, payload})
			case Ingress:
				r := linkReceipt{LinkEnd: LinkEnd{x.MsgID, x.Subject, names[k], i}, payload: x.Payload}
				received[x.MsgID] = append(received[x.MsgID], r)
				order = append(order, r)
				next[e.Consumer] = len(order)
			case Publish:
				// The binding publishes what it received right after
				// its ingress entry.
				if n := next[e.Consumer]; n > 0 {
					r := &order[n-1]
					r.message = x.Message.String()
					rs := received[r.MsgID]
					for j := range rs {
						if rs[j].File == r.File && rs[j].Entry == r.Entry {
							rs[j].message = r.message
						}
					}
					next[e.Consumer] = 0
				}
			}
		}
	}
	ids := map[string]bool{}
	for _, s := range sent {
		ids[s.MsgID] = true
		rs := received[s.MsgID]
		matched := false
		for _, r := range rs {
			if r.File == s.File {
				continue
			}
			matched = true
			rep.Matched = append(rep.Matched, LinkMatch{MsgID: s.MsgID, Subject: r.Subject, From: s.File, Sent: s.Entry,
				To: r.File, Received: r.Entry, Message: r.message, SamePayload: string(r.payload) == string(s.payload)})
		}
		if !matched {
			rep.Unreceived = append(rep.Unreceived, s.LinkEnd)
		}
	}
	for _, r := range order {
		if !ids[r.MsgID] {
			rep.Foreign = append(rep.Foreign, r.LinkEnd)
		}
	}
	return rep
}

// WriteText writes the report for a person to read:
//
//	matched 2 messages
//	  producer.halerec #12 -> w1.halerec #3 (as 1:0)  jobs  0123456789abcdef:0:0
//	sent, never received: 1
//	  producer.halerec #40  jobs  0123456789abcdef:0:9
//	received from outside these recordings: 0
func (r *LinkReport) WriteText(w io.Writer) error {
	esc := termsafe.String
	var b strings.Builder
	fmt.Fprintf(&b, "matched %s\n", plural(uint64(len(r.Matched)), "message", "messages"))
	for _, m := range r.Matched {
		as := ""
		if m.Message != "" {
			as = " (as " + m.Message + ")"
		}
		diff := ""
		if !m.SamePayload {
			diff = "  PAYLOAD DIFFERS"
		}
		fmt.Fprintf(&b, "  %s #%d -> %s #%d%s  %s  %s%s\n", esc(m.From), m.Sent, esc(m.To), m.Received, as, esc(m.Subject), esc(m.MsgID), diff)
	}
	fmt.Fprintf(&b, "sent, never received: %d\n", len(r.Unreceived))
	for _, u := range r.Unreceived {
		fmt.Fprintf(&b, "  %s #%d  %s  %s\n", esc(u.File), u.Entry, esc(u.Subject), esc(u.MsgID))
	}
	fmt.Fprintf(&b, "received from outside these recordings: %d\n", len(r.Foreign))
	for _, u := range r.Foreign {
		fmt.Fprintf(&b, "  %s #%d  %s  %s\n", esc(u.File), u.Entry, esc(u.Subject), esc(u.MsgID))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
