package cli

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestCLIDocsCoverEveryCommandAndFlag keeps docs/cli.md honest: every
// command of the cobra tree has a section and every flag is documented
// in it.
func TestCLIDocsCoverEveryCommandAndFlag(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	root := newRoot(env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			path := sub.CommandPath()
			section := "## `" + path
			start := strings.Index(text, section)
			if start < 0 {
				t.Errorf("docs/cli.md has no section %q", section+"`")
				walk(sub)
				continue
			}
			body := text[start:]
			if end := strings.Index(body[len(section):], "\n## "); end >= 0 {
				body = body[:len(section)+end]
			}
			sub.LocalFlags().VisitAll(func(f *pflag.Flag) {
				if !strings.Contains(body, "--"+f.Name) {
					t.Errorf("docs/cli.md section %q does not document --%s", path, f.Name)
				}
			})
			walk(sub)
		}
	}
	walk(root)
	for _, must := range []string{"LOTUS_OBS_RECORD", "LOTUS_OBS_RECORD_ENV", "hale completion"} {
		if !strings.Contains(text, must) {
			t.Errorf("docs/cli.md does not mention %s", must)
		}
	}
}
