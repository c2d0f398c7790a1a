package artifact

import (
	"fmt"
	"sync/atomic"
)

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
//   - in format version 2 or newer, a trap entry names its trap kind;
//   - the trailer's verdict "exit" comes with an exit entry of the same
//     code, and the verdict "trap" with a trap entry.
//
// A delivery's target must subscribe to its topic when the header's type
// table (written by the recorder) lists the subscriptions; an artifact
// without one is not checked for that.
// The trailer's counts are checked by Decode, which Artifact.Verify
// assumes has accepted a.
func (a *Artifact) Verify() error {
	bad := func(i int, format string, args ...any) error {
		return &Inconsistency{Entry: i, Msg: fmt.Sprintf(format, args...)}
	}
	if err := a.Header.check(); err != nil {
		return bad(-1, "header: %v", err)
	}
	// The header's type table, when it can be read, says which instance
	// subscribes to which topic.
	program, _ := DecodeTypeTable(a.Header.Types)
	consumers := newVerifyConsumers(a.Header.Consumers)

	// The checks read the index (admission runs them on every replay, so
	// they allocate per consumer, not per entry); only a delivery's topic
	// and a trap's or exit's fields are read from the entry itself.
	spans, names := a.heads()
	subs := newSubscriptions(len(names.list))
	consumers.reservePublishes(a, spans.list)
	var exit *Exit
	traps := 0

	checkAt := func(i int, at *Coordinate) error {
		if at == nil {
			return nil
		}
		if c := consumers.get(at.Consumer); c == nil || at.N >= c.deliveries {
			return bad(i, "coordinate %s names a delivery not yet in the file", at)
		}
		return nil
	}

	for i := range spans.list {
		sp := &spans.list[i]
		c := consumers.get(sp.consumer)
		if c == nil {
			return bad(i, "consumer %d is not in the consumer table", sp.consumer)
		}
		if seq := spans.seq(sp); seq != c.next {
			return bad(i, "consumer %d has seq %d where %d was expected", sp.consumer, seq, c.next)
		}
		c.next++

		switch Kind(sp.kind) {
		case KindPublish:
			want := MessageID{Producer: sp.consumer, Seq: uint64(len(c.published))}
			if got := (MessageID{Producer: sp.producer, Seq: spans.msgSeq(sp)}); got != want {
				return bad(i, "publish by consumer %d has message identity %s where %s was expected", sp.consumer, got, want)
			}
			c.published = append(c.published, sp.name)
		case KindDelivery:
			target := names.list[sp.name]
			if sp.name != c.target {
				if !c.runs[target] {
					return bad(i, "delivery to %s, which consumer %d (%s %s) does not run", target, sp.consumer, c.Kind, c.Name)
				}
				c.target = sp.name
			}
			if !sp.start() {
				msg := MessageID{Producer: sp.producer, Seq: spans.msgSeq(sp)}
				producer := consumers.get(sp.producer)
				published := noName
				if producer != nil && msg.Seq < uint64(len(producer.published)) {
					published = producer.published[msg.Seq]
				}
				topic, topicID := a.deliveryTopic(i, names, published)
				if program != nil && !subs.subscribed(program, target, sp.name, topic, topicID) {
					return bad(i, "delivery of topic %s to %s, which does not subscribe to it", topic, target)
				}
				switch {
				case published != noName:
					if topicID != published {
						return bad(i, "delivery of message %s on topic %s, which was published on topic %s", msg, topic, names.list[published])
					}
				case producer == nil || producer.Kind != ConsumerIngress:
					return bad(i, "delivery of message %s, which was not published before it", msg)
				}
			}
			c.deliveries++
		case KindTrap:
			x, _ := a.Entry(i).Body.(Trap)
			if err := checkAt(i, x.At); err != nil {
				return err
			}
			if a.Version >= 2 && x.TrapKind == "" {
				return bad(i, "trap entry without a trap kind (format version %d)", a.Version)
			}
			traps++
		case KindExit:
			x, _ := a.Entry(i).Body.(Exit)
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
	if a.indexed {
		atomic.StoreUint32(&a.ordered, 1) // Ordered: every consumer's seqs were checked to follow 0, 1, 2, ...
	}
	return nil
}

// verifyConsumer is what Verify keeps per consumer.
type verifyConsumer struct {
	Consumer
	runs       map[string]bool // the instances it runs
	target     uint32          // the name number of the last target found in runs; noName before
	next       uint64          // the seq its next entry must have
	published  []uint32        // the topic (name number) of each of its publishes, by seq
	reserved   int             // its publishes, as counted before the checks
	deliveries uint64
}

// verifyConsumers finds a consumer by id: through a slice when the ids
// are small (as the recorder numbers them, 0 to n-1), else a map.
type verifyConsumers struct {
	dense []*verifyConsumer
	byID  map[uint32]*verifyConsumer
}

func newVerifyConsumers(table []Consumer) *verifyConsumers {
	vs := &verifyConsumers{byID: map[uint32]*verifyConsumer{}}
	maxID := uint32(0)
	for _, c := range table {
		vc := &verifyConsumer{Consumer: c, runs: map[string]bool{}, target: noName}
		for _, in := range c.Instances {
			vc.runs[in] = true
		}
		vs.byID[c.ID] = vc
		maxID = max(maxID, c.ID)
	}
	if int64(maxID) < 2*int64(len(table))+64 {
		vs.dense = make([]*verifyConsumer, maxID+1)
		for id, vc := range vs.byID {
			vs.dense[id] = vc
		}
	}
	return vs
}

// reservePublishes sizes each consumer's published list, all in one
// array: admission runs Verify on every replay, and a list grown by
// appending would allocate twice its size. The sizes are the index's
// counts (Counts), else from a first count over spans.
func (vs *verifyConsumers) reservePublishes(a *Artifact, spans []span) {
	total := 0
	if _, ok := a.Counts(0); ok {
		for _, c := range vs.byID {
			n, _ := a.Counts(c.ID)
			c.reserved = int(min(n.Publishes, uint64(len(spans))))
			total += c.reserved
		}
	} else {
		for i := range spans {
			if Kind(spans[i].kind) == KindPublish {
				if c := vs.get(spans[i].consumer); c != nil {
					c.reserved++
					total++
				}
			}
		}
	}
	all := make([]uint32, total)
	for _, c := range vs.byID {
		c.published, all = all[:0:c.reserved], all[c.reserved:]
	}
}

// get returns the consumer with that id, or nil.
func (vs *verifyConsumers) get(id uint32) *verifyConsumer {
	if vs.dense != nil {
		if int64(id) < int64(len(vs.dense)) {
			return vs.dense[id]
		}
		return nil
	}
	return vs.byID[id]
}

// deliveryTopic returns delivery i's topic and its number in names
// (noName when names does not have it). hint is the number it most
// likely has, the topic its message was published on, compared first:
// for an indexed artifact that spares a lookup per delivery.
func (a *Artifact) deliveryTopic(i int, names *nameTable, hint uint32) (string, uint32) {
	if !a.indexed {
		x, _ := a.Entries[i].Body.(Delivery)
		if hint != noName && names.list[hint] == x.Topic {
			return x.Topic, hint
		}
		if id, ok := names.id([]byte(x.Topic), false); ok {
			return x.Topic, id
		}
		return x.Topic, noName
	}
	sp := &a.spans.list[i]
	if sp.topic != 0 { // noted when the entry was indexed
		id := uint32(sp.topic - 1)
		return names.list[id], id
	}
	end := a.spans.end(sp)
	b := a.data[:end]
	// The target, the start flag, then the message, whose two varints
	// the span holds already: their sizes are skipped, not read.
	if _, j, ok := fastBytes(b, a.spans.at(sp)); ok {
		j += 1 + uvarintLen(uint64(sp.producer)) + uvarintLen(a.spans.msgSeq(sp))
		if from, to, ok := fastBytes(b, j); ok && to == end {
			topic := b[from:to]
			if hint != noName && names.list[hint] == string(topic) {
				return names.list[hint], hint
			}
			if id, ok := names.id(topic, false); ok {
				return names.list[id], id
			}
			return string(topic), noName
		}
	}
	x, _ := a.delivery(i)
	return x.Topic, noName
}

// subscriptions remembers Verify's answers to "does this target
// subscribe to this topic": per pair of name numbers in a table when
// there are few names, else in a map.
type subscriptions struct {
	n     int
	table []uint8 // target*n+topic: 0 not asked yet, 1 yes, 2 no
	asked map[[2]string]bool
}

func newSubscriptions(names int) *subscriptions {
	s := &subscriptions{n: names, asked: map[[2]string]bool{}}
	if names <= 256 {
		s.table = make([]uint8, names*names)
	}
	return s
}

// subscribed reports whether the program's type table lets target (name
// number targetID) receive topic; a pair the table does not know is let
// through, as Verify documents.
func (s *subscriptions) subscribed(program *TypeTable, target string, targetID uint32, topic string, topicID uint32) bool {
	ask := func() bool {
		yes, known := program.Subscribed(target, topic)
		return yes || !known
	}
	if s.table != nil && targetID != noName && topicID != noName && int(targetID) < s.n && int(topicID) < s.n {
		k := int(targetID)*s.n + int(topicID)
		if s.table[k] == 0 {
			s.table[k] = 2
			if ask() {
				s.table[k] = 1
			}
		}
		return s.table[k] == 1
	}
	key := [2]string{target, topic}
	yes, ok := s.asked[key]
	if !ok {
		yes = ask()
		s.asked[key] = yes
	}
	return yes
}
