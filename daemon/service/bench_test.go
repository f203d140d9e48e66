package service

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/daemon/contract/plannerpb"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner"
)

// The 1,000 archives make bench-cache builds (skipped when absent: these
// benchmarks are not part of make test).
const benchArchives = "../../.cache/bench/cache/archives"

func benchCache(b *testing.B) (string, *cache.Cache) {
	b.Helper()
	dir, _ := filepath.Abs(benchArchives)
	if _, err := os.Stat(dir); err != nil {
		b.Skip("run make bench-cache first to build the archives")
	}
	c, err := cache.Open(filepath.Join(b.TempDir(), "cache"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if _, err := inspect.ReadDirWith(context.Background(), dir, inspect.Options{Cache: c}); err != nil {
		b.Fatal(err)
	}
	return dir, c
}

func BenchmarkWarmReadDir(b *testing.B) {
	dir, c := benchCache(b)
	for b.Loop() {
		d, err := inspect.ReadDirWith(context.Background(), dir, inspect.Options{Cache: c})
		if err != nil || d.Counts.Hits != 1000 {
			b.Fatal(err, d.Counts)
		}
	}
}

func BenchmarkWarmPlan(b *testing.B) {
	dir, c := benchCache(b)
	for b.Loop() {
		res, err := Plan(context.Background(), Request{Path: dir, Cache: c, Options: planner.Options{}})
		if err != nil || res.Failed {
			b.Fatal(err, res.Msg)
		}
		if _, err := res.JSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWarmPlanDaemon is a daemon's warm answer: the scan, then the
// document from the plan memo.
func BenchmarkWarmPlanDaemon(b *testing.B) {
	dir, c := benchCache(b)
	d := NewDaemon(c.Dir(), nil)
	d.caches[c.Dir()] = c
	req := &plannerpb.PlanRequest{Path: dir, CacheDir: c.Dir()}
	for b.Loop() {
		resp, err := d.Plan(context.Background(), req)
		if err != nil || resp.GetFailed() {
			b.Fatal(err)
		}
	}
	if hits, _ := d.memo.Stats(); hits < uint64(b.N)-1 {
		b.Fatalf("the memo answered %d of %d", hits, b.N)
	}
}
