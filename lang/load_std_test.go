package lang

import (
	"strings"
	"testing"
	"testing/fstest"
)

// A user file whose logical path equals a standard library file's keeps
// its own bytes in Sources (diagnostics and the build digest use them).
func TestUserFileShadowingStdlibPathKeepsItsSource(t *testing.T) {
	user := "fn user_time() -> int { return 1; }\n"
	fsys := fstest.MapFS{
		"app.hl":      {Data: []byte("import \"std/time.hl\";\nmain {}\n")},
		"std/time.hl": {Data: []byte(user)},
	}
	p, err := LoadFS(fsys, "app.hl")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(p.Source("std/time.hl")); got != user {
		t.Errorf("Source(std/time.hl) = %q, want the user's file", got)
	}
}

func TestEntryMustEndInHl(t *testing.T) {
	fsys := fstest.MapFS{"prog.txt": {Data: []byte("main {}\n")}}
	_, err := LoadFS(fsys, "prog.txt")
	if err == nil || !strings.Contains(err.Error(), "source files end in .hl") {
		t.Fatalf("LoadFS(prog.txt) = %v, want an error about the .hl extension", err)
	}
}
