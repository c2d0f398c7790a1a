package vm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/hale-lang/hale/vm"
)

// bodyCase is a program made of declarations and the statements of the
// start handler of a single locus; want is what it prints, followed by
// "trap: <message>" when it traps.
type bodyCase struct {
	name  string
	decls string
	body  string
	want  string
}

// runBody runs a bodyCase and renders its output and trap message.
func runBody(t *testing.T, c bodyCase) string {
	t.Helper()
	h := &fakeHost{}
	_, err := run(t, compile(t, startProg(c.decls, c.body)), h)
	out := h.out.String()
	if err != nil {
		var tr *vm.Trap
		if !errors.As(err, &tr) {
			t.Fatalf("error that is not a trap: %v", err)
		}
		out += "trap: " + tr.Message + "\n"
	}
	return out
}

func runBodyCases(t *testing.T, cases []bodyCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := runBody(t, c)
			want := strings.TrimLeft(c.want, "\n")
			if got != want {
				t.Errorf("program:\n%s\n%s\ngot:\n%s\nwant:\n%s", c.decls, c.body, got, want)
			}
		})
	}
}

func TestIntArithmetic(t *testing.T) {
	runBodyCases(t, []bodyCase{
		{name: "basic", body: `
            print(1 + 2 * 3);
            print((1 + 2) * 3);
            print(7 - 10);
            print(-7 / 2);
            print(7 / -2);
            print(-7 % 3);
            print(7 % -3);
            print(-(5));
            let x = 5; print(-x);
            print(0xff + 0b101 + 1_000);`,
			want: "7\n9\n-3\n-3\n-3\n-1\n1\n-5\n-5\n1260\n"},
		{name: "min literal", body: `print(-9223372036854775808); print(9223372036854775807);`,
			want: "-9223372036854775808\n9223372036854775807\n"},
		{name: "add overflow", body: `let x = 9223372036854775807; print(x + 1);`, want: "trap: integer overflow\n"},
		{name: "add const overflow", body: `var x = 9223372036854775800; x += 7; print(x); x += 1;`,
			want: "9223372036854775807\ntrap: integer overflow\n"},
		{name: "add negative overflow", body: `let x = -9223372036854775807; print(x - 1); print(x - 2);`,
			want: "-9223372036854775808\ntrap: integer overflow\n"},
		{name: "sub overflow", body: `let x = -2; let y = 9223372036854775807; print(x - y);`, want: "trap: integer overflow\n"},
		{name: "sub overflow positive", body: `let x = 0; let y = -9223372036854775808; print(x - y);`, want: "trap: integer overflow\n"},
		{name: "mul", body: `let a = 3037000499; print(a * a); let b = -4294967296; print(b * 2147483648);`,
			want: "9223372030926249001\n-9223372036854775808\n"},
		{name: "mul overflow", body: `let a = 3037000500; print(a * a);`, want: "trap: integer overflow\n"},
		{name: "mul overflow small", body: `let a = 4294967296; print(a * a);`, want: "trap: integer overflow\n"},
		{name: "mul min by -1", body: `let a = -9223372036854775808; let b = -1; print(b * a);`, want: "trap: integer overflow\n"},
		{name: "mul min by -1 swapped", body: `let a = -9223372036854775808; let b = -1; print(a * b);`, want: "trap: integer overflow\n"},
		{name: "mul min by 1", body: `let a = -9223372036854775808; let b = 1; print(a * b); print(b * a);`,
			want: "-9223372036854775808\n-9223372036854775808\n"},
		{name: "div by zero", body: `let z = 0; print(1 / z);`, want: "trap: division by zero\n"},
		{name: "rem by zero", body: `let z = 0; print(1 % z);`, want: "trap: division by zero\n"},
		{name: "min div -1", body: `let a = -9223372036854775808; let b = -1; print(a / b);`, want: "trap: integer overflow\n"},
		{name: "min rem -1", body: `let a = -9223372036854775808; let b = -1; print(a % b);`, want: "trap: integer overflow\n"},
		{name: "neg min", body: `let a = -9223372036854775808; print(-a);`, want: "trap: integer overflow\n"},
		{name: "compound", body: `
            var x = 10; x += 5; x -= 3; x *= 4; x /= 5; x %= 7; print(x);`,
			want: "2\n"},
		{name: "comparisons", body: `
            let a = 3; let b = 5;
            print(a < b); print(a <= b); print(a > b); print(a >= b); print(a == b); print(a != b);
            print(a < 3); print(a <= 3); print(3 > a); print(3 >= a); print(a == 3); print(3 != a);`,
			want: "true\ntrue\nfalse\nfalse\nfalse\ntrue\nfalse\ntrue\nfalse\ntrue\ntrue\nfalse\n"},
		{name: "big constants", body: `
            let a = 10000000000; print(a + 10000000000); print(a < 10000000001); print(a == 10000000000);`,
			want: "20000000000\ntrue\ntrue\n"},
		{name: "abs min max", body: `
            print(abs(-3)); print(abs(4)); print(min(3, -2)); print(max(3, -2));`,
			want: "3\n4\n-2\n3\n"},
		{name: "abs min traps", body: `let a = -9223372036854775808; print(abs(a));`, want: "trap: integer overflow\n"},
	})
}

