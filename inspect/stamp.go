package inspect

import (
	"hash"

	"github.com/colonel-byte/zarf-planner/stamp"
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
	return stamp.Write(dir, h, IsCandidate)
}
