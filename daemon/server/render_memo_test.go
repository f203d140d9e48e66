package server

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
)

// counting counts the renders asked of the real renderer.
type counting struct {
	next claims.Renderer
	n    atomic.Int64
}

func (c *counting) Render(ctx context.Context, req claims.ChartRequest) (claims.Rendered, error) {
	c.n.Add(1)
	return c.next.Render(ctx, req)
}

// Requests share the daemon's memo of renders: a directory read again
// without the cache, and a copy of it elsewhere, render no chart again.
func TestRequestsShareTheDaemonsRenders(t *testing.T) {
	runner := renderproc.Beside()
	defer runner.Close()
	r := &counting{next: runner}
	d := New(Config{DefaultCache: filepath.Join(t.TempDir(), "cache"), Charts: r})
	t.Cleanup(func() { d.Close() })
	var first string
	for i, dir := range []string{copyBundle(t, "../../testdata/bundles/catalog"), copyBundle(t, "../../testdata/bundles/catalog")} {
		for range 2 {
			resp, err := d.Catalog(context.Background(), carriedCatalog(&contract.CatalogRequest{InspectRequest: contract.InspectRequest{Path: dir}}))
			if err != nil {
				t.Fatal(err)
			}
			doc := strings.ReplaceAll(string(resp.Result), dir, "DIR")
			if first == "" {
				first = doc
			} else if doc != first {
				t.Fatalf("read %d answered another catalog", i)
			}
		}
	}
	if !strings.Contains(first, `"rendered":true`) {
		t.Fatalf("the catalog renders no chart: %.400s", first)
	}
	// The catalog's gadgets chart: once, for four reads.
	if n := r.n.Load(); n != 1 {
		t.Fatalf("four reads rendered %d charts, want 1", n)
	}
}
