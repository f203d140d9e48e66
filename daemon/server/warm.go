package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/registry"
)

// WarmOptions steer Warm.
type WarmOptions struct {
	// Prune also forgets cached archives no longer in the directories.
	Prune bool
	// CheckMode reports what would change and writes nothing (and reads
	// no archive).
	CheckMode bool
	// Progress, when set, is told after each archive.
	Progress func(inspect.Progress)
	// Limits bound every read.
	Limits inspect.Limits
	// Registry is how the registry of a registry source is reached.
	Registry registry.Options
}

// Warmed is what a warm-up or forgetting did (declared in package
// document).
type Warmed = document.Warmed

func newWarmed(paths []string, check bool) (*Warmed, []string, error) {
	w := &Warmed{Added: []string{}, Removed: []string{}, Unusable: []inspect.FileNote{}, CheckMode: check}
	for _, p := range paths {
		if registry.IsSource(p) {
			w.Paths = append(w.Paths, p)
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, nil, err
		}
		w.Paths = append(w.Paths, abs)
	}
	slices.Sort(w.Paths)
	w.Paths = slices.Compact(w.Paths)
	return w, w.Paths, nil
}

// Warm reads every archive of the directories into the cache; what the
// cache already answers for is not read again.
func Warm(ctx context.Context, c *cache.Cache, paths []string, opts WarmOptions) (*Warmed, error) {
	w, dirs, err := newWarmed(paths, opts.CheckMode)
	if err != nil {
		return nil, err
	}
	for _, dir := range dirs {
		if registry.IsSource(dir) {
			if err := warmRegistry(ctx, c, dir, opts, w); err != nil {
				return nil, err
			}
			continue
		}
		files, err := inspect.CandidatePaths(dir)
		if err != nil {
			return nil, err
		}
		known := map[string]bool{}
		for _, f := range files {
			if fp, err := inspect.Fingerprinting(f); err == nil && c.Known(fp) {
				known[f] = true
			}
		}
		if opts.CheckMode {
			for _, f := range files {
				if known[f] {
					w.Unchanged++
				} else {
					w.Added = append(w.Added, f)
				}
			}
		} else {
			d, err := inspect.ReadDir(ctx, dir, inspect.Options{Cache: c, Progress: opts.Progress, Limits: opts.Limits})
			if err != nil {
				return nil, err
			}
			w.Counts.Add(d.Counts)
			w.Unusable = append(w.Unusable, d.Unusable...)
			for _, f := range files {
				fp, err := inspect.Fingerprinting(f)
				switch {
				case known[f]:
					w.Unchanged++
				case err == nil && c.Known(fp):
					w.Added = append(w.Added, f)
				}
			}
		}
		if opts.Prune {
			cached, err := c.Paths(dir)
			if err != nil {
				return nil, err
			}
			var stale []string
			for _, p := range cached {
				if _, err := os.Stat(p); err != nil {
					stale = append(stale, p)
				}
			}
			if !opts.CheckMode {
				if stale, err = c.Forget(stale); err != nil {
					return nil, err
				}
			}
			w.Removed = append(w.Removed, stale...)
		}
	}
	w.Cache, err = c.Stats()
	return w, err
}

// Forget drops every cached archive of the directories.
func Forget(c *cache.Cache, paths []string, check bool) (*Warmed, error) {
	w, dirs, err := newWarmed(paths, check)
	if err != nil {
		return nil, err
	}
	for _, dir := range dirs {
		var cached []string
		if registry.IsSource(dir) {
			cached, err = cachedUnder(c, dir)
			if err == nil && !check {
				_, err = c.ForgetListings(repositoryOf(dir))
			}
		} else {
			cached, err = c.Paths(dir)
		}
		if err != nil {
			return nil, err
		}
		if !check {
			if cached, err = c.Forget(cached); err != nil {
				return nil, err
			}
		}
		w.Removed = append(w.Removed, cached...)
	}
	w.Cache, err = c.Stats()
	return w, err
}

// warmRegistry caches the outcome of every package a registry source
// names, by its manifest's digest (a package the cache holds is not
// fetched again); in check mode it lists the source and fetches no
// manifest. With prune, the cached packages under a namespace that it no
// longer lists are forgotten.
func warmRegistry(ctx context.Context, c *cache.Cache, source string, opts WarmOptions, w *Warmed) error {
	src, err := registry.Parse(source)
	if err != nil {
		return err
	}
	if opts.Prune && src.Reference != "" {
		return fmt.Errorf("prune with %s: a tag or digest names one package, not what a namespace no longer holds; prune the namespace, oci://%s/NAMESPACE", source, src.Registry)
	}
	read := inspect.Options{Cache: c, Progress: opts.Progress, Limits: opts.Limits, Registry: opts.Registry}
	listed := map[string]bool{}
	if opts.CheckMode {
		cached, uncached, err := inspect.RegistryCached(ctx, source, read)
		if err != nil {
			return err
		}
		w.Unchanged += len(cached)
		w.Added = append(w.Added, uncached...)
		for _, p := range append(cached, uncached...) {
			listed[p] = true
		}
	} else {
		d, err := inspect.ReadRegistry(ctx, source, read)
		if err != nil {
			return err
		}
		w.Counts.Add(d.Counts)
		w.Unusable = append(w.Unusable, d.Unusable...)
		w.Unchanged += len(d.Answered)
		w.Added = append(w.Added, d.Stored...)
		for _, p := range append(slices.Clone(d.Answered), d.Stored...) {
			listed[p] = true
		}
	}
	if !opts.Prune {
		return nil
	}
	cached, err := cachedUnder(c, source)
	if err != nil {
		return err
	}
	var stale []string
	for _, p := range cached {
		if !listed[p] {
			stale = append(stale, p)
		}
	}
	if !opts.CheckMode {
		if stale, err = c.Forget(stale); err != nil {
			return err
		}
	}
	w.Removed = append(w.Removed, stale...)
	return nil
}

// cachedUnder are the cached packages of a registry source: every
// repository at or under a namespace, or the repository of a tag or
// digest (all of its packages: without the registry, which tag named
// which is not known).
func cachedUnder(c *cache.Cache, source string) ([]string, error) {
	src, err := registry.Parse(source)
	if err != nil {
		return nil, err
	}
	all, err := c.Paths("")
	if err != nil {
		return nil, err
	}
	under := repositoryOf(source)
	var out []string
	for _, p := range all {
		rest, ok := strings.CutPrefix(p, under)
		if ok && (strings.HasPrefix(rest, "@") || src.Reference == "" && strings.HasPrefix(rest, "/")) {
			out = append(out, p)
		}
	}
	return out, nil
}

// repositoryOf is a registry source without its tag or digest: a
// namespace, or the repository a reference names.
func repositoryOf(source string) string {
	src, err := registry.Parse(source)
	if err != nil {
		return source
	}
	return registry.Scheme + src.Registry + "/" + src.Namespace
}