func TestFloats(t *testing.T) {
	runBodyCases(t, []bodyCase{
		{name: "arithmetic", body: `
            print(1.5 + 2.25); print(1.0 - 3.5); print(2.0 * 0.25); print(1.0 / 4.0);
            print(7.5 % 2.0); print(-7.5 % 2.0); print(-(1.5));
            let z = 0.0; print(1.0 / z); print(-1.0 / z); print(z / z);`,
			want: "3.75\n-2.5\n0.5\n0.25\n1.5\n-1.5\n-1.5\ninf\n-inf\nNaN\n"},
		{name: "str formats", body: `
            print(1.0); print(0.1); print(-0.0); print(1e-7); print(1e21); print(1.5e20);
            print(123456.789); print(0.0001); print(0.00001); print(100.0);
            print(2.0 / 3.0);`,
			want: "1.0\n0.1\n-0.0\n1e-07\n1e+21\n150000000000000000000.0\n123456.789\n0.0001\n1e-05\n100.0\n0.6666666666666666\n"},
		{name: "comparisons", body: `
            let a = 1.5; let b = 2.5; let z = 0.0; let n = z / z;
            print(a < b); print(a <= b); print(a > b); print(a >= b); print(a == b); print(a != b);
            print(n == n); print(n != n); print(n < a); print(n >= a); print(n > a); print(n <= a);
            print(-0.0 == 0.0);`,
			want: "true\ntrue\nfalse\nfalse\nfalse\ntrue\nfalse\ntrue\nfalse\nfalse\nfalse\nfalse\ntrue\n"},
		{name: "conversions", body: `
            print(float(3)); print(int(3.9)); print(int(-3.9)); print(int(1e18));
            print(float("2.5")); print(float("1e3")); print(float("inf")); print(float("-0"));
            print(int("42")); print(int("-7")); print(int("+7"));`,
			want: "3.0\n3\n-3\n1000000000000000000\n2.5\n1000.0\ninf\n-0.0\n42\n-7\n7\n"},
		{name: "int of nan", body: `let z = 0.0; print(int(z / z));`, want: "trap: cannot convert NaN to int\n"},
		{name: "int of inf", body: `let z = 0.0; print(int(1.0 / z));`, want: "trap: cannot convert inf to int\n"},
		{name: "int of 2^63", body: `print(int(9223372036854775808.0));`, want: "trap: cannot convert 9223372036854776000.0 to int\n"},
		{name: "int of -2^63", body: `print(int(-9223372036854775808.0));`, want: "-9223372036854775808\n"},
		{name: "int of bad string", body: `print(int("x"));`, want: "trap: cannot convert \"x\" to int\n"},
		{name: "int of float string", body: `print(int("1.5"));`, want: "trap: cannot convert \"1.5\" to int\n"},
		{name: "int of empty string", body: `print(int(""));`, want: "trap: cannot convert \"\" to int\n"},
		{name: "int of underscores", body: `print(int("1_000"));`, want: "trap: cannot convert \"1_000\" to int\n"},
		{name: "int out of range", body: `print(int("9223372036854775808"));`, want: "trap: cannot convert \"9223372036854775808\" to int\n"},
		{name: "float of bad string", body: `print(float("1.5x"));`, want: "trap: cannot convert \"1.5x\" to float\n"},
		{name: "abs min max", body: `
            print(abs(-2.5)); print(min(1.5, -2.5)); print(max(1.5, -2.5)); print(abs(-0.0));`,
			want: "2.5\n-2.5\n1.5\n0.0\n"},
		{name: "math", body: `
            print(std::math::sqrt(2.0)); print(std::math::floor(-1.5)); print(std::math::ceil(1.2));
            print(std::math::pow(2.0, 10.0)); print(std::math::log(1.0)); print(std::math::exp(0.0));
            print(std::math::sqrt(-1.0));`,
			want: "1.4142135623730951\n-2.0\n2.0\n1024.0\n0.0\n1.0\nNaN\n"},
		{name: "compound", body: `var f = 1.0; f += 2.0; f *= 3.0; f -= 1.0; f /= 4.0; print(f);`, want: "2.0\n"},
	})
}

