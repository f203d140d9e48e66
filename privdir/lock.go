package privdir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Lock is an exclusive flock on a file of a Dir, held until Unlock (or
// the process's exit). The holder records its pid in the file, so others
// can say who holds it.
//
// It is one flock(2) on the descriptor Dir.OpenFile returned, not
// gofrs/flock: that library opens its lock file by path (os.OpenFile of
// the path given to flock.New) and takes no open file, so it could
// neither lock the file opened relative to the checked directory's
// descriptor (openat, O_NOFOLLOW, its owner and type checked) nor write
// the holder's pid into that same file.
type Lock struct {
	f *os.File
}

// TryLock takes the exclusive lock on the file name of d (created 0600,
// checked as OpenFile does) without waiting. ok is false when another
// open file holds it.
func (d *Dir) TryLock(name string) (l *Lock, ok bool, err error) {
	f, err := d.OpenFile(name, unix.O_RDWR|unix.O_CREAT, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	return &Lock{f: f}, true, nil
}

// LockContext takes the exclusive lock on the file name of d, trying
// every poll until ctx ends.
func (d *Dir) LockContext(ctx context.Context, name string, poll time.Duration) (*Lock, error) {
	for {
		l, ok, err := d.TryLock(name)
		if err != nil || ok {
			return l, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// Record writes pid into the lock file, for Holder.
func (l *Lock) Record(pid int) error {
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("recording the holder of %s: %w", l.f.Name(), err)
	}
	if _, err := l.f.WriteAt([]byte(strconv.Itoa(pid)+"\n"), 0); err != nil {
		return fmt.Errorf("recording the holder of %s: %w", l.f.Name(), err)
	}
	return nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	return l.f.Close()
}

// Holder is the pid of the process holding the lock on the file name of
// d, by the kernel's word (/proc/locks, matched by device and inode), or
// 0 when nobody holds it or it cannot be told. Without /proc it is the
// pid the holder recorded.
func (d *Dir) Holder(name string) int {
	st, err := d.Lstat(name)
	if err != nil {
		return 0
	}
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		return d.recorded(name)
	}
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	for _, line := range strings.Split(string(locks), "\n") {
		// "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF"; a waiter's
		// line has "->" after the number.
		f := strings.Fields(line)
		if len(f) < 6 || f[1] == "->" || f[1] != "FLOCK" || f[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}

// recorded is the pid the holder wrote into the lock file name of d.
func (d *Dir) recorded(name string) int {
	b, err := d.ReadFile(name)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
