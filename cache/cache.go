// Package cache keeps what inspect learned of each archive in a Badger
// database, keyed by the archive's sha256, with a path index (absolute path
// and the stat of its files) so that planning an unchanged directory only
// stats files. It implements inspect.Cache. It knows nothing of planning:
// it stores and returns inspect outcomes.
//
// One process opens a cache directory at a time: Open checks that no other
// user can change it (package privdir), resolves a symlink, takes a lock
// beside Badger's own and says clearly who holds it. A directory whose
// content Badger cannot read is moved aside and rebuilt (it is a cache);
// any other open error (rights, another process, space) leaves it as it
// is. Entries that do not decode or do not match their key are dropped
// when read; a schema number guards the shape of every value.
package cache

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	badgeroptions "github.com/dgraph-io/badger/v4/options"
	jsonv2 "github.com/go-json-experiment/json"

	"github.com/colonel-byte/zarf-planner/cache/kept"
	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// Schema is the shape of the values this version writes. Opening a cache
// written with another schema drops every entry. (2: fingerprints hold
// the ctime; 3: candidates hold their size and signature; 4: and their
// contents and claims; 5: charts rendered in the renderer process, which
// refuses chart file names that are not UTF-8; 6: images and their
// registries normalised as the container tools read them, docker.io; 7:
// images used by workloads, host files and actions, what each unknown
// claim affects; 8: the ClusterRoles a package ships, and the rules of
// an aggregating role it binds gathered from them; 9: charts say the
// cluster they were rendered against and their lookups, and a lookup its
// answer; 10: candidates hold the sha256 of their zarf.yaml; 11: contents
// hold what their objects use, the CRDs, storage and priority classes
// inferred requirements are read from, and components whether they are
// deployed by default; 12: outcomes name the source they were read from,
// which decides the reads they answer; 13: a CRD claim holds its plural,
// versions and conversion, which its upgrade is judged by.)
const Schema = 13

// EnvDir overrides the default cache directory.
const EnvDir = kept.EnvDir

// ErrInUse reports a cache directory another process has open.
var ErrInUse = errors.New("cache directory in use")

// Keys are of the kinds keys.go declares; every value is JSON.

// entry is what the cache keeps per archive content.
type entry struct {
	Schema  int             `json:"schema"`
	Outcome inspect.Outcome `json:"outcome"`
	Added   time.Time       `json:"added"`
	Used    time.Time       `json:"used"`
}

// pathEntry maps a path and its stat to content.
type pathEntry struct {
	Schema      int                 `json:"schema"`
	Fingerprint inspect.Fingerprint `json:"fingerprint"`
	SHA256      string              `json:"sha256"`
}

// Cache is an open cache directory.
type Cache struct {
	dir    string
	db     *badger.DB
	lock   *privdir.Lock
	plans  *kept.Store
	schema int
	now    func() time.Time

	hits, misses atomic.Int64
	closeOnce    sync.Once

	// memo holds decoded values read or written through this Cache, so a
	// long-lived daemon answers warm lookups without Badger or JSON. Every
	// write through this Cache updates or clears it; only this process has
	// the directory open (the lock), so nothing else can change it.
	memoMu      sync.RWMutex
	memoPaths   map[string]pathEntry
	memoContent map[string]entry

	// pre holds raw values read a directory at a time (prefetch.go).
	pre prefetch
}

// memoLimit bounds the decoded values kept in memory.
const memoLimit = 50000

func (c *Cache) memoPath(path string) (pathEntry, bool) {
	c.memoMu.RLock()
	defer c.memoMu.RUnlock()
	pe, ok := c.memoPaths[path]
	return pe, ok
}

func (c *Cache) memoSHA(sha string) (entry, bool) {
	c.memoMu.RLock()
	defer c.memoMu.RUnlock()
	e, ok := c.memoContent[sha]
	return e, ok
}