func TestBoolsAndLogic(t *testing.T) {
	runBodyCases(t, []bodyCase{
		{name: "operators", body: `
            let t = true; let f = false;
            print(!t); print(t && f); print(t || f); print(f || f); print(t && t);
            print(t == f); print(t != f); print(t == true);`,
			want: "false\nfalse\ntrue\nfalse\ntrue\nfalse\ntrue\ntrue\n"},
		{name: "short circuit", decls: `fn loud(s: string, v: bool) -> bool { print(s); return v; }`, body: `
            let a = loud("a", false) && loud("b", true);
            let c = loud("c", true) || loud("d", true);
            let e = loud("e", true) && loud("f", false);
            let g = loud("g", false) || loud("h", true);
            print(a); print(c); print(e); print(g);
            if loud("i", false) && loud("j", true) { print("no"); }
            if loud("k", true) || loud("l", true) { print("yes"); }
            if !(loud("m", false) || loud("n", false)) { print("neither"); }`,
			want: "a\nc\ne\nf\ng\nh\nfalse\ntrue\nfalse\ntrue\ni\nk\nyes\nm\nn\nneither\n"},
		{name: "and or into existing var", body: `
            var x = true; let y = false;
            x = y || x; print(x);
            x = x && y; print(x);`,
			want: "true\nfalse\n"},
	})
}

func TestStrings(t *testing.T) {
	runBodyCases(t, []bodyCase{
		{name: "basics", body: `
            let s = "héllo";
            print(len(s)); print(s[0]); print(s[1]); print(s + ", world");
            print("a" < "b"); print("ab" < "a"); print("a" <= "a"); print("b" > "a"); print("a" >= "b");
            print("x" == "x"); print("x" != "y");
            print(str("s")); print(str(42)); print(str(true));`,
			want: "6\n104\n195\nhéllo, world\ntrue\nfalse\ntrue\ntrue\nfalse\ntrue\ntrue\ns\n42\ntrue\n"},
		{name: "escapes", body: `print("tab\there \"q\" back\\slash \u{1F600}");`, want: "tab\there \"q\" back\\slash 😀\n"},
		{name: "index out of range", body: `let s = "abc"; print(s[3]);`, want: "trap: index 3 out of range for string of length 3\n"},
		{name: "negative index", body: `let s = "abc"; let i = -1; print(s[i]);`, want: "trap: index -1 out of range for string of length 3\n"},
		{name: "slice", body: `
            let s = "héllo";
            print(slice(s, 0, 1)); print(slice(s, 1, 3)); print(slice(s, 3, 6)); print(slice(s, 6, 6));`,
			want: "h\né\nllo\n\n"},
		{name: "slice cuts utf8", body: `print(slice("héllo", 0, 2));`, want: "trap: slice 0..2 cuts a UTF-8 character\n"},
		{name: "slice cuts utf8 start", body: `print(slice("héllo", 2, 4));`, want: "trap: slice 2..4 cuts a UTF-8 character\n"},
		{name: "slice bounds", body: `print(slice("abc", 2, 1));`, want: "trap: slice bounds 2..1 out of range for string of length 3\n"},
		{name: "slice past end", body: `print(slice("abc", 0, 4));`, want: "trap: slice bounds 0..4 out of range for string of length 3\n"},
		{name: "functions", body: `
            print(contains("hello", "ell")); print(contains("hello", "z"));
            print(find("hello", "l")); print(find("hello", "z")); print(find("héllo", "l"));
            print(split("a,b,,c", ",")); print(split("", ",")); print(split("abc", "abc"));
            print(join(["a", "b", "c"], "-")); print(join([], "-")); print(join(["x"], ", "));
            print(trim("  \t hi there \n")); print(trim("\u{3000}x\u{3000}"));
            print(upper("héllo")); print(lower("HÉLLO"));
            print(starts_with("hello", "he")); print(starts_with("hello", "lo"));
            print(ends_with("hello", "lo")); print(ends_with("hello", "he"));
            print(replace("a-b-c", "-", "+")); print(replace("aaa", "a", "bb")); print(replace("abc", "x", "y"));`,
			want: "true\nfalse\n2\n-1\n3\n" + `["a", "b", "", "c"]` + "\n" + `[""]` + "\n" + `["", ""]` + "\n" +
				"a-b-c\n\nx\nhi there\nx\nHÉLLO\nhéllo\ntrue\nfalse\ntrue\nfalse\na+b+c\nbbbbbb\nabc\n"},
		{name: "split empty separator", body: `print(split("abc", ""));`, want: "trap: split with empty separator\n"},
		{name: "compound concat", body: `var s = "a"; s += "b"; s += str(1); print(s);`, want: "ab1\n"},
		{name: "quoting in containers", body: `
            print(["a\"b", "c\\d", "e\nf", "g\th", "i\rj", "k\u{1b}l", "m\u{7f}n", "ü"]);`,
			want: `["a\"b", "c\\d", "e\nf", "g\th", "i\rj", "k\u{1b}l", "m\u{7f}n", "ü"]` + "\n"},
	})
}

