package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/contract/plannerpb"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// Draining is the message of the UNAVAILABLE answer a draining daemon gives
// to every new request, before any work: a client starts over with the
// next daemon (Conn.Unprocessed).
const Draining = "the zarf-planner daemon is shutting down; retry to start a fresh one"

// DefaultIdleTimeout is how long a daemon waits without a request before it
// exits.
const DefaultIdleTimeout = 10 * time.Minute

// ServeOptions configure a daemon.
type ServeOptions struct {
	StateDir    string
	IdleTimeout time.Duration
	// Impl answers the requests. Serve wraps it to count them.
	Impl contract.Planner
	// Logger receives the daemon's log lines (stderr by default).
	Logger hclog.Logger
}

// Serve runs the daemon until it has been idle for IdleTimeout, ctx ends, or
// it receives SIGTERM or SIGINT; in-flight requests finish first. It owns
// the state directory for its whole life: it holds daemon.lock from before
// it listens until after its socket and state file are gone and Impl is
// closed (a second Serve on the same directory fails at once). As soon as
// it starts draining it removes its state file and refuses every request
// (Status too) with Draining, so callers start the next daemon once its
// lock is free. It accepts connections only from processes of its own
// user (SO_PEERCRED).
func Serve(ctx context.Context, opts ServeOptions) (err error) {
	dir := opts.StateDir
	if dir == "" {
		if dir, err = DefaultStateDir(); err != nil {
			return err
		}
	}
	sd, err := openStateDir(dir, true)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sd.Close()) }()
	log := opts.Logger
	if log == nil {
		log = hclog.New(&hclog.LoggerOptions{Name: "zarf-planner", Output: os.Stderr, Level: hclog.Info})
	}
	idle := opts.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	lock, err := lockDaemon(sd)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, lock.Unlock()) }()
	if c, ok := opts.Impl.(io.Closer); ok {
		// Before the lock is released: the next daemon finds the
		// caches free.
		defer func() { err = errors.Join(err, c.Close()) }()
	}
	// No daemon holds the lock but us: what is there is stale.
	if err := sd.clearStale(); err != nil {
		return &StateDirError{Dir: sd.Path(), Err: err}
	}
	socks, err := sd.Sub(SocketDir, false)
	if err != nil {
		return &StateDirError{Dir: sd.Path(), Err: err}
	}
	defer func() { err = errors.Join(err, socks.Close()) }()

	t := &tracker{Planner: opts.Impl, started: time.Now(), last: time.Now(), pid: os.Getpid()}
	srv, err := listen(ctx, socks, t, log)
	if err != nil {
		return err
	}
	st := State{
		Pid: os.Getpid(), Network: "unix", Addr: srv.addr,
		ProtocolVersion: contract.ProtocolVersion, BuildID: buildinfo.ID, Started: t.started.UTC(),
	}
	if err := sd.writeState(st); err != nil {
		srv.stop()
		return err
	}
	defer func() { err = errors.Join(err, sd.removeState(st.Pid)) }()
	log.Info("serving", "pid", st.Pid, "socket", st.Addr, "build", buildinfo.ID, "idle_timeout", idle.String())
	unpublish := func() {
		if err := sd.removeState(st.Pid); err != nil {
			log.Warn("removing the state file", "error", err)
		}
	}
	return serveUntilDone(ctx, t, srv, idle, unpublish, log)
}

// lockDaemon takes the state directory's daemon lock, held for the
// daemon's whole life, and records this pid in it; or says who holds it.
func lockDaemon(sd *stateDir) (*privdir.Lock, error) {
	// A caller holding the start lock takes this lock for a moment to
	// see whether a daemon lives; a daemon started by hand meanwhile
	// waits that moment out rather than fail.
	ctx, cancel := context.WithTimeout(context.Background(), lockGrace)
	defer cancel()
	lock, err := sd.LockContext(ctx, DaemonLock, poll)
	if err != nil && ctx.Err() == nil {
		return nil, &StateDirError{Dir: sd.Path(), Err: err}
	}
	if lock == nil {
		return nil, fmt.Errorf("another zarf-planner daemon (%s) already serves state directory %s; stop it with `zarf-planner daemon stop` or use another --state-dir", sd.holder(), sd.Path())
	}
	if err := lock.Record(os.Getpid()); err != nil {
		return nil, errors.Join(err, lock.Unlock())
	}
	return lock, nil
}