func (c *Cache) remember(path string, pe *pathEntry, sha string, e *entry) {
	c.dropPrefetched(path, sha, false)
	c.memoMu.Lock()
	defer c.memoMu.Unlock()
	if c.memoPaths == nil || len(c.memoPaths)+len(c.memoContent) > memoLimit {
		c.memoPaths, c.memoContent = map[string]pathEntry{}, map[string]entry{}
	}
	if pe != nil {
		c.memoPaths[path] = *pe
	}
	if e != nil {
		c.memoContent[sha] = *e
	}
}

// forgetMemo drops every decoded value (after a delete, GC or drop).
func (c *Cache) forgetMemo() {
	c.forgetPrefetched()
	c.memoMu.Lock()
	defer c.memoMu.Unlock()
	c.memoPaths, c.memoContent = nil, nil
}

// DefaultDir is $ZARF_PLANNER_CACHE_DIR, else <user cache dir>/zarf-planner/cache.
func DefaultDir() (string, error) { return kept.DefaultCacheDir() }

// Open opens (creating it if needed) the cache in dir. warn receives
// notices such as a corrupt directory moved aside; it may be nil.
func Open(dir string, warn func(string)) (*Cache, error) {
	return open(dir, Schema, warn)
}

func open(dir string, schema int, warn func(string)) (c *Cache, err error) {
	if warn == nil {
		warn = func(string) {}
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	cl, err := claim(dir)
	if err != nil {
		return nil, err
	}
	dir, lock := cl.dir, cl.lock
	defer func() {
		err = errors.Join(err, cl.parent.Close())
		if err != nil {
			err = errors.Join(err, lock.Unlock())
		}
	}()
	// A crash while Badger created its next memtable leaves a zero-length
	// .mem file that Badger refuses to reopen (and, on that failed open,
	// grows to full size, so this must run first). It holds nothing; we
	// hold the lock, so no other process is writing it.
	if badgerHolder(dir) {
		return nil, inUseByBadger(dir)
	}
	removeEmptyMemtables(dir)
	db, err := badger.Open(options(dir))
	if err != nil {
		// Not the content's fault (rights, another process, space):
		// reported, and the directory left as it is.
		if badgerHolder(dir) {
			return nil, inUseByBadger(dir)
		}
		if !cl.existed {
			return nil, fmt.Errorf("creating cache %s: %w", dir, err)
		}
		if why := unusable(dir, err); why != "" {
			return nil, fmt.Errorf("opening cache %s: %w; it was left as it is (it is not corrupt: %s)", dir, err, why)
		}
		if foreign := notOfACache(dir); foreign != "" {
			return nil, fmt.Errorf("opening cache %s: %w; it was left as it is: it holds %s, which no cache holds, so it is no cache of zarf-planner's; choose another cache_dir (--cache-dir, %s)", dir, err, foreign, EnvDir)
		}
	}
	if err != nil {
		// We hold the lock, so no other zarf-planner has it open: Badger
		// cannot read what is there. It is a cache; keep it aside for a
		// post-mortem and start empty.
		aside, rerr := cl.setAside(time.Now().UTC().Format("20060102T150405"))
		if rerr != nil {
			return nil, fmt.Errorf("opening cache %s: %w (and moving it aside failed: %v)", dir, err, rerr)
		}
		warn(fmt.Sprintf("cache %s could not be opened (%v); moved it to %s and started an empty cache", dir, err, aside))
		if db, err = badger.Open(options(dir)); err != nil {
			return nil, fmt.Errorf("opening a fresh cache at %s: %w", dir, err)
		}
	}
	plans, err := kept.Open(dir, true)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("cache directory %s: %w", dir, err), db.Close())
	}
	c = &Cache{dir: dir, db: db, lock: lock, plans: plans, schema: schema, now: time.Now}
	if err := c.checkSchema(warn); err != nil {
		return nil, errors.Join(err, plans.Close(), db.Close())
	}
	return c, nil
}

