package replay

import (
	"cmp"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/value"
)

// TestLoadMatchesReference builds the replayer's tables with load and
// with loadReference, a frozen copy of load as it was before it took the
// entries in the artifact's order (it grouped them by consumer in a flat
// array first), on generated artifacts: every consumer's entries in seq
// order (load's one-pass path), shuffled (its grouped path), with
// consumers the program does not have, messages published twice,
// ingress lines and traps. Both must give the same tables.
func TestLoadMatchesReference(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		a := loadArtifact(rng, seed%3 == 0)
		for _, art := range []*artifact.Artifact{a, indexedCopy(t, a)} {
			got := NewReplayer(art, rjProgram(), Options{})
			want := NewReplayer(art, rjProgram(), Options{})
			resetTables(want)
			want.loadReference()
			compareTables(t, seed, got, want)
		}
	}
}

// TestLoadFromCounts builds the tables of generated artifacts whose
// consumers' entries are in seq order both ways: from the index's counts
// (what load does once Verify has passed the index) and by counting over
// the spans first. The two must agree, and agree with loadReference; and
// an artifact that Verify passed takes the first way.
func TestLoadFromCounts(t *testing.T) {
	defer func(f func(*artifact.Artifact) bool) { ordered = f }(ordered)
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 11))
		art := indexedCopy(t, loadArtifact(rng, false))
		if _, ok := art.Counts(0); !ok {
			t.Fatal("an index has no counts")
		}
		ordered = func(*artifact.Artifact) bool { return true }
		got := NewReplayer(art, rjProgram(), Options{})
		ordered = func(*artifact.Artifact) bool { return false }
		counted := NewReplayer(art, rjProgram(), Options{})
		compareTables(t, seed, got, counted)
		want := NewReplayer(art, rjProgram(), Options{})
		resetTables(want)
		want.loadReference()
		compareTables(t, seed, got, want)
	}
	ordered = (*artifact.Artifact).Ordered

	data, err := artifact.Encode(rjRecording(t))
	if err != nil {
		t.Fatal(err)
	}
	art, err := artifact.Index(data)
	if err != nil {
		t.Fatal(err)
	}
	if art.Ordered() {
		t.Fatal("an index is Ordered before Verify")
	}
	if err := art.Verify(); err != nil {
		t.Fatal(err)
	}
	if !art.Ordered() {
		t.Fatal("an index that Verify passed is not Ordered")
	}
	calls := 0
	ordered = func(a *artifact.Artifact) bool { calls++; return a.Ordered() }
	got := NewReplayer(art, rjProgram(), Options{})
	ordered = func(*artifact.Artifact) bool { return false }
	counted := NewReplayer(art, rjProgram(), Options{})
	compareTables(t, 0, got, counted)
	if calls != 1 || len(got.cons) == 0 || len(got.cons[0].deliveries)+len(got.cons[1].deliveries) == 0 {
		t.Errorf("load asked Ordered %d times; tables %+v", calls, got.cons)
	}
}

