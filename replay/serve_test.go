package replay

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/value"
)

// TestServeUnboxed serves generated sequences of calls, some as recorded
// and some not (another primitive, other arguments, past the recorded
// calls, recorded output the replay does not print), from a decoded
// artifact and from its indexed copy, with serve reading each recorded
// invocation unboxed and boxed (the reading before 2026-12-02): each
// call's result and error, and the findings and counts at the end, must
// be the same all four ways.
func TestServeUnboxed(t *testing.T) {
	defer func() { unboxedCalls = true }()
	prims := []string{"std::time::now_ms", "std::rand::next_int", "std::os::env"}
	argsOf := func(prim string, n int64) []byte {
		switch prim {
		case "std::rand::next_int":
			return rjArgs(value.Int(n))
		case "std::os::env":
			return rjArgs(value.Str(fmt.Sprint("V", n)), value.Str(""))
		}
		return rjArgs()
	}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 11))
		entries := []artifact.Entry{rjE(0, rjStart("Main"))}
		type call struct {
			prim string
			n    int64
		}
		var calls []call
		for range 1 + rng.IntN(12) {
			prim, n := prims[rng.IntN(len(prims))], int64(rng.IntN(3))
			var b artifact.Body
			switch k := rng.IntN(8); {
			case k == 0:
				b = artifact.Invocation{Primitive: prim, Args: argsOf(prim, n), Outcome: artifact.Trapped, TrapKind: "panic", Message: "boom"}
			case k == 1 && prim == "std::os::env":
				b = artifact.Invocation{Primitive: prim, Args: argsOf(prim, n), Outcome: artifact.Withheld, Length: 3}
			case k == 2:
				b = artifact.Output{Channel: artifact.ChannelStdout, Primitive: "print", Args: rjEnc(value.Str("hi")), Outcome: artifact.OK, Result: []byte("hi\n")}
			default:
				b = rjCall(prim, argsOf(prim, n), rjEnc(value.Int(int64(rng.IntN(100)))))
			}
			entries = append(entries, rjE(0, b))
			// The replay makes the recorded call, or another one.
			if rng.IntN(5) == 0 {
				prim, n = prims[rng.IntN(len(prims))], int64(rng.IntN(3))
			}
			calls = append(calls, call{prim, n})
		}
		if rng.IntN(3) == 0 {
			calls = append(calls, call{"std::time::now_ms", 0}) // past the recorded calls
		}
		a := rjArtifact(artifact.VerdictQuiescent, 0, entries...)
		type outcome struct {
			results []string
			stats   Stats
		}
		var ref *outcome
		for _, art := range []*artifact.Artifact{a, indexedCopy(t, a)} {
			for _, unboxed := range []bool{false, true} {
				unboxedCalls = unboxed
				r := NewReplayer(art, rjProgram(), Options{Quiet: true, Env: map[string]string{"std::os::env": "abc", "V1": "abc"}})
				startMain(t, r)
				got := &outcome{}
				for _, c := range calls {
					res, err := r.Invoke(0, rjPrim(t, c.prim), argsOf(c.prim, c.n), func() ([]byte, error) { return nil, nil })
					got.results = append(got.results, fmt.Sprintf("%x %v", res, err))
				}
				r.End(artifact.VerdictQuiescent, 0)
				got.stats = r.Stats()
				if ref == nil {
					ref = got
				} else if !reflect.DeepEqual(got, ref) {
					t.Fatalf("seed %d (indexed %v, unboxed %v):\n%v\n%+v\nwant\n%v\n%+v", seed, art != a, unboxed, got.results, got.stats, ref.results, ref.stats)
				}
			}
		}
	}
}