// removeEmptyMemtables deletes zero-length memtable (.mem) files, which a
// crash during memtable creation leaves behind.
func removeEmptyMemtables(dir string) {
	entries, _ := os.ReadDir(dir) // a missing dir has nothing to clean
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".mem" {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Size() == 0 {
			_ = os.Remove(filepath.Join(dir, e.Name())) // Badger reports it if it is still there
		}
	}
}

// options are sized for a cache of small values: the defaults reserve
// hundreds of MiB. Blocks are not compressed: the values are small JSON,
// and a daemon that has just started reads a whole directory's entries,
// which would otherwise be decompressed block by block.
func options(dir string) badger.Options {
	return badger.DefaultOptions(dir).
		WithLogger(nil).
		WithMemTableSize(4 << 20).
		WithNumMemtables(2).
		WithBlockCacheSize(8 << 20).
		WithCompression(badgeroptions.None).
		WithIndexCacheSize(0).
		WithValueLogFileSize(32 << 20).
		WithValueThreshold(64 << 10).
		WithNumVersionsToKeep(1).
		WithSyncWrites(false)
}

// checkSchema drops every entry when the cache was written with another
// schema, then records ours.
func (c *Cache) checkSchema(warn func(string)) error {
	var have int
	err := c.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(kindSchema.key(""))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error {
			have, _ = strconv.Atoi(string(v))
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("reading the cache schema: %w", err)
	}
	if have == c.schema {
		return nil
	}
	if have != 0 {
		warn(fmt.Sprintf("cache %s was written with schema %d; this version uses %d, so its entries were dropped", c.dir, have, c.schema))
		if err := c.db.DropAll(); err != nil {
			return fmt.Errorf("dropping entries of schema %d: %w", have, err)
		}
	}
	return c.db.Update(func(txn *badger.Txn) error {
		return txn.Set(kindSchema.key(""), []byte(strconv.Itoa(c.schema)))
	})
}

// Dir is the cache directory.
func (c *Cache) Dir() string { return c.dir }

// Close flushes and closes the cache and releases its lock.
func (c *Cache) Close() error {
	var err error
	c.closeOnce.Do(func() {
		err = errors.Join(c.db.Close(), c.plans.Close(), c.lock.Unlock())
	})
	return err
}

var _ inspect.Cache = (*Cache)(nil)

// Lookup implements inspect.Cache.
func (c *Cache) Lookup(fp inspect.Fingerprint) (inspect.Outcome, bool) {
	pe, ok := c.memoPath(fp.Path)
	if !ok {
		if raw, pre := c.prefetchedPath(fp.Path); pre {
			ok = c.decode(kindPath.key(fp.Path), raw, &pe)
		} else {
			ok = c.get(kindPath.key(fp.Path), &pe)
		}
		if ok {
			c.remember(fp.Path, &pe, "", nil)
		}
	}
	if !ok || pe.Schema != c.schema || pe.Fingerprint.Path != fp.Path || !sameFiles(pe.Fingerprint, fp) {
		c.misses.Add(1)
		return inspect.Outcome{}, false
	}
	o, ok := c.content(pe.SHA256)
	if !ok {
		c.misses.Add(1)
		return inspect.Outcome{}, false
	}
	c.hits.Add(1)
	return o, true
}

// LookupContent implements inspect.Cache.
func (c *Cache) LookupContent(sha string) (inspect.Outcome, bool) {
	o, ok := c.content(sha)
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return o, ok
}

