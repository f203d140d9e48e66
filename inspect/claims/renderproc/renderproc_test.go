package renderproc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/chartrender"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
)

// renderer is the real zarf-planner-render, built once for these tests;
// otherBuild is the same renderer built as another build.
var renderer, otherBuild string

func TestMain(m *testing.M) {
	// The test binary re-run as a helper: another user's process that
	// attacks renderers, or a process that tries what the renderer's
	// filter forbids (confine_test.go).
	if helper := os.Getenv(helperEnv); helper != "" {
		os.Exit(runHelper(helper))
	}
	if filepath.Base(os.Args[0]) == renderproc.Binary {
		os.Exit(fakeRenderer())
	}
	dir, err := os.MkdirTemp("", "renderproc-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	renderer = filepath.Join(dir, renderproc.Binary)
	otherBuild = filepath.Join(dir, "other", renderproc.Binary)
	for path, flags := range map[string]string{renderer: "", otherBuild: "-X github.com/colonel-byte/zarf-planner/buildinfo.ID=other-build"} {
		cmd := exec.Command("go", "build", "-ldflags", flags, "-o", path, "github.com/colonel-byte/zarf-planner/cmd/zarf-planner")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // it confines every thread of its own (renderproc.Confine)
		out, err := cmd.CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "building the renderer: %v\n%s", err, out)
			os.Exit(1)
		}
		// As make build installs it (a daemon of root's refuses a
		// renderer others may read).
		if err := os.Chmod(path, 0o711); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := installFakes(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.RemoveAll(fakes)
	os.Exit(code)
}

func chartOf(t *testing.T, template string) claims.ChartRequest {
	return claims.ChartRequest{Chart: rendertest.Chart(t, map[string]string{"templates/t.yaml": template}), Release: "demo", Namespace: "demo"}
}

// children are the renderer processes alive now.
func children(t *testing.T) []int { return childrenOf(t, renderer) }

// childrenOf are the processes of the binary at path alive now.
func childrenOf(t *testing.T, path string) []int {
	t.Helper()
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, p := range procs {
		if exe, err := os.Readlink(p); err == nil && exe == path {
			var pid int
			fmt.Sscanf(strings.Split(p, "/")[2], "%d", &pid)
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestAChartRendersInItsProcessAsInProcess(t *testing.T) {
	r := renderproc.New(renderer)
	defer r.Close()
	req := chartOf(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\n  namespace: {{ .Release.Namespace }}\n{{ if .Capabilities }}{{ end }}")
	req.Values = [][]byte{[]byte("a: 1\n")}
	got, err := r.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want, err := chartrender.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the renderer process answered\n%+v\nin process:\n%+v", got, want)
	}
	if !strings.Contains(string(got.Files["templates/t.yaml"]), "name: demo-cm") {
		t.Fatalf("rendered %q", got.Files)
	}
	// A chart Helm refuses is the chart's fault, named as such.
	_, err = r.Render(context.Background(), chartOf(t, "{{ fail \"no\" }}"))
	var bad *claims.ChartError
	if !errors.As(err, &bad) || !strings.Contains(bad.Reason, "no") {
		t.Fatalf("a failing template gave %v", err)
	}
	// The renderer checks the archive itself: a file name that is not
	// UTF-8 is the chart's fault too.
	_, err = r.Render(context.Background(), claims.ChartRequest{Chart: rendertest.Chart(t, map[string]string{"templates/\xff.yaml": "kind: ConfigMap\n"}), Release: "demo", Namespace: "demo"})
	if !errors.As(err, &bad) || !strings.Contains(bad.Reason, "not UTF-8") {
		t.Fatalf("a file name that is not UTF-8 gave %v", err)
	}
	// The same process answered all three: it is kept while healthy.
	if n := len(children(t)); n != 1 {
		t.Fatalf("%d renderer processes after three charts, want the one kept", n)
	}
	r.Close()
	if pids := children(t); len(pids) != 0 {
		t.Fatalf("renderer processes %v outlive Close", pids)
	}
}

func TestARunawayTemplateIsKilledWithItsProcess(t *testing.T) {
	r := renderproc.New(renderer)
	r.Timeout = 2 * time.Second
	defer r.Close()
	start := time.Now()
	_, err := r.Render(context.Background(), chartOf(t, "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}"))
	took := time.Since(start)
	var bad *claims.ChartError
	if !errors.As(err, &bad) || !strings.Contains(bad.Reason, "took longer than 2s") {
		t.Fatalf("a runaway template gave %v", err)
	}
	if took > 5*time.Second {
		t.Fatalf("the runaway was stopped after %s", took)
	}
	if pids := children(t); len(pids) != 0 {
		t.Fatalf("the runaway's process %v still runs", pids)
	}
	// The runner goes on: the next chart renders in a new process.
	got, err := r.Render(context.Background(), chartOf(t, "kind: ConfigMap\n"))
	if err != nil || len(got.Files) != 1 {
		t.Fatalf("after a kill: %v, %v", got, err)
	}
}

func TestAMemoryBombDiesAloneInItsProcess(t *testing.T) {
	r := renderproc.New(renderer)
	r.Timeout = 60 * time.Second
	defer r.Close()
	x := strings.Repeat("x", 160)
	start := time.Now()
	_, err := r.Render(context.Background(), chartOf(t, "{{ range until 100000 }}{{ repeat 100000 \""+x+"\" }}{{ end }}"))
	var bad *claims.ChartError
	// Its render outgrows RenderHeap (Serve's watch), long before its
	// address space (RenderMemory).
	if !errors.As(err, &bad) || !strings.Contains(bad.Reason, "(renderproc.RenderHeap)") {
		t.Fatalf("a template asking for terabytes gave %v", err)
	}
	t.Logf("after %s: %v", time.Since(start).Round(time.Millisecond), err)
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("the bomb ran %s before its process died", took)
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.HeapAlloc > 256<<20 {
		t.Fatalf("the caller's heap is %d MiB", m.HeapAlloc>>20)
	}
}

func TestARendererThatCannotStartIsNotTheChartsFault(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), renderproc.Binary), "relative/" + renderproc.Binary} {
		_, err := renderproc.New(path).Render(context.Background(), chartOf(t, "kind: ConfigMap\n"))
		var bad *claims.ChartError
		if err == nil || errors.As(err, &bad) || !strings.Contains(err.Error(), "reinstall") {
			t.Fatalf("renderer %q: %v", path, err)
		}
	}
}

func TestARendererOthersCouldChangeIsNotRun(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(renderer)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, renderproc.Binary)
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err = renderproc.New(path).Render(context.Background(), chartOf(t, "kind: ConfigMap\n"))
	var bad *claims.ChartError
	if err == nil || errors.As(err, &bad) || !strings.Contains(err.Error(), "writable by group or others") {
		t.Fatalf("a renderer anyone may replace: %v", err)
	}
	if pids := children(t); len(pids) != 0 {
		t.Fatalf("it was started: %v", pids)
	}
}

