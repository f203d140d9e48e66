package claims

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"sync"
)

// MemoBytes is the default bound of a Memo: what the renders it keeps
// hold, together: many charts as real packages' render (tens or
// hundreds of KB each), never a chart rendered near MaxRendered, which
// renders again when it is asked again. A remembered render is held
// beside the outputs being received and read (inspect.Budget's share of
// outputs, MaxRendered): at 32 MiB, a daemon serving two callers, each
// a chart rendering 15 MiB, held both renders in its memo while it read
// the second, and its high-water mark was 122 to 129 MiB; at 8 MiB, 95
// to 115 MiB (testdata/bench/rendermemory -daemon).
const MemoBytes = 8 << 20

// Memo is a Renderer that remembers what another renders, keyed by the
// whole request (the sha256 of the chart archive and of each values
// file, the release and the namespace), so a chart listed many times, in
// one archive or in many, renders once. It remembers a chart's own fault
// (a *ChartError) as well as a rendering; a renderer's failure (any
// other error, a cancelled context) is not remembered. It forgets the
// least recently used renders once they hold more than its bound. It is
// safe for concurrent use; requests for a render under way wait for it
// rather than render it again.
//
// What it returns is shared between callers: they must not change it.
type Memo struct {
	next  Renderer
	limit int64

	mu      sync.Mutex
	entries map[memoKey]*list.Element
	order   *list.List // front: most recently used
	held    int64
	flight  map[memoKey]*flight
	// renders counts the renders asked of next.
	renders int
}

type memoKey [sha256.Size]byte

type memoEntry struct {
	key memoKey
	r   Rendered
	// bad says the chart cannot render, for reason.
	bad    bool
	reason string
	bytes  int64
}

type flight struct {
	done  chan struct{}
	entry *memoEntry // nil: the render failed (not the chart's fault)
}

// NewMemo returns a Memo of next bounded to limit bytes (MemoBytes when
// limit is 0 or less).
func NewMemo(next Renderer, limit int64) *Memo {
	if limit <= 0 {
		limit = MemoBytes
	}
	return &Memo{next: next, limit: limit, entries: map[memoKey]*list.Element{}, order: list.New(), flight: map[memoKey]*flight{}}
}

// Renders is how many renders the Memo asked of its renderer.
func (m *Memo) Renders() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.renders
}

// Key is the digest a request is remembered by: every field of it,
// each length-prefixed, the archive and values files by their sha256.
func Key(req ChartRequest) [sha256.Size]byte {
	h := sha256.New()
	field := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	sum := sha256.Sum256(req.Chart)
	field(sum[:])
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(req.Values)))
	h.Write(n[:])
	for _, v := range req.Values {
		sum := sha256.Sum256(v)
		field(sum[:])
	}
	field([]byte(req.Release))
	field([]byte(req.Namespace))
	return [sha256.Size]byte(h.Sum(nil))
}

// Render answers from memory, or renders with the Memo's renderer. A
// request whose lookups are asked of a cluster (ChartRequest.Ask) is
// rendered each time, never remembered.
func (m *Memo) Render(ctx context.Context, req ChartRequest) (Rendered, error) {
	if req.Ask || req.Asking != nil {
		return m.next.Render(ctx, req)
	}
	key := memoKey(Key(req))
	for {
		m.mu.Lock()
		if el, ok := m.entries[key]; ok {
			m.order.MoveToFront(el)
			e := el.Value.(*memoEntry)
			m.mu.Unlock()
			return e.answer()
		}
		f, busy := m.flight[key]
		if !busy {
			if err := ctx.Err(); err != nil {
				m.mu.Unlock()
				return Rendered{}, err
			}
			f = &flight{done: make(chan struct{})}
			m.flight[key] = f
			m.renders++
			m.mu.Unlock()
			return m.render(ctx, key, req, f)
		}
		m.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return Rendered{}, ctx.Err()
		}
		if f.entry != nil {
			return f.entry.answer()
		}
		// The render it waited for failed (not the chart's fault, or
		// its caller gave up): this caller tries for itself.
	}
}

func (m *Memo) render(ctx context.Context, key memoKey, req ChartRequest, f *flight) (Rendered, error) {
	r, err := m.next.Render(ctx, req)
	var bad *ChartError
	var e *memoEntry
	switch {
	case err == nil:
		e = &memoEntry{key: key, r: r, bytes: size(r)}
	case errors.As(err, &bad):
		e = &memoEntry{key: key, bad: true, reason: bad.Reason, bytes: int64(len(bad.Reason)) + 256}
	}
	m.mu.Lock()
	delete(m.flight, key)
	f.entry = e
	if e != nil && e.bytes <= m.limit {
		m.entries[key] = m.order.PushFront(e)
		m.held += e.bytes
		for m.held > m.limit {
			old := m.order.Back()
			m.order.Remove(old)
			oe := old.Value.(*memoEntry)
			delete(m.entries, oe.key)
			m.held -= oe.bytes
		}
	}
	m.mu.Unlock()
	close(f.done)
	return r, err
}

func (e *memoEntry) answer() (Rendered, error) {
	if e.bad {
		return Rendered{}, &ChartError{Reason: e.reason}
	}
	return e.r, nil
}

// size is about what a rendering holds in memory.
func size(r Rendered) int64 {
	n := int64(256)
	for name, b := range r.Files {
		n += int64(len(name)+len(b)) + 64
	}
	for _, s := range r.Notes {
		n += int64(len(s)) + 16
	}
	for _, l := range r.Lookups {
		n += int64(len(l.APIVersion)+len(l.Kind)+len(l.Namespace)+len(l.Name)) + 64
	}
	if f := r.Found; f != nil {
		n += int64(len(f.Failed)+len(f.Stopped)) + 64
		for name, b := range f.Files {
			n += int64(len(name)+len(b)) + 64
		}
	}
	return n
}
