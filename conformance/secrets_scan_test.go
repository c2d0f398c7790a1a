package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"
)

var (
	secretNameRE = regexp.MustCompile(`std::os::secret\("([A-Za-z_][A-Za-z0-9_]*)"\)`)
	envAssignRE  = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)=(\S+)`)
)

// suiteSecretValues returns every value the conformance scripts give to an
// environment variable that a program in the same script reads with
// std::os::secret: the values no file a script leaves behind may hold.
func suiteSecretValues(t *testing.T) []string {
	t.Helper()
	scripts, err := filepath.Glob("testdata/*/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, path := range scripts {
		a, err := txtar.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, f := range a.Files {
			for _, m := range secretNameRE.FindAllSubmatch(f.Data, -1) {
				names[string(m[1])] = true
			}
		}
		for _, line := range bytes.Split(a.Comment, []byte("\n")) {
			fields := bytes.Fields(line)
			if len(fields) < 2 || string(fields[0]) != "env" {
				continue
			}
			for _, m := range envAssignRE.FindAllSubmatch(line, -1) {
				// Short values would match by accident; the suite's
				// secrets are all longer.
				if names[string(m[1])] && len(m[2]) >= 5 {
					seen[string(m[2])] = true
				}
			}
		}
	}
	values := make([]string, 0, len(seen))
	for v := range seen {
		values = append(values, v)
	}
	sort.Strings(values)
	return values
}

// secretForms are the encodings a leak could take in a binary artifact or
// a JSON dump.
func secretForms(v string) []string {
	return []string{
		v,
		hex.EncodeToString([]byte(v)),
		base64.StdEncoding.EncodeToString([]byte(v)),
		base64.RawURLEncoding.EncodeToString([]byte(v)),
	}
}

// scanForSecrets arranges for env's work folder to be searched, when the
// script ends, for every secret value of the suite in every file the
// script wrote or changed (artifacts, dumps, saved output): a hit fails
// the script. Files the archive itself holds, unchanged, are skipped.
func scanForSecrets(env *testscript.Env, values []string) {
	original := map[string][]byte{}
	filepath.WalkDir(env.WorkDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			original[path], _ = os.ReadFile(path)
		}
		return nil
	})
	env.Defer(func() {
		filepath.WalkDir(env.WorkDir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			if before, ok := original[path]; ok && bytes.Equal(before, data) {
				return nil
			}
			for _, v := range values {
				for _, form := range secretForms(v) {
					if bytes.Contains(data, []byte(form)) {
						rel, _ := filepath.Rel(env.WorkDir, path)
						env.T().Fatal(fmt.Sprintf("the script left %s holding the secret value %q (as %q): a secret must never reach a file", rel, v, form))
					}
				}
			}
			return nil
		})
	})
}

// TestSuiteSecretValuesAreFound keeps the scan honest: the suite does use
// secrets, and the scan's list finds them.
func TestSuiteSecretValuesAreFound(t *testing.T) {
	values := suiteSecretValues(t)
	if len(values) < 5 {
		t.Fatalf("found %d secret values in the scripts (%q); the scan would check almost nothing", len(values), values)
	}
	want := "sk-proj-VerySecretValue123"
	for _, v := range values {
		if v == want {
			return
		}
	}
	t.Errorf("the secret value %q of the scripts is not among those scanned: %q", want, values)
}
