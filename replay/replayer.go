package replay

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/replay/internal/pages"
	"github.com/hale-lang/hale/stdlib"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/host"
	"github.com/hale-lang/hale/vm/value"
)

// How a replay runs (docs/replay.md).
//
// The Replayer is the runtime's Journal, Order and Input at once. It
// reads the admitted artifact once, up front, into per-consumer tables:
// the consumer's recorded deliveries in order, and the recorded calls
// (invocations, outputs, exits) grouped by the handler run they belong
// to: the calls made before the consumer's first delivery (state
// initialisers), then those of each delivery. Nothing else is shared
// between consumers, so serving a call costs no lock.
//
// Calls. A call is matched against the next unused recorded call of the
// handler run it is made in; the run is found by the delivery's identity
// (target and message, or start), not its number, so a consumer whose
// order had to be abandoned still gets its runs' calls. An input, fs.write
// or net call must have the same primitive and the same argument bytes,
// or it is a journal miss and traps; output is compared and printed
// again; exit is compared and performed.
//
// Order. Next gives each consumer its next recorded delivery, holding
// (host.Hold) while it has not arrived. A hold that lasts HoldTimeout is
// an order timeout: the oldest pending delivery is released and the
// consumer takes the rest in arrival order. A consumer that has been
// given as many deliveries as the recording has for it retires
// (host.Retire): the recorded run ended there, by quiescence, exit or trap.
//
// The end. In the recording, when a trap or exit stopped the run, every
// other consumer finished the handler it was running and took nothing
// more, so its recorded count of deliveries is exactly what it had
// started by then. The replay reproduces that by making the recorded trap
// (in Trap) or exit (in Invoke, before calling exit) wait until every
// other consumer has been given all of its recorded deliveries. The wait
// gives up when no consumer has made progress for twice HoldTimeout, so a
// divergent replay never deadlocks. It also waits for every stdin binding
// to have published the lines it had published when the recorded run
// stopped, since the input reader is not ordered by anything else.

// DefaultHoldTimeout is how long a consumer holds early deliveries before
// releasing one (`--hold-timeout`).
const DefaultHoldTimeout = 2 * time.Second

// OrderTimeout is the kind of a finding that a hold timed out. Diff never
// reports it: only the replayer knows.
const OrderTimeout artifact.DivergenceKind = "order_timeout"

// Options configures a Replayer. The zero value replays as `hale
// replay` does by default.
type Options struct {
	// HoldTimeout bounds how long a consumer holds early deliveries
	// waiting for the recorded one (0: DefaultHoldTimeout).
	HoldTimeout time.Duration
	// Env supplies withheld environment values by name (`--env
	// NAME=VALUE`); each must have the recorded length.
	Env map[string]string
	// Quiet suppresses printing the program's output again (it is still
	// compared).
	Quiet bool
	// AllowLiveEffects performs fs.write and net calls for real (their
	// results are still compared) instead of serving the recorded ones.
	AllowLiveEffects bool
	// At, when set, stops the replay just before the handler of that
	// delivery runs (`--at`), capturing the view At returns afterwards.
	At *artifact.Coordinate
	// Recent is the number of handled deliveries per consumer the --at
	// view shows (0: 5).
	Recent int
	// LiveBus, when set with AllowLiveEffects, sends the program's nats
	// exports for real (a natsbus.Bus); the recorded ingress is still
	// injected. Without it no broker is contacted.
	LiveBus host.Bus
	// Record, when set, receives the replay's own recording, made with
	// the env policy of the artifact being replayed (docs/replay.md).
	// The caller creates it with the header of a replay's recording (the
	// session's does) and closes it through Recording().Close after the
	// run.
	Record *artifact.Recorder
}

// Finding is a divergence the replayer saw while the run went on: the
// sentence says what happened, At where (the delivery whose handler was
// running, or the divergent delivery itself).
type Finding struct {
	Kind     artifact.DivergenceKind
	At       artifact.Coordinate
	Startup  bool // before the consumer's first delivery
	Sentence string
	// Recorded and Replayed show the two sides where the finding has
	// them (a call, an output); Position is where the replay was, when
	// known (the call a journal miss refused).
	Recorded, Replayed string
	Position           string
}

// Stats are the replayer's counts, for the report.
type Stats struct {
	Consumers     int // consumers that handle deliveries
	Deliveries    int // deliveries handled in the replay
	JournalCalls  int // input calls served from the journal (as Diff counts them: outputs, effects and exit are compared, not counted)
	JournalMisses int // calls that did not match the recording (input past the journal included)
	MissingInputs int // withheld values that were not supplied, or with another length
	OrderTimeouts int
	// Unconsumed counts recorded invocations never read.
	Unconsumed int
	// Unexpected counts deliveries the recording does not have on that
	// consumer: handled, or dropped when the consumer retired.
	Unexpected int
	// MissingDeliveries counts recorded deliveries never handled.
	MissingDeliveries int
	// OutputMismatches counts io output, fs.write and net calls and
	// exits that differ from, or are missing from, or are extra to the
	// recording.
	OutputMismatches int
	// PublishMismatches counts messages published with another topic or
	// payload than the recorded message of the same identity, or not
	// published in the recording at all.
	PublishMismatches int
	// Verdict and ExitCode are how the replayed run ended.
	Verdict  string
	ExitCode int
	// Findings lists the divergences in the order they were seen (at
	// most maxFindings).
	Findings []Finding
}

// Clean reports whether the replay matched the recording: no finding at
// all and the recorded verdict and exit code.
func (s *Stats) Clean() bool { return len(s.Findings) == 0 }

// maxFindings bounds the findings kept; counts go on.
const maxFindings = 100

// ErrStopped is the error of a run that the replayer halted at
// Options.At (host.Result.Halt).
var ErrStopped = errors.New("replay: stopped at the requested coordinate")

// Replayer replays an artifact: it is the host.Journal, host.Order and
// host.Input of the replayed run (see Install).
type Replayer struct {
	art   *artifact.Artifact
	img   *image.Image
	opts  Options
	hold  time.Duration
	types *programTypes // of img; nil when they cannot be built
	old   *programTypes // of the recorded program, from the header; may be nil
	rec   *RecordingJournal

	cons   []*replayConsumer // by consumer id of img
	byName map[string]int    // instance name → index
	// spans are the artifact's (Artifact.heads), and instOf maps the
	// names they number to the program's instances, for key.
	spans  artifact.Spans
	instOf []int
	// topicNum maps the program's topics to the numbers of the same
	// names among the spans' (noTopic when the artifact has none), so
	// that checking a publish compares numbers (recordedPublish).
	topicNum []uint32
	// pubs maps a recorded message to its publish entry: by producer
	// and seq for the program's consumers, in other for the rest.
	pubs  [][]int32
	other map[artifact.MessageID]int
	// stoppedRun is set when the recorded run ended by exit or trap (or
	// anything but quiescence): deliveries of recorded messages that
	// were never handled are then expected.
	stoppedRun bool
	// noDeliveries: the recording has no delivery on any consumer (a run
	// canceled at start-up, say).
	noDeliveries bool
	lines        []string // the recorded ingress lines
	// natsIn holds, by img.Ingress index, the recorded messages of each
	// nats binding, injected in their recorded order (natsreplay.go).
	natsIn map[int][]artifact.Ingress

	mu        sync.Mutex
	progressC chan struct{} // closed and replaced when a consumer is given a delivery
	waiters   int           // awaitRecordedEnd calls waiting on progressC
	findings  []Finding
	nFindings int
	verdict   string
	code      int
	ended     bool

	// stop is where the --at stop is (under mu).
	stop stopPoint
	at   *AtView
}

