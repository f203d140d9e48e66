package cache

import (
	"path/filepath"
	"testing"

	"github.com/colonel-byte/zarf-planner/cache/kept"
)

// BenchmarkOpenWarm opens and closes a cache that holds the entries of the
// example bundle: what a daemon that has just started pays first.
func BenchmarkOpenWarm(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "cache")
	c, err := Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := c.StorePlan(kept.Key{1}, make([]byte, 1<<20), false); err != nil {
		b.Fatal(err)
	}
	if err := c.Close(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		c, err := Open(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
