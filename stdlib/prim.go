package stdlib

import (
	"sort"
	"strings"
)

// Effect names one kind of interaction with the world. A primitive carries
// exactly one effect; the effects analysis propagates them through calls
// and adds the pseudo-effect publish(T) for every topic a fn can publish.
type Effect string

// Effects of primitives, as written in `@primitive(effect: "…")`.
const (
	Time    Effect = "time"
	Rand    Effect = "rand"
	Entropy Effect = "entropy"
	Env     Effect = "env"
	Args    Effect = "args"
	FSRead  Effect = "fs.read"
	FSWrite Effect = "fs.write"
	Net     Effect = "net"
	IO      Effect = "io"
	Exit    Effect = "exit"

	// NoEffect marks a pure primitive (std::math, std::json::encode). It
	// is written "pure" in the annotation and never appears in an effect
	// set.
	NoEffect Effect = "pure"
)

// Effects lists every effect a primitive can carry, NoEffect excluded, in
// the order of the language reference.
func Effects() []Effect {
	return []Effect{Time, Rand, Entropy, Env, Args, FSRead, FSWrite, Net, IO, Exit}
}

// Known reports whether e is an effect a primitive may declare: one of
// Effects or NoEffect.
func Known(e Effect) bool {
	if e == NoEffect {
		return true
	}
	for _, k := range Effects() {
		if e == k {
			return true
		}
	}
	return false
}

// Nondeterministic reports whether e is an input from, or a change to, the
// world that a @deterministic fn may not reach: time, rand, entropy, env,
// args, fs.read, fs.write or net. Outputs (io, exit) and publish(T) are
// allowed.
func Nondeterministic(e Effect) bool {
	switch e {
	case Time, Rand, Entropy, Env, Args, FSRead, FSWrite, Net:
		return true
	}
	return false
}

// Publish returns the pseudo-effect publish(topic).
func Publish(topic string) Effect { return Effect("publish(" + topic + ")") }

// Topic returns the topic of a publish(T) effect, and false for any other
// effect.
func (e Effect) Topic() (string, bool) {
	s := string(e)
	if !strings.HasPrefix(s, "publish(") || !strings.HasSuffix(s, ")") {
		return "", false
	}
	return s[len("publish(") : len(s)-1], true
}

// JournalKind says how the recorder and the replayer treat a primitive call.
type JournalKind uint8

// Journal kinds.
const (
	// Input: the call and its result (or trap) are journaled; replay
	// checks the call against the journal and serves the recorded result.
	// time, rand, entropy, env, args and fs.read; sleep_ms too, which
	// replay skips rather than performs (SkipOnReplay).
	Input JournalKind = iota + 1
	// Output: the output is journaled, printed again on replay and
	// compared (io, exit).
	Output
	// Virtual: the call and its result are journaled; replay compares the
	// call and serves the recorded result without touching the world
	// (fs.write, net).
	Virtual
	// Pure: not journaled; the VM computes the result.
	Pure
)

func (k JournalKind) String() string {
	switch k {
	case Input:
		return "input"
	case Output:
		return "output"
	case Virtual:
		return "virtual"
	case Pure:
		return "pure"
	}
	return "?"
}

// Primitive is one function the runtime implements.
type Primitive struct {
	// ID is the primitive's number in the program image and at the VM's
	// gateway. IDs are assigned once and never reused or renumbered.
	ID      uint16
	Name    string // qualified: "std::time::now_ms"; "print" for the builtin
	Effect  Effect
	Journal JournalKind
	// SkipOnReplay is set for std::time::sleep_ms: journaled like an
	// input, but replay returns at once instead of sleeping.
	SkipOnReplay bool
}

// PublishID is the gateway ID of `publish T {…}`. Publishing crosses the
// VM's gateway like a primitive call but is not a primitive: its effect is
// publish(T) and the journal records it as a publish, so it has no entry
// in the table (ByID(PublishID) reports false).
const PublishID uint16 = 1

