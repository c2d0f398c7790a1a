package artifact

import (
	"encoding/binary"
	"errors"
)

// NATSPrimitive is the primitive name of a message sent to a nats export,
// recorded as an Output on ChannelNATS whose Args are NATSArgs.
const NATSPrimitive = "nats.publish"

// NATSArgs decodes the arguments of a nats output: the canonical tuple
// (subject: string, msg_id: string, payload: bytes), where payload is
// the message's canonical payload. The encoding is the tuple encoding of
// package vm/value (the count 3, then each value: a tag byte, a uvarint
// length and the bytes),
// decoded here by hand since this package imports no other Hale package.
func NATSArgs(args []byte) (subject, msgID string, payload []byte, err error) {
	if len(args) < 1 || args[0] != 3 { // the tuple's count, a uvarint
		return "", "", nil, errBadNATSArgs
	}
	args = args[1:]
	fields := make([][]byte, 0, 3)
	for range 3 {
		var f []byte
		if f, args, err = natsField(args); err != nil {
			return "", "", nil, err
		}
		fields = append(fields, f)
	}
	if len(args) != 0 {
		return "", "", nil, errBadNATSArgs
	}
	return string(fields[0]), string(fields[1]), fields[2], nil
}

var errBadNATSArgs = errors.New("bad nats output arguments")

// natsField reads one string or bytes value: tag, uvarint length, bytes.
func natsField(b []byte) (field, rest []byte, err error) {
	if len(b) < 1 {
		return nil, nil, errBadNATSArgs
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || n > uint64(len(b)-1-k) {
		return nil, nil, errBadNATSArgs
	}
	at := 1 + k
	return b[at : at+int(n)], b[at+int(n):], nil
}
