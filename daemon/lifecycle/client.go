package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-plugin"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// DaemonBinary is the daemon's executable name, looked up in PATH when no
// explicit path is given.
const DaemonBinary = "zarf-planner"

// poll is how often a caller looks again at a lock or a starting daemon.
const poll = 20 * time.Millisecond

// Options say where the daemon lives and how to start it.
type Options struct {
	// StateDir is the daemon's state directory ("" = DefaultStateDir).
	StateDir string
	// DaemonPath is the daemon binary; "" looks up DaemonBinary in PATH.
	DaemonPath string
	// IdleTimeout is passed to a daemon this client starts (0 = its default).
	IdleTimeout time.Duration
	// StartTimeout bounds waiting for a started daemon to publish its
	// state (0 = 15s); the caller's context bounds it too.
	StartTimeout time.Duration
	// Cache is the cache directory the call's request uses (absolute; ""
	// when it uses none). A daemon this call starts opens it while it
	// starts (EnvOpenCache), so the request finds it open; it opens no
	// other cache until a request uses it, so it locks no cache another
	// daemon's callers use (a daemon of its own state and cache
	// directories leaves the default cache free).
	Cache string
}

// EnvOpenCache names, in the environment of a daemon a caller starts, the
// cache directory to open while starting (Options.Cache; `serve
// --open-cache` by hand). It is the environment, not a flag, so that a
// daemon binary of an older release, which knows no such flag, still
// starts and is then named as of another release, not failed on an
// unknown flag.
const EnvOpenCache = "ZARF_PLANNER_OPEN_CACHE"

// Conn is a connection to a running daemon, proved to be this user's
// daemon of this build.
type Conn struct {
	Planner contract.Planner
	State   State
	// Started is true when this call started the daemon.
	Started bool
	// Replaced names the daemon of another build this call asked to
	// exit before it started its own ("" when none).
	Replaced string
	// StateDir is the daemon's state directory (its log is there).
	StateDir string
	conn     *grpc.ClientConn
	proc     *daemonProc
	// raw is the proved connection, handed to gRPC once (used).
	raw  net.Conn
	used atomic.Bool
	// redialed is set when gRPC needed a second connection: the first
	// one, the only one proved, was gone.
	redialed atomic.Bool
}

// Close drops the connection. It never asks the daemon to stop: the
// daemon is shared by every caller.
func (c *Conn) Close() error {
	c.proc.close()
	var err error
	if c.conn != nil {
		err = c.conn.Close()
	}
	if c.raw != nil && c.used.CompareAndSwap(false, true) {
		err = errors.Join(err, c.raw.Close())
	}
	return err
}

// Unprocessed reports whether err, returned by a call on c, means the
// daemon never began the request, so it may be made again on a fresh
// Connect: the daemon refused it while draining (an idle exit, SIGTERM,
// a replacement), or the connection was gone before the request reached
// the daemon (gRPC opens a second connection only for a request the
// daemon has not processed, and c refuses to open one). A request the
// daemon was working on when it died is not unprocessed.
func (c *Conn) Unprocessed(err error) bool {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Unavailable {
		return false
	}
	return st.Message() == Draining || c.redialed.Load()
}

// Lost reports whether err, returned by a call on c, means the daemon went
// away while the request was with it (killed, crashed): no answer came,
// and the connection is gone. Nothing a daemon does for a request is
// more than reading and caching, so such a request may be made once more
// of a fresh daemon.
func (c *Conn) Lost(err error) bool {
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.Unavailable && st.Message() != Draining
}

