package inspect_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/stamp"
)

// TestAReadFromAListingReadsWhatTheListingSaw: a read given the walk a
// plan is keyed by (Options.Listing) reads that walk's entries by that
// walk's stats, whatever changed since, so the plan is of what the key
// names; a read given a walk of a directory no longer there walks the
// one that is.
func TestAReadFromAListingReadsWhatTheListingSaw(t *testing.T) {
	ctx := context.Background()
	src := referenceStack(t)
	copyIn := func(dir, name, as string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, as), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const (
		initArchive = "zarf-package-init-amd64-0.1.0.tar.zst"
		flux        = "zarf-package-app-fluxcd-amd64-2.4.0.tar.zst"
		ceph        = "zarf-package-csi-rook-ceph-amd64-1.15.0.tar.zst"
	)
	dir := t.TempDir()
	copyIn(dir, initArchive, initArchive)
	copyIn(dir, flux, flux)
	c, err := cache.Open(filepath.Join(t.TempDir(), "cache"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := inspect.ReadDir(ctx, dir, inspect.Options{Cache: c}); err != nil {
		t.Fatal(err)
	}
	listing, err := stamp.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	// After the walk: an archive arrives, and a listed one is rewritten
	// in place with another package's bytes.
	time.Sleep(10 * time.Millisecond) // a ctime the clock can tell apart
	copyIn(dir, ceph, ceph)
	copyIn(dir, ceph, flux)
	names := func(d *inspect.Directory) []string {
		var n []string
		for _, c := range d.Candidates {
			n = append(n, c.Name)
		}
		slices.Sort(n)
		return n
	}
	d, err := inspect.ReadDir(ctx, dir, inspect.Options{Cache: c, Listing: listing})
	if err != nil {
		t.Fatal(err)
	}
	if d.Listing != listing {
		t.Fatal("the read walked the directory itself; want it read from the listing given")
	}
	if got := names(d); !slices.Equal(got, []string{"app-fluxcd", "init"}) || d.Counts.Hits != 2 || d.Counts.Read != 0 {
		t.Fatalf("read from the listing: %v, counts %+v; want init and app-fluxcd as the listing saw them, both by the cache", got, d.Counts)
	}
	d, err = inspect.ReadDir(ctx, dir, inspect.Options{Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(d); d.Listing != nil || !slices.Equal(got, []string{"csi-rook-ceph", "csi-rook-ceph", "init"}) {
		t.Fatalf("read without a listing: %v (listing %v); want the directory as it is now", got, d.Listing != nil)
	}
	// Another directory in its place: walked afresh.
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyIn(dir, initArchive, initArchive)
	d, err = inspect.ReadDir(ctx, dir, inspect.Options{Cache: c, Listing: listing})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(d); d.Listing != nil || !slices.Equal(got, []string{"init"}) {
		t.Fatalf("a new directory at the listing's path read as %v (from the listing: %v); want it walked afresh", got, d.Listing != nil)
	}
}
