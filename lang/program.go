// Package lang is the front door of the Hale front end: Load reads an entry
// file and everything it imports, parses each file once (lang/syntax),
// adds the embedded standard library, and type-checks the whole program
// (lang/check). The result is a Program whose syntax tree is fully
// annotated: every name resolved to an ast.Symbol, every expression typed,
// every local given a frame slot.
package lang

import (
	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/diag"
)

// Program is a loaded and checked Hale program.
type Program struct {
	// Entry is the logical path of the entry file (its base name).
	Entry string
	// Files are the user's files, the entry first, then imports in the
	// order they were first reached (depth first).
	Files []*ast.File
	// Stdlib are the standard library files the program can see.
	Stdlib []*ast.File
	// Sources maps every logical path (user files, and std/*.hl for the
	// standard library) to the file's bytes, for diagnostics and digests.
	Sources map[string][]byte

	// Declarations across all files (user and stdlib), in load order.
	Consts []*ast.ConstDecl
	Types  []*ast.TypeDecl // structs and topics
	Enums  []*ast.EnumDecl
	Fns    []*ast.FnDecl // top-level fns, including stdlib helpers and @primitive declarations
	Loci   []*ast.LocusDecl
	Main   *ast.MainDecl
	Scope  map[string]*ast.Symbol // top-level names; std names qualified ("std::time::now_ms")
	// SecretNames are the literal names given to std::os::secret
	// anywhere in the program, sorted.
	SecretNames []string

	// Warnings are the diagnostics of severity warning (codes W…) of a
	// program that loaded: they are shown but do not reject it.
	Warnings diag.List
}

// Source returns the bytes of the file at a logical path, or nil.
func (p *Program) Source(path string) []byte { return p.Sources[path] }
