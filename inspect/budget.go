package inspect

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
)

// Budget is the memory every parallel reader of a directory shares: the
// members an archive keeps in memory (zarf.yaml, checksums.txt,
// documentation.tar, the manifests and charts of its component tarballs) and its decompressor's window and buffers. It does
// not grow with the number of cores: more readers wait rather than
// allocate, so a directory of small crafted archives cannot exhaust
// memory however many cores read it.
//
// Reading an archive takes from the budget as it goes, so it cannot
// deadlock with its neighbours: a reader that holds nothing waits for the
// shared pool; a reader that already holds some and needs more takes a
// reserve (one of ReserveSeats, each covering everything one archive can
// need, and each used by one reader at a time), so no reader ever waits
// while holding the shared pool for more of it.
//
// Flows (WithFlow) share it fairly: the shared pool, the parse right and
// the render lane each go to the waiting flow holding the least of them
// (fairPool), so one request's many archives or charts cannot queue
// another request's few behind them; and one flow holds at most half the
// shared pool (flowShare), so a request whose archives hold their memory
// for seconds (manifests at their bounds) leaves the other half to
// another request.
type Budget struct {
	shared *fairPool
	size   int64
	// reserve is the right to draw on a reserve: ReserveSeats seats, at
	// most one per flow, handed out fairly as the render lane's are.
	reserve *fairPool
	// parse is the right to parse YAML, one reader at a time: the parser
	// zarf uses allocates many times what it reads (see facts.Shape), so
	// only one such parse runs at once.
	parse *fairPool
	// render is the render lane: the right to render a chart and read
	// what it rendered (RenderSeats seats, at most one per flow). A
	// reader gives the parse right back while it waits for a seat and
	// while it holds one, so a chart's seconds, and the parse of what it
	// rendered, delay only charts, never an archive that has none.
	render *fairPool
	// read is the right to read what a chart rendered (its YAML parse
	// and claims), one chart at a time, taken on a seat of the render
	// lane: two charts render at once, but what they rendered is parsed
	// one after the other, so the lane holds one big parse at a time, as
	// the readers of archives do (parse).
	read *fairPool
	// output is the bytes of what charts rendered that this process
	// holds, received from their renderers and not yet read: at most
	// Outputs together, shared fairly. A chart's output is received only once its share is
	// given (lane.Receive) and it is given back once the output is read,
	// so another chart's output waits in its renderer's memory
	// meanwhile. A Yield of the read right keeps it: the readings of two
	// charts' outputs may take turns between documents, but only while
	// both outputs fit in it together.
	output *fairPool
	// held and peak count what readers hold now and held at most.
	held, peak atomic.Int64
}

// Outputs is how many bytes of what charts rendered a process holds at
// once, received and not yet read (Budget's output): one chart's output
// at its bound (claims.MaxRendered) and 8 MiB beside it, so a real
// chart's output (cert-manager's is about 1 MiB, a chart of
// Prometheus' CRDs a few) is received beside another request's output
// being read, and waits for one document of its reading; only an output
// that does not fit beside another (the two past 24 MiB together: two
// past 12 MiB, or one past 8 MiB beside one at the bound) waits in its
// renderer for that one to be read whole.
const Outputs = claims.MaxRendered + 8<<20

// RenderSeats is how many charts render (and have what they rendered
// read) at once, for all flows together. One flow holds at most one
// seat, whether or not another flow waits: a flow's chart therefore
// never waits for another flow's render when two flows render, and when
// more do, it waits for at most one render of another flow (each seat
// that frees goes to the waiting flow that holds none and waited
// longest), however many charts each flow has queued. What a chart
// rendered is read under the lane's read right, one chart at a time and
// fairly too: a flow's chart waits, besides, for at most one reading of
// another flow's output. A render lasts at most claims.RenderTimeout,
// and reading what it rendered (at most claims.MaxRendered) took 3 to
// 9 s for 13 MiB on a loaded 2-core machine.
const RenderSeats = 2

