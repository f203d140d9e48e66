package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
)

const otherUser = "zp-test-lifecycle"

// TestMain also runs this binary's helpers, which tests start as the
// second local user: ZP_HELPER=status asks the socket in argv for the
// daemon's status as any go-plugin client would; ZP_HELPER=serve runs a
// daemon in the state directory in argv.
func TestMain(m *testing.M) {
	switch os.Getenv("ZP_HELPER") {
	case "status":
		os.Exit(helperStatus(os.Args[len(os.Args)-1]))
	case "serve":
		err := Serve(context.Background(), ServeOptions{StateDir: os.Args[len(os.Args)-1], IdleTimeout: time.Hour, Impl: echo{}, Logger: hclog.NewNullLogger()})
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := privdirtest.Remove(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func helperStatus(socket string) int {
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: contract.Handshake, Plugins: contract.Plugins(nil), Logger: hclog.NewNullLogger(),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Reattach:         &plugin.ReattachConfig{Protocol: plugin.ProtocolGRPC, ProtocolVersion: contract.ProtocolVersion, Addr: &net.UnixAddr{Net: "unix", Name: socket}, Pid: os.Getppid(), Test: true},
	})
	proto, err := client.Client()
	if err != nil {
		fmt.Println("refused:", err)
		return 1
	}
	raw, err := proto.Dispense(contract.PluginName)
	if err != nil {
		fmt.Println("refused:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := raw.(contract.Planner).Status(ctx)
	if err != nil {
		fmt.Println("refused:", err)
		return 1
	}
	fmt.Println("answered: pid", st.Pid)
	return 0
}

// The daemon answers only its own user: a process of another user that
// reaches its socket (here the test opens the way on purpose) is refused
// by the kernel's word, before any request.
func TestTheDaemonRefusesAnotherUser(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	helper := other.TestBinary(t)
	dir := shortDir(t)
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{StateDir: dir, IdleTimeout: time.Minute, Impl: echo{}, Logger: hclog.New(&hclog.LoggerOptions{Output: &logs})})
	}()
	t.Cleanup(func() { cancel(); <-done })
	s := waitForState(t, dir)
	for p, mode := range map[string]os.FileMode{dir: 0o755, filepath.Dir(s.Addr): 0o711, s.Addr: 0o666} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	cmd := other.Command([]string{"ZP_HELPER=status"}, helper, s.Addr)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refused") {
		t.Errorf("another user's client: %v: %s; want it refused", err, out)
	}
	if !strings.Contains(logs.String(), "refused a connection from another user") || !strings.Contains(logs.String(), fmt.Sprintf("uid=%d", other.Uid)) {
		t.Errorf("the daemon's log does not name the refused user:\n%s", logs.String())
	}
	// Its own user is served (once the modes are owner-only again,
	// which its clients insist on).
	for p, mode := range map[string]os.FileMode{dir: 0o700, filepath.Dir(s.Addr): 0o700, s.Addr: 0o600} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	if _, st, err := Status(context.Background(), dir); err != nil || int(st.Pid) != os.Getpid() {
		t.Errorf("Status as the daemon's own user = %v, %v; want it answered", st, err)
	}
}

