package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
)

// The tests of this file act as another local user would: they run as
// root (as CI does) and make a second user, zp-test-module, whose files
// and daemons root must not trust, and who must not reach root's daemon.
const otherUser = "zp-test-module"

// runAs runs the module binary as u, with args.
func runAs(t *testing.T, u *privdirtest.User, args map[string]any, env ...string) (map[string]any, int) {
	t.Helper()
	dir := u.Dir(t)
	b, _ := json.Marshal(args)
	argsFile := filepath.Join(dir, "args")
	if err := os.WriteFile(argsFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(argsFile, int(u.Uid), int(u.Gid)); err != nil {
		t.Fatal(err)
	}
	cmd := u.Command(env, moduleBin, argsFile)
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
	return finish(t, cmd)
}

// cli runs the zarf-planner command line as root and returns its exit
// code and output.
func cli(t *testing.T, args ...string) (int, string) {
	t.Helper()
	out, err := exec.Command(daemonBin, args...).CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(out)
}

// theirDaemon has the other user start a daemon of their own, with their
// own module, in a state directory of theirs; it is stopped (by them)
// when the test ends.
func theirDaemon(t *testing.T, u *privdirtest.User) (state string, pid int) {
	t.Helper()
	home := u.Dir(t)
	state = filepath.Join(home, "state")
	args := planArgs(exampleDir, state)
	args["cache_dir"] = filepath.Join(home, "cache")
	res, code := runAs(t, u, args)
	if code != 0 {
		t.Fatalf("the other user's own call failed: %v", res["msg"])
	}
	pid, _ = daemonPid(t, res)
	t.Cleanup(func() {
		if out, err := u.Command(nil, daemonBin, "daemon", "stop", "--state-dir", state).CombinedOutput(); err != nil && lifecycle.Alive(pid) {
			t.Errorf("stopping the other user's daemon: %v: %s", err, out)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return state, pid
}

// Root is never made to use, stop or signal another user's daemon, by any
// entry point: the module, `daemon status`, `daemon stop` and the CLI's
// --state-dir all refuse a state directory root does not own.
func TestAnotherUsersStateDirIsRefusedEverywhere(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	state, pid := theirDaemon(t, other)
	want := fmt.Sprintf("belongs to uid %d", other.Uid)

	res, code := runModule(t, planArgs(exampleDir, state))
	if msg, _ := res["msg"].(string); code == 0 || !strings.Contains(msg, want) {
		t.Errorf("module with their state_dir: code %d msg %q; want refused saying %q", code, msg, want)
	}
	for _, args := range [][]string{
		{"daemon", "status", "--state-dir", state},
		{"daemon", "stop", "--state-dir", state},
		{"plan", exampleDir, "--state-dir", state},
	} {
		code, out := cli(t, args...)
		if code == 0 || !strings.Contains(out, want) || !strings.Contains(out, "--state-dir") {
			t.Errorf("zarf-planner %s: exit %d:\n%s\nwant refused saying %q and what to do", strings.Join(args, " "), code, out, want)
		}
	}
	if !lifecycle.Alive(pid) {
		t.Fatalf("the other user's daemon pid %d was stopped by root", pid)
	}
	if res, code := runAs(t, other, planArgs(exampleDir, state)); code != 0 {
		t.Errorf("the other user's daemon no longer serves them: %v", res["msg"])
	}
}

// The exploit of issue 19: a daemon that reports, from its own pid
// namespace, the pid of an unrelated process. The kernel says which
// process serves the socket; `daemon stop` and the module believe it, not
// the state file or the daemon's word, refuse at once, and nothing is
// signalled.
func TestADaemonInAnotherPidNamespaceGetsNoSignalSent(t *testing.T) {
	state := stateDir(t)
	bystander := exec.Command("sleep", "600")
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { bystander.Process.Kill(); bystander.Wait() }()
	victim := bystander.Process.Pid
	// The daemon gets the bystander's pid inside a new pid namespace
	// (whose init, the shell, dies with unshare and takes it along).
	script := fmt.Sprintf("echo %d > /proc/sys/kernel/ns_last_pid && %s serve --state-dir %s --cache-dir %s", victim-1, daemonBin, state, filepath.Join(t.TempDir(), "cache"))
	ns := exec.Command("unshare", "--pid", "--kill-child", "--mount-proc", "sh", "-c", script)
	nsOut, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	ns.Stdout, ns.Stderr = nsOut, nsOut
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { ns.Wait(); close(exited) }()
	defer func() { ns.Process.Kill(); <-exited }()
	var s *lifecycle.State
	for {
		var err error
		if s, err = lifecycle.ReadState(state); err == nil {
			break
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(nsOut.Name())
			t.Fatalf("the namespaced daemon exited: %s", out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if s.Pid != victim {
		t.Fatalf("the namespaced daemon has pid %d in its namespace, not %d; cannot stage the attack", s.Pid, victim)
	}
	// Both are refused at once, from the kernel's word on the socket's
	// peer, before any request: neither waits for the daemon, which
	// holds its lock, to answer. (Each time is a whole process's run.)
	start := time.Now()
	code, out := cli(t, "daemon", "stop", "--state-dir", state)
	if code == 0 || !strings.Contains(out, fmt.Sprintf("not by pid %d that the state file", victim)) {
		t.Errorf("daemon stop: exit %d:\n%s\nwant refused: the kernel names another pid", code, out)
	}
	stopTook := time.Since(start)
	if stopTook > time.Second {
		t.Errorf("daemon stop was refused after %s; want at once (under 1s)", stopTook)
	}
	args := planArgs(exampleDir, state)
	args["timeout"] = 15 // only a bound: the refusal must not wait for it
	start = time.Now()
	res, code := runModule(t, args)
	took := time.Since(start)
	if msg, _ := res["msg"].(string); code == 0 || !strings.Contains(msg, fmt.Sprintf("not by pid %d that the state file", victim)) {
		t.Errorf("module: code %d msg %q; want refused naming the pid mismatch", code, msg)
	}
	if took > time.Second {
		t.Errorf("the module was refused after %s; want at once (under 1s)", took)
	}
	t.Logf("refused: daemon stop in %s, the module in %s", stopTook, took)
	// (Alive: a killed child of this test stays a zombie, which kill(0)
	// would still find.)
	if !lifecycle.Alive(victim) {
		t.Fatalf("the unrelated process pid %d was killed", victim)
	}
}

// A state directory under a directory another user owns could be swapped
// for theirs between two opens: it is refused, whatever its own owner.
func TestAStateDirUnderAnotherUsersDirectoryIsRefused(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	theirs := other.Dir(t)
	if err := os.Chmod(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(theirs, "root-state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopDaemon(t, state) })
	res, code := runModule(t, planArgs(exampleDir, state))
	if msg, _ := res["msg"].(string); code == 0 || !strings.Contains(msg, fmt.Sprintf("%s belongs to uid %d", theirs, other.Uid)) {
		t.Errorf("code %d msg %q; want refused naming %s", code, msg, theirs)
	}
}

// What is in the state directory is checked before it is used: a state
// file of another user is not read, a log that is a symlink is not
// followed, and whatever address the state file names, only a unix socket
// in <state dir>/sockets is dialled.
func TestTheStateDirectorysFilesAreCheckedBeforeUse(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	bystander := exec.Command("sleep", "600")
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { bystander.Process.Kill(); bystander.Wait() }()

	t.Run("a state file of another user", func(t *testing.T) {
		state := stateDir(t)
		if err := lifecycle.WriteState(state, lifecycle.State{Pid: bystander.Process.Pid, Network: "unix", Addr: filepath.Join(state, "sockets", "x"), ProtocolVersion: 2, BuildID: "dev"}); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(filepath.Join(state, lifecycle.StateFile), int(other.Uid), int(other.Gid)); err != nil {
			t.Fatal(err)
		}
		res, code := runModule(t, planArgs(exampleDir, state))
		if msg, _ := res["msg"].(string); code == 0 || !strings.Contains(msg, filepath.Join(state, lifecycle.StateFile)+fmt.Sprintf(" belongs to uid %d", other.Uid)) {
			t.Errorf("code %d msg %q; want the state file refused", code, msg)
		}
	})
	t.Run("a log that is a symlink", func(t *testing.T) {
		state := stateDir(t)
		victim := filepath.Join(t.TempDir(), "victim")
		if err := os.WriteFile(victim, []byte("root's file\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(victim, filepath.Join(state, lifecycle.LogFile)); err != nil {
			t.Fatal(err)
		}
		res, code := runModule(t, planArgs(exampleDir, state))
		if msg, _ := res["msg"].(string); code == 0 || !strings.Contains(msg, filepath.Join(state, lifecycle.LogFile)+" is a symlink") {
			t.Errorf("code %d msg %q; want the log refused", code, msg)
		}
		if b, _ := os.ReadFile(victim); string(b) != "root's file\n" {
			t.Errorf("the file the log symlink points to was written: %q", b)
		}
	})
	t.Run("a state file naming a TCP address", func(t *testing.T) {
		state := stateDir(t)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		dialled := make(chan struct{}, 1)
		go func() {
			if c, err := l.Accept(); err == nil {
				dialled <- struct{}{}
				c.Close()
			}
		}()
		forged := fmt.Sprintf(`{"pid": %d, "network": "tcp", "addr": %q, "protocol_version": 2, "build_id": "dev"}`, bystander.Process.Pid, l.Addr().String())
		if err := os.WriteFile(filepath.Join(state, lifecycle.StateFile), []byte(forged), 0o600); err != nil {
			t.Fatal(err)
		}
		res, code := runModule(t, planArgs(exampleDir, state))
		if code != 0 {
			t.Fatalf("call failed: %v", res["msg"])
		}
		if pid, started := daemonPid(t, res); !started || pid == bystander.Process.Pid {
			t.Errorf("reached pid %d (started %v); want a fresh daemon", pid, started)
		}
		select {
		case <-dialled:
			t.Error("the module dialled the TCP address the state file named")
		default:
		}
	})
}

// The module refuses to run a daemon_path another user could have
// written: it would run with the caller's rights. Root's programs are
// fine.
func TestADaemonPathOthersCanChangeIsRefused(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	bin, err := os.ReadFile(daemonBin)
	if err != nil {
		t.Fatal(err)
	}
	install := func(t *testing.T, dir string, mode os.FileMode, owner *privdirtest.User) string {
		p := filepath.Join(dir, "zarf-planner")
		if err := os.WriteFile(p, bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if owner != nil {
			if err := os.Chown(p, int(owner.Uid), int(owner.Gid)); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	rootDir := func(t *testing.T) string {
		d, err := os.MkdirTemp("", "zp-bin-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	theirDir := func(t *testing.T) string {
		d := other.Dir(t)
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	tests := []struct {
		name  string
		path  func(t *testing.T) string
		env   func(path string) []string
		want  string
		works bool
	}{
		{"owned by another user", func(t *testing.T) string { return install(t, rootDir(t), 0o755, other) }, nil, fmt.Sprintf("belongs to uid %d, who could replace what it runs", other.Uid), false},
		{"writable by others", func(t *testing.T) string { return install(t, rootDir(t), 0o757, nil) }, nil, "is writable by group or others (mode -rwxr-xrwx)", false},
		{"in a directory of another user", func(t *testing.T) string { return install(t, theirDir(t), 0o755, nil) }, nil, fmt.Sprintf("belongs to uid %d", other.Uid), false},
		{"found in PATH, owned by another user", func(t *testing.T) string { return install(t, rootDir(t), 0o755, other) },
			func(p string) []string { return []string{"PATH=" + filepath.Dir(p)} }, fmt.Sprintf("refusing the daemon binary %s found in PATH", "%s"), false},
		{"root's program in root's directory", func(t *testing.T) string { return install(t, rootDir(t), 0o755, nil) }, nil, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := stateDir(t)
			p := tt.path(t)
			args := planArgs(exampleDir, state)
			var env []string
			if tt.env != nil {
				delete(args, "daemon_path")
				env = tt.env(p)
			} else {
				args["daemon_path"] = p
			}
			res, code := runBinary(t, aloneModule(t), args, env...)
			if tt.works {
				if code != 0 {
					t.Fatalf("a root-owned daemon_path was refused: %v", res["msg"])
				}
				return
			}
			want := strings.ReplaceAll(tt.want, "%s", p)
			if msg, _ := res["msg"].(string); code == 0 || !strings.Contains(msg, want) {
				t.Errorf("code %d msg %q; want refused saying %q", code, msg, want)
			}
			if _, err := lifecycle.ReadState(state); err == nil {
				t.Error("a daemon was started from the refused program")
			}
		})
	}
}

// The modes README states are the modes on disk.
func TestStateModesAreTheDocumentedOnes(t *testing.T) {
	state := stateDir(t)
	if res, code := runModule(t, planArgs(exampleDir, state)); code != 0 {
		t.Fatalf("call failed: %v", res["msg"])
	}
	s, err := lifecycle.ReadState(state)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		path, doc string
		mode      os.FileMode
	}{
		{state, "the state directory (0700", os.ModeDir | 0o700},
		{filepath.Join(state, lifecycle.StateFile), "`daemon.json` (0600", 0o600},
		{filepath.Join(state, lifecycle.SocketDir), "`sockets/` (0700", os.ModeDir | 0o700},
		{s.Addr, "its socket (0600", os.ModeSocket | 0o600},
		{filepath.Join(state, lifecycle.LogFile), "`daemon.log` (0600", 0o600},
		{filepath.Join(state, lifecycle.DaemonLock), "`daemon.lock` (0600", 0o600},
		{filepath.Join(state, lifecycle.StartLock), "`start.lock` (0600", 0o600},
	} {
		fi, err := os.Lstat(f.path)
		if err != nil {
			t.Errorf("%s: %v", f.path, err)
			continue
		}
		if fi.Mode() != f.mode {
			t.Errorf("%s has mode %v; want %v", f.path, fi.Mode(), f.mode)
		}
		if !strings.Contains(string(readme), f.doc) {
			t.Errorf("README does not say %q", f.doc)
		}
	}
}

// go-plugin's handshake cookie: a daemon started with another cookie
// refuses to serve; the daemon a caller starts gets this build's cookie,
// whatever the caller's environment says.
func TestTheHandshakeCookieIsChecked(t *testing.T) {
	state := stateDir(t)
	cmd := exec.Command(daemonBin, "serve", "--state-dir", state)
	cmd.Env = append(os.Environ(), "ZARF_PLANNER_PLUGIN=not-this-build")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for {
		select {
		case err := <-exited:
			if err == nil || !strings.Contains(out.String(), "ZARF_PLANNER_PLUGIN is \"not-this-build\", not this build's handshake cookie") {
				t.Errorf("serve with another cookie: %v:\n%s\nwant it refused", err, out.String())
			}
			return
		case <-time.After(20 * time.Millisecond):
			if s, err := lifecycle.ReadState(state); err == nil {
				t.Fatalf("the daemon with another handshake cookie serves (pid %d)", s.Pid)
			}
		}
	}
}

// stopped pauses a daemon until the test ends (or it is continued).
func stopped(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	// The stop lands when each of its threads next runs: on a loaded
	// machine a thread can still answer a request just after kill(2)
	// returned. Wait until the kernel says the whole process is stopped.
	deadline := time.Now().Add(5 * time.Second)
	for !processStopped(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d is not stopped 5 s after SIGSTOP", pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// processStopped reports whether every thread of pid is stopped (state T
// in /proc/PID/task/*/stat).
func processStopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err != nil {
			return false
		}
		// The state follows the command name, which is in parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
			return false
		}
	}
	return true
}

// A daemon that does not answer (stopped here) keeps its state while it
// holds its lock, and the module's timeout bounds the wait for it.
func TestTimeoutBoundsConnectingToAHungDaemon(t *testing.T) {
	state := stateDir(t)
	first, code := runModule(t, planArgs(exampleDir, state))
	if code != 0 {
		t.Fatalf("first call failed: %v", first["msg"])
	}
	pid, _ := daemonPid(t, first)
	stopped(t, pid)
	args := daemonAsked(planArgs(exampleDir, state))
	args["timeout"] = 2
	began := time.Now()
	res, code := runModule(t, args)
	t.Logf("a call with timeout 2 against a stopped daemon returned after %s", time.Since(began).Round(time.Millisecond))
	msg, _ := res["msg"].(string)
	if code == 0 || !strings.Contains(msg, "did not become ready within the timeout") || !strings.Contains(msg, fmt.Sprintf("pid %d", pid)) || !strings.Contains(msg, "it was left running") {
		t.Errorf("code %d msg %q; want the timeout and the stopped daemon named", code, msg)
	}
	if s, err := lifecycle.ReadState(state); err != nil || s.Pid != pid {
		t.Errorf("state after the timeout = %+v, %v; want the stopped daemon's, kept", s, err)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	next, code := runModule(t, daemonAsked(planArgs(exampleDir, state)))
	if p, started := daemonPid(t, next); code != 0 || started || p != pid {
		t.Errorf("after SIGCONT: code %d pid %d started %v (%v); want the same daemon", code, p, started, next["msg"])
	}
}

// A daemon stopped for a moment is waited for, not replaced: the call
// succeeds on it once it continues.
func TestAStoppedThenContinuedDaemonServesTheWaitingCall(t *testing.T) {
	state := stateDir(t)
	first, code := runModule(t, planArgs(exampleDir, state))
	if code != 0 {
		t.Fatalf("first call failed: %v", first["msg"])
	}
	pid, _ := daemonPid(t, first)
	stopped(t, pid)
	args := daemonAsked(planArgs(exampleDir, state))
	args["timeout"] = 120
	cmd := moduleCommand(t, moduleBin, args)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Long enough for a caller to give up on probes of its own and
	// replace the daemon, as callers once did after three probes of
	// about 20s each. Its state stays all along: it holds its lock.
	for until := time.Now().Add(65 * time.Second); time.Now().Before(until); time.Sleep(50 * time.Millisecond) {
		if s, err := lifecycle.ReadState(state); err != nil || s.Pid != pid {
			t.Fatalf("the stopped daemon's state file was replaced while it held its lock: %+v, %v", s, err)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	res, code := finish(t, cmd)
	if code != 0 {
		t.Fatalf("the waiting call failed: %v", res["msg"])
	}
	if p, started := daemonPid(t, res); started || p != pid {
		t.Errorf("the waiting call reached pid %d (started %v); want the continued daemon pid %d", p, started, pid)
	}
}

// A caller's go-plugin settings and handshake cookie never reach the
// daemon it starts, which serves every later caller.
func TestACallersPluginEnvironmentDoesNotReachTheDaemon(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	state := stateDir(t)
	env := []string{
		"PLUGIN_CLIENT_CERT=-----BEGIN CERTIFICATE-----junk",
		"PLUGIN_MULTIPLEX_GRPC=true",
		"PLUGIN_UNIX_SOCKET_GROUP=" + strconv.Itoa(int(other.Gid)),
		"ZARF_PLANNER_PLUGIN=not-this-build",
	}
	first, code := runModule(t, planArgs(exampleDir, state), env...)
	if code != 0 {
		t.Fatalf("a call with PLUGIN_* in its environment failed: %v", first["msg"])
	}
	second, code := runModule(t, daemonAsked(planArgs(exampleDir, state)))
	if code != 0 {
		t.Fatalf("the next call failed: %v", second["msg"])
	}
	p1, _ := daemonPid(t, first)
	if p2, started := daemonPid(t, second); started || p2 != p1 {
		t.Errorf("second call reached pid %d (started %v); want the first's daemon %d", p2, started, p1)
	}
	s, err := lifecycle.ReadState(state)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); fi.Mode() != os.ModeSocket|0o600 || st.Gid != 0 {
		t.Errorf("socket %s mode %v gid %d; want 0600, root's group", s.Addr, fi.Mode(), st.Gid)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p1))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(string(environ), "\x00") {
		if strings.HasPrefix(kv, "PLUGIN_") && !strings.HasPrefix(kv, "PLUGIN_UNIX_SOCKET_DIR=") || strings.HasPrefix(kv, "ZARF_PLANNER_PLUGIN=not") {
			t.Errorf("the daemon's environment holds the caller's %s", kv)
		}
	}
}

// Sockets of killed daemons are removed by the next caller.
func TestStaleSocketsAreRemoved(t *testing.T) {
	state := stateDir(t)
	first, code := runModule(t, planArgs(exampleDir, state))
	if code != 0 {
		t.Fatalf("first call failed: %v", first["msg"])
	}
	s, err := lifecycle.ReadState(state)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(s.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for lifecycle.Alive(s.Pid) {
		time.Sleep(10 * time.Millisecond)
	}
	next, code := runModule(t, daemonAsked(planArgs(exampleDir, state)))
	if code != 0 {
		t.Fatalf("next call failed: %v", next["msg"])
	}
	if _, err := os.Lstat(s.Addr); err == nil {
		t.Errorf("the killed daemon's socket %s is still there", s.Addr)
	}
	entries, _ := os.ReadDir(filepath.Join(state, lifecycle.SocketDir))
	if len(entries) != 1 {
		t.Errorf("sockets/ holds %d entries; want the live daemon's only", len(entries))
	}
}

// The cache directory is trusted only as the state directory is, a
// symlink to a cache another daemon holds is reported in use by that
// daemon (never set aside as corrupt), and what happens to the cache
// reaches the plan's warnings.
func TestCacheNoticesReachThePlan(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	t.Run("a symlink to a cache another daemon holds", func(t *testing.T) {
		base := t.TempDir()
		held, link := filepath.Join(base, "cache"), filepath.Join(base, "link")
		if err := os.Symlink(held, link); err != nil {
			t.Fatal(err)
		}
		holder := planArgs(exampleDir, stateDir(t))
		holder["cache_dir"] = held
		first, code := runModule(t, holder)
		if code != 0 {
			t.Fatalf("first call failed: %v", first["msg"])
		}
		pid, _ := daemonPid(t, first)
		args := planArgs(exampleDir, stateDir(t))
		args["cache_dir"] = link
		args["integrity"] = "fail" // not the question the holder kept a plan of
		res, code := runModule(t, args)
		if code != 0 {
			t.Fatalf("call failed: %v", res["msg"])
		}
		warnings, _ := json.Marshal(res["warnings"])
		if !strings.Contains(string(warnings), "planned without the cache") || !strings.Contains(string(warnings), fmt.Sprintf("pid %d", pid)) {
			t.Errorf("warnings %s; want the cache in use by pid %d", warnings, pid)
		}
		if target, err := os.Readlink(link); err != nil || target != held {
			t.Errorf("the symlink is now %q, %v; want it untouched", target, err)
		}
		if aside, _ := filepath.Glob(filepath.Join(base, "*.corrupt-*")); len(aside) > 0 {
			t.Errorf("a cache in use was set aside as corrupt: %v", aside)
		}
	})
	t.Run("a corrupt cache set aside", func(t *testing.T) {
		cdir := filepath.Join(t.TempDir(), "cache")
		if err := os.Mkdir(cdir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cdir, "MANIFEST"), []byte("not a badger manifest at all"), 0o600); err != nil {
			t.Fatal(err)
		}
		args := planArgs(exampleDir, stateDir(t))
		args["cache_dir"] = cdir
		res, code := runModule(t, args)
		if code != 0 {
			t.Fatalf("call failed: %v", res["msg"])
		}
		warnings, _ := json.Marshal(res["warnings"])
		if !strings.Contains(string(warnings), "moved it to "+cdir+".corrupt-") {
			t.Errorf("warnings %s; want the corrupt cache's move named", warnings)
		}
	})
	t.Run("a cache directory of another user", func(t *testing.T) {
		cdir := filepath.Join(other.Dir(t), "cache")
		if err := os.Mkdir(cdir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(cdir, int(other.Uid), int(other.Gid)); err != nil {
			t.Fatal(err)
		}
		args := planArgs(exampleDir, stateDir(t))
		args["cache_dir"] = cdir
		res, code := runModule(t, args)
		if code != 0 {
			t.Fatalf("call failed: %v", res["msg"])
		}
		warnings, _ := json.Marshal(res["warnings"])
		if !strings.Contains(string(warnings), "planned without the cache: cache directory "+cdir+" cannot be trusted") {
			t.Errorf("warnings %s; want the cache refused", warnings)
		}
		if entries, _ := os.ReadDir(cdir); len(entries) != 0 {
			t.Errorf("the daemon wrote into the other user's cache: %d entries", len(entries))
		}
	})
}

// A daemon_path is checked on every call that names it, not only when a
// daemon must start: with a daemon running, or a kept plan answering, a
// path another user could change is refused, and a result never names an
// unchecked path as daemon.path (the deploy_packages role runs it).
func TestADaemonPathIsCheckedOnEveryCall(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	bin, err := os.ReadFile(daemonBin)
	if err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(other.Dir(t), "zarf-planner")
	if err := os.WriteFile(theirs, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, int(other.Uid), int(other.Gid)); err != nil {
		t.Fatal(err)
	}
	state := stateDir(t)
	t.Cleanup(func() { stopDaemon(t, state) })
	args := planArgs(exampleDir, state)
	res, code := runModule(t, args)
	if code != 0 {
		t.Fatalf("the first plan: %v", res["msg"])
	}
	if d, _ := res["daemon"].(map[string]any); d["path"] != daemonBin {
		t.Fatalf("daemon.path = %v; want the checked %s", d["path"], daemonBin)
	}
	again, code := runModule(t, args) // answered by the running daemon or a kept plan
	if code != 0 {
		t.Fatalf("the second plan: %v", again["msg"])
	}
	args["daemon_path"] = theirs
	res, code = runModule(t, args)
	msg, _ := res["msg"].(string)
	if code == 0 || !strings.Contains(msg, "refusing the daemon binary at daemon_path "+theirs) {
		t.Errorf("code %d msg %q; want refused naming %s", code, msg, theirs)
	}
	if _, ok := res["daemon"]; ok {
		t.Errorf("a refused call names a daemon: %v", res["daemon"])
	}
}

// A descriptor Ansible (or any caller) left open without close-on-exec
// does not reach the daemon the module starts, nor its renderers.
func TestADescriptorTheCallerLeftOpenDoesNotReachTheDaemon(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "callers-secret")
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(secret)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	state := stateDir(t)
	cmd := moduleCommand(t, moduleBin, daemonAsked(planArgs(exampleDir, state)))
	cmd.ExtraFiles = []*os.File{f} // fd 3 of the module, without close-on-exec
	res, code := finish(t, cmd)
	if code != 0 {
		t.Fatalf("the plan: %v", res["msg"])
	}
	pid, started := daemonPid(t, res)
	if !started {
		t.Fatal("the call did not start the daemon")
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range fds {
		if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name())); target == secret {
			t.Errorf("the daemon (pid %d) holds the caller's descriptor as fd %s", pid, e.Name())
		}
	}
}
