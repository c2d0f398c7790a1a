package host

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIOPrograms runs Hale programs that use std::fs and std::http on
// both engines: results must decode in the interpreter as the declared
// types, and failures must trap naming the path or URL.
func TestIOPrograms(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/new":
			w.Header().Set("X-Answer", "42")
			fmt.Fprint(w, "fresh")
		case "/echo":
			body := new(strings.Builder)
			fmt.Fprint(body, r.Header.Get("Content-Type"), ":")
			buf := make([]byte, 100)
			n, _ := r.Body.Read(buf)
			body.Write(buf[:n])
			fmt.Fprint(w, body.String())
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String() + "/down"
	l.Close()

	src := `
locus Files {
    on start {
        std::fs::write_text("notes.txt", "one\n");
        std::fs::append_text("notes.txt", "two\n");
        print(std::fs::read_text("notes.txt"));
        print(len(std::fs::read_bytes("notes.txt")));
        print(std::fs::exists("notes.txt"));
        print(std::fs::exists("nothing.txt"));
        print(std::fs::list_dir("."));
    }
}
locus Web {
    on start {
        let r = std::http::get("` + srv.URL + `/old");
        print(str(r.status) + " " + r.body + " " + r.headers["X-Answer"]);
        let m = std::http::get("` + srv.URL + `/missing");
        print(m.status);
        let p = std::http::post("` + srv.URL + `/echo", "hi", "text/plain");
        print(p.body);
        print(std::http::get("` + refused + `").status);
    }
}
main { spawn Files; spawn Web; }
`
	img := compileAll(t, src)
	for _, kind := range realEngines {
		t.Run(kind.String(), func(t *testing.T) {
			dir := t.TempDir()
			o := runWith(t, img, Options{Engine: kind, Dir: dir})
			if o.err != nil || o.res.Code != ExitTrap {
				t.Fatalf("run: %v %+v\n%s", o.err, o.res, o.stderr)
			}
			want := "one\ntwo\n\n8\ntrue\nfalse\n[\"notes.txt\"]\n200 fresh 42\n404\ntext/plain:hi\n"
			if o.stdout != want {
				t.Errorf("stdout\n%s\nwant\n%s", o.stdout, want)
			}
			wantTrap := fmt.Sprintf("trap: cannot GET %q: dial tcp ", refused)
			if !strings.HasPrefix(o.stderr, wantTrap) || !strings.Contains(o.stderr, "connection refused\n  at app.hl:21:15 in Web.on start\n  delivery 0:1 (target Web, message start)\n") {
				t.Errorf("stderr %q", o.stderr)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "one\ntwo\n" {
				t.Errorf("notes.txt: %q", b)
			}
		})
	}
}