func TestBytes(t *testing.T) {
	runBodyCases(t, []bodyCase{
		{name: "basics", body: `
            let b = b"ab\x00\xff";
            print(len(b)); print(b[0]); print(b[3]); print(b);
            print(b + b"\"\\"); print(slice(b, 1, 3)); print(b == b"ab\x00\xff"); print(b != b"ab");
            print([b"x"]);`,
			want: "4\n97\n255\n" + `b"ab\x00\xff"` + "\n" + `b"ab\x00\xff\"\\"` + "\n" + `b"b\x00"` + "\ntrue\ntrue\n" + `[b"x"]` + "\n"},
		{name: "index out of range", body: `let b = b"ab"; print(b[2]);`, want: "trap: index 2 out of range for bytes of length 2\n"},
		{name: "slice bounds", body: `print(slice(b"ab", 1, 3));`, want: "trap: slice bounds 1..3 out of range for bytes of length 2\n"},
	})
}

func TestLists(t *testing.T) {
	runBodyCases(t, []bodyCase{
		{name: "basics", body: `
            let xs = [1, 2, 3,];
            print(len(xs)); print(xs[0]); print(xs[2]);
            xs[1] = 20; print(xs);
            push(xs, 4); print(xs);
            print(pop(xs)); print(xs);
            insert(xs, 0, 0); insert(xs, 4, 99); print(xs);
            print(remove(xs, 4)); print(remove(xs, 0)); print(xs);
            print(xs + [7]); print(xs);
            print(slice(xs, 1, 3)); print(slice(xs, 0, 0));
            print(contains(xs, 20)); print(contains(xs, 5));
            let e: [int] = []; print(e); print(len(e));`,
			want: "3\n1\n3\n[1, 20, 3]\n[1, 20, 3, 4]\n4\n[1, 20, 3]\n[0, 1, 20, 3, 99]\n99\n0\n[1, 20, 3]\n[1, 20, 3, 7]\n[1, 20, 3]\n[20, 3]\n[]\ntrue\nfalse\n[]\n0\n"},
		{name: "aliasing", decls: `fn add(xs: [int], v: int) { push(xs, v); }`, body: `
            let a = [1];
            let b = a;
            push(b, 2);
            add(a, 3);
            print(a); print(b);
            let c = a + [];
            push(c, 9);
            print(a); print(c);
            let s = slice(a, 0, 3);
            s[0] = 100;
            print(a[0]);`,
			want: "[1, 2, 3]\n[1, 2, 3]\n[1, 2, 3]\n[1, 2, 3, 9]\n1\n"},
		{name: "nested", body: `
            let m = [[1, 2], [3]];
            m[0][1] = 5; push(m[1], 6);
            print(m); print(m[1][1]);`,
			want: "[[1, 5], [3, 6]]\n6\n"},
		{name: "equality", body: `
            print([1, 2] == [1, 2]); print([1, 2] == [2, 1]); print([[1]] != [[2]]); print([1] == [1, 2]);
            let z = 0.0; let n = z / z; print([n] == [n]);`,
			want: "true\nfalse\ntrue\nfalse\nfalse\n"},
		{name: "sort", body: `
            let xs = [3, 1, 2]; let ys = sort(xs); print(xs); print(ys);
            print(sort(["b", "a", "C"]));
            let z = 0.0; print(sort([2.5, z / z, -1.0, 0.0, -0.0]));`,
			want: "[3, 1, 2]\n[1, 2, 3]\n[\"C\", \"a\", \"b\"]\n[NaN, -1.0, 0.0, -0.0, 2.5]\n"},
		{name: "index out of range", body: `let xs = [1, 2, 3]; print(xs[5]);`, want: "trap: index 5 out of range for list of length 3\n"},
		{name: "negative index", body: `let xs = [1, 2, 3]; let i = -1; print(xs[i]);`, want: "trap: index -1 out of range for list of length 3\n"},
		{name: "set out of range", body: `let xs = [1]; xs[1] = 2;`, want: "trap: index 1 out of range for list of length 1\n"},
		{name: "pop empty", body: `let xs: [int] = []; print(pop(xs));`, want: "trap: pop from empty list\n"},
		{name: "insert out of range", body: `let xs = [1]; insert(xs, 2, 5);`, want: "trap: index 2 out of range for list of length 1\n"},
		{name: "insert negative", body: `let xs = [1]; insert(xs, -1, 5);`, want: "trap: index -1 out of range for list of length 1\n"},
		{name: "remove out of range", body: `let xs = [1]; print(remove(xs, 1));`, want: "trap: index 1 out of range for list of length 1\n"},
		{name: "slice bounds", body: `print(slice([1, 2], -1, 1));`, want: "trap: slice bounds -1..1 out of range for list of length 2\n"},
		{name: "compound index", body: `
            let xs = [1, 2]; xs[0] += 10; xs[1] *= 3; print(xs);`,
			want: "[11, 6]\n"},
		{name: "compound index evaluates once", decls: `fn idx(i: int) -> int { print("idx"); return i; }`, body: `
            let xs = [1, 2]; xs[idx(1)] += 10; print(xs);`,
			want: "idx\n[1, 12]\n"},
	})
}

