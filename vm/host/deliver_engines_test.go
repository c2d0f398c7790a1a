package host

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/hale-lang/hale/vm/value"
)

// payloadJournal is a logJournal that also keeps every published
// payload's bytes, in the order they were published.
type payloadJournal struct {
	*logJournal
	payloads []string
}

func (j *payloadJournal) Publish(c int, msg MessageID, topic int, payload []byte, targets []int) {
	j.logJournal.Publish(c, msg, topic, payload, targets)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.payloads = append(j.payloads, fmt.Sprintf("%s %x", j.prog.Topics[topic].Name, payload))
}

// TestEnginesScalarPayloads publishes and delivers payloads of int, float
// and bool fields (which take the scalar codec of vm/deliver.go from the
// second delivery of a topic on) with the values at the edges of their
// encodings (NaN, -0.0, infinities, the int extremes, varints of one and
// of ten bytes), beside a payload with a string (the general codec) and
// a handler that keeps its payload (decoded afresh each time). Both
// engines must print the same, publish the same bytes, and those bytes
// must be the general encoder's.
func TestEnginesScalarPayloads(t *testing.T) {
	img := compileAll(t, `
topic S { n: int, x: float, b: bool }
topic L { n: int, label: string }
topic K { n: int }
locus Src {
    on start {
        let nan = std::math::sqrt(-1.0);
        let inf = std::math::exp(1000.0);
        publish S { n: 0, x: 0.0, b: false };
        publish S { n: -1, x: -0.0, b: true };
        publish S { n: 63, x: nan, b: false };
        publish S { n: -64, x: inf, b: true };
        publish S { n: 64, x: -inf, b: true };
        publish S { n: 9223372036854775807, x: 1.5e-300, b: false };
        publish S { n: -9223372036854775807 - 1, x: 2.5, b: true };
        for i in 0..5 { publish L { n: i, label: "item" }; publish K { n: i * 1000003 }; }
    }
}
locus Sum {
    var total: int = 0;
    var fs: float = 0.0;
    var trues: int = 0;
    var last: float = 0.0;
    on S(s) {
        total = total ^ s.n;
        last = s.x;
        if s.x == s.x { fs += s.x * 0.5; }
        if s.b { trues += 1; }
        print(str(s.n) + " " + str(s.x) + " " + str(s.b) + " " + str(total) + " " + str(trues));
    }
    on L(l) { total += l.n; print(l.label + " " + str(l.n)); }
}
locus Keep {
    var kept: [K] = [];
    on K(k) { push(kept, k); print("kept " + str(len(kept)) + " " + str(k.n)); }
}
main { spawn Src; spawn Sum; spawn Keep; }
`)
	var outs []outcome
	var logs [][]string
	for _, kind := range realEngines {
		j := &payloadJournal{logJournal: newLogJournal(img)}
		o := runWith(t, img, Options{Engine: kind, Journal: j})
		if o.err != nil || o.res.Code != 0 {
			t.Fatalf("%v: %v %+v\n%s", kind, o.err, o.res, o.stderr)
		}
		j.check(t)
		outs = append(outs, o)
		logs = append(logs, j.payloads)
	}
	if outs[0].stdout != outs[1].stdout {
		t.Fatalf("engines disagree:\nnative:\n%s\nwasm:\n%s", outs[0].stdout, outs[1].stdout)
	}
	if strings.Join(logs[0], "\n") != strings.Join(logs[1], "\n") {
		t.Fatalf("published payloads differ:\nnative:\n%s\nwasm:\n%s", strings.Join(logs[0], "\n"), strings.Join(logs[1], "\n"))
	}
	if len(logs[0]) != 17 {
		t.Fatalf("%d payloads published, want 17", len(logs[0]))
	}
	// The scalar encoder wrote the general encoder's bytes: canonical
	// bytes decode, and encode back to themselves.
	sType := &value.Type{Kind: value.KindStruct, Name: "S", Fields: []value.Field{
		{Name: "n", Type: value.IntType}, {Name: "x", Type: value.FloatType}, {Name: "b", Type: value.BoolType}}}
	for _, line := range logs[0] {
		hexPayload, ok := strings.CutPrefix(line, "S ")
		if !ok {
			continue
		}
		b, err := hex.DecodeString(hexPayload)
		if err != nil {
			t.Fatal(err)
		}
		v, err := value.Decode(b, sType)
		if err != nil {
			t.Fatalf("payload %x: %v", b, err)
		}
		if again, err := value.Encode(nil, v); err != nil || !bytes.Equal(again, b) {
			t.Errorf("payload %x encodes back to %x (%v)", b, again, err)
		}
	}
	if !strings.Contains(outs[0].stdout, "63 NaN false") {
		t.Errorf("output:\n%s", outs[0].stdout)
	}
}
