package check

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/diag"
)

// The built-in type secret (docs/language.md, "Secrets"). A secret is the
// list of its parts, literal strings and references to environment
// variables; the guest never holds the bytes of a variable. The checker
// sees it as an opaque struct (no fields can be read, no literal can be
// written) whose one hidden field holds the parts, alternating literal and
// variable name and always starting and ending with a literal (which may
// be empty): ["Bearer ", "OPENAI_API_KEY", ""]. Everything that would read
// its contents is refused here (E0340), and so is a topic field whose type
// contains one (E0341); the builtins that only move values accept it.

// SecretTypeName is the name of the built-in secret type, in messages and
// in the runtime's type table.
const SecretTypeName = "secret"

// SecretPartsField is the one (hidden) field of the secret struct.
const SecretPartsField = "parts"

// declareSecretType creates the built-in secret type.
func (c *checker) declareSecretType() {
	c.secretType = &ast.Type{Kind: ast.Struct, Name: SecretTypeName, Fields: []*ast.Field{
		{Name: SecretPartsField, Type: ast.ListOf(ast.StringType)},
	}}
}

// isSecret reports whether t is the built-in secret type.
func (c *checker) isSecret(t *ast.Type) bool { return t != nil && t == c.secretType }

// ContainsSecret reports whether a value of type t can hold a secret: t is
// secret, or a list, map, struct or enum with one inside at any depth.
func ContainsSecret(t *ast.Type) bool {
	return containsSecret(t, map[*ast.Type]bool{})
}

func containsSecret(t *ast.Type, seen map[*ast.Type]bool) bool {
	if t == nil || seen[t] {
		return false
	}
	switch t.Kind {
	case ast.List:
		return containsSecret(t.Elem, seen)
	case ast.Map:
		return containsSecret(t.Key, seen) || containsSecret(t.Elem, seen)
	case ast.Struct:
		if t.Name == SecretTypeName { // no declared type may take the name
			return true
		}
		seen[t] = true
		for _, f := range t.Fields {
			if containsSecret(f.Type, seen) {
				return true
			}
		}
	case ast.Enum:
		seen[t] = true
		for _, v := range t.Variants {
			for _, f := range v.Fields {
				if containsSecret(f, seen) {
					return true
				}
			}
		}
	}
	return false
}

// refuseSecret reports E0340 when the value of e (of type t) holds a
// secret: what is the refused use ("cannot be compared"). It returns
// whether it reported. The message names where the secret came from when
// the checker can tell.
func (c *checker) refuseSecret(e ast.Expr, t *ast.Type, what string) bool {
	if e == nil || invalid(t) || !ContainsSecret(t) {
		return false
	}
	subject := "secret"
	if !c.isSecret(t) {
		subject = fmt.Sprintf("value of type %s holds a secret", t)
		if from := c.secretOrigin(e, 0); from != "" {
			subject += " from " + from + ", and it"
		} else {
			subject += ", and it"
		}
		c.errorf(e.Pos(), "E0340", "%s %s: a secret's value is never readable by the program", subject, what)
		c.secretHint()
		return true
	}
	if from := c.secretOrigin(e, 0); from != "" {
		subject += " from " + from
	}
	c.errorf(e.Pos(), "E0340", "%s %s: a secret's value is never readable by the program", subject, what)
	c.secretHint()
	return true
}

// refuseSecretType is refuseSecret for a type written in the program
// rather than a value (the target type of a JSON decode, say): it reports
// E0340 at pos when t holds a secret, and returns whether it did.
func (c *checker) refuseSecretType(pos ast.Pos, t *ast.Type, what string) bool {
	if invalid(t) || !ContainsSecret(t) {
		return false
	}
	subject := "secret"
	if !c.isSecret(t) {
		subject = fmt.Sprintf("type %s holds a secret, and it", t)
	}
	c.errorf(pos, "E0340", "%s %s: a secret's value is never readable by the program", subject, what)
	c.secretHint()
	return true
}

func (c *checker) secretHint() {
	c.hint("a secret can only be joined with strings (+), moved, and sent as a value of secret_headers in std::http::send")
}