// replayConsumer is one consumer's recorded tables and replay state.
type replayConsumer struct {
	id         int
	name       string
	deliveries []recordedDelivery
	// callEntries are the entries of the consumer's recorded calls, in
	// order; each handler run's are a window of it.
	callEntries []int32
	index       map[deliveryKey]int // delivery identity → index in deliveries; see lookup
	indexOnce   sync.Once
	pre         callRun               // calls before the first delivery
	traps       map[int]artifact.Trap // recorded traps by delivery number (-1: start-up)

	// Touched only from the consumer's goroutine (and, before the
	// consumers start, from the runner's).
	cur        *callRun
	n          int // the delivery being handled, -1 before the first
	calls      int // journaled calls made
	runInputs  int // input calls made in the current handler run
	runOutputs int // output, fs.write, net and exit calls made in it
	// given is the recorded delivery Next gave last (-1 when it gave one
	// in arrival order); Next runs on the consumer's goroutine too.
	given      int
	givenKey   deliveryKey // the identity of recorded delivery given, when given >= 0
	givenMore  int         // the deliveries of NextRun's run after given
	handled    int
	misses     int
	missingIn  int
	outputs    int
	unexpected int
	pubMiss    int
	recent     []recentDelivery
	events     atomic.Uint64 // journal events, the progress the end waits on
	// call holds the recorded call being matched, read from the
	// artifact (see recorded).
	call artifact.Entry

	// ingress is set for a stdin binding; published counts its replayed
	// publishes and recPublishes its recorded ones, which the end of a
	// stopped run waits for (the input reader runs on its own).
	ingress      bool
	published    atomic.Int64
	recPublishes int64

	// done is set once Next has given all the recorded deliveries, so
	// that Publish looks at the consumer's accounting only then.
	done atomic.Bool

	// Under Replayer.mu.
	pos        int // deliveries given by Next
	abandoned  bool
	retired    bool
	holdSince  time.Time
	timeouts   int
	lateUnexp  int                  // unexpected deliveries counted at publish or retirement
	countedPub map[deliveryKey]bool // counted at publish
}

// recordedDelivery is one recorded delivery of a consumer: its entry
// (whose span gives its identity, see key) and its handler run's calls.
// Entry numbers and their counts are held in 32 bits (NewReplayer
// refuses an artifact of more entries), so that a delivery takes 16
// bytes of the tables rather than 32.
type recordedDelivery struct {
	entry int32
	calls callRun
}

// deliveryKey identifies a delivery within a consumer: a message reaching
// an instance, or an instance's start.
type deliveryKey struct {
	inst  int
	start bool
	msg   artifact.MessageID
}

// callRun is the recorded calls of one handler run, the entries
// callEntries[from:to] of its consumer, and how many the replay has used.
type callRun struct {
	from, to, used int32
}

// next returns the run's next unused call entry.
func (run *callRun) next(cs *replayConsumer) (int, bool) {
	if run.from+run.used < run.to {
		return int(cs.callEntries[run.from+run.used]), true
	}
	return 0, false
}

// left reports whether the run has unused calls.
func (run *callRun) left() bool { return run.from+run.used < run.to }

type recentDelivery struct {
	n int
	d host.Delivery
}

// maxReplayEntries is the most entries a replay holds: the tables number
// entries in 32 bits (such an artifact, 2^31 entries, would need 64 GiB
// of index, so no replay could hold it anyway). Run refuses more.
const maxReplayEntries = math.MaxInt32

// NewReplayer prepares the replay of art, an admitted artifact of at most
// maxReplayEntries entries, by img, the program as compiled now.
func NewReplayer(art *artifact.Artifact, img *image.Image, opts Options) *Replayer {
	r := &Replayer{
		art:       art,
		img:       img,
		opts:      opts,
		hold:      opts.HoldTimeout,
		byName:    map[string]int{},
		other:     map[artifact.MessageID]int{},
		progressC: make(chan struct{}),
	}
	if r.hold <= 0 {
		r.hold = DefaultHoldTimeout
	}
	if r.opts.Recent <= 0 {
		r.opts.Recent = 5
	}
	r.types, _ = typesOfProgram(img)
	r.old, _ = decodeProgramTypes(art.Header.Types)
	if opts.Record != nil {
		r.rec = NewRecordingJournal(opts.Record, img, art.Header.EnvPolicy)
	}
	r.stoppedRun = art.Trailer.Verdict != artifact.VerdictQuiescent
	for i, in := range img.Instances {
		if _, dup := r.byName[in.Name]; !dup {
			r.byName[in.Name] = i
		}
	}
	r.cons = make([]*replayConsumer, len(img.Consumers))
	for id, c := range img.Consumers {
		r.cons[id] = &replayConsumer{id: id, name: c.Name, traps: map[int]artifact.Trap{},
			n: -1, given: -1, countedPub: map[deliveryKey]bool{}}
		r.cons[id].cur = &r.cons[id].pre
		r.cons[id].ingress = c.Kind == image.ConsumerIngress
	}
	if art.Len() > maxReplayEntries {
		panic("replay: NewReplayer called with more entries than a replay can hold (Run refuses them)")
	}
	r.load()
	r.noDeliveries = true
	for _, cs := range r.cons {
		cs.done.Store(len(cs.deliveries) == 0)
		r.noDeliveries = r.noDeliveries && len(cs.deliveries) == 0
	}
	return r
}

