package caller

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/colonel-byte/zarf-planner/cache/kept"
	"github.com/colonel-byte/zarf-planner/carry"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// Barrier is a barrier to wait for, as a front end parsed it.
type Barrier struct {
	// Barrier is a plan item's barrier (any value that encodes to its
	// JSON), or nil.
	Barrier any
	// Checks are checks listed by hand (a list of {kind, name,
	// namespace}), added to the barrier, or nil.
	Checks any
	// Cluster is the cluster given explicitly; the caller's environment
	// fills in the rest (Cluster).
	Cluster options.Cluster
	// Timeout is how long to wait, to the second.
	Timeout time.Duration
}

// Request is the wire request of the barrier: the barrier and checks as
// JSON, the caller's cluster, the timeout in seconds.
func (w Barrier) Request() (*contract.BarrierRequest, error) {
	// Whole seconds, rounded up: the one conversion (options.WholeSeconds).
	// None given (zero) is the daemon's default.
	req := &contract.BarrierRequest{}
	if w.Timeout != 0 {
		secs, err := options.WholeSeconds(w.Timeout)
		if err != nil {
			return nil, err
		}
		req.Timeout = time.Duration(secs) * time.Second
	}
	var err error
	if w.Barrier != nil {
		if req.Barrier, err = json.Marshal(w.Barrier); err != nil {
			return nil, fmt.Errorf("encoding the barrier: %w", err)
		}
	}
	if w.Checks != nil {
		if req.Checks, err = json.Marshal(w.Checks); err != nil {
			return nil, fmt.Errorf("encoding the checks: %w", err)
		}
	}
	req.Cluster = Cluster(w.Cluster)
	return req, nil
}

// Cache is a cache warm-up (or forgetting) of directories, as a front
// end parsed it.
type Cache struct {
	Paths []string
	// CacheDir is the cache directory, "" for the daemon's default.
	CacheDir string
	// Prune also forgets cached archives no longer in the directories.
	Prune bool
	// DryRun reports what would change and writes nothing (the CLI's
	// --dry-run, Ansible's check mode).
	DryRun bool
	// Forget forgets the directories' archives instead of caching them.
	Forget bool
	// Registry is how the registry of a registry source is reached.
	Registry contract.RegistryAccess
}

// Request is the wire request of the warm-up, every path made absolute
// against the caller's working directory.
func (w Cache) Request() (*contract.CacheRequest, error) {
	req := &contract.CacheRequest{Prune: w.Prune, CheckMode: w.DryRun, Forget: w.Forget, Registry: w.Registry}
	for _, p := range w.Paths {
		abs, err := Source(p)
		if err != nil {
			return nil, err
		}
		req.Paths = append(req.Paths, abs)
	}
	var err error
	if req.Registry, err = registryAccess(w.Registry, req.Paths...); err != nil {
		return nil, err
	}
	if req.CacheDir, err = absolute(w.CacheDir); err != nil {
		return nil, err
	}
	return req, nil
}

// Inspect is an inspection of a directory, as a front end parsed it.
type Inspect struct {
	Path  string
	Cache options.Cache
	// Registry is how the registry of a registry source is reached.
	Registry contract.RegistryAccess
	// Sources are more sources after Path, read with it as one.
	Sources []string
}

// Request is the wire request of the inspection, every path made
// absolute against the caller's working directory.
func (in Inspect) Request() (*contract.InspectRequest, error) {
	req := &contract.InspectRequest{UseCache: in.Cache.UseCache, Registry: in.Registry}
	var err error
	if req.Path, err = Source(in.Path); err != nil {
		return nil, err
	}
	for _, s := range in.Sources {
		abs, err := Source(s)
		if err != nil {
			return nil, err
		}
		req.Sources = append(req.Sources, abs)
	}
	if req.CacheDir, err = absolute(in.Cache.CacheDir); err != nil {
		return nil, err
	}
	if req.Registry, err = registryAccess(in.Registry, append([]string{req.Path}, req.Sources...)...); err != nil {
		return nil, err
	}
	return req, nil
}

// Catalog is a catalog of a directory, as a front end parsed it: the
// directory read as an inspection reads it, and how to show it.
type Catalog struct {
	Inspect
	// Markdown adds the catalog as Markdown; PublicKey checks every
	// signature with that key.
	Markdown  bool
	PublicKey string
	// Prerequisites are the operator's documents the catalog shows.
	Prerequisites string
}

// Request is the wire request of the catalog, every path made absolute
// against the caller's working directory, and the files it names read
// here, as this caller (package carry).
func (c Catalog) Request() (*contract.CatalogRequest, error) {
	in, err := c.Inspect.Request()
	if err != nil {
		return nil, err
	}
	req := &contract.CatalogRequest{InspectRequest: *in, Markdown: c.Markdown}
	if req.PublicKey, err = absolute(c.PublicKey); err != nil {
		return nil, err
	}
	if req.Prerequisites, err = absolute(c.Prerequisites); err != nil {
		return nil, err
	}
	req.Carried = carry.Files(options.CarriedFiles(options.Read{PublicKey: req.PublicKey, Prerequisites: req.Prerequisites}))
	return req, nil
}

// LoginTimeout bounds how long resolving the caller's registry logins
// (its credential helpers) may take.
const LoginTimeout = 30 * time.Second

// registryAccess completes a registry access with what only the caller
// can read: its CA bundle's bytes (registry_ca_file, read as every
// carried file is) and its logins for the registries sources name.
func registryAccess(a contract.RegistryAccess, sources ...string) (contract.RegistryAccess, error) {
	var err error
	if a.CAFile, err = absolute(a.CAFile); err != nil {
		return a, err
	}
	if a.CAFile != "" {
		files := options.CarriedFiles(options.Read{RegistryCAFile: a.CAFile})
		for _, f := range files {
			if f.Name == "registry_ca_file" {
				c := carry.Files([]options.File{f})[0]
				a.CA = &c
			}
		}
	}
	if a.Logins, err = logins(sources...); err != nil {
		return a, err
	}
	return a, nil
}

// logins are the caller's logins for the registries of sources
// (carry.Logins), within LoginTimeout.
func logins(sources ...string) ([]contract.Login, error) {
	hosts := carry.RegistryHosts(sources...)
	if len(hosts) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), LoginTimeout)
	defer cancel()
	return carry.Logins(ctx, DockerConfig(), hosts)
}

// CacheDir is the cache directory a request of the caller's uses: dir
// made absolute, else the default (ZARF_PLANNER_CACHE_DIR, else the
// user's cache directory), as the daemon, given the caller's environment,
// resolves it.
func CacheDir(dir string) (string, error) {
	if dir == "" {
		return kept.DefaultCacheDir()
	}
	return absolute(dir)
}

// absolute is p made absolute, "" staying "".
func absolute(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", p, err)
	}
	return abs, nil
}
