// Package server answers the Planner contract: every request of the
// daemon's clients, and of the CLI when no daemon runs. It owns what
// outlives one request: the open caches (it is their only opener), the
// cluster clients of each kubeconfig, and the memo of rendered plans. It
// decodes wire requests and hands the planning to package service.
package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/colonel-byte/zarf-planner/barrier"
	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/registry"
	"github.com/colonel-byte/zarf-planner/render"
	"github.com/colonel-byte/zarf-planner/service"
	"github.com/colonel-byte/zarf-planner/signature"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// Server implements contract.Planner. It is the only opener of the caches
// it uses (one per cache directory, kept open until Close).
type Server struct {
	cfg Config

	// limits bound every archive read of every request: the memory they
	// share and the chart renderer (Close closes it).
	limits inspect.Limits
	// renderer is the chart renderer the Server made (Config.Charts
	// unset); Close closes it.
	renderer *renderproc.Runner

	mu     sync.Mutex
	caches map[string]*cache.Cache
	// notes are the notices of opening a cache that no request has
	// reported yet (Preopen opened it).
	notes map[string][]string
	// opening holds, per directory, a channel closed when its cache is
	// open (or failed to open).
	opening map[string]chan struct{}
	// closed is set by Close: a Preopen that starts later opens nothing.
	closed bool
	kube   map[string]kubeEntry // by cluster.Kube.Key
	memo   *Memo
	// signatures remembers signature checks by the bytes checked and the
	// key, for requests with public_key.
	signatures *signature.Memo

	read, hits, contentHits atomic.Uint64
	// reads are the plans' and catalogs' reads under way, for Status.
	reads readings
}

var _ contract.Planner = (*Server)(nil)

// Config sets up a Server.
type Config struct {
	// DefaultCache is the cache directory of requests that name none.
	DefaultCache string
	// Warn receives cache notices (the daemon log, the CLI's stderr).
	Warn func(string)
	// Progress, when set, is told after each archive a warm-up reads
	// (the CLI's progress bar).
	Progress func(inspect.Progress)
	// Charts renders the charts of archives read (nil: renderer
	// processes of this executable, renderproc.Beside).
	Charts claims.Renderer
}

// New returns a Server; Close it to close its caches.
func New(cfg Config) *Server {
	if cfg.Warn == nil {
		cfg.Warn = func(string) {}
	}
	charts := cfg.Charts
	var own *renderproc.Runner
	if charts == nil {
		own = renderproc.Beside()
		charts = own
	}
	// Every request shares one memo of renders: a chart in many archives
	// or many reads renders once while it is remembered.
	charts = claims.NewMemo(charts, claims.MemoBytes)
	return &Server{cfg: cfg, limits: inspect.Limits{Budget: inspect.NewBudget(0), Charts: charts}, renderer: own, caches: map[string]*cache.Cache{}, notes: map[string][]string{}, opening: map[string]chan struct{}{}, kube: map[string]kubeEntry{},
		memo: NewMemo(memoDocs, memoBytes), signatures: signature.NewMemo(memoSignatures)}
}

// The plan memo keeps the last few documents: a playbook run asks the
// same question about the same directory from several places.
const (
	memoDocs  = 16
	memoBytes = 64 << 20
	// memoSignatures bounds the remembered signature checks (a few dozen
	// bytes each).
	memoSignatures = 100_000
)

// closeTimeout bounds closing the caches: Badger's Close waits for its
// last flush, which never ends if the cache directory was removed under
// it, and a daemon must still exit.
const closeTimeout = 10 * time.Second

// Close closes every cache, giving up after closeTimeout, and ends the
// idle chart renderers of the renderer it made.
func (d *Server) Close() error {
	d.mu.Lock()
	d.closed = true
	for len(d.opening) > 0 { // a cache being opened is closed with the rest
		var busy chan struct{}
		for _, busy = range d.opening {
			break
		}
		d.mu.Unlock()
		<-busy
		d.mu.Lock()
	}
	caches := d.caches
	d.caches = map[string]*cache.Cache{}
	d.closed = true
	d.mu.Unlock()
	if d.renderer != nil {
		_ = d.renderer.Close() // it ends its idle renderers; it cannot fail
	}
	done := make(chan error, 1)
	go func() {
		var errs []error
		for _, c := range caches {
			errs = append(errs, c.Close())
		}
		done <- errors.Join(errs...)
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(closeTimeout):
		return fmt.Errorf("closing the cache did not finish within %s (was its directory removed?); exiting without it", closeTimeout)
	}
}

