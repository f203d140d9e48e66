package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/cache/kept"
	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

// The tests run the real binaries: the module as Ansible runs it (argv[1]
// is the args file) and the daemon it starts.
var (
	moduleBin, daemonBin           string
	otherModuleBin, otherDaemonBin string // built with another build id, of release 0.1.0
	exampleDir                     string
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		tmp, err := os.MkdirTemp("", "zp-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(tmp)
		// The binaries are root's, in root's directories, and the second
		// local user of the tests runs them too.
		if err := os.Chmod(tmp, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer func() {
			if err := privdirtest.Remove(); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}()
		moduleBin = filepath.Join(tmp, "zarf_bundle_plan")
		daemonBin = filepath.Join(tmp, "zarf-planner")
		otherModuleBin = filepath.Join(tmp, "other", "zarf_bundle_plan")
		otherDaemonBin = filepath.Join(tmp, "other", "zarf-planner")
		other := "-ldflags=-X github.com/colonel-byte/zarf-planner/buildinfo.ID=other-build -X github.com/colonel-byte/zarf-planner/buildinfo.Version=0.1.0"
		for _, b := range [][]string{{moduleBin, "."}, {daemonBin, "../cmd/zarf-planner"}, {otherModuleBin, ".", other}, {otherDaemonBin, "../cmd/zarf-planner", other}} {
			args := append([]string{"build", "-o", b[0]}, b[2:]...)
			if out, err := goBuild(append(args, b[1])...); err != nil {
				fmt.Fprintf(os.Stderr, "building %s: %v\n%s", b[1], err, out)
				return 1
			}
		}
		// Installed as make build installs it: executable, not readable,
		// by others (a daemon of root's refuses to start itself as its
		// chart renderer otherwise).
		for _, d := range []string{daemonBin, otherDaemonBin} {
			if err := os.Chmod(d, 0o711); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		// The in-process server of the tests (direct) renders charts as
		// the daemon does: with the renderer beside the test binary.
		if err := rendertest.Install(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		exampleDir, _ = filepath.Abs("../examples/bundles/reference-stack")
		return m.Run()
	}())
}

// goBuild runs go with args as the Makefile builds the binaries: static,
// without cgo (the chart renderer confines each of its threads, which a
// cgo binary cannot: renderproc.Confine).
func goBuild(args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd.CombinedOutput()
}

// stateDir is a short, private state directory that the test stops the
// daemon of when it ends.
func stateDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "zp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopDaemon(t, dir) })
	return dir
}

// stopDaemon stops the daemon of a test's state directory and removes the
// directory; a daemon that does not stop is reported and killed.
func stopDaemon(t *testing.T, dir string) {
	t.Helper()
	defer os.RemoveAll(dir)
	s, err := lifecycle.ReadState(dir)
	if err != nil {
		return // none running
	}
	if _, err := lifecycle.Stop(context.Background(), dir, 10*time.Second); err != nil && lifecycle.Alive(s.Pid) {
		t.Errorf("daemon pid %d did not stop: %v", s.Pid, err)
		_ = syscall.Kill(s.Pid, syscall.SIGKILL)
	}
}

// runModule runs the module binary with args and returns its one JSON
// result and exit code.
func runModule(t *testing.T, args map[string]any, env ...string) (map[string]any, int) {
	t.Helper()
	return runBinary(t, moduleBin, args, env...)
}

// aloneModule is a copy of the module binary alone in its directory, with
// no daemon beside it to default to, for tests of daemon_path and PATH.
func aloneModule(t *testing.T) string {
	t.Helper()
	alone := filepath.Join(t.TempDir(), "zarf_bundle_plan")
	b, err := os.ReadFile(moduleBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return alone
}

func runBinary(t *testing.T, bin string, args map[string]any, env ...string) (map[string]any, int) {
	t.Helper()
	cmd := moduleCommand(t, bin, args, env...)
	return finish(t, cmd)
}

func moduleCommand(t *testing.T, bin string, args map[string]any, env ...string) *exec.Cmd {
	t.Helper()
	b, _ := json.Marshal(args)
	argsFile := filepath.Join(t.TempDir(), "args")
	if err := os.WriteFile(argsFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, argsFile)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
	return cmd
}

// finish runs (or waits for) cmd and decodes its one JSON result.
func finish(t *testing.T, cmd *exec.Cmd) (map[string]any, int) {
	t.Helper()
	var err error
	if cmd.Process == nil {
		err = cmd.Run()
	} else {
		err = cmd.Wait()
	}
	stdout, stderr := cmd.Stdout.(*bytes.Buffer), cmd.Stderr.(*bytes.Buffer)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	dec := json.NewDecoder(stdout)
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("module printed no JSON object (%v); stderr: %s", err, stderr.String())
	}
	if dec.More() {
		t.Fatalf("module printed more than one JSON object")
	}
	return res, code
}

// planArgs plans dir for amd64, the architecture of the committed
// archives, whatever the host's, with a cache of the test's own (in the
// state directory, so it goes when the daemon has stopped).
func planArgs(dir, state string) map[string]any {
	return map[string]any{"path": dir, "architecture": "amd64", "daemon_path": daemonBin, "state_dir": state, "cache_dir": filepath.Join(state, "cache"),
		"_ansible_module_name": "zarf_bundle_plan", "_ansible_check_mode": false, "_ansible_verbosity": 0}
}

// planDocument is a plan result without what differs from call to call (the
// daemon that answered, the invocation): the plan document itself.
func planDocument(t *testing.T, res map[string]any) string {
	t.Helper()
	doc := maps.Clone(res)
	delete(doc, "daemon")
	delete(doc, "invocation")
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// freshPlan plans with args through a daemon of its own, reading every
// archive: no cache and no remembered plan can answer for it.
func freshPlan(t *testing.T, args map[string]any) map[string]any {
	t.Helper()
	fresh := maps.Clone(args)
	fresh["state_dir"], fresh["use_cache"] = stateDir(t), false
	delete(fresh, "_ansible_check_mode")
	res, _ := runModule(t, fresh)
	return res
}

// daemonAsked makes args a question no kept plan answers (use_cache
// false), for the tests of how the module reaches its daemon.
func daemonAsked(args map[string]any) map[string]any {
	args["use_cache"] = false
	return args
}

func daemonPid(t *testing.T, res map[string]any) (int, bool) {
	t.Helper()
	d, ok := res["daemon"].(map[string]any)
	if !ok {
		t.Fatalf("result has no daemon: %v", res)
	}
	pid, ok := d["pid"].(float64)
	if !ok {
		t.Fatalf("no daemon answered (daemon: %v); want one that did", d)
	}
	return int(pid), d["started"].(bool)
}

func order(res map[string]any) []string {
	var out []string
	items, _ := res["zarf_packages_to_deploy"].([]any)
	for _, it := range items {
		out = append(out, it.(map[string]any)["name"].(string))
	}
	return out
}

func TestSecondCallReusesTheDaemon(t *testing.T) {
	state := stateDir(t)
	first, code := runModule(t, planArgs(exampleDir, state))
	if code != 0 || first["failed"] == true {
		t.Fatalf("first call failed (%d): %v", code, first["msg"])
	}
	pid1, started1 := daemonPid(t, first)
	// Another question (the same one is answered from the kept plan).
	args := planArgs(exampleDir, state)
	args["integrity"] = "fail"
	second, _ := runModule(t, args)
	pid2, started2 := daemonPid(t, second)
	if !started1 || started2 || pid1 != pid2 {
		t.Errorf("first call pid %d started=%v, second pid %d started=%v; want one daemon started by the first", pid1, started1, pid2, started2)
	}
	want := []string{"init", "app-fluxcd", "csi-rook-ceph", "operator-cert-manager", "operator-external-secrets", "workload-app"}
	if got := order(second); !slices.Equal(got, want) {
		t.Errorf("order = %v; want %v", got, want)
	}
	if second["changed"] != false {
		t.Errorf("changed = %v; want false", second["changed"])
	}
	inv := second["invocation"].(map[string]any)["module_args"].(map[string]any)
	if inv["path"] != exampleDir || inv["mode"] != nil || inv["version_strategy"] != "newest_satisfying" || inv["use_cache"] != true {
		t.Errorf("invocation.module_args = %v", inv)
	}
	st, err := os.Stat(filepath.Join(state, lifecycle.StateFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("state file %v mode %v; want 0600", err, st.Mode().Perm())
	}
}

func TestStaleStateFileIsReplaced(t *testing.T) {
	state := stateDir(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := lifecycle.State{Pid: dead.Process.Pid, Network: "unix", Addr: filepath.Join(state, "gone.sock"), ProtocolVersion: 1, BuildID: "dev"}
	if err := lifecycle.WriteState(state, stale); err != nil {
		t.Fatal(err)
	}
	res, code := runModule(t, planArgs(exampleDir, state))
	if code != 0 {
		t.Fatalf("call with a stale state file failed: %v", res["msg"])
	}
	pid, started := daemonPid(t, res)
	if !started || pid == stale.Pid {
		t.Errorf("daemon pid %d started=%v; want a fresh daemon, not the dead pid %d", pid, started, stale.Pid)
	}
	s, err := lifecycle.ReadState(state)
	if err != nil || s.Pid != pid {
		t.Errorf("state file = %+v, %v; want pid %d", s, err, pid)
	}
}

func TestFiftyConcurrentCallersShareOneDaemon(t *testing.T) {
	state := stateDir(t)
	const n = 50
	pids := make([]int, n)
	plans := make([]string, n)
	started := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res, code := runModule(t, daemonAsked(planArgs(exampleDir, state)))
			if code != 0 {
				t.Errorf("call %d failed: %v", i, res["msg"])
				return
			}
			pids[i], started[i] = daemonPid(t, res)
			b, _ := json.Marshal(res["zarf_packages_to_deploy"])
			plans[i] = string(b)
		})
	}
	wg.Wait()
	starters := 0
	for i := range n {
		if pids[i] != pids[0] {
			t.Errorf("call %d reached daemon pid %d; call 0 reached %d", i, pids[i], pids[0])
		}
		if plans[i] != plans[0] {
			t.Errorf("call %d got another plan:\n%s\nwant\n%s", i, plans[i], plans[0])
		}
		if started[i] {
			starters++
		}
	}
	if starters != 1 {
		t.Errorf("%d calls say they started the daemon; want exactly 1", starters)
	}
}

// waitInflight polls the daemon until it serves want requests (or the
// test binary's own -timeout draws near).
func waitInflight(t *testing.T, state string, want int64) {
	t.Helper()
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(time.Hour)
	}
	for time.Now().Before(deadline.Add(-30 * time.Second)) {
		if _, st, err := lifecycle.Status(context.Background(), state); err == nil && st.Inflight == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, st, err := lifecycle.Status(context.Background(), state)
	t.Fatalf("daemon never had %d requests in flight (status %v, %v)", want, st, err)
}

// A call past its timeout is stopped in the daemon too: a cluster-mode
// plan held by the API server (heldCluster) for as long as the test
// wants ends at the module's timeout, and the daemon drops it.
func TestTimeoutCancelsTheDaemonsWork(t *testing.T) {
	state := stateDir(t)
	kubeconfig, _ := heldCluster(t)
	args := heldPlan(state, kubeconfig)
	args["timeout"] = 2
	res, code := runModule(t, args)
	if code == 0 || !strings.Contains(res["msg"].(string), "did not finish within the timeout") {
		t.Fatalf("code %d msg %v; want the timeout named", code, res["msg"])
	}
	waitInflight(t, state, 0) // the daemon stopped the held request
}

func TestInterruptedModuleCancelsTheDaemonsWork(t *testing.T) {
	state := stateDir(t)
	runModule(t, planArgs(exampleDir, state)) // start the daemon first
	kubeconfig, _ := heldCluster(t)
	cmd := moduleCommand(t, moduleBin, heldPlan(state, kubeconfig))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitInflight(t, state, 1)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	res, code := finish(t, cmd)
	if code == 0 || !strings.Contains(res["msg"].(string), "was interrupted") {
		t.Fatalf("code %d msg %v; want an interruption", code, res["msg"])
	}
	waitInflight(t, state, 0)
}

// A daemon killed mid-call is asked again once (TestACallInFlightWhen-
// TheDaemonIsKilledIsAskedAgain); when the fresh daemon is killed too,
// the call fails naming it, and the next call starts another.
func TestDaemonKilledMidCall(t *testing.T) {
	state := stateDir(t)
	runModule(t, planArgs(exampleDir, state))
	kubeconfig, _ := heldCluster(t)
	cmd := moduleCommand(t, moduleBin, heldPlan(state, kubeconfig))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for range 2 {
		s, err := lifecycle.ReadState(state)
		if err != nil {
			t.Fatal(err)
		}
		if s.Pid == pid {
			t.Fatalf("no fresh daemon took the call after pid %d was killed", pid)
		}
		pid = s.Pid
		waitInflight(t, state, 1)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitFor(func() bool {
			s, err := lifecycle.ReadState(state)
			return err == nil && s.Pid != pid || !lifecycle.Alive(cmd.Process.Pid)
		})
	}
	res, code := finish(t, cmd)
	if code == 0 || !strings.Contains(res["msg"].(string), fmt.Sprintf("daemon (pid %d) stopped answering", pid)) || !strings.Contains(res["msg"].(string), "the next call starts a fresh daemon") {
		t.Fatalf("code %d msg %v; want the second dead daemon, pid %d, named", code, res["msg"], pid)
	}
	nextArgs := planArgs(exampleDir, state)
	nextArgs["integrity"] = "fail" // a question not asked before: the kept plan cannot answer it
	next, code := runModule(t, nextArgs)
	if code != 0 {
		t.Fatalf("next call failed: %v", next["msg"])
	}
	if got, started := daemonPid(t, next); !started || got == pid {
		t.Errorf("next call reached pid %d (started %v); want a fresh daemon", got, started)
	}
}

func TestDaemonOfAnotherBuildIsReplaced(t *testing.T) {
	state := stateDir(t)
	old, _ := runBinary(t, otherModuleBin, map[string]any{"path": exampleDir, "daemon_path": otherDaemonBin, "state_dir": state, "use_cache": false})
	oldPid, _ := daemonPid(t, old)
	res, code := runModule(t, planArgs(exampleDir, state))
	if code != 0 {
		t.Fatalf("call failed: %v", res["msg"])
	}
	pid, started := daemonPid(t, res)
	if !started || pid == oldPid {
		t.Fatalf("reached pid %d (started %v); want a new daemon replacing pid %d", pid, started, oldPid)
	}
	if lifecycle.Alive(oldPid) {
		t.Errorf("the old daemon pid %d still runs", oldPid)
	}
	d, _ := res["daemon"].(map[string]any)
	if want := fmt.Sprintf("daemon pid %d, zarf-planner 0.1.0 (build other-build)", oldPid); d["replaced"] != want {
		t.Errorf("daemon.replaced = %v; want %q", d["replaced"], want)
	}
	log, _ := os.ReadFile(filepath.Join(state, lifecycle.LogFile))
	// Drained on the SIGTERM, seen by the serving loop or through the
	// signal context (whichever wins the race says so).
	if !strings.Contains(string(log), "draining on signal") && !strings.Contains(string(log), "terminated signal received") {
		t.Errorf("the old daemon did not drain:\n%s", log)
	}
}

// TestADaemonPathOfAnotherReleaseIsNamed gives the module a daemon_path
// of another release: the task fails naming both releases and what to do,
// rather than starting that daemon again and again, and the daemon it
// started does not stay.
func TestADaemonPathOfAnotherReleaseIsNamed(t *testing.T) {
	state := stateDir(t)
	args := planArgs(exampleDir, state)
	args["daemon_path"] = otherDaemonBin
	res, code := runModule(t, args)
	msg, _ := res["msg"].(string)
	if code == 0 || res["failed"] != true {
		t.Fatalf("code %d result %v; want a failure", code, res)
	}
	for _, want := range []string{
		"the daemon binary " + otherDaemonBin + " is zarf-planner 0.1.0 (build other-build)",
		"this client is zarf-planner " + buildinfo.Version + " (build " + buildinfo.ID + ")",
		"unset daemon_path",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("msg %q does not say %q", msg, want)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := lifecycle.ReadState(state)
		if err != nil || !lifecycle.Alive(s.Pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon of another release, pid %d, still runs", s.Pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestSilentSocketIsReplacedWithoutKillingItsPid(t *testing.T) {
	state := stateDir(t)
	bystander := exec.Command("sleep", "60")
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	defer bystander.Process.Kill()
	stale := lifecycle.State{Pid: bystander.Process.Pid, Network: "unix", Addr: filepath.Join(state, "gone.sock"), ProtocolVersion: 1, BuildID: "dev"}
	if err := lifecycle.WriteState(state, stale); err != nil {
		t.Fatal(err)
	}
	res, code := runModule(t, planArgs(exampleDir, state))
	if code != 0 {
		t.Fatalf("call failed: %v", res["msg"])
	}
	if pid, started := daemonPid(t, res); !started || pid == stale.Pid {
		t.Errorf("reached pid %d (started %v); want a fresh daemon", pid, started)
	}
	// Alive, not kill(0): a killed child of this test would linger as a
	// zombie that kill(0) still finds.
	if !lifecycle.Alive(bystander.Process.Pid) {
		t.Error("the unrelated process named by the stale state file was killed")
	}
}

func TestCheckModeGivesTheSamePlan(t *testing.T) {
	state := stateDir(t)
	runModule(t, planArgs(exampleDir, state)) // the daemon has seen the question
	args := planArgs(exampleDir, state)
	args["_ansible_check_mode"] = true
	args["_ansible_diff"] = true
	check, code := runModule(t, args)
	if code != 0 || check["changed"] != false {
		t.Fatalf("check mode: code %d changed %v", code, check["changed"])
	}
	if got, want := planDocument(t, check), planDocument(t, freshPlan(t, args)); got != want {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("check mode planned differently from a fresh plan, from byte %d:\n%.300s\nwant\n%.300s", i, got[max(0, i-100):], want[max(0, i-100):])
	}
	if _, ok := check["diff"]; ok {
		t.Errorf("a read-only plan returned a diff: %v", check["diff"])
	}
}

func TestTheOtherModules(t *testing.T) {
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"barrier options are mutually exclusive", map[string]any{"_ansible_module_name": "zarf_readiness_barrier", "barrier": map[string]any{}, "checks": []any{}}, "parameters are mutually exclusive: barrier|checks"},
		{"barrier needs one of them", map[string]any{"_ansible_module_name": "zarf_readiness_barrier"}, "one of the following is required: barrier, checks"},
		{"barrier check kinds are checked", map[string]any{"_ansible_module_name": "colonel_byte.zarf_planner.zarf_readiness_barrier", "checks": []any{map[string]any{"kind": "pod", "name": "x"}}, "daemon_path": daemonBin, "state_dir": stateDir(t)}, `checks[0].kind is "pod"; use crd, storage_class, namespace, package, deployment, statefulset, daemonset or operator_condition`},
		{"cache needs a path", map[string]any{"_ansible_module_name": "zarf_bundle_cache"}, "missing required arguments: path"},
		{"cache state is a choice", map[string]any{"_ansible_module_name": "zarf_bundle_cache", "path": "/x", "state": "warm"}, "value of state must be one of: present, absent, got: warm"},
		{"an unknown module name", map[string]any{"_ansible_module_name": "zarf_bundle_deploy"}, `implements the modules zarf_bundle_plan, zarf_readiness_barrier, zarf_bundle_cache and zarf_bundle_catalog, not "zarf_bundle_deploy"`},
		{"the catalog's former module name runs the catalog", map[string]any{"_ansible_module_name": "colonel_byte.zarf_planner.zarf_bundle_info"}, "missing required arguments: path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, code := runModule(t, tt.args)
			if code == 0 || res["failed"] != true || !strings.Contains(res["msg"].(string), tt.want) {
				t.Fatalf("code %d result %v; want a failure saying %q", code, res, tt.want)
			}
		})
	}
}