// load builds the per-consumer tables from the artifact's spans (its
// index: consumer, seq, kind and message of each entry), reading no
// entry's fields but the ingress lines' and the traps'.
//
// It runs before every replay over every entry (400,000 for 200,000
// messages), so it allocates per consumer, not per entry: each
// consumer's deliveries and one array of its call entries, that every
// handler run's calls are a window of, are sized from the index's counts
// (Artifact.Counts) when Verify has passed it (Artifact.Ordered), else
// from a counting pass. The identity index is built only when something
// asks for it (see lookup).
//
// A recorder writes each consumer's entries in seq order, so the tables
// are then built in one pass in the artifact's order. Otherwise the
// entries are first grouped by consumer (one flat array of entry
// indexes) and each consumer's sorted by seq. Both orders give the same
// tables: each consumer's entries are taken in seq order, and a message
// published twice keeps the publish of the lowest consumer (then the
// lowest seq), as taking the consumers one after the other does.
func (r *Replayer) load() {
	a := r.art
	spans, names := a.Heads()
	r.spans = spans
	r.instOf = make([]int, len(names))
	numOf := make(map[string]uint32, len(names))
	for id, name := range names {
		r.instOf[id] = r.instanceOf(name)
		if _, dup := numOf[name]; !dup {
			numOf[name] = uint32(id)
		}
	}
	r.topicNum = make([]uint32, len(r.img.Topics))
	for t, tp := range r.img.Topics {
		r.topicNum[t] = noTopic
		if id, ok := numOf[tp.Name]; ok {
			r.topicNum[t] = id
		}
	}
	ingress := -1           // the first stdin binding's consumer: its publishes are the lines
	natsOf := map[int]int{} // nats binding consumer -> img.Ingress index
	for i, in := range r.img.Ingress {
		switch {
		case in.NATS != nil:
			natsOf[in.Consumer] = i
		case ingress < 0:
			ingress = in.Consumer
		}
	}
	// Entries of consumers the program does not have count for one more
	// group, in which only publishes matter.
	nc := len(r.cons)
	group := func(c uint32) int { return int(min(uint64(c), uint64(nc))) }
	count := make([]int, nc+1) // entries by group
	nDeliveries := make([]int, nc)
	nCalls := make([]int, nc)
	nPublishes := make([]int, nc)
	inOrder := true // every consumer's entries in seq order
	if ordered(a) {
		// Verify found each consumer's seqs in order, and the index
		// counted the entries as it read them: no counting pass.
		for g := range nc {
			n, _ := a.Counts(uint32(g))
			nDeliveries[g], nCalls[g], nPublishes[g] = int(n.Deliveries), int(n.Calls), int(n.Publishes)
		}
	} else {
		lastSeq := make([]uint64, nc)
		for i := range spans.Len() {
			g := group(spans.Consumer(i))
			count[g]++
			if g < nc {
				seq := spans.Seq(i)
				if seq < lastSeq[g] {
					inOrder = false
				}
				lastSeq[g] = seq
				switch spans.Kind(i) {
				case artifact.KindDelivery:
					nDeliveries[g]++
				case artifact.KindInvocation, artifact.KindOutput, artifact.KindExit:
					nCalls[g]++
				case artifact.KindPublish:
					nPublishes[g]++
				}
			}
		}
	}
	// A consumer numbers its messages from 0 as it publishes them.
	r.pubs = make([][]int32, nc)
	for g, n := range nPublishes {
		r.pubs[g] = make([]int32, 0, n+1)
		pages.Prepare(r.pubs[g])
	}
	lineType := &value.Type{Kind: value.KindStruct, Fields: []value.Field{{Name: "text", Type: value.StringType}}}
	calls := make([][]int32, nc) // each consumer's call entries
	runFrom := make([]int32, nc) // calls[g][runFrom[g]:] belong to g's current run
	for g, cs := range r.cons {
		cs.deliveries = make([]recordedDelivery, 0, nDeliveries[g])
		calls[g] = make([]int32, 0, nCalls[g])
		pages.Prepare(cs.deliveries)
		pages.Prepare(calls[g])
	}
	closeRun := func(g int) {
		cs := r.cons[g]
		run := callRun{from: runFrom[g], to: int32(len(calls[g]))}
		if n := len(cs.deliveries); n > 0 {
			cs.deliveries[n-1].calls = run
		} else {
			cs.pre = run
		}
		runFrom[g] = int32(len(calls[g]))
	}
	// take adds entry i, of group g, to the tables.
	take := func(g, i int) {
		kind := spans.Kind(i)
		if g == nc { // consumers the program does not have
			if kind == artifact.KindPublish {
				r.addPublish(spans.Message(i), i, g)
			}
			return
		}
		cs := r.cons[g]
		switch kind {
		case artifact.KindPublish:
			r.addPublish(spans.Message(i), i, g)
			cs.recPublishes++
			if g == ingress {
				x, _ := a.Publish(i)
				line := ""
				if v, err := value.Decode(x.Payload, lineType); err == nil {
					line = v.AsStruct().Field(0).AsStr()
				}
				r.lines = append(r.lines, line)
			}
		case artifact.KindDelivery:
			closeRun(g)
			cs.deliveries = append(cs.deliveries, recordedDelivery{entry: int32(i)})
		case artifact.KindInvocation, artifact.KindOutput, artifact.KindExit:
			calls[g] = append(calls[g], int32(i))
		case artifact.KindIngress:
			if b, ok := natsOf[g]; ok {
				if x, ok := a.Entry(i).Body.(artifact.Ingress); ok {
					if r.natsIn == nil {
						r.natsIn = map[int][]artifact.Ingress{}
					}
					r.natsIn[b] = append(r.natsIn[b], x)
				}
			}
		case artifact.KindTrap:
			x, _ := a.Entry(i).Body.(artifact.Trap)
			n := -1
			if x.At != nil {
				n = int(x.At.N)
			}
			if _, dup := cs.traps[n]; !dup {
				cs.traps[n] = x
			}
		}
	}
	if inOrder {
		for i := range spans.Len() {
			g := group(spans.Consumer(i))
			if g < nc {
				// A delivery or a call, almost every entry but the
				// publishes, taken here as take would.
				switch spans.Kind(i) {
				case artifact.KindDelivery:
					closeRun(g)
					cs := r.cons[g]
					cs.deliveries = append(cs.deliveries, recordedDelivery{entry: int32(i)})
					continue
				case artifact.KindInvocation, artifact.KindOutput, artifact.KindExit:
					calls[g] = append(calls[g], int32(i))
					continue
				}
			}
			take(g, i)
		}
	} else {
		start := make([]int, nc+2) // group g's entries are flat[start[g]:start[g+1]]
		for g, n := range count {
			start[g+1] = start[g] + n
		}
		flat := make([]int, spans.Len())
		fill := slices.Clone(start[:nc+1])
		for i := range spans.Len() {
			g := group(spans.Consumer(i))
			flat[fill[g]] = i
			fill[g]++
		}
		for g := 0; g <= nc; g++ {
			idx := flat[start[g]:start[g+1]]
			if g < nc {
				slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(spans.Seq(i), spans.Seq(j)) })
			}
			for _, i := range idx {
				take(g, i)
			}
		}
	}
	for g, cs := range r.cons {
		closeRun(g)
		cs.callEntries = calls[g]
	}
}

// ordered is Artifact.Ordered, which load asks (a variable, so that a
// test can compare its two ways on artifacts that Verify would refuse).
var ordered = (*artifact.Artifact).Ordered

// key is the identity of cs's recorded delivery i.
func (r *Replayer) key(cs *replayConsumer, i int) deliveryKey {
	j := int(cs.deliveries[i].entry)
	if r.spans.Start(j) {
		return deliveryKey{inst: r.instOf[r.spans.Name(j)], start: true}
	}
	return deliveryKey{inst: r.instOf[r.spans.Name(j)], msg: r.spans.Message(j)}
}

// lookup returns the index in cs.deliveries of the recorded delivery with
// identity key (the first, if the artifact repeats one). A replay that
// follows the recording finds each delivery where Next expects it and
// never needs the map, so it is built on the first call, from whichever
// consumer's goroutine asks.
func (r *Replayer) lookup(cs *replayConsumer, key deliveryKey) (int, bool) {
	cs.indexOnce.Do(func() {
		cs.index = make(map[deliveryKey]int, len(cs.deliveries))
		for i := range cs.deliveries {
			// Only the keys: the consumer's goroutine may be counting
			// the calls of a delivery meanwhile.
			key := r.key(cs, i)
			if _, dup := cs.index[key]; !dup {
				cs.index[key] = i
			}
		}
	})
	i, ok := cs.index[key]
	return i, ok
}

// recorded reads entry i into cs.call and returns it; the entry stays
// valid until the next call, on cs's goroutine.
func (cs *replayConsumer) recorded(a *artifact.Artifact, i int) *artifact.Entry {
	cs.call = a.Entry(i)
	return &cs.call
}

// addPublish notes that entry i, of load's group g, publishes message m.
// If an artifact has two, the one of the lowest group wins, then the
// first one added (load adds a group's entries in seq order).
func (r *Replayer) addPublish(m artifact.MessageID, i, g int) {
	// first reports whether entry j, already noted, stays.
	first := func(j int) bool { return min(int64(r.spans.Consumer(j)), int64(len(r.cons))) <= int64(g) }
	if int64(m.Producer) >= int64(len(r.cons)) || m.Seq > uint64(r.art.Len()) {
		if j, dup := r.other[m]; !dup || !first(j) {
			r.other[m] = i
		}
		return
	}
	seqs := r.pubs[m.Producer] // load sized r.pubs
	for uint64(len(seqs)) <= m.Seq {
		seqs = append(seqs, -1)
	}
	if j := seqs[m.Seq]; j < 0 || !first(int(j)) {
		seqs[m.Seq] = int32(i)
	}
	r.pubs[m.Producer] = seqs
}