// OpenCache returns the open cache of dir ("" for the default), opening
// it on first use.
func (d *Server) OpenCache(dir string) (*cache.Cache, error) {
	c, _, err := d.cache(dir)
	return c, err
}

// cache is Cache that also returns the notices of opening the cache (a
// corrupt directory moved aside, entries of another schema dropped), for
// the request that opened it to report in its warnings; they go to Warn
// too. A cache is kept under its resolved path, so two names of one
// directory are one open cache.
func (d *Server) cache(dir string) (*cache.Cache, []string, error) {
	return d.open(dir, false)
}

// open is cache; with keep, the notices of opening the cache are kept for
// the next request that uses it instead of returned.
func (d *Server) open(dir string, keep bool) (*cache.Cache, []string, error) {
	if dir == "" {
		dir = d.cfg.DefaultCache
	}
	if dir == "" {
		return nil, nil, fmt.Errorf("no cache directory: give cache_dir or set %s", cache.EnvDir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	// Resolved only as the cache is checked (never by following a link
	// first): two names of one directory are one open cache, and another
	// user's symlink is refused, not followed.
	if abs, err = cache.Resolve(abs); err != nil {
		return nil, nil, err
	}
	// Caches open one at a time per directory, each outside the lock: a
	// request for another directory does not wait for this one's open.
	d.mu.Lock()
	for {
		if keep && d.closed {
			d.mu.Unlock()
			return nil, nil, errors.New("the server is closed") // a late Preopen opens nothing
		}
		if c, ok := d.caches[abs]; ok {
			notes := d.notes[abs]
			delete(d.notes, abs)
			d.mu.Unlock()
			return c, notes, nil
		}
		busy, ok := d.opening[abs]
		if !ok {
			break
		}
		d.mu.Unlock()
		<-busy
		d.mu.Lock()
	}
	busy := make(chan struct{})
	d.opening[abs] = busy
	d.mu.Unlock()
	var notes []string
	c, err := cache.Open(abs, func(w string) {
		d.cfg.Warn(w)
		notes = append(notes, w)
	})
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.opening, abs)
	close(busy)
	if err != nil {
		return nil, nil, err
	}
	d.caches[abs] = c
	if keep {
		d.notes[abs] = notes
		return c, nil, nil
	}
	return c, notes, nil
}

// Preopen opens the cache of dir ("" for the default) in the background,
// so that a daemon that has just started has it open (Badger creates its
// next log files) by the time its first request arrives: the daemon is
// told the cache of the request that started it. The notices of opening
// it are reported to the first request that uses it; an error is met
// again by the request that opens it. No other cache is opened before a
// request uses it: each one open holds its directory's lock, which every
// other process of the user then finds held.
func (d *Server) Preopen(dir string) {
	go func() { _, _, _ = d.open(dir, true) }()
}

// clients returns the cached clients of a cluster, keyed by the kubeconfig
// files and context the caller chose. The daemon never falls back to its
// own environment (KUBECONFIG, ~/.kube/config): it serves many callers.
func (d *Server) clients(k cluster.Kube) (*cluster.Clients, error) {
	if k.Kubeconfig == "" && len(k.Precedence) == 0 {
		return nil, fmt.Errorf("cluster mode through the daemon needs the caller's kubeconfig files: the daemon does not use its own environment (the module and the CLI send the kubeconfig given, else K8S_AUTH_KUBECONFIG, the files of KUBECONFIG or ~/.kube/config of their caller)")
	}
	if k.Kubeconfig != "" {
		abs, err := filepath.Abs(k.Kubeconfig)
		if err != nil {
			return nil, err
		}
		k.Kubeconfig, k.Precedence = abs, nil
	}
	k.Precedence = slices.Clone(k.Precedence)
	for i, p := range k.Precedence {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("kubeconfig file %q of KUBECONFIG must be absolute when sent to the daemon", p)
		}
		k.Precedence[i] = filepath.Clean(p)
	}
	// A kubeconfig rewritten in place (a recreated test cluster, rotated
	// credentials) must not keep answering with the clients of its old
	// content: the clients are kept with the files' stat (size, mtime,
	// inode, device; a file of KUBECONFIG that is missing, as missing)
	// and rebuilt when one changes.
	seen, err := kubeStamp(k)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	key := k.Key()
	if e, ok := d.kube[key]; ok && slices.Equal(e.stamp, seen) {
		return e.clients, nil
	}
	cl, err := k.Clients()
	if err != nil {
		return nil, err
	}
	d.kube[key] = kubeEntry{clients: cl, stamp: seen}
	return cl, nil
}

