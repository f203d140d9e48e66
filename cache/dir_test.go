package cache

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
)

const otherUser = "zp-test-cache"

// TestMain also runs this binary's helpers: ZP_CACHE_HOLD=<dir> opens the
// cache there (ZP_CACHE_RAW=1: with Badger alone, as a program that is
// not zarf-planner would), says "open" and holds it until stdin closes;
// ZP_CACHE_OPEN=<dir> opens and closes it, printing the error.
func TestMain(m *testing.M) {
	if dir := os.Getenv("ZP_CACHE_HOLD"); dir != "" {
		var closeIt func() error
		if os.Getenv("ZP_CACHE_RAW") != "" {
			db, err := badger.Open(options(dir))
			if err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
			closeIt = db.Close
		} else {
			c, err := Open(dir, nil)
			if err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
			closeIt = c.Close
		}
		fmt.Println("open")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		_ = closeIt()
		os.Exit(0)
	}
	if dir := os.Getenv("ZP_CACHE_OPEN"); dir != "" {
		c, err := Open(dir, func(w string) { fmt.Println("warning:", w) })
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		if err := c.Close(); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if err := privdirtest.Remove(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// hold has another process hold the cache dir open until the test ends.
func hold(t *testing.T, dir string, raw bool) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "ZP_CACHE_HOLD="+dir)
	if raw {
		cmd.Env = append(cmd.Env, "ZP_CACHE_RAW=1")
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "open\n" {
		t.Fatalf("the holder did not open %s: %q, %v", dir, line, err)
	}
	return cmd
}

// noneAside fails the test when anything next to dir was set aside.
func noneAside(t *testing.T, dir string) {
	t.Helper()
	if aside, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "*.corrupt-*")); len(aside) > 0 {
		t.Errorf("set aside as corrupt: %v", aside)
	}
}

func TestInUseNamesTheProcessThatHoldsIt(t *testing.T) {
	cdir := filepath.Join(t.TempDir(), "cache")
	holder := hold(t, cdir, false)
	_, err := Open(cdir, nil)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("(pid %d:", holder.Process.Pid)) {
		t.Errorf("Open of a cache another process holds = %v; want ErrInUse naming pid %d", err, holder.Process.Pid)
	}
}

// A cache held by a program that is not zarf-planner (Badger's own lock)
// is in use, not corrupt: it is left as it is.
func TestBadgersOwnLockIsNotCorruption(t *testing.T) {
	cdir := filepath.Join(t.TempDir(), "cache")
	c := openT(t, cdir)
	c.Close()
	hold(t, cdir, true)
	_, err := Open(cdir, func(w string) { t.Errorf("unexpected warning: %s", w) })
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "left as it is") {
		t.Errorf("Open = %v; want ErrInUse, the directory left as it is", err)
	}
	noneAside(t, cdir)
}

// Two names of one cache are one cache: a symlink is resolved before the
// lock is taken, so the second opener finds it in use.
func TestASymlinkIsResolvedBeforeLocking(t *testing.T) {
	base := t.TempDir()
	cdir, link := filepath.Join(base, "cache"), filepath.Join(base, "link")
	openT(t, cdir)
	if err := os.Symlink(cdir, link); err != nil {
		t.Fatal(err)
	}
	_, err := Open(link, func(w string) { t.Errorf("unexpected warning: %s", w) })
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), cdir+" is open in another process (pid ") {
		t.Errorf("Open(symlink to an open cache) = %v; want ErrInUse naming %s", err, cdir)
	}
	if target, err := os.Readlink(link); err != nil || target != cdir {
		t.Errorf("the symlink is now %q, %v; want it untouched", target, err)
	}
	noneAside(t, cdir)
}

