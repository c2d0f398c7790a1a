package hale

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/hale-lang/hale/codegen"
	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/effects"
	"github.com/hale-lang/hale/lang"
	"github.com/hale-lang/hale/lang/diag"
	"github.com/hale-lang/hale/sir"
)

// Compiled is a program carried through the whole front end: every form
// a tool may want, built once.
type Compiled struct {
	// Program is the loaded, checked program: its files, sources and
	// checked syntax trees.
	Program *lang.Program
	// Effects is the inferred effect set of every fn and handler.
	Effects *effects.Info
	// SIR is the structured IR the image was compiled from.
	SIR *sir.Program
	// Image is the program image the runtime runs; below the compiler it
	// is the one form of the program.
	Image *image.Image
	// Files are the logical paths of the user's files, entry first, in
	// load order.
	Files []string
	// ShapeHash is the shape hash (sir.Shape.Hash); with BuildDigest it is
	// the identity a recording is admitted against.
	ShapeHash [32]byte

	opts  BuildOptions
	build struct {
		once sync.Once
		sum  [32]byte
	}
}

// BuildDigest returns the program's build-input digest (the package
// function BuildDigest over its files). It is computed on first use and
// kept: hashing the toolchain's sources costs more than compiling a small
// program, and only recording and replay need it.
func (c *Compiled) BuildDigest() [32]byte {
	c.build.once.Do(func() {
		files := make([]SourceFile, 0, len(c.Program.Files))
		for _, f := range c.Program.Files {
			files = append(files, SourceFile{Path: f.Path, Data: c.Program.Source(f.Path)})
		}
		c.build.sum = BuildDigest(files, c.opts)
	})
	return c.build.sum
}

// Compile loads the program whose entry file is entry in fsys (a
// slash-separated path; imports that leave fsys cannot be read), checks
// it, infers its effects, lowers it to SIR, compiles the image and
// computes its shape hash (the build digest follows on first use).
//
// A program with errors fails with its diagnostics (a diag.List or a
// *diag.Error, reachable with errors.As); the error then also has a
// Source(path string) []byte method giving each file's bytes, so that the
// diagnostics can be shown with their source lines (diag.Render).
func Compile(fsys fs.FS, entry string, opts BuildOptions) (*Compiled, error) {
	prog, err := lang.LoadFS(fsys, entry)
	return compileLoaded(prog, err, opts)
}

// CompileFile is Compile for the entry file at path in the operating
// system's file system; imports are relative to its folder and may leave
// it.
func CompileFile(path string, opts BuildOptions) (*Compiled, error) {
	prog, err := lang.Load(path)
	return compileLoaded(prog, err, opts)
}

// compileLoaded runs the pipeline after loading.
func compileLoaded(prog *lang.Program, err error, opts BuildOptions) (*Compiled, error) {
	if err != nil {
		return nil, withSource(prog, err)
	}
	fx, diags := effects.Analyze(prog)
	if len(diags) > 0 {
		return nil, withSource(prog, diags)
	}
	s, err := sir.Lower(prog, fx)
	if err != nil {
		return nil, withSource(prog, err)
	}
	img, err := codegen.Compile(s)
	if err == nil {
		img.SecretNames = append([]string(nil), prog.SecretNames...)
	}
	if err != nil {
		// A limit of the image the program exceeds is a diagnostic at
		// the expression that exceeds it (E09xx); anything else is a
		// toolchain bug.
		var one *diag.Error
		if errors.As(err, &one) {
			return nil, withSource(prog, err)
		}
		return nil, fmt.Errorf("%s: %w", prog.Entry, err)
	}
	c := &Compiled{Program: prog, Effects: fx, SIR: s, Image: img, Files: append([]string(nil), s.Files...), opts: opts}
	shape, _ := hex.DecodeString(sir.BuildShape(s).Hash())
	copy(c.ShapeHash[:], shape)
	return c, nil
}

// sourceError is a compile error with the program's sources.
type sourceError struct {
	err  error
	prog *lang.Program
}

func (e *sourceError) Error() string { return e.err.Error() }

func (e *sourceError) Unwrap() error { return e.err }

// Source returns the bytes of the program's file at path.
func (e *sourceError) Source(path string) []byte { return e.prog.Source(path) }

// withSource attaches prog's sources to err; without a program, err is
// returned as it is (lang's errors then carry their own sources).
func withSource(prog *lang.Program, err error) error {
	if prog == nil {
		return err
	}
	return &sourceError{err: err, prog: prog}
}