// kubeStamp is the stat of each kubeconfig file k reads: the explicit
// one, which must exist, or each of the precedence list, a missing one
// stamped as missing (zero).
func kubeStamp(k cluster.Kube) ([]inspect.FileStat, error) {
	if k.Kubeconfig != "" {
		st, err := inspect.Stat(k.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("reading the kubeconfig: %w", err)
		}
		return []inspect.FileStat{st}, nil
	}
	var out []inspect.FileStat
	for _, p := range k.Precedence {
		st, err := inspect.Stat(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading the kubeconfig %s (KUBECONFIG): %w", p, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// kubeEntry is the clients built from a kubeconfig as it was.
type kubeEntry struct {
	clients *cluster.Clients
	stamp   []inspect.FileStat
}

// count records how a request obtained its archives.
func (d *Server) count(c inspect.Counts) {
	d.read.Add(uint64(c.Read))
	d.hits.Add(uint64(c.Hits))
	d.contentHits.Add(uint64(c.ContentHits))
}

// Plan answers a plan request.
func (d *Server) Plan(ctx context.Context, req *contract.PlanRequest) (*contract.PlanAnswer, error) {
	if !filepath.IsAbs(req.Path) && !registry.IsSource(req.Path) {
		p, err := encodePlanned(service.Failed(fmt.Sprintf("path %q must be absolute when sent to the daemon", req.Path)))
		if err != nil {
			return nil, err
		}
		return answerOf(req, options.Defaults(), p, nil)
	}
	for _, src := range req.Options.Sources {
		if !filepath.IsAbs(src) && !registry.IsSource(src) {
			p, err := encodePlanned(service.Failed(fmt.Sprintf("source %q must be absolute when sent to the daemon", src)))
			if err != nil {
				return nil, err
			}
			return answerOf(req, options.Defaults(), p, nil)
		}
	}
	caller := req.Caller
	if !caller.Valid() {
		return nil, status.Errorf(codes.InvalidArgument, "caller %q is neither %s nor %s", caller, options.ModuleCaller, options.CLICaller)
	}
	// Each request spends budgets of its own, and reads each source as
	// that source's flow, which takes turns with other sources' flows
	// (inspect.Budget).
	ctx = inspect.WithFlow(ctx, "plan of "+req.Path)
	o := req.Options
	faultPoint(req.Path)
	r := service.NewRequest(req.Path, o, caller)
	r.Carried, r.Logins = req.Carried, logins(req.Logins)
	r.Cluster.Clients = d.clients
	r.Limits = d.limits
	r.Signatures = d.signatures
	progress, done := d.reads.start(req.Path)
	defer done()
	r.Progress = progress
	memo := d.memo
	if o.UseCache {
		c, notes, err := d.cache(o.CacheDir)
		r.Warnings = append(r.Warnings, notes...)
		if err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("planned without the cache: %v", err))
		} else {
			r.Cache = c
		}
	} else {
		memo = nil // without the cache means without any remembered answer
	}
	given := approvalsGiven{carried: req.Carried, files: req.Approvals, ignored: req.ApprovalsIgnored}
	p, saved, err := d.planSaved(ctx, memo, r, o, caller, req.SavedPlan, given, req.Save)
	if err != nil {
		return nil, err
	}
	d.count(p.Counts)
	return answerOf(req, o, p, saved)
}

// answerOf is the answer of req: p's document, the saved plan, and the
// page of the document when req asks for one (render.Plan), drawn from
// the document itself, so a remembered plan gives the page a fresh one
// would. The time is the caller's when given, else now.
func answerOf(req *contract.PlanRequest, o options.Request, p *Planned, saved []byte) (*contract.PlanAnswer, error) {
	resp := &contract.PlanAnswer{Result: p.Doc, Failed: p.Failed, SavedPlan: saved}
	if !req.Page {
		return resp, nil
	}
	res, err := p.Result()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	when := req.Time
	if when.IsZero() {
		when = time.Now()
	}
	page, err := render.Plan(res, render.PlanInput{
		Directory: req.Path, Options: render.Settings(o), Time: when, Producer: "zarf-planner " + buildinfo.Version,
	})
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	resp.Page = page
	return resp, nil
}

// readSetup is what an inspection and a catalog read a directory with:
// its sources, how a registry is reached, the limits, the cache (nil
// without) and what opening the cache noted.
type readSetup struct {
	sources  []string
	reach    registry.Options
	limits   inspect.Limits
	cache    inspect.Cache
	warnings []string
	// published says the path is a registry source.
	published bool
}

// reading checks an inspection's or a catalog's request and opens what it
// reads with; ctx is the request's, as one flow of the read budget.
func (d *Server) reading(ctx context.Context, req *contract.InspectRequest) (context.Context, *readSetup, error) {
	r := &readSetup{published: registry.IsSource(req.Path)}
	if !filepath.IsAbs(req.Path) && !r.published {
		return nil, nil, status.Errorf(codes.InvalidArgument, "path %q must be absolute when sent to the daemon", req.Path)
	}
	for _, s := range req.Sources {
		if !filepath.IsAbs(s) && !registry.IsSource(s) {
			return nil, nil, status.Errorf(codes.InvalidArgument, "source %q must be absolute when sent to the daemon", s)
		}
	}
	r.sources = append([]string{req.Path}, req.Sources...)
	reach, err := registryOptions(req.Registry)
	if err != nil {
		return nil, nil, err
	}
	r.reach = reach
	ctx = inspect.WithFlow(ctx, "inspection of "+req.Path)
	r.limits = d.readLimits(req.Registry)
	if req.UseCache {
		cc, notes, err := d.cache(req.CacheDir)
		r.warnings = notes
		if err != nil {
			r.warnings = append(r.warnings, fmt.Sprintf("inspected without the cache: %v", err))
		} else {
			r.cache = cc
		}
	}
	return ctx, r, nil
}

// Inspect answers an inspect request.
func (d *Server) Inspect(ctx context.Context, req *contract.InspectRequest) (*contract.InspectAnswer, error) {
	ctx, r, err := d.reading(ctx, req)
	if err != nil {
		return nil, err
	}
	in, err := service.Inspect(ctx, r.sources, r.cache, r.limits, r.reach)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, status.Errorf(codes.FailedPrecondition, "inspecting %s: %v", req.Path, err)
	}
	in.Warnings = append(in.Warnings, r.warnings...)
	d.count(in.Counts)
	b, err := document.Marshal(in)
	if err != nil {
		return nil, err
	}
	return &contract.InspectAnswer{Result: b}, nil
}

