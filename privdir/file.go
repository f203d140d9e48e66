package privdir

import (
	"crypto/rand"
	"encoding/hex"
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

// ErrNotRegular is matched (errors.Is) by every refusal of a file that is
// not a regular file: a FIFO, a device, a socket or a directory where a
// file is read or replaced, or a symlink where none is followed.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is matched (errors.Is) by the refusal of a file over the
// size its reader allows.
var ErrTooLarge = errors.New("file too large")

type fileError struct {
	msg string
	is  error
}

func (e *fileError) Error() string        { return e.msg }
func (e *fileError) Is(target error) bool { return target == e.is }

func notRegular(format string, a ...any) error {
	return &fileError{msg: fmt.Sprintf(format, a...), is: ErrNotRegular}
}

// typeName names the type of file st describes, for messages.
func typeName(st *unix.Stat_t) string {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a FIFO (named pipe)"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFSOCK:
		return "a unix socket"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFLNK:
		return "a symlink"
	case unix.S_IFREG:
		return "a regular file"
	}
	return "not a regular file"
}

// OpenRegular opens the file at path for reading, the one way every file
// a request names is opened: open(2) with O_PATH and O_CLOEXEC (and
// O_NOFOLLOW unless follow is set), which neither blocks on a FIFO nor
// opens a device; then fstat(2) on that descriptor, so what is checked is
// what is read: anything but a regular file is refused (ErrNotRegular)
// before it is opened for reading. The regular file is then opened for
// reading through the checked descriptor (O_NONBLOCK|O_CLOEXEC|O_NOCTTY;
// O_NONBLOCK is cleared after), see openRegularAt.
//
// follow says whether a symlink at path itself is followed. An operator's
// own option (policy, public_key, plan_file, snapshot) may well name a
// symlink in their home, so those follow it: the descriptor, not the
// name, is checked and read, so a link swapped after the open changes
// nothing.
func OpenRegular(path string, follow bool) (*os.File, error) {
	return openRegularAt(unix.AT_FDCWD, path, path, follow, inputHint)
}

// inputHint ends the refusal of an input that is not a regular file.
const inputHint = "give a regular file (reading this one could block forever or never end)"

// outputHint ends the refusal of an output's old file that is not a
// regular file.
const outputHint = "remove it or write elsewhere (outputs are replaced whole, never written through a link or into a special file)"

// OpenRegular opens the regular file name of d for reading as the
// package-level OpenRegular does, relative to d's descriptor.
func (d *Dir) OpenRegular(name string, follow bool) (*os.File, error) {
	return openRegularAt(d.Fd(), name, filepath.Join(d.path, name), follow, inputHint)
}

// OpenRegularIn opens the file name directly inside the open directory
// dir for reading as OpenRegular does, relative to dir's descriptor: the
// file is the one in the directory that was opened (and listed), whatever
// has become of the directory's path since.
func OpenRegularIn(dir *os.File, name string, follow bool) (*os.File, error) {
	return openRegularAt(int(dir.Fd()), name, filepath.Join(dir.Name(), name), follow, inputHint)
}

// openRegularAt is OpenRegular relative to dirfd; display names the file
// in messages, and hint ends a refusal.
//
// The name is first opened with O_PATH, which opens no device and no
// FIFO (a driver's open can have effects: opening /dev/watchdog arms it),
// and fstat on that descriptor says what it is. Only a regular file is
// then opened for reading, through /proc/self/fd/N: the inode O_PATH
// pinned, whatever the name has become. Without /proc, the name is
// opened again with O_NONBLOCK and the two descriptors must agree on
// device and inode.
func openRegularAt(dirfd int, name, display string, follow bool, hint string) (*os.File, error) {
	flag := unix.O_PATH | unix.O_CLOEXEC
	if !follow {
		flag |= unix.O_NOFOLLOW
	}
	pfd, err := openat(dirfd, name, flag, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: display, Err: err}
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return nil, fmt.Errorf("checking %s: %w", display, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFLNK: // O_PATH|O_NOFOLLOW opened the link itself
		if hint == inputHint {
			hint = "give the path of the file it points at"
		}
		return nil, notRegular("%s is a symlink, which is not followed here; %s", display, hint)
	default:
		return nil, notRegular("%s is %s, not a regular file; %s", display, typeName(&st), hint)
	}
	read := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY
	fd, err := openat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(pfd), read, 0)
	if errors.Is(err, unix.ENOENT) { // no /proc
		fd, err = openat(dirfd, name, read|flag&unix.O_NOFOLLOW, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: display, Err: err}
	}
	var got unix.Stat_t
	if err := unix.Fstat(fd, &got); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("checking %s: %w", display, err)
	}
	if got.Mode&unix.S_IFMT != unix.S_IFREG || got.Dev != st.Dev || got.Ino != st.Ino {
		unix.Close(fd)
		return nil, notRegular("%s was replaced while it was opened; %s", display, hint)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, 0); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("opening %s: %w", display, err)
	}
	return os.NewFile(uintptr(fd), display), nil
}