func TestARendererThatFailsIsNotTheChartsFault(t *testing.T) {
	// One that dies before its hello, one that says another protocol's
	// hello, and one of this protocol but another build.
	for name, script := range map[string]string{
		"dies":  "#!/bin/sh\necho 'cannot start here' >&2\nexit 3\n",
		"other": "#!/bin/sh\nprintf '\\000\\000\\000\\014{\"hello\":99}'\nsleep 5\n",
		"build": fmt.Sprintf("#!/bin/sh\nprintf '\\000\\000\\000\\%03o{\"hello\":%d,\"build\":\"old\"}'\nsleep 5\n", len(fmt.Sprintf(`{"hello":%d,"build":"old"}`, renderproc.Protocol)), renderproc.Protocol),
	} {
		_, err := renderproc.New(fake(t, script)).Render(context.Background(), chartOf(t, "kind: ConfigMap\n"))
		var bad *claims.ChartError
		if err == nil || errors.As(err, &bad) {
			t.Fatalf("%s: %v", name, err)
		}
		want := map[string]string{"dies": "exit status 3: cannot start here", "other": "protocol 99", "build": `it is build "old", this zarf-planner is build dev`}[name]
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "failed to start") {
			t.Fatalf("%s: %v; want it to say %q", name, err, want)
		}
	}
}

// The real renderer of another build (a collection half upgraded) is
// refused at its hello: what it renders would be cached for this build.
func TestARendererOfAnotherBuildIsRefused(t *testing.T) {
	_, err := renderproc.New(otherBuild).Render(context.Background(), chartOf(t, "kind: ConfigMap\n"))
	var bad *claims.ChartError
	if err == nil || errors.As(err, &bad) || !strings.Contains(err.Error(), `it is build "other-build", this zarf-planner is build dev`) ||
		!strings.Contains(err.Error(), "reinstall zarf-planner and its renderer together") {
		t.Fatalf("a renderer of another build: %v", err)
	}
	if pids := childrenOf(t, otherBuild); len(pids) != 0 {
		t.Fatalf("left running: %v", pids)
	}
}

func TestARendererKilledFromOutsideIsNotTheChartsFault(t *testing.T) {
	r := renderproc.New(renderer)
	r.Timeout = 30 * time.Second
	defer r.Close()
	go func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if pids := children(t); len(pids) == 1 {
				time.Sleep(300 * time.Millisecond)
				_ = syscall.Kill(pids[0], syscall.SIGKILL)
				return
			}
		}
	}()
	_, err := r.Render(context.Background(), chartOf(t, "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}"))
	var bad *claims.ChartError
	if err == nil || errors.As(err, &bad) || !strings.Contains(err.Error(), "signal: killed") {
		t.Fatalf("a renderer killed by someone else: %v", err)
	}
}