// secretOrigin describes where the secret in e comes from:
// `std::os::secret("KEY") at app.hl:3:14`, or `parameter "key"`, or ""
// when it cannot tell.
func (c *checker) secretOrigin(e ast.Expr, depth int) string {
	if e == nil || depth > 16 {
		return ""
	}
	switch e := e.(type) {
	case *ast.CallExpr:
		if name := secretCallName(e); name != "" {
			return fmt.Sprintf("std::os::secret(%s) at %s", name, e.Pos())
		}
		for _, a := range e.Args {
			if from := c.secretOrigin(a, depth+1); from != "" {
				return from
			}
		}
	case *ast.Name:
		if e.Ident == nil || e.Ident.Sym == nil {
			return ""
		}
		sym := e.Ident.Sym
		if from := c.secretFrom[sym]; from != "" {
			return from
		}
		switch sym.Kind {
		case ast.SymLocal:
			return fmt.Sprintf("%q (%s at %s)", sym.Name, c.localKind[sym], sym.Pos)
		case ast.SymState:
			return fmt.Sprintf("state %q (at %s)", shortName(sym), sym.Pos)
		case ast.SymLocusParam:
			return fmt.Sprintf("locus parameter %q (at %s)", shortName(sym), sym.Pos)
		}
	case *ast.BinaryExpr:
		if from := c.secretOrigin(e.X, depth+1); from != "" {
			return from
		}
		return c.secretOrigin(e.Y, depth+1)
	case *ast.FieldExpr:
		return c.secretOrigin(e.X, depth+1)
	case *ast.IndexExpr:
		return c.secretOrigin(e.X, depth+1)
	case *ast.UnaryExpr:
		return c.secretOrigin(e.X, depth+1)
	case *ast.TryExpr:
		return c.secretOrigin(e.X, depth+1)
	case *ast.QuestionExpr:
		return c.secretOrigin(e.X, depth+1)
	case *ast.StructLit:
		for _, f := range e.Fields {
			if f != nil {
				if from := c.secretOrigin(f.Value, depth+1); from != "" {
					return from
				}
			}
		}
	case *ast.ListLit:
		for _, x := range e.Elems {
			if from := c.secretOrigin(x, depth+1); from != "" {
				return from
			}
		}
	case *ast.MapLit:
		for _, en := range e.Entries {
			if en != nil {
				if from := c.secretOrigin(en.Value, depth+1); from != "" {
					return from
				}
			}
		}
	}
	return ""
}

// secretCallName returns the quoted literal name of a call
// std::os::secret("NAME"), `(a name computed at run time)` for a call with
// another argument, or "" when e is not such a call.
func secretCallName(e *ast.CallExpr) string {
	p, ok := e.Fun.(*ast.PathExpr)
	if !ok || p.Sym == nil || p.Sym.Kind != ast.SymPrim || p.Sym.Name != "std::os::secret" {
		return ""
	}
	if len(e.Args) == 1 {
		if lit, ok := e.Args[0].(*ast.StringLit); ok {
			return strconv.Quote(lit.Value)
		}
	}
	return "…"
}

// noteSecretCall records the literal name of a std::os::secret call, for
// SecretNames.
func (c *checker) noteSecretCall(e *ast.CallExpr) {
	if secretCallName(e) == "" || len(e.Args) != 1 {
		return
	}
	if lit, ok := e.Args[0].(*ast.StringLit); ok {
		if c.secretNames == nil {
			c.secretNames = map[string]bool{}
		}
		c.secretNames[lit.Value] = true
	}
}

