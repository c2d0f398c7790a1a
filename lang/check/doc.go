// Package check resolves the names of a parsed Hale program and type-checks
// it. lang.Load calls Check once with every user file (the entry first) and
// every standard library file; Check annotates the trees in place and
// returns every error it finds, not just the first:
//
//   - every Ident and PathExpr that names something gets its ast.Symbol
//     (Ident.Sym, PathExpr.Sym); every expression gets its ast.Type
//     (Expr.TypeOf); the callee of a builtin call gets the instantiated
//     signature as a Func type;
//   - locals get frame slots, locus parameters and state get instance slots
//     (FnDecl.NumSlots, Handler.NumSlots, LocusDecl.NumSlots/InitSlots,
//     ForStmt.HiddenSlot), so later phases never look a name up;
//   - FieldInit.Index, FieldExpr.Index, Pattern.Variant, LocusDecl.Budget,
//     TypeDecl.T, EnumDecl.T and NamedType.T are filled in.
//
// # Design
//
// Checking runs in passes over all files so that declarations may appear
// in any order: collect every top-level name into one scope, resolve struct
// fields and enum variants, resolve signatures (consts, fns, loci) and
// annotations, check const initialisers and their cycles, check bodies,
// then main. Expressions are checked bidirectionally: check(expr, want)
// passes the expected type down, which is how `[]` and `{}` get their type
// (from a declared variable, field, parameter, element, assignment target,
// return type or the other operand of a binary operator). A mismatch is
// reported by the caller that knows the context ("in argument 2 of
// "add""). An expression whose type cannot be known has ast.Invalid, which
// matches everything, so one mistake gives one error.
//
// Names are resolved innermost first: locals (block scoped); in a locus,
// its state, parameters and fns; in a standard library file, the names of
// its own module; top-level names (user names unqualified, standard library
// names only by full path, e.g. std::time::now_ms); builtins. So a local
// may shadow anything, and a top-level fn may shadow a builtin.
//
// Every local declaration gets its own frame slot (no reuse): fn and
// handler parameters first (0..n-1; a handler's message is slot 0), then
// locals in source order. Each for loop reserves hiddenLoopSlots (3)
// consecutive slots starting at ForStmt.HiddenSlot before its own names.
// State initialisers and spawn arguments are expressions and so need no
// frame slots (InitSlots is 0 in v0).
//
// # Decisions where docs/language.md is silent
//
//   - Fn and handler parameters share the scope of the body's top level
//     (as in Go): `fn f(a: int) { let a = 1; }` is a duplicate. Loop names
//     and match bindings live in a scope around their body, which may shadow
//     them. Parameters, loop names and match bindings are read-only.
//   - `_` as a let, for or parameter name declares a slot but no name; in a
//     pattern it binds nothing (Sym nil). `_` is never a value.
//   - int, float, bool, string and bytes cannot be declared as top-level
//     names.
//   - Conversions are only those of docs/language.md: int(x) from float or
//     string, float(x) from int or string; identity conversions such as
//     int(3) are errors. str(x) takes any value.
//   - A variant pattern lists exactly as many names as the variant has
//     values (`Verdict::Reject(_)`, not `Verdict::Reject`). A unit variant is
//     written without parentheses, as a value and as a pattern.
//   - In a match, an arm after a `_` arm is unreachable and an error; a `_`
//     arm after arms that already cover every case is allowed.
//   - Return analysis follows docs/language.md; a block ends when any of its
//     statements ends (code after a return is allowed). assert and
//     std::process::exit do not end a path; only panic does.
//   - A struct type that contains itself through struct fields alone can
//     never be built and is an error; a list, map or enum on the way is fine.
//   - State initialisers see the locus parameters, earlier state and
//     top-level names, but not later state or the locus's fns (which could
//     read state not yet initialised).
//   - main must be in the entry file. A locus without parameters is spawned
//     as `spawn Name;` or `spawn Name();` (both accepted); a locus with
//     parameters needs the parentheses. When a locus is spawned more than
//     once, every one of its spawns needs `as`.
//   - @primitive is written `@primitive(effect: "name")` or bare
//     `@primitive`; the effect name is not checked here (package effects
//     does). Only standard library fns may omit their body, and only with
//     @primitive.
//   - std::json::encode is a builtin even if the standard library declares
//     it; a standard library declaration of it stays in Result.Scope.
//
// # Error codes
//
// Codes are stable; a code never changes meaning. The loader uses E00xx
// and the parser E01xx.
//
//	E0201  undefined name, type, topic, locus or enum
//	E0202  duplicate declaration (top-level, local, parameter, locus member,
//	       field, variant); the message names the first declaration
//	E0203  a name of the wrong kind where a type or enum is needed
//	E0204  a fn, builtin, type, enum or locus used as a value
//	E0205  declaring a built-in type name, "_", Option, Result, Some, None,
//	       Ok or Err at top level
//	E0206  "_" used as a value
//	E0207  later state or a locus fn used in a state initialiser
//	E0209  unknown enum variant
//	E0210  a generic type (Option, Result) without its one type argument,
//	       or type arguments on another type
//
//	E0301  type mismatch: cannot use T as U (in context)
//	E0302  operator not defined on the operand type
//	E0303  mismatched operand types of a binary operator
//	E0304  cannot infer the type of an empty list or map
//	E0305  invalid map key type
//	E0306  wrong number of arguments
//	E0307  calling something that is not a fn, builtin or variant
//	E0308  a call that returns nothing used as a value
//	E0309  unknown field
//	E0310  missing fields in a struct literal or publish
//	E0311  duplicate field in a struct literal or publish
//	E0312  literal of a type that is not a struct
//	E0313  indexing a value that is not a list, map, string or bytes
//	E0314  integer literal overflows int
//	E0315  invalid conversion
//	E0316  invalid argument to a builtin
//	E0317  variant used with the wrong form (missing or extra parentheses)
//	E0318  constant initialiser is not a constant expression
//	E0319  constant of a type that is not int, float, bool, string or bytes
//	E0320  constant refers to itself
//	E0321  field access on a value that is not a struct
//	E0322  invalid recursive struct type
//	E0323  operator ? on something that is not a Result or an Option, or
//	       in a fn (or handler) that does not return the same generic enum
//	E0330  format: not a string literal, or a malformed literal
//	E0331  format: a placeholder's spec does not fit its value's type
//	E0340  a use that would read a secret's contents (comparison, str,
//	       format, print, contains, sort, find, slice, len, JSON, a secret
//	       where a string is expected); names where the secret came from
//	E0341  a topic field whose type holds a secret
//
//	E0401  invalid assignment target (let, parameter, locus parameter,
//	       constant, element of a string or bytes, other expressions)
//	E0402  compound assignment operator not defined on the type
//	E0403  expression statement that is not a call
//	E0404  break or continue outside a loop
//	E0405  invalid for loop (iterated value, number of names)
//	E0406  missing return at the end of a fn with a result
//	E0407  return with a value in a fn without result or a handler
//	E0408  return without a value in a fn with a result
//	E0409  match not exhaustive
//	E0410  duplicate or unreachable match arm
//	E0411  pattern does not fit the matched type, or wrong number of names
//	E0412  match on a type that cannot be matched
//
//	E0501  a name that is not a topic in a handler, publish or bind
//	E0502  duplicate handler (same topic, or a second on start)
//	E0503  missing main
//	E0504  duplicate main
//	E0505  main outside the entry file
//	E0506  spawn of something that is not a locus
//	E0507  wrong number of spawn arguments
//	E0508  duplicate instance name
//	E0509  a locus spawned more than once without "as"
//	E0510  empty pool name
//	E0511  stdin bound to a topic without exactly one string field
//	E0512  stdin bound twice
//	E0520  a spawn loop bound that is not constant (or reads a loop variable)
//	E0521  a spawn inside a spawn loop without "as name[i]"
//	E0522  instance name indices that are not the enclosing loop variables, outermost first, each once
//	E0523  bind or export inside a spawn loop
//	E0524  bad NATS URL: a literal that is not a nats://, tls://, ws:// or
//	       wss:// URL with a host, or an empty env variable name
//	E0525  bad NATS subject or queue group: empty, with spaces, an empty
//	       token, or (on export) a wildcard
//	E0526  a topic both bound and exported on the same subject
//	E0527  the same binding or export written twice
//
//	E0601  unknown annotation
//	E0602  annotation not allowed on this declaration (or outside the
//	       standard library, for @primitive)
//	E0603  bad annotation arguments
//	E0604  duplicate annotation
//	E0605  fn without body (only standard library @primitive fns), or a
//	       @primitive fn with one
//
//	W0101  a plain header of a std::http::Request whose literal name is a
//	       credential header (warning: the program is accepted)
package check