func TestARenderAbandonedInItsProcessRetiresIt(t *testing.T) {
	// The parent waits longer than the renderer's own timeout: the
	// renderer answers, abandoning the template, and must not serve again.
	r := renderproc.New(renderer)
	r.Timeout = claims.RenderTimeout + 20*time.Second
	defer r.Close()
	_, err := r.Render(context.Background(), chartOf(t, "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}"))
	var bad *claims.ChartError
	if !errors.As(err, &bad) || !strings.Contains(bad.Reason, "took longer than "+claims.RenderTimeout.String()) {
		t.Fatalf("an abandoned render: %v", err)
	}
	if pids := children(t); len(pids) != 0 {
		t.Fatalf("the process that abandoned a render is kept: %v", pids)
	}
}

func TestAnIdleRendererThatDiedIsReplaced(t *testing.T) {
	r := renderproc.New(renderer)
	defer r.Close()
	if _, err := r.Render(context.Background(), chartOf(t, "kind: ConfigMap\n")); err != nil {
		t.Fatal(err)
	}
	pids := children(t)
	if len(pids) != 1 {
		t.Fatalf("renderer processes %v", pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	got, err := r.Render(context.Background(), chartOf(t, "kind: ConfigMap\n"))
	if err != nil || len(got.Files) != 1 {
		t.Fatalf("after its idle renderer died: %v, %v", got, err)
	}
}

func TestTheRendererBoundsItself(t *testing.T) {
	cmd := exec.Command(renderer)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	limits := fmt.Sprintf("/proc/%d/limits", cmd.Process.Pid)
	want := []string{fmt.Sprintf("Max address space         %d", renderproc.RenderMemory), fmt.Sprintf("Max cpu time              %d", renderproc.RenderCPU)}
	var out []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if out, err = os.ReadFile(limits); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), want[0]) && strings.Contains(string(out), want[1]) {
			return
		}
	}
	t.Fatalf("the renderer's limits lack %q:\n%s", want, out)
}

// status is a field of /proc/pid/status, in kB for memory.
func status(t *testing.T, pid int, field string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return ""
}

func kB(t *testing.T, v string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscanf(v, "%d kB", &n); err != nil {
		t.Fatalf("%q: %v", v, err)
	}
	return n
}

// An idle renderer kept for the next chart gives back what its last
// render took (once it kept 604 MB for 30 s).
func TestAnIdleRendererReturnsItsMemory(t *testing.T) {
	r := renderproc.New(renderer)
	r.Timeout = 60 * time.Second
	defer r.Close()
	// 3 strings of 10 MB, held together until the template ends
	// (within RenderHeap).
	_, err := r.Render(context.Background(), chartOf(t, "{{ $l := list }}{{ range until 3 }}{{ $l = append $l (repeat 100000 (repeat 100 \"x\")) }}{{ end }}kind: ConfigMap\n"))
	if err != nil {
		t.Fatal(err)
	}
	pids := children(t)
	if len(pids) != 1 {
		t.Fatalf("renderer processes %v, want the one kept", pids)
	}
	peak, rss := kB(t, status(t, pids[0], "VmHWM")), kB(t, status(t, pids[0], "VmRSS"))
	t.Logf("the renderer peaked at %d MiB, holds %d MiB idle", peak>>10, rss>>10)
	if peak < 40<<10 {
		t.Fatalf("the render peaked at %d MiB: the test no longer makes it grow", peak>>10)
	}
	if rss > peak-20<<10 {
		t.Fatalf("the idle renderer holds %d MiB (peak %d MiB)", rss>>10, peak>>10)
	}
}

