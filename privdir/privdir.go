// Package privdir opens directories that no other user can change, and
// works inside them through their descriptor without following symlinks.
// The daemon's state directory and the cache directory are opened with
// it: whoever can change what is in them decides which socket a caller
// talks to, which file root appends to, or which plan a cache answers.
//
// A path is trusted when every directory from / down to it is owned by
// root or by this user and is not writable by group or others. A
// world-writable directory with the sticky bit (/tmp) is allowed on the
// way when the entry below it is owned by root or by this user, since the
// sticky bit keeps others from renaming or removing that entry. A symlink
// on the way is followed once, after the directory holding it passed
// these checks, and its target is checked the same way.
//
// It knows nothing of the daemon or the cache: it opens and checks.
package privdir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxHops bounds the symlinks followed while opening one path.
const maxHops = 40

// ErrUntrusted is matched (errors.Is) by every refusal of a path that
// another user could change, or of an entry that is not what it must be
// (a symlink, another user's file, a file others can use).
var ErrUntrusted = errors.New("untrusted path")

type untrustedError struct{ msg string }

func (e *untrustedError) Error() string        { return e.msg }
func (e *untrustedError) Is(target error) bool { return target == ErrUntrusted }

func untrusted(format string, a ...any) error {
	return &untrustedError{msg: fmt.Sprintf(format, a...)}
}

// Dir is an open directory whose path, owner and mode were checked.
// Every operation on it is relative to its descriptor and never follows a
// symlink in the name it is given.
type Dir struct {
	path string // the resolved path, for messages
	f    *os.File
}

// Path is the directory's resolved path (without symlinks).
func (d *Dir) Path() string { return d.path }

// Fd is the directory's descriptor.
func (d *Dir) Fd() int { return int(d.f.Fd()) }

// Close closes the directory's descriptor.
func (d *Dir) Close() error { return d.f.Close() }

// ProcPath is a path that reaches name through this directory's
// descriptor (/proc/self/fd/N/name), for the calls that take only a path
// (bind and connect of a unix socket). It is valid while d is open.
func (d *Dir) ProcPath(name string) string {
	return "/proc/self/fd/" + strconv.Itoa(d.Fd()) + "/" + name
}

// Open opens the directory at path, creating it and its missing parents
// (0700) when create is set, and checks that it can be trusted (see the
// package doc) and that it belongs to this user and is not writable by
// group or others.
func Open(path string, create bool) (*Dir, error) {
	return open(path, create, true)
}

// OpenTrusted opens the directory at path and checks that it can be
// trusted; it may belong to root (as the directory holding a cache
// directory may).
func OpenTrusted(path string) (*Dir, error) {
	return open(path, false, false)
}

func open(path string, create, mine bool) (*Dir, error) {
	if !filepath.IsAbs(path) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		path = abs
	}
	d, err := walk(filepath.Clean(path), create)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(d.Fd(), &st); err != nil {
		d.Close()
		return nil, fmt.Errorf("checking %s: %w", d.path, err)
	}
	if mine {
		err = owned(d.path, &st, 0o022)
	} else {
		err = trusted(d.path, &st)
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// walk opens path from / one component at a time with O_NOFOLLOW,
// checking each directory before it looks inside, and following a
// symlink by starting over with its target.
func walk(path string, create bool) (*Dir, error) {
	for hops := 0; ; hops++ {
		if hops > maxHops {
			return nil, untrusted("opening %s: too many symlinks", path)
		}
		d, next, err := walkOnce(path, create)
		if err != nil || next == "" {
			return d, err
		}
		path = next
	}
}

// walkOnce walks path; when it meets a symlink it returns the path to
// walk instead.
func walkOnce(path string, create bool) (*Dir, string, error) {
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", fmt.Errorf("opening /: %w", err)
	}
	cur := "/"
	closeFd := func() { unix.Close(fd) }
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i, name := range parts {
		if name == "" {
			continue
		}
		var dst unix.Stat_t
		if err := unix.Fstat(fd, &dst); err != nil {
			closeFd()
			return nil, "", fmt.Errorf("checking %s: %w", cur, err)
		}
		if err := trusted(cur, &dst); err != nil {
			closeFd()
			return nil, "", err
		}
		next := filepath.Join(cur, name)
		var st unix.Stat_t
		err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.ENOENT) && create {
			if err := unix.Mkdirat(fd, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
				closeFd()
				return nil, "", fmt.Errorf("creating %s: %w", next, err)
			}
			err = unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		}
		if err != nil {
			closeFd()
			return nil, "", &fs.PathError{Op: "open", Path: next, Err: err}
		}
		if sticky(&dst) && !byUs(&st) {
			closeFd()
			return nil, "", untrusted("%s belongs to uid %d, and %s above it is writable by others (only its sticky bit protects it): anyone could have placed it there; use a path that only you or root control", next, st.Uid, cur)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			target, err := readlinkat(fd, name)
			closeFd()
			if err != nil {
				return nil, "", fmt.Errorf("reading the symlink %s: %w", next, err)
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(cur, target)
			}
			return nil, filepath.Clean(filepath.Join(append([]string{target}, parts[i+1:]...)...)), nil
		}
		nfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		closeFd()
		if err != nil {
			return nil, "", &fs.PathError{Op: "open", Path: next, Err: err}
		}
		fd, cur = nfd, next
	}
	return &Dir{path: cur, f: os.NewFile(uintptr(fd), cur)}, "", nil
}

