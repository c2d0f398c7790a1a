package lang

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/hale-lang/hale/lang/ast"
	"github.com/hale-lang/hale/lang/check"
	"github.com/hale-lang/hale/lang/diag"
	"github.com/hale-lang/hale/lang/syntax"
	"github.com/hale-lang/hale/stdlib"
)

// Loader error codes (E00xx: files and imports). The parser uses E01xx
// and the checker E02xx-E06xx; docs/language.md lists them all.
const (
	codeRead   diag.Code = "E0001" // a file cannot be read
	codeCycle  diag.Code = "E0002" // import cycle
	codeImport diag.Code = "E0003" // malformed import path, or an entry file not ending in .hl
)

// Load reads the entry file at entryPath and every file it imports
// (import paths are relative to the importing file), adds the standard
// library and checks the whole program.
//
// Files are read once each, depth first, the entry first. An import path
// must be relative, use '/' separators and end in ".hl"; it may climb out
// of the entry's folder (its logical path then starts with "../").
// Importing a file twice is harmless. Syntax and import errors are
// reported alone: the checker runs only on a program that parsed
// completely.
//
// On failure the error is a sorted diag.List. The Program is returned even
// then, with Sources filled (and nothing else guaranteed), so that the
// diagnostics can be rendered with their source lines; a missing entry
// file gives a nil Program.
func Load(entryPath string) (*Program, error) {
	dir := filepath.Dir(entryPath)
	read := func(logical string) ([]byte, error) {
		return os.ReadFile(filepath.Join(dir, filepath.FromSlash(logical)))
	}
	return load(read, filepath.Base(entryPath), entryPath)
}

// LoadFS is Load reading from fsys; entry is a slash-separated path in
// fsys. Imports that leave fsys cannot be read.
func LoadFS(fsys fs.FS, entry string) (*Program, error) {
	dir := path.Dir(entry)
	read := func(logical string) ([]byte, error) {
		name := path.Join(dir, logical)
		if !fs.ValidPath(name) {
			return nil, &fs.PathError{Op: "read", Path: logical, Err: errors.New("outside the file system")}
		}
		return fs.ReadFile(fsys, name)
	}
	return load(read, path.Base(entry), entry)
}

// loader walks the import graph depth first.
type loader struct {
	read    func(logical string) ([]byte, error)
	prog    *Program
	errs    diag.List
	loaded  map[string]bool // logical paths already read (or being read)
	stack   []string        // files being loaded, the entry first
	onStack map[string]int  // index in stack
	via     []ast.Pos       // via[i]: the import in stack[i] being followed
}

func load(read func(string) ([]byte, error), entry, shown string) (*Program, error) {
	if !strings.HasSuffix(entry, ".hl") {
		var l diag.List
		l.Add(ast.Pos{File: shown}, codeImport, "%s is not a Hale source file: source files end in .hl", shown)
		return nil, l
	}
	src, err := read(entry)
	if err != nil {
		var l diag.List
		l.Add(ast.Pos{File: shown}, codeRead, "cannot read %s: %s", shown, reason(err))
		return nil, l
	}
	ld := &loader{
		read:    read,
		prog:    &Program{Entry: entry, Sources: map[string][]byte{}},
		loaded:  map[string]bool{},
		onStack: map[string]int{},
	}
	ld.file(entry, src)
	p := ld.prog
	for _, s := range stdlib.Files() {
		// A user file may have the same logical path as a library file
		// (std/time.hl); Sources keeps the user's bytes, which
		// diagnostics and the build digest are about.
		if _, user := p.Sources[s.Path]; !user {
			p.Sources[s.Path] = s.Src
		}
		f, errs := syntax.ParseStdlib(s.Path, s.Module, s.Src)
		ld.errs = append(ld.errs, errs...)
		if f != nil {
			p.Stdlib = append(p.Stdlib, f)
		}
	}
	if ld.errs.HasErrors() {
		// Syntax and import errors come alone: checking a partial program
		// would mostly report their consequences.
		return p, ld.errs.Sort()
	}
	res, errs := check.Check(p.Files, p.Stdlib)
	p.Consts, p.Types, p.Enums, p.Fns, p.Loci = res.Consts, res.Types, res.Enums, res.Fns, res.Loci
	p.Main, p.Scope, p.SecretNames = res.Main, res.Scope, res.SecretNames
	errs = append(ld.errs, errs...).Sort()
	if errs.HasErrors() {
		return p, errs
	}
	p.Warnings = errs
	return p, nil
}

// file parses one file and, depth first, the files it imports.
func (ld *loader) file(logical string, src []byte) {
	ld.loaded[logical] = true
	ld.prog.Sources[logical] = src
	f, errs := syntax.Parse(logical, src)
	ld.errs = append(ld.errs, errs...)
	if f == nil {
		return
	}
	ld.prog.Files = append(ld.prog.Files, f)
	ld.onStack[logical] = len(ld.stack)
	ld.stack = append(ld.stack, logical)
	ld.via = append(ld.via, ast.Pos{})
	defer func() {
		delete(ld.onStack, logical)
		ld.stack = ld.stack[:len(ld.stack)-1]
		ld.via = ld.via[:len(ld.via)-1]
	}()
	for _, imp := range f.Imports {
		if imp == nil {
			continue
		}
		target, ok := ld.resolve(logical, imp)
		if !ok {
			continue
		}
		ld.via[len(ld.via)-1] = imp.Pos()
		if i, on := ld.onStack[target]; on {
			// Report at the import that starts the cycle, in the file the
			// cycle comes back to.
			names := append(append([]string(nil), ld.stack[i:]...), target)
			ld.errs.Add(ld.via[i], codeCycle, "import cycle: %s", strings.Join(names, " -> "))
			continue
		}
		if ld.loaded[target] {
			continue
		}
		data, err := ld.read(target)
		if err != nil {
			ld.errs.Add(imp.Pos(), codeRead, "cannot read %s: %s", target, reason(err))
			continue
		}
		ld.file(target, data)
	}
}

// resolve returns the logical path an import names: relative to the
// importing file's folder, cleaned, with '/' separators.
func (ld *loader) resolve(importer string, imp *ast.Import) (string, bool) {
	p := imp.Path
	switch {
	case p == "":
		ld.errs.Add(imp.Pos(), codeImport, "empty import path")
	case strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || filepath.IsAbs(p) || len(p) > 1 && p[1] == ':':
		ld.errs.Add(imp.Pos(), codeImport, "import path %q must be relative to the importing file, with '/' separators", p)
	case !strings.HasSuffix(p, ".hl"):
		ld.errs.Add(imp.Pos(), codeImport, "import path %q must name a .hl file", p)
	default:
		return path.Join(path.Dir(importer), p), true
	}
	return "", false
}

// reason is the cause of a read error without the path, which the
// message names already.
func reason(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "no such file or directory"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
