package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/cache/kept"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/registry"
	"github.com/colonel-byte/zarf-planner/render"
	"github.com/colonel-byte/zarf-planner/service"
	"github.com/colonel-byte/zarf-planner/stamp"
)

// Memo remembers rendered plan documents, so a daemon asked the same
// question about an unchanged directory answers without planning again.
//
// A document is remembered under two keys, both naming this build and
// the request's options and warnings. The first is the directory's stamp
// (inspect.Stamp: every name and every file's stat, the same facts the
// cache's stat fast path trusts), looked up before anything is read, and
// only when every archive's outcome followed from its bytes. The second
// hashes what the directory was found to hold after the scan (each
// candidate's path and sha256, which names its content, and every
// invalid, unusable and ignored file and warning with its reason), so a
// touched but unchanged archive is still answered without planning. A
// changed, added, removed, renamed or replaced archive changes both keys,
// so it can never be answered with a stale plan. Both keys hold the content
// of every file the options declare content (options.Files: the public key,
// the policy), not only their paths. Documents are also kept
// in the archive cache (PlanStore), for the next daemon. A cluster-aware
// request is never memoized: the cluster changes under it.
type Memo struct {
	mu       sync.Mutex
	docs     map[memoKey]memoDoc
	order    []memoKey // oldest first
	bytes    int
	maxDocs  int
	maxBytes int

	// hits were answered from memory, stored from the PlanStore, misses
	// planned.
	hits, stored, misses atomic.Uint64
}

// memoKey is a key of package kept: the memo and the kept plans share them.
type memoKey = kept.Key

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
	// Read is what the plan was made from: nil when it failed before
	// reading the directory, or when the memo answered by the stamp
	// alone (a saved plan asks with PlanRead, which always reads).
	Read *service.Prepared
	// result is the document as its type (Result): the value Doc was
	// encoded from, or Doc read back once.
	result *document.Result
}

// Result is the plan's document as its type: the value it was encoded
// from when it was planned for this request; a remembered document (the
// memo and the kept plans hold bytes, which are what a plan question is
// answered with) is read back from its bytes, once. The value is the
// request's own: change a copy.
func (p *Planned) Result() (*document.Result, error) {
	if p.result == nil {
		res, err := (&contract.PlanAnswer{Result: p.Doc}).Plan()
		if err != nil {
			return nil, fmt.Errorf("reading the remembered plan: %w", err)
		}
		p.result = res
	}
	return p.result, nil
}

// Plan plans req like the package's Plan and renders the document,
// reusing a remembered document when the request and what its directory
// holds are unchanged. A nil Memo plans every time.
func (m *Memo) Plan(ctx context.Context, req service.Request) (*Planned, error) {
	return m.plan(ctx, req, true)
}

// PlanRead is Plan that always reads the directory, so the answer says
// what it was made from (Planned.Read): a saved plan records it, and its
// replay compares with it.
func (m *Memo) PlanRead(ctx context.Context, req service.Request) (*Planned, error) {
	return m.plan(ctx, req, false)
}

func (m *Memo) plan(ctx context.Context, req service.Request, byStamp bool) (*Planned, error) {
	store, _ := req.Cache.(PlanStore)
	// First by the directory's stamp: an answer without looking up a
	// single archive.
	key, question, archives, listing, stamped := m.stampOf(req)
	if stamped && byStamp {
		if d, ok := m.recall(key, store); ok {
			return &Planned{Doc: d.doc, Failed: d.failed, Counts: inspect.Counts{Archives: archives, Hits: archives}}, nil
		}
	}
	if stamped {
		// The read takes the walk the stamp was made of: the directory
		// is walked once.
		req.Listing = listing
	}
	read, early, err := service.Read(ctx, req)
	if err != nil {
		return nil, err
	}
	if early != nil {
		return encodePlanned(early)
	}
	if m == nil || read.Request.Options.Mode == options.ModeCluster {
		return renderRead(read)
	}
	p, err := m.planRead(read, store)
	if err != nil {
		return nil, err
	}
	if stamped && byteDetermined(read.Directory) {
		// Kept under the stamp if the read was answered wholly from the
		// stamp's own walk (every archive by the cache by the walk's
		// stat: a plan of what the stamp names); else only if the
		// directory stamps the same after the read (an archive hashed or
		// read afresh is of the file as it is now).
		if read.Directory.Listing == listing {
			m.keepAsked(question, key, memoDoc{doc: p.Doc, failed: p.Failed}, store)
		} else if again, _, _, _, ok := m.stampOf(req); ok && again == key {
			m.keepAsked(question, key, memoDoc{doc: p.Doc, failed: p.Failed}, store)
		}
	}
	return p, nil
}

