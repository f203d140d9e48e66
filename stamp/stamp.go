// Package stamp hashes what a directory holds as stat sees it, reading no
// file: every entry's name and whether it is a directory, and every other
// entry's size, mtime, ctime, inode and device. It is the key under which
// a plan of an unchanged directory is remembered (package inspect's
// Stamp, package kept). It imports nothing of the planner, so the module
// binary computes the same stamp as the daemon.
package stamp

import (
	"encoding/binary"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/privdir"
)

// Listing is what one walk of a directory saw: its entries in name order
// and, for each entry that is not a directory, its stat (through links).
// A plan keyed by a listing's stamp can be read from the listing itself
// (package inspect: Options.Listing): the directory is walked once, and
// what the archive cache answers by the listing's stats is what the key
// names.
type Listing struct {
	// Abs is the directory, absolute.
	Abs string
	// Dev and Ino are the directory's own, as it was opened: a reader
	// that opens Abs again uses the listing only if it finds the same
	// directory there.
	Dev, Ino uint64
	entries  []os.DirEntry
	stats    []unix.Stat_t
	errs     []error
}

// List walks dir: one listing and one stat per entry that is not a
// directory, by a fixed set of workers (one syscall each).
func List(dir string) (*Listing, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	d, err := privdir.OpenDirectory(abs) // a FIFO here is refused, not waited on
	if err != nil {
		return nil, fmt.Errorf("listing the package directory: %w", err)
	}
	defer d.Close()
	var self unix.Stat_t
	if err := unix.Fstat(int(d.Fd()), &self); err != nil {
		return nil, fmt.Errorf("listing the package directory: %w", err)
	}
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("listing the package directory: %w", err)
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	l := &Listing{Abs: abs, Dev: uint64(self.Dev), Ino: self.Ino, entries: entries, stats: make([]unix.Stat_t, len(entries)), errs: make([]error, len(entries))}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(entries), 1)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(entries) {
					return
				}
				if !entries[i].IsDir() {
					if err := Fstatat(int(d.Fd()), entries[i].Name(), &l.stats[i]); err != nil {
						l.errs[i] = &fs.PathError{Op: "stat", Path: filepath.Join(abs, entries[i].Name()), Err: err}
					}
				}
			}
		})
	}
	wg.Wait()
	return l, nil
}

// Entries returns the listing's entries, in name order (a copy of the
// slice: the caller may sort or change it).
func (l *Listing) Entries() []os.DirEntry { return slices.Clone(l.entries) }

// Stat returns the stat the walk took of the entry name; ok is false for
// a name not listed, a directory, or an entry that could not be stat'ed.
func (l *Listing) Stat(name string) (st unix.Stat_t, ok bool) {
	i, found := slices.BinarySearchFunc(l.entries, name, func(e os.DirEntry, name string) int { return strings.Compare(e.Name(), name) })
	if !found || l.entries[i].IsDir() || l.errs[i] != nil {
		return unix.Stat_t{}, false
	}
	return l.stats[i], true
}

// Write writes to h what dir holds, as stat sees it (through links). The
// kernel sets a file's ctime on every write and no user can set it, so a
// file rewritten in place with its mtime put back still changes the
// stamp. count, when not nil, says which names to count; Write returns
// how many entries that are not directories it named.
func Write(dir string, h hash.Hash, count func(name string) bool) (counted int, err error) {
	l, err := List(dir)
	if err != nil {
		return 0, err
	}
	return l.Write(h, count)
}

// Write writes to h what the listing saw, as the package's Write does of
// a directory; an entry that could not be stat'ed is the error.
func (l *Listing) Write(h hash.Hash, count func(name string) bool) (counted int, err error) {
	field := func(s string) {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	field(l.Abs)
	var buf [5 * 8]byte
	for i, e := range l.entries {
		field(e.Name())
		if e.IsDir() {
			field("dir")
			continue
		}
		if l.errs[i] != nil {
			return 0, l.errs[i]
		}
		st := &l.stats[i]
		for i, v := range []uint64{uint64(st.Size), uint64(st.Mtim.Nano()), uint64(st.Ctim.Nano()), st.Ino, uint64(st.Dev)} {
			binary.LittleEndian.PutUint64(buf[8*i:], v)
		}
		h.Write(buf[:])
		if count != nil && count(e.Name()) {
			counted++
		}
	}
	return counted, nil
}

// Fstatat stats name relative to dirfd, following a link, as the stamp
// and the archive cache's fingerprints do; it retries on EINTR.
func Fstatat(dirfd int, name string, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(dirfd, name, st, 0)
		if err != unix.EINTR {
			return err
		}
	}
}
