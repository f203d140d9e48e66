package renderproc_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
)

// helperEnv names what the test binary does when re-run as a helper:
// "attack" (attacker), or "try:" and a system call (tryForbidden).
const helperEnv = "ZARF_PLANNER_RENDERPROC_HELPER"

func runHelper(helper string) int {
	if what, ok := strings.CutPrefix(helper, "try:"); ok {
		return tryForbidden(what)
	}
	if helper == "attack" {
		return attacker()
	}
	if path, ok := strings.CutPrefix(helper, "render:"); ok {
		return renderAsCaller(path)
	}
	if path, ok := strings.CutPrefix(helper, "peak:"); ok {
		return renderMeasured(path)
	}
	fmt.Fprintf(os.Stderr, "unknown helper %q\n", helper)
	return 2
}

// uidOf is the real uid process pid runs as.
func uidOf(t *testing.T, pid int) int {
	t.Helper()
	id, err := strconv.Atoi(strings.Fields(status(t, pid, "Uid"))[0])
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// attacker is a process of another user (the renderer's old one,
// nobody) that, for every new child of the test process (its parent,
// whose pid it is given), tries at first sight to trace it (seize, then
// attach), stop it and kill it. It says "ready" once it watches, then
// one line per child seen and per attempt that succeeded, until its
// stdin closes.
func attacker() int {
	// A tracer is a thread: this one.
	runtime.LockOSThread()
	parent := os.Getppid()
	stop := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	seen := map[int]bool{os.Getpid(): true}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	fmt.Fprintln(out, "ready")
	out.Flush()
	for {
		select {
		case <-stop:
			return 0
		default:
		}
		d, err := os.Open("/proc")
		if err != nil {
			fmt.Fprintln(out, "error", err)
			return 1
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		for _, name := range names {
			pid, err := strconv.Atoi(name)
			if err != nil || seen[pid] {
				continue
			}
			b, err := os.ReadFile("/proc/" + name + "/stat")
			if err != nil {
				continue
			}
			// pid (comm) state ppid …: comm may hold anything but ")".
			fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
			if len(fields) < 2 || fields[1] != strconv.Itoa(parent) {
				continue
			}
			seen[pid] = true
			fmt.Fprintln(out, "saw", pid)
			traced := false
			if unix.PtraceSeize(pid) == nil {
				fmt.Fprintln(out, "seize", pid)
				traced = true
			} else if unix.PtraceAttach(pid) == nil {
				fmt.Fprintln(out, "attach", pid)
				traced = true
			}
			if unix.Kill(pid, unix.SIGSTOP) == nil {
				fmt.Fprintln(out, "stop", pid)
				_ = unix.Kill(pid, unix.SIGCONT)
			}
			if unix.Kill(pid, unix.SIGKILL) == nil {
				fmt.Fprintln(out, "kill", pid)
			}
			if traced {
				// Its tracer reaps it first: then its parent can.
				_, _ = unix.Wait4(pid, nil, unix.WALL, nil)
			}
			out.Flush()
		}
	}
}

// A process of the renderer's old user (nobody) watches for each of 100
// renderer starts and tries, at first sight, to trace it, stop it and
// kill it: none succeeds. Before, each renderer ran as nobody from a
// program nobody could read: any process of nobody could signal it, and
// trace it until it made itself not dumpable.
func TestNoOtherUsersProcessReachesARendererFromItsStart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("as another user, the renderer runs as its caller, who can trace its caller already")
	}
	// The attacker is this test binary, where nobody may run it.
	exe := filepath.Join(fakes, "bin")
	cmd := exec.Command(exe)
	cmd.Env = []string{helperEnv + "=attack"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: renderproc.Unprivileged, Gid: renderproc.Unprivileged, Groups: []uint32{}}, Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(outPipe)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("the attacker did not start: %q", lines.Text())
	}
	report := make(chan []string, 1)
	go func() {
		var all []string
		for lines.Scan() {
			all = append(all, lines.Text())
		}
		report <- all
	}()

	const starts = 100
	renderers := map[int]bool{}
	var failed []string
	for range starts {
		r := renderproc.New(renderer)
		_, err := r.Render(context.Background(), chartOf(t, "kind: ConfigMap\n"))
		if err != nil {
			failed = append(failed, err.Error())
		}
		for _, pid := range children(t) {
			renderers[pid] = true
		}
		r.Close()
	}
	in.Close()
	got := <-report
	_ = cmd.Wait()

	saw := 0
	reached := map[string]int{}
	for _, line := range got {
		var what string
		var pid int
		if _, err := fmt.Sscanf(line, "%s %d", &what, &pid); err != nil {
			t.Fatalf("the attacker said %q", line)
		}
		if what == "saw" {
			saw++
		} else {
			reached[what]++
		}
	}
	t.Logf("%d renderer starts; the attacker saw %d processes start and traced, stopped or killed %v", starts, saw, reached)
	if len(reached) != 0 || len(failed) != 0 {
		t.Errorf("a process of nobody reached renderers: %v; %d renders failed, the first: %q", reached, len(failed), failed[:min(len(failed), 1)])
	}
	if len(renderers) != starts || saw < starts*9/10 {
		t.Fatalf("the attacker saw %d processes start, %d renderers ran (%d starts): the test no longer attacks them", saw, len(renderers), starts)
	}
}