// Catalog answers a catalog request.
func (d *Server) Catalog(ctx context.Context, req *contract.CatalogRequest) (*contract.CatalogAnswer, error) {
	ctx, r, err := d.reading(ctx, &req.InspectRequest)
	if err != nil {
		return nil, err
	}
	sources, c, warnings := r.sources, r.cache, r.warnings
	signer := service.Signer{Memo: d.signatures}
	if k := req.PublicKey; k != "" {
		if !filepath.IsAbs(k) {
			return nil, status.Errorf(codes.InvalidArgument, "public key path %q must be absolute when sent to the daemon", k)
		}
		files := filesum.NewReader(options.CarriedFiles(options.Read{PublicKey: k}), req.Carried)
		b, err := files.Bytes("public_key")
		key, err := signature.KeyOf(k, b, err)
		if err != nil {
			return nil, status.Errorf(codes.FailedPrecondition, "%v", err)
		}
		signer.Key = key
	}
	var operator service.Operator
	if p := req.Prerequisites; p != "" {
		if !filepath.IsAbs(p) {
			return nil, status.Errorf(codes.InvalidArgument, "prerequisites path %q must be absolute when sent to the daemon", p)
		}
		if operator, err = service.ReadOperator(p, req.Carried); err != nil {
			return nil, status.Errorf(codes.FailedPrecondition, "cannot read the operator's prerequisites %s: %v", p, err)
		}
	}
	memo := d.memo
	if c == nil {
		memo = nil // without the cache means without any remembered answer
	}
	// First by the directory's stamp, as a plan is: an answer without
	// looking up a single archive.
	// A registry has no stamp: a tag can move where no stat sees it.
	stamp, archives, stamped := memo.catalogStamp(req.Path, warnings, req.Markdown, signer, operator)
	stamped = stamped && !r.published && len(req.Sources) == 0 // the stamp covers the path's alone
	if stamped {
		if doc, ok := memo.get(stamp); ok {
			memo.hits.Add(1)
			d.count(inspect.Counts{Archives: archives, Hits: archives})
			return &contract.CatalogAnswer{Result: doc.doc}, nil
		}
	}
	progress, done := d.reads.start(req.Path)
	defer done()
	dir, err := inspect.ReadSources(ctx, sources, inspect.Options{Cache: c, Limits: r.limits, Registry: r.reach, Progress: progress})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, status.Errorf(codes.FailedPrecondition, "cataloguing %s: %v", req.Path, err)
	}
	d.count(dir.Counts)
	b, err := memo.Catalog(sources, dir, warnings, req.Markdown, signer, operator)
	if err != nil {
		return nil, err
	}
	if stamped && byteDetermined(dir) {
		// Kept under the stamp only if nothing changed while it was read.
		if again, _, ok := memo.catalogStamp(req.Path, warnings, req.Markdown, signer, operator); ok && again == stamp {
			memo.put(stamp, memoDoc{doc: b})
		}
	}
	return &contract.CatalogAnswer{Result: b}, nil
}

