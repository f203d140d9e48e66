// Package privdirtest gives tests a second local user, to try the daemon
// and the cache as another user of the same machine would. Tests run as
// root (as CI does): the user is created with useradd on first use, under
// a fixed name per test binary so a crashed run's user is reused, and
// removed by Remove at the end of TestMain. Test support, never imported
// by product code.
package privdirtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// User is a second local user.
type User struct {
	Name     string
	Uid, Gid uint32
}

var (
	mu      sync.Mutex
	created = map[string]*User{}
)

// Other returns the local user name, creating it when it does not exist.
// It fails the test when this process is not root (only root can create
// a user and run commands as another).
func Other(t testing.TB, name string) *User {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if u, ok := created[name]; ok {
		return u
	}
	if os.Geteuid() != 0 {
		t.Fatalf("the tests that act as a second local user run as root (they create the user %s with useradd); this process runs as uid %d", name, os.Geteuid())
	}
	u, err := lookup(name)
	for try := 0; err != nil && try < 50; try++ {
		// useradd refuses while another useradd holds /etc/passwd's lock
		// (test binaries run in parallel): try again.
		out, aerr := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		if u, err = lookup(name); err != nil {
			err = fmt.Errorf("useradd %s: %v: %s", name, aerr, strings.TrimSpace(string(out)))
			time.Sleep(100 * time.Millisecond)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	created[name] = u
	return u
}

func lookup(name string) (*User, error) {
	pw, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err := strconv.ParseUint(pw.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(pw.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &User{Name: name, Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// Remove deletes the users Other created or found. TestMain calls it last.
func Remove() error {
	mu.Lock()
	defer mu.Unlock()
	var errs []string
	for name := range created {
		for try := 0; ; try++ {
			out, err := exec.Command("userdel", name).CombinedOutput()
			if err == nil {
				break
			}
			if try == 50 {
				errs = append(errs, fmt.Sprintf("userdel %s: %v: %s", name, err, strings.TrimSpace(string(out))))
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		delete(created, name)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// Command is a command that runs as u, with a small environment of its
// own (PATH, and HOME set to /nonexistent) plus env.
func (u *User) Command(env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=/nonexistent"}, env...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.Uid, Gid: u.Gid, Groups: []uint32{}}}
	return cmd
}

// Dir makes a directory under /tmp that belongs to u (mode 0700), removed
// when the test ends.
func (u *User) Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "zp-"+u.Name+"-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, int(u.Uid), int(u.Gid)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestBinary is a copy of this test binary that u can run (root's, in a
// root directory anyone can enter), for a test to re-run itself as u.
func (u *User) TestBinary(t testing.TB) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "zp-testbin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := dir + "/" + "test.bin"
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// Explicitly: a daemon served in this process set its umask to 077.
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// FIFO makes a FIFO named name in a temporary directory of t and returns
// its path.
func FIFO(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// RefusedAtOnce calls read, which must refuse the FIFO at path without
// opening it for reading: the test fails when read has not returned
// within 5 s (it blocked), or returned anything but want (privdir's
// ErrNotRegular) naming path as a FIFO.
func RefusedAtOnce(t testing.TB, path string, want error, read func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- read() }()
	select {
	case err := <-done:
		if !errors.Is(err, want) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "FIFO") {
			t.Fatalf("err = %v, want a refusal naming %s as a FIFO", err, path)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("still blocked on the FIFO %s after 5 s", path)
	}
}
