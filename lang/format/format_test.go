package format

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestParse checks the pieces of well-formed literals.
func TestParse(t *testing.T) {
	cases := []struct {
		lit  string
		want string // pieces: "text" or {arg:fill align zero width .prec type}
	}{
		{"", ""},
		{"plain", `"plain"`},
		{"{} has {:.2} left", `{0} " has " {1:.2} " left"`},
		{"{{}}{{{}}}", `"{}{" {0} "}"`},
		{"{:>8}{:*^9}{:<}", `{0:' '>w8} {1:'*'^w9} {2:' '<}`},
		{"{:05}{:08.3}{:x}{:b}{:#>6x}", `{0:0w5} {1:0w8.3} {2:x} {3:b} {4:'#'>w6x}`},
		{"{:<>5}{:0>4}{:é^5}{:^}", `{0:'<'>w5} {1:'0'>w4} {2:'é'^w5} {3:' '^}`},
		{"{:}{:0}", `{0} {1:0}`},
	}
	for _, c := range cases {
		pieces, err := Parse(c.lit)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.lit, err)
			continue
		}
		if got := describe(pieces); got != c.want {
			t.Errorf("Parse(%q) = %s, want %s", c.lit, got, c.want)
		}
	}
}

func describe(pieces []Piece) string {
	var parts []string
	for _, p := range pieces {
		if p.Arg < 0 {
			parts = append(parts, `"`+p.Text+`"`)
			continue
		}
		s := "{" + string(rune('0'+p.Arg))
		sp := p.Spec
		if sp != (Spec{Precision: -1}) {
			s += ":"
			if sp.Align != AlignDefault {
				fill := sp.Fill
				if fill == 0 {
					fill = ' '
				}
				s += "'" + string(fill) + "'" + string("?<>^"[sp.Align])
			}
			if sp.Zero {
				s += "0"
			}
			if sp.Width > 0 {
				s += "w" + itoa(sp.Width)
			}
			if sp.Precision >= 0 {
				s += "." + itoa(sp.Precision)
			}
			if sp.Type != 0 {
				s += string(rune(sp.Type))
			}
		}
		parts = append(parts, s+"}")
	}
	return strings.Join(parts, " ")
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// TestParseErrors checks the message and the offset of malformed literals.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		lit    string
		offset int
		msg    string
	}{
		{"a {", 2, "unclosed {"},
		{"{:x", 0, "unclosed {"},
		{"{ {}", 0, "unclosed {"},
		{"a } b", 2, "unmatched }"},
		{"{0}", 0, "names an argument"},
		{"ab{:>8d}", 6, `unexpected 'd'`},
		{"{:.}", 3, "a precision needs digits"},
		{"{:1001}", 2, "width above 1000"},
		{"{:99999999999999999999}", 2, "width above 1000"},
		{"{:.1001}", 3, "precision above 1000"},
		{"{:xx}", 3, `unexpected 'x'`},
		{"{:\xff<3}", 2, "not valid UTF-8"},
		{"{:3x<}", 4, `unexpected '<'`},
	}
	for _, c := range cases {
		_, err := Parse(c.lit)
		if err == nil || err.Offset != c.offset || !strings.Contains(err.Msg, c.msg) {
			t.Errorf("Parse(%q) = %v, want %q at %d", c.lit, err, c.msg, c.offset)
		}
	}
}

// TestPackRoundTrip checks that Unpack inverts Pack, with the default
// align resolved.
func TestPackRoundTrip(t *testing.T) {
	specs := []Spec{
		{Precision: -1},
		{Fill: 0x10FFFF, Align: AlignCenter, Zero: true, Width: MaxWidth, Precision: MaxPrecision, Type: 'x'},
		{Fill: 'é', Align: AlignLeft, Width: 7, Precision: 0, Type: 'b'},
	}
	for _, s := range specs {
		for _, number := range []bool{false, true} {
			p := s.Pack(number)
			if p < 0 {
				t.Fatalf("Pack(%+v) = %d < 0", s, p)
			}
			want := s
			if want.Fill == 0 {
				want.Fill = ' '
			}
			if want.Align == AlignDefault {
				want.Align = AlignLeft
				if number {
					want.Align = AlignRight
				}
			}
			if got := Unpack(p); got != want {
				t.Errorf("Unpack(Pack(%+v, %v)) = %+v", s, number, got)
			}
		}
	}
}

// TestPad checks the layout of a body in a width.
func TestPad(t *testing.T) {
	cases := []struct {
		spec  Spec
		body  string
		zeros bool
		want  string
	}{
		{Spec{Fill: ' ', Align: AlignRight, Width: 5}, "ab", false, "   ab"},
		{Spec{Fill: '*', Align: AlignCenter, Width: 5}, "ab", false, "*ab**"},
		{Spec{Fill: 'é', Align: AlignLeft, Width: 3}, "日", false, "日éé"},
		{Spec{Fill: '*', Align: AlignLeft, Zero: true, Width: 5}, "-1.5", true, "-01.5"},
		{Spec{Fill: '*', Align: AlignLeft, Zero: true, Width: 6}, "NaN", false, "   NaN"},
		{Spec{Fill: ' ', Align: AlignRight, Width: 2}, "long", false, "long"},
	}
	for _, c := range cases {
		if got := string(c.spec.Pad(nil, c.body, c.zeros)); got != c.want {
			t.Errorf("%+v.Pad(%q, %v) = %q, want %q", c.spec, c.body, c.zeros, got, c.want)
		}
	}
}

// FuzzParse checks that Parse never panics, that its pieces cover the
// literal in order, that an error's offset lies in the literal, and that
// every spec survives Pack and Unpack.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "{} has {:.2} left", "{{}}", "{:*^9}", "{:08.3}{:x}{:b}", "{:é>5}", "a } b", "{:.}", "{0}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		pieces, err := Parse(lit)
		if err != nil {
			if err.Offset < 0 || err.Offset >= len(lit) && len(lit) > 0 {
				t.Fatalf("Parse(%q): offset %d outside the literal", lit, err.Offset)
			}
			return
		}
		end, arg := 0, 0
		for _, p := range pieces {
			if p.Offset != end || p.End <= p.Offset {
				t.Fatalf("Parse(%q): piece %+v does not follow offset %d", lit, p, end)
			}
			end = p.End
			if p.Arg < 0 {
				continue
			}
			if p.Arg != arg {
				t.Fatalf("Parse(%q): placeholder %d numbered %d", lit, arg, p.Arg)
			}
			arg++
			if !utf8.ValidRune(p.Spec.Fill) && p.Spec.Fill != 0 {
				t.Fatalf("Parse(%q): fill %U", lit, p.Spec.Fill)
			}
			s := p.Spec
			u := Unpack(s.Pack(true))
			if u.Zero != s.Zero || u.Width != s.Width || u.Precision != s.Precision || u.Type != s.Type {
				t.Fatalf("Parse(%q): %+v packs to %+v", lit, s, u)
			}
		}
		if end != len(lit) {
			t.Fatalf("Parse(%q): pieces end at %d", lit, end)
		}
	})
}
