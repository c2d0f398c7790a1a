package cli

import (
	"errors"
	"fmt"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/effects"
	"github.com/hale-lang/hale/lang"
	"github.com/hale-lang/hale/lang/diag"
	"github.com/hale-lang/hale/sir"
)

// compiled is a program carried through the front end.
type compiled struct {
	prog    *lang.Program
	effects *effects.Info
	sir     *sir.Program
	path    string // the entry file's path as given
}

// compile loads, checks and analyses the program at path and lowers it to
// SIR. Diagnostics are printed to stderr with their source lines; the
// returned error then only carries the exit code.
func compile(e env, path string) (*compiled, error) {
	prog, err := lang.Load(path)
	if err != nil {
		return nil, reportCompileError(e, prog, err)
	}
	fx, diags := effects.Analyze(prog)
	if len(diags) > 0 {
		return nil, reportCompileError(e, prog, diags)
	}
	s, err := sir.Lower(prog, fx)
	if err != nil {
		return nil, reportCompileError(e, prog, err)
	}
	return &compiled{prog: prog, effects: fx, sir: s, path: path}, nil
}

// buildDigest returns the program's build-input digest: the toolchain and
// the logical paths and bytes of the user's files.
func (c *compiled) buildDigest() [32]byte {
	files := make([]hale.SourceFile, 0, len(c.prog.Files))
	for _, f := range c.prog.Files {
		files = append(files, hale.SourceFile{Path: f.Path, Data: c.prog.Source(f.Path)})
	}
	return hale.BuildDigest(files, hale.BuildOptions{})
}

func reportCompileError(e env, prog *lang.Program, err error) error {
	var list diag.List
	if !errors.As(err, &list) {
		var one *diag.Error
		if !errors.As(err, &one) {
			return exitf(ExitFailure, "%v", err)
		}
		list = diag.List{one}
	}
	var source func(string) []byte
	if prog != nil {
		source = prog.Source
	} else {
		var le interface{ Source(string) []byte }
		if errors.As(err, &le) {
			source = le.Source
		}
	}
	fmt.Fprint(e.stderr, diag.Render(list.Sort(), source))
	n := len(list)
	if n == 1 {
		fmt.Fprintf(e.stderr, "1 error\n")
	} else {
		fmt.Fprintf(e.stderr, "%d errors\n", n)
	}
	return silentExit(ExitFailure)
}
