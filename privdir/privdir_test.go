package privdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
)

const otherUser = "zp-test-privdir"

func TestMain(m *testing.M) {
	code := m.Run()
	if err := privdirtest.Remove(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// private is a directory of this user under /tmp.
func private(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "zp-privdir-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func TestOpenRefusesPathsAnotherUserControls(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	theirs := filepath.Join(private(t), "theirs")
	if err := os.Mkdir(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, int(other.Uid), int(other.Gid)); err != nil {
		t.Fatal(err)
	}
	inTmp := other.Dir(t) // /tmp/zp-...: theirs
	mine := filepath.Join(theirs, "state")
	if err := os.Mkdir(mine, 0o700); err != nil { // ours (root's), under theirs
		t.Fatal(err)
	}
	openDir := private(t)
	if err := os.Chmod(openDir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(openDir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	linkDir := private(t)
	if err := os.Symlink(theirs, filepath.Join(linkDir, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"a parent belongs to another user", mine, theirs + fmt.Sprintf(" belongs to uid %d, who could replace what is below it", other.Uid)},
		{"the directory itself belongs to another user", theirs, fmt.Sprintf("%s belongs to uid %d, not to this user", theirs, other.Uid)},
		{"a parent is writable by others without the sticky bit", filepath.Join(openDir, "state"), openDir + " is writable by group or others (mode -rwxrwxrwx)"},
		{"a symlink's target is checked", filepath.Join(linkDir, "link", "state"), theirs + fmt.Sprintf(" belongs to uid %d", other.Uid)},
		{"an entry of another user under a sticky directory", filepath.Join(inTmp, "state"), fmt.Sprintf("%s belongs to uid %d, and /tmp above it is writable by others (only its sticky bit protects it)", inTmp, other.Uid)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Open(tt.path, false)
			if err == nil {
				d.Close()
				t.Fatalf("Open(%s) succeeded; want it refused", tt.path)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open(%s) = %v; want it to say %q", tt.path, err, tt.want)
			}
		})
	}
}

func TestOpenFollowsASymlinkOnceAndChecksItsTarget(t *testing.T) {
	base := private(t)
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	d, err := Open(filepath.Join(base, "link"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Path() != real {
		t.Errorf("Path() = %s; want the resolved %s", d.Path(), real)
	}
	if _, err := Open(filepath.Join(base, "new", "deeper"), true); err != nil {
		t.Fatalf("creating missing directories: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(base, "new", "deeper")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("created directory: %v, %v; want mode 0700", fi, err)
	}
}

// Once open, a directory is used through its descriptor: a directory
// renamed away and replaced by a symlink under the same name changes
// nothing for its holder.
func TestEveryOperationIsRelativeToTheHandle(t *testing.T) {
	base := private(t)
	dir := filepath.Join(base, "state")
	elsewhere := filepath.Join(base, "elsewhere")
	for _, d := range []string{dir, elsewhere} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Open(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Rename(dir, dir+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("daemon.json", "daemon.json.tmp", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir+".moved", "daemon.json")); err != nil {
		t.Errorf("the write did not reach the directory that was opened: %v", err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "daemon.json")); err == nil {
		t.Error("the write followed the symlink put in the directory's place")
	}
}

func TestFilesAreCheckedAndNeverFollowed(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	dir := private(t)
	victim := filepath.Join(private(t), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "daemon.log")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "daemon.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(dir, "daemon.json"), int(other.Uid), int(other.Gid)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "daemon.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := Open(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tests := []struct{ name, want string }{
		{"daemon.log", "is a symlink, not a regular file"},
		{"daemon.json", fmt.Sprintf("belongs to uid %d, not to this user", other.Uid)},
		{"daemon.lock", "is readable or writable by group or others (mode -rw-r--r--); run chmod go-rwx on it"},
		{"fifo", "is not a regular file"},
	}
	for _, tt := range tests {
		f, err := d.OpenFile(tt.name, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT, 0o600)
		if err == nil {
			f.Close()
			t.Errorf("OpenFile(%s) succeeded; want it refused", tt.name)
			continue
		}
		if !strings.Contains(err.Error(), filepath.Join(dir, tt.name)+" ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("OpenFile(%s) = %v; want it named and %q", tt.name, err, tt.want)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the symlink's target was changed: %q", b)
	}
}

func TestExecutable(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	install := func(t *testing.T, dirMode, mode os.FileMode, owner *privdirtest.User) string {
		dir := filepath.Join(private(t), "bin")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "zarf-planner")
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
		for path, m := range map[string]os.FileMode{dir: dirMode, p: mode} {
			if err := os.Chmod(path, m); err != nil {
				t.Fatal(err)
			}
			if owner != nil {
				if err := os.Chown(path, int(owner.Uid), int(owner.Gid)); err != nil {
					t.Fatal(err)
				}
			}
		}
		return p
	}
	tests := []struct {
		name          string
		dirMode, mode os.FileMode
		owner         *privdirtest.User
		want          string // "" = accepted
	}{
		{"root's program in root's directory", 0o755, 0o755, nil, ""},
		{"owned by another user", 0o755, 0o755, other, fmt.Sprintf("belongs to uid %d", other.Uid)},
		{"writable by others", 0o755, 0o757, nil, "is writable by group or others (mode -rwxr-xrwx)"},
		{"its directory writable by others", 0o777, 0o755, nil, "is writable by group or others (mode -rwxrwxrwx), who could replace what is below it"},
		{"not executable", 0o755, 0o644, nil, "is not an executable file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := install(t, tt.dirMode, tt.mode, tt.owner)
			got, err := Executable(p)
			switch {
			case tt.want == "" && (err != nil || got != p):
				t.Errorf("Executable = %s, %v; want %s accepted", got, err, p)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Executable = %s, %v; want refused saying %q", got, err, tt.want)
			}
		})
	}
}

// The holder of a lock is the kernel's answer, not what the file says: a
// file left by a daemon that died names a pid that holds nothing.
func TestHolderIsWhoHoldsTheLock(t *testing.T) {
	d, err := Open(private(t), false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.WriteFile("daemon.lock", "daemon.lock.tmp", []byte("999999\n")); err != nil {
		t.Fatal(err)
	}
	if pid := d.Holder("daemon.lock"); pid != 0 {
		t.Errorf("Holder of a lock nobody holds = %d; want 0", pid)
	}
	l, ok, err := d.TryLock("daemon.lock")
	if err != nil || !ok {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	defer l.Unlock()
	if _, again, _ := d.TryLock("daemon.lock"); again {
		t.Error("a held lock was taken a second time")
	}
	if pid := d.Holder("daemon.lock"); pid != os.Getpid() {
		t.Errorf("Holder = %d; want this process, %d", pid, os.Getpid())
	}
	if !errors.Is(untrusted("x"), ErrUntrusted) {
		t.Error("a refusal does not match ErrUntrusted")
	}
}
