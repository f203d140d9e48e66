package privdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
)

// within runs f and fails the test when it has not returned in 5 s: a
// refusal must be immediate, never a wait on a FIFO.
func within[T any](t *testing.T, f func() (T, error)) (T, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(5 * time.Second):
		t.Fatal("still blocked after 5 s")
		panic("unreachable")
	}
}

func fifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestReadRegularRefusesAFIFOAtOnce(t *testing.T) {
	for _, follow := range []bool{true, false} {
		p := filepath.Join(private(t), "policy.yaml")
		fifo(t, p)
		_, err := within(t, func() ([]byte, error) { return ReadRegular(p, 1<<20, follow) })
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "FIFO") {
			t.Fatalf("follow %v: err = %v, want a refusal naming %s as a FIFO", follow, err, p)
		}
	}
}

func TestReadRegularRefusesADeviceThroughASymlink(t *testing.T) {
	p := filepath.Join(private(t), "cosign.pub")
	if err := os.Symlink("/dev/zero", p); err != nil {
		t.Fatal(err)
	}
	_, err := within(t, func() ([]byte, error) { return ReadRegular(p, 1<<20, true) })
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "character device") {
		t.Fatalf("err = %v, want a refusal of a character device", err)
	}
	_, err = ReadRegular(p, 1<<20, false)
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("without following: err = %v, want a refusal of the symlink", err)
	}
}

func TestReadRegularFollowsASymlinkToAFile(t *testing.T) {
	dir := private(t)
	real := filepath.Join(dir, "real.yaml")
	if err := os.WriteFile(real, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	b, err := ReadRegular(link, 10, true)
	if err != nil || string(b) != "hello" {
		t.Fatalf("ReadRegular = %q, %v; want hello", b, err)
	}
}

func TestReadRegularBoundsTheSize(t *testing.T) {
	dir := private(t)
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 11), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRegular(big, 10, true); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), big) {
		t.Fatalf("11 bytes with a cap of 10: err = %v, want ErrTooLarge naming the file", err)
	}
	if b, err := ReadRegular(big, 11, true); err != nil || len(b) != 11 {
		t.Fatalf("11 bytes with a cap of 11: %d bytes, %v", len(b), err)
	}
	// A sparse file of a terabyte costs nothing on disk and must cost
	// nothing to refuse.
	sparse := filepath.Join(dir, "sparse")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Fatal(err)
	}
	f.Close()
	start := time.Now()
	if _, err := ReadRegular(sparse, 1<<20, true); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a sparse terabyte: err = %v, want ErrTooLarge", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("refusing a sparse terabyte took %v", d)
	}
}

func TestReadRegularRefusesAFileAnyoneMayWrite(t *testing.T) {
	p := filepath.Join(private(t), "policy.yaml")
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRegular(p, 10, true); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "chmod o-w") {
		t.Fatalf("err = %v, want a refusal saying chmod o-w", err)
	}
}

func TestOpenDirectoryRefusesAFIFOAtOnce(t *testing.T) {
	p := filepath.Join(private(t), "bundle")
	fifo(t, p)
	if n := opens(t, p, func() {
		_, err := within(t, func() (*os.File, error) { return OpenDirectory(p) })
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "not a directory") {
			t.Fatalf("err = %v, want a refusal of a FIFO as a directory", err)
		}
	}); n != 0 {
		t.Fatalf("refusing the FIFO opened it %d times", n)
	}
	d, err := OpenDirectory(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}

func TestOpenOutputFollowsOnlyTheLinksNoOtherUserCouldHavePlaced(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	dir := private(t)
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	// A link in a directory only this user controls is this user's: it
	// is followed, and the directory opened is the real one.
	mine := filepath.Join(dir, "mine")
	if err := os.Symlink(real, mine); err != nil {
		t.Fatal(err)
	}
	d, err := OpenOutput(mine)
	if err != nil {
		t.Fatalf("a symlink in my own directory: %v", err)
	}
	if d.Path() != real {
		t.Fatalf("opened %s, want %s", d.Path(), real)
	}
	d.Close()

	// In a directory anyone may write, a link could be anyone's.
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(shared, "out")); err != nil {
		t.Fatal(err)
	}
	_, err = OpenOutput(filepath.Join(shared, "out"))
	if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("a symlink in a world-writable directory: err = %v, want a refusal", err)
	}
	// ... but a real directory there is written in.
	sub := filepath.Join(shared, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if d, err := OpenOutput(sub); err != nil {
		t.Fatalf("a real directory in a world-writable one: %v", err)
	} else {
		d.Close()
	}

	// Another user's link in a sticky directory (/tmp) is theirs.
	theirs := filepath.Join(os.TempDir(), "zp-output-link-"+filepath.Base(dir))
	if err := os.Symlink(real, theirs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(theirs) })
	if err := os.Lchown(theirs, int(other.Uid), int(other.Gid)); err != nil {
		t.Fatal(err)
	}
	_, err = OpenOutput(theirs)
	if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), theirs) {
		t.Fatalf("another user's symlink in /tmp: err = %v, want a refusal naming it", err)
	}
}

