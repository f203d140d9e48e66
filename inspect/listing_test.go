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
	c := openCache(t)
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
		t.Fatal("the read was not answered wholly from the listing given; want it (every archive a cache hit by the listing's stat)")
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

// TestAReadFromAListingSaysWhenItReadAfresh: a read given a walk, whose
// cache does not know an archive by the walk's stat, hashes or reads that
// archive as it is now: the read says it was not answered wholly from
// the walk (Directory.Listing nil), so no plan is kept under the walk's
// stamp for it alone; and an archive found by content is recorded under
// the walk's stat only if its stat is still that after the hash.
func TestAReadFromAListingSaysWhenItReadAfresh(t *testing.T) {
	ctx := context.Background()
	const initArchive = "zarf-package-init-amd64-0.1.0.tar.zst"
	b, err := os.ReadFile(filepath.Join(referenceStack(t), initArchive))
	if err != nil {
		t.Fatal(err)
	}
	known, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(known, initArchive), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "copy.tar.zst"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	listing, err := stamp.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	// An empty cache: every archive is read.
	empty, err := cache.Open(filepath.Join(t.TempDir(), "empty"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	d, err := inspect.ReadDir(ctx, dir, inspect.Options{Cache: empty, Listing: listing})
	if err != nil {
		t.Fatal(err)
	}
	if d.Listing != nil || d.Counts.Read != 1 {
		t.Fatalf("a read that read its archive afresh: listing %v, counts %+v; want no listing, one read", d.Listing != nil, d.Counts)
	}
	// A cache that knows the archive by content only (another path), and
	// the copy rewritten after the walk: it is hashed as it is now, and
	// not recorded under the walk's stat, which it no longer has.
	c := openCache(t)
	if _, err := inspect.ReadDir(ctx, known, inspect.Options{Cache: c}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // a ctime the clock can tell apart
	if err := os.WriteFile(filepath.Join(dir, "copy.tar.zst"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err = inspect.ReadDir(ctx, dir, inspect.Options{Cache: c, Listing: listing})
	if err != nil {
		t.Fatal(err)
	}
	if d.Listing != nil || d.Counts.ContentHits != 1 || d.Counts.Stored != 0 {
		t.Fatalf("a copy found by content after it changed: listing %v, counts %+v; want no listing, one content hit, nothing recorded", d.Listing != nil, d.Counts)
	}
	// Read again without the walk: found by content, and recorded under
	// the stat it has.
	d, err = inspect.ReadDir(ctx, dir, inspect.Options{Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	if d.Counts.ContentHits != 1 || d.Counts.Stored != 1 {
		t.Fatalf("the copy read without the walk: counts %+v; want one content hit, recorded", d.Counts)
	}
}

// openCache is an archive cache of the test's own, closed when it ends.
func openCache(t *testing.T) *cache.Cache {
	t.Helper()
	c, err := cache.Open(filepath.Join(t.TempDir(), "cache"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
