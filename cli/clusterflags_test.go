package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

// TestClusterFlagsOfAPlanThatReadsNoClusterAreNotDropped: --kubeconfig
// and --context with --mode standalone are refused (exit 2) naming both;
// without --mode (standalone by default), and with a snapshot, the plan
// warns about each by name, so none is silently dropped.
func TestClusterFlagsOfAPlanThatReadsNoClusterAreNotDropped(t *testing.T) {
	dir := "../testdata/bundles/signed"
	code, out, stderr := run(t, "plan", dir, "--architecture", "amd64", "--mode", "standalone", "--kubeconfig", "bad", "--context", "nope")
	if code != ExitUsage || !strings.Contains(stderr, "--kubeconfig and --context name a cluster, but --mode standalone plans without one") || !strings.Contains(stderr, "--mode cluster") {
		t.Errorf("--mode standalone --kubeconfig --context: exit %d; want %d naming both flags\n%s%s", code, ExitUsage, out, stderr)
	}

	code, out, stderr = run(t, "plan", dir, "--architecture", "amd64", "--kubeconfig", "bad", "--context", "nope", "-o", "json")
	var doc struct {
		Failed   bool     `json:"failed"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitOK {
		t.Fatalf("plan --kubeconfig --context without --mode: exit %d (%v)\n%s%s", code, err, out, stderr)
	}
	for _, flag := range []string{"--kubeconfig", "--context"} {
		if !strings.Contains(strings.Join(doc.Warnings, "\n"), flag+" is not used: the plan is standalone (--mode not given) and reads no cluster; set --mode cluster") {
			t.Errorf("without --mode, %s: warnings %q; want one naming it", flag, doc.Warnings)
		}
	}

	snap := filepath.Join(t.TempDir(), "snapshot.json")
	if err := os.WriteFile(snap, []byte(`{"name":"saved","kubernetes_version":"v1.30.0","node_architectures":["amd64"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = run(t, "plan", dir, "--snapshot", snap, "--context", "nope", "-o", "json")
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("plan --snapshot --context: %v\n%s%s", err, out, stderr)
	}
	if !strings.Contains(strings.Join(doc.Warnings, "\n"), "--context is not used: the plan reads the snapshot "+snap) {
		t.Errorf("with a snapshot, --context: exit %d, warnings %q; want one naming it", code, doc.Warnings)
	}
}

// TestAKubeconfigListIsMergedAsKubectlMergesIt: with KUBECONFIG naming
// two files and the context in the second, plan --mode cluster, wait,
// snapshot and kubeconfig --to all reach the cluster, as kubectl does;
// the first file's current context wins the merge, as kubectl's does.
func TestAKubeconfigListIsMergedAsKubectlMergesIt(t *testing.T) {
	c := clustertest.Start(t)
	t.Setenv("K8S_AUTH_KUBECONFIG", "")
	t.Setenv("K8S_AUTH_CONTEXT", "")
	t.Setenv("KUBECONFIG", c.KubeconfigList(t, "prod"))

	code, out, stderr := run(t, "plan", "../examples/bundles/reference-stack", "--mode", "cluster", "--context", "prod", "-o", "json")
	var doc planDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitOK || doc.Failed || len(doc.Packages) == 0 {
		t.Fatalf("plan --mode cluster --context prod with KUBECONFIG of two files: exit %d, failed %v (%v)\n%s%s", code, doc.Failed, err, out, stderr)
	}
	if code, out, stderr := run(t, "barrier", "--context", "prod", "--check", "kind=namespace,name=default", "--timeout", "30s"); code != ExitOK {
		t.Errorf("barrier --context prod: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := run(t, "snapshot", "--context", "prod", "-o", "json"); code != ExitOK || !strings.Contains(out, `"prod"`) {
		t.Errorf("snapshot --context prod: exit %d\n%s%s", code, out, stderr)
	}
	pinned := filepath.Join(t.TempDir(), "pinned")
	if code, out, stderr := run(t, "kubeconfig", "--context", "prod", "--to", pinned); code != ExitOK {
		t.Errorf("kubeconfig --context prod --to: exit %d\n%s%s", code, out, stderr)
	} else if cfg, err := clientcmd.LoadFromFile(pinned); err != nil || cfg.CurrentContext != "prod" || len(cfg.Contexts) != 1 {
		t.Errorf("the pinned kubeconfig is not prod alone: %v %+v", err, cfg)
	}

	// No context given: the first file's current context (dev) wins the
	// merge, as with kubectl, and it reaches no cluster.
	code, out, stderr = run(t, "plan", "../examples/bundles/reference-stack", "--mode", "cluster", "-o", "json")
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitFailed || !strings.Contains(doc.Msg, "cluster dev") {
		t.Errorf("plan --mode cluster without --context: exit %d, msg %q; want the first file's context dev, failing\n%s", code, doc.Msg, stderr)
	}
}
