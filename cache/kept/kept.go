// Package kept keeps rendered plan documents as files in the archive
// cache directory (<cache dir>/plans), each under a key that names
// everything the document depends on, so that a question asked before
// about a directory unchanged since is answered without planning: by a
// daemon that has just started, or by the module without a daemon at all.
// It derives that key (PlanKey), which the daemon and the module both
// compute, and it never interprets a document. Whoever keeps a plan under
// a PlanKey first marks its question (QuestionKey: the key without the
// directory), so a lookup of a question never marked costs no walk of
// the directory.
//
// The files are trusted as the cache directory is: it and the plans
// directory must belong to this user and be closed to others (package
// privdir), and each file must be a regular file of this user that only
// this user can use. A file is written whole and renamed into place; one
// that does not match its checksum, is over the size bound or has expired
// is not answered from.
//
// It imports nothing of the planner, the cache's database or Kubernetes,
// so the module binary stays small.
package kept

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/stamp"
)

// EnvDir overrides the default cache directory.
const EnvDir = "ZARF_PLANNER_CACHE_DIR"

// DefaultCacheDir is $ZARF_PLANNER_CACHE_DIR, else <user cache
// dir>/zarf-planner/cache: the archive cache a request that names none
// uses, where the module and the daemon alike look for kept plans.
func DefaultCacheDir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return filepath.Abs(d)
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding a cache directory (set %s): %w", EnvDir, err)
	}
	return filepath.Join(c, "zarf-planner", "cache"), nil
}

// Key names a kept document: a sha256 of everything it depends on.
type Key [sha256.Size]byte

// String is the key in hex.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// Question is what a plan document depends on besides the directory's
// files: the build that renders it, the options the planner and the
// reader take, who asks, and the warnings the daemon adds.
type Question struct {
	// Build is the build of the binaries (buildinfo.ID): a document
	// is only answered by the build that rendered it.
	Build string
	// Path is the package directory, absolute.
	Path   string
	Plan   options.Plan
	Read   options.Read
	Caller options.Caller
	// Warnings are the daemon's own (such as a notice of opening the
	// cache), which the document carries.
	Warnings []string
	// Count, when set, says which of the directory's names are archive
	// candidates; PlanKey returns how many there are.
	Count func(name string) bool
	// Sums are the contents of the files whose content decides the plan
	// (filesum.Sums of options.Files and what the caller carried), one per
	// content option, given or not. PlanKey reads no file: the caller
	// read them (package carry), and keys on what it read. (A snapshot's
	// is among them, not given: it makes a plan cluster-aware, and those
	// are never kept.)
	Sums []filesum.Sum
	// Listing, when set, is the walk of Path to key on (stamp.List); else
	// PlanKey walks Path itself.
	Listing *stamp.Listing
}

// PlanKey keys a plan question by its options and its directory's stamp
// (package stamp: every name and every file's stat, the facts the
// archive cache's stat fast path trusts), reading no archive. The content
// of every file its options declare content (options.Files: the public
// key, the policy) is in it, not only their paths, so a file rewritten
// under the same name changes the key. An error means the
// question cannot be keyed this way (the directory or a named file
// cannot be read); the plan itself then reports why.
func PlanKey(q Question) (k Key, counted int, err error) {
	h := sha256.New()
	if err := question(h, "zarf-planner plan by stamp 4", q); err != nil {
		return Key{}, 0, err
	}
	if q.Listing == nil {
		counted, err = stamp.Write(q.Path, h, q.Count)
	} else {
		counted, err = q.Listing.Write(h, q.Count)
	}
	if err != nil {
		return Key{}, 0, err
	}
	h.Sum(k[:0])
	return k, counted, nil
}

// QuestionKey keys a question without its directory's stamp: what
// PlanKey keys before it walks the directory, and the directory's path.
// A plan kept under a PlanKey has its question marked first (Store.Mark),
// so a question never marked has no kept plan, whatever the directory
// holds, and looking for one need not walk the directory (Store.Asked).
func QuestionKey(q Question) (k Key, err error) {
	// The path as the stamp keys it (stamp.List): absolute and clean, so
	// /srv/pkgs/ and /srv//pkgs are one question, as they are one stamp.
	abs, err := filepath.Abs(q.Path)
	if err != nil {
		return Key{}, err
	}
	h := sha256.New()
	if err := question(h, "zarf-planner question 1", q); err != nil {
		return Key{}, err
	}
	Field(h, abs)
	h.Sum(k[:0])
	return k, nil
}

// question writes what PlanKey and QuestionKey key of q besides the
// directory, after tag.
func question(h hash.Hash, tag string, q Question) error {
	plan, err := json.Marshal(q.Plan)
	if err != nil {
		return err
	}
	read, err := json.Marshal(q.Read)
	if err != nil {
		return err
	}
	// This process's architecture: the daemon plans for its own when none
	// is given, and a cache directory may be shared by hosts of two.
	for _, s := range append([]string{tag, q.Build, runtime.GOARCH, string(plan), string(read), string(q.Caller),
		fmt.Sprintf("warnings %d", len(q.Warnings))}, q.Warnings...) {
		Field(h, s)
	}
	if len(q.Sums) == 0 {
		return errors.New("keying a plan: the sums of its content options are missing")
	}
	Sums(h, q.Sums)
	return nil
}

// Field writes s with its length first, so no two different sequences of
// fields write the same bytes.
func Field(h hash.Hash, s string) {
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
	h.Write([]byte(s))
}

// Sums writes the contents of a request's content options (package
// filesum), each option's name and sha256, so a key names what the files
// held.
func Sums(h hash.Hash, sums []filesum.Sum) {
	Field(h, fmt.Sprintf("contents %d", len(sums)))
	for _, s := range sums {
		Field(h, s.Name)
		Field(h, s.SHA256)
	}
}

// A kept file is a header line, then the document:
//
//	zarf-planner kept plan 1 <failed: 0|1> <crc32c of the document, hex> <length>\n
const magic = "zarf-planner kept plan 1"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is the line a kept file starts with, before doc itself: what
// Save writes, header then doc, without copying doc (up to MaxDoc) into
// one buffer first.
func header(doc []byte, failed bool) []byte {
	f := 0
	if failed {
		f = 1
	}
	return fmt.Appendf(nil, "%s %d %08x %d\n", magic, f, crc32.Checksum(doc, castagnoli), len(doc))
}

// decode reads a kept file; ok is false for anything but a whole, intact
// one.
func decode(b []byte) (doc []byte, failed, ok bool) {
	nl := strings.IndexByte(string(b[:min(len(b), 128)]), '\n')
	if nl < 0 {
		return nil, false, false
	}
	f := strings.Fields(string(b[:nl]))
	if len(f) != 7 || strings.Join(f[:4], " ") != magic || (f[4] != "0" && f[4] != "1") {
		return nil, false, false
	}
	sum, err := strconv.ParseUint(f[5], 16, 32)
	if err != nil {
		return nil, false, false
	}
	n, err := strconv.Atoi(f[6])
	doc = b[nl+1:]
	if err != nil || n != len(doc) || crc32.Checksum(doc, castagnoli) != uint32(sum) {
		return nil, false, false
	}
	return doc, f[4] == "1", true
}