// Two daemons' renderers (two Runners), alive together, run as two
// users, each one of the range.
func TestTwoDaemonsRenderersRunAsTwoUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("as another user, the renderer runs as its caller")
	}
	a, b := renderproc.New(renderer), renderproc.New(renderer)
	defer a.Close()
	defer b.Close()
	for _, r := range []*renderproc.Runner{a, b} {
		if _, err := r.Render(context.Background(), chartOf(t, "kind: ConfigMap\n")); err != nil {
			t.Fatal(err)
		}
	}
	pids := children(t)
	if len(pids) != 2 {
		t.Fatalf("renderer processes %v, want the two kept", pids)
	}
	x, y := uidOf(t, pids[0]), uidOf(t, pids[1])
	for _, id := range []int{x, y} {
		if id < renderproc.FirstUID || id > renderproc.LastUID {
			t.Fatalf("renderer uid %d, want one of %d–%d", id, renderproc.FirstUID, renderproc.LastUID)
		}
	}
	if x == y {
		t.Fatalf("both renderers run as uid %d", x)
	}
}

// tryForbidden installs the renderer's filter, then makes one system
// call it forbids; it says what the call returned if it survives.
func tryForbidden(what string) int {
	if err := renderproc.Restrict(); err != nil {
		fmt.Println("restrict:", err)
		return 3
	}
	var err error
	switch what {
	case "socket":
		var fd int
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		unix.Close(fd)
	case "exec":
		err = unix.Exec("/bin/true", []string{"true"}, nil)
	case "fork":
		_, err = syscall.ForkExec("/bin/true", []string{"true"}, nil)
	case "ptrace":
		err = unix.PtraceSeize(os.Getppid())
	case "signal":
		err = unix.Kill(os.Getppid(), 0)
	case "executable memory":
		_, err = unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANON)
	case "open":
		_, err = os.Open("/etc/hostname")
	case "thread":
		// A thread started after the filter, and the runtime's work.
		done := make(chan error)
		go func() {
			_, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
			done <- err
		}()
		err = <-done
	default:
		fmt.Println("unknown call", what)
		return 3
	}
	fmt.Println("survived:", err)
	return 0
}

// The renderer's filter kills a process that opens a socket, executes a
// program, forks, traces or signals another process or maps executable
// memory, also from a thread started after it; opening a file fails with
// EPERM and the process goes on.
func TestTheRenderersFilterForbidsWhatRenderingDoesNotNeed(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, what := range []string{"socket", "exec", "fork", "ptrace", "signal", "executable memory", "thread", "open"} {
		cmd := exec.Command(self)
		cmd.Env = []string{helperEnv + "=try:" + what}
		out, err := cmd.Output()
		var exit *exec.ExitError
		if what == "open" {
			if err != nil || !strings.Contains(string(out), "survived: open /etc/hostname: operation not permitted") {
				t.Errorf("%s: %v, %q; want it to fail with EPERM and go on", what, err, out)
			}
			continue
		}
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGSYS {
			t.Errorf("%s: %v, %q; want it killed by SIGSYS", what, err, out)
		}
	}
}

// A renderer the filter kills (SIGSYS) after it took a chart is the
// renderer's failure, not the chart's.
func TestARendererKilledByItsFilterIsNotTheChartsFault(t *testing.T) {
	_, err := renderproc.New(fake(t, socketAfterAck)).Render(context.Background(), chartOf(t, "kind: ConfigMap\n"))
	var bad *claims.ChartError
	if err == nil || errors.As(err, &bad) || !strings.Contains(err.Error(), "bad system call") || !strings.Contains(err.Error(), "the chart renderer failed while rendering") {
		t.Fatalf("a renderer killed by its filter: %v", err)
	}
}