// lockGrace is how long a starting daemon waits for a daemon lock that is
// held.
const lockGrace = 500 * time.Millisecond

// server is the running go-plugin server and how to end it.
type server struct {
	addr   string // the socket's path, as published
	t      *tracker
	stop   func() // stop ends the server at once and waits for it
	closed <-chan struct{}
}

// pluginEnv are go-plugin's settings read from the environment by a
// plugin server; none may come from whoever started the daemon (a client
// certificate would turn on TLS that callers do not speak, a socket group
// would open the socket to that group).
var pluginEnv = []string{"PLUGIN_CLIENT_CERT", "PLUGIN_MULTIPLEX_GRPC", "PLUGIN_UNIX_SOCKET_GROUP", "PLUGIN_MIN_PORT", "PLUGIN_MAX_PORT", "PLUGIN_PROTOCOL_VERSIONS"}

// listen starts the go-plugin server on a unix socket in the sockets
// directory, reached through its descriptor, owner-only (0600), answering
// only callers of this user, through t.
func listen(ctx context.Context, socks *privdir.Dir, t *tracker, log hclog.Logger) (*server, error) {
	// The socket must be owner-only: go-plugin creates it under this umask.
	syscall.Umask(0o077)
	for _, k := range pluginEnv {
		if err := os.Unsetenv(k); err != nil {
			return nil, err
		}
	}
	if err := os.Setenv(plugin.EnvUnixSocketDir, socks.ProcPath("")); err != nil {
		return nil, err
	}
	// The plugin server stops abruptly when serveCtx ends, so it must not
	// inherit ctx: on ctx's end the daemon first drains, then stops it.
	serveCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	go plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: contract.Handshake,
		Plugins:         contract.Plugins(t),
		Logger:          log,
		GRPCServer: func(o []grpc.ServerOption) *grpc.Server {
			o = append(o, contract.WindowServerOptions()...)
			o = append(o, grpc.Creds(sameUser{log: log}), grpc.ChainUnaryInterceptor(t.intercept, recovery.UnaryServerInterceptor(recovery.WithRecoveryHandlerContext(recovered(log)))),
				grpc.ChainStreamInterceptor(recovery.StreamServerInterceptor(recovery.WithRecoveryHandlerContext(recovered(log)))))
			srv := grpc.NewServer(o...)
			t.mu.Lock()
			t.server = srv
			t.mu.Unlock()
			return srv
		},
		Test: &plugin.ServeTestConfig{Context: serveCtx, ReattachConfigCh: reattach, CloseCh: closed},
	})
	s := &server{t: t, closed: closed, stop: func() { cancel(); <-closed }}
	select {
	case rc := <-reattach:
		name := filepath.Base(rc.Addr.String())
		if err := unix.Fchmodat(socks.Fd(), name, 0o600, 0); err != nil {
			s.stop()
			return nil, fmt.Errorf("securing the socket %s: %w", filepath.Join(socks.Path(), name), err)
		}
		s.addr = filepath.Join(socks.Path(), name)
		return s, nil
	case <-closed:
		cancel()
		return nil, errors.New("the plugin server stopped before it listened")
	case <-time.After(10 * time.Second):
		s.stop()
		return nil, errors.New("the plugin server did not listen within 10s")
	}
}

// shutdown lets answered requests reach their clients, then ends the
// server.
func (s *server) shutdown() {
	s.t.gracefulStop()
	s.stop()
}

// serveUntilDone serves until the server stops by itself, a signal or
// ctx's end (drain, then shut down), or idle time without a request.
// unpublish runs as soon as draining starts.
func serveUntilDone(ctx context.Context, t *tracker, srv *server, idle time.Duration, unpublish func(), log hclog.Logger) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	tick := time.NewTicker(min(idle/4, time.Second))
	defer tick.Stop()
	drain := func() {
		t.startDraining(unpublish)
		t.waitIdle()
		srv.shutdown()
	}
	for {
		select {
		case <-srv.closed:
			log.Info("plugin server stopped")
			return nil
		case s := <-sigs:
			log.Info("draining on signal", "signal", s.String())
			drain()
			return nil
		case <-ctx.Done():
			// A SIGTERM reaches both this loop and the caller's
			// signal.NotifyContext, in either order: the cause says
			// which signal ended the context.
			log.Info("draining: context ended", "cause", context.Cause(ctx).Error())
			drain()
			return nil
		case <-tick.C:
			if t.idleFor() >= idle && t.drainIfIdle(idle, unpublish) {
				log.Info("exiting after idle timeout", "idle", idle.String())
				srv.shutdown()
				return nil
			}
		}
	}
}

