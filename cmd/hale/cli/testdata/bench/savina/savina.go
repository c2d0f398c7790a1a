// Command savina runs the Savina actor benchmarks of ../pingpong.hl,
// ../counting.hl, ../threadring.hl and ../forkjoin.hl in Go, with
// goroutines and channels and the same message counts, for comparison:
//
//	savina pingpong|counting|threadring|forkjoin|empty [REPEATS]
//
// It prints the same line as the Hale program, once per repeat (REPEATS
// runs of the benchmark, 1 by default, so that a run lasts long enough
// to measure beside the process's start-up). BenchmarkSavina builds
// and runs it; it is not part of the module's packages (testdata).
package main

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
)

// The sizes of the Hale programs.
const (
	pingPongN   = 40000  // round trips: 2N messages
	countingN   = 200000 // increments, then a retrieve and its answer
	ringSize    = 100    // nodes in the ring
	ringHops    = 200000 // token passes
	forkWorkers = 60     // workers, each receiving every job
	forkMsgs    = 3000   // jobs
)

func main() {
	repeats := 1
	if len(os.Args) == 3 {
		n, err := strconv.Atoi(os.Args[2])
		if err != nil || n < 1 {
			usage()
		}
		repeats = n
	} else if len(os.Args) != 2 {
		usage()
	}
	benchmarks := map[string]func(){
		"pingpong":   pingPong,
		"counting":   counting,
		"threadring": threadRing,
		"forkjoin":   forkJoin,
		"empty":      func() {},
	}
	run, ok := benchmarks[os.Args[1]]
	if !ok {
		usage()
	}
	for range repeats {
		run()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: savina pingpong|counting|threadring|forkjoin|empty [REPEATS]")
	os.Exit(2)
}

// pingPong: the pinger sends ping n, the ponger answers pong n.
func pingPong() {
	ping, pong := make(chan int), make(chan int)
	go func() {
		for n := range ping {
			pong <- n
		}
	}()
	last := 0
	for n := 1; n <= pingPongN; n++ {
		ping <- n
		last = <-pong
	}
	close(ping)
	fmt.Println("pingpong", 2*last)
}

// counting: a producer sends N increments to a counter goroutine, then
// asks for the total over a reply channel.
func counting() {
	incr := make(chan int, 1024)
	retrieve := make(chan chan int)
	go func() {
		count := 0
		for {
			select {
			case by := <-incr:
				count += by
			case reply := <-retrieve:
				// Increments sent before the request are all queued on
				// incr: drain them first, as a mailbox would deliver them.
				for len(incr) > 0 {
					count += <-incr
				}
				reply <- count
				return
			}
		}
	}()
	for i := 0; i < countingN; i++ {
		incr <- 1
	}
	total := make(chan int)
	retrieve <- total
	fmt.Println("counted", <-total)
}

// threadRing: ringSize goroutines, each reading its own channel and
// passing the token to the next; the token carries the hops left.
func threadRing() {
	inbox := make([]chan int, ringSize)
	for i := range inbox {
		inbox[i] = make(chan int, 1)
	}
	done := make(chan int)
	for id := 0; id < ringSize; id++ {
		go func(id int) {
			next := inbox[(id+1)%ringSize]
			for left := range inbox[id] {
				if left == 1 {
					done <- id
					return
				}
				next <- left - 1
			}
		}(id)
	}
	inbox[1] <- ringHops
	fmt.Println("ring done at node", <-done)
}

// forkJoin: every job goes to every worker, which computes sin(θ)².
func forkJoin() {
	var wg sync.WaitGroup
	jobs := make([]chan float64, forkWorkers)
	for i := range jobs {
		jobs[i] = make(chan float64, 1024)
		wg.Add(1)
		go func(in chan float64) {
			defer wg.Done()
			sum := 0.0
			for theta := range in {
				s := math.Sin(theta)
				r := s * s
				if r <= 0 {
					panic("unexpected result")
				}
				sum += r
			}
			_ = sum
		}(jobs[i])
	}
	for m := 0; m < forkMsgs; m++ {
		for _, in := range jobs {
			in <- 37.2
		}
	}
	for _, in := range jobs {
		close(in)
	}
	wg.Wait()
	fmt.Println("forkjoin", forkWorkers*forkMsgs)
}