// planRead answers a directory that was read: from the memo under the key
// of what it holds, else by planning.
func (m *Memo) planRead(read *service.Prepared, store PlanStore) (*Planned, error) {
	key, err := memoKeyOf(read)
	if err != nil {
		return nil, err
	}
	if d, ok := m.recall(key, store); ok {
		return &Planned{Doc: d.doc, Failed: d.failed, Counts: read.Directory.Counts, Read: read}, nil
	}
	m.misses.Add(1)
	p, err := renderRead(read)
	if err != nil {
		return nil, err
	}
	m.keep(key, memoDoc{doc: p.Doc, failed: p.Failed}, store)
	return p, nil
}

// recall returns the document remembered under key, from memory or else
// from the store (nil: none).
func (m *Memo) recall(key memoKey, store PlanStore) (memoDoc, bool) {
	if d, ok := m.get(key); ok {
		m.hits.Add(1)
		return d, true
	}
	if store != nil {
		if doc, failed, ok := store.Plan(key); ok {
			m.stored.Add(1)
			d := memoDoc{doc: doc, failed: failed}
			m.put(key, d)
			return d, true
		}
	}
	return memoDoc{}, false
}

// keep remembers a document under key, in memory and in the store (nil:
// none).
func (m *Memo) keep(key memoKey, d memoDoc, store PlanStore) {
	m.put(key, d)
	if store != nil {
		// A document that cannot be kept is planned again next time.
		_ = store.StorePlan(key, d.doc, d.failed)
	}
}

// keepAsked keeps a document under question's stamp key (Memo.keep),
// marking the question (kept.QuestionKey) in the store first: the module
// looks for kept plans of marked questions alone (kept.Store.Asked). A
// question that cannot be marked is not kept under its stamp. The mark's
// key is made here, when a plan is kept, not on every lookup.
func (m *Memo) keepAsked(question kept.Question, key memoKey, d memoDoc, store PlanStore) {
	if store != nil {
		if qk, err := kept.QuestionKey(question); err != nil || store.MarkQuestion(qk) != nil {
			m.put(key, d)
			return
		}
	}
	m.keep(key, d, store)
}

// stampOf keys a request by its options and its directory's stamp
// (kept.PlanKey): what the directory holds as stat sees it, read in a
// few milliseconds without the cache. The module computes the same key
// to answer from a kept plan without a daemon; question is what that key
// names, whose mark keepAsked makes when a plan is kept. ok is false when
// the request is not answered from a memo (no memo, no cache,
// cluster-aware) or the directory or a file it names cannot be read.
func (m *Memo) stampOf(req service.Request) (k memoKey, question kept.Question, archives int, listing *stamp.Listing, ok bool) {
	// A registry source has no stamp: its tags move where no stat sees.
	if m == nil || req.Cache == nil || req.Options.Mode == options.ModeCluster || req.Cluster.Snapshot != "" || registry.IsSource(req.Path) || len(req.Read.Sources) > 0 {
		return memoKey{}, kept.Question{}, 0, nil, false // several sources: the stamp covers the path's alone
	}
	// The caller's key (caller.Plan.Kept) sums the same files: the
	// content options of Plan and Read, from what it carried.
	sums, err := filesum.Sums(options.Files(options.Request{Plan: req.Options.Plan, Read: req.Read}), req.Carried)
	if err != nil {
		return memoKey{}, kept.Question{}, 0, nil, false // the read reports it
	}
	if listing, err = stamp.List(req.Path); err != nil {
		return memoKey{}, kept.Question{}, 0, nil, false // the read reports it
	}
	question = kept.Question{
		Build: buildinfo.ID, Path: req.Path, Plan: req.Options.Plan, Read: req.Read, Caller: req.Options.Caller,
		Warnings: req.Warnings, Count: inspect.IsCandidate, Sums: sums, Listing: listing,
	}
	if k, archives, err = kept.PlanKey(question); err != nil {
		return memoKey{}, kept.Question{}, 0, nil, false // the read reports it
	}
	return k, question, archives, listing, true
}