// fakes holds the fake renderers: bin, this test binary (0711), and a
// directory per fake, holding a link to bin named as the renderer and
// its script, which others may read (the fake runs as the user of a
// renderer).
var fakes string

func installFakes() error {
	dir, err := os.MkdirTemp("", "renderproc-fakes-")
	if err != nil {
		return err
	}
	fakes = dir
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	b, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "bin"), b, 0o711)
}

// socketAfterAck is the script of a fake that says hello, acknowledges
// the chart, installs the renderer's filter and opens a socket.
const socketAfterAck = "socket after ack"

// fake is a renderer, installed as make build installs it, that runs
// script with /bin/sh (or socketAfterAck).
func fake(t *testing.T, script string) string {
	t.Helper()
	dir, err := os.MkdirTemp(fakes, "fake-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "script"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, renderproc.Binary)
	if err := os.Link(filepath.Join(fakes, "bin"), path); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeRenderer is this test binary run as a fake renderer: it runs the
// script beside it.
func fakeRenderer() int {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	script := filepath.Join(filepath.Dir(exe), "script")
	b, err := os.ReadFile(script)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if string(b) != socketAfterAck {
		err = unix.Exec("/bin/sh", []string{"sh", script}, []string{})
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	frame := func(s string) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(s)))
		os.Stdout.Write(append(n[:], s...))
	}
	frame(fmt.Sprintf(`{"hello":%d,"build":"%s"}`, renderproc.Protocol, buildinfo.ID))
	var n [4]byte
	if _, err := io.ReadFull(os.Stdin, n[:]); err != nil {
		return 1
	}
	if _, err := io.CopyN(io.Discard, os.Stdin, int64(binary.BigEndian.Uint32(n[:]))); err != nil {
		return 1
	}
	frame(`{"ack":true}`)
	if err := renderproc.Restrict(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	fmt.Fprintln(os.Stderr, "the filter let a socket be opened:", err)
	return 1
}

// renderAsCaller renders the chart of chartEnv (base64) with the
// renderer at path, then says the uid and seccomp mode of the renderer
// process, its child.
func renderAsCaller(path string) int {
	chart, err := base64.StdEncoding.DecodeString(os.Getenv(chartEnv))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	r := renderproc.New(path)
	defer r.Close()
	got, err := r.Render(context.Background(), claims.ChartRequest{Chart: chart, Release: "demo", Namespace: "demo"})
	if err != nil {
		fmt.Println("render:", err)
		return 1
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			st, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "status"))
			var uid, mode string
			for _, line := range strings.Split(string(st), "\n") {
				if v, ok := strings.CutPrefix(line, "Uid:"); ok {
					uid = strings.Fields(v)[0]
				}
				if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
					mode = strings.TrimSpace(v)
				}
			}
			fmt.Printf("rendered %d files as uid %s, seccomp %s\n", len(got.Files), uid, mode)
			return 0
		}
	}
	fmt.Println("no renderer process found")
	return 1
}

// chartEnv holds the chart a renderAsCaller helper renders.
const chartEnv = "ZARF_PLANNER_RENDERPROC_CHART"

// A plain user's process renders with a renderer of root's installed
// 0711, which it may execute and not read: the renderer runs as that
// user, with its filter.
func TestAPlainUserRendersWithRootsRenderer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("installing a renderer of root's needs root")
	}
	dir, err := os.MkdirTemp(fakes, "installed-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(renderer)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, renderproc.Binary)
	if err := os.WriteFile(path, b, 0o711); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(fakes, "bin"))
	cmd.Env = []string{helperEnv + "=render:" + path, chartEnv + "=" + base64.StdEncoding.EncodeToString(chartOf(t, "kind: ConfigMap\n").Chart)}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: renderproc.Unprivileged, Gid: renderproc.Unprivileged, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if want := fmt.Sprintf("rendered 1 files as uid %d, seccomp 2", renderproc.Unprivileged); err != nil || strings.TrimSpace(string(out)) != want {
		t.Fatalf("a plain user rendering with root's renderer: %v, %q; want %q", err, out, want)
	}
}
