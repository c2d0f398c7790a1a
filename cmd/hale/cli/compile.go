package cli

import (
	"errors"
	"fmt"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/lang/diag"
)

// compile compiles the program at path (hale.CompileFile). Diagnostics
// are printed to stderr with their source lines; the returned error then
// only carries the exit code.
func compile(e env, path string) (*hale.Compiled, error) {
	c, err := hale.CompileFile(path, hale.BuildOptions{})
	if err != nil {
		return nil, reportCompileError(e, err)
	}
	return c, nil
}

func reportCompileError(e env, err error) error {
	var list diag.List
	if !errors.As(err, &list) {
		var one *diag.Error
		if !errors.As(err, &one) {
			return exitf(ExitFailure, "%v", err)
		}
		list = diag.List{one}
	}
	var source func(string) []byte
	var le interface{ Source(string) []byte }
	if errors.As(err, &le) {
		source = le.Source
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
