package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// heldCluster is an API server that holds every request until the test
// releases it, then refuses it (403): a cluster-mode plan against it is in
// flight in the daemon for as long as the test wants, then answered.
func heldCluster(t *testing.T) (kubeconfig string, release func()) {
	t.Helper()
	released := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(released) }) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-released:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusForbidden)
	}))
	t.Cleanup(func() { release(); srv.Close() })
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	doc := "apiVersion: v1\nkind: Config\ncurrent-context: held\nclusters:\n- name: held\n  cluster:\n    server: " + srv.URL + "\ncontexts:\n- name: held\n  context:\n    cluster: held\n    user: u\nusers:\n- name: u\n  user:\n    token: t\n"
	if err := os.WriteFile(kubeconfig, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, release
}

// heldPlan is a cluster-mode plan against a held cluster.
func heldPlan(state, kubeconfig string) map[string]any {
	args := planArgs(exampleDir, state)
	args["mode"], args["kubeconfig"] = "cluster", kubeconfig
	return args
}

// answered checks that a held plan ended with the daemon's own answer
// (the cluster refused it), not with a lost daemon.
func answered(t *testing.T, res map[string]any, code int) {
	t.Helper()
	msg, _ := res["msg"].(string)
	if code == 0 || !strings.Contains(msg, "cannot plan against the cluster") {
		t.Errorf("the in-flight call: code %d msg %q; want the daemon's answer that the cluster refused it", code, msg)
	}
}

// waitFor polls cond until it holds (the test binary's -timeout bounds
// it).
func waitFor(cond func() bool) {
	for !cond() {
		time.Sleep(20 * time.Millisecond)
	}
}

// holder is the process holding the lock file name of state, or 0.
func holder(state, name string) int {
	d, err := privdir.Open(state, false)
	if err != nil {
		return 0
	}
	defer d.Close()
	return d.Holder(name)
}

func inflight(state string, want int64) func() bool {
	return func() bool {
		_, st, err := lifecycle.Status(context.Background(), state)
		return err == nil && st.Inflight == want
	}
}