func TestPlanFailuresKeepTheirStructure(t *testing.T) {
	state := stateDir(t)
	dir, _ := filepath.Abs("../testdata/bundles/cycle")
	res, code := runModule(t, planArgs(dir, state))
	if code == 0 || res["failed"] != true {
		t.Fatalf("cycle plan: code %d result %v; want a failure", code, res)
	}
	errs := res["errors"].([]any)
	first := errs[0].(map[string]any)
	if first["kind"] != "cycle" || fmt.Sprint(first["packages"]) != "[alpha beta gamma]" {
		t.Errorf("errors[0] = %v; want the cycle of alpha, beta, gamma", first)
	}
	if !strings.Contains(res["msg"].(string), "alpha → beta → gamma → alpha") {
		t.Errorf("msg = %q", res["msg"])
	}
}

func TestArgumentAndDaemonErrors(t *testing.T) {
	state := stateDir(t)
	tests := []struct {
		name string
		args map[string]any
		env  []string
		want []string
	}{
		{"unknown option names it and the valid ones", map[string]any{"path": exampleDir, "pth": 1, "_ansible_foo": true},
			nil, []string{"Unsupported parameters for (zarf_bundle_plan) module: pth", "Supported parameters include: allow_downgrade, allow_empty, approval_keys, architecture, cache_dir, constraints, context, daemon_path"}},
		{"path is required", map[string]any{"_ansible_module_name": "zarf_bundle_plan"}, nil, []string{"missing required arguments: path"}},
		{"mode is a choice", map[string]any{"path": exampleDir, "mode": "fleet"}, nil, []string{"value of mode must be one of: standalone, cluster, got: fleet"}},
		{"timeout must be an int", map[string]any{"path": exampleDir, "timeout": "soon"}, nil, []string{"argument 'timeout' is of type str", "to int"}},
		{"daemon binary missing says where it looked", map[string]any{"path": exampleDir, "state_dir": state, "daemon_path": "/nonexistent/zarf-planner"}, nil,
			[]string{"not found at daemon_path /nonexistent/zarf-planner"}},
		{"daemon binary not executable", map[string]any{"path": exampleDir, "state_dir": state, "daemon_path": "../go.mod"}, nil, []string{"is not an executable file"}},
		// A cache of its own: a plan of the example kept in the user's
		// cache (by any earlier run) would answer without a daemon.
		{"no daemon_path and nothing in PATH", map[string]any{"path": exampleDir, "state_dir": state, "cache_dir": t.TempDir()}, []string{"PATH=/nonexistent-bin"},
			[]string{`"zarf-planner" is not in PATH (/nonexistent-bin)`, "set daemon_path"}},
	}
	alone := aloneModule(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, code := runBinary(t, alone, tt.args, tt.env...)
			if code == 0 || res["failed"] != true || res["changed"] != false {
				t.Fatalf("code %d result %v; want failed and not changed", code, res)
			}
			for _, w := range tt.want {
				if !strings.Contains(res["msg"].(string), w) {
					t.Errorf("msg %q does not say %q", res["msg"], w)
				}
			}
		})
	}
}