// catalogStamp keys a catalog request by what it asks and its directory's
// stamp (see stampOf); ok is false without a memo or when the directory
// cannot be stamped.
func (m *Memo) catalogStamp(path string, warnings []string, markdown bool, signer service.Signer, operator service.Operator) (k memoKey, archives int, ok bool) {
	if m == nil {
		return memoKey{}, 0, false
	}
	h := sha256.New()
	fingerprint := ""
	if signer.Key != nil { // read from the key file now: its content
		fingerprint = signer.Key.Fingerprint
	}
	for _, s := range append([]string{"zarf-planner catalog memo by stamp 2", buildinfo.ID, path, fmt.Sprint(markdown), fingerprint, "operator " + operator.SHA256,
		fmt.Sprintf("warnings %d", len(warnings))}, warnings...) {
		kept.Field(h, s)
	}
	archives, err := inspect.Stamp(path, h)
	if err != nil {
		return memoKey{}, 0, false
	}
	h.Sum(k[:0])
	return k, archives, true
}

// byteDetermined reports whether what was read of a directory follows
// from its files' bytes alone, as the cache's outcomes do: no archive was
// unreadable (permissions, a vanished file) or over a limit (memory the
// readers shared at that moment).
func byteDetermined(d *inspect.Directory) bool {
	for _, u := range d.Unusable {
		if u.Kind == inspect.UnusableUnreadable || u.Kind == inspect.UnusableLimit {
			return false
		}
	}
	return true
}

// PlanStore keeps rendered documents across daemons (the archive cache
// does, package cache): a daemon started after the last one idled out
// answers a question asked before, about a directory unchanged since,
// without planning again. Keys are memo keys, which name this build, so a
// document is never served by a build that might render it otherwise.
type PlanStore interface {
	Plan(key kept.Key) (doc []byte, failed, ok bool)
	StorePlan(key kept.Key, doc []byte, failed bool) error
	// MarkQuestion marks a question (kept.QuestionKey) before a document
	// is kept under its stamp key.
	MarkQuestion(question kept.Key) error
}

// Stats reports how many requests the memo answered from memory and how
// many it planned.
func (m *Memo) Stats() (hits, misses uint64) {
	return m.hits.Load(), m.misses.Load()
}

// StoredHits reports how many requests were answered with a document of
// the PlanStore.
func (m *Memo) StoredHits() uint64 { return m.stored.Load() }

func renderRead(read *service.Prepared) (*Planned, error) {
	p, err := encodePlanned(read.Decide())
	if p != nil {
		p.Read = read
	}
	return p, err
}

