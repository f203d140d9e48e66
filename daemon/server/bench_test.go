package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// BenchmarkWarmPlanDaemon is a daemon's warm answer: the scan, then the
// document from the plan memo. It needs the 1,000 archives make
// bench-cache builds (and is skipped without them: it is not part of make
// test).
func BenchmarkWarmPlanDaemon(b *testing.B) {
	dir, _ := filepath.Abs("../../.cache/bench/cache/archives")
	if _, err := os.Stat(dir); err != nil {
		b.Skip("run make bench-cache first to build the archives")
	}
	d := New(Config{DefaultCache: filepath.Join(b.TempDir(), "cache")})
	b.Cleanup(func() { d.Close() })
	req := &contract.PlanRequest{Path: dir, Options: options.Defaults()}
	if _, err := d.Plan(context.Background(), carried(req)); err != nil { // cold: fills the cache and the memo
		b.Fatal(err)
	}
	for b.Loop() {
		resp, err := d.Plan(context.Background(), carried(req))
		if err != nil || resp.Failed {
			b.Fatal(err)
		}
	}
	if hits, _ := d.memo.Stats(); hits < uint64(b.N)-1 {
		b.Fatalf("the memo answered %d of %d", hits, b.N)
	}
}

// BenchmarkFirstPlanDaemon is the first answer of a daemon that has just
// started on a warm cache (what an operator meets after the daemon idled
// out): open the cache, scan the directory answering from it, plan and
// render, then close. It needs the archives make bench-cache builds.
func BenchmarkFirstPlanDaemon(b *testing.B) {
	dir, _ := filepath.Abs("../../.cache/bench/cache/archives")
	if _, err := os.Stat(dir); err != nil {
		b.Skip("run make bench-cache first to build the archives")
	}
	cacheDir := filepath.Join(b.TempDir(), "cache")
	req := &contract.PlanRequest{Path: dir, Options: options.Defaults()}
	warm := New(Config{DefaultCache: cacheDir})
	if _, err := warm.Plan(context.Background(), carried(req)); err != nil { // fills the cache
		b.Fatal(err)
	}
	if err := warm.Close(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		d := New(Config{DefaultCache: cacheDir})
		resp, err := d.Plan(context.Background(), carried(req))
		if err != nil || resp.Failed {
			b.Fatal(err)
		}
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
