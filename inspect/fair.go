package inspect

import (
	"context"
	"sync"
	"time"
)

// Flow is one source's share of the daemon's readers, read for one
// request: the rights every reader shares (the memory pool, the parse
// right, the render lane, the reserves) go to flows in turn, not to
// readers in the order they asked, as Kubernetes' API Priority and
// Fairness shares an API server between flows. A flow is known by its
// source (a directory, a registry source, as the read names it): the
// reads of one source share one flow, whichever requests make them, so
// twenty plays planning one bundle at once take the turns of one flow
// and leave another bundle's plan its own. A read outside any source
// (one archive) is a flow of its own. A Flow also counts what its
// request spent of its budgets (Limits.RenderBudget, Limits.ReadBudget):
// those are the request's, over all its sources.
type Flow struct {
	name string
	// key names the flow's source; flows of one key are one flow to
	// the fair pools ("" : the flow alone).
	key string
	// request is the flow of the whole request this source is read for
	// (nil: this is it), which counts the budgets.
	request *Flow

	mu sync.Mutex
	// budget is the request's render budget (Limits.RenderBudget), set
	// by the read that begins under it.
	budget time.Duration
	// spent is the render-lane time the request's charts and raw
	// manifest files took, charts and manifests how many took it.
	spent     time.Duration
	charts    int
	manifests int
	// readBudget is the request's read budget (Limits.ReadBudget), set
	// as budget is; inflated is what its archives decompressed to beyond
	// what they store, so far.
	readBudget int64
	inflated   int64
}

// id is the flow's identity in the fair pools: its source's key, or the
// flow itself.
func (f *Flow) id() any {
	if f.key != "" {
		return f.key
	}
	return f
}

// budgets is the flow that counts f's request's budgets.
func (f *Flow) budgets() *Flow {
	if f.request != nil {
		return f.request
	}
	return f
}

type flowKey struct{}

// WithFlow is ctx carrying a new request named name (for messages):
// every read under it spends one render budget and one read budget, and
// reads each source as that source's flow (a read of no source, as a
// flow of its own). A server gives each request one; a read whose
// context carries none is a request of its own.
func WithFlow(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, flowKey{}, &Flow{name: name})
}

// flowOf is the flow ctx carries, or nil.
func flowOf(ctx context.Context) *Flow {
	f, _ := ctx.Value(flowKey{}).(*Flow)
	return f
}

// inFlow is ctx carrying a flow (a new one, named name, when it carries
// none) whose request's budgets are limits'.
func inFlow(ctx context.Context, name string, limits Limits) context.Context {
	f := flowOf(ctx)
	if f == nil {
		f = &Flow{name: name}
		ctx = context.WithValue(ctx, flowKey{}, f)
	}
	r := f.budgets()
	r.mu.Lock()
	r.budget = limits.renderBudget()
	r.readBudget = limits.readBudget()
	r.mu.Unlock()
	return ctx
}

// ofSource is ctx (which carries a flow: inFlow) reading source, named
// as the read names it: its reads are source's flow, for the budgets of
// the same request.
func ofSource(ctx context.Context, source string) context.Context {
	f := flowOf(ctx)
	if f == nil {
		return ctx
	}
	r := f.budgets()
	return context.WithValue(ctx, flowKey{}, &Flow{name: r.name, key: source, request: r})
}

// inflation is what an archive's stream, which stores stored bytes,
// charges to the read budget of ctx's flow: given the bytes it
// has decompressed to so far, it charges those beyond stored that it
// has not charged yet, and fails with a *ReadBudgetError once the
// flow's total is past its budget. It is nil (nothing charged) when ctx
// carries no flow.
func inflation(ctx context.Context, stored int64) func(total int64) error {
	f := flowOf(ctx)
	if f == nil {
		return nil
	}
	var charged int64
	return func(total int64) error {
		over := total - stored
		if over <= charged {
			return nil
		}
		n := over - charged
		charged = over
		return f.inflate(n)
	}
}

// inflate charges n bytes an archive decompressed to beyond what it
// stores to the flow's read budget.
func (f *Flow) inflate(n int64) error {
	f = f.budgets()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inflated += n
	budget := f.readBudget
	if budget <= 0 {
		budget = DefaultReadBudget
	}
	if f.inflated > budget {
		return &ReadBudgetError{Flow: f.name, Budget: budget}
	}
	return nil
}

