package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/credentials"
)

// peerCred asks the kernel who is at the other end of a unix socket: the
// uid and pid of the process that listened (seen from the client) or
// connected (seen from the daemon), in this process's pid namespace,
// whatever that process says about itself.
func peerCred(c net.Conn) (*unix.Ucred, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("a %T is not a unix socket", c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	if cerr != nil {
		return nil, fmt.Errorf("reading the peer's credentials: %w", cerr)
	}
	return cred, nil
}

// daemonProc is a daemon process the kernel vouched for, held by a pidfd:
// a signal sent through it reaches that process or none, never a process
// that got its pid later.
type daemonProc struct {
	pid   int
	pidfd int
}

// errGone is a daemon that has exited (or whose socket nobody serves).
type errGone struct {
	pid    int
	reason string
}

func (e *errGone) Error() string { return fmt.Sprintf("daemon pid %d is gone (%s)", e.pid, e.reason) }

// errImpostor is a socket served by another process than the state file
// names, or by another user.
type errImpostor struct{ msg string }

func (e *errImpostor) Error() string { return e.msg }

// dialDaemon connects to the socket the state file s names, through the
// state directory's descriptor, and proves with the kernel's word that
// the process at the other end is this user's and has the pid s names.
// The pidfd is opened before the connection and checked alive after it,
// so the process it holds is the one that answered: if that pid had been
// reused in between, the pidfd's process would be gone.
func (sd *stateDir) dialDaemon(ctx context.Context, s *State) (net.Conn, *daemonProc, error) {
	name, err := sd.socketName(s)
	if err != nil {
		return nil, nil, err
	}
	socks, err := sd.Sub(SocketDir, false)
	if err != nil {
		return nil, nil, sd.untrusted(err)
	}
	defer socks.Close()
	if err := socks.CheckSocket(name); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, &errGone{pid: s.Pid, reason: "its socket " + s.Addr + " is gone"}
		}
		return nil, nil, sd.untrusted(err)
	}
	pidfd, err := unix.PidfdOpen(s.Pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil, nil, &errGone{pid: s.Pid, reason: "no such process"}
		}
		return nil, nil, fmt.Errorf("opening a pidfd for daemon pid %d: %w", s.Pid, err)
	}
	p := &daemonProc{pid: s.Pid, pidfd: pidfd}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socks.ProcPath(name))
	if err != nil {
		p.close()
		if errors.Is(err, unix.ECONNREFUSED) || errors.Is(err, unix.ENOENT) {
			return nil, nil, &errGone{pid: s.Pid, reason: "nobody serves its socket " + s.Addr}
		}
		return nil, nil, fmt.Errorf("connecting to daemon pid %d at %s: %w", s.Pid, s.Addr, err)
	}
	fail := func(err error) (net.Conn, *daemonProc, error) {
		conn.Close()
		p.close()
		return nil, nil, err
	}
	cred, err := peerCred(conn)
	if err != nil {
		return fail(err)
	}
	if int(cred.Uid) != os.Geteuid() {
		return fail(&errImpostor{fmt.Sprintf("the socket %s is served by uid %d (pid %d), not by this user (uid %d); nothing was sent to it", s.Addr, cred.Uid, cred.Pid, os.Geteuid())})
	}
	if int(cred.Pid) != s.Pid {
		return fail(&errImpostor{fmt.Sprintf("the socket %s is served by pid %d, not by pid %d that the state file %s names; nothing was sent to it", s.Addr, cred.Pid, s.Pid, sd.Path()+"/"+StateFile)})
	}
	if p.exited() {
		return fail(&errGone{pid: s.Pid, reason: "it exited while being checked"})
	}
	return conn, p, nil
}

// signal sends sig to the daemon through its pidfd.
func (p *daemonProc) signal(sig unix.Signal) error {
	if err := unix.PidfdSendSignal(p.pidfd, sig, nil, 0); err != nil {
		return fmt.Errorf("signalling daemon pid %d: %w", p.pid, err)
	}
	return nil
}

// exited reports whether the process has exited (its pidfd is readable).
func (p *daemonProc) exited() bool {
	fds := []unix.PollFd{{Fd: int32(p.pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}

// wait waits until the process exits or ctx ends.
func (p *daemonProc) wait(ctx context.Context) error {
	for !p.exited() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

func (p *daemonProc) close() {
	if p != nil && p.pidfd >= 0 {
		unix.Close(p.pidfd)
		p.pidfd = -1
	}
}

// sameUser is the daemon's transport credentials: it accepts a
// connection only from a process of the daemon's own user, by the
// kernel's word (SO_PEERCRED), and sends nothing else over it (the socket
// is local; there is nothing to encrypt).
type sameUser struct {
	log hclog.Logger
}

var _ credentials.TransportCredentials = sameUser{}

func (s sameUser) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	cred, err := peerCred(c)
	if err != nil {
		s.log.Warn("refused a connection", "error", err)
		return nil, nil, err
	}
	if int(cred.Uid) != os.Geteuid() {
		s.log.Warn("refused a connection from another user", "uid", cred.Uid, "pid", cred.Pid)
		return nil, nil, fmt.Errorf("uid %d (pid %d) may not use the zarf-planner daemon of uid %d", cred.Uid, cred.Pid, os.Geteuid())
	}
	return c, peerInfo{cred: *cred}, nil
}

func (sameUser) ClientHandshake(_ context.Context, _ string, c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("sameUser is the daemon's credentials; clients prove the daemon in dialDaemon")
}

func (sameUser) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "peercred"}
}

func (s sameUser) Clone() credentials.TransportCredentials { return s }

func (sameUser) OverrideServerName(string) error { return nil }

// peerInfo is what the daemon knows of a caller.
type peerInfo struct {
	credentials.CommonAuthInfo
	cred unix.Ucred
}

func (peerInfo) AuthType() string { return "peercred" }