func encodePlanned(res *service.Result) (*Planned, error) {
	b, err := res.JSON()
	if err != nil {
		return nil, fmt.Errorf("rendering the plan: %w", err)
	}
	return &Planned{Doc: b, Failed: res.Failed, Counts: res.Counts, result: res}, nil
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
	kept.Field(h, "zarf-planner plan memo 6")
	kept.Field(h, buildinfo.ID)
	kept.Field(h, string(opts))
	kept.Field(h, string(read))
	kept.Field(h, string(req.Options.Caller))
	// The content of every file the options declare content (the public
	// key, the policy), not only their paths: the bytes the plan used.
	kept.Sums(h, p.Contents)
	list := func(tag string, n int, each func(i int)) {
		kept.Field(h, fmt.Sprintf("%s %d", tag, n))
		for i := range n {
			each(i)
		}
	}
	list("warnings", len(req.Warnings), func(i int) { kept.Field(h, req.Warnings[i]) })
	hashDirectory(h, dir)
	var k memoKey
	h.Sum(k[:0])
	return k, nil
}

// hashDirectory writes what a read of a directory found: each candidate's
// path and sha256 (which names its content, contents and claims
// included) and every invalid, unusable and ignored file and warning.
func hashDirectory(h hash.Hash, dir *inspect.Directory) {
	list := func(tag string, n int, each func(i int)) {
		kept.Field(h, fmt.Sprintf("%s %d", tag, n))
		for i := range n {
			each(i)
		}
	}
	list("candidates", len(dir.Candidates), func(i int) {
		kept.Field(h, dir.Candidates[i].Path)
		kept.Field(h, dir.Candidates[i].SHA256)
	})
	list("invalid", len(dir.Invalid), func(i int) {
		inv := dir.Invalid[i]
		kept.Field(h, inv.Archive)
		kept.Field(h, inv.Package)
		kept.Field(h, inv.Field)
		kept.Field(h, inv.Error())
	})
	list("unusable", len(dir.Unusable), func(i int) { kept.Field(h, dir.Unusable[i].Path); kept.Field(h, dir.Unusable[i].Reason) })
	list("ignored", len(dir.Ignored), func(i int) { kept.Field(h, dir.Ignored[i].Path); kept.Field(h, dir.Ignored[i].Reason) })
	list("warnings", len(dir.Warnings), func(i int) { kept.Field(h, dir.Warnings[i]) })
}

// Catalog returns the catalog document of a directory read (with the
// Markdown when asked, and the caller's warnings appended), remembered
// like a plan: it depends on what the read found and nothing else. A nil
// Memo renders every time.
func (m *Memo) Catalog(sources []string, dir *inspect.Directory, warnings []string, markdown bool, signer service.Signer, operator service.Operator) ([]byte, error) {
	h := sha256.New()
	kept.Field(h, "zarf-planner catalog memo 4")
	kept.Field(h, "operator "+operator.SHA256) // the documents' content, read once
	kept.Field(h, fmt.Sprintf("sources %d", len(sources)))
	for _, s := range sources {
		kept.Field(h, s)
	}
	if signer.Key != nil { // the key's content, not only its path
		kept.Field(h, "key "+signer.Key.Fingerprint)
	}
	kept.Field(h, fmt.Sprint(markdown))
	kept.Field(h, fmt.Sprintf("warnings %d", len(warnings)))
	for _, w := range warnings {
		kept.Field(h, w)
	}
	hashDirectory(h, dir)
	var k memoKey
	h.Sum(k[:0])
	if m != nil {
		if d, ok := m.get(k); ok {
			m.hits.Add(1)
			return d.doc, nil
		}
		m.misses.Add(1)
	}
	cat := service.CatalogFrom(sources[0], dir, signer, operator)
	cat.Sources = sources[1:]
	cat.Warnings = append(cat.Warnings, warnings...)
	if markdown {
		var md strings.Builder
		if err := render.CatalogMarkdown(&md, cat); err != nil {
			return nil, err
		}
		cat.Markdown = md.String()
	}
	b, err := document.Marshal(cat)
	if err != nil {
		return nil, fmt.Errorf("rendering the catalog: %w", err)
	}
	if m != nil {
		m.put(k, memoDoc{doc: b})
	}
	return b, nil
}
