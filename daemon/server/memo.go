package server

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/colonel-byte/zarf-planner/daemon/service"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// Memo remembers rendered plan documents, so a daemon asked the same
// question about an unchanged directory answers without planning again.
//
// Every request is still read in full (each archive is stat'ed and
// looked up, changed ones are re-read), and only then is the memo
// consulted, under a key that hashes everything decide depends on: the
// request's options and warnings, and what the directory was found to
// hold (each candidate's path and sha256, which names its content, and
// every invalid, unusable and ignored file and warning with its reason).
// A changed, added, removed, renamed or replaced archive changes the key,
// so it can never be answered with a stale plan. A cluster-aware request
// is never memoized: the cluster changes under it.
type Memo struct {
	mu       sync.Mutex
	docs     map[memoKey]memoDoc
	order    []memoKey // oldest first
	bytes    int
	maxDocs  int
	maxBytes int

	hits, misses atomic.Uint64
}

type memoKey [sha256.Size]byte

type memoDoc struct {
	doc    []byte
	failed bool
}

// NewMemo keeps at most maxDocs documents and maxBytes of them.
func NewMemo(maxDocs, maxBytes int) *Memo {
	return &Memo{docs: map[memoKey]memoDoc{}, maxDocs: maxDocs, maxBytes: maxBytes}
}

// Planned is a rendered contract document.
type Planned struct {
	// Doc is the contract document (JSON).
	Doc []byte
	// Failed says the document is a failure.
	Failed bool
	// Counts say how the archives were obtained.
	Counts inspect.Counts
	// Read is what the plan was made from (nil when it failed before
	// reading the directory): a saved plan records it.
	Read *service.Prepared
}

// Plan plans req like the package's Plan and renders the document,
// reusing a remembered document when the request and what its directory
// holds are unchanged. A nil Memo plans every time.
func (m *Memo) Plan(ctx context.Context, req service.Request) (*Planned, error) {
	read, early, err := service.Read(ctx, req)
	if err != nil {
		return nil, err
	}
	if early != nil {
		return render(early)
	}
	if m == nil || read.Request.Options.Mode == options.ModeCluster {
		return renderRead(read)
	}
	key, err := memoKeyOf(read)
	if err != nil {
		return nil, err
	}
	if d, ok := m.get(key); ok {
		m.hits.Add(1)
		return &Planned{Doc: d.doc, Failed: d.failed, Counts: read.Directory.Counts, Read: read}, nil
	}
	m.misses.Add(1)
	p, err := renderRead(read)
	if err != nil {
		return nil, err
	}
	m.put(key, memoDoc{doc: p.Doc, failed: p.Failed})
	return p, nil
}

// Stats reports how many requests the memo answered and how many it did not.
func (m *Memo) Stats() (hits, misses uint64) {
	return m.hits.Load(), m.misses.Load()
}

func renderRead(read *service.Prepared) (*Planned, error) {
	p, err := render(read.Decide())
	if p != nil {
		p.Read = read
	}
	return p, err
}

func render(res *service.Result) (*Planned, error) {
	b, err := res.JSON()
	if err != nil {
		return nil, fmt.Errorf("rendering the plan: %w", err)
	}
	return &Planned{Doc: b, Failed: res.Failed, Counts: res.Counts}, nil
}

func (m *Memo) get(k memoKey) (memoDoc, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.docs[k]
	if ok {
		i := slices.Index(m.order, k)
		m.order = append(slices.Delete(m.order, i, i+1), k)
	}
	return d, ok
}

func (m *Memo) put(k memoKey, d memoDoc) {
	if len(d.doc) > m.maxBytes {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.docs[k]; ok {
		return
	}
	for len(m.order) > 0 && (len(m.order) >= m.maxDocs || m.bytes+len(d.doc) > m.maxBytes) {
		old := m.order[0]
		m.order = m.order[1:]
		m.bytes -= len(m.docs[old].doc)
		delete(m.docs, old)
	}
	m.docs[k] = d
	m.order = append(m.order, k)
	m.bytes += len(d.doc)
}

// memoKeyOf hashes everything decide reads. Each field is written with
// its length first, so no two different inputs write the same bytes.
func memoKeyOf(p *service.Prepared) (memoKey, error) {
	req, dir := p.Request, p.Directory
	opts, err := json.Marshal(req.Options)
	if err != nil {
		return memoKey{}, fmt.Errorf("keying the plan: %w", err)
	}
	read, err := json.Marshal(req.Read)
	if err != nil {
		return memoKey{}, fmt.Errorf("keying the plan: %w", err)
	}
	h := sha256.New()
	field := func(h hash.Hash, s string) {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	field(h, "zarf-planner plan memo 4")
	field(h, string(opts))
	field(h, string(read))
	field(h, string(req.Options.Caller))
	if p.Key != nil { // the key's content, not only its path
		field(h, p.Key.Fingerprint)
	}
	list := func(tag string, n int, each func(i int)) {
		field(h, fmt.Sprintf("%s %d", tag, n))
		for i := range n {
			each(i)
		}
	}
	list("warnings", len(req.Warnings), func(i int) { field(h, req.Warnings[i]) })
	list("candidates", len(dir.Candidates), func(i int) {
		field(h, dir.Candidates[i].Path)
		field(h, dir.Candidates[i].SHA256)
	})
	list("invalid", len(dir.Invalid), func(i int) {
		inv := dir.Invalid[i]
		field(h, inv.Archive)
		field(h, inv.Package)
		field(h, inv.Field)
		field(h, inv.Error())
	})
	list("unusable", len(dir.Unusable), func(i int) { field(h, dir.Unusable[i].Path); field(h, dir.Unusable[i].Reason) })
	list("ignored", len(dir.Ignored), func(i int) { field(h, dir.Ignored[i].Path); field(h, dir.Ignored[i].Reason) })
	list("warnings", len(dir.Warnings), func(i int) { field(h, dir.Warnings[i]) })
	var k memoKey
	h.Sum(k[:0])
	return k, nil
}
