// Package syntax turns Hale source text into a syntax tree (package
// lang/ast). It is the first phase of the front end: lang.Load calls Parse
// for every user file and ParseStdlib for every embedded standard library
// file, then hands the trees to the checker.
//
//	f, errs := syntax.Parse("app.hl", src)
//	if len(errs) > 0 { … diag.Render(errs, …) … }
//
// Every node carries a Span: From is the start of its first token and To
// is just past its last token; positions carry the logical path given to
// Parse, a byte offset, a line and a byte column (both from 1).
//
// # Design
//
// The lexer is a hand-written scanner (scan in lexer.go) of rules written
// as regular expressions; the tests hold it to those expressions, run by
// participle's regular-expression lexer, which the lexer was until its
// cost (half a microsecond a byte) dominated large sources. Literal
// values are decoded and validated right after lexing so that an error
// can point inside a token (at a bad escape or digit). The parser is
// hand-written recursive descent with precedence climbing for binary
// operators. We chose this over participle
// grammar structs plus a conversion pass because the grammar is LL(1)
// except for one context rule (no bare struct literal in an if, while, for
// or match head), which a hand parser handles with a flag; because we want
// messages of our own wording at precise positions (`expected ";" after
// expression, found "}"`), node spans that end at the last token rather than
// at the next one, and a stdlib-only variant of the fn rule; and because a
// single pass builds the ast nodes directly with no intermediate tree.
//
// # Grammar decisions beyond docs/language.md
//
//   - Types may be qualified: `std::http::Response` is a NamedType whose
//     Path has several parts; a struct literal may be qualified likewise.
//   - Number literals: an underscore must stand between two digits (`1_000`,
//     `0xff_ff`, `1_0.0_1`; not `1__0`, `1_`, `0x_ff`, `1_.0`, `1e_3`); hex
//     and binary digits may be upper or lower case, as may the prefix and
//     the exponent letter; a decimal integer of two or more digits cannot
//     start with 0 (`007` is an error, not octal); IntLit.Value is the
//     magnitude as uint64 and a literal above 2^64-1 is an error.
//   - A float needs digits on both sides of the `.`, so `0..5` is a range
//     and `1.foo` is a field access on 1.
//   - String and bytes literals cannot span lines (use \n). \u{…} takes 1
//     to 6 hex digits naming a Unicode scalar value (no surrogates); in a
//     bytes literal it stands for its UTF-8 encoding. \x is bytes-only and
//     takes exactly two hex digits.
//   - A keyword may name a field (in type and topic declarations, struct
//     literals, publish and after "."): `topic Moved { to: Point }`, `m.to`.
//     Everywhere else keywords are reserved.
//   - A missing ";" whose next token is on a later line is reported just
//     past the previous token, on the line that lacks it.
//   - A statement cannot start with a bare block `{ … }` (Hale has none).
//   - A parenthesised expression has no node of its own: the inner node's
//     span is widened to cover the parentheses.
//   - Enums need at least one variant, match at least one arm, annotation
//     argument and variant-type lists at least one element (as in §9); every
//     comma list accepts a trailing comma.
//   - A leading UTF-8 byte order mark is ignored; invalid UTF-8 anywhere is
//     an error.
//
// After a syntax error the parser skips to the next line that starts with
// a top-level keyword and goes on, so one file can report several errors
// (at most 10).
//
// # Error codes
//
// Codes are stable; syntax errors use E01xx.
//
//	E0101  unexpected token: `expected X, found Y`
//	E0102  invalid character
//	E0103  string or bytes literal not terminated
//	E0104  block comment not terminated
//	E0105  invalid escape sequence (reported at its backslash)
//	E0106  malformed number literal (bad digit, misplaced '_', no digits)
//	E0107  number literal out of range (integer above 2^64-1, float
//	       overflow, integer pattern outside int64)
//	E0108  import after a declaration
//	E0109  fn without a body in a user file
//	E0110  nesting too deep (more than 1000 levels)
//	E0111  invalid UTF-8 in the source
package syntax
