package natsbus_test

import (
	"context"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/internal/natstest"
	"github.com/hale-lang/hale/replay"
	"github.com/hale-lang/hale/replay/artifact"
	"github.com/hale-lang/hale/vm/host"
	"github.com/hale-lang/hale/vm/host/natsbus"
)

// The programs of BenchmarkNATS: a sender that exports N messages, a
// receiver that binds them and exits once it has them all.
const (
	benchSender = `topic Msg { n: int, text: string }
locus Sender(count: int) {
    on start { for i in 0..count { publish Msg { n: i, text: "hello" }; } }
}
main {
    spawn Sender(int(unwrap_or(get(std::os::args(), 0), "0")));
    export Msg to nats(env "HALE_NATS_URL") subject "bench";
}
`
	benchReceiver = `topic Msg { n: int, text: string }
locus Receiver(count: int) {
    var got = 0;
    on Msg(m) { got += 1; if got == count { std::process::exit(0); } }
}
main {
    spawn Receiver(int(unwrap_or(get(std::os::args(), 0), "0")));
    bind nats(env "HALE_NATS_URL") subject "bench" to Msg;
}
`
)

// BenchmarkNATS measures messages per second between two Hale runs (each
// with its own connection, in this process) through an embedded
// nats-server, unrecorded and with both runs recorded, beside the same
// traffic between two plain nats.go clients. Each iteration sends
// benchMessages messages; msgs/s is the figure to read.
func BenchmarkNATS(b *testing.B) {
	const benchMessages = 20000
	srv := natstest.Start(b)
	idle := srv.Subscriptions()
	b.Run("go-client", func(b *testing.B) {
		cpu := cpuTime()
		for range b.N {
			goClientPair(b, srv, benchMessages)
		}
		report(b, benchMessages, cpu)
	})
	for _, recorded := range []bool{false, true} {
		name := "hale"
		if recorded {
			name = "hale-recorded"
		}
		b.Run(name, func(b *testing.B) {
			send, recv := compileB(b, benchSender), compileB(b, benchReceiver)
			b.ResetTimer()
			cpu := cpuTime()
			for range b.N {
				halePair(b, srv, idle, send, recv, benchMessages, recorded)
			}
			report(b, benchMessages, cpu)
		})
	}
}

// cpuTime is the process's user and system CPU time so far: the machine
// the figures come from is shared, so CPU time per message says more
// than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report adds msgs/s (wall) and the CPU time per message (the broker's,
// both ends' and the recorders' together) since cpu.
func report(b *testing.B, perOp int, cpu time.Duration) {
	n := float64(perOp * b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(cpuTime()-cpu)/n, "cpu-ns/msg")
}

type compiled struct{ img *image.Image }

func compileB(b *testing.B, src string) *compiled { return &compiled{img: compile(b, src)} }

// goClientPair sends n messages from one nats.go connection to another,
// with the same headers and payload size as Hale's.
func goClientPair(b *testing.B, srv *natstest.Server, n int) {
	sub, err := nats.Connect(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	pub, err := nats.Connect(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	done := make(chan struct{})
	got := 0
	s, err := sub.Subscribe("bench", func(m *nats.Msg) {
		_ = m.Header.Get(natsbus.HeaderTopic)
		if got++; got == n {
			close(done)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	s.SetPendingLimits(-1, -1)
	sub.Flush()
	payload := make([]byte, 12)
	for i := range n {
		m := nats.NewMsg("bench")
		m.Header.Set(natsbus.HeaderTopic, "Msg 0123456789abcdef")
		m.Header.Set(natsbus.HeaderMsgID, "0123456789abcdef:0:"+strconv.Itoa(i))
		m.Data = payload
		if err := pub.PublishMsg(m); err != nil {
			b.Fatal(err)
		}
	}
	pub.Flush()
	select {
	case <-done:
	case <-time.After(time.Minute):
		b.Fatalf("received %d of %d", got, n)
	}
}

// halePair runs the receiver, then the sender, and waits for the
// receiver to have every message.
func halePair(b *testing.B, srv *natstest.Server, idle int, send, recv *compiled, n int, recorded bool) {
	dir := b.TempDir()
	run := func(c *compiled, name string) (chan host.Result, context.CancelFunc) {
		opts := host.Options{Engine: host.EngineWasm, Args: []string{strconv.Itoa(n)}, ProcessID: 1,
			Bus:       natsbus.New(natsbus.Options{}),
			LookupEnv: func(string) (string, bool) { return srv.URL(), true }}
		var rec *replay.RecordingJournal
		if recorded {
			var err error
			rec, err = replay.StartRecording(artifact.Settings{Path: filepath.Join(dir, name+".halerec"), EnvPolicy: artifact.EnvWithheld},
				c.img, replay.HeaderInfo{HaleVersion: "bench", ProcessID: 1})
			if err != nil {
				b.Fatal(err)
			}
			opts.Journal = rec
		}
		ctx, cancel := context.WithCancel(context.Background())
		res := make(chan host.Result, 1)
		go func() {
			r, err := host.Run(ctx, c.img, opts)
			if rec != nil {
				if cerr := rec.Close(); cerr != nil && err == nil {
					err = cerr
				}
			}
			if err != nil && ctx.Err() == nil {
				b.Error(err)
			}
			res <- r
		}()
		return res, cancel
	}
	srv.WaitSubscriptionsAtMost(idle, 30*time.Second)
	recvDone, cancelRecv := run(recv, "receiver")
	defer cancelRecv()
	srv.WaitSubscriptions(idle+1, 30*time.Second)
	sendDone, cancelSend := run(send, "sender")
	defer cancelSend()
	select {
	case r := <-recvDone:
		if r.Code != 0 {
			b.Fatalf("receiver: %+v", r)
		}
	case <-time.After(2 * time.Minute):
		b.Fatal("the receiver did not get every message")
	}
	<-sendDone
}
