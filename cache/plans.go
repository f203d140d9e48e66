package cache

import (
	"cmp"
	"encoding/hex"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Rendered plan documents, kept so that a daemon that has just started
// (the last one idled out) answers a question it was asked before without
// planning again. The cache stores them as given, under a key its caller
// derives from everything the document depends on (package server's plan
// memo key, which names this build too); it never interprets them.
const (
	prefixPlan = "plan/" // plan/<hex key> → failed byte + document
	// MaxPlans is how many documents are kept; storing one more drops
	// the one stored longest ago.
	MaxPlans = 16
	// planTTL is how long a document is kept. Badger orders them by
	// expiry, which is the order they were stored in.
	planTTL = 30 * 24 * time.Hour
)

// Plan returns the document stored under key, and whether it is a
// failure.
func (c *Cache) Plan(key []byte) (doc []byte, failed, ok bool) {
	raw, found := c.raw(planKey(key))
	if !found || len(raw) < 1 || raw[0] > 1 {
		return nil, false, false
	}
	return raw[1:], raw[0] == 1, true
}

// StorePlan stores a document under key, dropping the oldest beyond
// MaxPlans.
func (c *Cache) StorePlan(key, doc []byte, failed bool) error {
	v := make([]byte, 1+len(doc))
	if failed {
		v[0] = 1
	}
	copy(v[1:], doc)
	return c.db.Update(func(txn *badger.Txn) error {
		type stored struct {
			key     []byte
			expires uint64
		}
		var all []stored
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = []byte(prefixPlan)
		it := txn.NewIterator(opts)
		for it.Rewind(); it.Valid(); it.Next() {
			all = append(all, stored{it.Item().KeyCopy(nil), it.Item().ExpiresAt()})
		}
		it.Close()
		slices.SortFunc(all, func(a, b stored) int { return cmp.Compare(a.expires, b.expires) })
		for len(all) >= MaxPlans {
			if err := txn.Delete(all[0].key); err != nil {
				return err
			}
			all = all[1:]
		}
		return txn.SetEntry(badger.NewEntry(planKey(key), v).WithTTL(planTTL))
	})
}

// DropPlans removes every stored document.
func (c *Cache) DropPlans() error {
	return c.db.DropPrefix([]byte(prefixPlan))
}

func planKey(key []byte) []byte {
	return append([]byte(prefixPlan), hex.EncodeToString(key)...)
}