func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// byUs reports whether st belongs to this user or to root.
func byUs(st *unix.Stat_t) bool {
	return st.Uid == 0 || int(st.Uid) == os.Geteuid()
}

// sticky reports whether a directory is writable by group or others and
// protected only by its sticky bit.
func sticky(st *unix.Stat_t) bool {
	return st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX != 0
}

// trusted checks a directory on the way: owned by root or this user, and
// not writable by group or others unless sticky.
func trusted(path string, st *unix.Stat_t) error {
	if !byUs(st) {
		return untrusted("%s belongs to uid %d, who could replace what is below it; use a path that only you (uid %d) or root control", path, st.Uid, os.Geteuid())
	}
	if st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0 {
		return untrusted("%s is writable by group or others (mode %v), who could replace what is below it; run chmod go-w on it or use another path", path, fs.FileMode(st.Mode&0o777))
	}
	return nil
}

// owned checks that st belongs to this user and has none of the
// permission bits in forbidden.
func owned(path string, st *unix.Stat_t, forbidden uint32) error {
	if int(st.Uid) != os.Geteuid() {
		return untrusted("%s belongs to uid %d, not to this user (uid %d)", path, st.Uid, os.Geteuid())
	}
	if st.Mode&forbidden != 0 {
		what := "readable or writable by group or others"
		if forbidden == 0o022 {
			what = "writable by group or others"
		}
		return untrusted("%s is %s (mode %v); run chmod %s on it", path, what, fs.FileMode(st.Mode&0o777), chmodFor(forbidden))
	}
	return nil
}

func chmodFor(forbidden uint32) string {
	if forbidden == 0o022 {
		return "go-w"
	}
	return "go-rwx"
}

// Sub opens the subdirectory name of d (creating it 0700 when create is
// set) and checks that it is a directory of this user that only this user
// can use.
func (d *Dir) Sub(name string, create bool) (*Dir, error) {
	p := filepath.Join(d.path, name)
	if create {
		if err := unix.Mkdirat(d.Fd(), name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("creating %s: %w", p, err)
		}
	}
	fd, err := unix.Openat(d.Fd(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, notSafe(p, "a directory", err)
	}
	f := os.NewFile(uintptr(fd), p)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("checking %s: %w", p, err)
	}
	if err := owned(p, &st, 0o077); err != nil {
		f.Close()
		return nil, err
	}
	return &Dir{path: p, f: f}, nil
}

// notSafe explains an open refused by O_NOFOLLOW or O_DIRECTORY.
func notSafe(path, want string, err error) error {
	if errors.Is(err, unix.ELOOP) {
		return untrusted("%s is a symlink, not %s; remove it (nothing here is reached through a symlink)", path, want)
	}
	if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ENXIO) {
		// ENXIO: a FIFO without a reader, or a device, opened for writing.
		return untrusted("%s is not %s; remove it", path, want)
	}
	return &fs.PathError{Op: "open", Path: path, Err: err}
}

// OpenFile opens the regular file name of d with flag (O_NOFOLLOW and
// O_CLOEXEC are added; perm applies when O_CREAT creates it) and checks
// that it belongs to this user and that only this user can use it.
func (d *Dir) OpenFile(name string, flag int, perm uint32) (*os.File, error) {
	p := filepath.Join(d.path, name)
	// O_NONBLOCK keeps a FIFO planted here from blocking the open; it is
	// cleared once the file is known to be a regular file.
	fd, err := unix.Openat(d.Fd(), name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, perm)
	if err != nil {
		return nil, notSafe(p, "a regular file", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("checking %s: %w", p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, untrusted("%s is not a regular file; remove it", p)
	}
	if err := owned(p, &st, 0o077); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, flag&unix.O_APPEND); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("opening %s: %w", p, err)
	}
	return os.NewFile(uintptr(fd), p), nil
}

