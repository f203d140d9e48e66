package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/colonel-byte/zarf-planner/daemon/contract"
	"github.com/colonel-byte/zarf-planner/daemon/contract/plannerpb"
)

// Draining is the message of the UNAVAILABLE answer a draining daemon gives
// to new requests; a client may start over with a fresh daemon.
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
// the state directory for its whole life (a second Serve on the same
// directory fails at once) and removes its state file and socket on exit.
func Serve(ctx context.Context, opts ServeOptions) (err error) {
	dir := opts.StateDir
	if dir == "" {
		if dir, err = DefaultStateDir(); err != nil {
			return err
		}
	}
	if err := EnsureStateDir(dir); err != nil {
		return err
	}
	log := opts.Logger
	if log == nil {
		log = hclog.New(&hclog.LoggerOptions{Name: "zarf-planner", Output: os.Stderr, Level: hclog.Info})
	}
	idle := opts.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	unlock, err := lockDaemon(dir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, unlock()) }()

	t := &tracker{impl: opts.Impl, started: time.Now(), last: time.Now(), pid: os.Getpid()}
	srv, err := listen(ctx, dir, t, log)
	if err != nil {
		return err
	}
	st := State{
		Pid: os.Getpid(), Network: srv.addr.Network(), Addr: srv.addr.String(),
		ProtocolVersion: contract.ProtocolVersion, BuildID: contract.BuildID, Started: t.started.UTC(),
	}
	if err := WriteState(dir, st); err != nil {
		srv.stop()
		return err
	}
	defer func() {
		err = errors.Join(err, RemoveState(dir, st.Pid))
		if rmErr := os.Remove(st.Addr); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			err = errors.Join(err, rmErr)
		}
	}()
	log.Info("serving", "pid", st.Pid, "socket", st.Addr, "build", contract.BuildID, "idle_timeout", idle.String())
	return serveUntilDone(ctx, t, srv, idle, log)
}

// lockDaemon takes the state directory's daemon lock, held for the
// daemon's whole life, or says who holds it.
func lockDaemon(dir string) (unlock func() error, err error) {
	lock := flock.New(filepath.Join(dir, DaemonLock))
	ok, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", lock.Path(), err)
	}
	if !ok {
		pid := "unknown pid"
		if s, err := ReadState(dir); err == nil {
			pid = fmt.Sprintf("pid %d", s.Pid)
		}
		return nil, fmt.Errorf("another zarf-planner daemon (%s) already serves state directory %s; stop it with `zarf-planner daemon stop` or use another --state-dir", pid, dir)
	}
	return lock.Unlock, nil
}

// server is the running go-plugin server and how to end it.
type server struct {
	addr   net.Addr
	t      *tracker
	stop   func() // stop ends the server at once and waits for it
	closed <-chan struct{}
}

// listen starts the go-plugin server on a unix socket under dir/sockets,
// owner-only, answering through t.
func listen(ctx context.Context, dir string, t *tracker, log hclog.Logger) (*server, error) {
	sockets := filepath.Join(dir, SocketDir)
	if err := os.MkdirAll(sockets, 0o700); err != nil {
		return nil, fmt.Errorf("creating socket directory: %w", err)
	}
	// The socket must be owner-only: go-plugin creates it under this umask.
	syscall.Umask(0o077)
	if err := os.Setenv(plugin.EnvUnixSocketDir, sockets); err != nil {
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
			srv := grpc.NewServer(append(o, grpc.ChainUnaryInterceptor(t.intercept))...)
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
		s.addr = rc.Addr
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
func serveUntilDone(ctx context.Context, t *tracker, srv *server, idle time.Duration, log hclog.Logger) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	tick := time.NewTicker(min(idle/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-srv.closed:
			log.Info("plugin server stopped")
			return nil
		case s := <-sigs:
			log.Info("draining on signal", "signal", s.String())
			t.drain()
			srv.shutdown()
			return nil
		case <-ctx.Done():
			log.Info("draining: context ended")
			t.drain()
			srv.shutdown()
			return nil
		case <-tick.C:
			if t.idleFor() >= idle && t.drainIfIdle(idle) {
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
	impl     contract.Planner
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
	case plannerpb.Planner_Status_FullMethodName:
		// A status probe is not work: it neither counts as a request nor
		// keeps an idle daemon alive.
		return h(ctx, req)
	}
	t.mu.Lock()
	if t.draining {
		t.mu.Unlock()
		return nil, status.Error(codes.Unavailable, Draining)
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
// since the check is not refused.
func (t *tracker) drainIfIdle(idle time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inflight > 0 || time.Since(t.last) < idle {
		return false
	}
	t.draining = true
	return true
}

// drain refuses new requests and waits for in-flight ones to finish.
func (t *tracker) drain() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.draining = true
	if t.cond == nil {
		t.cond = sync.NewCond(&t.mu)
	}
	for t.inflight > 0 {
		t.cond.Wait()
	}
}

// Plan passes the request to the implementation.
func (t *tracker) Plan(ctx context.Context, req *plannerpb.PlanRequest) (*plannerpb.PlanResponse, error) {
	return t.impl.Plan(ctx, req)
}

// Inspect passes the request to the implementation.
func (t *tracker) Inspect(ctx context.Context, req *plannerpb.InspectRequest) (*plannerpb.InspectResponse, error) {
	return t.impl.Inspect(ctx, req)
}

// CacheWarm passes the request to the implementation.
func (t *tracker) CacheWarm(ctx context.Context, req *plannerpb.CacheWarmRequest) (*plannerpb.CacheWarmResponse, error) {
	return t.impl.CacheWarm(ctx, req)
}

// Wait passes the request to the implementation.
func (t *tracker) Wait(ctx context.Context, req *plannerpb.WaitRequest) (*plannerpb.WaitResponse, error) {
	return t.impl.Wait(ctx, req)
}

// Status answers for the daemon itself (pid, build, requests) with the
// implementation's counters.
func (t *tracker) Status(ctx context.Context) (*plannerpb.StatusResponse, error) {
	st, err := t.impl.Status(ctx)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st.Pid, st.BuildId, st.ProtocolVersion = int64(t.pid), contract.BuildID, contract.ProtocolVersion
	st.StartedUnix, st.Requests, st.Inflight = t.started.Unix(), t.requests, int64(t.inflight)
	return st, nil
}