func cacheArgs(dir, state, cacheDir string) map[string]any {
	return map[string]any{"path": dir, "daemon_path": daemonBin, "state_dir": state, "cache_dir": cacheDir, "_ansible_module_name": "zarf_bundle_cache"}
}

func TestCacheModuleIsIdempotent(t *testing.T) {
	cacheDir := filepath.Join(t.TempDir(), "cache") // removed after the daemon stops (cleanups run in reverse)
	state := stateDir(t)
	check := cacheArgs(exampleDir, state, cacheDir)
	check["_ansible_check_mode"], check["_ansible_diff"] = true, true
	res, code := runModule(t, check)
	if code != 0 || res["changed"] != true || len(res["added"].([]any)) != 6 || !strings.Contains(res["diff"].(map[string]any)["prepared"].(string), "+ "+exampleDir) {
		t.Fatalf("check mode: code %d %v; want 6 to add, changed, a diff", code, res)
	}
	first, _ := runModule(t, cacheArgs(exampleDir, state, cacheDir))
	if first["changed"] != true || len(first["added"].([]any)) != 6 {
		t.Fatalf("first warm %v; want 6 added (check mode must not have written)", first)
	}
	second, _ := runModule(t, cacheArgs(exampleDir, state, cacheDir))
	if second["changed"] != false || len(second["added"].([]any)) != 0 || second["unchanged"].(float64) != 6 {
		t.Fatalf("second warm %v; want no change", second)
	}
	absent := cacheArgs(exampleDir, state, cacheDir)
	absent["state"] = "absent"
	gone, _ := runModule(t, absent)
	if gone["changed"] != true || len(gone["removed"].([]any)) != 6 {
		t.Fatalf("state absent %v; want 6 removed", gone)
	}
	again, _ := runModule(t, absent)
	if again["changed"] != false {
		t.Fatalf("second state absent %v; want no change", again)
	}
}