// Connect reattaches to the daemon of the state directory, or starts one
// when none answers, within ctx: its deadline bounds every wait (a lock,
// a daemon that does not answer, a daemon starting). Concurrent callers
// start exactly one daemon: starting happens under a flock, and whoever
// gets the lock second finds the first one's daemon.
//
// A daemon that still holds its daemon lock is never cleared away: when
// it is draining or of another build (then it is asked to drain, through
// its pidfd) Connect waits for its lock and starts the next daemon; when
// it does not answer (stopped, busy) Connect waits for it to answer or
// its lock to be free, until ctx ends. A socket that the kernel says
// another process serves than the state file names (another user's, or
// a daemon in another pid namespace) is refused at once, before any
// request, and nothing is signalled: see refused.
func Connect(ctx context.Context, opts Options) (*Conn, error) {
	dir, err := stateDirPath(opts.StateDir)
	if err != nil {
		return nil, err
	}
	sd, err := openStateDir(dir, true)
	if err != nil {
		return nil, err
	}
	defer sd.Close()
	c, err := sd.attach(ctx)
	if err == nil {
		return c, nil
	}
	release(err)
	if refused(err) {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, sd.gaveUp(ctx, err)
	}
	lock, err := sd.LockContext(ctx, StartLock, poll)
	if err != nil {
		return nil, fmt.Errorf("waiting for the daemon start lock %s: %w", filepath.Join(sd.Path(), StartLock), err)
	}
	defer lock.Unlock()
	var daemon, replaced string
	signalled := 0
	for {
		// Another caller may have started one while we waited.
		c, aerr := sd.attach(ctx)
		if aerr == nil {
			return c, nil
		}
		if refused(aerr) {
			return nil, aerr
		}
		if ctx.Err() != nil {
			return nil, sd.gaveUp(ctx, aerr)
		}
		dl, free, err := sd.TryLock(DaemonLock)
		if err != nil {
			return nil, &StateDirError{Dir: sd.Path(), Err: err}
		}
		if free {
			// No daemon lives: what is left is stale.
			err := sd.clearStale()
			dl.Unlock()
			if err != nil {
				return nil, &StateDirError{Dir: sd.Path(), Err: err}
			}
			if daemon == "" {
				if daemon, err = FindDaemon(opts.DaemonPath); err != nil {
					return nil, err
				}
			}
			pid, err := start(ctx, sd, daemon, opts)
			if err != nil {
				return nil, err
			}
			c, err := sd.attach(ctx)
			var ob *otherBuild
			if errors.As(err, &ob) {
				// The binary itself is of another build: starting it again
				// would only replace it again. It is asked to exit.
				_ = ob.proc.signal(unix.SIGTERM)
				release(err)
				return nil, &MismatchError{Path: daemon, Version: ob.version, Build: ob.theirs}
			}
			if err != nil {
				return nil, fmt.Errorf("the daemon started (pid %d) but does not answer: %w; see %s", pid, err, filepath.Join(sd.Path(), LogFile))
			}
			c.Started = true
			c.Replaced = replaced
			return c, nil
		}
		// A daemon holds its lock. One of another build (proved by the
		// kernel) is asked to drain and exit; then, like a draining
		// one, it is waited for.
		var ob *otherBuild
		if errors.As(aerr, &ob) && signalled != ob.proc.pid {
			if err := ob.proc.signal(unix.SIGTERM); err != nil {
				ob.proc.close()
				return nil, err
			}
			signalled = ob.proc.pid
			replaced = fmt.Sprintf("daemon pid %d, %s", ob.proc.pid, releaseName(ob.version, ob.theirs))
		}
		release(aerr)
		select {
		case <-ctx.Done():
			return nil, sd.gaveUp(ctx, aerr)
		case <-time.After(poll):
		}
	}
}

// refused reports whether err, from attach, is final: a state directory
// that cannot be trusted, or a socket the kernel says another process or
// user serves (errImpostor). Waiting changes neither: an impostor keeps
// the socket, and its daemon lock, as long as it likes, and starting a
// daemon beside it would mean clearing away a socket someone serves.
// Connect returns such an error at once, whatever its deadline.
func refused(err error) bool {
	var sr *StateDirError
	var imp *errImpostor
	return errors.As(err, &sr) || errors.As(err, &imp)
}

// gaveUp explains why Connect stopped waiting: ctx ended while a daemon
// held its lock without answering as one of this build.
func (sd *stateDir) gaveUp(ctx context.Context, last error) error {
	var why string
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		why = "within the timeout"
	default:
		why = "before the call was interrupted"
	}
	return fmt.Errorf("the daemon of %s (%s, which holds %s) did not become ready %s (last: %v); it was left running: it may be stopped, busy or finishing its requests; see its log %s",
		sd.Path(), sd.holder(), filepath.Join(sd.Path(), DaemonLock), why, last, filepath.Join(sd.Path(), LogFile))
}