// publishEntry returns the entry that published message m.
func (r *Replayer) publishEntry(m artifact.MessageID) (int, bool) {
	if int64(m.Producer) < int64(len(r.pubs)) {
		if seqs := r.pubs[m.Producer]; m.Seq < uint64(len(seqs)) && seqs[m.Seq] >= 0 {
			return int(seqs[m.Seq]), true
		}
	}
	i, ok := r.other[m]
	return i, ok
}

// unknownInst stands for an instance the program does not have.
const unknownInst = -1

// instanceOf returns the index of the instance named name, or unknownInst.
func (r *Replayer) instanceOf(name string) int {
	if inst, ok := r.byName[name]; ok {
		return inst
	}
	return unknownInst
}

// keyOf is the identity of a replayed delivery.
func keyOf(d *host.Delivery) deliveryKey {
	if d.IsStart() {
		return deliveryKey{inst: d.Target, start: true}
	}
	return deliveryKey{inst: d.Target, msg: messageID(d.Message)}
}

// Install makes the replayer the Journal, Order and Input of a run.
func (r *Replayer) Install(o *host.Options) {
	o.Journal, o.Order, o.Input = r, r, r.Input()
	// A replay skips the delays of timers: their deliveries are enqueued
	// at once, and each consumer's recorded order places them.
	o.Timers = host.ImmediateTimers
	// The recorded limit, so that a trap for running out of memory comes
	// where it came in the recording (0: the default, as then).
	o.MemoryLimit = r.art.Header.MemoryLimit
	// The recorded process id, so that the Nats-Msg-Ids of the replay's
	// exports are the recorded ones; the recorded ingress is injected.
	o.ProcessID = r.art.Header.ProcessID
	o.Bus = r.bus()
}

// Input returns the recorded ingress lines.
func (r *Replayer) Input() host.Input { return host.RecordedLines(r.lines) }

// Recording returns the journal of the replay's own recording, or nil
// when Options.Record was not set. Close it after the run.
func (r *Replayer) Recording() *RecordingJournal { return r.rec }

var (
	_ host.Journal      = (*Replayer)(nil)
	_ host.Order        = (*Replayer)(nil)
	_ host.TimerJournal = (*Replayer)(nil)
)

func (r *Replayer) consumer(c int) *replayConsumer {
	if c < 0 || c >= len(r.cons) {
		return nil
	}
	return r.cons[c]
}

// ---- findings ----

// finding records a divergence.
func (r *Replayer) finding(kind artifact.DivergenceKind, cs *replayConsumer, format string, args ...any) {
	r.findingSides(kind, cs, "", "", format, args...)
}

// findingSides is finding with the recorded and replayed sides.
func (r *Replayer) findingSides(kind artifact.DivergenceKind, cs *replayConsumer, recorded, replayed string, format string, args ...any) {
	f := Finding{Kind: kind, Sentence: fmt.Sprintf(format, args...), Recorded: recorded, Replayed: replayed}
	if cs != nil {
		f.At.Consumer = uint32(cs.id)
		if cs.n < 0 {
			f.Startup = true
		} else {
			f.At.N = uint64(cs.n)
		}
	}
	r.mu.Lock()
	r.nFindings++
	if len(r.findings) < maxFindings {
		r.findings = append(r.findings, f)
	}
	r.mu.Unlock()
}

// where says which handler run a consumer is in, in the shape of the
// report's lines ("consumer 2: in delivery #41").
func (cs *replayConsumer) where() string {
	if cs.n < 0 {
		return fmt.Sprintf("consumer %d: before its first delivery", cs.id)
	}
	return fmt.Sprintf("consumer %d: in delivery #%d", cs.id, cs.n)
}

// ---- calls ----

// recordedTrap is a trap served from the recording: its kind and message
// are the recorded ones, exactly, so that `try` catches it on replay as it
// did live.
type recordedTrap struct {
	kind, message string
}

// servedTrap is the trap a recorded call that failed with kind and
// message raises on replay. Format version 1 records no kind (""): it is
// read back from the message (v1TrapKind).
func servedTrap(kind, message string) recordedTrap {
	if kind == "" {
		kind = v1TrapKind(message)
	}
	return recordedTrap{kind: kind, message: message}
}

func (t recordedTrap) Error() string { return t.message }

// TrapKind is the recorded trap's kind.
func (t recordedTrap) TrapKind() string { return t.kind }

// v1TrapKind recovers the kind of a trapped call recorded in format
// version 1, which holds only the message, from the host's message forms
// (vm/host): a bad argument of std::rand::next_int or std::os::getrandom
// is "arg", a failed file or network call ("cannot read \"…\": …",
// "cannot GET \"…\": …") is "io", or "timeout" when the message says the
// call timed out (Go's net/http and net words); anything else is a host
// failure, which try does not catch.
func v1TrapKind(msg string) string {
	switch {
	case strings.HasPrefix(msg, "std::rand::next_int: n must be"), strings.HasPrefix(msg, "std::os::getrandom: n must be"):
		return vm.KindArg
	case !strings.HasPrefix(msg, "cannot "):
		return vm.KindHost
	case strings.Contains(msg, "Timeout exceeded"), strings.Contains(msg, "i/o timeout"), strings.Contains(msg, "deadline exceeded"):
		return vm.KindTimeout
	}
	return vm.KindIO
}

// Invoke serves one journaled call from the recording (see the top of
// the file) and, when the replay is recorded, records what the program
// saw.
func (r *Replayer) Invoke(c int, p stdlib.Primitive, args []byte, live func() ([]byte, error)) ([]byte, error) {
	cs := r.consumer(c)
	if cs == nil {
		return nil, fmt.Errorf("replay: consumer %d is not in the program's consumer table", c)
	}
	cs.events.Add(1)
	if r.cutShort(cs) {
		return nil, host.ErrInterrupt
	}
	if r.rec != nil {
		return r.rec.Invoke(c, p, args, func() ([]byte, error) { return r.serve(cs, p, args, live) })
	}
	return r.serve(cs, p, args, live)
}

// cutShort reports whether cs is past the point where the recorded run
// was canceled: in its last recorded delivery, with every recorded call
// of that handler run used. The replay stops there as the recording did
// (Invoke and Poll answer host.ErrInterrupt), rather than running the
// rest of a handler that the recorded run never finished.
func (r *Replayer) cutShort(cs *replayConsumer) bool {
	if r.art.Trailer.Verdict != artifact.VerdictCanceled || cs.cur.left() {
		return false
	}
	if cs.n < 0 {
		// At start-up: the recorded run was canceled there only if no
		// consumer got to any delivery.
		return r.noDeliveries
	}
	return cs.n == len(cs.deliveries)-1
}

// Poll stops a handler run that the recorded run was canceled in, even
// when it makes no more calls (host.Poller).
func (r *Replayer) Poll(c int) error {
	if cs := r.consumer(c); cs != nil && r.cutShort(cs) {
		return host.ErrInterrupt
	}
	return nil
}

var _ host.Poller = (*Replayer)(nil)

