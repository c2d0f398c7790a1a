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
	})
}
