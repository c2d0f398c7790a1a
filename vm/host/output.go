package host

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/hale-lang/hale/internal/termsafe"
	"github.com/hale-lang/hale/vm"
)

// output serialises the program's text output: each line is written
// whole, so lines from concurrent consumers never interleave. Stdout is
// buffered and flushed when a consumer goes idle, before a blocking call
// (sleep, HTTP), before anything goes to stderr, and at the end of the
// run, or after every line when it is a terminal; stderr is written at
// once.
type output struct {
	mu       sync.Mutex
	stdout   *bufio.Writer
	stderr   io.Writer
	terminal bool // flush stdout after every line
}

func newOutput(stdout, stderr io.Writer) *output {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	return &output{stdout: bufio.NewWriterSize(stdout, 32<<10), stderr: stderr, terminal: isTerminal(stdout)}
}

// isTerminal reports whether w is a character device, such as a
// terminal, where a person waits for each line.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// println writes s and a newline to stdout.
func (o *output) println(s string) {
	o.mu.Lock()
	o.stdout.WriteString(s)
	o.stdout.WriteByte('\n')
	if o.terminal {
		o.stdout.Flush()
	}
	o.mu.Unlock()
}

// eprintln writes s and a newline to stderr, after what stdout holds.
func (o *output) eprintln(s string) { o.report(s + "\n") }

// report writes text to stderr as one write, after what stdout holds.
func (o *output) report(text string) {
	o.mu.Lock()
	o.stdout.Flush()
	io.WriteString(o.stderr, text)
	o.mu.Unlock()
}

func (o *output) flush() {
	o.mu.Lock()
	if o.stdout.Buffered() > 0 {
		o.stdout.Flush()
	}
	o.mu.Unlock()
}

// TrapReport is a trap that stopped a run, with where it happened.
type TrapReport struct {
	Trap     *vm.Trap
	Consumer int // the consumer whose handler trapped
	// N is the delivery number on Consumer (the coordinate C:N), -1 when
	// the trap happened while initialising Instance at start-up.
	N        int
	Delivery *Delivery // the delivery being handled; nil at start-up
	Instance string    // the target (or initialised) instance
	Topic    string    // the delivered message's topic; "" for a start delivery
	// Context, when set, says where a trap outside any handler happened
	// ("nats binding \"jobs\" for topic Job (consumer 3)"): it is
	// printed as the last line, `  on <Context>`.
	Context string
}

// String returns the report as Run prints it (docs/language.md):
//
//	trap: division by zero
//	  at trap.hl:17:16 in Worker.on Job
//	  delivery 0:3 (target Worker, message 0:2, topic Job)
//
// with `message start` for a start delivery, and a last line
// `  at start-up (initialising Worker)` for a trap in an initialiser, and
// `  reading stdin for topic Line (consumer 2)` for a guard that trapped
// on a line read from stdin.
func (t *TrapReport) String() string {
	var b strings.Builder
	b.WriteString("trap: ")
	// The message may hold the program's own text (an assert's); it is
	// escaped like everything else hale reports (termsafe).
	b.WriteString(termsafe.String(t.Trap.Message))
	b.WriteByte('\n')
	for _, f := range t.Trap.Stack {
		b.WriteString("  at ")
		if f.Pos != "" {
			b.WriteString(f.Pos)
			b.WriteString(" in ")
		}
		b.WriteString(f.Func)
		b.WriteByte('\n')
	}
	if t.Context != "" {
		b.WriteString("  on " + t.Context + "\n")
		return termsafe.Lines(b.String())
	}
	if t.Delivery == nil && t.Instance == "" && t.Topic != "" {
		// A guard trapped on a line read from stdin, before it was
		// published (consumer.failedGuard).
		b.WriteString("  reading stdin for topic " + t.Topic + " (consumer " + strconv.Itoa(t.Consumer) + ")\n")
		return termsafe.Lines(b.String())
	}
	if t.Delivery == nil {
		b.WriteString("  at start-up (initialising " + t.Instance + ")\n")
		return termsafe.Lines(b.String())
	}
	b.WriteString("  delivery " + strconv.Itoa(t.Consumer) + ":" + strconv.Itoa(t.N) + " (target " + t.Instance + ", message ")
	if t.Delivery.IsStart() {
		b.WriteString("start)\n")
	} else {
		b.WriteString(t.Delivery.Message.String() + ", topic " + t.Topic + ")\n")
	}
	return termsafe.Lines(b.String())
}