// Attach reattaches to the daemon of the state directory if one of this
// build answers; it never starts one. A state directory that does not
// exist yields fs.ErrNotExist; one that cannot be trusted, a
// *StateDirError.
func Attach(ctx context.Context, stateDir string) (*Conn, error) {
	dir, err := stateDirPath(stateDir)
	if err != nil {
		return nil, err
	}
	sd, err := openStateDir(dir, false)
	if err != nil {
		return nil, err
	}
	defer sd.Close()
	c, err := sd.attach(ctx)
	release(err)
	return c, err
}

func stateDirPath(dir string) (string, error) {
	if dir == "" {
		return DefaultStateDir()
	}
	return filepath.Abs(dir)
}

// FindDaemon resolves the daemon binary: explicit, else PATH. The program
// must be one nobody but this user or root can change (privdir.Executable):
// the daemon runs with this user's rights. Its error says everywhere it
// looked.
func FindDaemon(explicit string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("zarf-planner daemon binary not found at daemon_path %s: %w", explicit, err)
		}
		p, err := privdir.Executable(explicit)
		if err != nil {
			return "", fmt.Errorf("refusing the daemon binary at daemon_path %s: %w", explicit, err)
		}
		return p, nil
	}
	p, err := exec.LookPath(DaemonBinary)
	if err != nil {
		return "", fmt.Errorf("zarf-planner daemon binary not found: no daemon_path was given and %q is not in PATH (%s); install it or set daemon_path", DaemonBinary, os.Getenv("PATH"))
	}
	r, err := privdir.Executable(p)
	if err != nil {
		return "", fmt.Errorf("refusing the daemon binary %s found in PATH: %w", p, err)
	}
	return r, nil
}

// otherBuild is a live daemon of another build or protocol, proved by the
// kernel: Connect asks it to drain and exit before a new one starts.
type otherBuild struct {
	proc            *daemonProc
	theirs, version string
}

func (e *otherBuild) Error() string {
	return fmt.Sprintf("daemon pid %d is %s, this client is %s", e.proc.pid, releaseName(e.version, e.theirs), releaseName(buildinfo.Version, buildinfo.ID))
}

// releaseName names a release and build for messages, such as "zarf-planner
// 0.2.0 (build 1a2b3c)"; a daemon older than the version field has none.
func releaseName(version, build string) string {
	if version == "" {
		version = "of an unknown version"
	}
	return fmt.Sprintf("zarf-planner %s (build %s)", version, build)
}

// MismatchError is a daemon binary of another build than its client: the
// two must come from one release (one collection version).
type MismatchError struct {
	// Path is the daemon binary; Version and Build are what it reported.
	Path, Version, Build string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("the daemon binary %s is %s, but this client is %s, and both must come from one release: "+
		"unset daemon_path to run the zarf-planner installed beside this module, or point it at zarf-planner %s",
		e.Path, releaseName(e.Version, e.Build), releaseName(buildinfo.Version, buildinfo.ID), buildinfo.Version)
}

// release closes the pidfd an otherBuild error holds.
func release(err error) {
	var ob *otherBuild
	if errors.As(err, &ob) {
		ob.proc.close()
	}
}

// errDraining is a daemon that is shutting down: it takes no new request.
type errDraining struct{ pid int }

func (e *errDraining) Error() string {
	return fmt.Sprintf("daemon pid %d is shutting down", e.pid)
}

// attach reattaches to the daemon named by the state file, proved by the
// kernel, and checks that it answers as one of this build.
func (sd *stateDir) attach(ctx context.Context) (*Conn, error) {
	c, st, err := sd.dial(ctx)
	if err != nil {
		return nil, err
	}
	if st.BuildID != buildinfo.ID {
		ob := &otherBuild{proc: c.proc, theirs: st.BuildID, version: st.Version}
		c.proc = nil
		c.Close()
		return nil, ob
	}
	return c, nil
}