// ReserveSeats is how many archives may draw on a reserve at once, for
// all flows together; one flow holds at most one. A reader needs one when
// it already holds memory and the shared pool has no more for it (the
// pool is spent, or its flow holds its share, flowShare), and keeps it
// until its archive is read (its charts rendered too). With two seats,
// two flows never wait for each other's reserve; with more flows in need
// at once, a seat that frees goes to the waiting flow that holds none and
// waited longest, so a flow waits for one archive of another flow per
// flow ahead of it, never for another flow's many archives.
const ReserveSeats = 2

// Memory limits.
const (
	// DefaultMemory is the shared budget of a directory's readers.
	DefaultMemory = 64 << 20
	// archiveReserve is the most one archive can hold beyond its first
	// take: every member at its cap and what the catalog keeps of its
	// component tarballs (the decompressor's window is taken first, while
	// holding nothing).
	archiveReserve = MaxZarfYAML + MaxChecksums + MaxDocumentationTar + MaxContents
)

// flowShare is the most one flow (request) may hold of a shared pool of
// size bytes: half of it, so another flow always finds the other half,
// and never less than one archive's first take (its decompressor), so
// any archive can be read; never more than the pool (a first take past
// it is refused, not waited for).
func flowShare(size int64) int64 {
	return min(size, max(size/2, readBuffer+MaxWindow+decoderOverhead))
}

// NewBudget is a shared budget of size bytes (DefaultMemory if size is 0),
// plus ReserveSeats reserves of one archive each.
func NewBudget(size int64) *Budget {
	if size <= 0 {
		size = DefaultMemory
	}
	return &Budget{shared: newFairPool(size, flowShare(size)), size: size, reserve: newFairPool(ReserveSeats, 1), parse: newFairPool(1, 1), render: newFairPool(RenderSeats, 1), read: newFairPool(1, 1), output: newFairPool(Outputs, 0)}
}

// Size is the most a budget lets its readers hold at once: the shared pool
// and the reserves.
func (b *Budget) Size() int64 { return b.size + ReserveSeats*archiveReserve }

// hold is what one archive's reading holds of a budget.
type hold struct {
	b *Budget
	// flow is the flow it takes for (set by its first take).
	flow     *Flow
	shared   int64
	reserved int64
	locked   bool
}

func (b *Budget) hold() *hold { return &hold{b: b} }

// take holds n more bytes, waiting (until ctx ends) when the budget is
// spent. what names the use, for the error when n can never fit.
func (h *hold) take(ctx context.Context, n int64, what string) error {
	if n <= 0 {
		return nil
	}
	if h.flow == nil {
		if h.flow = flowOf(ctx); h.flow == nil {
			h.flow = &Flow{}
		}
	}
	if h.shared == 0 && h.reserved == 0 {
		if share := flowShare(h.b.size); n > share {
			return fmt.Errorf("%w: %s needs %d bytes of memory, more than the %d one request may hold of the %d the readers share", ErrLimit, what, n, share, h.b.size)
		}
		if err := h.b.shared.acquire(ctx, h.flow, n); err != nil {
			return err
		}
		h.shared = n
		h.b.count(n)
		return nil
	}
	if h.b.shared.tryAcquire(h.flow, n) {
		h.shared += n
		h.b.count(n)
		return nil
	}
	if h.reserved+n > archiveReserve {
		return fmt.Errorf("%w: %s needs %d more bytes of memory, more than one archive may hold", ErrLimit, what, n)
	}
	if !h.locked {
		if err := h.b.reserve.acquire(ctx, h.flow, 1); err != nil {
			return err
		}
		h.locked = true
	}
	h.reserved += n
	h.b.count(n)
	return nil
}

// count records n more bytes held (negative: released).
func (b *Budget) count(n int64) {
	now := b.held.Add(n)
	for {
		p := b.peak.Load()
		if now <= p || b.peak.CompareAndSwap(p, now) {
			return
		}
	}
}

// release gives back everything the hold took.
func (h *hold) release() {
	h.b.count(-(h.shared + h.reserved))
	if h.shared > 0 {
		h.b.shared.release(h.flow, h.shared)
		h.shared = 0
	}
	if h.locked {
		h.b.reserve.release(h.flow, 1)
		h.locked = false
	}
	h.reserved = 0
}