// ReadFile reads the regular file name of d (checked as OpenFile does).
func (d *Dir) ReadFile(name string) ([]byte, error) {
	f, err := d.OpenFile(name, unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// WriteFile replaces the file name of d atomically with data, its parts
// one after another (mode 0600): it writes tmp, then renames it over name.
func (d *Dir) WriteFile(name, tmp string, data ...[]byte) (err error) {
	if err := d.Remove(tmp); err != nil {
		return err
	}
	f, err := d.OpenFile(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, d.Remove(tmp))
		}
	}()
	for _, part := range data {
		if _, err := f.Write(part); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %w", f.Name(), err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(d.path, tmp), err)
	}
	return d.Rename(tmp, name)
}

// Rename renames from to to inside d.
func (d *Dir) Rename(from, to string) error {
	if err := unix.Renameat(d.Fd(), from, d.Fd(), to); err != nil {
		return fmt.Errorf("renaming %s to %s: %w", filepath.Join(d.path, from), to, err)
	}
	return nil
}

// Remove removes the file (not a directory) name of d; a missing file is
// not an error.
func (d *Dir) Remove(name string) error {
	if err := unix.Unlinkat(d.Fd(), name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("removing %s: %w", filepath.Join(d.path, name), err)
	}
	return nil
}

// Lstat describes the entry name of d without following it.
func (d *Dir) Lstat(name string) (*unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.Fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: filepath.Join(d.path, name), Err: err}
	}
	return &st, nil
}

// CheckSocket checks that the entry name of d is a unix socket of this
// user that only this user can use.
func (d *Dir) CheckSocket(name string) error {
	st, err := d.Lstat(name)
	if err != nil {
		return err
	}
	p := filepath.Join(d.path, name)
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return untrusted("%s is not a unix socket; remove it", p)
	}
	return owned(p, st, 0o077)
}

// Names lists the entries of d.
func (d *Dir) Names() ([]string, error) {
	fd, err := unix.Openat(d.Fd(), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", d.path, err)
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", d.path, err)
	}
	return names, nil
}

// Executable resolves path (following symlinks the way Open does) and
// checks that the program there can be trusted: every directory on the
// way can be trusted, and the file is a regular, executable file owned by
// root or by this user and not writable by group or others. It returns
// the resolved path.
func Executable(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for hops := 0; hops <= maxHops; hops++ {
		dir, err := OpenTrusted(filepath.Dir(abs))
		if err != nil {
			return "", err
		}
		name := filepath.Base(abs)
		st, err := dir.Lstat(name)
		if err != nil {
			dir.Close()
			return "", err
		}
		full := filepath.Join(dir.Path(), name)
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			var dst unix.Stat_t
			if err := unix.Fstat(dir.Fd(), &dst); err != nil {
				dir.Close()
				return "", err
			}
			if sticky(&dst) && !byUs(st) {
				dir.Close()
				return "", untrusted("%s belongs to uid %d in a directory others can write; use a program only you or root control", full, st.Uid)
			}
			target, err := readlinkat(dir.Fd(), name)
			dir.Close()
			if err != nil {
				return "", fmt.Errorf("reading the symlink %s: %w", full, err)
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(full), target)
			}
			abs = filepath.Clean(target)
			continue
		}
		dir.Close()
		switch {
		case st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o111 == 0:
			return "", untrusted("%s is not an executable file (mode %v)", full, fs.FileMode(st.Mode&0o777))
		case !byUs(st):
			return "", untrusted("%s belongs to uid %d, who could replace what it runs; use a program owned by you (uid %d) or root", full, st.Uid, os.Geteuid())
		case st.Mode&0o022 != 0:
			return "", untrusted("%s is writable by group or others (mode %v), who could replace what it runs; run chmod go-w on it", full, fs.FileMode(st.Mode&0o777))
		}
		return full, nil
	}
	return "", untrusted("resolving %s: too many symlinks", path)
}

// CloseOnExec marks every descriptor above stderr close-on-exec: one a
// caller left open without the flag (Ansible's, a shell's) then reaches
// no program this process starts (the daemon, a chart renderer). Go opens
// its own descriptors close-on-exec, and the descriptors a program is
// handed on purpose (exec.Cmd.ExtraFiles) are duplicated without the
// flag as it starts, so nothing that is meant to pass is stopped.
func CloseOnExec() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil || !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) {
		return err
	}
	// Kernels before 5.11: one descriptor at a time.
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return err
		}
	}
	return nil
}