// content returns the outcome kept for a sha256, validating it, and marks
// it used (at most once an hour, to keep warm reads free of writes).
func (c *Cache) content(sha string) (inspect.Outcome, bool) {
	key := func() []byte { return kindContent.key(sha) }
	e, memoized := c.memoSHA(sha)
	if !memoized {
		raw, ok := c.prefetchedContent(sha)
		if !ok {
			raw, ok = c.raw(key())
		}
		if !ok {
			return inspect.Outcome{}, false
		}
		if e, ok = decodeEntry(raw, sha, c.schema); !ok {
			c.dropPrefetched("", sha, true)
			_ = c.db.Update(func(txn *badger.Txn) error { return txn.Delete(key()) })
			return inspect.Outcome{}, false
		}
	}
	if now := c.now(); now.Sub(e.Used) > time.Hour {
		e.Used = now
		if b, err := json.Marshal(e); err == nil {
			c.dropPrefetched("", sha, true)
			_ = c.db.Update(func(txn *badger.Txn) error { return txn.Set(key(), b) })
		}
		memoized = false
	}
	if !memoized {
		c.remember("", nil, sha, &e)
	}
	return e.Outcome, true
}

// unmarshal decodes a value this package wrote with encoding/json's
// Marshal. It reads with github.com/go-json-experiment/json, which gives
// the same values for what Marshal writes (FuzzCacheValuesReadAsEncodingJSONReadsThem)
// in about half the time: a fresh daemon's first plan of a directory
// decodes an entry for every archive in it. What Marshal never writes (a
// key twice, invalid UTF-8) it refuses, and the value is read as absent.
func unmarshal(raw []byte, v any) error { return jsonv2.Unmarshal(raw, v) }

// decodeEntry decodes the content entry kept for sha, and reports false
// for anything that is not what this version writes for it: another
// schema, another sha256, an outcome that breaks a rule.
func decodeEntry(raw []byte, sha string, schema int) (entry, bool) {
	var e entry
	if err := unmarshal(raw, &e); err != nil {
		return entry{}, false
	}
	if e.Schema != schema || e.Outcome.SHA256 != sha || !validOutcome(e.Outcome) {
		return entry{}, false
	}
	return e, true
}

// validOutcome rejects values that decoded but cannot be what we wrote:
// a candidate is held to the rules inspect held it to when it read the
// archive (a cache is no reason to trust a name).
func validOutcome(o inspect.Outcome) bool {
	if o.Source == "" || facts.Printable(o.Source) != o.Source {
		return false // an outcome answers reads by its source (inspect.Outcome.Answers)
	}
	switch o.Kind {
	case inspect.OutcomeOK:
		c := o.Candidate
		return c.SHA256 == o.SHA256 && facts.CheckPackageName(c.Name) == nil && facts.CheckArchitecture(c.Architecture) == nil &&
			facts.CheckFlavor(c.Flavor) == nil && facts.Printable(c.Version) == c.Version && facts.Printable(c.Description) == c.Description &&
			(c.Prerequisites == nil || c.Prerequisites.Validate() == nil) && (c.Contents == nil || c.Contents.Validate() == nil)
	case inspect.OutcomeInvalid:
		return o.Problem != ""
	case inspect.OutcomeIntegrity, inspect.OutcomeNotZarf:
		return o.Reason != ""
	}
	return false
}

// raw reads one value as stored.
func (c *Cache) raw(key []byte) ([]byte, bool) {
	var raw []byte
	err := c.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(key)
		if err != nil {
			return err
		}
		raw, err = it.ValueCopy(nil)
		return err
	})
	return raw, err == nil
}

// get reads and decodes one value; a value that does not decode is deleted
// and reported as absent.
func (c *Cache) get(key []byte, v any) bool {
	raw, ok := c.raw(key)
	if !ok {
		return false
	}
	return c.decode(key, raw, v)
}

// decode decodes the value raw of key; a value that does not decode is
// deleted and reported as absent.
func (c *Cache) decode(key, raw []byte, v any) bool {
	if err := unmarshal(raw, v); err != nil {
		_ = c.db.Update(func(txn *badger.Txn) error { return txn.Delete(key) })
		c.forgetMemo()
		return false
	}
	return true
}

func sameFiles(a, b inspect.Fingerprint) bool {
	if len(a.Files) != len(b.Files) {
		return false
	}
	for i := range a.Files {
		if a.Files[i] != b.Files[i] {
			return false
		}
	}
	return true
}

