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