// parsing waits for the right to parse (until ctx ends) and returns it.
// It is taken for ctx's flow (a flow of its own when ctx carries none).
func (b *Budget) parsing(ctx context.Context) (*parseRight, error) {
	f := flowOf(ctx)
	if f == nil {
		f = &Flow{}
	}
	r := &parseRight{b: b, flow: f}
	return r, r.take(ctx)
}

// parseRight is one reader's right to parse, given back while it renders.
type parseRight struct {
	b    *Budget
	flow *Flow
	held bool
}

func (r *parseRight) take(ctx context.Context) error {
	if err := r.b.parse.acquire(ctx, r.flow, 1); err != nil {
		return err
	}
	r.held = true
	return nil
}

// release gives the right back, if it is held.
func (r *parseRight) release() {
	if r.held {
		r.held = false
		r.b.parse.release(r.flow, 1)
	}
}

// renderer is charts as a claims.Lane whose turns are the render lane's
// seats: for each chart, the reader gives the parse right back, waits for
// a seat of its flow's, renders the chart and reads what it rendered
// there, and takes the parse right again.
func (r *parseRight) renderer(charts claims.Renderer) claims.Renderer {
	if charts == nil {
		return nil
	}
	return &lane{right: r, charts: charts}
}

var _ claims.Receiver = (*lane)(nil)

// lane is the render lane of one archive's reader.
type lane struct {
	right  *parseRight
	charts claims.Renderer
	// reading says the lane holds the read right (Read, Manifest).
	reading bool
	// output is the share of the budget's output the lane holds
	// (Receive), in bytes.
	output int64
}

// Render renders with the lane's renderer; Collect calls it within a
// Turn.
func (l *lane) Render(ctx context.Context, req claims.ChartRequest) (claims.Rendered, error) {
	return l.charts.Render(ctx, req)
}

// Read runs fn, the reading of what a chart rendered, under the lane's
// read right (Collect calls it within a Turn), and gives back after it
// the output's share the render took (Receive).
func (l *lane) Read(ctx context.Context, fn func() error) error {
	defer l.giveOutput()
	if err := l.takeRead(ctx); err != nil {
		return err
	}
	defer l.giveRead()
	return fn()
}

// Receive waits (until ctx ends) for a share of size bytes of the
// budget's output, the outputs of charts received and not yet read,
// and keeps it until the Turn's Read is done: a chart's render calls it
// (claims.ReceiveHook) before it receives what the chart rendered into
// this process, so that while other outputs fill the share, this one
// waits in its renderer's memory. A size past claims.MaxRendered (which
// the renderer refuses to receive after) waits for the whole share.
func (l *lane) Receive(ctx context.Context, size int64) error {
	size = min(max(size, 0), claims.MaxRendered)
	if l.output > 0 || size == 0 {
		return ctx.Err()
	}
	if err := l.right.b.output.acquire(ctx, l.right.flow, size); err != nil {
		return err
	}
	l.output = size
	return nil
}

// giveOutput gives back the output's share the lane holds, if any.
func (l *lane) giveOutput() {
	if l.output > 0 {
		l.right.b.output.release(l.right.flow, l.output)
		l.output = 0
	}
}

// Manifest runs fn, the reading of one raw manifest file, without the
// parse right and under the lane's read right (fair across flows, as the
// reading of what charts rendered is), within what is left of the flow's
// render budget; the time fn takes is charged to it. A file is at most
// MaxContentFile, so another flow waits for one file's reading, never
// for an archive's. When the budget runs out (before the file, or while
// it is read) it fails with a *RenderBudgetError.
func (l *lane) Manifest(ctx context.Context, fn func(ctx context.Context) error) error {
	r, f := l.right, l.right.flow
	r.release()
	if err := l.takeRead(ctx); err != nil {
		return err
	}
	err := f.spend(ctx, &f.budgets().manifests, fn)
	l.giveRead()
	if err != nil {
		return err
	}
	return r.take(ctx)
}

