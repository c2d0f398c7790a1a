package artifact

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
)

// The type table of a header (Header.Types) is what `hale trace dump`
// needs to decode payloads, arguments and results without the program.
// Its layout, version 2:
//
//	uvarint 2                       layout version
//	uvarint T, T × str              topic names, in topic order
//	T × (uvarint k, k × uvarint)    each topic's subscribers: instance indices
//	                                (into the instance names), in main order
//	uvarint I, I × str              instance names, in main order
//	uvarint P, P × str              names of the primitives the program calls
//	type table                      vm/value's canonical type table (EncodeTypes)
//	                                with T + I + 2P roots:
//	  T roots                       each topic's payload struct
//	  I roots                       each instance's state: a struct named after
//	                                its locus whose fields are the state
//	                                variables in declaration order (the state
//	                                tuple is that struct's encoding without its
//	                                0x08 tag)
//	  2P roots                      for each primitive, a struct of its
//	                                parameters (fields "0", "1", …: the
//	                                argument tuple is its encoding without the
//	                                tag), then its result type (void for none)
//
// where str is uvarint(len) and the bytes. print, a builtin whose argument
// is one canonical string rather than a tuple, needs no entry.
//
// This package reads and writes the names and subscriptions; the value
// types are vm/value's encoding, which the runtime side (package replay)
// reads and writes, so that the format knows no runtime package.
const typesLayout = 2

// TypeTable is a header's type table with its value types left encoded.
type TypeTable struct {
	Topics      []string // topic names, in topic order
	Subscribers [][]int  // by topic: subscribing instances (indices into Instances)
	Instances   []string // instance names, in main order
	Prims       []string // the primitives the program calls
	// Values is vm/value's canonical type table with
	// len(Topics)+len(Instances)+2*len(Prims) roots (see the layout).
	Values []byte
}

// Encode returns the type table's bytes (Header.Types).
func (t *TypeTable) Encode() []byte {
	b := binary.AppendUvarint(nil, typesLayout)
	b = appendStrings(b, t.Topics)
	for i := range t.Topics {
		var subs []int
		if i < len(t.Subscribers) {
			subs = t.Subscribers[i]
		}
		b = binary.AppendUvarint(b, uint64(len(subs)))
		for _, inst := range subs {
			b = binary.AppendUvarint(b, uint64(inst))
		}
	}
	b = appendStrings(b, t.Instances)
	b = appendStrings(b, t.Prims)
	return append(b, t.Values...)
}

// DecodeTypeTable reads a header's type table up to its value types,
// which it returns encoded in Values.
func DecodeTypeTable(data []byte) (*TypeTable, error) {
	bad := func(detail string) (*TypeTable, error) {
		return nil, fmt.Errorf("header type table: %s", detail)
	}
	if len(data) == 0 {
		return bad("empty")
	}
	off := 0
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(data[off:])
		if n <= 0 {
			return 0, false
		}
		off += n
		return v, true
	}
	names := func() ([]string, bool) {
		n, ok := uv()
		if !ok || n > uint64(len(data)-off) {
			return nil, false
		}
		out := make([]string, 0, n)
		for range n {
			l, ok := uv()
			if !ok || l > uint64(len(data)-off) {
				return nil, false
			}
			out = append(out, string(data[off:off+int(l)]))
			off += int(l)
		}
		return out, true
	}
	v, ok := uv()
	switch {
	case !ok:
		return bad("bad layout version")
	case v != typesLayout:
		return bad("layout version " + strconv.FormatUint(v, 10) + " is not supported")
	}
	topics, ok1 := names()
	subs := make([][]int, 0, len(topics))
	for range topics {
		n, ok := uv()
		if !ok || n > uint64(len(data)-off) {
			return bad("bad subscriber lists")
		}
		list := make([]int, 0, n)
		for range n {
			inst, ok := uv()
			if !ok || inst > uint64(len(data)) {
				return bad("bad subscriber lists")
			}
			list = append(list, int(inst))
		}
		subs = append(subs, list)
	}
	insts, ok2 := names()
	prims, ok3 := names()
	if !ok1 || !ok2 || !ok3 {
		return bad("bad name lists")
	}
	for _, list := range subs {
		for _, inst := range list {
			if inst >= len(insts) {
				return bad(fmt.Sprintf("a subscriber is instance %d of %d", inst, len(insts)))
			}
		}
	}
	return &TypeTable{Topics: topics, Subscribers: subs, Instances: insts, Prims: prims, Values: data[off:]}, nil
}

// Subscribed reports whether the type table says instance target
// subscribes to topic; known is false when the table cannot tell (no
// table, or names it does not list).
func (t *TypeTable) Subscribed(target, topic string) (yes, known bool) {
	if t == nil || len(t.Subscribers) != len(t.Topics) {
		return false, false
	}
	tp := slices.Index(t.Topics, topic)
	i := slices.Index(t.Instances, target)
	if tp < 0 || i < 0 {
		return false, false
	}
	return slices.Contains(t.Subscribers[tp], i), true
}