// serve matches one call against cs's current handler run.
//
// An input call recorded as an invocation, which is most of them, is read
// without boxing the entry (Artifact.Invocation): next stays nil and inv
// holds it until a finding needs the entry itself (entry).
func (r *Replayer) serve(cs *replayConsumer, p stdlib.Primitive, args []byte, live func() ([]byte, error)) ([]byte, error) {
	run := cs.cur
	var (
		next  *artifact.Entry
		inv   artifact.Invocation
		isInv bool // next is nil and inv is the next recorded call
		at    int
	)
	if i, ok := run.next(cs); ok {
		at = i
		if unboxedCalls && p.Effect != stdlib.Exit && p.Journal != stdlib.Output && r.spans.Kind(i) == artifact.KindInvocation {
			inv, isInv = r.art.Invocation(i)
		}
		if !isInv {
			next = cs.recorded(r.art, i)
		}
	}
	// entry is the next recorded call as an entry, for a finding.
	entry := func() *artifact.Entry {
		if next == nil && isInv {
			next = cs.recorded(r.art, at)
		}
		return next
	}
	switch {
	case p.Effect == stdlib.Exit:
		cs.runOutputs++
		return r.serveExit(cs, run, next, args, live)
	case p.Journal == stdlib.Output:
		cs.runOutputs++
		return r.serveOutput(cs, run, next, p, args, live)
	}

	// An input, or an fs.write or net call, numbered as the diff numbers
	// them: among the entries of its kind in the handler run.
	virtual := p.Journal == stdlib.Virtual
	// A URL's password was withheld from the recording: the call is
	// compared (and shown) with it withheld too, so by its length.
	args = withheldArgs(p, args)
	// call names the call in findings and errors (made only for them).
	callNo := cs.runInputs
	if virtual {
		callNo = cs.runOutputs
		cs.runOutputs++
	} else {
		cs.runInputs++
		cs.calls++
	}
	call := func() string {
		if virtual {
			return "output #" + strconv.Itoa(callNo)
		}
		return "call #" + strconv.Itoa(callNo)
	}
	// Recorded output the replay did not print is a changed output, not
	// a reason to refuse the call.
	for next != nil && isText(next) {
		cs.outputs++
		r.finding(artifact.ChangedOutput, cs, "%s, the recording printed %s here, the replay did not", cs.where(), r.entryText(next))
		run.used++
		next = nil
		if i, ok := run.next(cs); ok {
			next = cs.recorded(r.art, i)
		}
	}
	if next == nil && !isInv {
		cs.misses++
		err := fmt.Errorf("replay: input past the journal: consumer %d %s %s: the recording has no more calls in this handler run",
			cs.id, call(), r.callText(p.Name, args))
		r.finding(artifact.InputPastJournal, cs, "%s, %s %s is past the recorded calls", cs.where(), call(), r.callText(p.Name, args))
		return nil, err
	}
	var (
		prim, channel    string
		recArgs, result  []byte
		outcome          artifact.Outcome
		length           uint64
		message, kind    string
		isCall, isEffect bool
	)
	var body artifact.Body
	if isInv {
		x := &inv
		prim, recArgs, outcome, result, length, kind, message, isCall = x.Primitive, x.Args, x.Outcome, x.Result, x.Length, x.TrapKind, x.Message, true
	} else {
		body = next.Body
	}
	switch x := body.(type) {
	case artifact.Invocation:
		prim, recArgs, outcome, result, length, kind, message, isCall = x.Primitive, x.Args, x.Outcome, x.Result, x.Length, x.TrapKind, x.Message, true
	case artifact.Output:
		prim, channel, recArgs, outcome, result, length, kind, message = x.Primitive, x.Channel, x.Args, x.Outcome, x.Result, x.Length, x.TrapKind, x.Message
		isEffect = channel != artifact.ChannelStdout && channel != artifact.ChannelStderr
	}
	if !(virtual && isEffect || !virtual && isCall) || prim != p.Name || !bytes.Equal(recArgs, args) {
		cs.misses++
		err := fmt.Errorf("replay: journal miss: consumer %d %s expected %s, got %s",
			cs.id, call(), r.entryText(entry()), r.callText(p.Name, args))
		r.findingSides(artifact.JournalMiss, cs, call()+" "+r.entryText(entry()), call()+" "+r.callText(p.Name, args),
			"%s, %s was %s in the recording, but %s in the replay",
			cs.where(), call(), r.entryText(entry()), r.callText(p.Name, args))
		return nil, err
	}
	run.used++

	if virtual && r.opts.AllowLiveEffects {
		res, err := live()
		same := false
		switch {
		case err != nil:
			same = outcome == artifact.Trapped && err.Error() == message && (kind == "" || trapKindOf(err) == kind)
		default:
			same = outcome == artifact.OK && bytes.Equal(res, result)
		}
		if !same {
			cs.outputs++
			r.finding(artifact.ChangedResult, cs, "%s, the live call %s gave another result than the recorded one", cs.where(), r.callText(p.Name, args))
		}
		return res, err
	}
	switch outcome {
	case artifact.OK:
		return result, nil
	case artifact.Trapped:
		return nil, servedTrap(kind, message)
	}
	return r.supply(cs, p, args, length)
}

// unboxedCalls lets serve read a recorded invocation without boxing it;
// TestServeUnboxed turns it off to compare with the boxed reading.
var unboxedCalls = true

// isText reports whether e is output on stdout or stderr.
func isText(e *artifact.Entry) bool {
	x, ok := e.Body.(artifact.Output)
	return ok && (x.Channel == artifact.ChannelStdout || x.Channel == artifact.ChannelStderr)
}

// supply serves a withheld value from Options.Env.
func (r *Replayer) supply(cs *replayConsumer, p stdlib.Primitive, args []byte, length uint64) ([]byte, error) {
	name := p.Name
	if p.Effect == stdlib.Env {
		if vs, err := value.DecodeTuple(args, []*value.Type{value.StringType, value.StringType}); err == nil {
			name = vs[0].AsStr()
		}
	}
	v, ok := r.opts.Env[name]
	if !ok {
		cs.missingIn++
		r.finding(artifact.MissingInput, cs, "%s, the value of %s was withheld from the recording and not supplied (--env %s=…)", cs.where(), name, name)
		return nil, fmt.Errorf("replay: missing input %s", name)
	}
	if uint64(len(v)) != length {
		cs.missingIn++
		r.finding(artifact.MissingInput, cs, "%s, the value supplied for %s has %s, the recorded one had %s",
			cs.where(), name, plural(uint64(len(v)), "byte", "bytes"), plural(length, "byte", "bytes"))
		return nil, fmt.Errorf("replay: missing input %s: the value supplied has %s, the recorded one had %s",
			name, plural(uint64(len(v)), "byte", "bytes"), plural(length, "byte", "bytes"))
	}
	return value.Encode(nil, value.Str(v))
}

// serveOutput compares io output with the recording and prints it again
// unless quiet. A differing output never traps.
func (r *Replayer) serveOutput(cs *replayConsumer, run *callRun, next *artifact.Entry, p stdlib.Primitive, args []byte, live func() ([]byte, error)) ([]byte, error) {
	text, terr := ioText(p, args)
	if terr != nil {
		return nil, terr
	}
	shown := func() string { return fmt.Sprintf("%s(%q)", p.Name, text) }
	var x artifact.Output
	ok := next != nil && isText(next)
	if ok {
		x = next.Body.(artifact.Output)
	}
	switch {
	case !ok:
		cs.outputs++
		r.finding(artifact.ChangedOutput, cs, "%s, %s printed what the recording does not have", cs.where(), shown())
	default:
		run.used++
		if x.Primitive != p.Name || x.Outcome != artifact.OK || string(x.Result) != text+"\n" {
			cs.outputs++
			r.findingSides(artifact.ChangedOutput, cs, r.entryText(next), shown(), "%s, the output was %s in the recording, but %s in the replay", cs.where(), r.entryText(next), shown())
		}
	}
	if r.opts.Quiet {
		return nil, nil
	}
	return live()
}

