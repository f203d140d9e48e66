// Package lifecycle finds, starts and reattaches to the zarf-planner daemon
// of a state directory, and keeps that directory's state file honest. The
// daemon publishes its reattach address in a 0600 state file; clients
// reattach through it, and the first client (holding a flock) starts the
// daemon when none answers. It knows the wire contract but nothing of
// planning, so the Ansible module can use it.
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

// EnsureStateDir creates dir (0700) if needed and refuses one that others
// can write to, since whoever writes the state file decides which socket
// clients talk to.
func EnsureStateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating state directory %s: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("checking state directory %s: %w", dir, err)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("state directory %s is writable by group or others (mode %v); run chmod 700 on it or choose another with --state-dir or %s", dir, fi.Mode().Perm(), EnvStateDir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("state directory %s belongs to uid %d, not to this user (uid %d); choose another with --state-dir or %s", dir, st.Uid, os.Geteuid(), EnvStateDir)
	}
	return nil
}

// ReadState reads the state file of dir. It returns fs.ErrNotExist when no
// daemon has published one.
func ReadState(dir string) (*State, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("state file %s is corrupt: %w", filepath.Join(dir, StateFile), err)
	}
	if s.Pid <= 0 || s.Addr == "" {
		return nil, fmt.Errorf("state file %s is incomplete (pid %d, addr %q)", filepath.Join(dir, StateFile), s.Pid, s.Addr)
	}
	return &s, nil
}

// WriteState publishes s atomically (write to a temporary file, then
// rename) with mode 0600.
func WriteState(dir string, s State) (err error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, stateTemp)
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("writing state file: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, os.Remove(tmp))
		}
	}()
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("securing state file: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, StateFile)); err != nil {
		return fmt.Errorf("publishing state file: %w", err)
	}
	return nil
}

// RemoveState removes the state file if it still names pid, so a daemon
// that exits late never removes its successor's state.
func RemoveState(dir string, pid int) error {
	s, err := ReadState(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil && s.Pid != pid {
		return nil
	}
	if err := os.Remove(filepath.Join(dir, StateFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
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
