package host

import "testing"

// TestEnginesJSON runs std::json::parse, the Json accessors, matches on
// Json and the JSON view of Json values on both engines.
func TestEnginesJSON(t *testing.T) {
	runEngineCases(t, []engineCase{
		{name: "parse", src: startSrc(`
            let j = unwrap(std::json::parse("{\"b\": [1, 2.5e1, \"x\\n\", null, true], \"a\": {}, \"b\": -0}"));
            print(j);
            print(std::json::parse("[1,]"));
            print(std::json::parse("1e999"));
            print(try unwrap(std::json::parse("{\"a\" 1}")));`),
			stdout: `Json::Obj({"b": Json::Num(-0.0), "a": Json::Obj({})})` + "\n" +
				`Err(Error { kind: "convert", message: "invalid JSON at byte 3: unexpected \"]\"" })` + "\n" +
				`Err(Error { kind: "convert", message: "invalid JSON at byte 0: number 1e999 is outside the range of a float" })` + "\n" +
				`Err(Error { kind: "convert", message: "invalid JSON at byte 5: unexpected \"1\", expected \":\"" })` + "\n"},
		{name: "accessors", src: startSrc(`
            let j = unwrap(std::json::parse("{\"s\": \"hi\", \"n\": 4, \"t\": true, \"l\": [null, 1], \"o\": {\"k\": 2}}"));
            print([std::json::get(j, "s"), std::json::get(j, "zz"), std::json::get(Json::Null, "s")]);
            let l = unwrap(std::json::get(j, "l"));
            print([std::json::at(l, 1), std::json::at(l, 2), std::json::at(l, -1), std::json::at(j, 0)]);
            print([std::json::as_str(unwrap(std::json::get(j, "s"))), std::json::as_str(l)]);
            print([std::json::as_num(unwrap(std::json::get(j, "n"))), std::json::as_num(Json::Str("4"))]);
            print([std::json::as_bool(unwrap(std::json::get(j, "t"))), std::json::as_bool(Json::Null)]);
            print([std::json::as_arr(l), std::json::as_arr(j)]);
            print(std::json::as_obj(unwrap(std::json::get(j, "o"))));
            print(std::json::as_obj(l));
            let built = Json::Arr([Json::Num(1.0), Json::Str("é")]);
            print(built == unwrap(std::json::parse("[1, \"\\u00e9\"]")));`),
			stdout: `[Some(Json::Str("hi")), None, None]` + "\n" +
				`[Some(Json::Num(1.0)), None, None, None]` + "\n" +
				`[Some("hi"), None]` + "\n" + `[Some(4.0), None]` + "\n" + `[Some(true), None]` + "\n" +
				`[Some([Json::Null, Json::Num(1.0)]), None]` + "\n" + `Some({"k": Json::Num(2.0)})` + "\n" + "None\ntrue\n"},
		{name: "match", src: `
fn kind(j: Json) -> string {
    match j {
        Json::Null => { return "null"; },
        Json::Bool(b) => { return "bool " + str(b); },
        Json::Num(n) => { return "num " + str(n); },
        Json::Str(s) => { return "str " + s; },
        Json::Arr(xs) => { return "arr of " + str(len(xs)); },
        Json::Obj(m) => { return "obj with " + join(keys(m), ","); },
    }
}
` + startSrc(`
            for s in ["null", "false", "3", "\"q\"", "[[], []]", "{\"x\": 1, \"y\": 2}"] {
                print(kind(unwrap(std::json::parse(s))));
            }`),
			stdout: "null\nbool false\nnum 3.0\nstr q\narr of 2\nobj with x,y\n"},
		{name: "encode", src: startSrc(`
            let j = unwrap(std::json::parse(" {\"a\" : [1, 2.5, \"x\\u0001\", null, true, {}], \"b\": 1e21, \"c\": 0.1}"));
            print(std::json::encode(j));
            let nan = Json::Arr([Json::Num(0.0 / 0.0), Json::Num(-1.0 / 0.0)]);
            print(std::json::encode(nan));
            let o: Option<Json> = Some(Json::Bool(false));
            let r: Result<Json> = Ok(Json::Null);
            print(std::json::encode([o, None]) + std::json::encode(r));`),
			stdout: `{"a":[1.0,2.5,"x\u0001",null,true,{}],"b":1e+21,"c":0.1}` + "\n" +
				`["NaN","-inf"]` + "\n" + `[false,null]{"ok":null}` + "\n"},
		{name: "own Json shadows", src: `
enum Json { Text(string) }
` + startSrc(`
            print(Json::Text("mine"));
            let j: std::Json = unwrap(std::json::parse("[true]"));
            print(j);
            print(std::json::encode(Json::Text("mine")) + std::json::encode(j));`),
			stdout: "Json::Text(\"mine\")\nstd::Json::Arr([std::Json::Bool(true)])\n" +
				`{"variant":"Text","values":["mine"]}[true]` + "\n"},
		{name: "decode", src: jsonDecodeDecls + startSrc(`
            print(read("{\"id\": \"x\", \"choices\": [{\"index\": 0, \"message\": {\"role\": \"assistant\", \"content\": \"hi\"}}], \"usage\": {\"total\": 1e1}, \"extra\": [1, 2]}"));
            print(read("{\"id\": \"x\", \"choices\": [{\"index\": 0, \"message\": {\"role\": \"assistant\"}}], \"usage\": {}}"));
            print(read("{\"id\": \"x\", \"choices\": [{\"index\": 1.5, \"message\": {}}], \"usage\": {}}"));
            print(read("{\"id\": 1"));
            print(read("[]"));
            let a: Result<All> = std::json::decode(allText);
            print(a);
            let b: All = unwrap(std::json::decode(std::json::encode(unwrap(a))));
            print(b == unwrap(a));
            let ints: [Result<int>] = [std::json::decode("9223372036854775807"), std::json::decode("-9223372036854775809"),
                std::json::decode("1.5e1"), std::json::decode("1e-1"), std::json::decode("-0.0e5"), std::json::decode("1E1000")];
            print(ints);
            let floats: Result<[float]> = std::json::decode("[1, \"NaN\", \"inf\", \"-inf\", 1e-400]");
            print(floats);
            let bad: [Result<Verdict>] = [std::json::decode("{\"variant\": \"Maybe\"}"), std::json::decode("{\"variant\": \"Reject\", \"values\": [\"x\"]}"),
                std::json::decode("{\"variant\": \"Accept\"}"), std::json::decode("\"Accept\"")];
            print(bad);
            let odd: Result<{string: bytes}> = std::json::decode("{\"a b\": {\"bytes\": \"0g\"}}");
            print(odd);
            let res: [Result<Result<int>>] = [std::json::decode("{\"ok\": 1}"), std::json::decode("{\"ok\": 1, \"err\": 2}"),
                std::json::decode("{\"err\": {\"kind\": \"io\"}}")];
            print(res);`),
			stdout: `Ok(Reply { id: "x", choices: [Choice { index: 0, message: Message { role: "assistant", content: "hi", name: None } }], usage: {"total": 10} })` + "\n" +
				`Err(Error { kind: "convert", message: "decode: $.choices[0].message: missing field \"content\"" })` + "\n" +
				`Err(Error { kind: "convert", message: "decode: $.choices[0].index: 1.5 is not an int" })` + "\n" +
				`Err(Error { kind: "convert", message: "decode: invalid JSON at byte 8: unexpected end of text, expected \",\" or \"}\"" })` + "\n" +
				`Err(Error { kind: "convert", message: "decode: $: want an object, got an array" })` + "\n" +
				`Ok(All { i: -9223372036854775808, f: -inf, b: true, s: "é", by: b"\x00\xff", l: [1, 2, 3], m: {"x": 1.0}, o: None, ` +
				`r: Err(Error { kind: "io", message: "m" }), j: Json::Arr([Json::Num(1.0), Json::Obj({"a": Json::Null})]), ` +
				`v: [Verdict::Accept, Verdict::Reject("late", 3)], oo: Some([1]) })` + "\n" + "true\n" +
				`[Ok(9223372036854775807), Err(Error { kind: "convert", message: "decode: $: -9223372036854775809 is out of range for an int" }), ` +
				`Ok(15), Err(Error { kind: "convert", message: "decode: $: 1e-1 is not an int" }), Ok(0), ` +
				`Err(Error { kind: "convert", message: "decode: invalid JSON at byte 0: number 1E1000 is outside the range of a float" })]` + "\n" +
				`Ok([1.0, NaN, inf, -inf, 0.0])` + "\n" +
				`[Err(Error { kind: "convert", message: "decode: $.variant: enum Verdict has no variant \"Maybe\"" }), ` +
				`Err(Error { kind: "convert", message: "decode: $.values: variant Reject takes 2 values, got 1" }), Ok(Verdict::Accept), ` +
				`Err(Error { kind: "convert", message: "decode: $: want Verdict as {\"variant\": …, \"values\": […]}, got a string" })]` + "\n" +
				`Err(Error { kind: "convert", message: "decode: $[\"a b\"].bytes: invalid hex \"0g\"" })` + "\n" +
				`[Ok(Ok(1)), Err(Error { kind: "convert", message: "decode: $: want {\"ok\": …} or {\"err\": {\"kind\": …, \"message\": …}}, got an object" }), ` +
				`Err(Error { kind: "convert", message: "decode: $.err: missing field \"message\"" })]` + "\n"},
	})
}

// jsonDecodeDecls are the types and fns the decode case reads into.
const jsonDecodeDecls = `
type Message { role: string, content: string, name: Option<string> }
type Choice { index: int, message: Message }
type Reply { id: string, choices: [Choice], usage: {string: int} }
enum Verdict { Accept, Reject(string, int) }
type All { i: int, f: float, b: bool, s: string, by: bytes, l: [int], m: {string: float}, o: Option<[int]>,
    r: Result<int>, j: Json, v: [Verdict], oo: Option<[int]> }
const allText: string = "{\"i\": -9223372036854775808, \"f\": \"-inf\", \"b\": true, \"s\": \"\\u00e9\", \"by\": {\"bytes\": \"00FF\"}, \"l\": [1, 2.0, 3e0], \"m\": {\"x\": 1}, \"o\": null, \"r\": {\"err\": {\"kind\": \"io\", \"message\": \"m\"}}, \"j\": [1, {\"a\": null}], \"v\": [{\"variant\": \"Accept\", \"values\": []}, {\"variant\": \"Reject\", \"values\": [\"late\", 3]}], \"oo\": [1]}";
fn read(s: string) -> Result<Reply> {
    let r: Reply = std::json::decode(s)?;
    return Ok(r);
}
`