// openat is unix.Openat, retried when a signal interrupts it.
func openat(dirfd int, name string, flag int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flag, perm)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// ReadRegular reads the file at path, opened and checked as OpenRegular
// does (follow says whether a symlink at path itself is followed), through
// its descriptor. It refuses a file whose size fstat gives as over max
// bytes (ErrTooLarge; a sparse file is refused by the size it claims, not
// read), reads at most max+1 bytes (a file that grows while it is read is
// refused too), and refuses a file anyone may write (mode o+w): anyone on
// the host could have written what it says.
func ReadRegular(path string, max int64, follow bool) ([]byte, error) {
	f, err := OpenRegular(path, follow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readChecked(f, path, max)
}

// ReadRegularIn reads the file name directly inside the open directory
// dir as ReadRegular reads a path: opened as OpenRegularIn does, then
// checked and bounded the same way.
func ReadRegularIn(dir *os.File, name string, max int64, follow bool) ([]byte, error) {
	f, err := OpenRegularIn(dir, name, follow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readChecked(f, filepath.Join(dir.Name(), name), max)
}

// readChecked reads an open regular file as ReadRegular does.
func readChecked(f *os.File, path string, max int64) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, fmt.Errorf("checking %s: %w", path, err)
	}
	if st.Mode&0o002 != 0 {
		return nil, untrusted("%s is writable by anyone (mode %v), so anyone on this host could have written what it says; run chmod o-w on it, or copy it where only you can write (a filesystem without modes, such as FAT, shows every file so)", path, fs.FileMode(st.Mode&0o777))
	}
	if st.Size > max {
		return nil, &fileError{msg: fmt.Sprintf("%s is %d bytes, more than the %d allowed", path, st.Size, max), is: ErrTooLarge}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, &fileError{msg: fmt.Sprintf("%s grew past the %d bytes allowed while it was read", path, max), is: ErrTooLarge}
	}
	return b, nil
}

