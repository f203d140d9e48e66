package service

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/inspect"
)

func TestAWarmCatalogReadsNoArchive(t *testing.T) {
	c, err := cache.Open(filepath.Join(t.TempDir(), "cache"), func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	cold, err := CatalogOf(ctx, "../testdata/bundles/catalog", c, inspect.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	warm, err := CatalogOf(ctx, "../testdata/bundles/catalog", c, inspect.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if cold.Counts.Read != 3 || warm.Counts.Read != 0 || warm.Counts.Hits != 3 {
		t.Fatalf("cold read %d archives, warm read %d with %d hits; want 3, then 0 with 3 hits", cold.Counts.Read, warm.Counts.Read, warm.Counts.Hits)
	}
	a, _ := json.Marshal(cold)
	b, _ := json.Marshal(warm)
	if !bytes.Equal(a, b) {
		t.Fatalf("the warm catalog differs from the cold one:\n%s\n%s", a, b)
	}
	if len(warm.Packages[0].Claims.ClusterRBAC) != 1 {
		t.Fatalf("the cache lost the claims: %+v", warm.Packages[0].Claims)
	}
}