// A cache this user may not read (as another user here: root reads
// anything) is reported, not set aside: the directory is not corrupt.
func TestAPermissionErrorIsNotCorruption(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	bin := other.TestBinary(t)
	cdir := filepath.Join(other.Dir(t), "cache")
	open := func() (string, error) {
		out, err := other.Command([]string{"ZP_CACHE_OPEN=" + cdir}, bin, "-test.run", "^$").CombinedOutput()
		return string(out), err
	}
	if out, err := open(); err != nil {
		t.Fatalf("the other user's first open: %v: %s", err, out)
	}
	if err := os.Chmod(filepath.Join(cdir, "MANIFEST"), 0); err != nil {
		t.Fatal(err)
	}
	out, err := open()
	if err == nil || !strings.Contains(out, "permission denied") || !strings.Contains(out, "it was left as it is (it is not corrupt: ") || strings.Contains(out, "moved it to") {
		t.Errorf("open of an unreadable cache: %v: %s; want the permission error, nothing moved", err, out)
	}
	noneAside(t, cdir)
	if _, err := os.Stat(filepath.Join(cdir, "MANIFEST")); err != nil {
		t.Errorf("the cache's MANIFEST is gone: %v", err)
	}
}

// A cache is answered by stat alone, so a directory another user could
// change is refused, as the daemon's state directory is.
func TestACacheDirectoryOthersCanChangeIsRefused(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	theirs := filepath.Join(t.TempDir(), "theirs")
	if err := os.Mkdir(theirs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, int(other.Uid), int(other.Gid)); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o770); err != nil {
		t.Fatal(err)
	}
	under := filepath.Join(theirs, "cache")
	for dir, want := range map[string]string{
		theirs: fmt.Sprintf("%s belongs to uid %d, not to this user", theirs, other.Uid),
		open:   open + " is writable by group or others (mode -rwxrwx---)",
		under:  fmt.Sprintf("%s belongs to uid %d, who could replace what is below it", theirs, other.Uid),
	} {
		c, err := Open(dir, nil)
		if err == nil {
			c.Close()
			t.Errorf("Open(%s) succeeded; want it refused", dir)
			continue
		}
		if !strings.Contains(err.Error(), "cannot be trusted") || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s) = %v; want it refused saying %q", dir, err, want)
		}
	}
}

// A directory that holds what no cache holds is no corrupt cache: when
// Badger cannot open it, it is reported and left as it is, never moved
// aside (cache_dir may point anywhere by mistake).
func TestADirectoryThatIsNoCacheIsNeverMovedAside(t *testing.T) {
	cdir := filepath.Join(t.TempDir(), "etc")
	if err := os.Mkdir(cdir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"MANIFEST": "not a badger manifest", "passwd": "root:x:0:0"} {
		if err := os.WriteFile(filepath.Join(cdir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Open(cdir, func(w string) { t.Errorf("unexpected warning: %s", w) })
	if err == nil {
		c.Close()
		t.Fatal("Open of a directory that is no cache succeeded")
	}
	if !strings.Contains(err.Error(), "it was left as it is: it holds \""+filepath.Join(cdir, "passwd")+"\", which no cache holds") {
		t.Errorf("Open = %v; want refused naming passwd", err)
	}
	noneAside(t, cdir)
	if b, err := os.ReadFile(filepath.Join(cdir, "passwd")); err != nil || string(b) != "root:x:0:0" {
		t.Errorf("the directory's file is %q, %v; want it untouched", b, err)
	}
}

// A symlink another user placed in a directory everyone can write (/tmp)
// is checked before it is followed, and refused: it would otherwise lead
// this user's cache wherever that user chose.
func TestAnotherUsersSymlinkIsNotFollowed(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	mine := filepath.Join(t.TempDir(), "cache")
	link := filepath.Join(os.TempDir(), fmt.Sprintf("zp-link-%d", os.Getpid()))
	if err := os.Symlink(mine, link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(link) })
	if err := os.Lchown(link, int(other.Uid), int(other.Gid)); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"Resolve": func() error { _, err := Resolve(link); return err }(),
		"Open": func() error {
			c, err := Open(link, nil)
			if err == nil {
				c.Close()
			}
			return err
		}(),
	} {
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s belongs to uid %d", link, other.Uid)) {
			t.Errorf("%s(another user's symlink) = %v; want refused naming it", what, err)
		}
	}
	if _, err := os.Stat(mine); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the symlink's target was created: %v", err)
	}
}