// dial connects to the daemon named by the state file, of any build,
// proves it (dialDaemon) and asks its status.
func (sd *stateDir) dial(ctx context.Context) (*Conn, *contract.Status, error) {
	s, err := sd.readState()
	if err != nil {
		return nil, nil, err
	}
	raw, proc, err := sd.dialDaemon(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	if s.ProtocolVersion != contract.ProtocolVersion {
		raw.Close()
		return nil, nil, &otherBuild{proc: proc, theirs: fmt.Sprintf("%s (protocol %d, not %d)", s.BuildID, s.ProtocolVersion, contract.ProtocolVersion)}
	}
	c := &Conn{State: *s, StateDir: sd.Path(), proc: proc, raw: raw}
	dialer := func(context.Context, string) (net.Conn, error) {
		if c.used.CompareAndSwap(false, true) {
			return raw, nil
		}
		c.redialed.Store(true)
		return nil, fmt.Errorf("the connection to daemon pid %d was lost", s.Pid)
	}
	opts := append(contract.WindowDialOptions(),
		grpc.WithContextDialer(dialer),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32), grpc.MaxCallSendMsgSize(math.MaxInt32)))
	gc, err := grpc.NewClient("passthrough:///zarf-planner-daemon", opts...)
	fail := func(err error) (*Conn, *contract.Status, error) {
		c.Close()
		return nil, nil, err
	}
	if err != nil {
		return fail(fmt.Errorf("connecting to daemon pid %d: %w", s.Pid, err))
	}
	c.conn = gc
	// The plugin's own adapter gives the Planner; go-plugin's client
	// (its reattach, broker and stdio streams) is not used: it dials an
	// address it was told, and waits on the daemon without the caller's
	// deadline.
	gp, ok := contract.Plugins(nil)[contract.PluginName].(plugin.GRPCPlugin)
	if !ok {
		return fail(errors.New("the contract's plugin does not speak gRPC"))
	}
	p, err := gp.GRPCClient(ctx, nil, gc)
	if err != nil {
		return fail(err)
	}
	if c.Planner, ok = p.(contract.Planner); !ok {
		return fail(fmt.Errorf("the contract dispensed %T, not a planner", p))
	}
	st, err := c.Planner.Status(ctx)
	if err != nil {
		if s, ok := status.FromError(err); ok && s.Code() == codes.Unavailable && s.Message() == Draining {
			return fail(&errDraining{pid: c.State.Pid})
		}
		return fail(fmt.Errorf("daemon pid %d does not answer at %s: %w", c.State.Pid, c.State.Addr, err))
	}
	if int(st.Pid) != c.State.Pid {
		return fail(&errImpostor{fmt.Sprintf("the daemon at %s says it is pid %d, but the kernel says pid %d (is it in another pid namespace?); it was asked nothing else", c.State.Addr, st.Pid, c.State.Pid)})
	}
	return c, st, nil
}

// start launches the daemon detached (its own session, stdin from
// /dev/null, stdout and stderr to the log file, an allow-listed
// environment) and waits until it publishes its state.
func start(ctx context.Context, sd *stateDir, daemon string, opts Options) (int, error) {
	logPath := filepath.Join(sd.Path(), LogFile)
	logf, err := sd.OpenFile(LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, &StateDirError{Dir: sd.Path(), Err: fmt.Errorf("opening the daemon log: %w", err)}
	}
	defer logf.Close()
	args := []string{"serve", "--state-dir", sd.Path()}
	if opts.IdleTimeout > 0 {
		args = append(args, "--idle-timeout", opts.IdleTimeout.String())
	}
	cmd := exec.Command(daemon, args...)
	cmd.Env = daemonEnv(os.Environ())
	if opts.Cache != "" {
		cmd.Env = append(cmd.Env, EnvOpenCache+"="+opts.Cache)
	}
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
	// A daemon publishes its state a few milliseconds after it starts:
	// look often, so the first request does not wait out a long tick.
	tick := time.NewTicker(startPoll)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return 0, fmt.Errorf("the daemon %s exited before serving (%v): %s", daemon, err, tail(sd))
		case <-deadline.C:
			return 0, fmt.Errorf("the daemon %s (pid %d) published no state within %s: %s", daemon, cmd.Process.Pid, limit, tail(sd))
		case <-ctx.Done():
			return 0, fmt.Errorf("the daemon %s (pid %d) had not published its state in %s when the call ended: %w", daemon, cmd.Process.Pid, logPath, ctx.Err())
		case <-tick.C:
			if s, err := sd.readState(); err == nil && s.Pid == cmd.Process.Pid {
				return s.Pid, nil
			}
		}
	}
}