// TestWarmThenPlanReadsNothing is the air-gapped flow: after a warm-up the
// plan is answered from the cache, and the daemon's counters prove no
// archive was read again.
func TestWarmThenPlanReadsNothing(t *testing.T) {
	cacheDir := filepath.Join(t.TempDir(), "cache") // removed after the daemon stops (cleanups run in reverse)
	state := stateDir(t)
	runModule(t, cacheArgs(exampleDir, state, cacheDir))
	_, before, err := lifecycle.Status(context.Background(), state)
	if err != nil {
		t.Fatal(err)
	}
	args := planArgs(exampleDir, state)
	args["cache_dir"] = cacheDir
	res, code := runModule(t, args)
	if code != 0 || len(res["zarf_packages_to_deploy"].([]any)) != 6 {
		t.Fatalf("plan after warm: %v", res["msg"])
	}
	_, after, _ := lifecycle.Status(context.Background(), state)
	if after.ArchivesRead != before.ArchivesRead || after.CacheHits != before.CacheHits+6 {
		t.Errorf("archives read %d → %d, cache hits %d → %d; want nothing read and 6 hits", before.ArchivesRead, after.ArchivesRead, before.CacheHits, after.CacheHits)
	}
	uncached := planArgs(exampleDir, state)
	uncached["use_cache"] = false
	plain, _ := runModule(t, uncached)
	if planDocument(t, res) != planDocument(t, plain) {
		t.Errorf("the plan from the cache differs from the plan that read every archive:\n%.400s\n%.400s", planDocument(t, res), planDocument(t, plain))
	}
	_, last, _ := lifecycle.Status(context.Background(), state)
	if last.ArchivesRead != after.ArchivesRead+6 {
		t.Errorf("use_cache false read %d archives; want all 6 read again", last.ArchivesRead-after.ArchivesRead)
	}
}

