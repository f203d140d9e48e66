package lifecycle

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/colonel-byte/zarf-planner/contract"
)

// echo is a trivial Planner for exercising the daemon's lifecycle. When
// started is set, Plan says on it that it began, then waits for release.
type echo struct {
	started chan<- struct{}
	release <-chan struct{}
}

func (e echo) Plan(ctx context.Context, req *contract.PlanRequest) (*contract.PlanAnswer, error) {
	if e.started != nil {
		e.started <- struct{}{}
		select {
		case <-e.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &contract.PlanAnswer{Result: []byte(`{"path":"` + req.Path + `"}`)}, nil
}

func (echo) Inspect(_ context.Context, req *contract.InspectRequest) (*contract.InspectAnswer, error) {
	return &contract.InspectAnswer{Result: []byte(req.Path)}, nil
}

func (echo) Catalog(_ context.Context, req *contract.CatalogRequest) (*contract.CatalogAnswer, error) {
	return &contract.CatalogAnswer{Result: []byte(req.Path)}, nil
}

func (echo) Cache(context.Context, *contract.CacheRequest) (*contract.CacheAnswer, error) {
	return &contract.CacheAnswer{}, nil
}

func (echo) Barrier(context.Context, *contract.BarrierRequest) (*contract.BarrierAnswer, error) {
	return &contract.BarrierAnswer{}, nil
}

func (echo) Status(context.Context) (*contract.Status, error) {
	return &contract.Status{}, nil
}

func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "zpl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// serve runs a daemon in process until the test ends and waits for its
// state file.
func serve(t *testing.T, dir string, idle time.Duration, impl contract.Planner) <-chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		done <- Serve(ctx, ServeOptions{StateDir: dir, IdleTimeout: idle, Impl: impl, Logger: hclog.NewNullLogger()})
		close(finished)
	}()
	t.Cleanup(func() {
		cancel()
		<-finished
	})
	for {
		if _, err := ReadState(dir); err == nil {
			return done
		}
		select {
		case err := <-done:
			t.Fatalf("Serve returned before it published its state: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestGoPluginCloseDoesNotStopTheSharedDaemon(t *testing.T) {
	dir := shortDir(t)
	serve(t, dir, time.Minute, echo{})
	s, err := ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A careless client: go-plugin's own Close sends the controller's
	// Shutdown.
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: contract.Handshake, Plugins: contract.Plugins(nil), Logger: hclog.NewNullLogger(),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Reattach:         &plugin.ReattachConfig{Protocol: plugin.ProtocolGRPC, ProtocolVersion: contract.ProtocolVersion, Addr: &net.UnixAddr{Net: "unix", Name: s.Addr}, Pid: s.Pid, Test: true},
	})
	proto, err := client.Client()
	if err != nil {
		t.Fatal(err)
	}
	// Close returns once the daemon has answered (refused) the Shutdown.
	if err := proto.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	c, err := Connect(context.Background(), Options{StateDir: dir})
	if err != nil {
		t.Fatalf("daemon gone after a client's Close: %v", err)
	}
	defer c.Close()
	resp, err := c.Planner.Plan(context.Background(), &contract.PlanRequest{Path: "/x"})
	if err != nil || string(resp.Result) != `{"path":"/x"}` {
		t.Errorf("Plan = %v, %v", resp, err)
	}
	if c.Started {
		t.Error("Connect started a new daemon; want the running one")
	}
}

func TestIdleDaemonExitsAndCleansUp(t *testing.T) {
	dir := shortDir(t)
	done := serve(t, dir, 300*time.Millisecond, echo{})
	s, _ := ReadState(dir)
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := ReadState(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state file after exit: %v; want none", err)
	}
	if _, err := os.Stat(s.Addr); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket %s after exit: %v; want none", s.Addr, err)
	}
}

func TestInFlightRequestFinishesBeforeExit(t *testing.T) {
	dir := shortDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	started, release := make(chan struct{}, 1), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{StateDir: dir, IdleTimeout: time.Minute, Impl: echo{started: started, release: release}, Logger: hclog.NewNullLogger()})
	}()
	var c *Conn
	var err error
	for {
		if c, err = Connect(context.Background(), Options{StateDir: dir, DaemonPath: "/bin/false"}); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer c.Close()
	result := make(chan error, 1)
	go func() {
		_, err := c.Planner.Plan(context.Background(), &contract.PlanRequest{Path: "/slow"})
		result <- err
	}()
	<-started
	cancel() // like SIGTERM: drain, then exit
	close(release)
	if err := <-result; err != nil {
		t.Errorf("in-flight request failed during shutdown: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestSecondServeOnOneDirectoryFails(t *testing.T) {
	dir := shortDir(t)
	serve(t, dir, time.Minute, echo{})
	err := Serve(context.Background(), ServeOptions{StateDir: dir, Impl: echo{}, Logger: hclog.NewNullLogger()})
	if err == nil || !strings.Contains(err.Error(), "already serves state directory") {
		t.Errorf("second Serve = %v; want an already-serving error", err)
	}
}

func TestStateDirMustBePrivate(t *testing.T) {
	dir := filepath.Join(shortDir(t), "open")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := EnsureStateDir(dir); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("EnsureStateDir(0777) = %v; want a refusal", err)
	}
	if _, err := Connect(context.Background(), Options{StateDir: dir}); err == nil {
		t.Error("Connect used a world-writable state directory")
	}
}

// A daemon started by a script that never reaps it stays a zombie after it
// exits; stop and retire must see it gone rather than wait 30 s for it.
func TestExitedUnreapedProcessIsNotAlive(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	// Until the child exits it is alive; once it has exited, unreaped, it
	// must be reported gone (a hang here is the failure).
	for Alive(cmd.Process.Pid) {
		time.Sleep(10 * time.Millisecond)
	}
	if !Alive(os.Getpid()) {
		t.Fatal("Alive reports this test process as gone")
	}
}
