package artifact

import (
	"encoding/hex"
	"strconv"
)

// FormatVersion is the artifact format version this package writes and the
// newest one it reads. Version 2 added the kind of a trap (TrapKind of a
// trapped call and of a trap entry) and a publish's DelayMS; version 1
// artifacts are still read, with those fields empty and 0. Version 3
// added the header's ProcessID (and always writes the memory limit, 0
// when not recorded) and the ingress entry kind (nats bindings).
const FormatVersion = 3

// MinFormatVersion is the oldest artifact format version this package reads.
const MinFormatVersion = 1

// Magic opens every artifact.
const Magic = "HALEREC\x00"

// Env policies, recorded in Header.EnvPolicy.
const (
	EnvWithheld = "withheld" // environment values are recorded as their length only
	EnvFull     = "full"     // environment values are recorded
)

// Consumer kinds, recorded in Consumer.Kind.
const (
	ConsumerMain    = "main"
	ConsumerPool    = "pool"
	ConsumerPinned  = "pinned"
	ConsumerAsyncIO = "async_io"
	ConsumerIngress = "ingress"
)

// Run verdicts, recorded in Trailer.Verdict. Other values are carried as is.
const (
	VerdictQuiescent = "quiescent"
	VerdictExit      = "exit"
	VerdictTrap      = "trap"
	VerdictCanceled  = "canceled" // interrupted by Ctrl-C or SIGTERM (exit code 130)
)

// Output channels, recorded in Output.Channel. Other values are carried as is.
const (
	ChannelStdout  = "stdout"
	ChannelStderr  = "stderr"
	ChannelFSWrite = "fs.write"
	ChannelNet     = "net"
	ChannelNATS    = "nats" // a message sent to a nats export (format 3)
)

// Artifact is a decoded recording.
type Artifact struct {
	Version uint64 // format version read from the file
	Header  Header
	// Entries are the decoded entries of an artifact from Decode or
	// Salvage. An artifact from AdmitIndexed keeps an index instead and leaves
	// Entries nil: Len and Entry work on both.
	Entries []Entry
	Trailer Trailer
	// Complete reports that the trailer was read and every check passed.
	// Decode only returns complete artifacts; Salvage may return others.
	Complete bool

	// The index of an admitted artifact (index.go): its bytes, where
	// each entry lies in them, and the names its entries share.
	indexed bool
	data    []byte
	spans   spanTable
	names   *nameTable
	// counts are an index's entries counted per consumer as it was read
	// (counted set), and ordered is set (atomically, 1) once Verify has
	// found the index consistent (Ordered).
	counts  entryCounts
	counted bool
	ordered uint32
}

// Header identifies the recorded program and lists its consumers.
type Header struct {
	HaleVersion string
	Created     int64    // creation time, Unix nanoseconds
	BuildDigest [32]byte // build-input digest (BLAKE3-256)
	ShapeHash   [32]byte // structural shape hash (BLAKE3-256)
	EnvPolicy   string   // EnvWithheld or EnvFull
	Files       []string // logical paths of the program's files
	Consumers   []Consumer
	Types       []byte // type table written by the runtime; opaque here
	// MemoryLimit is the memory limit of each consumer's data the run had
	// (host.Options.MemoryLimit), in bytes; a replay runs with it. 0: not
	// recorded (recordings made before the field existed), the default.
	// It is not part of the program's identity.
	MemoryLimit int64
	// ProcessID is the run's random 64-bit process id, the first part of
	// the Nats-Msg-Id of every message it sent to NATS; 0 when the
	// program has no nats binding or export (and in format 1 and 2).
	ProcessID uint64
	// Bindings are the program's nats bindings and exports (format 3;
	// never their URLs, which may hold credentials).
	Bindings []Binding
}

// Binding is one nats binding or export of the recorded program.
type Binding struct {
	Kind     string // BindingIngress or BindingEgress
	Topic    string
	Subject  string
	Queue    string // "" for none
	Consumer uint32 // ingress: the binding's consumer; egress: 0
}