// serveExit compares an exit with the recording and performs it; the
// recorded exit first waits for the other consumers to reach their
// recorded ends.
func (r *Replayer) serveExit(cs *replayConsumer, run *callRun, next *artifact.Entry, args []byte, live func() ([]byte, error)) ([]byte, error) {
	code, _ := exitArgs(args)
	x, ok := artifact.Exit{}, false
	if next != nil {
		x, ok = next.Body.(artifact.Exit)
	}
	switch {
	case !ok:
		cs.outputs++
		r.finding(artifact.ChangedExit, cs, "%s, the program exits with code %d where the recording has %s", cs.where(), code, r.entryTextOr(next, "no more calls"))
	default:
		run.used++
		if x.Code != code {
			cs.outputs++
			r.finding(artifact.ChangedExit, cs, "%s, the exit had code %d in the recording, but code %d in the replay", cs.where(), x.Code, code)
		} else {
			r.awaitRecordedEnd(cs)
		}
	}
	return live()
}

// callText shows a call as "std::os::env(\"HOME\", \"\")", with the
// arguments decoded by the primitive's signature in the program (or the
// recorded program), or as hex.
func (r *Replayer) callText(prim string, args []byte) string {
	if prim == "print" {
		if v, err := value.Decode(args, value.StringType); err == nil {
			return "print(" + strings.TrimSuffix(strings.TrimPrefix(value.Format(value.NewList([]value.Value{v})), "["), "]") + ")"
		}
	}
	for _, pt := range []*programTypes{r.types, r.old} {
		if pt == nil {
			continue
		}
		sig, ok := pt.prims[prim]
		if !ok {
			continue
		}
		if vs, err := value.DecodeTuple(args, sig.params); err == nil {
			s := value.Format(value.NewList(vs))
			return prim + "(" + s[1:len(s)-1] + ")"
		}
	}
	if len(args) == 1 && args[0] == 0 {
		return prim + "()" // the empty tuple
	}
	return fmt.Sprintf("%s(0x%x)", prim, args)
}

// entryText shows a recorded call.
func (r *Replayer) entryText(e *artifact.Entry) string {
	switch x := e.Body.(type) {
	case artifact.Invocation:
		return r.callText(x.Primitive, x.Args)
	case artifact.Output:
		if x.Channel == artifact.ChannelStdout || x.Channel == artifact.ChannelStderr {
			return fmt.Sprintf("%s(%q)", x.Primitive, strings.TrimSuffix(string(x.Result), "\n"))
		}
		return r.callText(x.Primitive, x.Args)
	case artifact.Exit:
		return fmt.Sprintf("std::process::exit(%d)", x.Code)
	}
	return e.Body.Kind().String()
}

func (r *Replayer) entryTextOr(e *artifact.Entry, none string) string {
	if e == nil {
		return none
	}
	return r.entryText(e)
}

// ---- publishes, deliveries, traps, the end ----

// Publish checks a message against the recorded message of the same
// identity and counts the deliveries it causes that the recording does
// not have on consumers that have already had all theirs.
func (r *Replayer) Publish(c int, msg host.MessageID, topic int, payload []byte, targets []int) {
	r.publish(c, msg, topic, payload, targets, 0)
}

// PublishAfter checks a timer's message as Publish does, its delay
// included (host.TimerJournal).
func (r *Replayer) PublishAfter(c int, msg host.MessageID, topic int, payload []byte, targets []int, delayMS uint64) {
	r.publish(c, msg, topic, payload, targets, delayMS)
}

// publish is Publish and PublishAfter: delayMS is 0 for an immediate
// message.
func (r *Replayer) publish(c int, msg host.MessageID, topic int, payload []byte, targets []int, delayMS uint64) {
	cs := r.consumer(c)
	if cs != nil {
		cs.events.Add(1)
		cs.published.Add(1)
	}
	id := messageID(msg)
	name := r.topicName(topic)
	i, recorded := r.publishEntry(id)
	sameTopic := false
	switch {
	case !recorded:
		if cs != nil {
			cs.pubMiss++
		}
		r.finding(artifact.ExtraPublish, cs, "consumer %d: published message %s on topic %s, which the recording does not have", c, id, name)
	default:
		var recPayload []byte
		var recDelay uint64
		sameTopic, recPayload, recDelay = r.recordedPublish(i, topic, name)
		if !sameTopic || !bytes.Equal(recPayload, payload) {
			if cs != nil {
				cs.pubMiss++
			}
			r.finding(artifact.ChangedPayload, cs, "consumer %d: message %s was published on topic %s with other payload bytes than in the recording", c, id, name)
		} else if recDelay != delayMS {
			if cs != nil {
				cs.pubMiss++
			}
			r.finding(artifact.ChangedPayload, cs, "consumer %d: message %s was published on topic %s after %d ms, in the recording after %d ms", c, id, name, delayMS, recDelay)
		}
	}
	if topic >= 0 && topic < len(r.img.Topics) {
		expected := recorded && r.stoppedRun && sameTopic
		locked := false
		for _, s := range targets { // guards and work groups decided these
			if s < 0 || s >= len(r.img.Instances) {
				continue
			}
			to := r.consumer(r.img.Instances[s].Consumer)
			if to == nil || !to.done.Load() {
				continue // Next or Deliver accounts for it
			}
			key := deliveryKey{inst: s, msg: id}
			if _, ok := r.lookup(to, key); ok || expected {
				continue
			}
			if !locked {
				r.mu.Lock()
				locked = true
			}
			to.lateUnexp++
			to.countedPub[key] = true
			r.lateFinding(to, key, name)
		}
		if locked {
			r.mu.Unlock()
		}
	}
	if r.rec != nil {
		r.rec.PublishAfter(c, msg, topic, payload, targets, delayMS)
	}
}

// noTopic is topicNum's entry for a topic the artifact does not name.
const noTopic = ^uint32(0)

// recordedPublish returns whether publish entry i is on topic (named
// name), and its payload and delay: read in place (Artifact.PublishPayload)
// with the topic compared by number, or else read whole with the topic
// compared by name.
func (r *Replayer) recordedPublish(i, topic int, name string) (sameTopic bool, payload []byte, delayMS uint64) {
	if topic >= 0 && topic < len(r.topicNum) {
		if num, p, d, ok := r.art.PublishPayload(i); ok {
			return num == r.topicNum[topic], p, d
		}
	}
	x, _ := r.art.Publish(i)
	return x.Topic == name, x.Payload, x.DelayMS
}

// lateFinding records (with r.mu held) an unexpected delivery to a
// consumer that has had all its recorded deliveries.
func (r *Replayer) lateFinding(cs *replayConsumer, key deliveryKey, topic string) {
	r.nFindings++
	if len(r.findings) < maxFindings {
		r.findings = append(r.findings, Finding{Kind: artifact.UnexpectedDelivery, At: artifact.Coordinate{Consumer: uint32(cs.id), N: uint64(cs.pos)},
			Sentence: fmt.Sprintf("consumer %d: delivery #%d %s is not in the recording, which has %s on this consumer",
				cs.id, cs.pos, r.deliveryText(key, topic), plural(uint64(len(cs.deliveries)), "delivery", "deliveries"))})
	}
}

// Deliver moves cs to the handler run of the delivery, checks it against
// the recording, stops there for --at, and records it.
func (r *Replayer) Deliver(c, n int, d *host.Delivery, state host.StateReader) error {
	cs := r.consumer(c)
	if cs == nil {
		return fmt.Errorf("replay: consumer %d is not in the program's consumer table", c)
	}
	cs.events.Add(1)
	r.leaveRun(cs)
	key := keyOf(d)
	cs.n, cs.runInputs, cs.runOutputs = n, 0, 0
	i, ok := cs.given, cs.given >= 0 && cs.givenKey == key
	if ok && cs.givenMore > 0 {
		// The next of a run NextRun gave.
		cs.given, cs.givenKey = i+1, r.key(cs, i+1)
		cs.givenMore--
	} else {
		if !ok {
			i, ok = r.lookup(cs, key)
		}
		cs.given, cs.givenMore = -1, 0
	}
	switch {
	case !ok:
		cs.cur = &callRun{}
		cs.unexpected++
		r.finding(artifact.UnexpectedDelivery, cs, "consumer %d: delivery #%d %s is not in the recording", c, n, r.deliveryText(key, r.topicName(d.Topic)))
	default:
		cs.cur = &cs.deliveries[i].calls
		if i != n {
			r.finding(artifact.ReorderedDelivery, cs, "consumer %d: delivery #%d %s is delivery #%d in the recording", c, n, r.deliveryText(key, r.topicName(d.Topic)), i)
		}
	}
	if r.opts.At != nil {
		if err := r.maybeStop(cs, n, d, state); err != nil {
			return err
		}
		cs.recent = append(cs.recent, recentDelivery{n: n, d: *d})
		if len(cs.recent) > r.opts.Recent {
			cs.recent = cs.recent[1:]
		}
	}
	cs.handled++
	if r.rec != nil {
		return r.rec.Deliver(c, n, d, state)
	}
	return nil
}

