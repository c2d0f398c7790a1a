package host

// fifoBlockLen is the number of deliveries in one block of a fifo: 7 KiB
// of deliveries, so that a consumer's idle queue stays small and a long
// one allocates a block every 128 deliveries.
const fifoBlockLen = 128

type fifoBlock [fifoBlockLen]Delivery

// fifo is a consumer's queue of pending deliveries when they are taken
// in arrival order (no Order, no Stepper): blocks of deliveries, so that a
// queue that grows to hundreds of thousands of deliveries (one handler
// publishing to many subscribers, or a fast producer) never copies or
// clears a large array, as appending to one slice did (40% of the CPU
// time of the Savina fork-join and counting programs, natively). The
// pending deliveries are blocks[first][head:], the full blocks between,
// and blocks[len-1][:tail].
type fifo struct {
	blocks []*fifoBlock
	first  int // the first block with pending deliveries
	head   int // the next delivery's index in blocks[first]
	tail   int // deliveries in the last block
	n      int // deliveries pending
	// spare: emptied blocks kept for the pushes that need one, at most
	// fifoSpares. One was not enough: a consumer whose queue swings by
	// thousands of deliveries (a batch of a producer's publishes arriving
	// while its goroutine waits for a core) allocated a fresh block
	// every 128 deliveries of each swing, and the kernel zeroed its pages.
	spare []*fifoBlock
}

// fifoSpares is the most emptied blocks a fifo keeps: 56 KiB.
const fifoSpares = 8

// len returns the number of pending deliveries.
func (q *fifo) len() int { return q.n }

// push adds d at the end.
func (q *fifo) push(d Delivery) {
	if len(q.blocks) == 0 || q.tail == fifoBlockLen {
		var b *fifoBlock
		if n := len(q.spare); n > 0 {
			b = q.spare[n-1]
			q.spare[n-1] = nil
			q.spare = q.spare[:n-1]
		} else {
			b = new(fifoBlock)
		}
		if len(q.blocks) == cap(q.blocks) && q.first > 0 {
			// Move the live blocks to the front rather than grow the
			// list (amortised: first blocks were popped since).
			n := copy(q.blocks, q.blocks[q.first:])
			clear(q.blocks[n:])
			q.blocks, q.first = q.blocks[:n], 0
		}
		q.blocks = append(q.blocks, b)
		q.tail = 0
	}
	q.blocks[len(q.blocks)-1][q.tail] = d
	q.tail++
	q.n++
}

// pop removes and returns the oldest delivery; the queue must not be
// empty.
func (q *fifo) pop() Delivery {
	b := q.blocks[q.first]
	d := b[q.head]
	b[q.head] = Delivery{} // drop the payload reference
	q.head++
	q.n--
	switch {
	case q.n == 0:
		// Empty: start again at the front of the one block left (most
		// often the only one, which stays where it is).
		if q.first > 0 {
			clear(q.blocks)
			q.blocks = q.blocks[:1]
			q.blocks[0] = b
		}
		q.first, q.head, q.tail = 0, 0, 0
	case q.head == fifoBlockLen:
		q.blocks[q.first] = nil
		q.first++
		q.head = 0
		if len(q.spare) < fifoSpares {
			q.spare = append(q.spare, b)
		}
	}
	return d
}

// clear drops every pending delivery and returns how many there were.
func (q *fifo) clear() int {
	n := q.n
	*q = fifo{}
	return n
}
