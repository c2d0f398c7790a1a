package host

import "testing"

// optionDecls are the fns the Option and Result cases call.
const optionDecls = `
type Point { x: int, y: int }
fn find(xs: [int], v: int) -> Option<int> {
    for i in 0..len(xs) {
        if xs[i] == v { return Some(i); }
    }
    return None;
}
fn parse(s: string) -> Result<int> {
    if s == "" { return Err(Error { kind: "arg", message: "empty" }); }
    return Ok(int(s));
}
fn sum(ss: [string]) -> Result<int> {
    var t = 0;
    for s in ss { t += parse(s)?; }
    return Ok(t);
}
fn second(xs: [int]) -> Option<string> {
    let a = get(xs, 1)?;
    return Some(str(a * 10));
}
`

// TestEnginesOptionResult runs Option, Result and Error values, their
// str forms, the builtins on them, matches and ? on both engines.
func TestEnginesOptionResult(t *testing.T) {
	runEngineCases(t, []engineCase{
		{name: "str forms", src: optionDecls + startSrc(`
            print(find([5, 6, 7], 6)); print(find([5, 6, 7], 9));
            print(parse("12")); print(parse(""));
            let ol: [Option<string>] = [Some("x\n"), None];
            print(ol);
            let nested: Option<Option<int>> = Some(None);
            print(nested);
            let m: {string: Result<Point>} = {"a": Ok(Point { x: 1, y: 2 })};
            print(m);
            print(str(Some(1.5)) + str(Some(b"\x00")));`),
			stdout: "Some(1)\nNone\nOk(12)\nErr(Error { kind: \"arg\", message: \"empty\" })\n" +
				"[Some(\"x\\n\"), None]\nSome(None)\n{\"a\": Ok(Point { x: 1, y: 2 })}\nSome(1.5)Some(b\"\\x00\")\n"},
		{name: "question", src: optionDecls + startSrc(`
            print(sum(["1", "2", "3"])); print(sum(["1", "", "3"]));
            print(second([1, 2])); print(second([1]));
            let xs = [1, 2];
            print(sum(["4", ""])); push(xs, 3); print(xs);`),
			stdout: "Ok(6)\nErr(Error { kind: \"arg\", message: \"empty\" })\nSome(\"20\")\nNone\n" +
				"Err(Error { kind: \"arg\", message: \"empty\" })\n[1, 2, 3]\n"},
		{name: "builtins", src: optionDecls + startSrc(`
            let m: {string: Point} = {"a": Point { x: 1, y: 2 }};
            print([get(m, "a"), get(m, "b")]);
            print([get([7, 8], 0), get([7, 8], 2), get([7, 8], -1)]);
            print(unwrap(find([1], 1)) + unwrap_or(find([1], 2), 40));
            print([is_some(find([1], 1)), is_none(find([1], 1)), is_ok(parse("")), is_err(parse(""))]);
            print([Some(1) == Some(1), find([1], 1) != None, parse("") == parse("")]);
            print(unwrap_or(parse(""), -1));`),
			stdout: "[Some(Point { x: 1, y: 2 }), None]\n[Some(7), None, None]\n40\n" +
				"[true, false, false, true]\n[true, true, true]\n-1\n"},
		{name: "match", src: optionDecls + startSrc(`
            for s in ["41", ""] {
                match parse(s) {
                    Ok(n) => { print(n + 1); },
                    Err(e) => { print(e.kind + ": " + e.message); },
                }
            }
            match find([3], 4) { Some(i) => { print(i); }, None => { print("none"); } }`),
			stdout: "42\narg: empty\nnone\n"},
		{name: "json encode", src: optionDecls + startSrc(`
            let ol: Option<[int]> = Some([1, 2]);
            let nl: Option<[int]> = None;
            print(std::json::encode([ol, nl]));
            let r: Result<Option<string>> = Ok(Some("a\n"));
            let rn: Result<Option<string>> = Ok(None);
            let re: Result<Option<string>> = Err(Error { kind: "io", message: "gone" });
            print(std::json::encode([r, rn, re]));
            let m: {string: Result<int>} = {"a": parse("7"), "b": parse("")};
            let rp: Result<Point> = Ok(Point { x: 1, y: 2 });
            print(std::json::encode(m)); print(std::json::encode(rp));
            let mi: {int: Option<int>} = {1: find([4], 4), 2: find([4], 5)};
            print(std::json::encode(mi));
            let nested: Option<Option<int>> = Some(None);
            let nothing: Option<Option<int>> = None;
            let inner: Option<Option<int>> = Some(Some(7));
            print(std::json::encode([nested, nothing, inner]));
            print(std::json::encode(try int("x")));`),
			stdout: "[[1,2],null]\n" + `[{"ok":"a\n"},{"ok":null},{"err":{"kind":"io","message":"gone"}}]` + "\n" +
				`{"a":{"ok":7},"b":{"err":{"kind":"arg","message":"empty"}}}` + "\n" + `{"ok":{"x":1,"y":2}}` + "\n" +
				`[[1,0],[2,null]]` + "\n" + "[null,null,7]\n" +
				`{"err":{"kind":"convert","message":"cannot convert \"x\" to int"}}` + "\n"},
		{name: "unwrap of Err", src: optionDecls + startSrc(`print(unwrap(parse("")));`),
			stderr: "trap: empty\n", code: 3},
		{name: "unwrap of None", src: optionDecls + startSrc(`print(unwrap(find([], 1)));`),
			stderr: "trap: unwrap of None\n", code: 3},
		{name: "own Error shadows", src: `
type Error { code: int }
fn f() -> Result<int> { return Err(std::Error { kind: "k", message: "m" }); }
` + startSrc(`print(Error { code: 1 }); print(f());`),
			stdout: "Error { code: 1 }\nErr(std::Error { kind: \"k\", message: \"m\" })\n"},
	})
}

