package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/codegen"
)

func init() { commands = append(commands, newBuildCmd) }

// emitters maps each --emit kind to the function that writes it.
var emitters = map[string]func(e env, c *hale.Compiled, w io.Writer) error{
	"sir": func(_ env, c *hale.Compiled, w io.Writer) error { return c.SIR.WriteText(w) },
	"image": func(_ env, c *hale.Compiled, w io.Writer) error {
		data, err := c.Image.MarshalBinary()
		if err != nil {
			return exitf(ExitFailure, "cannot encode the image: %v", err)
		}
		_, err = w.Write(data)
		return err
	},
	"asm": func(_ env, c *hale.Compiled, w io.Writer) error {
		return codegen.WriteAsm(w, c.Image)
	},
	"digest": func(_ env, c *hale.Compiled, w io.Writer) error {
		_, err := fmt.Fprintln(w, hale.Hex(c.BuildDigest()))
		return err
	},
}

func newBuildCmd(e env) *cobra.Command {
	var emit, out string
	cmd := &cobra.Command{
		Use:   "build --emit KIND [-o FILE] app.hl",
		Short: "Compile a program and write one of its intermediate forms",
		Long: "Build compiles the program and writes the form chosen with --emit:\n" +
			"  sir     the typed, slot-resolved intermediate representation, as text\n" +
			"  image   the binary program image the interpreter runs (use -o)\n" +
			"  asm     a readable disassembly of the image\n" +
			"  digest  the build-input digest a recording is admitted against\n" +
			"Output goes to stdout, or to the file named with -o.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			write, ok := emitters[emit]
			if !ok {
				return exitf(ExitUsage, "unknown --emit kind %q (want one of %s)", emit, emitKinds())
			}
			c, err := compile(e, args[0])
			if err != nil {
				return err
			}
			if out == "" {
				if emit == "image" && isTerminal(e.stdout) {
					return exitf(ExitUsage, "--emit image writes binary data; name a file with -o")
				}
				return write(e, c, e.stdout)
			}
			if err := refuseOverwrite("-o", out, sourceInputs(args[0], c)); err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := write(e, c, &buf); err != nil {
				return err
			}
			if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
				return exitf(ExitFailure, "cannot write %s: %v", out, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&emit, "emit", "", "what to write: "+emitKinds())
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of stdout")
	_ = cmd.MarkFlagRequired("emit")
	return cmd
}

func emitKinds() string {
	kinds := []string{"sir", "image", "asm", "digest"}
	s := ""
	for _, k := range kinds {
		if _, ok := emitters[k]; !ok {
			continue
		}
		if s != "" {
			s += ", "
		}
		s += k
	}
	return s
}