// tracker counts requests for the idle timeout and the drain, refuses
// go-plugin's Shutdown, and answers Status.
type tracker struct {
	// Planner answers every request; the tracker adds who the daemon
	// is to Status.
	contract.Planner
	started  time.Time
	pid      int
	mu       sync.Mutex
	cond     *sync.Cond
	inflight int
	last     time.Time
	draining bool
	requests uint64
	server   *grpc.Server
}

// recovered turns a request's panic into an error of that request alone,
// of code Internal: it names the request, the build and "please report
// it", and the stack goes to the daemon's log. The daemon goes on serving
// every other caller.
func recovered(log hclog.Logger) recovery.RecoveryHandlerFuncContext {
	return func(ctx context.Context, p any) error {
		method, _ := grpc.Method(ctx)
		log.Error("a request panicked; the daemon goes on", "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		return status.Errorf(codes.Internal, "internal error in zarf-planner (build %s) answering %s: %v; please report it with the daemon's log, which holds the stack", buildinfo.ID, path.Base(method), p)
	}
}

// gracefulStop lets answered requests reach their clients before the
// server goes. Clients that stay connected hold go-plugin's long-lived
// streams open, so after a short grace the server stops regardless.
func (t *tracker) gracefulStop() {
	t.mu.Lock()
	srv := t.server
	t.mu.Unlock()
	if srv == nil {
		return
	}
	stopped := make(chan struct{})
	go func() {
		srv.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(2 * time.Second):
		srv.Stop()
	}
}

func (t *tracker) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	switch info.FullMethod {
	case contract.ShutdownMethod:
		return nil, status.Error(codes.PermissionDenied, "this zarf-planner daemon is shared by every caller; stop it with `zarf-planner daemon stop`")
	}
	t.mu.Lock()
	if t.draining {
		// Refused before any work, Status too: a caller treats a
		// draining daemon as gone and starts the next one.
		t.mu.Unlock()
		return nil, status.Error(codes.Unavailable, Draining)
	}
	if info.FullMethod == plannerpb.Planner_Status_FullMethodName {
		// A status probe is not work: it neither counts as a request nor
		// keeps an idle daemon alive.
		t.mu.Unlock()
		return h(ctx, req)
	}
	t.inflight++
	t.requests++
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.inflight--
		t.last = time.Now()
		if t.cond != nil {
			t.cond.Broadcast()
		}
		t.mu.Unlock()
	}()
	return h(ctx, req)
}

func (t *tracker) idleFor() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inflight > 0 {
		return 0
	}
	return time.Since(t.last)
}

// drainIfIdle starts draining only if still idle, so a request that arrived
// since the check is not refused; see startDraining for unpublish.
func (t *tracker) drainIfIdle(idle time.Duration, unpublish func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inflight > 0 || time.Since(t.last) < idle {
		return false
	}
	unpublish()
	t.draining = true
	return true
}

// startDraining refuses every new request from now on. unpublish runs
// first, under the same lock that admits requests, so no caller is told
// Draining while the state file still names this daemon (it would find
// the same daemon again instead of starting the next one).
func (t *tracker) startDraining(unpublish func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	unpublish()
	t.draining = true
}

// waitIdle waits for in-flight requests to finish.
func (t *tracker) waitIdle() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cond == nil {
		t.cond = sync.NewCond(&t.mu)
	}
	for t.inflight > 0 {
		t.cond.Wait()
	}
}

// Status answers for the daemon itself (pid, build, requests) with the
// implementation's counters.
func (t *tracker) Status(ctx context.Context) (*contract.Status, error) {
	st, err := t.Planner.Status(ctx)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st.Pid, st.BuildID, st.ProtocolVersion, st.Version = int64(t.pid), buildinfo.ID, contract.ProtocolVersion, buildinfo.Version
	st.StartedUnix, st.Requests, st.Inflight = t.started.Unix(), t.requests, int64(t.inflight)
	st.Goroutines = int64(runtime.NumGoroutine())
	return st, nil
}
