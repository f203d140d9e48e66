package renderproc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Program is the memory the renderer's program is mapped at from its
// file, read-only (its code and read-only data): pages it holds as the
// page cache's, never changed, that count in its resident set once
// touched. Its package initialisation (Helm's and Kubernetes' libraries)
// touches about 20 MiB of them that a render mostly never touches again.
type Program struct {
	ranges [][2]uintptr
}

// ProgramPages finds the renderer's read-only mappings of its program
// in /proc/self/maps: a renderer calls it before Restrict, which lets it
// open no file. The program is a static binary: its file is the only
// one mapped.
func ProgramPages() (Program, error) {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return Program{}, fmt.Errorf("reading its memory map: %w", err)
	}
	var p Program
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// start-end perms offset dev inode path
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[4] == "0" || strings.HasPrefix(f[5], "[") || (f[1] != "r-xp" && f[1] != "r--p") {
			continue
		}
		start, end, ok := strings.Cut(f[0], "-")
		lo, err1 := strconv.ParseUint(start, 16, 64)
		hi, err2 := strconv.ParseUint(end, 16, 64)
		if !ok || err1 != nil || err2 != nil || hi <= lo {
			return Program{}, fmt.Errorf("reading its memory map: a line %q", sc.Text())
		}
		p.ranges = append(p.ranges, [2]uintptr{uintptr(lo), uintptr(hi)})
	}
	return p, sc.Err()
}

// Shed drops the program's pages from the process's resident set
// (MADV_DONTNEED): they stay in the page cache, and a page touched again
// is mapped again from it. Only read-only private mappings of the file
// are dropped, whose pages are the file's own: nothing is lost. Its
// filter allows madvise.
func (p Program) Shed() {
	for _, r := range p.ranges {
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, r[0], r[1]-r[0], unix.MADV_DONTNEED)
	}
}