// A renderer holds nothing it does not need: as root's, it runs as a
// user and group of its own; it has no capability, no_new_privs, its
// system-call filter (seccomp mode 2) on every thread, no environment,
// and no descriptor but its pipes and the runtime's own, even one its
// caller inherited without close-on-exec.
func TestTheRendererHoldsNothingItDoesNotNeed(t *testing.T) {
	leaked := filepath.Join(t.TempDir(), "leaked")
	if err := os.WriteFile(leaked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Open(leaked, syscall.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	r := renderproc.New(renderer)
	defer r.Close()
	if _, err := r.Render(context.Background(), chartOf(t, "kind: ConfigMap\n")); err != nil {
		t.Fatal(err)
	}
	pids := children(t)
	if len(pids) != 1 {
		t.Fatalf("renderer processes %v", pids)
	}
	pid := pids[0]
	want := map[string]string{"CapInh": "0000000000000000", "CapPrm": "0000000000000000", "CapEff": "0000000000000000", "CapAmb": "0000000000000000", "NoNewPrivs": "1", "Seccomp": "2"}
	if os.Geteuid() == 0 {
		id := uidOf(t, pid)
		if id < renderproc.FirstUID || id > renderproc.LastUID {
			t.Errorf("renderer uid %d, want one of %d–%d", id, renderproc.FirstUID, renderproc.LastUID)
		}
		want["Uid"] = fmt.Sprintf("%d\t%d\t%d\t%d", id, id, id, id)
		want["Gid"] = want["Uid"]
		want["Groups"] = ""
	} else {
		t.Log("not root: the renderer keeps the caller's uid")
	}
	// Every thread of it: no_new_privs, capabilities and a thread's
	// name are each thread's own, and the Go runtime runs several.
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/[0-9]*", pid))
	if err != nil || len(tasks) < 2 {
		t.Fatalf("renderer threads %v (%v); want the Go runtime's several", tasks, err)
	}
	for _, task := range tasks {
		var tid int
		fmt.Sscanf(filepath.Base(task), "%d", &tid)
		for field, v := range want {
			if got := status(t, tid, field); got != v {
				t.Errorf("renderer thread %d %s: %q, want %q", tid, field, got, v)
			}
		}
		if comm, err := os.ReadFile(task + "/comm"); err != nil || !strings.HasPrefix(renderproc.Binary, strings.TrimSpace(string(comm))) || len(comm) < 10 {
			t.Errorf("renderer thread %d name %q (%v), want %s cut to 15 bytes", tid, comm, err, renderproc.Binary)
		}
	}
	if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err != nil || len(env) != 0 {
		t.Errorf("renderer environment %q (%v), want none", env, err)
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	var links []string
	for _, e := range fds {
		link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		links = append(links, e.Name()+" → "+link)
		// The Go runtime keeps its cgroup's CPU limit open (it follows
		// it for GOMAXPROCS).
		runtimes := strings.HasPrefix(link, "/sys/fs/cgroup/") && (strings.HasSuffix(link, "/cpu.max") || strings.HasSuffix(link, "/cpu.cfs_quota_us") || strings.HasSuffix(link, "/cpu.cfs_period_us"))
		ok := strings.HasPrefix(link, "pipe:") || link == "anon_inode:[eventpoll]" || link == "anon_inode:[eventfd]" || runtimes
		if !ok || link == leaked {
			t.Errorf("renderer descriptor %s is %s", e.Name(), link)
		}
	}
	// stdin, stdout, stderr and the answers' own; the runtime's poller
	// and cgroup files.
	if len(links) > 8 {
		t.Errorf("renderer descriptors %q", links)
	}
	t.Logf("renderer descriptors %q", links)
}

// A renderer that would run with more than its caller is not run.
func TestASetUserIDRendererIsNotRun(t *testing.T) {
	b, err := os.ReadFile(renderer)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), renderproc.Binary)
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	_, err = renderproc.New(path).Render(context.Background(), chartOf(t, "kind: ConfigMap\n"))
	var bad *claims.ChartError
	if err == nil || errors.As(err, &bad) || !strings.Contains(err.Error(), "set-user-ID") {
		t.Fatalf("a set-user-ID renderer: %v", err)
	}
	if pids := childrenOf(t, path); len(pids) != 0 {
		t.Fatalf("it was started: %v", pids)
	}
}

// As root's, a renderer runs as a user of its own, which must be able
// to execute it and must not be able to read it: one that others may
// not execute, or may read, is refused, saying what to do.
func TestARendererItsUserMayNotRunOrMayReadIsRefusedAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the renderer runs as its caller when the caller is not root")
	}
	b, err := os.ReadFile(renderer)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), renderproc.Binary)
	if err := os.WriteFile(path, b, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o750, 0o755, 0o705} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err = renderproc.New(path).Render(context.Background(), chartOf(t, "kind: ConfigMap\n"))
		var bad *claims.ChartError
		if err == nil || errors.As(err, &bad) || !strings.Contains(err.Error(), fmt.Sprintf("is mode %04o", mode)) || !strings.Contains(err.Error(), "chmod 0711") {
			t.Fatalf("a renderer of mode %04o: %v", mode, err)
		}
		if pids := childrenOf(t, path); len(pids) != 0 {
			t.Fatalf("it was started: %v", pids)
		}
	}
	// The directories above it need not be open to its user: this one
	// is 0700 (t.TempDir), and the renderer of the tests is in one too.
	if err := os.Chmod(path, 0o711); err != nil {
		t.Fatal(err)
	}
	if _, err := renderproc.New(path).Render(context.Background(), chartOf(t, "kind: ConfigMap\n")); err != nil {
		t.Fatalf("a renderer in a directory only root may enter: %v", err)
	}
}
