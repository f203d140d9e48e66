// Package lifecycle finds, starts and reattaches to the zarf-planner daemon
// of a state directory, and keeps that directory's state file honest. The
// daemon publishes its reattach address in a 0600 state file; clients
// reattach through it, and the first client (holding a flock) starts the
// daemon when none answers. It knows the wire contract but nothing of
// planning, so the Ansible module can use it.
//
// Trust: the state directory is opened once and checked (package
// privdir); the daemon at the other end of the socket is proved by the
// kernel (SO_PEERCRED: this user, and the pid the state file names) and
// signalled only through a pidfd; the daemon refuses callers of another
// user the same way. Liveness: the daemon holds daemon.lock for its whole
// life, so a state file whose daemon still holds the lock is never
// removed, and the next daemon starts only once the lock is free.
package lifecycle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/privdir"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// EnvStateDir overrides the default state directory.
const EnvStateDir = "ZARF_PLANNER_STATE_DIR"

// Files inside a state directory.
const (
	StateFile  = "daemon.json" // the running daemon's reattach config
	StartLock  = "start.lock"  // held by a client while it starts a daemon
	DaemonLock = "daemon.lock" // held by the daemon for its whole life
	LogFile    = "daemon.log"  // the daemon's stdout and stderr
	SocketDir  = "sockets"     // where the daemon's unix socket lives
	stateTemp  = "daemon.json.tmp"
)

// State is what a running daemon publishes about itself.
type State struct {
	Pid             int       `json:"pid"`
	Network         string    `json:"network"`
	Addr            string    `json:"addr"`
	ProtocolVersion int       `json:"protocol_version"`
	BuildID         string    `json:"build_id"`
	Started         time.Time `json:"started"`
}

// DefaultStateDir is $ZARF_PLANNER_STATE_DIR, else
// $XDG_RUNTIME_DIR/zarf-planner, else <user cache dir>/zarf-planner/run.
func DefaultStateDir() (string, error) {
	if d := os.Getenv(EnvStateDir); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "zarf-planner"), nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding a state directory (set %s): %w", EnvStateDir, err)
	}
	return filepath.Join(c, "zarf-planner", "run"), nil
}

// StateDirError is a state directory that cannot be trusted (another user
// owns or can change it or a directory above it, or a file in it), or
// cannot be opened. Callers stop there: they never fall back to working
// without the daemon because of it.
type StateDirError struct {
	Dir string
	Err error
}

func (e *StateDirError) Error() string {
	return fmt.Sprintf("state directory %s: %v; fix it or choose another with --state-dir (the module's state_dir) or %s", e.Dir, e.Err, EnvStateDir)
}

func (e *StateDirError) Unwrap() error { return e.Err }

// stateDir is a state directory opened once (see privdir): every file,
// lock and socket of it is reached through its descriptor.
type stateDir struct {
	*privdir.Dir
}

// openStateDir opens and checks the state directory at path, creating it
// (0700) when create is set. Without create, a directory that does not
// exist is reported as fs.ErrNotExist (no daemon ever ran there).
func openStateDir(path string, create bool) (*stateDir, error) {
	d, err := privdir.Open(path, create)
	if err != nil {
		if !create && errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, &StateDirError{Dir: path, Err: err}
	}
	return &stateDir{d}, nil
}

// EnsureStateDir creates dir (0700) if needed and refuses one that others
// can change (it, a directory above it), since whoever writes the state
// file decides which socket clients talk to.
func EnsureStateDir(dir string) error {
	sd, err := openStateDir(dir, true)
	if err != nil {
		return err
	}
	return sd.Close()
}

// ReadState reads the state file of dir. It returns fs.ErrNotExist when no
// daemon has published one.
func ReadState(dir string) (*State, error) {
	sd, err := openStateDir(dir, false)
	if err != nil {
		return nil, err
	}
	defer sd.Close()
	return sd.readState()
}