// leaveRun notes the recorded calls of cs's current handler run that the
// replay did not make.
func (r *Replayer) leaveRun(cs *replayConsumer) {
	if i, ok := cs.cur.next(cs); ok {
		e := cs.recorded(r.art, i)
		kind := artifact.UnusedInput
		switch e.Body.(type) {
		case artifact.Output:
			kind = artifact.ChangedOutput
		case artifact.Exit:
			kind = artifact.ChangedExit
		}
		r.finding(kind, cs, "%s, the handler run ended before %s, which the recording has next", cs.where(), r.entryText(e))
	}
}

// Trap records the trap and, when it is the recorded trap, waits for the
// other consumers to reach their recorded ends before the run stops.
func (r *Replayer) Trap(c, n int, t *vm.Trap, d *host.Delivery) {
	cs := r.consumer(c)
	if r.rec != nil {
		r.rec.Trap(c, n, t, d)
	}
	if cs == nil || t == nil {
		return
	}
	cs.events.Add(1)
	rt, ok := cs.traps[n]
	switch {
	case ok && rt.Message == t.Message && (rt.TrapKind == "" || rt.TrapKind == t.Kind):
		// A format 1 recording has no kind (""): the message decides.
		r.awaitRecordedEnd(cs)
	case strings.HasPrefix(t.Message, "replay: "):
		// The replayer's own refusal of a call: already a finding, which
		// gets the position of the refused call.
		if len(t.Stack) > 0 && t.Stack[0].Pos != "" {
			r.placeFinding(cs, t.Stack[0].Pos+" in "+t.Stack[0].Func)
		}
	case ok && rt.Message == t.Message:
		r.finding(artifact.ChangedTrap, cs, "%s, the trap %q was of kind %s in the recording, but %s in the replay", cs.where(), t.Message, rt.TrapKind, t.Kind)
	case ok:
		r.finding(artifact.ChangedTrap, cs, "%s, the trap was %q in the recording, but %q in the replay", cs.where(), rt.Message, t.Message)
	default:
		r.finding(artifact.ChangedTrap, cs, "%s, the program trapped (%q) where the recording did not", cs.where(), t.Message)
	}
}

// placeFinding gives the last finding on cs, in its current handler run,
// the source position pos, unless it has one.
func (r *Replayer) placeFinding(cs *replayConsumer, pos string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.findings) - 1; i >= 0; i-- {
		f := &r.findings[i]
		if f.At.Consumer == uint32(cs.id) && f.Startup == (cs.n < 0) && (cs.n < 0 || f.At.N == uint64(cs.n)) {
			if f.Position == "" {
				f.Position = pos
			}
			return
		}
	}
}

// End notes the verdict and finishes the replay's recording.
func (r *Replayer) End(verdict string, code int) {
	r.mu.Lock()
	r.verdict, r.code, r.ended = verdict, code, true
	r.mu.Unlock()
	if r.rec != nil {
		r.rec.End(verdict, code)
	}
}

// awaitRecordedEnd waits until every consumer but cs has been given all
// its recorded deliveries and every stdin binding has published all its
// recorded lines, or until no consumer has made progress for twice the
// hold timeout.
func (r *Replayer) awaitRecordedEnd(cs *replayConsumer) {
	giveUp := 2 * r.hold
	poll := min(giveUp/8, 50*time.Millisecond)
	var last uint64
	since := time.Now()
	for {
		r.mu.Lock()
		var behind *replayConsumer
		for _, o := range r.cons {
			if o != cs && (o.pos < len(o.deliveries) || o.ingress && o.published.Load() < o.recPublishes) {
				behind = o
				break
			}
		}
		wake := r.progressC
		if behind != nil {
			r.waiters++
		}
		r.mu.Unlock()
		if behind == nil {
			return
		}
		var events uint64
		for _, o := range r.cons {
			events += o.events.Load()
		}
		now := time.Now()
		if events != last {
			last, since = events, now
		} else if now.Sub(since) >= giveUp {
			r.mu.Lock()
			r.waiters--
			r.mu.Unlock()
			return // a divergent replay: the missing deliveries are counted at the end
		}
		t := time.NewTimer(poll)
		select {
		case <-wake:
		case <-t.C:
		}
		t.Stop()
		r.mu.Lock()
		r.waiters--
		r.mu.Unlock()
	}
}

// progressed wakes awaitRecordedEnd, if it waits (r.mu held).
func (r *Replayer) progressed() {
	if r.waiters > 0 {
		close(r.progressC)
		r.progressC = make(chan struct{})
	}
}

// ---- order ----

// Next gives consumer c its next recorded delivery, holds while it has
// not arrived, releases the oldest once the hold timed out, and retires
// the consumer when it has had all its recorded deliveries.
func (r *Replayer) Next(c int, pending []host.Delivery) (int, time.Duration) {
	pick, _, wait := r.NextRun(c, pending, 1)
	return pick, wait
}

var _ host.RunOrder = (*Replayer)(nil)

var _ host.LateJournal = (*Replayer)(nil)

// StampsLate reports true but under --at (host.LateJournal): a run of
// given deliveries whose compiled handler calls nothing is checked after
// it ran, which finds what checking each before it finds (the
// deliveries were given as recorded; a handler that would call, trap
// or poll hands its delivery back and is checked before it runs). Under
// --at, Deliver reads the state before the handler and stops there.
func (r *Replayer) StampsLate() bool { return r.opts.At == nil }