// loadArtifact generates the entries of rjProgram's four consumers and
// of consumer 5, which it does not have; shuffled puts each consumer's
// entries out of seq order.
func loadArtifact(rng *rand.Rand, shuffled bool) *artifact.Artifact {
	var entries []artifact.Entry
	seq := map[uint32]uint64{}
	n := 1 + rng.IntN(60)
	targets := []string{"Main", "W", "L", "Gone"}
	for range n {
		c := uint32(rng.IntN(6))
		if c == 4 {
			c = 3 // the stdin binding
		}
		var b artifact.Body
		switch k := rng.IntN(9); {
		case k < 3:
			// A few producers and seqs, so that some messages are
			// published twice, by one consumer or by two.
			b = artifact.Publish{Topic: []string{"Job", "Line"}[rng.IntN(2)], Message: artifact.MessageID{Producer: uint32(rng.IntN(7)), Seq: uint64(rng.IntN(5))},
				Payload: []byte{byte(value.KindStruct), 1, byte(value.KindString), 1, 'a' + byte(rng.IntN(3))}}
		case k < 5:
			d := artifact.Delivery{Target: targets[rng.IntN(len(targets))], Topic: "Job"}
			if rng.IntN(4) == 0 {
				d.Start = true
			} else {
				d.Message = artifact.MessageID{Producer: uint32(rng.IntN(7)), Seq: uint64(rng.IntN(5))}
			}
			b = d
		case k < 7:
			b = rjCall("std::rand::next_int", rjArgs(value.Int(6)), rjEnc(value.Int(int64(rng.IntN(6)))))
		case k == 7:
			b = artifact.Output{Channel: artifact.ChannelStdout, Primitive: "print", Args: []byte{1}, Outcome: artifact.OK, Result: []byte("x\n")}
		default:
			tr := artifact.Trap{TrapKind: "index", Message: "boom", Position: "app.hl:1:1"}
			if rng.IntN(2) == 0 {
				tr.At = &artifact.Coordinate{Consumer: c, N: uint64(rng.IntN(3))}
			}
			b = tr
		}
		entries = append(entries, artifact.Entry{Consumer: c, Seq: seq[c], Body: b})
		seq[c]++
	}
	if shuffled {
		rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	}
	h, _ := NewHeader(rjProgram(), HeaderInfo{HaleVersion: "test", Files: []string{"app.hl"}})
	return &artifact.Artifact{Version: artifact.FormatVersion, Header: *h, Entries: entries, Complete: true,
		Trailer: artifact.Trailer{Verdict: artifact.VerdictQuiescent}}
}

