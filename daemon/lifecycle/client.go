package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/colonel-byte/zarf-planner/daemon/contract"
	"github.com/colonel-byte/zarf-planner/daemon/contract/plannerpb"
)

// DaemonBinary is the daemon's executable name, looked up in PATH when no
// explicit path is given.
const DaemonBinary = "zarf-planner"

// Options say where the daemon lives and how to start it.
type Options struct {
	// StateDir is the daemon's state directory ("" = DefaultStateDir).
	StateDir string
	// DaemonPath is the daemon binary; "" looks up DaemonBinary in PATH.
	DaemonPath string
	// IdleTimeout is passed to a daemon this client starts (0 = its default).
	IdleTimeout time.Duration
	// StartTimeout bounds waiting for a started daemon to publish its state.
	StartTimeout time.Duration
}

// Conn is a connection to a running daemon.
type Conn struct {
	Planner contract.Planner
	State   State
	// Started is true when this call started the daemon.
	Started bool
	// StateDir is the daemon's state directory (its log is there).
	StateDir string
	conn     *grpc.ClientConn
}

// Close drops the connection. It never asks the daemon to stop: go-plugin's
// own Close and Kill would call the controller's Shutdown, and the daemon is
// shared by every caller.
func (c *Conn) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// Connect reattaches to the daemon of the state directory, or starts one
// when none answers. Concurrent callers start exactly one daemon: starting
// happens under a flock, and whoever gets the lock second finds the first
// one's daemon.
func Connect(ctx context.Context, opts Options) (*Conn, error) {
	dir := opts.StateDir
	if dir == "" {
		var err error
		if dir, err = DefaultStateDir(); err != nil {
			return nil, err
		}
	}
	if err := EnsureStateDir(dir); err != nil {
		return nil, err
	}
	if c, err := attach(ctx, dir); err == nil {
		return c, nil
	}
	daemon, err := FindDaemon(opts.DaemonPath)
	if err != nil {
		return nil, err
	}
	lock := flock.New(filepath.Join(dir, StartLock))
	locked, err := lock.TryLockContext(ctx, 25*time.Millisecond)
	if err != nil || !locked {
		return nil, fmt.Errorf("waiting for the daemon start lock %s: %w", lock.Path(), errors.Join(err, ctx.Err()))
	}
	defer lock.Unlock()
	// Another caller may have started one while we waited for the lock.
	if c, err := attach(ctx, dir); err == nil {
		return c, nil
	}
	if err := retire(ctx, dir); err != nil {
		return nil, err
	}
	pid, err := start(ctx, daemon, dir, opts)
	if err != nil {
		return nil, err
	}
	c, err := attach(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("the daemon started (pid %d) but does not answer: %w; see %s", pid, err, filepath.Join(dir, LogFile))
	}
	c.Started = true
	return c, nil
}

// Attach reattaches to the daemon of the state directory if one of this
// build answers; it never starts one.
func Attach(ctx context.Context, stateDir string) (*Conn, error) {
	dir := stateDir
	if dir == "" {
		var err error
		if dir, err = DefaultStateDir(); err != nil {
			return nil, err
		}
	}
	return attach(ctx, dir)
}

// FindDaemon resolves the daemon binary: explicit, else PATH. Its error
// says everywhere it looked.
func FindDaemon(explicit string) (string, error) {
	if explicit != "" {
		fi, err := os.Stat(explicit)
		switch {
		case err != nil:
			return "", fmt.Errorf("zarf-planner daemon binary not found at daemon_path %s: %w", explicit, err)
		case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
			return "", fmt.Errorf("zarf-planner daemon binary at daemon_path %s is not an executable file (mode %v)", explicit, fi.Mode())
		}
		return filepath.Abs(explicit)
	}
	p, err := exec.LookPath(DaemonBinary)
	if err != nil {
		return "", fmt.Errorf("zarf-planner daemon binary not found: no daemon_path was given and %q is not in PATH (%s); install it or set daemon_path", DaemonBinary, os.Getenv("PATH"))
	}
	return filepath.Abs(p)
}

// attach reattaches to the daemon named by the state file and checks that
// it answers as one of this build.
func attach(ctx context.Context, dir string) (*Conn, error) {
	c, st, err := dial(ctx, dir)
	if err != nil {
		return nil, err
	}
	if st.BuildId != contract.BuildID {
		_ = c.Close()
		return nil, &buildMismatch{pid: c.State.Pid, theirs: st.BuildId}
	}
	return c, nil
}

