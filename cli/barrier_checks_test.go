package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

// TestWaitChecksAgainstARealAPIServer: --check reaches the barrier as the
// module's checks do, and a timeout under a second is waited for (rounded
// up to one), not taken as none given.
func TestWaitChecksAgainstARealAPIServer(t *testing.T) {
	c := clustertest.Start(t)
	code, out, stderr := run(t, "barrier", "--kubeconfig", c.Kubeconfig, "--check", "kind=namespace,name=default", "--check", "kind=namespace,name=kube-system", "--timeout", "30s")
	if code != ExitOK || !strings.Contains(out, "ok      namespace default: Active") || !strings.Contains(out, "namespace kube-system") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want both namespaces Active", code, out, stderr)
	}
	start := time.Now()
	code, out, stderr = run(t, "barrier", "--kubeconfig", c.Kubeconfig, "--check", "kind=namespace,name=absent", "--timeout", "300ms")
	if took := time.Since(start); code != ExitFailed || !strings.Contains(out, "waiting namespace absent") || took > 20*time.Second {
		t.Fatalf("exit %d after %s, stdout %q, stderr %q; want a failure after about a second listing the namespace", code, took, out, stderr)
	}
	code, _, stderr = run(t, "barrier", "--kubeconfig", c.Kubeconfig, "--check", "kind=deployment,name=web")
	if code == ExitOK || !strings.Contains(stderr, "needs a namespace") {
		t.Fatalf("exit %d, stderr %q; want a deployment without a namespace refused", code, stderr)
	}
}