// Cache answers a warm-up (or forget) request.
func (d *Server) Cache(ctx context.Context, req *contract.CacheRequest) (*contract.CacheAnswer, error) {
	for _, p := range req.Paths {
		if !filepath.IsAbs(p) && !registry.IsSource(p) {
			return nil, status.Errorf(codes.InvalidArgument, "path %q must be absolute when sent to the daemon", p)
		}
	}
	reach, err := registryOptions(req.Registry)
	if err != nil {
		return nil, err
	}
	ctx = inspect.WithFlow(ctx, "warm-up of "+strings.Join(req.Paths, ", "))
	c, err := d.OpenCache(req.CacheDir)
	if err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "%v", err)
	}
	var res *Warmed
	if req.Forget {
		res, err = Forget(c, req.Paths, req.CheckMode)
	} else {
		res, err = Warm(ctx, c, req.Paths, WarmOptions{Prune: req.Prune, CheckMode: req.CheckMode, Progress: d.cfg.Progress, Limits: d.readLimits(req.Registry), Registry: reach})
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, status.Errorf(codes.FailedPrecondition, "%v", err)
	}
	d.count(res.Counts)
	if !req.Forget && !req.CheckMode {
		d.keepDefaultPlans(ctx, c, req.CacheDir, res.Paths)
	}
	b, err := document.Marshal(res)
	if err != nil {
		return nil, err
	}
	return &contract.CacheAnswer{Result: b, Changed: res.Changed()}, nil
}

// keepDefaultPlans plans each warmed directory as the module asks when
// given no option but the cache directory, and keeps the document (the
// memo, and the kept plans of the cache), so that the first such plan
// after this daemon idled out is answered by the module alone, reading
// nothing but the directory's stat. What cannot be planned now is
// planned, and reported, when asked.
func (d *Server) keepDefaultPlans(ctx context.Context, c *cache.Cache, cacheDir string, paths []string) {
	for _, p := range paths {
		if registry.IsSource(p) {
			continue // a plan of a registry is never kept
		}
		o := options.Defaults()
		o.CacheDir = cacheDir
		r := service.NewRequest(p, o, options.ModuleCaller)
		r.Cache, r.Limits, r.Signatures, r.Cluster.Clients = c, d.limits, d.signatures, d.clients
		if _, err := d.memo.Plan(ctx, r); err != nil {
			return // ctx ended
		}
	}
}