// Yield gives the read right back and waits its turn for it again when a
// reader of another flow waits for it (Read and Manifest call it between
// documents); else it returns at once.
func (l *lane) Yield(ctx context.Context) error {
	b, f := l.right.b, l.right.flow
	if !b.read.othersWaiting(f) {
		return ctx.Err()
	}
	l.giveRead()
	return l.takeRead(ctx)
}

// Aside runs fn without the read right, which it gives back first and
// takes again after (waiting its turn, until ctx ends): the cutting of
// a file into documents, which holds nothing another flow shares. The
// outputs' share (Outputs) bounds what is so cut at once.
func (l *lane) Aside(ctx context.Context, fn func()) error {
	l.giveRead()
	fn()
	return l.takeRead(ctx)
}

// takeRead waits (until ctx ends) for the read right.
func (l *lane) takeRead(ctx context.Context) error {
	if err := l.right.b.read.acquire(ctx, l.right.flow, 1); err != nil {
		return err
	}
	l.reading = true
	return nil
}

// giveRead gives the read right back, if the lane holds it (a Yield that
// gave it up and could not take it again leaves it not held).
func (l *lane) giveRead() {
	if l.reading {
		l.reading = false
		l.right.b.read.release(l.right.flow, 1)
	}
}

// left is the flow's render budget and what is left of it.
func (f *Flow) left() (budget, left time.Duration) {
	f = f.budgets()
	f.mu.Lock()
	defer f.mu.Unlock()
	budget = f.budget
	if budget <= 0 {
		budget = DefaultRenderBudget
	}
	return budget, budget - f.spent
}

// errBudgetSpent is the cause of a turn's context ended by its flow's
// render budget.
var errBudgetSpent = errors.New("the request's render budget is spent")

// Turn runs fn on a seat of the render lane, without the parse right,
// within what is left of the flow's render budget; what fn takes is
// charged to it (its waits for a share of the outputs and for the read
// right too, each at most one reading of another chart's output). It
// gives back the share of the outputs fn's render took, if no Read did.
// When the budget runs out (before the turn, or during it) the turn
// fails with a *RenderBudgetError.
func (l *lane) Turn(ctx context.Context, fn func(ctx context.Context) error) error {
	r, f := l.right, l.right.flow
	r.release()
	if err := r.b.render.acquire(ctx, f, 1); err != nil {
		return err
	}
	// A flow holds one seat at most: its turns come one after another,
	// so what is left is not spent by another of its turns meanwhile.
	err := f.spend(ctx, &f.budgets().charts, fn)
	// The share of a render that took one (Receive) and failed, or
	// whose context ended, before a Read gave it back.
	l.giveOutput()
	r.b.render.release(f, 1)
	if err != nil {
		return err
	}
	return r.take(ctx)
}

// spend runs fn within what is left of the request's render budget,
// charges the time it takes to the budget and counts one more in count
// (the request's charts or manifest files, under f.budgets().mu). It
// fails with a *RenderBudgetError when the budget is spent before fn or
// while it runs.
func (f *Flow) spend(ctx context.Context, count *int, fn func(ctx context.Context) error) error {
	budget, left := f.left()
	if left <= 0 {
		return f.spentError(budget)
	}
	start := time.Now()
	tctx, cancel := context.WithTimeoutCause(ctx, left, errBudgetSpent)
	err := fn(tctx)
	over := errors.Is(context.Cause(tctx), errBudgetSpent)
	cancel()
	r := f.budgets()
	r.mu.Lock()
	r.spent += time.Since(start)
	*count++
	r.mu.Unlock()
	if over && ctx.Err() == nil {
		return f.spentError(budget)
	}
	return err
}

// DefaultRenderBudget is the render budget of a request that sets none
// (Limits.RenderBudget, the option render_budget): four archives at
// their claims.ArchiveRenderBudget, or twelve charts that each run to
// claims.RenderTimeout, and well within the module's own timeout (300 s
// by default), so a runaway request ends with this budget's error, not
// the module's. Real packages' charts render and are read in well under
// a second each (a catalog of the four of testdata/bundles/realcharts
// takes 0.9 s in all), so a request that spends it is a runaway.
const DefaultRenderBudget = 120 * time.Second

