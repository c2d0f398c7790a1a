package check

import (
	"net/url"
	"strings"

	"github.com/hale-lang/hale/lang/ast"
)

// checkNATS checks the NATS bindings and exports of main (docs/language.md,
// "Topics across processes"): the topic exists, the URL and the subject
// are well formed, and no topic is both bound and exported on one subject
// (the process would receive its own messages back).
func (c *checker) checkNATS(m *ast.MainDecl) {
	type key struct {
		topic   *ast.Symbol
		subject string
	}
	bound := map[key]ast.Pos{}
	exported := map[key]ast.Pos{}
	seen := map[string]ast.Pos{}
	for _, b := range m.Binds {
		if b == nil || b.NATS == nil || b.Topic == nil {
			continue
		}
		n := b.NATS
		c.natsEndpoint(n, false)
		sym := c.topic(b.Topic)
		if sym == nil {
			continue
		}
		dup := "bind " + n.URL + "\x00" + n.URLEnv + "\x00" + n.Subject + "\x00" + n.Queue + "\x00" + b.Topic.Name
		if at, ok := seen[dup]; ok {
			c.errorf(b.Pos(), "E0527", "this nats binding of %q is written twice (first at %s)", b.Topic.Name, at)
			continue
		}
		seen[dup] = b.Pos()
		if _, ok := bound[key{sym, n.Subject}]; !ok {
			bound[key{sym, n.Subject}] = b.Pos()
		}
	}
	for _, x := range m.Exports {
		if x == nil || x.NATS == nil || x.Topic == nil {
			continue
		}
		if x.Loop != nil {
			c.errorf(x.Pos(), "E0523", "export may not stand inside a spawn loop (export a topic once, at the top of main)")
		}
		n := x.NATS
		c.natsEndpoint(n, true)
		sym := c.topic(x.Topic)
		if sym == nil {
			continue
		}
		dup := "export " + n.URL + "\x00" + n.URLEnv + "\x00" + n.Subject + "\x00" + x.Topic.Name
		if at, ok := seen[dup]; ok {
			c.errorf(x.Pos(), "E0527", "this export of %q is written twice (first at %s)", x.Topic.Name, at)
			continue
		}
		seen[dup] = x.Pos()
		if _, ok := exported[key{sym, n.Subject}]; !ok {
			exported[key{sym, n.Subject}] = x.Pos()
		}
	}
	for k, xat := range exported {
		if bat, ok := bound[k]; ok {
			// Reported at the later of the two, naming the earlier.
			at, other, what := xat, bat, "bound"
			if bat.Offset > xat.Offset {
				at, other, what = bat, xat, "exported"
			}
			c.errorf(at, "E0526", "topic %q is both bound and exported on subject %q (%s at %s): the process would receive its own messages back", k.topic.Name, k.subject, what, other)
		}
	}
}

// natsEndpoint checks a URL and a subject (and a queue group).
func (c *checker) natsEndpoint(n *ast.NATS, export bool) {
	if n.URLEnv != "" || n.URL == "" {
		if n.URL == "" && n.URLEnv == "" {
			c.errorf(n.URLPos, "E0524", "empty NATS URL: write nats(\"nats://host:4222\") or nats(env \"NAME\")")
		} else if !validEnvName(n.URLEnv) {
			c.errorf(n.URLPos, "E0524", "bad environment variable name %q for the NATS URL", n.URLEnv)
		}
	} else if msg := badNATSURL(n.URL); msg != "" {
		c.errorf(n.URLPos, "E0524", "bad NATS URL %q: %s", RedactURL(n.URL), msg)
	}
	if msg := badSubject(n.Subject, export); msg != "" {
		c.errorf(n.SubjectPos, "E0525", "bad NATS subject %q: %s", n.Subject, msg)
	}
	if n.HasQueue {
		switch {
		case n.Queue == "":
			c.errorf(n.QueuePos, "E0525", "empty queue group name")
		case strings.ContainsAny(n.Queue, " \t\r\n*>"):
			c.errorf(n.QueuePos, "E0525", "bad queue group name %q: no spaces or wildcards", n.Queue)
		}
	}
}

// badNATSURL says what is wrong with a NATS URL literal ("" if nothing).
// Several servers may be listed, separated by commas, as nats.go accepts.
func badNATSURL(s string) string {
	for _, one := range strings.Split(s, ",") {
		one = strings.TrimSpace(one)
		u, err := url.Parse(one)
		if err != nil || one == "" {
			return "not a URL"
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return "the scheme must be nats://, tls://, ws:// or wss://"
		}
		if u.Hostname() == "" {
			return "no host"
		}
	}
	return ""
}

// RedactURL replaces the password of each URL in a comma-separated list
// with "xxxxx" (the user name is kept), for diagnostics and `hale shape`,
// which show the program's own literal.
func RedactURL(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			if _, has := u.User.Password(); has {
				parts[i] = u.Redacted()
			}
		}
	}
	return strings.Join(parts, ",")
}

// badSubject says what is wrong with a subject ("" if nothing): NATS
// subjects are dot-separated tokens without whitespace; `*` and `>` are
// wildcards, allowed in a binding (whole tokens, `>` last) and not in an
// export, which sends to one subject.
func badSubject(s string, export bool) string {
	if s == "" {
		return "empty"
	}
	if strings.ContainsAny(s, " \t\r\n") {
		return "a subject may not contain spaces"
	}
	toks := strings.Split(s, ".")
	for i, t := range toks {
		switch {
		case t == "":
			return "empty token (two dots, or a dot at an end)"
		case t == "*" || t == ">":
			if export {
				return "an export sends to one subject: no wildcards (* or >)"
			}
			if t == ">" && i != len(toks)-1 {
				return "> must be the last token"
			}
		case strings.ContainsAny(t, "*>"):
			return "a wildcard must be a whole token"
		}
	}
	return ""
}

// validEnvName reports whether s is a plausible environment variable name.
func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && !(r >= 'A' && r <= 'Z') && !(r >= 'a' && r <= 'z') && !(i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
