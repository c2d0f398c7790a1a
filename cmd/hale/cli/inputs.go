package cli

import (
	"bytes"
	"github.com/hale-lang/hale"
	"io"
	"os"
	"path/filepath"

	"github.com/hale-lang/hale/replay/artifact"
)

// input is a file a command reads, which no file it writes may replace:
// what it is ("the program's source") and its path as the user named it
// (or, for an imported file, as it was found).
type input struct {
	what, path string
	info       os.FileInfo // when known already (stdin); else the path is stat'ed
}

// sourceInputs are the program's own files on disk: the entry file and
// every file it imports, resolved as the loader resolved them (relative
// to the entry's folder).
func sourceInputs(entry string, c *hale.Compiled) []input {
	dir := filepath.Dir(entry)
	ins := make([]input, 0, len(c.Program.Files))
	for i, f := range c.Program.Files {
		p := entry
		if i > 0 {
			p = filepath.Join(dir, filepath.FromSlash(f.Path))
		}
		ins = append(ins, input{what: "the program's source", path: p})
	}
	return ins
}

// stdinInput is hale's standard input when it is redirected from a
// regular file (a program reads it with `bind stdin`); ok is false for a
// terminal, a pipe or anything else that a file cannot be.
func stdinInput(r io.Reader) (in input, ok bool) {
	f, isFile := r.(*os.File)
	if !isFile {
		return input{}, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return input{}, false
	}
	return input{what: "the standard input", path: f.Name(), info: fi}, true
}

// overwrittenInput returns the input that the file at out is, compared by
// file identity (so a symbolic link, a hard link or another spelling of
// the path is the same file); ok is false when out does not exist yet or
// is none of them.
func overwrittenInput(out string, ins []input) (input, bool) {
	ofi, err := os.Stat(out)
	if err != nil {
		return input{}, false
	}
	for _, in := range ins {
		fi := in.info
		if fi == nil {
			if fi, err = os.Stat(in.path); err != nil {
				continue
			}
		}
		if os.SameFile(ofi, fi) {
			return in, true
		}
	}
	return input{}, false
}

// refuseOverwrite is the usage error (exit 2) of an output flag naming one
// of the command's inputs; nil when it names none.
func refuseOverwrite(flag, out string, ins []input) error {
	if in, ok := overwrittenInput(out, ins); ok {
		return exitf(ExitUsage, "%s %s is the same file as %s (%s): hale never overwrites its inputs", flag, out, in.what, in.path)
	}
	return nil
}

// checkRecordingTarget refuses, before the program runs, a recording path
// that would replace one of the run's inputs or an existing file that is
// neither empty nor a Hale recording (a recording replaces the file at
// its path): both are recording failures (exit 4).
func checkRecordingTarget(path string, ins []input) error {
	if in, ok := overwrittenInput(path, ins); ok {
		return exitf(ExitRecording, "recording failed: %s=%s is the same file as %s (%s): hale never overwrites its inputs",
			artifact.RecordVar, path, in.what, in.path)
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		// Missing (the usual case), empty, or not a regular file, which
		// creating the recording refuses with its own message.
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return exitf(ExitRecording, "recording failed: %s=%s: %v", artifact.RecordVar, path, err)
	}
	defer f.Close()
	head := make([]byte, len(artifact.Magic))
	n, _ := io.ReadFull(f, head)
	if !bytes.Equal(head[:n], []byte(artifact.Magic)) || n < len(head) {
		return exitf(ExitRecording, "recording failed: %s=%s is not a Hale recording: hale replaces only a recording or an empty file; remove it or choose another path",
			artifact.RecordVar, path)
	}
	return nil
}