// sortedSecretNames returns the recorded secret names, sorted.
func (c *checker) sortedSecretNames() []string {
	out := make([]string, 0, len(c.secretNames))
	for n := range c.secretNames {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// noteSecretLocal remembers where the secret in a local's initialiser
// comes from, so that a later misuse of the local can name it.
func (c *checker) noteSecretLocal(sym *ast.Symbol, init ast.Expr) {
	if sym == nil || !ContainsSecret(sym.Type) {
		return
	}
	if from := c.secretOrigin(init, 0); from != "" {
		c.secretFrom[sym] = from
	}
}

// secretJoin types `x + y` where one operand is a secret: the other must
// be a string or a secret, and the result is a secret.
func (c *checker) secretJoin(xt, yt *ast.Type, opPos ast.Pos) *ast.Type {
	for _, t := range []*ast.Type{xt, yt} {
		if !c.isSecret(t) && t.Kind != ast.String {
			c.errorf(opPos, "E0303", "mismatched types %s and %s for operator +: a secret joins only with a string or a secret", xt, yt)
			return ast.InvalidType
		}
	}
	return c.secretType
}

// topicSecrets reports every topic field whose type holds a secret
// (E0341): messages are recorded, and a secret never is.
func (c *checker) topicSecrets() {
	for _, d := range c.decls {
		td, ok := d.decl.(*ast.TypeDecl)
		if !ok || !td.Topic || td.T == nil {
			continue
		}
		for i, f := range td.T.Fields {
			if ContainsSecret(f.Type) && i < len(td.Fields) && td.Fields[i] != nil && td.Fields[i].Name != nil {
				c.setFile(d.file)
				c.errorf(td.Fields[i].Name.Pos(), "E0341", "topic field %q of %s has type %s, which holds a secret: messages are recorded, and a secret never is", f.Name, td.T.Name, f.Type)
				c.hint("read the secret where it is used, with std::os::secret, instead of sending it in a message")
			}
		}
	}
	c.module = ""
}

// credentialHeaders are the request header names whose plain values are
// withheld from a recording (any case); a literal one in a plain headers
// map gets warning W0101.
var credentialHeaders = map[string]bool{
	"authorization": true, "proxy-authorization": true, "cookie": true, "x-api-key": true, "api-key": true,
}

// IsCredentialHeader reports whether name is a credential header name:
// Authorization, Proxy-Authorization, Cookie, X-Api-Key or Api-Key, in
// any case.
func IsCredentialHeader(name string) bool {
	return credentialHeaders[lowerASCII(name)]
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			b[i] = ch + 'a' - 'A'
		}
	}
	return string(b)
}

// credentialWarning warns (W0101) about a literal credential header name
// at pos in a plain headers map of a std::http::Request.
func (c *checker) credentialWarning(pos ast.Pos, name string) {
	if !IsCredentialHeader(name) {
		return
	}
	c.errs.Add(pos, "W0101", "plain header %q holds a credential: its value is withheld from recordings, but the program can still read and print it", name)
	c.errs[len(c.errs)-1].Severity = diag.SevWarning
	// Only the authorization headers carry a scheme before the credential.
	value := `unwrap(std::os::secret("API_KEY"))`
	if l := strings.ToLower(name); l == "authorization" || l == "proxy-authorization" {
		value = `"Bearer " + ` + value
	}
	c.hint(fmt.Sprintf("put it in secret_headers with a value from std::os::secret: req.secret_headers[%q] = %s;", name, value))
}

// isRequestType reports whether t is std::http::Request.
func isRequestType(t *ast.Type) bool {
	return t != nil && t.Kind == ast.Struct && t.Name == "std::http::Request"
}

// checkHeaderLiteral warns about credential names among the literal keys
// of a map literal given as the plain headers of a request.
func (c *checker) checkHeaderLiteral(v ast.Expr) {
	m, ok := v.(*ast.MapLit)
	if !ok {
		return
	}
	for _, en := range m.Entries {
		if en == nil {
			continue
		}
		if lit, ok := en.Key.(*ast.StringLit); ok {
			c.credentialWarning(lit.Pos(), lit.Value)
		}
	}
}

// checkHeaderIndex warns about `req.headers["Authorization"] = …`.
func (c *checker) checkHeaderIndex(target ast.Expr) {
	ix, ok := target.(*ast.IndexExpr)
	if !ok {
		return
	}
	f, ok := ix.X.(*ast.FieldExpr)
	if !ok || f.Name == nil || f.Name.Name != "headers" || !isRequestType(f.X.TypeOf()) {
		return
	}
	if lit, ok := ix.Index.(*ast.StringLit); ok {
		c.credentialWarning(lit.Pos(), lit.Value)
	}
}