func TestIteration(t *testing.T) {
	runBodyCases(t, []bodyCase{
		{name: "for list", body: `
            var s = 0;
            for x in [1, 2, 3, 4] { if x == 2 { continue; } if x == 4 { break; } s += x; }
            print(s);`,
			want: "4\n"},
		{name: "for range", body: `
            for i in 0..3 { print(i); }
            for i in 3..3 { print("never"); }
            for i in 5..2 { print("never"); }
            let n = 2;
            for i in -n..n { if i == 0 { continue; } print(i); }`,
			want: "0\n1\n2\n-2\n-1\n1\n"},
		{name: "range bounds evaluated once", decls: `fn hi() -> int { print("hi"); return 2; }`, body: `
            for i in 0..hi() { print(i); }`,
			want: "hi\n0\n1\n"},
		{name: "range near max", body: `
            let m = 9223372036854775807;
            for i in m - 2..m { print(i); }`,
			want: "9223372036854775805\n9223372036854775806\n"},
		{name: "for map", body: `
            let m = {"b": 2, "a": 1, "c": 3};
            for k, v in m { print(k + "=" + str(v)); }
            for k in m { print(k); }`,
			want: "b=2\na=1\nc=3\nb\na\nc\n"},
		{name: "nested loops and break", body: `
            for i in 0..3 {
                for j in 0..3 {
                    if j > i { break; }
                    print(str(i) + str(j));
                }
            }`,
			want: "00\n10\n11\n20\n21\n22\n"},
		{name: "while", body: `
            var i = 0;
            while i < 10 { i += 1; if i % 2 == 0 { continue; } if i > 7 { break; } print(i); }
            while false { print("never"); }`,
			want: "1\n3\n5\n7\n"},
		{name: "while true", body: `
            var i = 0;
            while true { i += 1; if i == 3 { break; } }
            print(i);`,
			want: "3\n"},
		{name: "push while iterating", body: `let xs = [1]; for x in xs { push(xs, 2); }`, want: "trap: list changed during iteration\n"},
		{name: "set while iterating", body: `let xs = [1]; for x in xs { xs[0] = 2; }`, want: "trap: list changed during iteration\n"},
		{name: "pop while iterating", body: `let xs = [1]; for x in xs { print(pop(xs)); }`, want: "trap: list changed during iteration\n"},
		{name: "insert while iterating", body: `let xs = [1]; for x in xs { insert(xs, 0, 1); }`, want: "trap: list changed during iteration\n"},
		{name: "remove while iterating", body: `let xs = [1]; for x in xs { print(remove(xs, 0)); }`, want: "trap: list changed during iteration\n"},
		{name: "map set while iterating", body: `let m = {1: 1}; for k in m { m[2] = 2; }`, want: "trap: map changed during iteration\n"},
		{name: "map replace while iterating", body: `let m = {1: 1}; for k in m { m[1] = 2; }`, want: "trap: map changed during iteration\n"},
		{name: "map delete while iterating", body: `let m = {1: 1}; for k in m { delete(m, 5); }`, want: "trap: map changed during iteration\n"},
		{name: "alias changed while iterating", decls: `fn grow(xs: [int]) { push(xs, 0); }`, body: `
            let xs = [1]; let ys = xs; for x in ys { grow(xs); }`,
			want: "trap: list changed during iteration\n"},
		{name: "change after loop ends", body: `
            let xs = [1, 2]; let m = {1: 1};
            for x in xs { } push(xs, 3);
            for x in xs { if x == 2 { break; } } push(xs, 4);
            for k in m { } m[2] = 2;
            for k, v in m { if k == 1 { continue; } } delete(m, 1);
            print(xs); print(m);`,
			want: "[1, 2, 3, 4]\n{2: 2}\n"},
		{name: "change after return from loop", decls: `
fn first(xs: [int]) -> int { for x in xs { for y in xs { return x + y; } } return -1; }
fn firstKey(m: {int: int}) -> int { for k, v in m { return k; } return -1; }`, body: `
            let xs = [1, 2]; let m = {5: 1};
            print(first(xs)); push(xs, 3);
            print(firstKey(m)); m[6] = 2;
            print(xs); print(m);`,
			want: "2\n5\n[1, 2, 3]\n{5: 1, 6: 2}\n"},
		{name: "nested iteration of one list", body: `
            let xs = [1, 2];
            for x in xs { for y in xs { print(x * 10 + y); } }
            push(xs, 3); print(len(xs));`,
			want: "11\n12\n21\n22\n3\n"},
		{name: "mutating elements of iterated list", body: `
            let xs = [[1], [2]];
            for x in xs { push(x, 0); }
            print(xs);`,
			want: "[[1, 0], [2, 0]]\n"},
	})
}