// RenderBudgetError is a request whose charts spent its render budget:
// the render-lane time (rendering a chart, one core, and reading what it
// rendered) of all its charts together. It wraps ErrChartRenderer: like
// a renderer's failure it is not a fact of any archive, is never cached,
// and fails the request's read.
type RenderBudgetError struct {
	// Flow names the request, Budget is its render budget, and Charts
	// the charts and Manifests the raw manifest files that took Spent of
	// it.
	Flow      string
	Budget    time.Duration
	Spent     time.Duration
	Charts    int
	Manifests int
}

func (e *RenderBudgetError) Error() string {
	took := plural(e.Charts, "chart")
	if e.Manifests > 0 {
		took += " and " + plural(e.Manifests, "manifest file")
	}
	// Spent is left out: the message says the same each time.
	return fmt.Sprintf("the render budget of %s is spent: %s took all of it (rendering charts, and reading what they rendered and the manifests packages ship), and the rest were not read; give a larger render_budget (--render-budget on the command line), or read fewer packages at once", e.Budget, took)
}

// plural is n things, the noun made plural with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func (e *RenderBudgetError) Unwrap() []error { return []error{ErrChartRenderer, ErrBudget} }

// ErrBudget marks a read its request's budget stopped (a
// *RenderBudgetError or a *ReadBudgetError): not a fact of any archive,
// never cached, and it fails the request's read rather than leave a
// package out.
var ErrBudget = errors.New("a request budget is spent")

// stopping says err ends an archive's read as it is, neither wrapped as
// unreadable nor read further: a bound of the archive (ErrLimit) or of
// its request (ErrBudget).
func stopping(err error) bool {
	return errors.Is(err, ErrLimit) || errors.Is(err, ErrBudget)
}

// DefaultReadBudget is the read budget of a request that sets none
// (Limits.ReadBudget, the option read_budget): how much its archives
// may decompress to, together, beyond what they store. Zarf packages
// are mostly images, whose layers are compressed already, so a real
// package decompresses to about what it stores; what it adds is its
// text (manifests, charts, SBOMs), tens of MiB. A request past 16 GiB
// of that is decompression bombs (each archive is also bounded by
// itself, max_inflation). Reading 16 GiB of zeros costs a core about
// 3 s (3.6 GiB in 0.71 s of CPU, the CLI's catalog, on a 2-core
// machine).
const DefaultReadBudget = 16 << 30

// ReadBudgetError is a request whose archives decompressed to more than
// its read budget beyond what they store. Like a *RenderBudgetError it
// is not a fact of any archive (it wraps ErrBudget), is never cached,
// and fails the request's read.
type ReadBudgetError struct {
	// Flow names the request and Budget is its read budget in bytes.
	// Which archive was being read when it ran out is left out of the
	// message: archives are read in parallel, and the message says the
	// same each time.
	Flow   string
	Budget int64
}

func (e *ReadBudgetError) Error() string {
	return fmt.Sprintf("the read budget of %s is spent: the archives read by this request decompressed to %s more than they store on disk, and the rest were not read; real packages decompress to about what they store (their images are compressed already), so these are likely decompression bombs; if they are real, give a larger read_budget (--read-budget on the command line), or read fewer packages at once", gib(e.Budget), gib(e.Budget))
}

func (e *ReadBudgetError) Unwrap() error { return ErrBudget }

// GiB is n GiB in bytes (the option read_budget), 0 for n ≤ 0 (the
// default) and at most 1 EiB.
func GiB(n int) int64 {
	return int64(min(max(n, 0), 1<<30)) << 30
}

// gib is n bytes in GiB, as read_budget is given.
func gib(n int64) string {
	if n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}

// spentError is the error of f's request once its render budget is
// spent.
func (f *Flow) spentError(budget time.Duration) *RenderBudgetError {
	f = f.budgets()
	f.mu.Lock()
	defer f.mu.Unlock()
	return &RenderBudgetError{Flow: f.name, Budget: budget, Spent: f.spent, Charts: f.charts, Manifests: f.manifests}
}