// Binding kinds.
const (
	BindingIngress = "bind"
	BindingEgress  = "export"
)

// Consumer is one row of the consumer table: a sequential executor (the
// main bus, a pool, a pinned instance, ...) and the instances it runs.
type Consumer struct {
	ID        uint32
	Kind      string // ConsumerMain, ConsumerPool, ...
	Name      string
	Instances []string
}

// Trailer closes an artifact.
type Trailer struct {
	Entries  uint64          // total number of entries
	Counts   []ConsumerCount // entries per consumer, ascending by consumer, zero counts omitted
	Verdict  string          // VerdictQuiescent, VerdictExit, VerdictTrap, ...
	ExitCode int64
	Checksum [32]byte // BLAKE3-256 of every byte before it
}

// ConsumerCount is the number of entries of one consumer.
type ConsumerCount struct {
	Consumer uint32
	Entries  uint64
}

// Entry is one recorded decision. Seq counts all entries of Consumer from 0.
type Entry struct {
	Consumer uint32
	Seq      uint64
	Body     Body
}

// Body is the kind-specific part of an entry: Invocation, Publish,
// Delivery, Output, Trap, Exit, or Unknown for a kind this version does
// not know.
type Body interface {
	Kind() Kind
}

// Kind is the code of an entry kind in the format.
type Kind uint64

// Entry kinds. Code 0 is reserved for the trailer marker.
const (
	KindInvocation Kind = 1
	KindPublish    Kind = 2
	KindDelivery   Kind = 3
	KindOutput     Kind = 4
	KindTrap       Kind = 5
	KindExit       Kind = 6
	KindIngress    Kind = 7 // format 3
)

// kindNames lists the known kinds by code; the names are those of trace dump.
var kindNames = [...]string{
	KindInvocation: "invocation",
	KindPublish:    "publish",
	KindDelivery:   "delivery",
	KindOutput:     "output",
	KindTrap:       "trap",
	KindExit:       "exit",
	KindIngress:    "ingress",
}

// String returns the kind's name, or "unknown" for a code this version
// does not define.
func (k Kind) String() string {
	if k.known() {
		return kindNames[k]
	}
	return "unknown"
}

func (k Kind) known() bool { return k >= KindInvocation && k <= KindIngress }

// Outcome says how a recorded call ended.
type Outcome uint8

// Call outcomes.
const (
	OK       Outcome = 0 // the call returned Result
	Withheld Outcome = 1 // the call returned a value of Length bytes that was not recorded
	Trapped  Outcome = 2 // the call raised a trap of kind TrapKind with Message
)

// String returns "ok", "withheld" or "trap".
func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Withheld:
		return "withheld"
	case Trapped:
		return "trap"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// Invocation records a nondeterministic primitive call and what it gave
// back. Only the field that matches Outcome is written.
type Invocation struct {
	Primitive string // e.g. "std::time::now_ms"
	Args      []byte // canonical argument bytes
	Outcome   Outcome
	Result    []byte // OK: canonical result bytes
	Length    uint64 // Withheld: length of the value that was not recorded
	Message   string // Trapped: the trap's message
	TrapKind  string // Trapped: the trap's kind ("io", "arg", ...); "" in a format 1 artifact
}

// Publish records a message leaving its producer.
type Publish struct {
	Topic   string
	Message MessageID
	Payload []byte // canonical payload bytes
	DelayMS uint64 // delay before delivery in milliseconds; 0: immediate (always, in format 1)
}

// Delivery records a handler about to run: a message (or the instance's
// start) reaching its target. The consumer's delivery number, the N of
// the coordinate C:N, is not stored: it is the number of earlier delivery
// entries of the same consumer (see Artifact.Deliveries).
type Delivery struct {
	Target  string    // instance name
	Start   bool      // the instance's `on start` run; Message and Topic are then zero
	Message MessageID // identity of the delivered message
	Topic   string
}

