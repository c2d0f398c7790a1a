// Command reentry is a stand-in for the interpreter guest in
// reentry_test.go: a Go program built for wasip1 as a reactor that waits
// in an import (as the guest waits in hale.prim while compiled code runs)
// and exports an allocation that compiled code calls during that wait.
// Allocated values are rooted in a handle table until the call ends, as
// compiled code's registers would have to be.
package main

import "runtime"

type node struct {
	left, right *node
}

// handles roots every node allocated during one wait; compiled code
// holds indexes into it, never addresses.
var handles []*node

// gcEvery, when positive, collects garbage at every gcEvery-th
// allocation, to check that the handles keep their nodes alive.
var gcEvery int32

//go:wasmimport env wait
func wait(depth int32) int32

// run waits in the host, which runs compiled code meanwhile, and
// returns the number of nodes of the tree whose handle the host got.
//
//go:wasmexport run
func run(depth, every int32) int64 {
	gcEvery = every
	h := wait(depth)
	if h < 0 || int(h) >= len(handles) {
		return -1
	}
	n := count(handles[h])
	handles = handles[:0]
	return n
}

// newNode allocates a node whose children are the nodes of handles l
// and r (-1 for none) and returns its handle.
//
//go:wasmexport new_node
func newNode(l, r int32) int32 {
	x := &node{}
	if l >= 0 {
		x.left = handles[l]
	}
	if r >= 0 {
		x.right = handles[r]
	}
	handles = append(handles, x)
	if gcEvery > 0 && int32(len(handles))%gcEvery == 0 {
		runtime.GC()
	}
	return int32(len(handles) - 1)
}

// ring holds the last nodes newGarbage allocated: a reused slot as root.
var ring [1024]*node
var next int

// newGarbage allocates a node that becomes garbage soon after, rooted
// in a reused slot, and returns no handle.
//
//go:wasmexport new_garbage
func newGarbage(l, r int32) int32 {
	ring[next%len(ring)] = &node{}
	next++
	return -1
}

// nop is the cost of entering the guest and nothing else.
//
//go:wasmexport nop
func nop(l, r int32) int32 { return l }

func count(n *node) int64 {
	if n == nil {
		return 0
	}
	return 1 + count(n.left) + count(n.right)
}

func main() {}
