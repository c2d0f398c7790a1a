// Command fakellm runs the fake chat-completions API of package fakellm on
// a loopback port until interrupted, for trying examples/agent.hl without
// an API key:
//
//	go run ./internal/fakellm/cmd/fakellm -key sk-demo -fail 1
//
// It prints the base URL to give the agent (LLM_BASE_URL) and logs each
// request's outcome on stderr.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/hale-lang/hale/internal/fakellm"
)

func main() {
	key := flag.String("key", "sk-demo", "the bearer token to accept")
	fail := flag.Int("fail", 0, "answer the first N requests with 503")
	stallFirst := flag.Int("stall-first", 0, "stall the N requests after the failed ones")
	stall := flag.Duration("stall", 5*time.Second, "how long a stalled request waits")
	flag.Parse()
	srv, err := fakellm.Start(fakellm.Options{Key: *key, FailFirst: *fail, StallFirst: *stallFirst, Stall: *stall,
		Log: func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer srv.Close()
	fmt.Printf("fake chat-completions API at %s (key %q)\n", srv.URL, *key)
	fmt.Printf("try: OPENAI_API_KEY=%s LLM_BASE_URL=%s go run ./cmd/hale run examples/agent.hl -- \"How many apples do we have?\"\n", *key, srv.URL)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	<-stop
}
