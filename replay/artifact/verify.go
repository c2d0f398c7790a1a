package artifact

import "fmt"

// Inconsistency is a problem Verify found in a well-formed artifact.
type Inconsistency struct {
	Entry int // index of the offending entry, or -1 for the header or trailer
	Msg   string
}

func (e *Inconsistency) Error() string {
	if e.Entry < 0 {
		return e.Msg
	}
	return fmt.Sprintf("entry %d: %s", e.Entry, e.Msg)
}

// Verify decodes data strictly, then checks the artifact's consistency
// with Artifact.Verify. It returns nil or the first problem.
func Verify(data []byte) error {
	a, err := Decode(data)
	if err != nil {
		return err
	}
	return a.Verify()
}

// Verify checks that the artifact's entries agree with each other and
// with the header. It returns nil or the first problem, as an
// *Inconsistency naming the entry:
//
//   - the header's env policy and consumer kinds are known, and no
//     consumer id or instance name is listed twice;
//   - every entry's consumer is in the consumer table;
//   - each consumer's seqs start at 0 and increase by 1;
//   - a publish's identity is P:S with P its own consumer and S the
//     number of that consumer's earlier publishes (so identities are unique);
//   - a delivery targets an instance its consumer runs, and its message
//     is a start or was published earlier in the file on the same topic,
//     unless its producer is an ingress consumer;
//   - a trap's or exit's coordinate names a delivery already in the file;
//   - the trailer's verdict "exit" comes with an exit entry of the same
//     code, and the verdict "trap" with a trap entry.
//
// A delivery's target must subscribe to its topic when the header's type
// table (written by the recorder) lists the subscriptions; an artifact
// without one is not checked for that.
// The trailer's counts are checked by Decode, which Artifact.Verify
// assumes has accepted a.
func (a *Artifact) Verify() error {
	a = a.full()
	bad := func(i int, format string, args ...any) error {
		return &Inconsistency{Entry: i, Msg: fmt.Sprintf(format, args...)}
	}
	if err := a.Header.check(); err != nil {
		return bad(-1, "header: %v", err)
	}
	// The header's type table, when it can be read, says which instance
	// subscribes to which topic.
	program, _ := DecodeTypeTable(a.Header.Types)
	consumers := map[uint32]Consumer{}
	runs := map[uint32]map[string]bool{}
	for _, c := range a.Header.Consumers {
		consumers[c.ID] = c
		runs[c.ID] = map[string]bool{}
		for _, in := range c.Instances {
			runs[c.ID][in] = true
		}
	}

	next := map[uint32]uint64{}         // expected seq per consumer
	published := map[MessageID]string{} // identity → topic
	publishes := map[uint32]uint64{}    // publishes per producer
	deliveries := map[uint32]uint64{}   // deliveries per consumer
	var exit *Exit
	traps := 0

	checkAt := func(i int, at *Coordinate) error {
		if at != nil && at.N >= deliveries[at.Consumer] {
			return bad(i, "coordinate %s names a delivery not yet in the file", at)
		}
		return nil
	}

	for i, e := range a.Entries {
		c, ok := consumers[e.Consumer]
		if !ok {
			return bad(i, "consumer %d is not in the consumer table", e.Consumer)
		}
		if e.Seq != next[e.Consumer] {
			return bad(i, "consumer %d has seq %d where %d was expected", e.Consumer, e.Seq, next[e.Consumer])
		}
		next[e.Consumer]++

		switch x := e.Body.(type) {
		case Publish:
			want := MessageID{Producer: e.Consumer, Seq: publishes[e.Consumer]}
			if x.Message != want {
				return bad(i, "publish by consumer %d has message identity %s where %s was expected", e.Consumer, x.Message, want)
			}
			publishes[e.Consumer]++
			published[x.Message] = x.Topic
		case Delivery:
			if !runs[e.Consumer][x.Target] {
				return bad(i, "delivery to %s, which consumer %d (%s %s) does not run", x.Target, e.Consumer, c.Kind, c.Name)
			}
			if !x.Start {
				if yes, known := program.Subscribed(x.Target, x.Topic); known && !yes {
					return bad(i, "delivery of topic %s to %s, which does not subscribe to it", x.Topic, x.Target)
				}
				topic, ok := published[x.Message]
				switch {
				case ok && topic != x.Topic:
					return bad(i, "delivery of message %s on topic %s, which was published on topic %s", x.Message, x.Topic, topic)
				case !ok && consumers[x.Message.Producer].Kind != ConsumerIngress:
					return bad(i, "delivery of message %s, which was not published before it", x.Message)
				}
			}
			deliveries[e.Consumer]++
		case Trap:
			if err := checkAt(i, x.At); err != nil {
				return err
			}
			traps++
		case Exit:
			if err := checkAt(i, x.At); err != nil {
				return err
			}
			if exit == nil || x.Code == a.Trailer.ExitCode {
				// The first exit call decides the code; a later one (in the
				// same handler, or another consumer's) is recorded too.
				exit = &x
			}
		}
	}

	t := a.Trailer
	switch t.Verdict {
	case VerdictExit:
		if exit == nil {
			return bad(-1, "trailer: verdict exit but the artifact has no exit entry")
		}
		if exit.Code != t.ExitCode {
			return bad(-1, "trailer: exit code %d but no exit entry has that code (the first has %d)", t.ExitCode, exit.Code)
		}
	case VerdictTrap:
		if traps == 0 {
			return bad(-1, "trailer: verdict trap but the artifact has no trap entry")
		}
	}
	return nil
}
