package host

import "strings"

// WithholdURLPassword returns rawURL with the password of its userinfo
// (the PW of scheme://user:PW@host/...) replaced by as many '*' as it has
// bytes, as written (percent-escapes included), and whether it had a
// non-empty one. The user name, the rest of the URL and the length stay,
// so that a recording can show which account was used and a replay can
// match the call by length. The password is found where net/url finds
// it, so a string that is not a URL with userinfo comes back unchanged.
func WithholdURLPassword(rawURL string) (string, bool) {
	from, to := urlPassword(rawURL)
	if from >= to {
		return rawURL, false
	}
	return rawURL[:from] + strings.Repeat("*", to-from) + rawURL[to:], true
}

// urlPassword locates the password of rawURL's userinfo, rawURL[from:to],
// following net/url.Parse: the fragment and then the query are cut off,
// the authority follows "//" (after the scheme, if any) up to the next
// '/', the userinfo is what precedes its last '@', and the password
// follows the userinfo's first ':'. from == to when there is none.
func urlPassword(rawURL string) (from, to int) {
	rest := rawURL
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	start := schemeLen(rest)
	rest = rest[start:]
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest = rest[:i]
	}
	if !strings.HasPrefix(rest, "//") {
		return 0, 0
	}
	start += 2
	authority := rest[2:]
	if i := strings.IndexByte(authority, '/'); i >= 0 {
		authority = authority[:i]
	}
	at := strings.LastIndexByte(authority, '@')
	if at < 0 {
		return 0, 0
	}
	colon := strings.IndexByte(authority[:at], ':')
	if colon < 0 {
		return 0, 0
	}
	return start + colon + 1, start + at
}

// schemeLen is the length of rawURL's "scheme:" prefix, 0 when it has
// none (net/url's getScheme: a letter, then letters, digits, '+', '-' or
// '.', then ':').
func schemeLen(rawURL string) int {
	for i := 0; i < len(rawURL); i++ {
		c := rawURL[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return 0
			}
		case c == ':':
			if i == 0 {
				return 0
			}
			return i + 1
		default:
			return 0
		}
	}
	return 0
}
