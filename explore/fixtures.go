package explore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Fixtures are the inputs of every schedule of a search (docs/testing.md
// "Inputs"): read once from a folder, served by the world of each run.
// The zero value is "no fixtures": env gives its default, args are empty,
// stdin is empty, files do not exist and the network traps.
type Fixtures struct {
	// Env holds the `env` file's variables; HasEnv is false when there is
	// no `env` file.
	Env    map[string]string
	HasEnv bool
	Args   []string
	Stdin  []string          // lines, without line endings
	Files  map[string]string // the `fs/` folder, by slash-separated relative path
	Dirs   map[string]bool   // its folders ("." included when fs/ exists)
	HTTP   map[string][]HTTPReply
}

// HTTPReply is one answer of http.json: a response, or a trap.
type HTTPReply struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	Trap    *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"trap,omitempty"`
}

// LoadFixtures reads a fixtures folder: `env` (NAME=VALUE lines), `args`
// (one per line), `stdin`, `fs/` and `http.json`, each optional.
func LoadFixtures(dir string) (*Fixtures, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("fixtures: %v", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("fixtures: %s is not a folder", dir)
	}
	fx := &Fixtures{}
	read := func(name string) ([]byte, bool, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("fixtures: %v", err)
		}
		return b, true, nil
	}
	if b, ok, err := read("env"); err != nil {
		return nil, err
	} else if ok {
		fx.HasEnv, fx.Env = true, map[string]string{}
		for i, line := range lines(b) {
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
				continue
			}
			name, val, found := strings.Cut(line, "=")
			if !found || name == "" {
				return nil, fmt.Errorf("fixtures: %s:%d: want NAME=VALUE", filepath.Join(dir, "env"), i+1)
			}
			fx.Env[name] = val
		}
	}
	if b, ok, err := read("args"); err != nil {
		return nil, err
	} else if ok {
		fx.Args = lines(b)
	}
	if b, ok, err := read("stdin"); err != nil {
		return nil, err
	} else if ok {
		fx.Stdin = lines(b)
	}
	if b, ok, err := read("http.json"); err != nil {
		return nil, err
	} else if ok {
		if fx.HTTP, err = parseHTTP(b); err != nil {
			return nil, fmt.Errorf("fixtures: %s: %v", filepath.Join(dir, "http.json"), err)
		}
	}
	root := filepath.Join(dir, "fs")
	if st, err := os.Stat(root); err == nil && st.IsDir() {
		fx.Files, fx.Dirs = map[string]string{}, map[string]bool{".": true}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				fx.Dirs[rel] = true
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fx.Files[rel] = string(b)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("fixtures: %v", err)
		}
	}
	return fx, nil
}

// lines splits b into lines as stdin is split: at "\n", a trailing "\r"
// removed, a last line without a newline kept.
func lines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		out = append(out, strings.TrimSuffix(sc.Text(), "\r"))
	}
	return out
}

// parseHTTP reads http.json: an object mapping "METHOD URL" to a reply, a
// list of replies (one per successive call; the last repeats), or
// {"trap": {"kind": …, "message": …}}.
func parseHTTP(b []byte) (map[string][]HTTPReply, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := map[string][]HTTPReply{}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		method, url, ok := strings.Cut(k, " ")
		if !ok || method == "" || url == "" {
			return nil, fmt.Errorf("key %q: want \"METHOD URL\"", k)
		}
		v := bytes.TrimSpace(raw[k])
		var replies []HTTPReply
		if len(v) > 0 && v[0] == '[' {
			if err := json.Unmarshal(v, &replies); err != nil {
				return nil, fmt.Errorf("%q: %v", k, err)
			}
			if len(replies) == 0 {
				return nil, fmt.Errorf("%q: an empty list", k)
			}
		} else {
			var one HTTPReply
			if err := json.Unmarshal(v, &one); err != nil {
				return nil, fmt.Errorf("%q: %v", k, err)
			}
			replies = []HTTPReply{one}
		}
		for i, r := range replies {
			if r.Trap == nil && (r.Status < 100 || r.Status > 599) {
				return nil, fmt.Errorf("%q: reply %d: status %d is not an HTTP status", k, i, r.Status)
			}
			if r.Trap != nil && r.Trap.Kind == "" {
				return nil, fmt.Errorf("%q: reply %d: a trap needs a kind", k, i)
			}
		}
		out[strings.ToUpper(method)+" "+url] = replies
	}
	return out, nil
}
