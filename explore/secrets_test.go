package explore

import (
	"context"
	"testing"

	"github.com/hale-lang/hale/vm/host"
)

// TestSecretsAndSend: a secret is present when the env fixture names it,
// or when there is no env file; send is answered from http.json.
func TestSecretsAndSend(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/http.json", `{"POST http://api.test/v1": {"status": 201, "headers": {}, "body": "ok"}}`)
	withoutEnv, err := LoadFixtures(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir+"/env", "OTHER=1\n")
	otherEnv, err := LoadFixtures(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []host.EngineKind{host.EngineNative, host.EngineWasm} {
		for _, tc := range []struct {
			fx   *Fixtures
			want string
		}{{withoutEnv, "sent 201 ok\n"}, {otherEnv, "no key\n"}} {
			s := newSched(t, "testdata/secret.hl", kind, Config{Fixtures: tc.fx})
			o, err := s.RunSchedule(context.Background(), StrategyPCT, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := printed(t, o); got != tc.want || o.Failure != nil {
				t.Errorf("%v: output %q, failure %+v; want %q", kind, got, o.Failure, tc.want)
			}
		}
	}
}
