package replay_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
)

// savinaArtifacts are the SHA-256 digests of the recordings of the
// Savina ports (cmd/hale/cli/testdata/bench) made with a fixed header
// (savinaInfo), frozen from the recorder as it was before the Append
// that completes a batch wrote it (docs/performance.md §5.24): the
// recorder's work may get cheaper, its bytes may not change. Counting's
// producer and counter are pinned, on two threads, so how their entries
// interleave varies from run to run: its digest is of the artifact with
// each consumer's entries, in their order, one consumer after the other.
var savinaArtifacts = map[string]string{
	"pingpong":   "8ec4197d0077c953a0c3063be97616b3a1eec10429e53d8d38aa5767fa1a90e4",
	"counting":   "54526681eb88ba1742878affb373ca351d883e0c83b3ce65f6984458b452e070",
	"threadring": "74596a30682b25165959cd079af088033302673570418298c9846e2b258eeb6f",
	"forkjoin":   "14c318fddc6384307c1d0ccd15a77a8d430b9fe8f21e4b99977e350ce75d95e6",
}

// TestSavinaArtifactsUnchanged records each Savina port on both engines
// and holds its artifact to the frozen digest.
func TestSavinaArtifactsUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("records 400,000 entries per program")
	}
	for _, name := range benchSavina {
		src, err := os.ReadFile(filepath.Join("..", "cmd", "hale", "cli", "testdata", "bench", name+".hl"))
		if err != nil {
			t.Fatal(err)
		}
		p := compileProgram(t, string(src))
		for _, kind := range benchEngines {
			t.Run(name+"/"+kind.String(), func(t *testing.T) {
				data, _, res := recordFixed(t, p, kind)
				if res.Verdict != host.VerdictQuiescent {
					t.Fatalf("run: verdict %s", res.Verdict)
				}
				if name == "counting" {
					data = byConsumer(t, data)
				}
				sum := sha256.Sum256(data)
				if got := hex.EncodeToString(sum[:]); got != savinaArtifacts[name] {
					t.Errorf("%s recorded on %s: artifact sha256 %s, want %s", name, kind, got, savinaArtifacts[name])
				}
			})
		}
	}
}

// byConsumer re-encodes an artifact with its entries grouped by
// consumer, each consumer's in their order.
func byConsumer(t *testing.T, data []byte) []byte {
	t.Helper()
	a, err := artifact.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(a.Entries, func(x, y artifact.Entry) int { return int(x.Consumer) - int(y.Consumer) })
	out, err := artifact.Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
