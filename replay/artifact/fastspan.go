package artifact

import "math"

// The fast path of admission. A recording is mostly deliveries,
// publishes and invocations (400,000 of them for 200,000 messages), and
// the general reader (cursor), which names every field for its error
// messages, spends about 100 ns on each. fastSpan reads those kinds with
// plain local indexes instead. It accepts exactly what the general
// reader accepts and gives up on anything else (a problem, or a field it
// does not expect), leaving the entry to the general reader, which then
// reads it from its start and reports the problem as always: so the fast
// path can change how long admission takes, never what it says.
// FuzzDecode and FuzzDecodeSealed check that both readers agree.

// fastRecord indexes the entry record at data[at:end] (its marker, its
// length and its body) into sp and returns where the next record starts.
// When it gives up, sp holds nothing of use.
func fastRecord(data []byte, at, end int, names *nameTable, v2 bool, sp *span, wide *[]wideSpan) (int, bool) {
	b := data[:end]
	kind, i, ok := fastUvarint(b, at)
	if !ok {
		return 0, false
	}
	n, i, ok := fastUvarint(b, i)
	if !ok || n > uint64(end-i) {
		return 0, false
	}
	return i + int(n), fastSpan(data, i, i+int(n), Kind(kind), names, v2, sp, wide)
}

// fastSpan indexes the entry whose body is data[at:end], of kind kind,
// when it is a well-formed publish, delivery or invocation (that did not
// trap), of format version 2 or newer when v2, interning its names in names as the general reader does.
// (Spans are filled in place: returning them costs two copies each.) A
// wide span's values are appended to *wide (setPlace).
func fastSpan(data []byte, at, end int, kind Kind, names *nameTable, v2 bool, sp *span, wide *[]wideSpan) bool {
	if kind != KindPublish && kind != KindDelivery && kind != KindInvocation {
		return false
	}
	b := data[:end]
	i := at
	var ok bool
	*sp = span{kind: uint8(kind), name: noName}
	var c, seq, msgSeq uint64
	if c, i, ok = fastUvarint(b, i); !ok || c > math.MaxUint32 {
		return false
	}
	sp.consumer = uint32(c)
	if seq, i, ok = fastUvarint(b, i); !ok {
		return false
	}
	fields := i
	switch kind {
	case KindPublish:
		if sp.name, i, ok = fastName(b, i, names); !ok {
			return false
		}
		if sp.producer, msgSeq, i, ok = fastMessage(b, i); !ok {
			return false
		}
		if _, i, ok = fastBytes(b, i); !ok {
			return false
		}
		if v2 { // the delay
			if _, i, ok = fastUvarint(b, i); !ok {
				return false
			}
		}
	case KindDelivery:
		if sp.name, i, ok = fastName(b, i, names); !ok || i >= len(b) || b[i] > 1 {
			return false
		}
		start := b[i] == 1
		if start {
			sp.flags |= spanStart
		}
		i++
		if !start {
			if sp.producer, msgSeq, i, ok = fastMessage(b, i); !ok {
				return false
			}
			var topic uint32
			if topic, i, ok = fastName(b, i, names); !ok {
				return false
			}
			sp.topic = spanTopic(topic)
		}
	case KindInvocation:
		if sp.name, i, ok = fastName(b, i, names); !ok {
			return false
		}
		if _, i, ok = fastBytes(b, i); !ok || i >= len(b) {
			return false
		}
		switch Outcome(b[i]) {
		case OK:
			_, i, ok = fastBytes(b, i+1)
		case Withheld:
			_, i, ok = fastUvarint(b, i+1)
		default:
			ok = false // a trap's message: the general reader reads it
		}
		if !ok {
			return false
		}
	}
	if i != end {
		return false
	}
	setPlace(sp, wide, seq, msgSeq, fields, end)
	return true
}

// spanTopic is span.topic for a topic numbered id.
func spanTopic(id uint32) uint16 {
	if id >= 1<<16-1 {
		return 0
	}
	return uint16(id + 1)
}

// fastUvarint reads a minimally encoded LEB128 integer at b[i:].
func fastUvarint(b []byte, i int) (uint64, int, bool) {
	var x uint64
	for k := 0; k < 10; k++ {
		if i >= len(b) {
			return 0, i, false
		}
		v := b[i]
		i++
		if k == 9 && v > 1 {
			return 0, i, false
		}
		x |= uint64(v&0x7f) << (7 * k)
		if v < 0x80 {
			return x, i, v != 0 || k == 0
		}
	}
	return 0, i, false
}

// fastBytes skips a length-prefixed byte string at b[i:], returning
// where its bytes start and end.
func fastBytes(b []byte, i int) (from, to int, ok bool) {
	n, i, ok := fastUvarint(b, i)
	if !ok || n > uint64(len(b)-i) {
		return i, i, false
	}
	return i, i + int(n), true
}

// fastName reads a name at b[i:], interns it and returns its number.
func fastName(b []byte, i int, names *nameTable) (uint32, int, bool) {
	from, to, ok := fastBytes(b, i)
	if !ok {
		return 0, to, false
	}
	// Most entries repeat a name of the entries before them: those are
	// compared here, without a call.
	for _, id := range names.recent {
		if int(id) < len(names.list) && names.list[id] == string(b[from:to]) {
			return id, to, true
		}
	}
	id, _ := names.id(b[from:to], true)
	return id, to, true
}

// fastMessage reads a message identity at b[i:].
func fastMessage(b []byte, i int) (producer uint32, seq uint64, _ int, ok bool) {
	p, i, ok := fastUvarint(b, i)
	if !ok || p > math.MaxUint32 {
		return 0, 0, i, false
	}
	seq, i, ok = fastUvarint(b, i)
	return uint32(p), seq, i, ok
}