// Barrier watches the caller's cluster until the barrier holds.
func (d *Server) Barrier(ctx context.Context, req *contract.BarrierRequest) (*contract.BarrierAnswer, error) {
	var b barrier.Barrier
	if len(req.Barrier) > 0 {
		if err := strictjson.Unmarshal("the barrier", req.Barrier, &b); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "the barrier is not a plan item's barrier (crds, storage_classes, namespaces, package): %v", err)
		}
	}
	if len(req.Checks) > 0 {
		var refs []barrier.Ref
		if err := strictjson.Unmarshal("checks", req.Checks, &refs); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "checks is not a list of {kind, name, namespace}: %v", err)
		}
		if err := b.Add(refs); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%v", err)
		}
	}
	cl, err := d.clients(cluster.Kube{Kubeconfig: req.Cluster.Kubeconfig, Precedence: req.Cluster.KubeconfigPrecedence, Context: req.Cluster.Context})
	if err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "%v", err)
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	res, werr := barrier.Wait(ctx, cl, b, timeout)
	if werr != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	doc := document.Barrier{BarrierResult: *res}
	if werr != nil {
		doc.Failed, doc.Msg = true, werr.Error()
	}
	out, err := document.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return &contract.BarrierAnswer{Result: out, Failed: werr != nil}, nil
}

// Status reports the daemon's archive counters and the reads of plans
// and catalogs under way; the lifecycle layer adds who the daemon is.
func (d *Server) Status(context.Context) (*contract.Status, error) {
	return &contract.Status{ArchivesRead: d.read.Load(), CacheHits: d.hits.Load(), ContentHits: d.contentHits.Load(), Readings: d.reads.list()}, nil
}

// registryOptions are how a request reaches the registry of a registry
// source, its messages worded for who asks; its CA bundle must be an
// absolute path, as every path sent to the daemon, and its bytes are
// those the caller carried (never read here from the path). The
// caller's logins go to their hosts alone.
func registryOptions(a contract.RegistryAccess) (registry.Options, error) {
	if a.CAFile != "" && !filepath.IsAbs(a.CAFile) {
		return registry.Options{}, status.Errorf(codes.InvalidArgument, "registry CA file %q must be absolute when sent to the daemon", a.CAFile)
	}
	if !a.Caller.Valid() {
		return registry.Options{}, status.Errorf(codes.InvalidArgument, "caller %q is neither %s nor %s", a.Caller, options.ModuleCaller, options.CLICaller)
	}
	read := options.Read{PlainHTTP: a.PlainHTTP, InsecureSkipTLSVerify: a.InsecureSkipTLSVerify, RegistryCAFile: a.CAFile, RegistryTimeout: a.TimeoutSeconds}
	o := service.RegistryOptions(read, a.Caller)
	if a.CAFile != "" {
		var carried []filesum.Carried
		if a.CA != nil {
			carried = []filesum.Carried{*a.CA}
		}
		ca, err := filesum.NewReader(options.CarriedFiles(read), carried).Bytes("registry_ca_file")
		if err != nil {
			return registry.Options{}, status.Errorf(codes.FailedPrecondition, "%s: %v", a.Caller.Option("registry_ca_file"), err)
		}
		o.CA = ca
	}
	o.Logins = logins(a.Logins)
	return o, nil
}

// readLimits are the daemon's limits with the render and read budgets
// a catalog, inspection or warm-up asks for (a plan's: service.Request).
func (d *Server) readLimits(a contract.RegistryAccess) inspect.Limits {
	l := d.limits
	l.RenderBudget = time.Duration(a.RenderBudgetSeconds) * time.Second
	l.ReadBudget = inspect.GiB(a.ReadBudgetGiB)
	return l
}

// logins are a caller's registry logins, by host, for the registry
// client (registry.Options.Logins).
func logins(ls []contract.Login) map[string]auth.Credential {
	if len(ls) == 0 {
		return nil
	}
	m := make(map[string]auth.Credential, len(ls))
	for _, l := range ls {
		m[l.Host] = auth.Credential{Username: l.Username, Password: l.Password, RefreshToken: l.RefreshToken, AccessToken: l.AccessToken}
	}
	return m
}
