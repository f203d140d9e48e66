package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
)

// The tests run the real binaries: the module as Ansible runs it (argv[1]
// is the args file) and the daemon it starts.
var (
	moduleBin string
	daemonBin string
	exampleDir string
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		tmp, err := os.MkdirTemp("", "zp-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(tmp)
		moduleBin = filepath.Join(tmp, "zarf_bundle_plan")
		daemonBin = filepath.Join(tmp, "zarf-planner")
		for bin, pkg := range map[string]string{moduleBin: ".", daemonBin: "../daemon"} {
			if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, out)
				return 1
			}
		}
		exampleDir, _ = filepath.Abs("../examples/bundles/reference-stack")
		return m.Run()
	}())
}

// stateDir is a short, private state directory that the test stops the
// daemon of when it ends.
func stateDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "zp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = lifecycle.Stop(context.Background(), dir, 10*time.Second)
		os.RemoveAll(dir)
	})
	return dir
}

// runModule runs the module binary with args and returns its one JSON
// result and exit code.
func runModule(t *testing.T, args map[string]any, env ...string) (map[string]any, int) {
	t.Helper()
	b, _ := json.Marshal(args)
	argsFile := filepath.Join(t.TempDir(), "args")
	if err := os.WriteFile(argsFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(moduleBin, argsFile)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	dec := json.NewDecoder(&stdout)
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("module printed no JSON object (%v); stderr: %s", err, stderr.String())
	}
	if dec.More() {
		t.Fatalf("module printed more than one JSON object")
	}
	return res, code
}

func planArgs(dir, state string) map[string]any {
	return map[string]any{"path": dir, "daemon_path": daemonBin, "state_dir": state, "_ansible_module_name": "zarf_bundle_plan", "_ansible_check_mode": false, "_ansible_verbosity": 0}
}

func daemonPid(t *testing.T, res map[string]any) (int, bool) {
	t.Helper()
	d, ok := res["daemon"].(map[string]any)
	if !ok {
		t.Fatalf("result has no daemon: %v", res)
	}
	return int(d["pid"].(float64)), d["started"].(bool)
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
	second, _ := runModule(t, planArgs(exampleDir, state))
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
	if inv["path"] != exampleDir || inv["mode"] != "standalone" {
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

func TestConcurrentFirstCallersStartOneDaemon(t *testing.T) {
	state := stateDir(t)
	const n = 8
	pids := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res, code := runModule(t, planArgs(exampleDir, state))
			if code != 0 {
				t.Errorf("call %d failed: %v", i, res["msg"])
				return
			}
			pids[i], _ = daemonPid(t, res)
		})
	}
	wg.Wait()
	for i, p := range pids {
		if p != pids[0] {
			t.Errorf("call %d reached daemon pid %d; call 0 reached %d", i, p, pids[0])
		}
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
			nil, []string{"Unsupported parameters for (zarf_bundle_plan) module: pth", "Supported parameters include: architecture, constraints, daemon_path"}},
		{"path is required", map[string]any{"_ansible_module_name": "zarf_bundle_plan"}, nil, []string{"missing required arguments: path"}},
		{"mode is a choice", map[string]any{"path": exampleDir, "mode": "cluster"}, nil, []string{"value of mode must be one of: standalone, got: cluster"}},
		{"timeout must be an int", map[string]any{"path": exampleDir, "timeout": "soon"}, nil, []string{"argument 'timeout' is of type str", "to int"}},
		{"daemon binary missing says where it looked", map[string]any{"path": exampleDir, "state_dir": state, "daemon_path": "/nonexistent/zarf-planner"}, nil,
			[]string{"not found at daemon_path /nonexistent/zarf-planner"}},
		{"daemon binary not executable", map[string]any{"path": exampleDir, "state_dir": state, "daemon_path": "../go.mod"}, nil, []string{"is not an executable file"}},
		{"no daemon_path and nothing in PATH", map[string]any{"path": exampleDir, "state_dir": state}, []string{"PATH=/nonexistent-bin"},
			[]string{`"zarf-planner" is not in PATH (/nonexistent-bin)`, "set daemon_path"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, code := runModule(t, tt.args, tt.env...)
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
