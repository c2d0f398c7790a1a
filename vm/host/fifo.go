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
// pending deliveries are blocks[0][head:], the full blocks between, and
// blocks[len-1][:tail].
type fifo struct {
	blocks []*fifoBlock
	head   int        // the next delivery's index in blocks[0]
	tail   int        // deliveries in the last block
	n      int        // deliveries pending
	spare  *fifoBlock // an emptied block kept for the next push that needs one
}

// len returns the number of pending deliveries.
func (q *fifo) len() int { return q.n }

// push adds d at the end.
func (q *fifo) push(d Delivery) {
	if len(q.blocks) == 0 || q.tail == fifoBlockLen {
		b := q.spare
		q.spare = nil
		if b == nil {
			b = new(fifoBlock)
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
	b := q.blocks[0]
	d := b[q.head]
	b[q.head] = Delivery{} // drop the payload reference
	q.head++
	q.n--
	switch {
	case q.n == 0:
		// Empty: start again at the front of the one block left.
		clear(q.blocks[1:])
		q.blocks, q.head, q.tail = q.blocks[:1], 0, 0
	case q.head == fifoBlockLen:
		q.blocks[0] = nil
		q.blocks, q.head = q.blocks[1:], 0
		q.spare = b
	}
	return d
}

// clear drops every pending delivery and returns how many there were.
func (q *fifo) clear() int {
	n := q.n
	*q = fifo{}
	return n
}