func TestReadExistingRefusesLinksAndSpecialFilesWithoutReading(t *testing.T) {
	dir := private(t)
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.json")); err != nil {
		t.Fatal(err)
	}
	fifo(t, filepath.Join(dir, "fifo.json"))
	d, err := OpenOutput(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for name, want := range map[string]string{"zero.json": "symlink", "fifo.json": "FIFO"} {
		_, err := within(t, func() ([]byte, error) {
			b, _, err := d.ReadExisting(name, 100)
			return b, err
		})
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "remove it") {
			t.Fatalf("%s: err = %v, want a refusal of a %s saying what to do", name, err, want)
		}
	}
	if _, exists, err := d.ReadExisting("none.json", 100); exists || err != nil {
		t.Fatalf("a missing file: exists %v, err %v", exists, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.json"), make([]byte, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	b, exists, err := d.ReadExisting("big.json", 10)
	if err != nil || !exists || len(b) != 11 {
		t.Fatalf("a 1000-byte file read for 10: %d bytes, exists %v, %v; want 11 bytes", len(b), exists, err)
	}
}

func TestReplaceWritesWholeThroughTheDescriptor(t *testing.T) {
	dir := private(t)
	d, err := OpenOutput(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	if err := d.Replace("plan.json", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The directory is renamed away and a link put in its place: the
	// descriptor still writes to the directory that was checked.
	moved := dir + ".moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(moved) })
	elsewhere := private(t)
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	if err := d.Replace("plan.json", []byte("newer"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(moved, "plan.json"))
	if err != nil || string(b) != "newer" {
		t.Fatalf("the checked directory holds %q, %v; want newer", b, err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "plan.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the write followed the link: %v", err)
	}
	fi, err := os.Stat(filepath.Join(moved, "plan.json"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, %v; want 0644 whatever the umask", fi.Mode().Perm(), err)
	}
	names, err := d.Names()
	if err != nil || len(names) != 1 {
		t.Fatalf("the directory holds %v, %v; want only plan.json (no temporary file left)", names, err)
	}
}

// opens counts the opens inotify reports of path while f runs.
func opens(t *testing.T, path string, f func()) int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	f()
	buf := make([]byte, 4096)
	n, err := unix.Read(fd, buf)
	if errors.Is(err, unix.EAGAIN) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for off := 0; off+unix.SizeofInotifyEvent <= n; {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		if ev.Mask&unix.IN_OPEN != 0 {
			count++
		}
		off += unix.SizeofInotifyEvent + int(ev.Len)
	}
	return count
}

// TestNoSpecialFileIsOpenedToBeRefused: a FIFO or device is refused on
// what an O_PATH descriptor says of it, without the open(2) that would
// reach its driver (opening /dev/watchdog arms it). inotify sees every
// open for reading or writing, and none of an O_PATH descriptor.
func TestNoSpecialFileIsOpenedToBeRefused(t *testing.T) {
	p := filepath.Join(private(t), "fifo")
	fifo(t, p)
	if n := opens(t, p, func() {
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}); n != 1 {
		t.Fatalf("inotify saw %d opens of an open(2); want 1 (the test cannot see opens)", n)
	}
	if n := opens(t, p, func() {
		if _, err := ReadRegular(p, 10, true); !errors.Is(err, ErrNotRegular) {
			t.Fatalf("err = %v, want ErrNotRegular", err)
		}
	}); n != 0 {
		t.Fatalf("refusing the FIFO opened it %d times", n)
	}
}

func TestOpenOutputSaysWhatIsWrongWithTheDirectory(t *testing.T) {
	dir := private(t)
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "absent", "sub"): "absent does not exist; an output's directory must exist",
		filepath.Join(file, "sub"):          "file is a regular file, not a directory",
	} {
		if _, err := OpenOutput(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", path, err, want)
		}
	}
}
