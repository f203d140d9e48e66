package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/zarf-planner/daemon/contract"
	"github.com/colonel-byte/zarf-planner/daemon/contract/plannerpb"
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
	o := options.Defaults()
	enc, err := contract.EncodeOptions(o)
	if err != nil {
		b.Fatal(err)
	}
	req := &plannerpb.PlanRequest{Path: dir, Options: enc}
	if _, err := d.Plan(context.Background(), req); err != nil { // cold: fills the cache and the memo
		b.Fatal(err)
	}
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
