package cache

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/colonel-byte/zarf-planner/cache/kept"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

const reference = "../examples/bundles/reference-stack"

// bundle copies the reference stack and the forms bundle (split, tar,
// flavors, architectures) into a fresh directory.
func bundle(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, src := range []string{reference, "../testdata/bundles/forms"} {
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func openT(t *testing.T, dir string) *Cache {
	t.Helper()
	c, err := Open(dir, func(s string) { t.Log("warning:", s) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func read(t *testing.T, dir string, c *Cache) *inspect.Directory {
	t.Helper()
	opts := inspect.Options{}
	if c != nil {
		opts.Cache = c
	}
	d, err := inspect.ReadDir(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// view is a Directory without its counts and what the cache answered and
// stored (how it was read), for comparing results.
func view(t *testing.T, d *inspect.Directory) string {
	t.Helper()
	cp := *d
	cp.Counts = inspect.Counts{}
	cp.Answered, cp.Stored = nil, nil
	b, err := json.Marshal(cp)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWarmReadOnlyStats(t *testing.T) {
	dir := bundle(t)
	c := openT(t, filepath.Join(t.TempDir(), "cache"))
	plain := read(t, dir, nil)
	cold := read(t, dir, c)
	warm := read(t, dir, c)
	if cold.Counts.Read != cold.Counts.Archives || cold.Counts.Stored != cold.Counts.Archives || cold.Counts.Archives != 12 {
		t.Errorf("cold counts %+v; want all 12 archives read and stored", cold.Counts)
	}
	if warm.Counts.Hits != 12 || warm.Counts.Read != 0 || warm.Counts.ContentHits != 0 {
		t.Errorf("warm counts %+v; want 12 hits and nothing read", warm.Counts)
	}
	if view(t, plain) != view(t, cold) || view(t, cold) != view(t, warm) {
		t.Error("the cache changed what the directory reads as")
	}
}

func TestChangesAreNoticed(t *testing.T) {
	init := "zarf-package-init-amd64-0.1.0.tar.zst"
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   inspect.Counts // for the changed archive alone
	}{
		{"mtime changed: re-hashed, found by content", func(t *testing.T, dir string) {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(filepath.Join(dir, init), later, later); err != nil {
				t.Fatal(err)
			}
		}, inspect.Counts{ContentHits: 1, Stored: 1}},
		{"renamed: found by content after one hash", func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, init), filepath.Join(dir, "renamed-init.tar.zst")); err != nil {
				t.Fatal(err)
			}
		}, inspect.Counts{ContentHits: 1, Stored: 1}},
		{"content replaced (another archive, other size): read", func(t *testing.T, dir string) {
			b, err := os.ReadFile("../testdata/bundles/versions/zarf-package-legacy-app-amd64-0.5.0.tar.zst")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, init), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, inspect.Counts{Read: 1, Stored: 1}},
		{"size changed (truncated): read, not cached", func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, init), 100); err != nil {
				t.Fatal(err)
			}
		}, inspect.Counts{Read: 1}},
		{"a split package gains a part: read again", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "zarf-package-big-app-amd64-1.0.0.tar.zst.part004"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, inspect.Counts{Read: 1, Stored: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := bundle(t)
			c := openT(t, filepath.Join(t.TempDir(), "cache"))
			read(t, dir, c)
			tt.change(t, dir)
			d := read(t, dir, c)
			got := d.Counts
			got.Hits, got.Archives = 0, 0
			if got != tt.want {
				t.Errorf("counts after the change %+v; want %+v besides the hits", got, tt.want)
			}
			if d.Counts.Hits != 11 {
				t.Errorf("hits %d; want the 11 unchanged archives", d.Counts.Hits)
			}
			if view(t, d) != view(t, read(t, dir, nil)) {
				t.Error("after the change the cache answers differently from a plain read")
			}
		})
	}
}

// An archive rewritten in place with the same size and its modification
// time put back (rsync -t, cp --preserve, touch -d) is read again: the
// cache never answers with the archive it replaced.
func TestInPlaceRewriteIsReadAgain(t *testing.T) {
	dir := t.TempDir()
	a, b := craft.Twins("twin", "1.0.0")
	file := filepath.Join(dir, "zarf-package-twin-amd64-1.0.0.tar")
	if err := os.WriteFile(file, a, 0o644); err != nil {
		t.Fatal(err)
	}
	c := openT(t, filepath.Join(t.TempDir(), "cache"))
	before := read(t, dir, c)
	if err := craft.RewriteInPlace(file, b); err != nil {
		t.Fatal(err)
	}
	after := read(t, dir, c)
	plain := read(t, dir, nil)
	if after.Counts.Read != 1 || view(t, after) != view(t, plain) || view(t, after) == view(t, before) {
		t.Fatalf("after the rewrite: counts %+v\ncache  %s\nplain  %s\nbefore %s", after.Counts, view(t, after), view(t, plain), view(t, before))
	}
}

func TestCopyIsFoundByContent(t *testing.T) {
	dir := bundle(t)
	c := openT(t, filepath.Join(t.TempDir(), "cache"))
	read(t, dir, c)
	other := t.TempDir()
	b, _ := os.ReadFile(filepath.Join(dir, "zarf-package-app-fluxcd-amd64-2.4.0.tar.zst"))
	if err := os.WriteFile(filepath.Join(other, "copy.tar.zst"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	d := read(t, other, c)
	if d.Counts.ContentHits != 1 || d.Counts.Read != 0 || d.Candidates[0].Name != "app-fluxcd" || filepath.Base(d.Candidates[0].Path) != "copy.tar.zst" {
		t.Errorf("counts %+v candidates %+v; want the copy found by content under its own path", d.Counts, d.Candidates)
	}
}

func TestSchemaChangeDropsEntries(t *testing.T) {
	dir := bundle(t)
	cdir := filepath.Join(t.TempDir(), "cache")
	c := openT(t, cdir)
	read(t, dir, c)
	c.Close()
	var warned string
	c2, err := open(cdir, Schema+1, func(s string) { warned = s })
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	st, _ := c2.Stats()
	if st.Entries != 0 || st.Paths != 0 || !strings.Contains(warned, fmt.Sprintf("schema %d; this version uses %d", Schema, Schema+1)) {
		t.Errorf("stats %+v warning %q; want an empty cache and a warning", st, warned)
	}
	d, err := inspect.ReadDir(context.Background(), dir, inspect.Options{Cache: c2})
	if err != nil || d.Counts.Read != 12 {
		t.Errorf("after the schema change: %+v, %v; want everything read again", d.Counts, err)
	}
}

func TestCorruptDirectoryIsMovedAsideAndRebuilt(t *testing.T) {
	dir := bundle(t)
	cdir := filepath.Join(t.TempDir(), "cache")
	c := openT(t, cdir)
	read(t, dir, c)
	c.Close()
	if err := os.WriteFile(filepath.Join(cdir, "MANIFEST"), []byte("not a badger manifest at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	var warned string
	c2, err := Open(cdir, func(s string) { warned = s })
	if err != nil {
		t.Fatalf("Open of a corrupt cache: %v", err)
	}
	defer c2.Close()
	aside, _ := filepath.Glob(cdir + ".corrupt-*")
	if len(aside) != 1 || !strings.Contains(warned, "moved it to "+aside[0]) {
		t.Errorf("moved aside %v, warning %q", aside, warned)
	}
	if d := read(t, dir, c2); d.Counts.Read != 12 || d.Counts.Stored != 12 {
		t.Errorf("rebuilt cache counts %+v", d.Counts)
	}
}

// TestEmptyMemtableLeftByACrashIsNotCorruption reproduces what a crash
// during memtable creation leaves (seen in CI after SIGKILL): a zero-length
// .mem file. The cache must reopen with its entries, not move them aside.
func TestEmptyMemtableLeftByACrashIsNotCorruption(t *testing.T) {
	dir := bundle(t)
	cdir := filepath.Join(t.TempDir(), "cache")
	c := openT(t, cdir)
	read(t, dir, c)
	c.Close()
	if err := os.WriteFile(filepath.Join(cdir, "00099.mem"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c2, err := Open(cdir, func(s string) { t.Errorf("unexpected warning: %s", s) })
	if err != nil {
		t.Fatalf("Open after an interrupted memtable creation: %v", err)
	}
	defer c2.Close()
	if d := read(t, dir, c2); d.Counts.Hits != 12 {
		t.Errorf("counts %+v; want every entry still there", d.Counts)
	}
}

func TestSecondOpenIsRefusedClearly(t *testing.T) {
	cdir := filepath.Join(t.TempDir(), "cache")
	openT(t, cdir)
	_, err := Open(cdir, nil)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "is open in another process") {
		t.Fatalf("second Open = %v; want ErrInUse", err)
	}
}

func TestBadValuesAreDroppedOnRead(t *testing.T) {
	dir := bundle(t)
	c := openT(t, filepath.Join(t.TempDir(), "cache"))
	d := read(t, dir, c)
	sha := d.Candidates[0].SHA256
	for _, bad := range []string{`{not json`, `{"schema":1,"outcome":{"kind":"ok","sha256":"` + strings.Repeat("0", 64) + `"}}`} {
		if err := c.db.Update(func(txn *badger.Txn) error { return txn.Set(kindContent.key(sha), []byte(bad)) }); err != nil {
			t.Fatal(err)
		}
		c.forgetMemo() // as a fresh process would read the disk
		if _, ok := c.LookupContent(sha); ok {
			t.Errorf("value %q was accepted", bad)
		}
		var e entry
		if c.get(kindContent.key(sha), &e) {
			t.Errorf("value %q was kept after failing validation", bad)
		}
	}
	if again := read(t, dir, c); again.Counts.Read != 1 || view(t, again) != view(t, d) {
		t.Errorf("after dropping one bad value: counts %+v; want that archive read again and the same result", again.Counts)
	}
}

func TestGC(t *testing.T) {
	dir := bundle(t)
	c := openT(t, filepath.Join(t.TempDir(), "cache"))
	read(t, dir, c)
	before, _ := c.Stats()
	c.now = func() time.Time { return time.Now().Add(48 * time.Hour) }
	n, err := c.GC(0, 24*time.Hour)
	if err != nil || n != before.Entries {
		t.Fatalf("GC by age dropped %d of %d: %v", n, before.Entries, err)
	}
	after, _ := c.Stats()
	if after.Entries != 0 || after.Paths != 0 {
		t.Errorf("after GC: %+v", after)
	}
	c.now = time.Now
	read(t, dir, c)
	if n, err := c.GC(1, 0); err != nil || n != before.Entries {
		t.Errorf("GC to 1 byte dropped %d: %v", n, err)
	}
}

func TestForgetAndPaths(t *testing.T) {
	dir := bundle(t)
	c := openT(t, filepath.Join(t.TempDir(), "cache"))
	read(t, dir, c)
	paths, err := c.Paths(dir)
	if err != nil || len(paths) != 12 {
		t.Fatalf("Paths = %d, %v", len(paths), err)
	}
	removed, err := c.Forget(paths[:3])
	if err != nil || len(removed) != 3 {
		t.Fatalf("Forget = %v, %v", removed, err)
	}
	st, _ := c.Stats()
	if st.Paths != 9 || st.Entries != 9 {
		t.Errorf("after forgetting 3: %+v", st)
	}
}

// TestCrashMidWriteLosesAtMostOneEntry kills a process that writes entries
// as fast as it can, once it has acknowledged a few thousand, and counts
// what was lost: every entry whose Store returned must read back whole
// (only one still being written when the kill came may be missing).
func TestCrashMidWriteLosesAtMostOneEntry(t *testing.T) {
	if os.Getenv("ZP_CACHE_WRITER") != "" {
		writer(os.Getenv("ZP_CACHE_WRITER"))
		return
	}
	cdir := filepath.Join(t.TempDir(), "cache")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestCrashMidWriteLosesAtMostOneEntry$")
	cmd.Env = append(os.Environ(), "ZP_CACHE_WRITER="+cdir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Each line is the index of an entry whose Store returned.
	acked := -1
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if n, err := strconv.Atoi(lines.Text()); err == nil {
			acked = n
		}
		if acked >= 3000 {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if acked < 3000 {
		t.Fatalf("the writer acknowledged only %d entries before it stopped", acked+1)
	}
	c := openT(t, cdir)
	lost := 0
	for i := 0; i <= acked; i++ {
		var pe pathEntry
		if !c.get(kindPath.key(fmt.Sprintf("/bundle/%d.tar.zst", i)), &pe) {
			lost++
			continue
		}
		if _, ok := c.content(pe.SHA256); !ok {
			t.Fatalf("entry %d points to content %s that is not whole", i, pe.SHA256)
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged entries were lost in the kill; want none", lost, acked+1)
	}
}

// writer stores entries forever (until killed), printing the index of
// each one stored.
func writer(dir string) {
	c, err := Open(dir, nil)
	if err != nil {
		os.Exit(3)
	}
	for i := 0; ; i++ {
		sha := fmt.Sprintf("%064x", i)
		o := inspect.Outcome{Kind: inspect.OutcomeOK, SHA256: sha, Source: fmt.Sprintf("/bundle/%d.tar.zst", i)}
		o.Candidate.Name, o.Candidate.SHA256, o.Candidate.Architecture = fmt.Sprintf("pkg-%d", i), sha, "amd64"
		fp := inspect.Fingerprint{Path: fmt.Sprintf("/bundle/%d.tar.zst", i), Files: []inspect.FileStat{{Name: "x", Size: int64(i)}}}
		if err := c.Store(fp, o); err != nil {
			os.Exit(4)
		}
		fmt.Println(i)
	}
}

// FuzzDecodeEntry feeds arbitrary bytes to the decoder of cached values:
// it must not panic, and may accept only an entry of this schema for this
// sha256 whose candidate keeps every rule inspect holds names to.
func FuzzDecodeEntry(f *testing.F) {
	sha := strings.Repeat("ab", 32)
	good, _ := json.Marshal(entry{Schema: Schema, Outcome: inspect.Outcome{Kind: inspect.OutcomeOK, SHA256: sha, Source: "/bundle/init.tar.zst",
		Candidate: facts.Candidate{Name: "init", Version: "0.1.0", Architecture: "amd64", SHA256: sha}}})
	f.Add(good)
	f.Add([]byte(`{"schema":2,"outcome":{"kind":"ok","sha256":"` + sha + `","candidate":{"name":"a\"->\"b","sha256":"` + sha + `"}}}`))
	f.Add([]byte(`{"schema":2,"outcome":{"kind":"invalid","sha256":"` + sha + `","problem":"x"}}`))
	f.Add([]byte("null"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, ok := decodeEntry(raw, sha, Schema)
		if !ok {
			return
		}
		if e.Schema != Schema || e.Outcome.SHA256 != sha || !validOutcome(e.Outcome) {
			t.Fatalf("accepted an entry that breaks a rule: %+v", e)
		}
		if c := e.Outcome.Candidate; e.Outcome.Kind == inspect.OutcomeOK && facts.CheckPackageName(c.Name) != nil {
			t.Fatalf("accepted a candidate named %q", c.Name)
		}
	})
}

func TestStoredPlansKeepTheNewest(t *testing.T) {
	c, err := Open(filepath.Join(t.TempDir(), "cache"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	key := func(i int) kept.Key { return kept.Key{byte(i)} }
	for i := range kept.MaxPlans + 1 {
		if err := c.StorePlan(key(i), []byte(fmt.Sprintf(`{"plan":%d}`, i)), i%2 == 1); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			time.Sleep(20 * time.Millisecond) // kept in order of their mtime: the first is kept before the rest
		}
	}
	if _, _, ok := c.Plan(key(0)); ok {
		t.Fatalf("the oldest of %d plans was kept; want at most %d", kept.MaxPlans+1, kept.MaxPlans)
	}
	doc, failed, ok := c.Plan(key(kept.MaxPlans))
	if !ok || string(doc) != fmt.Sprintf(`{"plan":%d}`, kept.MaxPlans) || failed != (kept.MaxPlans%2 == 1) {
		t.Fatalf("got %q failed=%v ok=%v; want the newest plan", doc, failed, ok)
	}
	if err := c.DropPlans(); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := c.Plan(key(kept.MaxPlans)); ok {
		t.Fatal("a plan survived DropPlans")
	}
}