func TestMaps(t *testing.T) {
	runBodyCases(t, []bodyCase{
		{name: "basics", body: `
            let m = {"a": 1, "b": 2};
            print(m["a"]); m["c"] = 3; m["a"] = 10; print(m);
            print(has(m, "b")); print(has(m, "z")); print(len(m));
            print(keys(m)); print(values(m));
            delete(m, "a"); delete(m, "zz"); print(m);
            m["a"] = 0; print(m);
            let e: {int: string} = {}; print(e); print(len(e));
            let d = {1: "x", 1: "y"}; print(d);
            let bm = {true: 1, false: 0}; print(bm[false]);`,
			want: "1\n{\"a\": 10, \"b\": 2, \"c\": 3}\ntrue\nfalse\n3\n[\"a\", \"b\", \"c\"]\n[10, 2, 3]\n{\"b\": 2, \"c\": 3}\n{\"b\": 2, \"c\": 3, \"a\": 0}\n{}\n0\n{1: \"y\"}\n0\n"},
		{name: "missing string key", body: `let m = {"a": 1}; print(m["x"]);`, want: "trap: key \"x\" not found in map\n"},
		{name: "missing int key", body: `let m = {1: 1}; print(m[2]);`, want: "trap: key 2 not found in map\n"},
		{name: "missing quoted key", body: `let m = {"a": 1}; print(m["q\"\n"]);`, want: "trap: key \"q\\\"\\n\" not found in map\n"},
		{name: "equality ignores order", body: `
            print({"a": 1, "b": 2} == {"b": 2, "a": 1}); print({"a": 1} == {"a": 2}); print({1: 1} != {2: 1});`,
			want: "true\nfalse\ntrue\n"},
		{name: "compound", body: `let m = {"n": 1}; m["n"] += 5; m["n"] *= 2; print(m);`, want: "{\"n\": 12}\n"},
		{name: "compound missing", body: `let m = {"n": 1}; m["x"] += 5;`, want: "trap: key \"x\" not found in map\n"},
		{name: "many keys", body: `
            let m: {int: int} = {};
            for i in 0..100 { m[i] = i * i; }
            for i in 0..100 { if i % 3 != 0 { delete(m, i); } }
            var s = 0;
            for k, v in m { s += v; }
            print(len(m)); print(s); print(m[99]); print(has(m, 98));`,
			want: "34\n112761\n9801\nfalse\n"},
		{name: "aliasing", body: `let a = {1: [1]}; let b = a; b[2] = [2]; push(a[1], 5); print(a); print(b == a);`,
			want: "{1: [1, 5], 2: [2]}\ntrue\n"},
	})
}