// dial reattaches to the daemon named by the state file, of any build, and
// verifies over the socket that it is that daemon.
func dial(ctx context.Context, dir string) (*Conn, *plannerpb.StatusResponse, error) {
	s, err := ReadState(dir)
	if err != nil {
		return nil, nil, err
	}
	if !Alive(s.Pid) {
		return nil, nil, fmt.Errorf("daemon pid %d is gone", s.Pid)
	}
	if s.ProtocolVersion != contract.ProtocolVersion {
		return nil, nil, fmt.Errorf("daemon pid %d speaks protocol %d, not %d", s.Pid, s.ProtocolVersion, contract.ProtocolVersion)
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  contract.Handshake,
		Plugins:          contract.Plugins(nil),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		GRPCDialOptions:  contract.WindowDialOptions(),
		Logger:           hclog.NewNullLogger(),
		Reattach: &plugin.ReattachConfig{
			Protocol:        plugin.ProtocolGRPC,
			ProtocolVersion: s.ProtocolVersion,
			Addr:            &net.UnixAddr{Net: s.Network, Name: s.Addr},
			Pid:             s.Pid,
			// Test mode keeps go-plugin from ever killing the process.
			Test: true,
		},
	})
	proto, err := client.Client()
	if err != nil {
		return nil, nil, fmt.Errorf("reattaching to daemon pid %d at %s: %w", s.Pid, s.Addr, err)
	}
	gc, ok := proto.(*plugin.GRPCClient)
	if !ok {
		return nil, nil, fmt.Errorf("daemon pid %d did not speak gRPC", s.Pid)
	}
	raw, err := proto.Dispense(contract.PluginName)
	if err != nil {
		_ = gc.Conn.Close()
		return nil, nil, fmt.Errorf("dispensing the planner from daemon pid %d: %w", s.Pid, err)
	}
	p, ok := raw.(contract.Planner)
	if !ok {
		_ = gc.Conn.Close()
		return nil, nil, fmt.Errorf("daemon pid %d dispensed %T, not a planner", s.Pid, raw)
	}
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	st, err := p.Status(sctx)
	if err != nil {
		_ = gc.Conn.Close()
		return nil, nil, fmt.Errorf("daemon pid %d does not answer at %s: %w", s.Pid, s.Addr, err)
	}
	if int(st.Pid) != s.Pid {
		_ = gc.Conn.Close()
		return nil, nil, fmt.Errorf("the socket %s is answered by pid %d, not the daemon pid %d of the state file", s.Addr, st.Pid, s.Pid)
	}
	return &Conn{Planner: p, State: *s, StateDir: dir, conn: gc.Conn}, st, nil
}

// buildMismatch is a live daemon of another build: retire asks it to drain
// and exit before a new one starts.
type buildMismatch struct {
	pid    int
	theirs string
}

func (e *buildMismatch) Error() string {
	return fmt.Sprintf("daemon pid %d is build %s, this client is build %s", e.pid, e.theirs, contract.BuildID)
}

// retire clears the way for a new daemon, holding the start lock: a state
// file whose daemon is gone or silent is removed; a live daemon of another
// build, whose identity attach verified over its own socket, is sent
// SIGTERM (it drains, then exits) and awaited.
func retire(ctx context.Context, dir string) error {
	s, err := ReadState(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil && Alive(s.Pid) {
		var bm *buildMismatch
		if _, aerr := attach(ctx, dir); errors.As(aerr, &bm) && bm.pid == s.Pid {
			if err := syscall.Kill(s.Pid, syscall.SIGTERM); err == nil {
				waitGone(ctx, s.Pid, 30*time.Second)
			}
		}
	}
	if err := os.Remove(filepath.Join(dir, StateFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing stale state file: %w", err)
	}
	return nil
}

func waitGone(ctx context.Context, pid int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for Alive(pid) && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
}

// start launches the daemon detached (its own session, stdin from
// /dev/null, stdout and stderr to the log file) and waits until it
// publishes its state.
func start(ctx context.Context, daemon, dir string, opts Options) (int, error) {
	logPath := filepath.Join(dir, LogFile)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("opening the daemon log: %w", err)
	}
	defer logf.Close()
	args := []string{"serve", "--state-dir", dir}
	if opts.IdleTimeout > 0 {
		args = append(args, "--idle-timeout", opts.IdleTimeout.String())
	}
	cmd := exec.Command(daemon, args...)
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting the daemon %s: %w", daemon, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	limit := opts.StartTimeout
	if limit == 0 {
		limit = 15 * time.Second
	}
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return 0, fmt.Errorf("the daemon %s exited before serving (%v): %s", daemon, err, tail(logPath))
		case <-deadline.C:
			return 0, fmt.Errorf("the daemon %s (pid %d) published no state within %s: %s", daemon, cmd.Process.Pid, limit, tail(logPath))
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
			if s, err := ReadState(dir); err == nil && s.Pid == cmd.Process.Pid {
				return s.Pid, nil
			}
		}
	}
}

// tail returns the last lines of a log for an error message.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "no log at " + path
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return "last lines of " + path + ": " + strings.Join(lines, " | ")
}

// Status reports the daemon of a state directory: its published state and
// what it answers over its socket. It starts nothing.
func Status(ctx context.Context, dir string) (*State, *plannerpb.StatusResponse, error) {
	c, st, err := dial(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	return &c.State, st, nil
}

// Stop asks the daemon of a state directory to drain and exit (SIGTERM, sent
// only to a pid that answered over the socket as that daemon) and waits up
// to limit for it to go. It returns the pid stopped.
func Stop(ctx context.Context, dir string, limit time.Duration) (int, error) {
	c, st, err := dial(ctx, dir)
	if err != nil {
		return 0, err
	}
	_ = c.Close()
	pid := int(st.Pid)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return pid, fmt.Errorf("signalling daemon pid %d: %w", pid, err)
	}
	waitGone(ctx, pid, limit)
	if Alive(pid) {
		return pid, fmt.Errorf("daemon pid %d is still running after %s (it finishes in-flight requests first)", pid, limit)
	}
	return pid, nil
}