// TestAWarmedDirectoryIsPlannedByTheModuleAlone: zarf_bundle_cache keeps
// the plan of the question without options (its question marked), so the
// first such plan after the daemon stopped is the module's alone.
func TestAWarmedDirectoryIsPlannedByTheModuleAlone(t *testing.T) {
	cacheDir := filepath.Join(t.TempDir(), "cache") // removed after the daemon stops (cleanups run in reverse)
	state := stateDir(t)
	if res, code := runModule(t, cacheArgs(exampleDir, state, cacheDir)); code != 0 {
		t.Fatalf("warm: %v", res["msg"])
	}
	if _, err := lifecycle.Stop(context.Background(), state, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	args := planArgs(exampleDir, state)
	args["cache_dir"] = cacheDir
	delete(args, "architecture") // the question without options
	res, code := runModule(t, args)
	if code != 0 || res["daemon"].(map[string]any)["kept"] != true || len(res["zarf_packages_to_deploy"].([]any)) != 6 {
		t.Fatalf("the first plan after the warm-up (code %d) was answered by %v: %v; want the kept plan of 6 packages", code, res["daemon"], res["msg"])
	}
	if _, _, err := lifecycle.Status(context.Background(), state); err == nil {
		t.Error("a daemon runs after the kept plan answered; want none started")
	}
}

func TestConcurrentWarmAndPlanShareOneDaemon(t *testing.T) {
	cacheDir := filepath.Join(t.TempDir(), "cache") // removed after the daemon stops (cleanups run in reverse)
	state := stateDir(t)
	forms, _ := filepath.Abs("../testdata/bundles/forms")
	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := range 20 {
		wg.Go(func() {
			dir := exampleDir
			if i%2 == 1 {
				dir = forms
			}
			res, code := runModule(t, cacheArgs(dir, state, cacheDir))
			if code != 0 {
				errs <- fmt.Sprintf("warm %d: %v", i, res["msg"])
			}
		})
		wg.Go(func() {
			args := planArgs(exampleDir, state)
			args["cache_dir"] = cacheDir
			res, code := runModule(t, args)
			if code != 0 || len(res["zarf_packages_to_deploy"].([]any)) != 6 {
				errs <- fmt.Sprintf("plan %d: %v", i, res["msg"])
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	last, _ := runModule(t, cacheArgs(exampleDir, state, cacheDir))
	if last["changed"] != false || last["cache"].(map[string]any)["entries"].(float64) != 12 {
		t.Errorf("after the storm: %v; want both directories cached once (12 archives)", last["cache"])
	}
}

// TestClusterModeAgainstARealAPIServer deploys part of the reference stack
// with the real zarf CLI to a real kube-apiserver, then plans the whole
// stack in cluster mode through the module and the daemon.
func TestClusterModeAgainstARealAPIServer(t *testing.T) {
	c := clustertest.Start(t)
	for _, a := range []string{"zarf-package-init-amd64-0.1.0.tar.zst", "zarf-package-app-fluxcd-amd64-2.4.0.tar.zst"} {
		c.Deploy(t, filepath.Join(exampleDir, a))
	}
	state := stateDir(t)
	args := planArgs(exampleDir, state)
	args["mode"], args["kubeconfig"] = "cluster", c.Kubeconfig
	names := func(res map[string]any, key, field string) []string {
		var out []string
		items, _ := res[key].([]any)
		for _, it := range items {
			out = append(out, it.(map[string]any)[field].(string))
		}
		return out
	}
	res, code := runModule(t, args)
	if code != 0 {
		t.Fatalf("cluster plan failed: %v", res["msg"])
	}
	if got := names(res, "already_installed", "name"); strings.Join(got, ",") != "app-fluxcd,init" {
		t.Errorf("skipped %v; want the two deployed packages", got)
	}
	if got := names(res, "zarf_packages_to_deploy", "name"); strings.Join(got, ",") != "csi-rook-ceph,operator-cert-manager,operator-external-secrets,workload-app" {
		t.Errorf("planned %v", got)
	}

	// Save a snapshot; a plan against it needs no cluster and agrees.
	snapFile := filepath.Join(t.TempDir(), "state.json")
	out, err := exec.Command(daemonBin, "snapshot", "--kubeconfig", c.Kubeconfig, "-o", "json").Output()
	if err != nil {
		t.Fatalf("zarf-planner snapshot: %v", err)
	}
	if err := os.WriteFile(snapFile, out, 0o600); err != nil {
		t.Fatal(err)
	}
	offline := planArgs(exampleDir, state)
	offline["snapshot"] = snapFile
	res2, code := runModule(t, offline)
	if code != 0 || strings.Join(names(res2, "already_installed", "name"), ",") != "app-fluxcd,init" {
		t.Errorf("plan against the saved snapshot: code %d skipped %v (%v)", code, names(res2, "already_installed", "name"), res2["msg"])
	}

	// More of the cluster rules, on the same real cluster: an older
	// cert-manager installed is upgraded; a package the directory lacks is
	// reported; the nodes' architecture (amd64) rules out arm64 archives.
	versions, _ := filepath.Abs("../testdata/bundles/versions")
	c.Deploy(t, filepath.Join(versions, "zarf-package-operator-cert-manager-amd64-1.13.0.tar.zst"))
	c.Deploy(t, filepath.Join(versions, "zarf-package-legacy-app-amd64-0.5.0.tar.zst"))
	res4, code := runModule(t, args)
	if code != 0 {
		t.Fatalf("plan after more deploys: %v", res4["msg"])
	}
	for _, it := range res4["zarf_packages_to_deploy"].([]any) {
		if m := it.(map[string]any); m["name"] == "operator-cert-manager" && m["action"] != "upgrade" {
			t.Errorf("operator-cert-manager action %v; want upgrade from the installed 1.13.0", m["action"])
		}
	}
	if got := names(res4, "installed_not_in_bundle", "name"); strings.Join(got, ",") != "legacy-app" {
		t.Errorf("installed_not_in_bundle %v; want legacy-app", got)
	}
	forms, _ := filepath.Abs("../testdata/bundles/forms")
	fargs := planArgs(forms, state)
	fargs["mode"], fargs["kubeconfig"], fargs["flavor"] = "cluster", c.Kubeconfig, "hardened"
	res5, code := runModule(t, fargs)
	excluded, _ := json.Marshal(res5["excluded"])
	if code != 0 || !strings.Contains(string(excluded), "architecture arm64 does not match the target architecture amd64") {
		t.Errorf("forms in cluster mode: code %d excluded %s (%v)", code, excluded, res5["msg"])
	}

	// A deployed package whose component failed is planned again.
	ctx := context.Background()
	sec, err := c.Client.CoreV1().Secrets("zarf").Get(ctx, "zarf-package-app-fluxcd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var dp map[string]any
	if err := json.Unmarshal(sec.Data["data"], &dp); err != nil {
		t.Fatal(err)
	}
	dp["deployedComponents"].([]any)[0].(map[string]any)["status"] = "Failed"
	sec.Data["data"], _ = json.Marshal(dp)
	if _, err := c.Client.CoreV1().Secrets("zarf").Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	res3, _ := runModule(t, args)
	items, _ := res3["zarf_packages_to_deploy"].([]any)
	if len(items) == 0 {
		t.Fatalf("plan after the failure: %v", res3["msg"])
	}
	first := items[0].(map[string]any)
	reasons, _ := json.Marshal(first["reasons"])
	if first["name"] != "app-fluxcd" || first["action"] != "redeploy" || !strings.Contains(string(reasons), "component app-fluxcd is Failed") {
		t.Errorf("first item %v; want app-fluxcd redeployed because its component failed", first)
	}
}

// TestClusterRulesAgainstARealAPIServer checks the rules that depend on
// what a real cluster reports, with packages the real zarf CLI deployed:
// a downgrade is refused unless allowed, requires.kubernetes is held
// against the server's own version, and nodes of two architectures make
// the target architecture a choice the operator has to make.
func TestClusterRulesAgainstARealAPIServer(t *testing.T) {
	c := clustertest.Start(t)
	versions, _ := filepath.Abs("../testdata/bundles/versions")
	c.Deploy(t, filepath.Join(versions, "zarf-package-operator-cert-manager-amd64-1.14.0.tar.zst"))
	state := stateDir(t)
	cluster := func(dir string) map[string]any {
		args := planArgs(dir, state)
		args["mode"], args["kubeconfig"] = "cluster", c.Kubeconfig
		delete(args, "architecture") // cluster mode takes the nodes'
		return args
	}

	// Only the older cert-manager in the directory: a downgrade.
	older := t.TempDir()
	if err := os.Link(filepath.Join(versions, "zarf-package-operator-cert-manager-amd64-1.13.0.tar.zst"), filepath.Join(older, "zarf-package-operator-cert-manager-amd64-1.13.0.tar.zst")); err != nil {
		t.Fatal(err)
	}
	res, code := runModule(t, cluster(older))
	if msg, _ := res["msg"].(string); code == 0 || !strings.Contains(msg, "operator-cert-manager 1.14.0 is installed on") || !strings.Contains(msg, "a downgrade; set allow_downgrade: true") {
		t.Fatalf("downgrade: code %d msg %q; want it refused naming the installed 1.14.0", code, res["msg"])
	}
	args := cluster(older)
	args["allow_downgrade"] = true
	res, code = runModule(t, args)
	if code != 0 {
		t.Fatalf("allowed downgrade failed: %v", res["msg"])
	}
	item := res["zarf_packages_to_deploy"].([]any)[0].(map[string]any)
	reasons, _ := json.Marshal(item["reasons"])
	if item["version"] != "1.13.0" || !strings.Contains(string(reasons), "downgrades operator-cert-manager 1.14.0") {
		t.Errorf("allowed downgrade planned %v", item)
	}

	// requires.kubernetes against the server's version.
	sv, err := c.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	kr, _ := filepath.Abs("../testdata/bundles/kube-range")
	res, code = runModule(t, cluster(kr))
	if code != 0 {
		t.Fatalf("kube-range: %v", res["msg"])
	}
	planned := res["zarf_packages_to_deploy"].([]any)
	var excluded []string
	for _, e := range res["excluded"].([]any) {
		excluded = append(excluded, e.(map[string]any)["reason"].(string))
	}
	want := "kube-app 1.0.0 requires kubernetes <1.30.0 (requires.kubernetes in zarf-package-kube-app-amd64-1.0.0.tar.zst) and cluster "
	if len(planned) != 1 || planned[0].(map[string]any)["version"] != "2.0.0" || len(excluded) != 1 || !strings.HasPrefix(excluded[0], want) || !strings.HasSuffix(excluded[0], " runs "+sv.GitVersion) {
		t.Errorf("kube-range on %s: planned %v, excluded %q", sv.GitVersion, planned, excluded)
	}
	args = cluster(kr)
	args["constraints"] = map[string]any{"kube-app": "<2.0.0"}
	res, code = runModule(t, args)
	if msg, _ := res["msg"].(string); code == 0 || !strings.Contains(msg, "runs "+sv.GitVersion) {
		t.Errorf("kube-app pinned below 2.0.0 on %s: code %d msg %q; want a failure naming the server's version", sv.GitVersion, code, msg)
	}

	// A second node of another architecture.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-arm", Labels: map[string]string{"kubernetes.io/arch": "arm64", "kubernetes.io/os": "linux"}}}
	if _, err := c.Client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	forms, _ := filepath.Abs("../testdata/bundles/forms")
	res, code = runModule(t, cluster(forms))
	if msg, _ := res["msg"].(string); code == 0 || !strings.Contains(msg, "have several architectures (amd64, arm64); set architecture") {
		t.Errorf("mixed nodes: code %d msg %q; want the architecture asked for", code, msg)
	}
	args = cluster(forms)
	args["architecture"] = "arm64"
	res, code = runModule(t, args)
	if code != 0 {
		t.Fatalf("mixed nodes, architecture arm64: %v", res["msg"])
	}
	for _, it := range res["zarf_packages_to_deploy"].([]any) {
		if m := it.(map[string]any); !strings.Contains(m["path"].(string), "-arm64-") {
			t.Errorf("architecture arm64 planned %s", m["path"])
		}
	}
	if len(res["zarf_packages_to_deploy"].([]any)) == 0 {
		t.Error("architecture arm64 planned nothing; want the arm64 archive of multi-arch")
	}
}

// An archive rewritten in place with the same size and its modification
// time put back is read again through the module and its daemon: the
// plan names the new bytes' sha256, never the old one's.
func TestInPlaceRewriteIsReadAgainThroughTheModule(t *testing.T) {
	cacheDir := filepath.Join(t.TempDir(), "cache") // removed after the daemon stops (cleanups run in reverse)
	state := stateDir(t)
	dir := t.TempDir()
	a, b := craft.Twins("twin", "1.0.0")
	file := filepath.Join(dir, "zarf-package-twin-amd64-1.0.0.tar")
	if err := os.WriteFile(file, a, 0o644); err != nil {
		t.Fatal(err)
	}
	args := planArgs(dir, state)
	args["cache_dir"] = cacheDir
	shaOf := func(res map[string]any) string {
		items, _ := res["zarf_packages_to_deploy"].([]any)
		if len(items) != 1 {
			t.Fatalf("plan %v; want the twin alone", res)
		}
		return items[0].(map[string]any)["sha256"].(string)
	}
	if got, want := shaOf(first(runModule(t, args))), fmt.Sprintf("%x", sha256.Sum256(a)); got != want {
		t.Fatalf("first plan sha256 %s; want %s", got, want)
	}
	shaOf(first(runModule(t, args))) // answered by the cache and the memo
	if err := craft.RewriteInPlace(file, b); err != nil {
		t.Fatal(err)
	}
	if got, want := shaOf(first(runModule(t, args))), fmt.Sprintf("%x", sha256.Sum256(b)); got != want {
		t.Fatalf("after the rewrite the plan names sha256 %s; want the new bytes' %s", got, want)
	}
}

// first is the result of a module run, whatever its exit code.
func first(res map[string]any, _ int) map[string]any { return res }

// html_to writes the page of the plan where the module runs: the
// bytes `zarf-planner plan -o html` prints for the same directory and
// options at the same SOURCE_DATE_EPOCH. Like save_to, it changes the
// file only when its content changes (so a second run at the same epoch
// changes nothing) and never in check mode; a failed plan writes its
// failure drawn; a page that cannot be written fails the task.
func TestReportHTMLWritesThePlanPage(t *testing.T) {
	state := stateDir(t)
	epoch := "SOURCE_DATE_EPOCH=1777638645"
	page := filepath.Join(t.TempDir(), "plan.html")
	args := planArgs(exampleDir, state)
	args["html_to"] = page
	res, code := runModule(t, args, epoch)
	if code != 0 || res["page"] != page || res["changed"] != true {
		t.Fatalf("code %d, page %v, changed %v; want 0, %s, true", code, res["page"], res["changed"], page)
	}
	written, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// Without the cache: a CLI that cannot attach to the daemon in time
	// (a loaded machine) plans in process, and must not warn about a
	// cache the daemon holds.
	cli := exec.Command(daemonBin, "plan", exampleDir, "--architecture", "amd64", "-o", "html", "--state-dir", state, "--use-cache=false")
	cli.Env = append(os.Environ(), epoch)
	want, err := cli.Output()
	if err != nil {
		t.Fatalf("zarf-planner plan -o html: %v", err)
	}
	if !bytes.Equal(written, want) {
		i := 0
		for i < len(written) && i < len(want) && written[i] == want[i] {
			i++
		}
		t.Errorf("the module's page (%d bytes) differs from the CLI's (%d bytes) from byte %d:\n%.300s\nwant\n%.300s", len(written), len(want), i, written[max(0, i-100):], want[max(0, i-100):])
	}
	if !bytes.Contains(written, []byte(contract.StatedTime+`2026-05-01T12:30:45Z">`)) || !bytes.Contains(written, []byte(`<td><code>architecture</code></td><td class="code">amd64</td>`)) {
		t.Error("the page does not state the caller's time and the options given")
	}
	if res, _ = runModule(t, args, epoch); res["changed"] != false {
		t.Errorf("the same page again: changed %v; want false", res["changed"])
	}
	args["_ansible_check_mode"] = true
	res, _ = runModule(t, args, "SOURCE_DATE_EPOCH=1777642245")
	if again, _ := os.ReadFile(page); res["changed"] != false || !bytes.Equal(again, written) {
		t.Errorf("check mode with another time alone: changed %v, page rewritten %v; want false (only the time would differ) and the page untouched", res["changed"], !bytes.Equal(again, written))
	}
	args["version_strategy"] = "newest_only" // the page lists the options: its content changes
	res, _ = runModule(t, args, "SOURCE_DATE_EPOCH=1777642245")
	if again, _ := os.ReadFile(page); res["changed"] != true || !bytes.Equal(again, written) {
		t.Errorf("check mode with another option: changed %v, page rewritten %v; want true (it would change) and the page untouched", res["changed"], !bytes.Equal(again, written))
	}

	cycle, _ := filepath.Abs("../testdata/bundles/cycle")
	args = planArgs(cycle, state)
	args["html_to"] = page
	res, code = runModule(t, args, epoch)
	written, _ = os.ReadFile(page)
	if code == 0 || res["failed"] != true || res["page"] != page || !bytes.Contains(written, []byte(`class="edge k-package cycle"`)) {
		t.Errorf("cycle: code %d, failed %v, page %v; want a failure and its page with the cycle drawn", code, res["failed"], res["page"])
	}

	args = planArgs(exampleDir, state)
	args["html_to"] = filepath.Join(t.TempDir(), "missing", "plan.html")
	res, code = runModule(t, args)
	if msg, _ := res["msg"].(string); code == 0 || !strings.Contains(msg, "html_to") {
		t.Errorf("a page into a missing directory: code %d, msg %q; want a failure naming html_to", code, msg)
	}
}

// A daemon started with its own state and cache directories opens, and
// locks, only the cache its requests use: the default cache stays free,
// so a plan through another daemon with the default cache plans with it,
// with no "cache directory in use" warning.
func TestADaemonLocksOnlyTheCacheItUses(t *testing.T) {
	dflt := filepath.Join(t.TempDir(), "default-cache")
	env := "ZARF_PLANNER_CACHE_DIR=" + dflt // the default of both daemons
	own := stateDir(t)
	res, code := runModule(t, planArgs(exampleDir, own), env) // cache_dir: its own
	if code != 0 || res["failed"] == true {
		t.Fatalf("the daemon of its own directories: code %d, msg %v", code, res["msg"])
	}
	// Long enough for a cache opened in the background while the daemon
	// started (a few tens of milliseconds) to be open.
	time.Sleep(time.Second)
	if _, err := os.Stat(dflt); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the daemon of cache_dir %s opened the default cache %s too (%v)", filepath.Join(own, "cache"), dflt, err)
	}

	args := planArgs(exampleDir, stateDir(t))
	delete(args, "cache_dir") // the default
	res, code = runModule(t, args, env)
	if code != 0 || res["failed"] == true {
		t.Fatalf("the plan with the default cache: code %d, msg %v", code, res["msg"])
	}
	warnings, _ := json.Marshal(res["warnings"])
	if strings.Contains(string(warnings), "planned without the cache") || strings.Contains(string(warnings), "in use") {
		t.Errorf("the plan with the default cache warns %s; want it to have the default cache", warnings)
	}
	if _, err := os.Stat(dflt); err != nil {
		t.Errorf("the plan with the default cache did not use it: %v", err)
	}
}

// html_to is idempotent without SOURCE_DATE_EPOCH: each run states the
// time of its call, and a page that differs from the file only in that
// time leaves the file as it is (changed false, the same bytes, the same
// inode and mtime). A change of content (another option the page lists)
// still rewrites it.
func TestReportHTMLIsIdempotentWithoutSourceDateEpoch(t *testing.T) {
	state := stateDir(t)
	page := filepath.Join(t.TempDir(), "plan.html")
	args := planArgs(exampleDir, state)
	args["html_to"] = page
	const now = "SOURCE_DATE_EPOCH=" // unset: the time of the call
	res, code := runModule(t, args, now)
	if code != 0 || res["changed"] != true {
		t.Fatalf("first run: code %d, changed %v, msg %v; want 0 and true", code, res["changed"], res["msg"])
	}
	written, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	// The page states the time to the second: the next run is in
	// another second, so its page states another time.
	time.Sleep(time.Until(before.ModTime().Truncate(time.Second).Add(1100 * time.Millisecond)))
	res, code = runModule(t, args, now)
	again, _ := os.ReadFile(page)
	after, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || res["changed"] != false || res["page"] != page {
		t.Errorf("second run: code %d, changed %v, page %v; want 0, false, %s", code, res["changed"], res["page"], page)
	}
	if !bytes.Equal(again, written) || !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) {
		t.Errorf("second run: the page was rewritten (same bytes %v, same mtime %v, same file %v); want it untouched",
			bytes.Equal(again, written), after.ModTime().Equal(before.ModTime()), os.SameFile(before, after))
	}

	args["version_strategy"] = "newest_only" // the page lists the options: its content changes
	res, code = runModule(t, args, now)
	changed, _ := os.ReadFile(page)
	if code != 0 || res["changed"] != true || bytes.Equal(changed, written) || !bytes.Contains(changed, []byte(`<td><code>version_strategy</code></td><td class="code">newest_only</td>`)) {
		t.Errorf("another option: code %d, changed %v, page rewritten %v; want 0, true and the page of the new options", code, res["changed"], !bytes.Equal(changed, written))
	}
}

// save_to writes the saved plan only when its content changes (changed
// says so), and never in check mode; plan_file then replays it.
func TestSaveToChangesOnlyWhenThePlanDoes(t *testing.T) {
	state := stateDir(t)
	dir := copyDir(t, exampleDir)
	saved := filepath.Join(t.TempDir(), "plan.json")
	run := func(check bool) map[string]any {
		t.Helper()
		args := planArgs(dir, state)
		args["save_to"], args["_ansible_check_mode"] = saved, check
		res, code := runModule(t, args)
		if code != 0 {
			t.Fatalf("plan with save_to: %v", res)
		}
		return res
	}
	if res := run(true); res["changed"] != true || fileExists(saved) {
		t.Fatalf("check mode: changed=%v, file written=%v", res["changed"], fileExists(saved))
	}
	first := run(false)
	if first["changed"] != true || first["saved_plan"] != saved || !fileExists(saved) {
		t.Fatalf("first save: %v", first)
	}
	if again := run(false); again["changed"] != false {
		t.Errorf("saving the same plan again changed the file: %v", again["changed"])
	}
	args := planArgs(dir, state)
	args["plan_file"] = saved
	replay, code := runModule(t, args)
	if code != 0 || replay["plan_file"] != saved || replay["plan_digest"] != first["plan_digest"] {
		t.Fatalf("replay: %v", replay)
	}
	args["exclude"] = []any{"workload-app"}
	stale, code := runModule(t, args)
	errs, _ := stale["errors"].([]any)
	if code == 0 || len(errs) != 1 || !strings.Contains(fmt.Sprint(errs[0]), "option exclude: the plan was saved with no value") {
		t.Fatalf("a replay with another option: %v", stale)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// A question asked before, about a directory unchanged since, is answered
// by the module alone from the plan the daemon kept: the same document,
// no daemon asked or started. Anything that changes the answer (an
// archive rewritten, another option) goes to the daemon, and so does a
// kept file that is not this user's alone.
func TestAQuestionAskedBeforeIsAnsweredWithoutADaemon(t *testing.T) {
	cacheDir := filepath.Join(t.TempDir(), "cache") // removed after the daemon stops (cleanups run in reverse)
	state := stateDir(t)
	dir := t.TempDir()
	stop := func() {
		t.Helper()
		if _, err := lifecycle.Stop(context.Background(), state, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(exampleDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !inspect.IsCandidate(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(exampleDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := planArgs(dir, state)
	args["cache_dir"] = cacheDir
	asked, code := runModule(t, args)
	if code != 0 {
		t.Fatalf("first plan failed: %v", asked["msg"])
	}
	daemonPid(t, asked)
	stop()
	again, code := runModule(t, args)
	if code != 0 || again["daemon"].(map[string]any)["kept"] != true {
		t.Fatalf("the same question again (code %d) was answered by %v; want the kept plan", code, again["daemon"])
	}
	if _, _, err := lifecycle.Status(context.Background(), state); err == nil {
		t.Error("a daemon runs after the kept plan answered; want none started")
	}
	if planDocument(t, again) != planDocument(t, asked) {
		t.Fatalf("the kept answer differs from the daemon's:\n%.400s\n%.400s", planDocument(t, again), planDocument(t, asked))
	}
	// Arguments the daemon's path refuses are refused with a kept plan too.
	bad := maps.Clone(args)
	bad["timeout"] = 0
	if res, code := runModule(t, bad); code == 0 || !strings.Contains(fmt.Sprint(res["msg"]), "timeout must be a positive number") {
		t.Errorf("timeout 0 with a kept plan: code %d msg %v; want it refused", code, res["msg"])
	}
	// Another option is another question.
	other := maps.Clone(args)
	other["exclude"] = []any{"workload-app"}
	if res, _ := runModule(t, other); len(order(res)) != 5 {
		t.Fatalf("with exclude: %v; want 5 packages planned by the daemon", order(res))
	} else {
		daemonPid(t, res)
	}
	stop()
	// A kept file others can read is not answered from.
	plans := filepath.Join(args["cache_dir"].(string), kept.Subdir)
	files, err := filepath.Glob(filepath.Join(plans, "*.plan"))
	if err != nil || len(files) == 0 {
		t.Fatalf("nothing kept in %s", plans)
	}
	for _, f := range files {
		if err := os.Chmod(f, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, _ := runModule(t, args)
	daemonPid(t, res)
	stop()
	// An archive removed changes the directory: planned again, without it.
	if err := os.Remove(filepath.Join(dir, "zarf-package-workload-app-amd64-2.3.0.tar.zst")); err != nil {
		t.Fatal(err)
	}
	res, _ = runModule(t, args)
	daemonPid(t, res)
	if slices.Contains(order(res), "workload-app") {
		t.Fatalf("planned %v after workload-app was removed", order(res))
	}
}

// Approvals asked for without plan_file plan nothing, through the daemon,
// whether or not a plan of the same question was kept before.
func TestApprovalsWithoutAPlanFileAreRefused(t *testing.T) {
	state := stateDir(t)
	if _, code := runModule(t, planArgs(exampleDir, state)); code != 0 {
		t.Fatalf("the plan without approvals: code %d", code)
	}
	args := planArgs(exampleDir, state)
	args["require_approvals"] = 1
	res, code := runModule(t, args)
	msg, _ := res["msg"].(string)
	if code == 0 || res["failed"] != true || res["zarf_packages_to_deploy"] != nil || !strings.Contains(msg, "check the approvals of a saved plan: give plan_file") {
		t.Fatalf("code %d, result %v; want the approvals refused without a saved plan", code, res)
	}
}