func TestStructsAndEnums(t *testing.T) {
	decls := `
type Point { x: int, y: int }
type Line { from: Point, to: Point, tags: [string] }
type Empty {}
enum Verdict { Accept, Reject(string), Maybe(int, float) }
enum Shape { Dot }
`
	runBodyCases(t, []bodyCase{
		{name: "structs", decls: decls, body: `
            let p = Point { x: 1, y: 2 };
            print(p); print(p.x + p.y);
            p.x = 10; print(p);
            let q = p; q.y = 20; print(p);
            let l = Line { to: Point { x: 3, y: 4 }, from: p, tags: ["a"] };
            print(l); l.to.x += 1; push(l.tags, "b"); print(l.to); print(l.tags);
            print(Empty {});
            print(p == Point { x: 10, y: 20 }); print(p != Point { x: 10, y: 21 });`,
			want: "Point { x: 1, y: 2 }\n3\nPoint { x: 10, y: 2 }\nPoint { x: 10, y: 20 }\nLine { from: Point { x: 10, y: 20 }, to: Point { x: 3, y: 4 }, tags: [\"a\"] }\nPoint { x: 4, y: 4 }\n[\"a\", \"b\"]\nEmpty {}\ntrue\ntrue\n"},
		{name: "struct field evaluation order", decls: decls + `fn v(s: string, i: int) -> int { print(s); return i; }`, body: `
            let p = Point { y: v("y", 2), x: v("x", 1) };
            print(p);`,
			want: "y\nx\nPoint { x: 1, y: 2 }\n"},
		{name: "enums", decls: decls, body: `
            let a = Verdict::Accept;
            let r = Verdict::Reject("late");
            let m = Verdict::Maybe(3, 0.5);
            print(a); print(r); print(m); print(Shape::Dot);
            print(a == Verdict::Accept); print(r == Verdict::Reject("late")); print(r == Verdict::Reject("early")); print(a == r);
            print([a, r]);`,
			want: "Verdict::Accept\nVerdict::Reject(\"late\")\nVerdict::Maybe(3, 0.5)\nShape::Dot\ntrue\ntrue\nfalse\nfalse\n[Verdict::Accept, Verdict::Reject(\"late\")]\n"},
		{name: "match enum", decls: decls + `
fn describe(v: Verdict) -> string {
    match v {
        Verdict::Accept => { return "accept"; },
        Verdict::Reject(why) => { return "reject: " + why; },
        Verdict::Maybe(n, _) => { return "maybe " + str(n); },
    }
}`, body: `
            print(describe(Verdict::Accept)); print(describe(Verdict::Reject("x"))); print(describe(Verdict::Maybe(7, 1.0)));
            match Verdict::Maybe(1, 2.5) { Verdict::Maybe(_, f) => { print(f); }, _ => { print("other"); } }
            match Verdict::Accept { Verdict::Maybe(_, f) => { print(f); }, _ => { print("other"); } }`,
			want: "accept\nreject: x\nmaybe 7\n2.5\nother\n"},
		{name: "match int string bool", decls: `
fn num(n: int) -> string { match n { 0 => { return "zero"; }, -1 => { return "minus one"; }, 10000000000 => { return "big"; }, _ => { return "other"; } } }
fn word(s: string) -> int { match s { "one" => { return 1; }, "two" => { return 2; }, _ => { return 0; } } }
fn flag(b: bool) -> string { match b { true => { return "yes"; }, false => { return "no"; } } }`, body: `
            print(num(0)); print(num(-1)); print(num(10000000000)); print(num(5));
            print(word("one")); print(word("two")); print(word("three"));
            print(flag(true)); print(flag(false));
            match 3 { 1 => { print("one"); }, _ => { print("default"); } }`,
			want: "zero\nminus one\nbig\nother\n1\n2\n0\nyes\nno\ndefault\n"},
		{name: "match scrutinee evaluated once", decls: decls + `fn get() -> Verdict { print("get"); return Verdict::Reject("r"); }`, body: `
            match get() { Verdict::Accept => { print("a"); }, Verdict::Reject(w) => { print(w); }, Verdict::Maybe(i, f) => { print(i); } }`,
			want: "get\nr\n"},
		{name: "recursive type", decls: `type Node { name: string, kids: [Node] }
fn count(n: Node) -> int { var c = 1; for k in n.kids { c += count(k); } return c; }`, body: `
            let leaf = Node { name: "leaf", kids: [] };
            let root = Node { name: "root", kids: [leaf, Node { name: "mid", kids: [leaf] }] };
            print(count(root)); print(root.kids[1]);`,
			want: "4\nNode { name: \"mid\", kids: [Node { name: \"leaf\", kids: [] }] }\n"},
	})
}

func TestControlFlow(t *testing.T) {
	runBodyCases(t, []bodyCase{
		{name: "if else chain", decls: `
fn grade(n: int) -> string {
    if n >= 90 { return "A"; } else if n >= 80 { return "B"; } else if n > 70 { return "C"; } else { return "F"; }
}`, body: `print(grade(95)); print(grade(85)); print(grade(71)); print(grade(70));`,
			want: "A\nB\nC\nF\n"},
		{name: "shadowing", body: `
            let x = 1;
            if true { let x = 2; print(x); }
            print(x);
            var y = 1;
            while y < 2 { let y = 5; print(y); break; }
            y = y + 1; print(y);`,
			want: "2\n1\n5\n2\n"},
		{name: "recursion", decls: `
fn fact(n: int) -> int { if n <= 1 { return 1; } return n * fact(n - 1); }
fn even(n: int) -> bool { if n == 0 { return true; } return odd(n - 1); }
fn odd(n: int) -> bool { if n == 0 { return false; } return even(n - 1); }`,
			body: `print(fact(20)); print(even(10)); print(odd(7)); print(fact(21));`,
			want: "2432902008176640000\ntrue\ntrue\ntrap: integer overflow\n"},
		{name: "call argument order", decls: `
fn v(s: string, i: int) -> int { print(s); return i; }
fn three(a: int, b: int, c: int) -> int { return a * 100 + b * 10 + c; }`,
			body: `print(three(v("a", 1), v("b", 2), v("c", 3))); print(v("x", 1) + v("y", 2) * v("z", 3));`,
			want: "a\nb\nc\n123\nx\ny\nz\n7\n"},
		{name: "void fn", decls: `fn hello(n: int) { if n > 1 { print("big"); return; } print("small"); }`,
			body: `hello(1); hello(2);`, want: "small\nbig\n"},
		{name: "deep recursion", decls: `fn depth(n: int) -> int { if n == 0 { return 0; } return 1 + depth(n - 1); }`,
			body: `print(depth(50000));`, want: "50000\n"},
		{name: "stack overflow", decls: `fn forever(n: int) -> int { return forever(n + 1) + 1; }`,
			body: `print(forever(0));`, want: "trap: stack overflow\n"},
		{name: "assert and panic", body: `assert(1 < 2, "fine"); print("ok"); assert(1 > 2, "one is not above two");`,
			want: "ok\ntrap: one is not above two\n"},
		{name: "panic", body: `panic("boom: " + str(42));`, want: "trap: boom: 42\n"},
		{name: "constants", decls: `const LIMIT: int = 10; const NAME: string = "n"; const HALF: float = 0.5;`,
			body: `print(LIMIT * 2); print(NAME); print(HALF);`, want: "20\nn\n0.5\n"},
		{name: "json", decls: `type P { x: int, tags: [string], m: {string: float}, b: bytes }
enum E { A, B(int) }`, body: `
            print(std::json::encode(P { x: 1, tags: ["a\n"], m: {"k": 1.0}, b: b"\x01" }));
            print(std::json::encode([E::A, E::B(2)]));
            print(std::json::encode({1: true}));`,
			want: `{"x":1,"tags":["a\n"],"m":{"k":1.0},"b":{"bytes":"01"}}` + "\n" + `[{"variant":"A","values":[]},{"variant":"B","values":[2]}]` + "\n" + `[[1,true]]` + "\n"},
	})
}

