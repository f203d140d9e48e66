package caller

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// WritePage writes a page the daemon returned to path, on the caller's
// host, as WriteSaved writes a saved plan: whole or not at all, with
// mode perm, nothing with dryRun. It changes the file (and reports that
// it did) only when the page's content or the file's mode differs: a
// page that differs from the file only in the time it states
// (contract.SamePage) leaves the file as it is, with the time it was
// written at, so asking the same plan again is idempotent without
// SOURCE_DATE_EPOCH. The directory must exist.
func WritePage(path string, page []byte, perm fs.FileMode, dryRun bool) (changed bool, err error) {
	if len(page) == 0 {
		return false, errors.New("the daemon returned no page: is it of an older release?")
	}
	return writeFile(path, page, perm, dryRun, contract.SamePage)
}

// WriteSaved writes a file the caller keeps (a saved plan, a deploy
// report, an approval) to path, replacing it whole (a temporary file
// beside it, renamed over it) with mode perm (options.ParseFileMode:
// options.DefaultFileMode unless the caller asks for another), and only
// when its content or its mode differs: it reports whether it changed the
// file. With dryRun (Ansible's check mode) it writes nothing and reports
// whether it would.
func WriteSaved(path string, b []byte, perm fs.FileMode, dryRun bool) (changed bool, err error) {
	return writeFile(path, b, perm, dryRun, bytes.Equal)
}

// writeFile writes b to path with mode perm, replacing the file whole (a
// temporary file beside it, renamed over it), and only when its content
// (as same judges the old bytes and b) or its mode differs: it reports
// whether it changed the file. A file
// already there takes perm too, as Ansible's file modules apply mode: so
// a file an older release wrote readable by all is closed by its next
// write, and one whose content is the same but whose mode is not is
// rewritten with it. With dryRun it writes nothing and reports whether
// it would.
//
// The directory is opened by privdir.OpenOutput (a symlink on the way is
// followed only where no other user could have placed it) and the file is
// compared, created and renamed relative to its descriptor. The old file
// is read through an fstat-checked descriptor, at most len(b)+1 bytes: a
// symlink, FIFO or device at path is refused, not read or written through.
func writeFile(path string, b []byte, perm fs.FileMode, dryRun bool, same func(old, b []byte) bool) (changed bool, err error) {
	name := filepath.Base(path)
	if name == "." || name == ".." || name == "/" || strings.HasSuffix(path, "/") {
		return false, fmt.Errorf("writing %s: name a file, not a directory", path)
	}
	if perm&^fs.ModePerm != 0 {
		return false, fmt.Errorf("writing %s: mode %v is not a file's permission bits", path, perm)
	}
	dir, err := privdir.OpenOutput(filepath.Dir(path))
	if err != nil {
		return false, fmt.Errorf("writing %s: its directory: %w", path, err)
	}
	defer dir.Close()
	old, mode, exists, err := dir.ReadExistingMode(name, int64(len(b)))
	if errors.Is(err, fs.ErrPermission) {
		// A regular file this user may not read differs as far as it
		// can tell: it is replaced, as it always was.
		exists, err = false, nil
	}
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	if exists && mode == perm && same(old, b) {
		return false, nil
	}
	if dryRun {
		return true, nil
	}
	if err := dir.Replace(name, b, uint32(perm)); err != nil {
		return false, err
	}
	return true, nil
}
