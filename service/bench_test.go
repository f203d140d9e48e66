package service

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/signature"
)

// The 1,000 archives make bench-cache builds (skipped when absent: these
// benchmarks are not part of make test).
const benchArchives = "../.cache/bench/cache/archives"

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
	if _, err := inspect.ReadDir(context.Background(), dir, inspect.Options{Cache: c}); err != nil {
		b.Fatal(err)
	}
	return dir, c
}

func BenchmarkWarmReadDir(b *testing.B) {
	dir, c := benchCache(b)
	for b.Loop() {
		d, err := inspect.ReadDir(context.Background(), dir, inspect.Options{Cache: c})
		if err != nil || d.Counts.Hits != 1000 {
			b.Fatal(err, d.Counts)
		}
	}
}

func BenchmarkWarmPlan(b *testing.B) {
	dir, c := benchCache(b)
	for b.Loop() {
		req := carriedRequest(dir, options.Defaults(), options.ModuleCaller)
		req.Cache = c
		read, early, err := Read(context.Background(), req)
		if err != nil || early != nil {
			b.Fatal(err, early)
		}
		res := read.Decide()
		if res.Failed {
			b.Fatal(res.Msg)
		}
		if _, err := res.JSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWarmCatalog is the daemon's work for a warm catalog: the scan
// (every archive answered from the cache, contents included) and the
// document.
func BenchmarkWarmCatalog(b *testing.B) {
	dir, c := benchCache(b)
	for b.Loop() {
		cat, err := CatalogOf(context.Background(), dir, c, inspect.Limits{})
		if err != nil || cat.Counts.Hits != 1000 {
			b.Fatal(err, cat.Counts)
		}
		if _, err := document.Marshal(cat); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckSignatures is what public_key adds to a plan of 1,000
// signed archives (the signature of a zarf-signed archive, checked 1,000
// times), against BenchmarkWarmPlan.
func BenchmarkCheckSignatures(b *testing.B) {
	a, err := inspect.Inspect(context.Background(), "../testdata/bundles/signed/zarf-package-base-amd64-1.0.0.tar.zst", inspect.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	key, err := loadKey("../testdata/keys/cosign.pub")
	if err != nil {
		b.Fatal(err)
	}
	for _, remembered := range []bool{false, true} {
		b.Run(map[bool]string{false: "checked", true: "remembered"}[remembered], func(b *testing.B) {
			p := &Prepared{Directory: &inspect.Directory{}, Key: key}
			if remembered { // the daemon's memo, warm
				p.Request.Signatures = signature.NewMemo(10)
			}
			for range 1000 {
				p.Directory.Candidates = append(p.Directory.Candidates, a.Candidate)
			}
			for b.Loop() {
				if _, probs, _ := p.checkSignatures(); len(probs) != 0 {
					b.Fatal(probs)
				}
			}
		})
	}
}

// loadKey is the public key of a key file (signature.KeyOf of its
// bytes).
func loadKey(path string) (*signature.Key, error) {
	b, err := os.ReadFile(path)
	return signature.KeyOf(path, b, err)
}