// table is every primitive. Append new ones with the next free ID; never
// renumber or reuse an ID (ID 0 is invalid, 1 is PublishID).
var table = []Primitive{
	{ID: 2, Name: "print", Effect: IO, Journal: Output},

	{ID: 3, Name: "std::time::now_ms", Effect: Time, Journal: Input},
	{ID: 4, Name: "std::time::monotonic_ns", Effect: Time, Journal: Input},
	{ID: 5, Name: "std::time::sleep_ms", Effect: Time, Journal: Input, SkipOnReplay: true},

	{ID: 6, Name: "std::rand::next_int", Effect: Rand, Journal: Input},
	{ID: 7, Name: "std::rand::next_float", Effect: Rand, Journal: Input},

	{ID: 8, Name: "std::os::getrandom", Effect: Entropy, Journal: Input},
	{ID: 9, Name: "std::os::env", Effect: Env, Journal: Input},
	{ID: 10, Name: "std::os::args", Effect: Args, Journal: Input},

	{ID: 11, Name: "std::fs::read_text", Effect: FSRead, Journal: Input},
	{ID: 12, Name: "std::fs::read_bytes", Effect: FSRead, Journal: Input},
	{ID: 13, Name: "std::fs::exists", Effect: FSRead, Journal: Input},
	{ID: 14, Name: "std::fs::list_dir", Effect: FSRead, Journal: Input},
	{ID: 15, Name: "std::fs::write_text", Effect: FSWrite, Journal: Virtual},
	{ID: 16, Name: "std::fs::append_text", Effect: FSWrite, Journal: Virtual},

	{ID: 17, Name: "std::http::get", Effect: Net, Journal: Virtual},
	{ID: 18, Name: "std::http::post", Effect: Net, Journal: Virtual},

	{ID: 19, Name: "std::io::println", Effect: IO, Journal: Output},
	{ID: 20, Name: "std::io::eprintln", Effect: IO, Journal: Output},

	{ID: 21, Name: "std::process::exit", Effect: Exit, Journal: Output},

	{ID: 22, Name: "std::math::sqrt", Effect: NoEffect, Journal: Pure},
	{ID: 23, Name: "std::math::floor", Effect: NoEffect, Journal: Pure},
	{ID: 24, Name: "std::math::ceil", Effect: NoEffect, Journal: Pure},
	{ID: 25, Name: "std::math::pow", Effect: NoEffect, Journal: Pure},
	{ID: 26, Name: "std::math::log", Effect: NoEffect, Journal: Pure},
	{ID: 27, Name: "std::math::exp", Effect: NoEffect, Journal: Pure},

	{ID: 28, Name: "std::json::encode", Effect: NoEffect, Journal: Pure},

	{ID: 29, Name: "std::math::sin", Effect: NoEffect, Journal: Pure},
	{ID: 30, Name: "std::math::cos", Effect: NoEffect, Journal: Pure},
	{ID: 31, Name: "std::math::tan", Effect: NoEffect, Journal: Pure},
	{ID: 32, Name: "std::math::asin", Effect: NoEffect, Journal: Pure},
	{ID: 33, Name: "std::math::acos", Effect: NoEffect, Journal: Pure},
	{ID: 34, Name: "std::math::atan", Effect: NoEffect, Journal: Pure},
	{ID: 35, Name: "std::math::atan2", Effect: NoEffect, Journal: Pure},
	{ID: 36, Name: "std::math::hypot", Effect: NoEffect, Journal: Pure},

	{ID: 37, Name: "std::os::secret", Effect: Env, Journal: Input},
	{ID: 38, Name: "std::http::send", Effect: Net, Journal: Virtual},
}

var (
	byName = map[string]Primitive{}
	byID   = map[uint16]Primitive{}
)

func init() {
	for _, p := range table {
		byName[p.Name] = p
		byID[p.ID] = p
	}
}

// Lookup returns the primitive with the given qualified name
// ("std::time::now_ms", or "print").
func Lookup(name string) (Primitive, bool) {
	p, ok := byName[name]
	return p, ok
}

// ByID returns the primitive with the given ID.
func ByID(id uint16) (Primitive, bool) {
	p, ok := byID[id]
	return p, ok
}

// All returns every primitive sorted by name.
func All() []Primitive {
	out := append([]Primitive(nil), table...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
