package dap

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	godap "github.com/google/go-dap"
)

// FuzzServe feeds a client's messages, any bytes, to the server over a
// scripted session: whatever arrives, Serve must answer with well-formed
// DAP messages and end when its input ends, never panic or hang. Each
// line of the input is one message body, framed as DAP frames it.
func FuzzServe(f *testing.F) {
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.hl"), []byte("main {}\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	seeds := []string{
		`{"seq":1,"type":"request","command":"initialize","arguments":{"adapterID":"hale"}}`,
		`{"seq":2,"type":"request","command":"launch","arguments":{"program":"app.hl","stopOnEntry":true}}`,
		`{"seq":3,"type":"request","command":"setBreakpoints","arguments":{"source":{"path":"app.hl"},"breakpoints":[{"line":1}]}}`,
		`{"seq":4,"type":"request","command":"configurationDone"}`,
		`{"seq":5,"type":"request","command":"stackTrace","arguments":{"threadId":1}}`,
		`{"seq":6,"type":"request","command":"variables","arguments":{"variablesReference":-3}}`,
		`{"seq":7,"type":"request","command":"evaluate","arguments":{"expression":"state main","frameId":99}}`,
		`{"seq":8,"type":"request","command":"stepBack","arguments":{"threadId":1}}`,
		`{"seq":9,"type":"request","command":"launch","arguments":{"program":5,"stopAt":"x"}}`,
		`{"seq":10,"type":"request","command":"nonsense"}`,
		`{"seq":11,"type":"request","command":"disconnect"}`,
	}
	f.Add(strings.Join(seeds, "\n"))
	f.Add(seeds[1] + "\n" + seeds[3] + "\n" + seeds[7])
	f.Add("{}\n[]\nnull\n{\"type\":\"request\"}")
	f.Fuzz(func(t *testing.T, script string) {
		var in bytes.Buffer
		for _, body := range strings.Split(script, "\n") {
			fmt.Fprintf(&in, "Content-Length: %d\r\n\r\n%s", len(body), body)
		}
		var got *fakeDebugger
		opts := fakeLaunch(&got, nil)
		opts.Dir = dir
		var out syncBuffer
		done := make(chan error, 1)
		go func() { done <- Serve(context.Background(), &in, &out, opts) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Serve did not end at the end of its input")
		}
		r := bufio.NewReader(bytes.NewReader(out.Bytes()))
		for {
			data, err := godap.ReadBaseMessage(r)
			if err != nil {
				break
			}
			if _, err := godap.DecodeProtocolMessage(data); err != nil {
				t.Fatalf("the server wrote a message that does not decode: %v\n%s", err, data)
			}
		}
	})
}

// syncBuffer is a bytes.Buffer that the server's goroutines may write
// while the fuzz function waits.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}
