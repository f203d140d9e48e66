package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/colonel-byte/zarf-planner/barrier"
	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/daemon/contract"
	"github.com/colonel-byte/zarf-planner/daemon/contract/plannerpb"
	"github.com/colonel-byte/zarf-planner/inspect"
)

// Daemon implements contract.Planner for the daemon: it plans in process
// and is the only opener of the caches it uses (one per cache directory,
// kept open until Close).
type Daemon struct {
	defaultCache string
	warn         func(string)

	mu     sync.Mutex
	caches map[string]*cache.Cache
	kube   map[inspect.Kube]kubeEntry
	memo   *Memo

	read, hits, contentHits atomic.Uint64
}

var _ contract.Planner = (*Daemon)(nil)

// NewDaemon serves with defaultCache as the cache directory of requests
// that name none; warn receives cache notices (the daemon log).
func NewDaemon(defaultCache string, warn func(string)) *Daemon {
	if warn == nil {
		warn = func(string) {}
	}
	return &Daemon{defaultCache: defaultCache, warn: warn, caches: map[string]*cache.Cache{}, kube: map[inspect.Kube]kubeEntry{},
		memo: NewMemo(memoDocs, memoBytes)}
}

// The plan memo keeps the last few documents: a playbook run asks the
// same question about the same directory from several places.
const (
	memoDocs  = 16
	memoBytes = 64 << 20
)

// closeTimeout bounds closing the caches: Badger's Close waits for its
// last flush, which never ends if the cache directory was removed under
// it, and a daemon must still exit.
const closeTimeout = 10 * time.Second

// Close closes every cache, giving up after closeTimeout.
func (d *Daemon) Close() error {
	d.mu.Lock()
	caches := d.caches
	d.caches = map[string]*cache.Cache{}
	d.mu.Unlock()
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

// Cache returns the open cache of dir ("" for the default), opening it on
// first use.
func (d *Daemon) Cache(dir string) (*cache.Cache, error) {
	if dir == "" {
		dir = d.defaultCache
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.caches[abs]; ok {
		return c, nil
	}
	c, err := cache.Open(abs, d.warn)
	if err != nil {
		return nil, err
	}
	d.caches[abs] = c
	return c, nil
}

// clients returns the cached clients of a cluster, keyed by the kubeconfig
// path and context the caller chose. The daemon never falls back to its
// own environment (KUBECONFIG, ~/.kube/config): it serves many callers.
func (d *Daemon) clients(k inspect.Kube) (*inspect.Clients, error) {
	if k.Kubeconfig == "" {
		return nil, fmt.Errorf("cluster mode through the daemon needs an explicit kubeconfig path: the daemon does not use its own environment (the module passes KUBECONFIG or ~/.kube/config of its caller)")
	}
	abs, err := filepath.Abs(k.Kubeconfig)
	if err != nil {
		return nil, err
	}
	k.Kubeconfig = abs
	// A kubeconfig rewritten in place (a recreated test cluster, rotated
	// credentials) must not keep answering with the clients of its old
	// content: the clients are kept with the file's stat (size, mtime,
	// inode, device) and rebuilt when it changes.
	seen, err := inspect.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.kube[k]; ok && e.stamp == seen {
		return e.clients, nil
	}
	cl, err := k.Clients()
	if err != nil {
		return nil, err
	}
	d.kube[k] = kubeEntry{clients: cl, stamp: seen}
	return cl, nil
}

// kubeEntry is the clients built from a kubeconfig as it was.
type kubeEntry struct {
	clients *inspect.Clients
	stamp   inspect.FileStat
}

// count records how a request obtained its archives.
func (d *Daemon) count(c inspect.Counts) {
	d.read.Add(uint64(c.Read))
	d.hits.Add(uint64(c.Hits))
	d.contentHits.Add(uint64(c.ContentHits))
}

// Plan answers a plan request.
func (d *Daemon) Plan(ctx context.Context, req *plannerpb.PlanRequest) (*plannerpb.PlanResponse, error) {
	if !filepath.IsAbs(req.GetPath()) {
		res := fail(fmt.Sprintf("path %q must be absolute when sent to the daemon", req.GetPath()), nil, nil, nil)
		b, err := res.JSON()
		return &plannerpb.PlanResponse{Result: b, Failed: true}, err
	}
	r := FromProto(req)
	r.Cluster.Clients = d.clients
	if !req.GetNoCache() {
		c, err := d.Cache(req.GetCacheDir())
		if err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("planned without the cache: %v", err))
		} else {
			r.Cache = c
		}
	}
	p, err := d.memo.Plan(ctx, r)
	if err != nil {
		return nil, err
	}
	d.count(p.Counts)
	return &plannerpb.PlanResponse{Result: p.Doc, Failed: p.Failed}, nil
}

