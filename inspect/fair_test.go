package inspect

import (
	"context"
	"errors"
	"testing"
	"time"
)

// granted reports whether an ask made in the background has been given
// its units, waiting up to d for it.
func granted(done <-chan error, d time.Duration) bool {
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// asking starts p.acquire(f, n) in the background.
func asking(p *fairPool, f *Flow, n int64) <-chan error {
	done := make(chan error, 1)
	go func() { done <- p.acquire(context.Background(), f, n) }()
	return done
}

// waitQueued waits until p has n asks waiting.
func waitQueued(t *testing.T, p *fairPool, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		p.mu.Lock()
		w := p.waiting
		p.mu.Unlock()
		if w == n {
			return
		}
	}
	t.Fatalf("%d asks never queued", n)
}

// A flow with many readers queued for one seat delays another flow's
// first reader by one turn, not by all of them.
func TestAFlowsFirstAskWaitsOneTurnNotTheOtherFlowsQueue(t *testing.T) {
	p := newFairPool(1, 1)
	busy, quiet := &Flow{name: "busy"}, &Flow{name: "quiet"}
	if !p.tryAcquire(busy, 1) {
		t.Fatal("an idle pool refused its seat")
	}
	var queued []<-chan error
	for range 5 {
		queued = append(queued, asking(p, busy, 1))
		waitQueued(t, p, len(queued))
	}
	first := asking(p, quiet, 1)
	waitQueued(t, p, 6)
	p.release(busy, 1)
	if !granted(first, time.Minute) {
		t.Fatal("the quiet flow's ask was not next")
	}
	for i, q := range queued {
		if granted(q, 10*time.Millisecond) {
			t.Fatalf("busy ask %d was given the seat the quiet flow holds", i)
		}
	}
	p.release(quiet, 1)
	if !granted(queued[0], time.Minute) {
		t.Fatal("the busy flow's first ask was not next once the quiet flow was done")
	}
}

