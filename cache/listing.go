package cache

import (
	"encoding/json"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/colonel-byte/zarf-planner/inspect"
)

// Listings (kindListing) are not content entries: GC leaves them, and a
// listing whose packages were collected fails an offline read naming the
// package.

// StoreListing implements inspect.ListingCache: the listing replaces the
// source's last one, recorded now.
func (c *Cache) StoreListing(source string, l inspect.Listing) error {
	l.Recorded = c.now().UTC()
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return c.db.Update(func(txn *badger.Txn) error { return txn.Set(kindListing.key(source), b) })
}

// Listing implements inspect.ListingCache.
func (c *Cache) Listing(source string) (inspect.Listing, bool) {
	var l inspect.Listing
	return l, c.get(kindListing.key(source), &l)
}

// ForgetListings drops the listings of the sources at or under source
// (a namespace's, and those of its repositories' tags and digests). It
// returns how many it dropped.
func (c *Cache) ForgetListings(source string) (int, error) {
	base := strings.TrimRight(source, "/")
	var keys [][]byte
	err := c.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = kindListing.key(base)
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			source, _ := kindListing.restOf(it.Item().Key())
			rest := strings.TrimPrefix(source, base)
			if rest == "" || strings.ContainsAny(rest[:1], "/:@") {
				keys = append(keys, it.Item().KeyCopy(nil))
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(keys), c.db.Update(func(txn *badger.Txn) error {
		for _, k := range keys {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}