// indexedCopy is a encoded and read back by the indexing decoder, as a
// replay reads it.
func indexedCopy(t *testing.T, a *artifact.Artifact) *artifact.Artifact {
	t.Helper()
	data, err := artifact.Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := artifact.Index(data)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// resetTables undoes load.
func resetTables(r *Replayer) {
	r.pubs, r.other, r.lines, r.natsIn = nil, map[artifact.MessageID]int{}, nil, nil
	for _, cs := range r.cons {
		cs.deliveries, cs.callEntries, cs.pre, cs.recPublishes = nil, nil, callRun{}, 0
		cs.traps = map[int]artifact.Trap{}
	}
}

func compareTables(t *testing.T, seed uint64, got, want *Replayer) {
	t.Helper()
	if !reflect.DeepEqual(got.pubs, want.pubs) || !maps.Equal(got.other, want.other) ||
		!slices.Equal(got.lines, want.lines) || !reflect.DeepEqual(got.natsIn, want.natsIn) {
		t.Fatalf("seed %d: publishes or lines differ:\n%v %v %q\n%v %v %q", seed, got.pubs, got.other, got.lines, want.pubs, want.other, want.lines)
	}
	for g := range got.cons {
		a, b := got.cons[g], want.cons[g]
		if !slices.Equal(a.deliveries, b.deliveries) || !slices.Equal(a.callEntries, b.callEntries) ||
			a.pre != b.pre || a.recPublishes != b.recPublishes || !reflect.DeepEqual(a.traps, b.traps) {
			t.Fatalf("seed %d: consumer %d differs:\n%+v %v %+v %d %v\n%+v %v %+v %d %v", seed, g,
				a.deliveries, a.callEntries, a.pre, a.recPublishes, a.traps, b.deliveries, b.callEntries, b.pre, b.recPublishes, b.traps)
		}
	}
}

// loadReference is load before 2026-12-02 (with the addPublish of then):
// the reference for TestLoadMatchesReference. Only the types of the
// tables it fills changed since (entry numbers in 32 bits).
func (r *Replayer) loadReference() {
	a := r.art
	spans, _ := a.Heads()
	ingress := -1
	natsOf := map[int]int{}
	for i, in := range r.img.Ingress {
		switch {
		case in.NATS != nil:
			natsOf[in.Consumer] = i
		case ingress < 0:
			ingress = in.Consumer
		}
	}
	addPublish := func(m artifact.MessageID, i int) {
		if int64(m.Producer) >= int64(len(r.cons)) || m.Seq > uint64(r.art.Len()) {
			if _, dup := r.other[m]; !dup {
				r.other[m] = i
			}
			return
		}
		seqs := r.pubs[m.Producer]
		for uint64(len(seqs)) <= m.Seq {
			seqs = append(seqs, -1)
		}
		if seqs[m.Seq] < 0 {
			seqs[m.Seq] = int32(i) // the tables' type since (32 bits)
		}
		r.pubs[m.Producer] = seqs
	}
	nc := len(r.cons)
	group := func(c uint32) int { return int(min(uint64(c), uint64(nc))) }
	start := make([]int, nc+2)
	nPublishes := make([]int, nc)
	for i := range spans.Len() {
		g := group(spans.Consumer(i))
		start[g+1]++
		if g < nc && spans.Kind(i) == artifact.KindPublish {
			nPublishes[g]++
		}
	}
	r.pubs = make([][]int32, nc)
	for g, n := range nPublishes {
		r.pubs[g] = make([]int32, 0, n+1)
	}
	for g := 1; g < len(start); g++ {
		start[g] += start[g-1]
	}
	flat := make([]int, spans.Len())
	fill := slices.Clone(start[:nc+1])
	for i := range spans.Len() {
		g := group(spans.Consumer(i))
		flat[fill[g]] = i
		fill[g]++
	}
	lineType := &value.Type{Kind: value.KindStruct, Fields: []value.Field{{Name: "text", Type: value.StringType}}}
	for g := 0; g <= nc; g++ {
		idx := flat[start[g]:start[g+1]]
		if g == nc {
			for _, i := range idx {
				if sp := spans.At(i); sp.Kind() == artifact.KindPublish {
					addPublish(sp.Message(), i)
				}
			}
			continue
		}
		bySeq := func(i, j int) int { return cmp.Compare(spans.Seq(i), spans.Seq(j)) }
		if !slices.IsSortedFunc(idx, bySeq) {
			slices.SortStableFunc(idx, bySeq)
		}
		cs := r.cons[g]
		var calls []int
		runFrom := 0
		closeRun := func() {
			run := callRun{from: int32(runFrom), to: int32(len(calls))}
			if n := len(cs.deliveries); n > 0 {
				cs.deliveries[n-1].calls = run
			} else {
				cs.pre = run
			}
			runFrom = len(calls)
		}
		for _, i := range idx {
			sp := spans.At(i)
			switch sp.Kind() {
			case artifact.KindPublish:
				addPublish(sp.Message(), i)
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
				closeRun()
				cs.deliveries = append(cs.deliveries, recordedDelivery{entry: int32(i)})
			case artifact.KindInvocation, artifact.KindOutput, artifact.KindExit:
				calls = append(calls, i)
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
		closeRun()
		cs.callEntries = make([]int32, len(calls))
		for k, i := range calls {
			cs.callEntries[k] = int32(i)
		}
	}
}

// rjRecording is a consistent recording of rjProgram (Verify passes it):
// Main starts, reads a line, draws a number and publishes two jobs,
// which W and L both handle, W drawing a number for each.
func rjRecording(t *testing.T) *artifact.Artifact {
	t.Helper()
	line := []byte{byte(value.KindStruct), 1, byte(value.KindString), 1, 'a'}
	a := rjArtifact(artifact.VerdictQuiescent, 0,
		rjE(3, artifact.Publish{Topic: "Line", Message: artifact.MessageID{Producer: 3, Seq: 0}, Payload: line}),
		rjE(0, rjStart("Main")),
		rjE(0, artifact.Delivery{Target: "Main", Topic: "Line", Message: artifact.MessageID{Producer: 3, Seq: 0}}),
		rjE(0, rjCall("std::rand::next_int", rjArgs(value.Int(6)), rjEnc(value.Int(3)))),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 0}, Payload: rjJob(1)}),
		rjE(0, artifact.Publish{Topic: "Job", Message: artifact.MessageID{Producer: 0, Seq: 1}, Payload: rjJob(2)}),
		rjE(1, rjDeliver("W", 0, 0)),
		rjE(1, rjCall("std::rand::next_int", rjArgs(value.Int(6)), rjEnc(value.Int(4)))),
		rjE(2, rjDeliver("L", 0, 0)),
		rjE(1, rjDeliver("W", 0, 1)),
		rjE(1, rjCall("std::rand::next_int", rjArgs(value.Int(6)), rjEnc(value.Int(5)))),
		rjE(2, rjDeliver("L", 0, 1)),
	)
	if err := a.Verify(); err != nil {
		t.Fatalf("rjRecording is not consistent: %v", err)
	}
	return a
}
