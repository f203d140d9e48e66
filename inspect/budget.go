package inspect

import (
	"context"
	"fmt"
	"sync/atomic"

	"golang.org/x/sync/semaphore"

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
// reserve that one reader at a time may use (and that covers everything
// one archive can need), so no reader ever waits while holding the shared
// pool for more of it.
type Budget struct {
	shared  *semaphore.Weighted
	size    int64
	reserve chan struct{} // the right to draw on the reserve, one reader at a time
	// parse is the right to parse YAML, one reader at a time: the parser
	// zarf uses allocates many times what it reads (see facts.Shape), so
	// only one such parse runs at once.
	parse chan struct{}
	// render is the right to render a chart, one at a time: a reader
	// gives the parse right back while it waits for this one and while
	// its chart renders, so a chart's seconds delay only other charts,
	// never an archive that has none to render.
	render chan struct{}
	// held and peak count what readers hold now and held at most.
	held, peak atomic.Int64
}

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

// NewBudget is a shared budget of size bytes (DefaultMemory if size is 0),
// plus the reserve of one archive.
func NewBudget(size int64) *Budget {
	if size <= 0 {
		size = DefaultMemory
	}
	return &Budget{shared: semaphore.NewWeighted(size), size: size, reserve: make(chan struct{}, 1), parse: make(chan struct{}, 1), render: make(chan struct{}, 1)}
}

// Size is the most a budget lets its readers hold at once: the shared pool
// and the reserve.
func (b *Budget) Size() int64 { return b.size + archiveReserve }

// hold is what one archive's reading holds of a budget.
type hold struct {
	b        *Budget
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
	if h.shared == 0 && h.reserved == 0 {
		if n > h.b.size {
			return fmt.Errorf("%w: %s needs %d bytes of memory, more than the %d the readers share", ErrLimit, what, n, h.b.size)
		}
		if err := h.b.shared.Acquire(ctx, n); err != nil {
			return err
		}
		h.shared = n
		h.b.count(n)
		return nil
	}
	if h.b.shared.TryAcquire(n) {
		h.shared += n
		h.b.count(n)
		return nil
	}
	if h.reserved+n > archiveReserve {
		return fmt.Errorf("%w: %s needs %d more bytes of memory, more than one archive may hold", ErrLimit, what, n)
	}
	if !h.locked {
		select {
		case h.b.reserve <- struct{}{}:
			h.locked = true
		case <-ctx.Done():
			return ctx.Err()
		}
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
		h.b.shared.Release(h.shared)
		h.shared = 0
	}
	if h.locked {
		<-h.b.reserve
		h.locked = false
	}
	h.reserved = 0
}

// parsing waits for the right to parse (until ctx ends) and returns it.
func (b *Budget) parsing(ctx context.Context) (*parseRight, error) {
	r := &parseRight{b: b}
	return r, r.take(ctx)
}

// parseRight is one reader's right to parse, given back while it renders.
type parseRight struct {
	b    *Budget
	held bool
}

func (r *parseRight) take(ctx context.Context) error {
	select {
	case r.b.parse <- struct{}{}:
		r.held = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release gives the right back, if it is held.
func (r *parseRight) release() {
	if r.held {
		r.held = false
		<-r.b.parse
	}
}

// renderer is charts, each render of which gives the parse right back,
// waits its turn to render (one chart at a time, in the order asked) and
// takes the parse right again once its chart is rendered.
func (r *parseRight) renderer(charts claims.Renderer) claims.Renderer {
	if charts == nil {
		return nil
	}
	return claims.RenderFunc(func(ctx context.Context, req claims.ChartRequest) (claims.Rendered, error) {
		r.release()
		select {
		case r.b.render <- struct{}{}:
		case <-ctx.Done():
			return claims.Rendered{}, ctx.Err()
		}
		out, err := charts.Render(ctx, req)
		<-r.b.render
		if terr := r.take(ctx); terr != nil {
			return claims.Rendered{}, terr
		}
		return out, err
	})
}