// Output records an effect on the outside world: text written to stdout
// or stderr, an fs.write or a net call, with what it returned. Only the
// field that matches Outcome is written.
type Output struct {
	Channel   string // ChannelStdout, ChannelStderr, ChannelFSWrite, ChannelNet, ...
	Primitive string // e.g. "std::io::println", "std::fs::write"
	Args      []byte // canonical argument bytes
	Outcome   Outcome
	Result    []byte // OK: the text written (stdout, stderr) or the canonical result (fs.write, net)
	Length    uint64 // Withheld: length of the result that was not recorded
	Message   string // Trapped: the trap's message
	TrapKind  string // Trapped: the trap's kind; "" in a format 1 artifact
}

// Trap records a trap that stopped a handler or the program.
type Trap struct {
	TrapKind string // the trap's kind ("arith", "panic", ...); "" in a format 1 artifact
	Message  string
	Position string      // "app.hl:17:16"
	Stack    []string    // frames, innermost first: "at app.hl:17:16 in Worker.on Job"
	At       *Coordinate // the delivery being handled; nil outside any handler
}

// Exit records the program asking to exit.
type Exit struct {
	Code     int64
	Position string
	At       *Coordinate // the delivery being handled; nil outside any handler
}

// Ingress records a message received from NATS at the wire, before the
// binding's consumer publishes it: the subject it arrived on, its
// Nats-Msg-Id header (the sender's origin id, "" if it had none) and the
// payload bytes (the canonical encoding of the topic's payload).
type Ingress struct {
	Subject string
	MsgID   string
	Payload []byte
}

// Kind implements Body.
func (Ingress) Kind() Kind { return KindIngress }

// Unknown is an entry of a kind this version does not define. Decoders
// keep its bytes so that re-encoding reproduces the file.
type Unknown struct {
	Code Kind   // the kind code in the file
	Data []byte // the body after consumer and seq
}

// Kind implements Body.
func (Invocation) Kind() Kind { return KindInvocation }

// Kind implements Body.
func (Publish) Kind() Kind { return KindPublish }

// Kind implements Body.
func (Delivery) Kind() Kind { return KindDelivery }

// Kind implements Body.
func (Output) Kind() Kind { return KindOutput }

// Kind implements Body.
func (Trap) Kind() Kind { return KindTrap }

// Kind implements Body.
func (Exit) Kind() Kind { return KindExit }

// Kind implements Body; it is the code found in the file.
func (u Unknown) Kind() Kind { return u.Code }

// MessageID identifies a message: its producer consumer and that
// producer's publish count (from 0) when it published it.
type MessageID struct {
	Producer uint32
	Seq      uint64
}

// String returns the identity as "P:S".
func (m MessageID) String() string {
	return strconv.FormatUint(uint64(m.Producer), 10) + ":" + strconv.FormatUint(m.Seq, 10)
}

// Coordinate names one consumption point: consumer Consumer's delivery
// number N (from 0).
type Coordinate struct {
	Consumer uint32
	N        uint64
}

// String returns the coordinate as "C:N".
func (c Coordinate) String() string {
	return strconv.FormatUint(uint64(c.Consumer), 10) + ":" + strconv.FormatUint(c.N, 10)
}

// DeliveryRef locates one delivery entry.
type DeliveryRef struct {
	Entry int        // the entry's index (Artifact.Entry)
	At    Coordinate // C:N of the delivery
}

// Deliveries lists the artifact's delivery entries in file order: element
// i is the delivery that a bare coordinate i names.
func (a *Artifact) Deliveries() []DeliveryRef {
	var refs []DeliveryRef
	next := map[uint32]uint64{}
	for i := range a.Len() {
		if c, _, kind := a.head(i); kind == KindDelivery {
			refs = append(refs, DeliveryRef{Entry: i, At: Coordinate{c, next[c]}})
			next[c]++
		}
	}
	return refs
}

// hexDigest renders a digest as lower-case hex.
func hexDigest(d [32]byte) string { return hex.EncodeToString(d[:]) }