// Flows alternate: with two flows each keeping asks queued, the seat
// goes to one then the other.
func TestFlowsTakeTurns(t *testing.T) {
	p := newFairPool(1, 1)
	a, b := &Flow{name: "a"}, &Flow{name: "b"}
	if !p.tryAcquire(a, 1) {
		t.Fatal("an idle pool refused its seat")
	}
	var as, bs []<-chan error
	for range 3 {
		as = append(as, asking(p, a, 1))
		waitQueued(t, p, len(as))
	}
	for range 3 {
		bs = append(bs, asking(p, b, 1))
		waitQueued(t, p, len(as)+len(bs))
	}
	holder := a
	var order []string
	never := make(chan error)
	head := func(q []<-chan error) <-chan error {
		if len(q) == 0 {
			return never
		}
		return q[0]
	}
	for range 6 {
		// One seat: exactly one ask is given it.
		p.release(holder, 1)
		select {
		case <-head(bs):
			bs, holder = bs[1:], b
			order = append(order, "b")
		case <-head(as):
			as, holder = as[1:], a
			order = append(order, "a")
		case <-time.After(time.Minute):
			t.Fatalf("no ask was given the seat after %v", order)
		}
	}
	if got, want := order, []string{"b", "a", "b", "a", "b", "a"}; !equal(got, want) {
		t.Fatalf("turns %v; want %v", got, want)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A flow holds at most perFlow seats: a second seat stays free for
// another flow, which takes it at once.
func TestAFlowLeavesTheSecondSeatToAnother(t *testing.T) {
	p := newFairPool(RenderSeats, 1)
	a, b := &Flow{name: "a"}, &Flow{name: "b"}
	if !granted(asking(p, a, 1), time.Minute) {
		t.Fatal("an idle lane made its first chart wait")
	}
	second := asking(p, a, 1)
	if granted(second, 50*time.Millisecond) {
		t.Fatal("one flow took both seats")
	}
	if !granted(asking(p, b, 1), time.Minute) {
		t.Fatal("another flow waited for a free seat")
	}
	p.release(a, 1)
	if !granted(second, time.Minute) {
		t.Fatal("the flow's second chart did not take its seat back")
	}
}

// Of the memory pool, the flow holding less goes first, and an ask that
// does not fit yet is not passed by smaller ones (no starvation).
func TestThePoolServesTheFlowHoldingLeast(t *testing.T) {
	p := newFairPool(100, 0)
	big, small := &Flow{name: "big"}, &Flow{name: "small"}
	if !p.tryAcquire(big, 90) {
		t.Fatal("an idle pool refused")
	}
	more := asking(p, big, 20)
	waitQueued(t, p, 1)
	first := asking(p, small, 50)
	waitQueued(t, p, 2)
	if p.tryAcquire(small, 5) {
		t.Fatal("a reader passed the queue without waiting")
	}
	p.release(big, 90)
	if !granted(first, time.Minute) {
		t.Fatal("the flow holding nothing was not served first")
	}
	if !granted(more, time.Minute) {
		t.Fatal("the other ask, which fits beside it, waited")
	}
	// 70 held: an ask of 40 waits, and one of 10 behind it waits too.
	large := asking(p, &Flow{name: "large"}, 40)
	waitQueued(t, p, 1)
	tiny := asking(p, &Flow{name: "tiny"}, 10)
	waitQueued(t, p, 2)
	if granted(tiny, 50*time.Millisecond) {
		t.Fatal("a small ask passed a large one that waited first")
	}
	p.release(small, 50)
	if !granted(large, time.Minute) || !granted(tiny, time.Minute) {
		t.Fatal("the asks were not served once memory freed")
	}
}

// An ask given up (its context ended) leaves the queue and holds the
// others up no more.
func TestAnAskGivenUpLeavesTheQueue(t *testing.T) {
	p := newFairPool(10, 0)
	if !p.tryAcquire(&Flow{}, 5) {
		t.Fatal("an idle pool refused")
	}
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { gone <- p.acquire(ctx, &Flow{}, 8) }()
	waitQueued(t, p, 1)
	behind := asking(p, &Flow{}, 3)
	waitQueued(t, p, 2)
	cancel()
	if err := <-gone; err == nil {
		t.Fatal("a cancelled ask was given its units")
	}
	if !granted(behind, time.Minute) {
		t.Fatal("the ask behind a cancelled one still waits")
	}
}

// With both seats of the render lane taken by two flows with charts
// queued, a third flow's chart takes the first seat that frees: it
// waits for one render of another flow, however many they have queued.
func TestAThirdFlowWaitsForOneRender(t *testing.T) {
	p := newFairPool(RenderSeats, 1)
	a, b, c := &Flow{name: "a"}, &Flow{name: "b"}, &Flow{name: "c"}
	if !p.tryAcquire(a, 1) || !p.tryAcquire(b, 1) {
		t.Fatal("an idle lane refused a seat")
	}
	var queued []<-chan error
	for range 4 {
		queued = append(queued, asking(p, a, 1), asking(p, b, 1))
		waitQueued(t, p, len(queued))
	}
	third := asking(p, c, 1)
	waitQueued(t, p, len(queued)+1)
	p.release(b, 1)
	if !granted(third, time.Minute) {
		t.Fatal("the third flow's chart did not take the seat that freed")
	}
	for i, q := range queued {
		if granted(q, 10*time.Millisecond) {
			t.Fatalf("queued chart %d took a seat while the third flow's waited", i)
		}
	}
}

// A long reading yields the read right between documents to a reader of
// another flow, and gets it back after; a yield cut short by its context
// leaves the right given back once, not twice.
func TestAReadingYieldsToAnotherFlowBetweenDocuments(t *testing.T) {
	b := NewBudget(0)
	long, other := &Flow{name: "long"}, &Flow{name: "other"}
	l := &lane{right: &parseRight{b: b, flow: long}}
	if err := l.takeRead(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Nobody waits: a yield keeps the right.
	if err := l.Yield(context.Background()); err != nil || !l.reading {
		t.Fatalf("a yield with nobody waiting: %v, reading %v", err, l.reading)
	}
	waiting := asking(b.read, other, 1)
	waitQueued(t, b.read, 1)
	yielded := make(chan error, 1)
	go func() { yielded <- l.Yield(context.Background()) }()
	if !granted(waiting, time.Minute) {
		t.Fatal("the other flow's reader did not get the right the reading yielded")
	}
	if granted(yielded, 50*time.Millisecond) {
		t.Fatal("the yield came back while the other flow reads")
	}
	b.read.release(other, 1)
	if err := <-yielded; err != nil || !l.reading {
		t.Fatalf("the yield: %v, reading %v; want the right back", err, l.reading)
	}

	// A yield whose context ends while it waits: the right is not held,
	// and giving it back after is a no-op.
	waiting = asking(b.read, other, 1)
	waitQueued(t, b.read, 1)
	ctx, cancel := context.WithCancel(context.Background())
	yielded = make(chan error, 1)
	go func() { yielded <- l.Yield(ctx) }()
	if !granted(waiting, time.Minute) {
		t.Fatal("the other flow's reader did not get the right")
	}
	waitQueued(t, b.read, 1)
	cancel()
	if err := <-yielded; err == nil || l.reading {
		t.Fatalf("a cancelled yield: %v, reading %v; want an error and the right not held", err, l.reading)
	}
	l.giveRead()
	b.read.release(other, 1)
	b.read.mu.Lock()
	free := b.read.free
	b.read.mu.Unlock()
	if free != 1 {
		t.Fatalf("the read right's pool has %d free; want 1 (given back once)", free)
	}
}

// A flow holds at most its share of the memory pool, and a reader of it
// waiting at that share does not stop another flow's reader from taking
// what is free at once.
func TestAFlowAtItsShareLeavesTheRestToAnother(t *testing.T) {
	b := NewBudget(64 << 20)
	share := flowShare(64 << 20)
	heavy, light := &Flow{name: "heavy"}, &Flow{name: "light"}
	if !b.shared.tryAcquire(heavy, share) {
		t.Fatal("an idle pool refused a flow its share")
	}
	waiting := asking(b.shared, heavy, 1<<20)
	waitQueued(t, b.shared, 1)
	if granted(waiting, 50*time.Millisecond) {
		t.Fatal("a flow at its share was given more")
	}
	if !b.shared.tryAcquire(light, 8<<20) {
		t.Fatal("another flow's take was refused while the only waiter is a flow at its share")
	}
	b.shared.release(light, 8<<20)
	b.shared.release(heavy, share)
	if !granted(waiting, time.Minute) {
		t.Fatal("the waiting reader was not given its units once its flow gave some back")
	}
	b.shared.release(heavy, 1<<20)
	h := b.hold()
	if err := h.take(context.Background(), share+1, "a take past one request's share"); err == nil || !errors.Is(err, ErrLimit) {
		t.Fatalf("a first take past a request's share: %v; want ErrLimit, not a wait that never ends", err)
	}
}

// Issue 44 (a review's finding): a reader that holds memory and finds
// no more in the shared pool draws on a reserve, and keeps it until its
// archive is read. There was one reserve for every flow, so under
// memory pressure a flow's archive waited for another flow's whole
// archive (its charts rendered too). Now there are ReserveSeats, one per
// flow at most: a second flow gets its own at once, and a third waits
// for one of theirs, not for the first flow's other archives.
func TestTwoFlowsNeverWaitForEachOthersReserve(t *testing.T) {
	b := NewBudget(16 << 20)
	flows := map[string]context.Context{}
	holds := map[string]*hold{}
	for _, name := range []string{"a", "b", "c"} {
		flows[name] = WithFlow(context.Background(), name)
		holds[name] = b.hold()
	}
	// The shared pool is spent: a holds 8 MiB, b 4 and c 4.
	for name, n := range map[string]int64{"a": 8 << 20, "b": 4 << 20, "c": 4 << 20} {
		if err := holds[name].take(flows[name], n, "first take of "+name); err != nil {
			t.Fatal(err)
		}
	}
	more := func(name string) <-chan error {
		done := make(chan error, 1)
		go func() { done <- holds[name].take(flows[name], 5<<20, "more for "+name) }()
		return done
	}
	if !granted(more("a"), 10*time.Second) {
		t.Fatal("a's archive did not get a reserve when none was held")
	}
	if !granted(more("b"), 10*time.Second) {
		t.Fatal("b's archive waited for the reserve a's archive holds")
	}
	c := more("c")
	waitQueued(t, b.reserve, 1)
	if granted(c, 100*time.Millisecond) {
		t.Fatalf("c drew on a reserve while %d were held", ReserveSeats)
	}
	holds["a"].release()
	if !granted(c, 10*time.Second) {
		t.Fatal("c did not get the reserve a's archive gave back")
	}
	if got, want := b.Size(), int64(16<<20+ReserveSeats*archiveReserve); got != want {
		t.Errorf("the budget's size is %d, want the pool and %d reserves, %d", got, ReserveSeats, want)
	}
	holds["b"].release()
	holds["c"].release()
	if held := b.held.Load(); held != 0 {
		t.Errorf("%d bytes are still held after every archive gave its back", held)
	}
}
