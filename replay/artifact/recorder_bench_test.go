package artifact

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRecorderMessages records what a main-bus message costs the
// recorder: a publish (12-byte payload) and its delivery, appended from
// one goroutine to a file, as `hale run` records msgs.hl. ns/op is per
// entry, producer side; cpu-ns/entry adds the writer goroutine's hashing
// and writing (the process's CPU time over the entries, the file's sync
// and rename at Close included).
//
//	go test ./replay/artifact -run XXX -bench RecorderMessages -benchtime 400000x -count 5
func BenchmarkRecorderMessages(b *testing.B) {
	for _, typed := range []bool{false, true} {
		name := "Append"
		if typed {
			name = "typed"
		}
		b.Run(name, func(b *testing.B) {
			r, err := Create(filepath.Join(b.TempDir(), "run.halerec"), testHeader(1), Options{})
			if err != nil {
				b.Fatal(err)
			}
			payload := []byte{8, 2, 2, 0x80, 0x40, 3, 4, 't', 'i', 'c', 'k', 0}
			cpu := recorderCPU()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				m := MessageID{Producer: 0, Seq: uint64(i / 2)}
				if i%2 == 0 {
					pub := Publish{Topic: "Tick", Message: m, Payload: payload}
					if typed {
						err = r.AppendPublish(0, &pub)
					} else {
						err = r.Append(0, pub)
					}
				} else {
					d := Delivery{Target: "Counter", Message: m, Topic: "Tick"}
					if typed {
						err = r.AppendDelivery(0, &d)
					} else {
						err = r.Append(0, d)
					}
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			if err := r.Close(VerdictQuiescent, 0); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(recorderCPU()-cpu)/float64(b.N), "cpu-ns/entry")
			b.ReportMetric(float64(r.Stalls()), "stalls")
		})
	}
}

// BenchmarkRecorderTwoConsumers records what Savina's Counting costs the
// recorder: one consumer appends publishes while another, on another
// thread, appends the deliveries of earlier ones, each entry after a few
// hundred nanoseconds of other work (a handler), so the two take the
// recorder's lock in turn from two processors. ns/op is per entry, wall
// time; cpu-ns/entry is the process's CPU time over the entries, the
// writer's included, and the work between entries too (work-ns/entry
// says how much of it that is, measured alone).
//
//	go test ./replay/artifact -run XXX -bench RecorderTwoConsumers -benchtime 400000x -count 5
func BenchmarkRecorderTwoConsumers(b *testing.B) {
	work := func(n int) uint64 {
		x := uint64(n)
		for range 64 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		return x
	}
	alone := recorderCPU()
	var sink uint64
	for i := range 200000 {
		sink += work(i)
	}
	workNS := float64(recorderCPU()-alone) / 200000
	r, err := Create(filepath.Join(b.TempDir(), "run.halerec"), testHeader(2), Options{})
	if err != nil {
		b.Fatal(err)
	}
	payload := []byte{8, 2, 2, 0x80, 0x40, 3, 4, 't', 'i', 'c', 'k', 0}
	n := b.N / 2
	published := make(chan uint64, 1024)
	errs := make(chan error, 2)
	cpu := recorderCPU()
	b.ResetTimer()
	go func() {
		var s uint64
		for i := range n {
			s += work(i)
			pub := Publish{Topic: "Incr", Message: MessageID{Producer: 0, Seq: uint64(i)}, Payload: payload}
			if err := r.AppendPublish(0, &pub); err != nil {
				errs <- err
				return
			}
			published <- uint64(i)
		}
		close(published)
		sink += s
		errs <- nil
	}()
	go func() {
		for seq := range published {
			d := Delivery{Target: "Counter", Message: MessageID{Producer: 0, Seq: seq}, Topic: "Incr"}
			if err := r.AppendDelivery(1, &d); err != nil {
				errs <- err
				return
			}
			_ = work(int(seq))
		}
		errs <- nil
	}()
	for range 2 {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	if err := r.Close(VerdictQuiescent, 0); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(recorderCPU()-cpu)/float64(2*n), "cpu-ns/entry")
	b.ReportMetric(workNS, "work-ns/entry")
	b.ReportMetric(float64(r.Stalls()), "stalls")
	_ = sink
}

// recorderCPU is the process's user and system CPU time.
func recorderCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