// NextRun is Next giving, when the consumer's next recorded delivery is
// the first pending one, also the pending deliveries after it that are
// the recorded deliveries after that one, in order, up to most in all
// (host.RunOrder): a replay that follows its recording then takes its
// deliveries a run at a time. Deliver checks each as it comes (cs.given
// and givenMore), as it checks one that Next gave. Under --at every
// delivery is given on its own.
func (r *Replayer) NextRun(c int, pending []host.Delivery, most int) (int, int, time.Duration) {
	cs := r.consumer(c)
	if cs == nil {
		return 0, 1, 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if cs.pos >= len(cs.deliveries) {
		for i := range pending {
			key := keyOf(&pending[i])
			if _, ok := r.lookup(cs, key); ok || cs.countedPub[key] || r.expectedAtEnd(&pending[i]) {
				continue
			}
			cs.lateUnexp++
			cs.countedPub[key] = true // counted once if asked again (host.RunOrder)
			r.lateFinding(cs, key, r.topicName(pending[i].Topic))
		}
		cs.retired = true
		r.progressed()
		return host.Retire, 0, 0
	}
	if !cs.abandoned {
		want := r.key(cs, cs.pos)
		for i := range pending {
			d := &pending[i]
			if sameDelivery(d, want) {
				cs.given, cs.givenKey, cs.givenMore = cs.pos, want, 0
				cs.gave()
				count := 1
				if i == 0 && r.opts.At == nil {
					for count < most && count < len(pending) && cs.pos < len(cs.deliveries) && sameDelivery(&pending[count], r.key(cs, cs.pos)) {
						cs.gave()
						count++
					}
					cs.givenMore = count - 1
				}
				cs.holdSince = time.Time{}
				r.progressed()
				return i, count, 0
			}
		}
		now := time.Now()
		if cs.holdSince.IsZero() {
			cs.holdSince = now
		}
		if wait := r.hold - now.Sub(cs.holdSince); wait > 0 {
			return host.Hold, 0, wait
		}
		cs.timeouts++
		cs.abandoned = true
		rd, _ := r.art.Delivery(int(cs.deliveries[cs.pos].entry))
		r.nFindings++
		if len(r.findings) < maxFindings {
			r.findings = append(r.findings, Finding{Kind: OrderTimeout, At: artifact.Coordinate{Consumer: uint32(c), N: uint64(cs.pos)},
				Sentence: fmt.Sprintf("consumer %d: delivery #%d (target %s, message %s) did not arrive within %s; released %s and took the rest in arrival order",
					c, cs.pos, rd.Target, recordedMessage(rd), r.hold, r.deliveryText(keyOf(&pending[0]), r.topicName(pending[0].Topic)))})
		}
	}
	cs.given, cs.givenMore = -1, 0
	cs.gave()
	r.progressed()
	return 0, 1, 0
}

// sameDelivery reports whether d is the delivery of identity k.
func sameDelivery(d *host.Delivery, k deliveryKey) bool {
	return d.Target == k.inst && d.Message.Seq == k.msg.Seq && d.Message.Producer == int(k.msg.Producer) && d.IsStart() == k.start
}

// gave counts a delivery given to the consumer (r.mu held).
func (cs *replayConsumer) gave() {
	cs.pos++
	if cs.pos >= len(cs.deliveries) {
		cs.done.Store(true)
	}
}

// expectedAtEnd reports whether a pending delivery that a retiring
// consumer drops is one the recording would have dropped too: the
// recorded run stopped (exit or trap) with it queued. That is a start
// delivery or a delivery of a recorded message.
func (r *Replayer) expectedAtEnd(d *host.Delivery) bool {
	if !r.stoppedRun {
		return false
	}
	if d.IsStart() {
		return true
	}
	i, ok := r.publishEntry(messageID(d.Message))
	if !ok {
		return false
	}
	x, _ := r.art.Publish(i)
	return x.Topic == r.topicName(d.Topic)
}

func recordedMessage(d artifact.Delivery) string {
	if d.Start {
		return "start"
	}
	return d.Message.String()
}

// deliveryText shows a delivery as "(target Ledger, message 3:20, topic T)".
func (r *Replayer) deliveryText(k deliveryKey, topic string) string {
	target := fmt.Sprintf("instance#%d", k.inst)
	if k.inst >= 0 && k.inst < len(r.img.Instances) {
		target = r.img.Instances[k.inst].Name
	}
	if k.start {
		return "(target " + target + ", message start)"
	}
	return "(target " + target + ", message " + k.msg.String() + ", topic " + topic + ")"
}

func (r *Replayer) topicName(t int) string {
	if t >= 0 && t < len(r.img.Topics) {
		return r.img.Topics[t].Name
	}
	return ""
}

// ---- results ----

// Stats returns the replay's counts and findings. Call it after the run.
func (r *Replayer) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Stats{Verdict: r.verdict, ExitCode: r.code}
	for id, cs := range r.cons {
		if r.img.Consumers[id].Kind != image.ConsumerIngress {
			s.Consumers++
		}
		s.Deliveries += cs.handled
		s.JournalCalls += cs.calls
		s.JournalMisses += cs.misses
		s.MissingInputs += cs.missingIn
		s.OrderTimeouts += cs.timeouts
		s.Unexpected += cs.unexpected + cs.lateUnexp
		s.OutputMismatches += cs.outputs
		s.PublishMismatches += cs.pubMiss
	}
	s.Findings = append([]Finding(nil), r.findings...)
	if !r.ended || r.verdict == host.VerdictHalted {
		return s // stopped on purpose: what was not replayed is not missing
	}
	for _, cs := range r.cons {
		missing := max(0, len(cs.deliveries)-cs.pos)
		s.MissingDeliveries += missing
		if missing > 0 && len(s.Findings) < maxFindings {
			s.Findings = append(s.Findings, Finding{Kind: artifact.MissingDelivery, At: artifact.Coordinate{Consumer: uint32(cs.id), N: uint64(cs.pos)},
				Sentence: fmt.Sprintf("consumer %d: the replay ended after %s, the recording has %s",
					cs.id, plural(uint64(cs.pos), "delivery", "deliveries"), plural(uint64(len(cs.deliveries)), "delivery", "deliveries"))})
		}
		unused := func(run *callRun) {
			for _, i := range cs.callEntries[min(run.from+run.used, run.to):run.to] {
				if r.spans.Kind(int(i)) == artifact.KindInvocation {
					s.Unconsumed++
				} else {
					s.OutputMismatches++
				}
			}
		}
		unused(&cs.pre)
		for i := range cs.deliveries {
			unused(&cs.deliveries[i].calls)
		}
	}
	if s.Unconsumed > 0 && len(s.Findings) < maxFindings && !hasKind(s.Findings, artifact.UnusedInput) {
		s.Findings = append(s.Findings, Finding{Kind: artifact.UnusedInput,
			Sentence: fmt.Sprintf("%s of the recording never read in the replay", plural(uint64(s.Unconsumed), "input was", "inputs were"))})
	}
	if !artifact.SameEnding(r.art.Trailer, artifact.Trailer{Verdict: r.verdict, ExitCode: int64(r.code)}) {
		s.Findings = append(s.Findings, Finding{Kind: artifact.ChangedVerdict,
			Sentence: fmt.Sprintf("the run ended with %s in the recording, but %s in the replay",
				r.art.Trailer.VerdictText(), artifact.Trailer{Verdict: r.verdict, ExitCode: int64(r.code)}.VerdictText())})
	}
	return s
}

func hasKind(fs []Finding, k artifact.DivergenceKind) bool {
	for _, f := range fs {
		if f.Kind == k {
			return true
		}
	}
	return false
}

// Apply adds what only the replayer knows to a Diff report: the order
// timeouts, and, when the two artifacts compare equal but the replayer
// saw a divergence (an order timeout whose release happened to keep the
// recorded order, say), that divergence, so the verdict is diverged.
func (s *Stats) Apply(rep *artifact.Report) {
	rep.OrderTimeouts = s.OrderTimeouts
	// Some events leave no entry in the replay's own recording: a
	// delivery that the replay dropped as not in the recording, a call
	// refused as past the journal. The replayer counted them.
	rep.Unexpected = max(rep.Unexpected, s.Unexpected)
	rep.JournalMisses = max(rep.JournalMisses, s.JournalMisses)
	if rep.Verdict != artifact.ReportIdentical || len(s.Findings) == 0 {
		return
	}
	f := s.Findings[0]
	for _, g := range s.Findings {
		if g.Kind == OrderTimeout {
			f = g
			break
		}
	}
	rep.Verdict = artifact.ReportDiverged
	rep.Divergences = append(rep.Divergences, &artifact.Divergence{Kind: f.Kind, At: f.At, Startup: f.Startup,
		End: f.Kind == artifact.ChangedVerdict, RecordedEntry: -1, ReplayedEntry: -1, Sentence: f.Sentence,
		Recorded: f.Recorded, Replayed: f.Replayed, Position: f.Position})
}

// plural returns "1 one" or "n many".
func plural(n uint64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatUint(n, 10) + " " + many
}
