package renderproc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The user and group ids a renderer of root's runs as: each renderer
// process takes one no other process has (its uid and its gid, the same
// number), and gives it back when it ends. The range is the one systemd
// reserves for DynamicUser= services, and an id is taken as systemd
// takes one: it is named in neither /etc/passwd nor /etc/group, and no
// process runs with it.
const (
	FirstUID = 61184
	LastUID  = 65519
)

// uidLocks is where a process of zarf-planner holds the ids its
// renderers use: a file per id, locked (flock) while a renderer runs as
// it, so that two daemons never give one id to two renderers. The lock
// goes with the descriptor: a daemon that dies gives its ids back.
const uidLocks = "/run/zarf-planner-render"

// systemdUIDs is where systemd holds the ids of its DynamicUser=
// services: an id named there is not taken.
const systemdUIDs = "/run/systemd/dynamic-uid"

// uidLease is an id taken for one renderer process; release gives it
// back once the process ended.
type uidLease struct {
	id   uint32
	lock *os.File
}

func (l *uidLease) release() {
	if l != nil {
		l.lock.Close()
	}
}

// takeUID takes an id of the range for a renderer process: one whose
// lock it holds, that neither /etc/passwd nor /etc/group names, that
// systemd holds for none of its services, and with which no process
// runs (as its real, effective, saved or file-system user or group).
func takeUID() (*uidLease, error) {
	dir, err := lockDir()
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	used, err := idsInUse()
	if err != nil {
		return nil, err
	}
	n := LastUID - FirstUID + 1
	start := rand.IntN(n)
	for i := range n {
		id := uint32(FirstUID + (start+i)%n)
		if used[id] {
			continue
		}
		if _, err := os.Lstat(filepath.Join(systemdUIDs, strconv.Itoa(int(id)))); err == nil {
			continue
		}
		fd, err := unix.Openat(int(dir.Fd()), strconv.Itoa(int(id)), unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, fmt.Errorf("locking id %d in %s: %w", id, uidLocks, err)
		}
		lock := os.NewFile(uintptr(fd), filepath.Join(uidLocks, strconv.Itoa(int(id))))
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			lock.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				continue
			}
			return nil, fmt.Errorf("locking id %d in %s: %w", id, uidLocks, err)
		}
		// A daemon's renderer runs as id only while the daemon holds
		// its lock, so no renderer started with it since the processes
		// were read.
		return &uidLease{id: id, lock: lock}, nil
	}
	return nil, fmt.Errorf("no user id of %d–%d is free for a chart renderer (each renderer of root's runs as one no other process has): end the processes that use them or free the names in /etc/passwd and /etc/group", FirstUID, LastUID)
}

// lockDir opens (making it if need be) the directory of the locks, and
// checks that root alone may change it.
func lockDir() (*os.File, error) {
	if err := os.Mkdir(uidLocks, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("making %s, where a chart renderer's user id is locked: %w", uidLocks, err)
	}
	fd, err := unix.Open(uidLocks, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening %s, where a chart renderer's user id is locked: %w", uidLocks, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Uid != 0 || st.Mode&0o022 != 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("%s, where a chart renderer's user id is locked, is owned by uid %d with mode %o: it must be root's and writable by root alone; remove it (zarf-planner makes it again)", uidLocks, st.Uid, st.Mode&0o7777)
	}
	return os.NewFile(uintptr(fd), uidLocks), nil
}

// idsInUse are the ids of the range that /etc/passwd or /etc/group name
// or a process runs with.
func idsInUse() (map[uint32]bool, error) {
	used := map[uint32]bool{}
	for _, file := range []string{"/etc/passwd", "/etc/group"} {
		b, err := os.ReadFile(file)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s to find a free user id for a chart renderer: %w", file, err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			// name:password:id:...
			if f := strings.Split(line, ":"); len(f) > 2 {
				if id, err := strconv.ParseUint(f[2], 10, 32); err == nil && inRange(uint32(id)) {
					used[uint32(id)] = true
				}
			}
		}
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing the processes to find a free user id for a chart renderer: %w", err)
	}
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		for _, id := range processIDs(p.Name()) {
			if inRange(id) {
				used[id] = true
			}
		}
	}
	return used, nil
}

// processIDs are the user and group ids (real, effective, saved, file
// system) process pid runs with; none when it ended.
func processIDs(pid string) []uint32 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return nil
	}
	var ids []uint32
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "Uid:")
		if !ok {
			rest, ok = strings.CutPrefix(sc.Text(), "Gid:")
		}
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if id, err := strconv.ParseUint(f, 10, 32); err == nil {
				ids = append(ids, uint32(id))
			}
		}
	}
	return ids
}

func inRange(id uint32) bool { return id >= FirstUID && id <= LastUID }
