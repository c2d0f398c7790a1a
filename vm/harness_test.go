package vm_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hale-lang/hale"
	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
	"github.com/hale-lang/hale/vm/value"
)

// compileFiles runs the whole front end and the code generator on a
// program given as files ("app.hl" is the entry).
func compileFiles(files map[string]string) (*image.Image, error) {
	fsys := fstest.MapFS{}
	for name, src := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(src)}
	}
	c, err := hale.Compile(fsys, "app.hl", hale.BuildOptions{})
	if err != nil {
		return nil, err
	}
	return c.Image, nil
}

func compile(t testing.TB, src string) *image.Image {
	t.Helper()
	img, err := compileFiles(map[string]string{"app.hl": src})
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, src)
	}
	// Every test also runs the image through its binary form.
	data, err := img.MarshalBinary()
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	img2, err := image.Unmarshal(data)
	if err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return img2
}

// primCall is one call the fake host served.
type primCall struct {
	id   uint16
	args []byte
}

// fakeHost records every gateway call. Prints go to out (with the newline
// the host adds); publishes are queued; other primitives are answered by
// serve, or get an empty result.
type fakeHost struct {
	calls []primCall
	out   strings.Builder
	queue []published
	serve func(id uint16, args []byte) ([]byte, error)
	img   *image.Image // when set, publishes carry guard bits (vm.GuardedSubscribers)
}

type published struct {
	topic   int
	payload []byte
	bits    []byte // the guard bits, when the host knows the image
}

// targets returns msg's subscribers whose guard (if any) holds, in main
// order; work groups are the runtime's business (package vm/host).
func (msg published) targets(img *image.Image) []int {
	var out []int
	bit := 0
	guarded := vm.GuardedSubscribers(img, msg.topic)
	for _, sub := range img.Topics[msg.topic].Subscribers {
		if bit < len(guarded) && guarded[bit].Inst == sub {
			holds := bit/8 < len(msg.bits) && msg.bits[bit/8]>>(bit%8)&1 != 0
			bit++
			if !holds {
				continue
			}
		}
		out = append(out, sub)
	}
	return out
}

func (h *fakeHost) Prim(id uint16, args []byte) ([]byte, error) {
	h.calls = append(h.calls, primCall{id, append([]byte(nil), args...)})
	switch id {
	case vm.PrimPrint:
		s, err := value.Decode(args, value.StringType)
		if err != nil {
			return nil, err
		}
		h.out.WriteString(s.AsStr())
		h.out.WriteByte('\n')
		return nil, nil
	case vm.PrimPublish:
		topic, n := binary.Uvarint(args)
		if n <= 0 {
			return nil, errors.New("bad publish")
		}
		args = args[n:]
		var bits []byte
		if h.img != nil {
			nb := vm.GuardBits(len(vm.GuardedSubscribers(h.img, int(topic))))
			if len(args) < nb {
				return nil, errors.New("bad publish: no guard bits")
			}
			bits, args = append([]byte(nil), args[:nb]...), args[nb:]
		}
		h.queue = append(h.queue, published{int(topic), append([]byte(nil), args...), bits})
		return nil, nil
	case vm.PrimPublishAfter:
		// A timer: this scheduler has no clock, so it queues the
		// message at once, as a replay does, and notes the delay.
		topic, n := binary.Uvarint(args)
		delay, m := binary.Uvarint(args[max(n, 0):])
		if n <= 0 || m <= 0 || delay == 0 {
			return nil, errors.New("bad publish after")
		}
		fmt.Fprintf(&h.out, "(after %d ms)\n", delay)
		args = args[n+m:]
		var bits []byte
		if h.img != nil {
			nb := vm.GuardBits(len(vm.GuardedSubscribers(h.img, int(topic))))
			if len(args) < nb {
				return nil, errors.New("bad publish after: no guard bits")
			}
			bits, args = append([]byte(nil), args[:nb]...), args[nb:]
		}
		h.queue = append(h.queue, published{int(topic), append([]byte(nil), args...), bits})
		return nil, nil
	}
	if h.serve != nil {
		return h.serve(id, args)
	}
	return nil, nil
}

// run is a one-consumer scheduler: it initialises every instance in main
// order, delivers the start handlers, then every published message to its
// subscribers, until the queue is empty or a handler traps.
func run(t testing.TB, img *image.Image, h *fakeHost) (*vm.Machine, error) {
	t.Helper()
	m, err := vm.New(img, h)
	if err != nil {
		t.Fatalf("vm.New: %v", err)
	}
	h.img = img
	for i := range img.Instances {
		if err := m.Init(i); err != nil {
			return m, err
		}
	}
	if err := shareParams(m, img); err != nil {
		return m, err
	}
	for i, in := range img.Instances {
		if img.Loci[in.Locus].Start >= 0 {
			if err := m.Deliver(i, vm.HandlerStart, nil); err != nil {
				return m, err
			}
		}
	}
	for n := 0; len(h.queue) > 0; n++ {
		if n > 100000 {
			t.Fatalf("more than 100000 deliveries")
		}
		msg := h.queue[0]
		h.queue = h.queue[1:]
		for _, sub := range msg.targets(img) {
			if err := m.Deliver(sub, msg.topic, msg.payload); err != nil {
				return m, err
			}
		}
	}
	return m, nil
}

// shareParams gives m the parameters of every instance, as the runtime
// does after start-up for the guards.
func shareParams(m *vm.Machine, img *image.Image) error {
	table := make([][]byte, len(img.Instances))
	for i := range img.Instances {
		b, err := m.Params(i)
		if err != nil {
			return err
		}
		table[i] = b
	}
	return m.SetGuardParams(table)
}

// report renders a run's output and trap as `hale run` would.
func report(out string, err error) string {
	if err == nil {
		return out
	}
	var tr *vm.Trap
	if !errors.As(err, &tr) {
		return out + "error: " + err.Error() + "\n"
	}
	var b strings.Builder
	b.WriteString(out)
	b.WriteString("trap: " + tr.Message + "\n")
	for _, f := range tr.Stack {
		b.WriteString("  at " + f.Pos + " in " + f.Func + "\n")
	}
	return b.String()
}

// runSrc compiles and runs src and returns its report.
func runSrc(t testing.TB, src string) string {
	t.Helper()
	h := &fakeHost{}
	_, err := run(t, compile(t, src), h)
	return report(h.out.String(), err)
}

// startProg wraps statements into the start handler of a single locus,
// after the declarations decls.
func startProg(decls, body string) string {
	return decls + "\nlocus T {\n    on start {\n" + body + "\n    }\n}\nmain { spawn T; }\n"
}