// readState reads and checks the state file: a file of this user that
// only this user can read, naming a unix socket in the sockets
// directory. Nothing else is dialled, whatever the file says.
func (sd *stateDir) readState() (*State, error) {
	b, err := sd.ReadFile(StateFile)
	if err != nil {
		return nil, sd.untrusted(err)
	}
	path := filepath.Join(sd.Path(), StateFile)
	var s State
	if err := strictjson.Unmarshal("state file "+path, b, &s); err != nil {
		return nil, fmt.Errorf("state file %s is corrupt: %w", path, err)
	}
	if s.Pid <= 0 || s.Addr == "" {
		return nil, fmt.Errorf("state file %s is incomplete (pid %d, addr %q)", path, s.Pid, s.Addr)
	}
	if s.Network != "unix" {
		return nil, fmt.Errorf("state file %s names network %q; a daemon listens only on a unix socket in %s", path, s.Network, filepath.Join(sd.Path(), SocketDir))
	}
	if _, err := sd.socketName(&s); err != nil {
		return nil, fmt.Errorf("state file %s: %w", path, err)
	}
	return &s, nil
}

// socketName is the name, in the sockets directory, of the socket s
// names; any other address is refused.
func (sd *stateDir) socketName(s *State) (string, error) {
	dir, name := filepath.Split(s.Addr)
	if filepath.Clean(dir) != filepath.Join(sd.Path(), SocketDir) || name == "" || name == "." || name == ".." {
		return "", fmt.Errorf("the socket %s is not in %s", s.Addr, filepath.Join(sd.Path(), SocketDir))
	}
	return name, nil
}

// WriteState publishes s atomically (write to a temporary file, then
// rename) with mode 0600.
func WriteState(dir string, s State) error {
	sd, err := openStateDir(dir, true)
	if err != nil {
		return err
	}
	defer sd.Close()
	return sd.writeState(s)
}

func (sd *stateDir) writeState(s State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := sd.WriteFile(StateFile, stateTemp, b); err != nil {
		return fmt.Errorf("publishing the state file: %w", err)
	}
	return nil
}

// RemoveState removes the state file if it still names pid, so a daemon
// that exits late never removes its successor's state.
func RemoveState(dir string, pid int) error {
	sd, err := openStateDir(dir, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer sd.Close()
	return sd.removeState(pid)
}

func (sd *stateDir) removeState(pid int) error {
	s, err := sd.readState()
	if errors.Is(err, fs.ErrNotExist) || (err == nil && s.Pid != pid) {
		return nil
	}
	return sd.Remove(StateFile)
}

// clearStale removes what a dead daemon left: its state file and every
// socket in the sockets directory. The caller holds the daemon lock, so
// no daemon is serving (a daemon takes the lock before it listens).
func (sd *stateDir) clearStale() error {
	if err := sd.Remove(StateFile); err != nil {
		return err
	}
	socks, err := sd.Sub(SocketDir, true)
	if err != nil {
		return err
	}
	defer socks.Close()
	names, err := socks.Names()
	if err != nil {
		return err
	}
	for _, n := range names {
		if st, err := socks.Lstat(n); err == nil && st.Mode&unix.S_IFMT == unix.S_IFSOCK {
			if err := socks.Remove(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// untrusted makes a refusal of something in the state directory (another
// user's file, a symlink, a file others can use) a StateDirError, which
// stops every caller; other errors pass.
func (sd *stateDir) untrusted(err error) error {
	if errors.Is(err, privdir.ErrUntrusted) {
		return &StateDirError{Dir: sd.Path(), Err: err}
	}
	return err
}

// holder names the pid recorded in the daemon lock, for messages.
func (sd *stateDir) holder() string {
	if pid := sd.Holder(DaemonLock); pid > 0 {
		return fmt.Sprintf("pid %d", pid)
	}
	return "unknown pid"
}

// Alive reports whether a process with pid exists and has not exited.
// An exited process its parent has not reaped yet (a zombie: a daemon
// started by a script that never waits for it) still answers kill(pid, 0),
// so on Linux its state in /proc decides.
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !exited(pid)
}

// exited reports whether /proc says pid is a zombie or dead; false when
// /proc cannot tell.
func exited(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// "pid (comm) S ...": comm may hold spaces and parentheses, so the
	// state is the first field after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}