// Inspect answers an inspect request.
func (d *Daemon) Inspect(ctx context.Context, req *plannerpb.InspectRequest) (*plannerpb.InspectResponse, error) {
	if !filepath.IsAbs(req.GetPath()) {
		return nil, status.Errorf(codes.InvalidArgument, "path %q must be absolute when sent to the daemon", req.GetPath())
	}
	var c inspect.Cache
	if !req.GetNoCache() {
		if cc, err := d.Cache(req.GetCacheDir()); err == nil {
			c = cc
		}
	}
	in, err := Inspect(ctx, req.GetPath(), c)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, status.Errorf(codes.FailedPrecondition, "inspecting %s: %v", req.GetPath(), err)
	}
	d.count(in.counts)
	b, err := marshal(in)
	if err != nil {
		return nil, err
	}
	return &plannerpb.InspectResponse{Result: b}, nil
}

// CacheWarm answers a warm-up (or forget) request.
func (d *Daemon) CacheWarm(ctx context.Context, req *plannerpb.CacheWarmRequest) (*plannerpb.CacheWarmResponse, error) {
	for _, p := range req.GetPaths() {
		if !filepath.IsAbs(p) {
			return nil, status.Errorf(codes.InvalidArgument, "path %q must be absolute when sent to the daemon", p)
		}
	}
	c, err := d.Cache(req.GetCacheDir())
	if err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "%v", err)
	}
	var res *Warmed
	if req.GetForget() {
		res, err = Forget(c, req.GetPaths(), req.GetCheckMode())
	} else {
		res, err = Warm(ctx, c, req.GetPaths(), WarmOptions{Prune: req.GetPrune(), CheckMode: req.GetCheckMode()})
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, status.Errorf(codes.FailedPrecondition, "%v", err)
	}
	d.count(res.Counts)
	b, err := marshal(res)
	if err != nil {
		return nil, err
	}
	return &plannerpb.CacheWarmResponse{Result: b, Changed: res.Changed()}, nil
}

// Wait watches the caller's cluster until the barrier holds.
func (d *Daemon) Wait(ctx context.Context, req *plannerpb.WaitRequest) (*plannerpb.WaitResponse, error) {
	var b barrier.Barrier
	if err := json.Unmarshal(req.GetBarrier(), &b); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "the barrier is not a plan item's barrier (crds, storage_classes, namespaces, package): %v", err)
	}
	cl, err := d.clients(inspect.Kube{Kubeconfig: req.GetKubeconfig(), Context: req.GetContext()})
	if err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "%v", err)
	}
	timeout := time.Duration(req.GetTimeoutSeconds()) * time.Second
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	res, werr := barrier.Wait(ctx, barrier.Clients{Name: cl.Name, Kube: cl.Kube, Ext: cl.Ext, Dyn: cl.Dyn}, b, timeout)
	if werr != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	doc := map[string]any{"ready": res.Ready, "checks": res.Checks}
	if werr != nil {
		doc["failed"], doc["msg"] = true, werr.Error()
	}
	out, err := marshal(doc)
	if err != nil {
		return nil, err
	}
	return &plannerpb.WaitResponse{Result: out, Failed: werr != nil}, nil
}

// Status reports the daemon's archive counters; the lifecycle layer adds
// who the daemon is.
func (d *Daemon) Status(context.Context) (*plannerpb.StatusResponse, error) {
	return &plannerpb.StatusResponse{ArchivesRead: d.read.Load(), CacheHits: d.hits.Load(), ContentHits: d.contentHits.Load()}, nil
}
