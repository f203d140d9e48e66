package cache

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/dgraph-io/badger/v4"
)

// A daemon that has just started knows nothing of a directory: the first
// scan would read every archive's two entries with a transaction each,
// 2,000 random reads for 1,000 archives. Instead the first lookup of a
// directory reads the whole directory's path index in one ordered pass
// and the content entries it names in key order, in one transaction, and
// keeps the raw values until each is decoded (then the decoded memo holds
// it). The values are what Badger holds: only this process writes the
// directory (the lock), and every write through this Cache drops the raw
// values of the keys it touches (remember) or all of them (forgetMemo).
// Lookups still compare the fingerprint with the files as they are now.

// prefetchLimit bounds the entries one directory's prefetch keeps.
const prefetchLimit = memoLimit / 2

// prefetch holds raw values read in bulk, per directory.
type prefetch struct {
	mu      sync.Mutex
	dirs    map[string]*sync.Once
	paths   map[string][]byte // absolute path → raw pathEntry
	content map[string][]byte // sha256 → raw entry
	// writes counts writes through this Cache: a directory read while
	// one happened is not kept (it may hold the value before the write).
	writes uint64
}

// loadDir reads the path index of dir, and the content entries it names,
// once per directory (until the memo is forgotten); concurrent callers
// wait for the one reading.
func (c *Cache) loadDir(dir string) {
	c.pre.mu.Lock()
	if c.pre.dirs == nil {
		c.pre.dirs, c.pre.paths, c.pre.content = map[string]*sync.Once{}, map[string][]byte{}, map[string][]byte{}
	}
	once, ok := c.pre.dirs[dir]
	if !ok {
		once = &sync.Once{}
		c.pre.dirs[dir] = once
	}
	writes := c.pre.writes
	c.pre.mu.Unlock()
	once.Do(func() {
		paths, content := c.readDir(dir)
		c.pre.mu.Lock()
		defer c.pre.mu.Unlock()
		if c.pre.dirs[dir] != once || c.pre.writes != writes {
			return // forgotten or written meanwhile: what was read may be stale
		}
		for k, v := range paths {
			c.pre.paths[k] = v
		}
		for k, v := range content {
			c.pre.content[k] = v
		}
	})
}

// readDir reads, in one transaction, the path entries directly inside dir
// and the content entries they name (in key order, so each block is read
// once).
func (c *Cache) readDir(dir string) (paths, content map[string][]byte) {
	paths, content = map[string][]byte{}, map[string][]byte{}
	_ = c.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = kindPath.key(strings.TrimSuffix(dir, "/") + "/")
		it := txn.NewIterator(opts)
		var shas []string
		for it.Rewind(); it.Valid() && len(paths) < prefetchLimit; it.Next() {
			p, _ := kindPath.restOf(it.Item().Key())
			if filepath.Dir(p) != dir {
				continue
			}
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				continue // read one by one later
			}
			paths[p] = v
			if sha, ok := shaOf(v); ok {
				shas = append(shas, sha)
			}
		}
		it.Close()
		slices.Sort(shas)
		for _, sha := range slices.Compact(shas) {
			item, err := txn.Get(kindContent.key(sha))
			if err != nil {
				continue
			}
			if v, err := item.ValueCopy(nil); err == nil {
				content[sha] = v
			}
		}
		return nil
	})
	return paths, content
}

// shaOf finds the sha256 a raw path entry names without decoding it all
// (the lookup decodes and checks it).
func shaOf(raw []byte) (string, bool) {
	const field = `"sha256":"`
	i := strings.LastIndex(string(raw), field)
	if i < 0 || len(raw) < i+len(field)+64 {
		return "", false
	}
	return string(raw[i+len(field) : i+len(field)+64]), true
}

// prefetchedPath returns the raw path entry of path, loading its
// directory first.
func (c *Cache) prefetchedPath(path string) ([]byte, bool) {
	c.loadDir(filepath.Dir(path))
	c.pre.mu.Lock()
	defer c.pre.mu.Unlock()
	v, ok := c.pre.paths[path]
	return v, ok
}

// prefetchedContent returns the raw content entry of sha if a directory's
// prefetch read it.
func (c *Cache) prefetchedContent(sha string) ([]byte, bool) {
	c.pre.mu.Lock()
	defer c.pre.mu.Unlock()
	v, ok := c.pre.content[sha]
	return v, ok
}

// dropPrefetched drops the raw values of a path and a content entry
// ("" for none), which are now decoded, or (wrote) rewritten.
func (c *Cache) dropPrefetched(path, sha string, wrote bool) {
	c.pre.mu.Lock()
	defer c.pre.mu.Unlock()
	delete(c.pre.paths, path)
	delete(c.pre.content, sha)
	if wrote {
		c.pre.writes++
	}
}

// forgetPrefetched drops every raw value and every directory's load.
func (c *Cache) forgetPrefetched() {
	c.pre.mu.Lock()
	defer c.pre.mu.Unlock()
	c.pre.dirs, c.pre.paths, c.pre.content = nil, nil, nil
	c.pre.writes++
}