// SIGTERM during a call: the call finishes with its answer, and a call
// made while the daemon drains waits for it to go and starts the next
// daemon, instead of failing on the draining one.
func TestSIGTERMDuringACall(t *testing.T) {
	state := stateDir(t)
	first, code := runModule(t, planArgs(exampleDir, state))
	if code != 0 {
		t.Fatalf("first call failed: %v", first["msg"])
	}
	old, _ := daemonPid(t, first)
	kubeconfig, release := heldCluster(t)
	slow := moduleCommand(t, moduleBin, heldPlan(state, kubeconfig))
	if err := slow.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(inflight(state, 1))
	if err := syscall.Kill(old, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(draining(state))
	next := moduleCommand(t, moduleBin, daemonAsked(planArgs(exampleDir, state)))
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	// The next call waits for the draining daemon (holding the start
	// lock meanwhile), or gives up on it (then it has exited).
	waitFor(func() bool {
		return holder(state, lifecycle.StartLock) == next.Process.Pid || !lifecycle.Alive(next.Process.Pid)
	})
	// The daemon drains: it finishes the held call before it exits.
	release()
	slowRes, code := finish(t, slow)
	answered(t, slowRes, code)
	res, code := finish(t, next)
	if code != 0 {
		t.Fatalf("a call while the daemon drained failed: %v", res["msg"])
	}
	if pid, started := daemonPid(t, res); !started || pid == old {
		t.Errorf("the call reached pid %d (started %v); want the next daemon, not the draining pid %d", pid, started, old)
	}
	waitFor(func() bool { return !lifecycle.Alive(old) })
}

// draining reports whether the daemon of state has begun to drain: it
// refuses new requests, or no longer answers at all.
func draining(state string) func() bool {
	return func() bool {
		c, err := lifecycle.Attach(context.Background(), state)
		if err != nil {
			return true
		}
		defer c.Close()
		_, err = c.Planner.Inspect(context.Background(), &contract.InspectRequest{Path: "/nonexistent"})
		return status.Code(err) == codes.Unavailable
	}
}

// A new build replaces the old daemon while the old one works on a call
// longer than the 30s callers once waited: both calls succeed.
func TestABuildReplacesTheDaemonWhileACallIsInFlight(t *testing.T) {
	state := stateDir(t)
	old, code := runBinary(t, otherModuleBin, map[string]any{"path": exampleDir, "daemon_path": otherDaemonBin, "state_dir": state, "use_cache": false})
	if code != 0 {
		t.Fatalf("the old build's call failed: %v", old["msg"])
	}
	oldPid, _ := daemonPid(t, old)
	t.Logf("the old build's daemon is pid %d", oldPid)
	kubeconfig, release := heldCluster(t)
	args := heldPlan(state, kubeconfig)
	args["daemon_path"] = otherDaemonBin
	slow := moduleCommand(t, otherModuleBin, args)
	if err := slow.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(inflight(state, 1))
	newArgs := planArgs(exampleDir, state)
	newArgs["timeout"] = 120
	fresh := moduleCommand(t, moduleBin, newArgs)
	if err := fresh.Start(); err != nil {
		t.Fatal(err)
	}
	// The old daemon works on the held call for longer than callers once
	// waited for it (30s) before they failed.
	time.Sleep(35 * time.Second)
	release()
	slowRes, code := finish(t, slow)
	answered(t, slowRes, code)
	res, code := finish(t, fresh)
	if code != 0 {
		t.Fatalf("the new build's call failed: %v", res["msg"])
	}
	if pid, started := daemonPid(t, res); !started || pid == oldPid {
		t.Errorf("the new build reached pid %d (started %v); want a new daemon replacing pid %d", pid, started, oldPid)
	}
	if t.Failed() {
		log, _ := os.ReadFile(filepath.Join(state, lifecycle.LogFile))
		t.Logf("daemon log:\n%s", log)
	}
	if lifecycle.Alive(oldPid) {
		t.Errorf("the old daemon pid %d still runs", oldPid)
	}
}

// Calls at the idle boundary: a daemon with a short idle timeout gets a
// burst of calls, a few milliseconds apart, from just before it decides
// to exit until after it has gone, while another caller keeps its
// connection open. Every call succeeds, on that daemon or on the next
// one.
func TestCallsAtTheIdleBoundary(t *testing.T) {
	const idle = 300 * time.Millisecond
	for i := range 8 {
		t.Run(fmt.Sprintf("round %d", i), func(t *testing.T) {
			state := stateDir(t)
			// A caller keeps its connection open across the idle exit,
			// as a slow caller would.
			c, err := lifecycle.Connect(context.Background(), lifecycle.Options{StateDir: state, DaemonPath: daemonBin, IdleTimeout: idle})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// The daemon's idle time runs from its start (a status
			// probe is not a request); it looks every idle/4.
			time.Sleep(idle - 50*time.Millisecond)
			var wg sync.WaitGroup
			for j := range 16 {
				time.Sleep(8 * time.Millisecond)
				wg.Go(func() {
					res, code := runModule(t, planArgs(exampleDir, state))
					if code != 0 {
						t.Errorf("call %d of the burst failed: %v", j, res["msg"])
					}
				})
			}
			wg.Wait()
		})
	}
}

// A daemon killed while a call is in flight (SIGKILL, a crash) costs the
// call nothing: planning only reads, so the module asks a fresh daemon
// once more, and the call ends with that daemon's answer.
func TestACallInFlightWhenTheDaemonIsKilledIsAskedAgain(t *testing.T) {
	state := stateDir(t)
	first, code := runModule(t, planArgs(exampleDir, state))
	if code != 0 {
		t.Fatalf("first call failed: %v", first["msg"])
	}
	old, _ := daemonPid(t, first)
	kubeconfig, release := heldCluster(t)
	slow := moduleCommand(t, moduleBin, heldPlan(state, kubeconfig))
	if err := slow.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(inflight(state, 1))
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The call is asked of a fresh daemon, which holds it in turn; once
	// it does, the cluster answers. (A module that gave up has exited.)
	waitFor(func() bool {
		s, err := lifecycle.ReadState(state)
		return err == nil && s.Pid != old && inflight(state, 1)() || !lifecycle.Alive(slow.Process.Pid)
	})
	release()
	res, code := finish(t, slow)
	answered(t, res, code)
	if pid, started := daemonPid(t, res); !started || pid == old {
		t.Errorf("the call was answered by pid %d (started %v); want a fresh daemon, not the killed pid %d", pid, started, old)
	}
}
