package server

import (
	"context"
	"os"
	"path/filepath"
	"slices"

	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/inspect"
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
}

// Warmed is what a warm-up or forget did (or, in check mode, would do).
type Warmed struct {
	Paths     []string           `json:"paths"`
	Added     []string           `json:"added"`
	Removed   []string           `json:"removed"`
	Unchanged int                `json:"unchanged"`
	Unusable  []inspect.FileNote `json:"unusable"`
	CheckMode bool               `json:"check_mode"`
	Counts    inspect.Counts     `json:"counts"`
	Cache     cache.Stats        `json:"cache"`
}

// Changed reports whether entries were (or would be) added or removed.
func (w *Warmed) Changed() bool { return len(w.Added)+len(w.Removed) > 0 }

func newWarmed(paths []string, check bool) (*Warmed, []string, error) {
	w := &Warmed{Added: []string{}, Removed: []string{}, Unusable: []inspect.FileNote{}, CheckMode: check}
	for _, p := range paths {
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
		cached, err := c.Paths(dir)
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
