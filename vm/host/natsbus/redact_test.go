package natsbus

import (
	"errors"
	"strings"
	"testing"
)

// TestRedact: the whole user information goes, whether a user and a
// password, a user alone, or a token in the user-name place (NATS's
// token form), in every URL of a list; a URL without any is unchanged.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"nats://ann:hunter2@10.0.0.1:4222":                     "nats://xxxxx@10.0.0.1:4222",
		"nats://s3cr3tt0ken@10.0.0.1:4222":                     "nats://xxxxx@10.0.0.1:4222",
		"nats://10.0.0.1:4222":                                 "nats://10.0.0.1:4222",
		"nats://a:b@h1:4222,nats://tok@h2:4222,nats://h3:4222": "nats://xxxxx@h1:4222,nats://xxxxx@h2:4222,nats://h3:4222",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	raw := "nats://s3cr3tt0ken@h:1"
	msg := redactErr(errors.New("dial s3cr3tt0ken@h:1 (nats://s3cr3tt0ken@h:1): refused"), raw, Redact(raw))
	if strings.Contains(msg, "s3cr3tt0ken") {
		t.Errorf("redactErr kept the token: %s", msg)
	}
}