// tryDecls are the fns the try cases call.
const tryDecls = `
fn div(a: int, b: int) -> int { return a / b; }
fn noisy(n: int) { print("before " + str(n)); let x = 10 / n; print("after " + str(x)); }
fn deep(n: int) -> int { if n == 0 { return [1, 2][5]; } return deep(n - 1) + 1; }
fn walk(xs: [int]) -> int { var s = 0; for x in xs { s += 10 / x; } return s; }
fn q(s: string) -> Result<int> { let n = (try int(s))?; return Ok(n * 2); }
fn inner(s: string) -> Result<int> { let r = try (q(s)?); return r; }
fn forever(n: int) -> int { return forever(n + 1) + 1; }
`

// TestEnginesTry runs try on both engines: every catchable kind, the
// Option<Error> of a call without a value, effects that stay performed,
// for loops that a trap leaves, ? inside and around try, and the traps
// that are never caught.
func TestEnginesTry(t *testing.T) {
	runEngineCases(t, []engineCase{
		{name: "kinds", src: tryDecls + startSrc(`
            print(try div(6, 3)); print(try div(6, 0));
            print(try deep(5));
            let m: {string: int} = {"a": 1};
            print(try m["b"]);
            print(try assert(false, "nope"));
            print(try panic("boom"));
            print(try int("1.5"));
            print(try split("a", ""));
            print(try unwrap(q("y")));
            let e: Result<int> = Err(Error { kind: "custom", message: "mine" });
            print(try unwrap(e));
            let forged: Result<int> = Err(Error { kind: "budget", message: "not really" });
            print(try unwrap(forged));
            let none: Option<int> = None;
            print(try unwrap(none));
            print(try (1 << 64));
            let xs = [1];
            for x in xs { print(try push(xs, 2)); }`),
			stdout: "Ok(2)\nErr(Error { kind: \"arith\", message: \"division by zero\" })\n" +
				"Err(Error { kind: \"index\", message: \"index 5 out of range for list of length 2\" })\n" +
				"Err(Error { kind: \"index\", message: \"key \\\"b\\\" not found in map\" })\n" +
				"Some(Error { kind: \"assert\", message: \"nope\" })\n" +
				"Some(Error { kind: \"panic\", message: \"boom\" })\n" +
				"Err(Error { kind: \"convert\", message: \"cannot convert \\\"1.5\\\" to int\" })\n" +
				"Err(Error { kind: \"arg\", message: \"split with empty separator\" })\n" +
				"Err(Error { kind: \"convert\", message: \"cannot convert \\\"y\\\" to int\" })\n" +
				"Err(Error { kind: \"custom\", message: \"mine\" })\n" +
				"Err(Error { kind: \"panic\", message: \"not really\" })\n" +
				"Err(Error { kind: \"panic\", message: \"unwrap of None\" })\n" +
				"Err(Error { kind: \"arith\", message: \"shift count 64 out of range (0 to 63)\" })\n" +
				"Some(Error { kind: \"state\", message: \"list changed during iteration\" })\n"},
		{name: "effects stay and loops end", src: tryDecls + startSrc(`
            print(try noisy(2));
            try noisy(0);
            let xs = [5, 2, 0, 1];
            print(try walk(xs));
            push(xs, 9);
            print(xs);
            for i in 0..3 {
                match try div(10, i - 1) {
                    Ok(v) => { print(v); },
                    Err(err) => { print(err.kind + "/" + err.message); },
                }
            }`),
			stdout: "before 2\nafter 5\nNone\nbefore 0\n" +
				"Err(Error { kind: \"arith\", message: \"division by zero\" })\n[5, 2, 0, 1, 9]\n" +
				"-10\narith/division by zero\n10\n"},
		{name: "host kinds", src: startSrc(`
            print(try std::fs::read_text("/nonexistent/hale-test"));
            print(try std::rand::next_int(0));
            match try std::http::get("http://127.0.0.1:1/") { Ok(r) => {}, Err(e) => { print(e.kind); } }`),
			stdout: "Err(Error { kind: \"io\", message: \"cannot read \\\"/nonexistent/hale-test\\\": no such file or directory\" })\n" +
				"Err(Error { kind: \"arg\", message: \"std::rand::next_int: n must be positive, got 0\" })\nio\n"},
		{name: "question", src: tryDecls + startSrc(`
            print(q("21")); print(q("x")); print(inner("x")); print(inner("4"));`),
			stdout: "Ok(42)\nErr(Error { kind: \"convert\", message: \"cannot convert \\\"x\\\" to int\" })\n" +
				"Err(Error { kind: \"convert\", message: \"cannot convert \\\"x\\\" to int\" })\nOk(8)\n"},
		{name: "stack overflow is not caught", src: tryDecls + startSrc(`print(try forever(0));`),
			stderr: "trap: stack overflow\n", code: 3},
		{name: "budget is not caught", src: `
fn spin(n: int) -> int { var s = 0; while true { s += 1; } return s; }
@budget(steps: 1000)
locus T { on start { print(try spin(1)); } }
main { spawn T; }`,
			stderr: "trap: budget exhausted\n", code: 3},
		// exit is no trap: the handler runs to its end, then the program
		// exits with the code, try or not.
		{name: "exit", src: startSrc(`print(try std::process::exit(4)); print("goes on");`),
			stdout: "None\ngoes on\n", code: 4},
	})
}