// startPoll is how often a caller that started the daemon looks for its
// state file (one small read each time).
const startPoll = 2 * time.Millisecond

// keptEnv are the variables a caller passes on to the daemon it starts;
// keptPrefixes, the prefixes. Nothing else of a caller's environment
// reaches the daemon, which serves every later caller: go-plugin's
// PLUGIN_* settings (TLS, multiplexing, socket group) and the handshake
// cookie would change how it serves everyone, KUBECONFIG is never the
// daemon's to use (callers name theirs), and the rest is the caller's.
//
//   - PATH, HOME, USER, LOGNAME, TMPDIR, XDG_*: where the daemon finds
//     programs (a kubeconfig's exec credential plugin), its default cache
//     (XDG_CACHE_HOME, HOME) and temporary space;
//   - LANG, LANGUAGE, LC_*, TZ: the locale and time zone of its log;
//   - ZARF_PLANNER_CACHE_DIR: the default cache directory;
//   - HTTPS_PROXY, HTTP_PROXY, NO_PROXY (either case), SSL_CERT_FILE,
//     SSL_CERT_DIR: how it reaches a cluster's API server.
var (
	keptEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "LANG", "LANGUAGE", "TZ",
		"ZARF_PLANNER_CACHE_DIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
		"SSL_CERT_FILE", "SSL_CERT_DIR"}
	keptPrefixes = []string{"LC_", "XDG_"}
)

// daemonEnv is the environment a daemon starts with: the allow-listed
// variables of environ, and the go-plugin handshake cookie (this build's,
// never the caller's).
func daemonEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		keep := false
		for _, e := range keptEnv {
			keep = keep || k == e
		}
		for _, p := range keptPrefixes {
			keep = keep || strings.HasPrefix(k, p)
		}
		if keep {
			out = append(out, kv)
		}
	}
	return append(out, contract.Handshake.MagicCookieKey+"="+contract.Handshake.MagicCookieValue)
}

// tail returns the last lines of the daemon log for an error message.
func tail(sd *stateDir) string {
	path := filepath.Join(sd.Path(), LogFile)
	b, err := sd.ReadFile(LogFile)
	if err != nil {
		return "no log at " + path
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return "last lines of " + path + ": " + strings.Join(lines, " | ")
}

// statusTimeout bounds `daemon status` and `daemon stop` asking a daemon
// that does not answer (a stopped one).
const statusTimeout = 5 * time.Second

// Status reports the daemon of a state directory: its published state and
// what it answers over its socket. It starts nothing.
func Status(ctx context.Context, dir string) (*State, *contract.Status, error) {
	sd, err := openStateDir(dir, false)
	if err != nil {
		return nil, nil, err
	}
	defer sd.Close()
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	c, st, err := sd.dial(ctx)
	if err != nil {
		release(err)
		return nil, nil, err
	}
	defer c.Close()
	return &c.State, st, nil
}

// Stop asks the daemon of a state directory to drain and exit (SIGTERM
// through a pidfd, sent only to the process the kernel says serves the
// socket the state file names, as this user) and waits up to limit for
// it to exit. It returns the pid stopped.
func Stop(ctx context.Context, dir string, limit time.Duration) (int, error) {
	sd, err := openStateDir(dir, false)
	if err != nil {
		return 0, err
	}
	defer sd.Close()
	s, err := sd.readState()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if pid := sd.Holder(DaemonLock); pid > 0 {
				return 0, fmt.Errorf("the daemon of %s (pid %d) is already shutting down: it removed its state file and still holds %s until it exits", sd.Path(), pid, filepath.Join(sd.Path(), DaemonLock))
			}
			return 0, fmt.Errorf("no daemon runs for %s: it has no state file", sd.Path())
		}
		return 0, err
	}
	dctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	raw, proc, err := sd.dialDaemon(dctx, s)
	if err != nil {
		return 0, err
	}
	raw.Close()
	defer proc.close()
	if err := proc.signal(unix.SIGTERM); err != nil {
		return proc.pid, err
	}
	wctx, wcancel := context.WithTimeout(ctx, limit)
	defer wcancel()
	if proc.wait(wctx) != nil {
		return proc.pid, fmt.Errorf("daemon pid %d is still running after %s (it finishes in-flight requests first)", proc.pid, limit)
	}
	return proc.pid, nil
}