// HasSize implements inspect.Cache.
func (c *Cache) HasSize(size int64) bool {
	prefix := kindSize.key(fmt.Sprintf("%d/", size))
	found := false
	_ = c.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = prefix
		it := txn.NewIterator(opts)
		defer it.Close()
		it.Rewind()
		found = it.Valid()
		return nil
	})
	return found
}

// Store implements inspect.Cache: the content entry, the path index and
// the size index are written in one transaction, so a crash loses at most
// this entry. An outcome that answers only its own source (a failure) is
// not kept where one of another source that answers others is (the same
// digest read well elsewhere): that one stays, and the failing source is
// read again next time.
func (c *Cache) Store(fp inspect.Fingerprint, o inspect.Outcome) error {
	if len(o.SHA256) != 64 || !validOutcome(o) {
		return fmt.Errorf("refusing to cache an incomplete outcome for %s", fp.Path)
	}
	now := c.now()
	e := entry{Schema: c.schema, Outcome: o, Added: now, Used: now}
	var old entry
	if c.get(kindContent.key(o.SHA256), &old) && old.Schema == c.schema {
		if !o.Shared() && old.Outcome.Shared() && old.Outcome.Source != o.Source && validOutcome(old.Outcome) {
			return nil
		}
		e.Added = old.Added
	}
	eb, err := json.Marshal(e)
	if err != nil {
		return err
	}
	pb, err := json.Marshal(pathEntry{Schema: c.schema, Fingerprint: fp, SHA256: o.SHA256})
	if err != nil {
		return err
	}
	c.dropPrefetched(fp.Path, o.SHA256, true)
	err = c.db.Update(func(txn *badger.Txn) error {
		if err := txn.Set(kindContent.key(o.SHA256), eb); err != nil {
			return err
		}
		if err := txn.Set(kindPath.key(fp.Path), pb); err != nil {
			return err
		}
		return txn.Set(kindSize.key(fmt.Sprintf("%d/%s", fp.Size(), o.SHA256)), nil)
	})
	if err != nil {
		c.forgetMemo()
		return err
	}
	c.remember(fp.Path, &pathEntry{Schema: c.schema, Fingerprint: fp, SHA256: o.SHA256}, o.SHA256, &e)
	return nil
}

// Known reports whether the cache answers for an archive as it is now,
// without reading it (what a warm-up in check mode would skip): its path
// entry matches and the content entry it names answers that path.
func (c *Cache) Known(fp inspect.Fingerprint) bool {
	var pe pathEntry
	if !c.get(kindPath.key(fp.Path), &pe) || pe.Schema != c.schema || !sameFiles(pe.Fingerprint, fp) {
		return false
	}
	var e entry
	return c.get(kindContent.key(pe.SHA256), &e) && e.Outcome.Answers(fp.Path)
}

// Paths lists the indexed paths under dir (all when dir is "").
func (c *Cache) Paths(dir string) ([]string, error) {
	var out []string
	prefix := ""
	if dir != "" {
		prefix = strings.TrimSuffix(dir, "/") + "/"
	}
	err := c.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = kindPath.key(prefix)
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			p, _ := kindPath.restOf(it.Item().Key())
			if dir == "" || filepath.Dir(p) == filepath.Clean(dir) {
				out = append(out, p)
			}
		}
		return nil
	})
	return out, err
}

// Forget removes the path index entries of paths, and the content entries
// no remaining path refers to. It returns the paths removed.
func (c *Cache) Forget(paths []string) ([]string, error) {
	defer c.forgetMemo()
	var removed []string
	shas := map[string]bool{}
	for _, p := range paths {
		var pe pathEntry
		if !c.get(kindPath.key(p), &pe) {
			continue
		}
		shas[pe.SHA256] = true
		if err := c.db.Update(func(txn *badger.Txn) error { return txn.Delete(kindPath.key(p)) }); err != nil {
			return removed, err
		}
		removed = append(removed, p)
	}
	if len(shas) == 0 {
		return removed, nil
	}
	// Keep content still referenced by another path.
	all, err := c.Paths("")
	if err != nil {
		return removed, err
	}
	for _, p := range all {
		var pe pathEntry
		if c.get(kindPath.key(p), &pe) {
			delete(shas, pe.SHA256)
		}
	}
	return removed, c.dropContent(shas)
}