// OpenDirectory opens the directory at path (following symlinks: it is an
// operator's own option) for listing, with O_DIRECTORY and O_CLOEXEC: a
// FIFO or device there is refused (ErrNotRegular) at once, unopened,
// instead of blocking the open.
func OpenDirectory(path string) (*os.File, error) {
	// O_DIRECTORY alone keeps the open from blocking: the kernel refuses
	// a FIFO or device with ENOTDIR before it would open it.
	fd, err := openat(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOTDIR) {
		var st unix.Stat_t
		if unix.Stat(path, &st) == nil {
			return nil, notRegular("%s is %s, not a directory; give the directory holding the package archives", path, typeName(&st))
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenOutput opens the directory at path, which is to hold a file this
// user writes for an operator (a saved plan, a report), walking from /
// one component at a time with O_NOFOLLOW as Open does, but checking less,
// since an operator may write a report wherever they may write: a
// directory of another user, or one others can write, is allowed on the
// way. What is refused is a redirection: a symlink on the way is followed
// only when the directory holding it can be changed by no one but this
// user or root (then the link is theirs, and says where they meant), and
// never when another user could have put it there (in a directory others
// can write, or owned by another user in a sticky one such as /tmp). The
// file is then written relative to the returned descriptor (see
// ReadExisting and Replace), so nothing swapped in on the way after the
// walk moves the write.
func OpenOutput(path string) (*Dir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	abs = filepath.Clean(abs)
	for hops := 0; hops <= maxHops; hops++ {
		d, next, err := walkOutput(abs)
		if err != nil || next == "" {
			return d, err
		}
		abs = next
	}
	return nil, untrusted("opening %s: too many symlinks", path)
}

// walkOutput walks path for OpenOutput; when it meets a symlink it may
// follow, it returns the path to walk instead.
func walkOutput(path string) (*Dir, string, error) {
	fd, err := openat(unix.AT_FDCWD, "/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", fmt.Errorf("opening /: %w", err)
	}
	cur := "/"
	parts := splitPath(path)
	for i, name := range parts {
		next := filepath.Join(cur, name)
		var dst, st unix.Stat_t
		if err := unix.Fstat(fd, &dst); err != nil {
			unix.Close(fd)
			return nil, "", fmt.Errorf("checking %s: %w", cur, err)
		}
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			unix.Close(fd)
			if errors.Is(err, unix.ENOENT) {
				return nil, "", fmt.Errorf("%s does not exist; an output's directory must exist: %w", next, fs.ErrNotExist)
			}
			return nil, "", &fs.PathError{Op: "open", Path: next, Err: err}
		}
		if t := st.Mode & unix.S_IFMT; t != unix.S_IFLNK && t != unix.S_IFDIR {
			unix.Close(fd)
			return nil, "", fmt.Errorf("%s is %s, not a directory; give an output path in an existing directory", next, typeName(&st))
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			if err := trusted(cur, &dst); err != nil {
				unix.Close(fd)
				return nil, "", untrusted("%s is a symlink in %s, which another user can change (owner uid %d, mode %v), so it may not point where you meant; give the path it points at", next, cur, dst.Uid, fs.FileMode(dst.Mode&0o777))
			}
			if sticky(&dst) && !byUs(&st) {
				unix.Close(fd)
				return nil, "", untrusted("%s is a symlink of uid %d in %s, which others can write: another user placed it, so it may not point where you meant; give the path it points at", next, st.Uid, cur)
			}
			target, err := readlinkat(fd, name)
			unix.Close(fd)
			if err != nil {
				return nil, "", fmt.Errorf("reading the symlink %s: %w", next, err)
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(cur, target)
			}
			return nil, filepath.Clean(filepath.Join(append([]string{target}, parts[i+1:]...)...)), nil
		}
		// O_DIRECTORY: a FIFO or device here fails with ENOTDIR, unopened.
		nfd, err := openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return nil, "", notSafe(next, "a directory", err)
		}
		fd, cur = nfd, next
	}
	return &Dir{path: cur, f: os.NewFile(uintptr(fd), cur)}, "", nil
}

// splitPath splits a clean absolute path into its names.
func splitPath(path string) []string {
	var parts []string
	for _, p := range strings.Split(path, "/") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return parts
}

// ReadExisting reads what the file name of d holds, to compare it with
// what is about to replace it: it opens it without following a symlink
// and without blocking, refuses anything but a regular file
// (ErrNotRegular: a symlink to /dev/zero is refused, not read), and reads
// at most max+1 bytes, so an old file larger than the new content (even
// a sparse one of terabytes) costs max+1 bytes to tell apart. exists is
// false when there is no such file.
func (d *Dir) ReadExisting(name string, max int64) (old []byte, exists bool, err error) {
	old, _, exists, err = d.ReadExistingMode(name, max)
	return old, exists, err
}

// ReadExistingMode is ReadExisting, and the file's mode too: its
// permission bits with its set-user-ID, set-group-ID and sticky bits, as
// fstat gives them on the descriptor read.
func (d *Dir) ReadExistingMode(name string, max int64) (old []byte, mode fs.FileMode, exists bool, err error) {
	f, err := openRegularAt(d.Fd(), name, filepath.Join(d.path, name), false, outputHint)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, false, fmt.Errorf("checking %s: %w", f.Name(), err)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, 0, false, fmt.Errorf("reading %s: %w", f.Name(), err)
	}
	return b, info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), true, nil
}

// Replace replaces the file name of d whole with b (mode perm, whatever
// the umask): it creates a temporary file beside it relative to d's
// descriptor (O_CREAT|O_EXCL|O_NOFOLLOW: nothing planted under its name is
// written through), writes and syncs it, then renames it over name with
// renameat(2). Either the old file or the new one is there, never a part.
func (d *Dir) Replace(name string, b []byte, perm uint32) (err error) {
	p := filepath.Join(d.path, name)
	var tmp string
	var fd int
	for try := 0; ; try++ {
		var r [8]byte
		_, _ = rand.Read(r[:])
		tmp = "." + name + "." + hex.EncodeToString(r[:])
		fd, err = openat(d.Fd(), tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EEXIST) || try >= 10 {
			return fmt.Errorf("writing %s: creating a temporary file in %s: %w", p, d.path, err)
		}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(d.path, tmp))
	defer func() {
		if err != nil {
			err = errors.Join(err, d.Remove(tmp))
		}
	}()
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := unix.Fchmod(fd, perm); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := unix.Renameat(d.Fd(), tmp, d.Fd(), name); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return nil
}

// Create creates the new file name of d for writing (mode perm), relative
// to d's descriptor with O_CREAT|O_EXCL|O_NOFOLLOW: it fails when anything,
// a symlink included, is there already.
func (d *Dir) Create(name string, perm uint32) (*os.File, error) {
	p := filepath.Join(d.path, name)
	fd, err := openat(d.Fd(), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}
