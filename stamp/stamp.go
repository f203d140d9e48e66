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

// Write writes to h what dir holds, as stat sees it (through links). The
// kernel sets a file's ctime on every write and no user can set it, so a
// file rewritten in place with its mtime put back still changes the
// stamp. count, when not nil, says which names to count; Write returns
// how many entries that are not directories it named.
func Write(dir string, h hash.Hash, count func(name string) bool) (counted int, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return 0, err
	}
	d, err := privdir.OpenDirectory(abs) // a FIFO here is refused, not waited on
	if err != nil {
		return 0, fmt.Errorf("listing the package directory: %w", err)
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return 0, fmt.Errorf("listing the package directory: %w", err)
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	field := func(s string) {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	field(abs)
	// The stats, by a fixed set of workers as ReadDir's (one syscall
	// each), then hashed in name order.
	stats := make([]unix.Stat_t, len(entries))
	errs := make([]error, len(entries))
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
					if err := Fstatat(int(d.Fd()), entries[i].Name(), &stats[i]); err != nil {
						errs[i] = &fs.PathError{Op: "stat", Path: filepath.Join(abs, entries[i].Name()), Err: err}
					}
				}
			}
		})
	}
	wg.Wait()
	var buf [5 * 8]byte
	for i, e := range entries {
		field(e.Name())
		if e.IsDir() {
			field("dir")
			continue
		}
		if errs[i] != nil {
			return 0, errs[i]
		}
		st := &stats[i]
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