func TestStrFormats(t *testing.T) {
	runBodyCases(t, []bodyCase{
		{name: "scalars", body: `
            print(str(-42)); print(str(true) + str(false)); print(str("as is \"q\""));
            print(str(1.0) + " " + str(-0.0) + " " + str(0.5) + " " + str(1e-5) + " " + str(12345678.0) + " " + str(1e20) + " " + str(1e21) + " " + str(-1.5e-10));
            let z = 0.0; print(str(z / z) + " " + str(1.0 / z) + " " + str(-1.0 / z));
            print(str(b"a\"b\\c\n\x7f~ "));`,
			want: "-42\ntruefalse\nas is \"q\"\n1.0 -0.0 0.5 1e-05 12345678.0 100000000000000000000.0 1e+21 -1.5e-10\nNaN inf -inf\n" + `b"a\"b\\c\x0a\x7f~ "` + "\n"},
		{name: "containers", decls: `type P { name: string, tags: [string], m: {string: bool} }
enum E { Unit, One(string), Two(P, [int]) }`, body: `
            let p = P { name: "n\"1", tags: ["x", "y\n"], m: {"k": true} };
            print(str(p));
            print(str([E::Unit, E::One("s"), E::Two(p, [])]));
            print(str({1: [1.5], 2: []}));
            print(str({"a": {"b": "c"}}));
            print(str([[b"\x00"]]));
            print(str(E::One("\t")));`,
			want: `P { name: "n\"1", tags: ["x", "y\n"], m: {"k": true} }` + "\n" +
				`[E::Unit, E::One("s"), E::Two(P { name: "n\"1", tags: ["x", "y\n"], m: {"k": true} }, [])]` + "\n" +
				`{1: [1.5], 2: []}` + "\n" + `{"a": {"b": "c"}}` + "\n" + `[[b"\x00"]]` + "\n" + `E::One("\t")` + "\n"},
		{name: "contains structurally", decls: `type P { x: int }`, body: `
            print(contains([P { x: 1 }, P { x: 2 }], P { x: 2 })); print(contains([[1]], [2]));`,
			want: "true\nfalse\n"},
	})
}

func TestCyclicValues(t *testing.T) {
	decls := `type Node { name: string, kids: [Node] }
topic Out { n: Node }`
	runBodyCases(t, []bodyCase{
		{name: "print", decls: decls, body: `
            let n = Node { name: "n", kids: [] };
            push(n.kids, n);
            print(n);`,
			want: "Node { name: \"n\", kids: [...] }\n"},
		{name: "equality", decls: decls, body: `
            let n = Node { name: "n", kids: [] };
            push(n.kids, n);
            print(n == n);`,
			want: "trap: value contains itself\n"},
		{name: "json", decls: decls, body: `
            let n = Node { name: "n", kids: [] };
            push(n.kids, n);
            print(std::json::encode(n));`,
			want: "trap: value contains itself\n"},
		{name: "publish", decls: decls, body: `
            let n = Node { name: "n", kids: [] };
            push(n.kids, n);
            publish Out { n: n };`,
			want: "trap: value contains itself\n"},
		{name: "publish too deep", decls: decls, body: `
            var n = Node { name: "leaf", kids: [] };
            for i in 0..1001 { n = Node { name: "x", kids: [n] }; }
            publish Out { n: n };`,
			want: "trap: value nested too deeply\n"},
		{name: "shared but not cyclic", decls: decls, body: `
            let leaf = Node { name: "leaf", kids: [] };
            let n = Node { name: "n", kids: [leaf, leaf] };
            print(n == Node { name: "n", kids: [leaf, leaf] });
            print(std::json::encode(n));`,
			want: "true\n" + `{"name":"n","kids":[{"name":"leaf","kids":[]},{"name":"leaf","kids":[]}]}` + "\n"},
	})
}