// fairPool is units (bytes of memory, or seats) that flows hold, handed
// out by fair queuing. When units free, the waiting flow holding the
// fewest goes next; among flows holding as many, the one whose turn is
// oldest (it began waiting, or last took or gave back units, longest
// ago), so flows take turns, and a flow with a hundred readers waiting
// delays another flow's first by one turn, not a hundred. Within a flow,
// readers go in the order they asked. A chosen reader that asks more
// than is free waits for it, and no one passes it (a large ask is never
// starved by small ones).
//
// perFlow, when not 0, is the most one flow may hold: a flow at it waits
// for its own units to come back even when others are free, which keeps
// those for another flow.
type fairPool struct {
	mu      sync.Mutex
	free    int64
	perFlow int64
	flows   map[any]*share // by Flow.id
	waiting int
	clock   uint64
}

// share is what one flow holds of a fairPool and the readers it has
// waiting, in the order they asked.
type share struct {
	held  int64
	turn  uint64
	queue []*ask
}

// ask is one reader waiting for n units; ready is closed when they are
// its.
type ask struct {
	n     int64
	ready chan struct{}
}

func newFairPool(size, perFlow int64) *fairPool {
	return &fairPool{free: size, perFlow: perFlow, flows: map[any]*share{}}
}

func (p *fairPool) share(f *Flow) *share {
	s := p.flows[f.id()]
	if s == nil {
		s = &share{}
		p.flows[f.id()] = s
	}
	return s
}

func (p *fairPool) tick() uint64 {
	p.clock++
	return p.clock
}

// acquire waits (until ctx ends) for n units for flow f.
func (p *fairPool) acquire(ctx context.Context, f *Flow, n int64) error {
	p.mu.Lock()
	s := p.share(f)
	a := &ask{n: n, ready: make(chan struct{})}
	if len(s.queue) == 0 {
		s.turn = p.tick()
	}
	s.queue = append(s.queue, a)
	p.waiting++
	p.dispatch()
	p.mu.Unlock()
	select {
	case <-a.ready:
		return nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-a.ready:
		// Given meanwhile: given back.
		p.giveBack(f, n)
		return ctx.Err()
	default:
	}
	for i, q := range s.queue {
		if q == a {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			break
		}
	}
	p.waiting--
	p.forget(f, s)
	p.dispatch() // it may have held the others up
	return ctx.Err()
}

// tryAcquire takes n units for flow f, without waiting, when they are
// free and no reader waits that could be given them (a reader waiting
// only because its flow is at perFlow could not: it does not stop
// another flow's take).
func (p *fairPool) tryAcquire(f *Flow, n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.share(f)
	if p.eligibleWaiting() || n > p.free || (p.perFlow > 0 && s.held+n > p.perFlow) {
		p.forget(f, s)
		return false
	}
	p.free -= n
	s.held += n
	return true
}

// othersWaiting reports whether a reader of a flow other than f waits.
func (p *fairPool) othersWaiting(f *Flow) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for g, s := range p.flows {
		if g != f.id() && len(s.queue) > 0 {
			return true
		}
	}
	return false
}

// eligibleWaiting reports whether a reader waits whose flow may be given
// its units (is not at perFlow).
func (p *fairPool) eligibleWaiting() bool {
	if p.waiting == 0 {
		return false
	}
	for _, s := range p.flows {
		if len(s.queue) > 0 && (p.perFlow == 0 || s.held+s.queue[0].n <= p.perFlow) {
			return true
		}
	}
	return false
}

// release gives back n units flow f holds.
func (p *fairPool) release(f *Flow, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.giveBack(f, n)
}

func (p *fairPool) giveBack(f *Flow, n int64) {
	s := p.flows[f.id()]
	s.held -= n
	p.free += n
	s.turn = p.tick()
	p.forget(f, s)
	p.dispatch()
}

// forget drops a flow that holds nothing and waits for nothing.
func (p *fairPool) forget(f *Flow, s *share) {
	if s.held == 0 && len(s.queue) == 0 {
		delete(p.flows, f.id())
	}
}

// dispatch gives free units to waiting readers, flow by flow as the
// rule says.
func (p *fairPool) dispatch() {
	for p.waiting > 0 {
		var next *share
		for _, s := range p.flows {
			if len(s.queue) == 0 || (p.perFlow > 0 && s.held+s.queue[0].n > p.perFlow) {
				continue
			}
			if next == nil || s.held < next.held || (s.held == next.held && s.turn < next.turn) {
				next = s
			}
		}
		if next == nil || next.queue[0].n > p.free {
			return
		}
		a := next.queue[0]
		next.queue = next.queue[1:]
		p.waiting--
		p.free -= a.n
		next.held += a.n
		next.turn = p.tick()
		close(a.ready)
	}
}
