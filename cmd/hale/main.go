// Command hale is the Hale toolchain: it checks, builds, runs, records and
// replays programs written in the Hale agent language. See README.md and
// docs/cli.md for the commands.
package main

import (
	"os"

	"github.com/hale-lang/hale/cmd/hale/cli"
)

func main() { os.Exit(cli.Main()) }
