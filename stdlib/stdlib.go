// Package stdlib is Hale's standard library: the std::* modules as Hale
// source, embedded in the toolchain, and the table of primitives, the
// functions the runtime implements.
//
// The loader (package lang) parses every file of Files with the parser's
// stdlib mode, which alone accepts body-less fns carrying an annotation:
//
//	@primitive(effect: "time")
//	fn now_ms() -> int;
//
// The Go table (Lookup, All, ByID) is the single source of truth for what a
// primitive does at run time: its effect for the effects analysis, its
// journal treatment for the recorder and the replayer, and its stable
// numeric ID for the program image and the VM's primitive gateway. A test
// keeps the table and the @primitive declarations in agreement.
//
// Two names are in the table without a declaration: the builtin print
// (effect io), and std::json::encode, which is generic and so typed by the
// checker as a builtin (pure).
package stdlib

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed std/*.hl
var files embed.FS

// Source is one embedded standard library file.
type Source struct {
	Path   string // logical path, e.g. "std/time.hl"
	Module string // module path, e.g. "std::time"
	Src    []byte
}

// Files returns the standard library's files sorted by Path. Each call
// returns fresh slices, so callers may keep or modify them.
func Files() []Source {
	names, err := fs.Glob(files, "std/*.hl")
	if err != nil {
		// The pattern is a constant and valid; Glob cannot fail on it.
		panic("stdlib: " + err.Error())
	}
	sort.Strings(names)
	out := make([]Source, 0, len(names))
	for _, name := range names {
		src, err := files.ReadFile(name)
		if err != nil {
			panic("stdlib: " + err.Error()) // embedded: always readable
		}
		out = append(out, Source{Path: name, Module: ModuleOf(name), Src: src})
	}
	return out
}

// ModuleOf returns the module path of a standard library file's logical
// path: "std/time.hl" is "std::time".
func ModuleOf(logicalPath string) string {
	return strings.ReplaceAll(strings.TrimSuffix(logicalPath, path.Ext(logicalPath)), "/", "::")
}
