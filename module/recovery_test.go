package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
)

var (
	faultOnce sync.Once
	faultBin  string
	faultErr  error
)

// faultDaemon is a daemon of the test build (-tags zpfault), which panics
// where a request or an archive's name asks it to, and renders with
// itself (the same build id as the other test binaries).
func faultDaemon(t *testing.T) string {
	t.Helper()
	faultOnce.Do(func() {
		dir := filepath.Join(filepath.Dir(daemonBin), "fault")
		if faultErr = os.MkdirAll(dir, 0o755); faultErr != nil {
			return
		}
		faultBin = filepath.Join(dir, "zarf-planner")
		if out, err := goBuild("build", "-o", faultBin, "-tags=zpfault", "../cmd/zarf-planner"); err != nil {
			faultErr = &buildError{"../cmd/zarf-planner", err, out}
			return
		}
		// As make build installs it (renderproc refuses, as root's, a
		// renderer others may read: the daemon is its own).
		faultErr = os.Chmod(faultBin, 0o711)
	})
	if faultErr != nil {
		t.Fatal(faultErr)
	}
	return faultBin
}

type buildError struct {
	pkg string
	err error
	out []byte
}

func (e *buildError) Error() string {
	return "building " + e.pkg + ": " + e.err.Error() + "\n" + string(e.out)
}

// A request can fail; the daemon cannot (issue 29). A panic in a request,
// or while reading one archive, is that request's or that archive's
// error; a failed plan drawn as a page (which once panicked) is drawn;
// and a call in flight meanwhile gets its own answer from the same
// daemon.
func TestNoRequestTakesTheDaemonDown(t *testing.T) {
	bin := faultDaemon(t)
	state := stateDir(t)
	args := func(dir string) map[string]any {
		a := planArgs(dir, state)
		a["daemon_path"] = bin
		return a
	}
	first, code := runModule(t, args(exampleDir))
	if code != 0 {
		t.Fatalf("the first plan: %v", first["msg"])
	}
	pid, _ := daemonPid(t, first)

	kubeconfig, release := heldCluster(t)
	held := heldPlan(state, kubeconfig)
	held["daemon_path"] = bin
	slow := moduleCommand(t, moduleBin, held)
	if err := slow.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(inflight(state, 1))

	// A panic while answering a request.
	panicking := filepath.Join(t.TempDir(), "zp-fault-panic-request")
	if err := os.Mkdir(panicking, 0o755); err != nil {
		t.Fatal(err)
	}
	res, code := runModule(t, args(panicking))
	if msg, _ := res["msg"].(string); code != 1 || !strings.Contains(msg, "internal error in zarf-planner (build ") || !strings.Contains(msg, "please report it") {
		t.Errorf("a panicking request: code %d msg %q; want its own internal error", code, msg)
	}
	// A panic while reading one archive: that archive is unusable.
	bundle := filepath.Join(t.TempDir(), "bundle")
	if err := os.CopyFS(bundle, os.DirFS(exampleDir)); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(bundle, "zarf-package-init-amd64-0.1.0.tar.zst")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bundle, "zp-fault-panic-archive.tar.zst"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, code = runModule(t, args(bundle))
	warnings, _ := res["warnings"].([]any)
	found := false
	for _, w := range warnings {
		found = found || strings.Contains(w.(string), "zp-fault-panic-archive.tar.zst: an internal error of zarf-planner")
	}
	if code != 0 || !found {
		t.Errorf("a panic reading one archive: code %d msg %v warnings %v; want the plan, that archive unusable", code, res["msg"], warnings)
	}
	// A failed plan drawn as a page (it panicked in the page's layout).
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed:\n  namespaces: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refused := args(exampleDir)
	refused["policy"], refused["html_to"] = policy, filepath.Join(t.TempDir(), "plan.html")
	res, code = runModule(t, refused)
	if page, err := os.ReadFile(refused["html_to"].(string)); code != 1 || err != nil || !strings.Contains(string(page), "</html>") {
		t.Errorf("a policy refusal as a page: code %d msg %v, page %d bytes (%v); want the failure drawn", code, res["msg"], len(page), err)
	}

	release()
	slowRes, code := finish(t, slow)
	answered(t, slowRes, code)
	if got, _ := daemonPid(t, slowRes); got != pid {
		t.Errorf("the call in flight was answered by pid %d; want the daemon that was serving it, pid %d", got, pid)
	}
	if s, err := lifecycle.ReadState(state); err != nil || s.Pid != pid || !lifecycle.Alive(pid) {
		t.Errorf("the daemon pid %d did not survive (state %+v, %v)", pid, s, err)
	}
}