// A state file of this user that names a socket served by another user's
// daemon is not believed: the kernel names the user at the other end,
// and nothing is asked of it, and nothing signalled.
func TestTheClientRefusesASocketOfAnotherUser(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	helper := other.TestBinary(t)
	theirs := filepath.Join(other.Dir(t), "state")
	serve := other.Command([]string{"ZP_HELPER=serve"}, helper, theirs)
	var out bytes.Buffer
	serve.Stdout, serve.Stderr = &out, &out
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	var their *State
	for {
		b, err := os.ReadFile(filepath.Join(theirs, StateFile))
		if err == nil {
			var s State
			if jsonErr := json.Unmarshal(b, &s); jsonErr == nil {
				their = &s
				break
			}
		}
		if serve.ProcessState != nil {
			t.Fatalf("their daemon exited: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Root's own state directory, its own state file, naming their
	// socket through a link that root owns.
	dir := shortDir(t)
	if err := os.Mkdir(filepath.Join(dir, SocketDir), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, SocketDir, "plugin-theirs")
	if err := os.Link(their.Addr, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(link, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := WriteState(dir, State{Pid: their.Pid, Network: "unix", Addr: link, ProtocolVersion: contract.ProtocolVersion, BuildID: buildinfo.ID}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("is served by uid %d (pid %d), not by this user", other.Uid, their.Pid)
	if _, _, err := Status(context.Background(), dir); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Status = %v; want refused saying %q", err, want)
	}
	if _, err := Stop(context.Background(), dir, time.Second); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Stop = %v; want refused saying %q", err, want)
	}
	if err := serve.Process.Signal(syscall.Signal(0)); err != nil || serve.ProcessState != nil {
		t.Errorf("their daemon was stopped: %v", err)
	}
}

// A draining daemon says so (Status too is refused) and unpublishes its
// state at once, while it keeps its lock until it is gone.
func TestADrainingDaemonSaysSoAndKeepsItsLock(t *testing.T) {
	dir := shortDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	started, release := make(chan struct{}, 1), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{StateDir: dir, IdleTimeout: time.Minute, Impl: echo{started: started, release: release}, Logger: hclog.NewNullLogger()})
	}()
	waitForState(t, dir)
	c, err := Attach(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	result := make(chan error, 1)
	go func() {
		_, err := c.Planner.Plan(context.Background(), &contract.PlanRequest{Path: "/slow"})
		result <- err
	}()
	<-started
	cancel() // like SIGTERM: drain, then exit
	// Draining has begun once a request is refused.
	for {
		_, err := c.Planner.Inspect(context.Background(), &contract.InspectRequest{Path: "/x"})
		if status.Code(err) == codes.Unavailable && strings.Contains(err.Error(), Draining) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := c.Planner.Status(context.Background()); status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), Draining) {
		t.Errorf("Status of a draining daemon = %v; want refused with %q", err, Draining)
	}
	if _, err := ReadState(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the state file of a draining daemon: %v; want it removed", err)
	}
	if !lockHeld(t, dir) {
		t.Fatal("daemon.lock of a draining daemon is free; want it held")
	}
	close(release)
	if err := <-result; err != nil {
		t.Errorf("the in-flight request failed: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if lockHeld(t, dir) {
		t.Error("daemon.lock is still held after the daemon exited")
	}
}

// lockHeld reports whether another open file holds the daemon lock of
// dir.
func lockHeld(t *testing.T, dir string) bool {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, DaemonLock), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return true
		}
		t.Fatal(err)
	}
	return false
}

// closer records whether the daemon lock was still held when the daemon
// closed its implementation (its caches).
type closer struct {
	echo
	t      *testing.T
	dir    string
	closed chan bool
}

func (c closer) Close() error {
	c.closed <- lockHeld(c.t, c.dir)
	return nil
}

// The next daemon must find the caches free: the daemon closes what it
// serves with before it releases its lock.
func TestTheDaemonClosesItsCachesBeforeItReleasesItsLock(t *testing.T) {
	dir := shortDir(t)
	impl := closer{t: t, dir: dir, closed: make(chan bool, 1)}
	done := serve(t, dir, 200*time.Millisecond, impl)
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	select {
	case held := <-impl.closed:
		if !held {
			t.Error("the daemon lock was free when the daemon closed its caches")
		}
	default:
		t.Error("the daemon never closed what it served with")
	}
}

func waitForState(t *testing.T, dir string) *State {
	t.Helper()
	for {
		if s, err := ReadState(dir); err == nil {
			return s
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A state file naming a pid that is not the one serving its socket (what
// a daemon in another pid namespace publishes) is refused at once, by
// the kernel's word, before any request: Connect neither waits out its
// deadline for the daemon, whose lock is held, to answer, nor starts
// another daemon, and Stop signals nothing.
func TestAnImpostorIsRefusedAtOnce(t *testing.T) {
	dir := shortDir(t)
	serve(t, dir, time.Hour, echo{})
	bystander := exec.Command("sleep", "600")
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bystander.Process.Kill(); bystander.Wait() })
	s, err := ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Pid = bystander.Process.Pid
	if err := WriteState(dir, *s); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("is served by pid %d, not by pid %d that the state file", os.Getpid(), bystander.Process.Pid)
	// The deadline is only a bound: the refusal must not wait for it.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	start := time.Now()
	c, err := Connect(ctx, Options{StateDir: dir, DaemonPath: filepath.Join(dir, "no-daemon-may-be-started")})
	took := time.Since(start)
	if err == nil {
		c.Close()
		t.Fatalf("Connect reached pid %d; want it refused", c.State.Pid)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("Connect = %v; want refused saying %q", err, want)
	}
	if took > time.Second {
		t.Errorf("Connect was refused after %s; want at once (under 1s)", took)
	}
	start = time.Now()
	if _, err := Stop(context.Background(), dir, time.Second); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Stop = %v; want refused saying %q", err, want)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Stop was refused after %s; want at once (under 1s)", took)
	}
	if !Alive(bystander.Process.Pid) {
		t.Errorf("the bystander pid %d was signalled", bystander.Process.Pid)
	}
}
