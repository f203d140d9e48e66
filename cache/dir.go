package cache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/cache/kept"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// claimed is a cache directory checked, resolved and locked by this
// process.
type claimed struct {
	dir     string       // the resolved path
	parent  *privdir.Dir // the directory holding it and its lock file
	lock    *privdir.Lock
	existed bool
}

// claim checks the cache directory the way the daemon's state directory
// is checked (privdir: every directory above it only root or this user
// can change; it is this user's and not writable by group or others),
// creating it and its parents (0700) when missing. A cache answers plans
// by stat alone, so whoever could replace its files could forge plans.
// A symlink is resolved before the lock is taken, so two names of one
// directory share one lock. The lock file (<dir>.lock) records this pid,
// so a second opener says who holds it.
func claim(path string) (c *claimed, err error) {
	_, statErr := os.Stat(path)
	d, err := privdir.Open(path, true)
	if err != nil {
		if errors.Is(err, privdir.ErrUntrusted) {
			return nil, fmt.Errorf("cache directory %s cannot be trusted: %w; choose another cache_dir (--cache-dir, %s)", path, err, EnvDir)
		}
		return nil, fmt.Errorf("opening cache directory %s: %w", path, err)
	}
	dir := d.Path()
	if err := d.Close(); err != nil {
		return nil, err
	}
	parent, err := privdir.OpenTrusted(filepath.Dir(dir))
	if err != nil {
		return nil, fmt.Errorf("cache directory %s cannot be trusted: %w; choose another cache_dir (--cache-dir, %s)", path, err, EnvDir)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, parent.Close())
		}
	}()
	name := filepath.Base(dir) + ".lock"
	lock, ok, err := parent.TryLock(name)
	if err != nil {
		return nil, fmt.Errorf("locking cache %s: %w", dir, err)
	}
	if !ok {
		holder := "another process"
		if pid := parent.Holder(name); pid > 0 {
			holder = fmt.Sprintf("pid %d", pid)
		}
		return nil, fmt.Errorf("%w: %s is open in another process (%s: a zarf-planner daemon or CLI, see %s); use that daemon, stop it with `zarf-planner daemon stop`, or choose another cache_dir", ErrInUse, dir, holder, filepath.Join(parent.Path(), name))
	}
	if err := lock.Record(os.Getpid()); err != nil {
		return nil, errors.Join(err, lock.Unlock())
	}
	return &claimed{dir: dir, parent: parent, lock: lock, existed: statErr == nil}, nil
}

// Resolve is the path a cache directory is opened under: path checked as
// claim checks it (every directory on the way, and every symlink on the
// way only after the directory holding it passed), created when missing,
// and resolved by that walk. No symlink is followed before it is checked,
// so another user's link in /tmp leads nowhere.
func Resolve(path string) (string, error) {
	d, err := privdir.Open(path, true)
	if err != nil {
		if errors.Is(err, privdir.ErrUntrusted) {
			return "", fmt.Errorf("cache directory %s cannot be trusted: %w; choose another cache_dir (--cache-dir, %s)", path, err, EnvDir)
		}
		return "", fmt.Errorf("opening cache directory %s: %w", path, err)
	}
	return d.Path(), d.Close()
}

// setAside moves the cache directory to <dir>.corrupt-<stamp>, next to
// it, and returns where.
func (c *claimed) setAside(stamp string) (string, error) {
	aside := filepath.Base(c.dir) + ".corrupt-" + stamp
	if err := c.parent.Rename(filepath.Base(c.dir), aside); err != nil {
		return "", err
	}
	return filepath.Join(c.parent.Path(), aside), nil
}

// notOfACache names the first entry of dir that a cache directory never
// holds (Badger's files and the kept plans are all it holds), or "" when
// there is none. A directory that holds anything else is no cache that
// went corrupt, and is never moved aside: it may be anything the
// operator pointed cache_dir at by mistake.
func notOfACache(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "entries it cannot list (" + err.Error() + ")"
	}
	for _, e := range entries {
		name := e.Name()
		switch ext := filepath.Ext(name); {
		case e.IsDir() && name == kept.Subdir:
		case e.Type().IsRegular() && (name == "MANIFEST" || name == "KEYREGISTRY" || name == "DISCARD" || ext == ".sst" || ext == ".vlog" || ext == ".mem"):
		default:
			return strconv.Quote(filepath.Join(dir, name))
		}
	}
	return ""
}

// notCorruption are the system's errors that say something about the
// machine (rights, another process, space, limits), not about what is in
// the directory. Badger keeps the cause of some of its errors only as
// text, so Open also looks for itself (unusable).
var notCorruption = []syscall.Errno{
	syscall.EACCES, syscall.EPERM, syscall.EAGAIN, syscall.EBUSY, syscall.ENOSPC, syscall.EDQUOT,
	syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.EROFS, syscall.EIO, syscall.EINTR,
}

// minFree is the free space under which a failed open is blamed on a
// full filesystem (Badger creates two 4 MiB memtables and a value log).
const minFree = 64 << 20

// unusable says why Badger could not open dir when the reason is the
// machine's, not the directory's content: a system error it passed on,
// an entry this user cannot read and write, or a full filesystem. It
// returns "" when none holds: then the content is corrupt.
func unusable(dir string, err error) string {
	for _, e := range notCorruption {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	if unix.Access(dir, unix.R_OK|unix.W_OK|unix.X_OK) != nil {
		return fmt.Sprintf("this user cannot read and write %s", dir)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if p := filepath.Join(dir, e.Name()); unix.Access(p, unix.R_OK|unix.W_OK) != nil {
			return fmt.Sprintf("this user cannot read and write %s", p)
		}
	}
	var fs unix.Statfs_t
	if unix.Statfs(dir, &fs) == nil && fs.Bavail*uint64(fs.Bsize) < minFree {
		return fmt.Sprintf("the filesystem holding %s is full", dir)
	}
	return ""
}

// badgerHolder reports whether a process that is not zarf-planner has
// Badger open on dir: Badger locks the directory itself.
func badgerHolder(dir string) bool {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return errors.Is(err, unix.EWOULDBLOCK)
	}
	_ = unix.Flock(fd, unix.LOCK_UN)
	return false
}

// inUseByBadger is the error of a directory another program holds open.
func inUseByBadger(dir string) error {
	return fmt.Errorf("%w: %s is open in a process that is not zarf-planner (it holds Badger's own lock on the directory); it was left as it is", ErrInUse, dir)
}
