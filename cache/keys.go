package cache

import (
	"bytes"
	"strings"
)

// keyKind is one kind of key the cache writes to Badger: its prefix, what
// follows it, and why the value under such a key cannot answer another
// question than the one the key asks. Every key is built by a keyKind's
// key method, and keyKinds lists them all: a key of no kind in the table
// is a test failure (keys_test.go), so a new kind of entry is declared,
// and its rule said, before it is written.
type keyKind struct {
	prefix string
	// rest is what follows the prefix.
	rest string
	// value is what the key maps to.
	value string
	// why the value answers only the question its key asks.
	why string
}

// The kinds of key, one per kind of entry.
var (
	kindSchema = &keyKind{
		prefix: "meta/schema",
		rest:   "nothing",
		value:  "the schema number of every value",
		why:    "answers no read: a cache of another schema is emptied when opened",
	}
	kindContent = &keyKind{
		prefix: "sha/",
		rest:   "the sha256 of the bytes read: an archive's, or a registry package's manifest digest",
		value:  "the outcome of reading them, naming the source it was read from (an archive's path, or oci://HOST/REPOSITORY)",
		why: "a digest names every byte the outcome was made from (an archive's sha256 all of it; a manifest's every layer's digest, and each layer read was checked against it as it streamed); " +
			"a success or a zarf.yaml refused as invalid answers any source of the same kind, a failure only the source it names (inspect.Outcome.Answers); " +
			"a failure never replaces an outcome that answers others (Store), and a value whose outcome names another sha256 or no source is dropped",
	}
	kindPath = &keyKind{
		prefix: "path/",
		rest:   "an archive's absolute path (a registry package's reference pinned by digest)",
		value:  "the stat of its files (size, mtime, ctime, inode, device) and the sha256 they held",
		why:    "answers only a read of that path whose files stat the same, with the content entry of that sha256, which must still answer that path",
	}
	kindSize = &keyKind{
		prefix: "size/",
		rest:   "<bytes>/<sha256>",
		value:  "nothing",
		why:    "answers no read: it says only that hashing an archive of that size first may find its content entry",
	}
	kindListing = &keyKind{
		prefix: "listing/",
		rest:   "a registry source as given (oci://HOST/NAMESPACE, or a package's :TAG or @DIGEST)",
		value:  "the manifests the last listing of that source found, its host and notes, and when",
		why:    "read only by an offline read of that same source, which says the listing's time; each package's outcome is then looked up for the repository it was listed in",
	}
)

// keyKinds is every kind of key the cache writes.
var keyKinds = []*keyKind{kindSchema, kindContent, kindPath, kindSize, kindListing}

// key is the key of this kind for rest.
func (k *keyKind) key(rest string) []byte { return []byte(k.prefix + rest) }

// restOf is what follows this kind's prefix in key, and whether key is of
// this kind.
func (k *keyKind) restOf(key []byte) (string, bool) {
	if !bytes.HasPrefix(key, []byte(k.prefix)) {
		return "", false
	}
	return string(key[len(k.prefix):]), true
}

// kindOf is the kind of a key written to the cache (nil: none declared).
func kindOf(key []byte) *keyKind {
	for _, k := range keyKinds {
		if k == kindSchema && string(key) == k.prefix || k != kindSchema && strings.HasPrefix(string(key), k.prefix) {
			return k
		}
	}
	return nil
}
