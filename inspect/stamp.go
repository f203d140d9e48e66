package inspect

import (
	"encoding/binary"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Stamp writes to h what dir holds as stat sees it, reading no file:
// every entry's name and whether it is a directory, and every other
// entry's FileStat (through links, as a Fingerprint records it). It
// returns how many archive candidates dir holds.
//
// Two equal stamps mean ReadDir with a cache would answer every archive
// by its stat alone, from the outcome recorded when it was read (the
// cache's fast path): the same names, and every file with the same size,
// mtime, ctime, inode and device, so none was written since (the kernel
// sets the ctime on every write). A caller may reuse what it derived from
// a ReadDir whose outcomes all followed from the archives' bytes (no
// unreadable archive, no limit met) while the stamp stays the same.
func Stamp(dir string, h hash.Hash) (candidates int, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return 0, err
	}
	d, err := os.Open(abs)
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
	stats := make([]FileStat, len(entries))
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
					stats[i], errs[i] = statFile(d, filepath.Join(abs, entries[i].Name()))
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
		st := stats[i]
		for i, v := range []uint64{uint64(st.Size), uint64(st.ModTime), uint64(st.ChangeTime), st.Inode, st.Device} {
			binary.LittleEndian.PutUint64(buf[8*i:], v)
		}
		h.Write(buf[:])
		if IsCandidate(e.Name()) {
			candidates++
		}
	}
	return candidates, nil
}