func (c *Cache) dropContent(shas map[string]bool) error {
	if len(shas) == 0 {
		return nil
	}
	return c.db.Update(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = kindSize.key("")
		it := txn.NewIterator(opts)
		var sizeKeys [][]byte
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().KeyCopy(nil)
			if i := bytes.LastIndexByte(k, '/'); i >= 0 && shas[string(k[i+1:])] {
				sizeKeys = append(sizeKeys, k)
			}
		}
		it.Close()
		for _, k := range sizeKeys {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		for sha := range shas {
			if err := txn.Delete(kindContent.key(sha)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Stats is what a cache holds and how it answered (declared in package
// document).
type Stats = document.CacheStats

// Stats counts entries and reports the on-disk size and this process's
// hits and misses.
func (c *Cache) Stats() (Stats, error) {
	s := Stats{Dir: c.dir, Schema: c.schema, Hits: c.hits.Load(), Misses: c.misses.Load()}
	err := c.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			switch {
			case kindOf(k) == kindContent:
				s.Entries++
			case kindOf(k) == kindPath:
				s.Paths++
			}
		}
		return nil
	})
	lsm, vlog := c.db.Size()
	s.Bytes = lsm + vlog
	return s, err
}

// GC drops content entries not used within maxAge (0: no age limit), then
// the least recently used until the kept entries' values fit in maxBytes
// (0: no size limit), with their path and size index entries, and reclaims
// value-log space. It returns how many entries it dropped.
func (c *Cache) GC(maxBytes int64, maxAge time.Duration) (int, error) {
	defer c.forgetMemo()
	type kept struct {
		sha  string
		used time.Time
		size int
	}
	var all []kept
	err := c.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = kindContent.key("")
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var e entry
			err := it.Item().Value(func(v []byte) error { return unmarshal(v, &e) })
			sha, _ := kindContent.restOf(it.Item().Key())
			if err != nil {
				e.Used = time.Time{} // undecodable: oldest, dropped first
			}
			all = append(all, kept{sha, e.Used, int(it.Item().ValueSize())})
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	drop := map[string]bool{}
	now := c.now()
	var total int64
	for _, k := range all {
		if maxAge > 0 && now.Sub(k.used) > maxAge {
			drop[k.sha] = true
		} else {
			total += int64(k.size)
		}
	}
	if maxBytes > 0 && total > maxBytes {
		byUse := slices.Clone(all)
		slices.SortStableFunc(byUse, func(a, b kept) int { return cmp.Or(a.used.Compare(b.used), cmp.Compare(a.sha, b.sha)) })
		for _, k := range byUse {
			if total <= maxBytes {
				break
			}
			if !drop[k.sha] {
				drop[k.sha] = true
				total -= int64(k.size)
			}
		}
	}
	if len(drop) == 0 {
		return 0, nil
	}
	paths, err := c.Paths("")
	if err != nil {
		return 0, err
	}
	var stale []string
	for _, p := range paths {
		var pe pathEntry
		if c.get(kindPath.key(p), &pe) && drop[pe.SHA256] {
			stale = append(stale, p)
		}
	}
	if err := c.db.Update(func(txn *badger.Txn) error {
		for _, p := range stale {
			if err := txn.Delete(kindPath.key(p)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return 0, err
	}
	if err := c.dropContent(drop); err != nil {
		return 0, err
	}
	for c.db.RunValueLogGC(0.5) == nil {
	}
	return len(drop), nil
}
